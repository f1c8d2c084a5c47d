// The connection manager's device events in words, from their numbers and the enum tables (never from the device's
// text): CmState (a: the IBA 12.9 state left, b: the state entered, c / d: local / remote comm ID) and CmMad (a: the
// attribute ID in bits 15:0 and a REJ's reason in bits 31:16, b: CmMadDir, c / d: the MAD's comm IDs); native/EVENTS.md.
import { rejReasonText } from './cm-mad.ts';
import { CmAttr, CmMadDir, CmState } from './enums.ts';

const DIR_WORD: Readonly<Record<number, string>> = {
  [CmMadDir.values.SENT]: 'sent', [CmMadDir.values.RECEIVED]: 'received', [CmMadDir.values.DROPPED]: 'dropped', [CmMadDir.values.RESENT]: 'resent',
};
const hex = (v: number) => `0x${(v >>> 0).toString(16)}`;
const comm = (c: number, d: number) => (c || d ? ` comm ${hex(c)} → ${hex(d)}` : '');

/** the words of a CmState or CmMad event, or undefined for another kind */
export function cmEventText(e: { kind: string; a: number; b: number; c: number; d: number }): string | undefined {
  if (e.kind === 'CmState') return `${CmState.name(e.a)} → ${CmState.name(e.b)}${comm(e.c, e.d)}`;
  if (e.kind !== 'CmMad') return undefined;
  const attr = e.a & 0xffff, reason = Math.floor(e.a / 0x10000) & 0xffff;
  const name = CmAttr.nameOf(attr) ?? `attribute ${hex(attr)}`;
  const dir = DIR_WORD[e.b] ?? `direction ${e.b}`;
  const sidr = attr === CmAttr.values.SIDR_REQ || attr === CmAttr.values.SIDR_REP;
  const ids = sidr ? (e.c ? ` request ${hex(e.c)}` : '') : comm(e.c, e.d);
  return `${name} ${dir}${attr === CmAttr.values.REJ ? `: reason ${rejReasonText(reason)}` : ''}${ids}`;
}
