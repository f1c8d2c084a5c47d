// What both agents (target.ts, initiator.ts) and the CM wire do with the native session the same way: poll a CQ dry,
// name a work request by (queue, kind, slot), turn a native result into its value.
import type { NativeSession, NWc } from '../../app/host/native.ts';

/** ibv_poll_cq in batches of 32 until the CQ is empty; every completion to `fn`. Returns how many. */
export function drainCq(s: NativeSession, cq: number, fn: (wc: NWc) => void): number {
  let n = 0;
  for (;;) {
    const wcs = s.poll_cq(cq, 32);
    for (const wc of wcs) fn(wc);
    n += wcs.length;
    if (wcs.length < 32) return n;
  }
}

/** wr_id = queue << 24 | kind << 16 | slot */
export const wrIdOf = (q: number, kind: number, slot: number): number => q * 0x1000000 + kind * 0x10000 + slot;
export const splitWrId = (w: number) => ({ q: Math.floor(w / 0x1000000), kind: Math.floor(w / 0x10000) % 0x100, slot: w % 0x10000 });

/** a native result's value, or an Error naming what failed */
export function must<T>(r: { err: number; msg: string; value?: T }, what: string): T {
  if (r.err) throw new Error(`${what}: ${r.msg}`);
  return r.value as T;
}

/** a 64-bit address as the native session takes it */
export const u64 = (v: bigint): number | string => (v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString());
