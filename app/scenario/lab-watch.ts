// A lab step done by hand: whoever ran the commands (the Queues panel, the Memory panel, a script), a guided step
// turns green when the outcome its expectations name is seen in the device's event stream. A step's commands
// refer to objects by the lab's names, which a person working by hand does not use, so only the parts of its
// expectations that name no object are watched: the completions (status, and opcode when given), the packets on
// the wire (opcode, AETH syndrome; count > 0) and the key states it expects. Steps are watched in lab order: a
// step's outcome counts only when it is seen after the outcome of the last earlier step seen by hand. A step
// whose expectations are all about named objects (a setup step: PDs, buffers, QPs) has no signature and is not
// noticed by hand; the Labs panel says so.
import type { LabStep } from '../protocol/lab.ts';
import type { DeviceEvent } from '../protocol/index.ts';
import { KeyState, WcOpcode, WcStatus } from '../protocol/index.ts';
import { BthOpcode } from '../protocol/bth.ts';
import type { Expect } from '../protocol/scenario.ts';
import { syndromeName } from './run.ts';
import { keyEvent, packetBytes } from './results.ts';

type Want =
  | { kind: 'wc'; status: number; opcode?: number; text: string }
  | { kind: 'packet'; opcode: number; syndrome?: string; text: string }
  | { kind: 'key'; state: string; text: string };

/** What of a step can be seen in the event stream, in the order its commands expect it; empty: nothing. */
export function stepSignature(step: Pick<LabStep, 'run' | 'check'>): Want[] {
  const out: Want[] = [];
  for (const c of [...step.run, ...(step.check ?? [])]) {
    const ex = (c as { expect?: Expect }).expect;
    if (!ex || ex.error) continue;                 // a refused verb leaves no event to see
    for (const p of ex.packet ?? []) {
      if (p.count === 0) continue;
      out.push({ kind: 'packet', opcode: BthOpcode[p.opcode], ...(p.syndrome ? { syndrome: p.syndrome } : {}), text: `${p.opcode}${p.syndrome ? ` ${p.syndrome}` : ''} packet` });
    }
    for (const w of ex.wc ?? []) {
      out.push({ kind: 'wc', status: WcStatus.values[w.status], ...(w.opcode ? { opcode: WcOpcode.values[w.opcode] } : {}), text: `${w.status}${w.opcode ? ` ${w.opcode}` : ''} completion` });
    }
    for (const k of ex.keyState ?? []) out.push({ kind: 'key', state: k.state, text: `a key ${k.state.toUpperCase()}` });
  }
  return out;
}

function matches(w: Want, e: DeviceEvent): boolean {
  if (w.kind === 'wc') {
    if (e.kind !== 'Cqe' || !e.wc) return false;
    return Number(e.wc.status) === w.status && (w.opcode === undefined || Number(e.wc.opcode) === w.opcode);
  }
  if (w.kind === 'packet') {
    if (e.kind !== 'PacketSent') return false;
    const b = packetBytes(e);
    return !!b && b[0] === w.opcode && (w.syndrome === undefined || syndromeName(b) === w.syndrome);
  }
  if (e.kind === 'ObjectCreated' && (e.objKind === 'mr' || e.objKind === 'mw') && e.keyState !== undefined)
    return KeyState.name(e.keyState) === w.state;
  return keyEvent(e)?.state === w.state;
}

/** Finds every element of `sig`, each after the one before (completions and packets interleave freely, so the
 *  search is per kind: wc in order, packets in order, keys in order), starting at `from`; the index after the last
 *  event used, or -1. */
function find(sig: Want[], events: readonly DeviceEvent[], from: number): number {
  let end = from;
  for (const kind of ['wc', 'packet', 'key'] as const) {
    let i = from;
    for (const w of sig.filter((x) => x.kind === kind)) {
      while (i < events.length && !matches(w, events[i]!)) i++;
      if (i >= events.length) return -1;
      i++;
    }
    end = Math.max(end, i);
  }
  return end;
}

export interface HandResult { id: string; watchable: boolean; seen: boolean; watched: string[] }

/** Per step, in lab order: whether its outcome was seen in `events` (the events of commands not run by the lab). */
export function seenByHand(steps: readonly (Pick<LabStep, 'id' | 'run' | 'check'>)[], events: readonly DeviceEvent[]): HandResult[] {
  let cursor = 0;
  return steps.map((st) => {
    const sig = stepSignature(st);
    const watched = sig.map((w) => w.text);
    if (!sig.length) return { id: st.id, watchable: false, seen: false, watched };
    const end = find(sig, events, cursor);
    if (end < 0) return { id: st.id, watchable: true, seen: false, watched };
    cursor = end;
    return { id: st.id, watchable: true, seen: true, watched };
  });
}
