// How the console writes numbers: one module, used by every panel. Times scale their unit (ns / µs / ms / s),
// sizes are in B / KiB / MiB / GiB (binary prefixes, IEC 80000-13), rates are per second, keys and addresses are
// hex. A key is split as the verbs API builds it: the upper 24 bits index the device's MR/MW table and the low
// 8 bits are the consumer-owned key byte (ibv_inc_rkey(), IBA 10.6.3.3 / C10-46); rxe_mr.c keeps the same split
// (mr->lkey = mr->ibmr.lkey = (index << 8) | key). Each formatter returns text for people; where the raw value
// matters the caller puts it in a title (`raw*` helpers) so it is one hover away.

/** a duration or virtual time in nanoseconds: "850 ns", "12.4 µs", "3.51 ms", "8.54 s" (3 significant digits) */
export function fmtNs(ns: number): string {
  if (!Number.isFinite(ns)) return '—';
  const a = Math.abs(ns);
  if (a < 1e3) return `${trim(ns)} ns`;
  if (a < 1e6) return `${sig(ns / 1e3)} µs`;
  if (a < 1e9) return `${sig(ns / 1e6)} ms`;
  return `${sig(ns / 1e9)} s`;
}

/** a size in bytes: "64 B", "4 KiB", "1.5 MiB" (exact integers of a unit drop the decimals) */
export function fmtBytes(n: number): string {
  if (!Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n; let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${u === 0 ? trim(v) : sig(v)} ${units[u]}`;
}

/** a rate per second: "950 /s", "12.3 k/s", "1.02 M/s" (SI prefixes: these are counts, not bytes) */
export function fmtRate(perSecond: number, unit = ''): string {
  if (!Number.isFinite(perSecond)) return '—';
  const a = Math.abs(perSecond);
  const u = unit ? ` ${unit}/s` : '/s';
  if (a < 1e3) return `${sig(perSecond)}${u === '/s' ? ' /s' : u}`;
  if (a < 1e6) return `${sig(perSecond / 1e3)} k${u}`;
  if (a < 1e9) return `${sig(perSecond / 1e6)} M${u}`;
  return `${sig(perSecond / 1e9)} G${u}`;
}

/** bytes per second: "1.2 GiB/s" */
export function fmtByteRate(bytesPerSecond: number): string {
  return Number.isFinite(bytesPerSecond) ? `${fmtBytes(bytesPerSecond)}/s` : '—';
}

/** a count with thousands separators: "1,048,576" */
export function fmtCount(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—';
}

/** an unsigned 32-bit value in hex, zero-padded to `width` digits: "0x00000a05" */
export function fmtHex(v: number, width = 0): string {
  return `0x${(v >>> 0).toString(16).padStart(width, '0')}`;
}

/** an address (up to 2^53) in hex without padding: "0x7f0000001000" */
export function fmtAddr(v: number): string {
  return Number.isFinite(v) && v >= 0 ? `0x${Math.trunc(v).toString(16)}` : '—';
}

/** the table index of an lkey/rkey (upper 24 bits) */
export const keyIndex = (key: number) => key >>> 8;
/** the key byte of an lkey/rkey (low 8 bits, owned by the consumer: ibv_inc_rkey) */
export const keyByte = (key: number) => key & 0xff;

/** a key as hex with its split: "0x00000a05 (index 0xa, key 0x05)" */
export function fmtKey(key: number): string {
  return `${fmtHex(key, 8)} (index ${fmtHex(keyIndex(key))}, key ${fmtHex(keyByte(key), 2)})`;
}

/** the raw value for a title attribute: "8535643521024 ns" — one hover away from the scaled one */
export function rawNs(ns: number): string { return `${Math.trunc(ns)} ns`; }
export function rawBytes(n: number): string { return `${Math.trunc(n)} bytes`; }
export function rawKey(key: number): string { return `${key >>> 0} (${fmtHex(key, 8)})`; }

/** three significant digits, without trailing zeros (12.40 -> 12.4; 100 -> 100) */
function sig(v: number): string {
  const a = Math.abs(v);
  const digits = a >= 100 ? 0 : a >= 10 ? 1 : 2;
  return trim(Number(v.toFixed(digits)));
}
function trim(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(12)));
}
