// The SG lab's checks: what each guided step must show, evaluated from measured runs (never from text).
// Each carries its "why": the kernel function or the spec text the behaviour follows.
import type { NativeAddon } from '../../app/host/native.ts';
import { SG_BREAK } from './schema.ts';
import type { SgComparison, SgElem } from './schema.ts';
import { sgRun } from './sg.ts';

export interface SgCheckResult { id: string; title: string; why: string; pass: boolean; detail: string }

export const WHY = {
  gap: 'drivers/infiniband/core/verbs.c ib_sg_to_pages: the first element may start inside a page and the last end ' +
    'inside one; every other boundary must be page aligned unless the elements are contiguous ("Stop mapping if there ' +
    'is a gap"). ib_map_mr_sg returns the number of elements mapped; nvme-rdma and iser fail the I/O (-EINVAL) when ' +
    'it is short of the list.',
  bounce: 'iSER (drivers/infiniband/ulp/iser) carries one key per direction: an unaligned list is copied into a bounce ' +
    'buffer that keeps the rule, registered, and copied back after a READ; the copy is the initiator CPU\'s work.',
  multiMr: 'SRP (drivers/infiniband/ulp/srp, srp_map_sg_fr) registers one MR per gap-free run and sends an indirect ' +
    'descriptor of (va, key, len) entries: the target issues one RDMA operation per entry; the MRs come from a bounded ' +
    'pool, so a list with many runs holds many MRs and fewer I/Os fit in flight.',
  pool512: 'With 512-byte pages the same ib_sg_to_pages rule accepts sector-aligned lists (what the block layer builds ' +
    'for logical blocks); SG_IO with no minimum alignment (queue_dma_alignment below 511) hands byte-aligned elements ' +
    'it cannot address.',
  indirect: 'IB_MR_TYPE_SG_GAPS (include/rdma/ib_verbs.h; mlx5_ib_sg_to_klms builds KLM entries): byte-granular ' +
    'entries under one key, no copy; at most max_num_sg entries, and ib_map_mr_sg returns fewer than the list when it ' +
    'has more: the I/O must fail, since a key shorter than the I/O it was sent for is the silent-corruption bug class.',
} as const;

/** The lab's checks on a comparison of a gapped list (and one extra run for the entry limit). */
export function labChecks(addon: NativeAddon, list: SgElem[], c: SgComparison): SgCheckResult[] {
  const row = (s: string) => c.rows.find((r) => r.strategy === s);
  const out: SgCheckResult[] = [];
  const add = (id: string, title: string, why: string, pass: boolean, detail: string) => out.push({ id, title, why, pass, detail });
  add('gapped', 'the list breaks the page rule', WHY.gap, c.check.firstBreak !== null,
    c.check.firstBreak === null ? 'the list keeps the rule: pick a gapped one' : `element ${c.check.firstBreak} (${c.check.reason}); ${c.check.mapped} of ${c.list.elements} map`);
  const fr = row('fast_reg');
  add('fast_reg_refused', 'fast registration refuses it, at that element', WHY.gap,
    !!fr && fr.outcome === 'refused' && fr.err === 22 && fr.firstBreak === c.check.firstBreak, fr?.msg ?? 'no row');
  for (const [id, why] of [['bounce', WHY.bounce], ['multi_mr', WHY.multiMr], ['indirect', WHY.indirect]] as const) {
    const r = row(id);
    add(`${id}_verified`, `${id} moves the list, verified byte for byte`, why, !!r && r.outcome === 'ok' && r.verified,
      r ? (r.outcome === 'ok' ? `${r.perPair?.keysOnWire} key(s), ${r.perPair?.bytesCopied} bytes copied per pair` : r.msg) : 'no row');
  }
  const ind = row('indirect');
  add('indirect_zero_copy', 'indirect registration copies nothing and sends one key per I/O', WHY.indirect,
    !!ind?.perPair && ind.perPair.bytesCopied === 0 && ind.perPair.keysOnWire === 2, ind?.perPair ? `${ind.perPair.bytesCopied} bytes copied` : ind?.msg ?? 'no row');
  const bo = row('bounce');
  add('bounce_copies', 'the bounce buffer costs a copy of the list each way', WHY.bounce,
    !!bo?.perPair && bo.perPair.bytesCopied === 2 * c.list.bytes, bo?.perPair ? `${bo.perPair.bytesCopied} bytes copied per pair` : bo?.msg ?? 'no row');
  const p5 = row('pool512');
  const sectorAligned = list.every((e, i) => (i === 0 || e.offset % 512 === 0) && (i === list.length - 1 || (e.offset + e.length) % 512 === 0));
  add('pool512', sectorAligned ? 'the 512-byte pool takes the sector-aligned list' : 'the 512-byte pool cannot cover byte-aligned elements',
    WHY.pool512, !!p5 && (sectorAligned ? p5.outcome === 'ok' : p5.outcome === 'refused'), p5?.msg || (p5?.outcome ?? 'no row'));
  // entry limit: half the list's length as max_num_sg
  const limit = Math.max(1, Math.floor(list.length / 2));
  const s = new addon.Session(1);
  try {
    s.set_event_capture(false);
    const r = sgRun(s, { list, strategy: 'indirect', config: { profile: c.profile as 'cx', maxNumSg: limit } });
    const pass = list.length < 2 || (r.err === 22 && r.mapped === limit && r.breakWhy === SG_BREAK.entry_limit && r.counters.iosDone === 0);
    add('entry_limit', `an indirect key with max_num_sg ${limit} refuses a list of ${list.length}`, WHY.indirect, pass, r.msg || 'accepted');
  } finally { s.close(); }
  return out;
}
