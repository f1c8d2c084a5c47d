// How the console reads the device's events (native/EVENTS.md: a/b/c/d per kind) and the host's replies.
// Everything the console draws about queues, keys and packets goes through these readers, so when the device
// documents a field differently only this file changes. Readers are tolerant of camelCase or snake_case.

export type Rec = Record<string, unknown>;

export function isRec(v: unknown): v is Rec { return typeof v === 'object' && v !== null && !Array.isArray(v); }

const memo = (f: (k: string) => string) => { const m = new Map<string, string>(); return (k: string) => { let v = m.get(k); if (v === undefined) { v = f(k); m.set(k, v); } return v; }; };
const snake = memo((k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
const camel = memo((k) => k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()));

/** first present value among names (each tried as given, camelCase and snake_case) */
export function pick(o: unknown, ...names: string[]): unknown {
  if (!isRec(o)) return undefined;
  for (const n of names) { const v = o[n]; if (v !== undefined && v !== null) return v; }   // fast path: exact names
  for (const n of names) {
    for (const k of [camel(n), snake(n)]) if (k !== n && o[k] !== undefined && o[k] !== null) return o[k];
  }
  return undefined;
}
export function num(o: unknown, ...names: string[]): number | undefined {
  const v = pick(o, ...names);
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^(0x[0-9a-f]+|\d+)$/i.test(v)) return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  return undefined;
}
export function str(o: unknown, ...names: string[]): string | undefined {
  const v = pick(o, ...names);
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}
export function bool(o: unknown, ...names: string[]): boolean | undefined {
  const v = pick(o, ...names);
  return typeof v === 'boolean' ? v : typeof v === 'number' ? v !== 0 : undefined;
}

/** a handle from a reply: either a bare number or an object with handle/id */
export function handleOf(result: unknown, ...names: string[]): number | undefined {
  if (typeof result === 'number') return result;
  return num(result, ...names, 'handle', 'id');
}

// (hex writing is the formatting module's: renderer/src/format.ts)
export { fmtHex as hex, fmtAddr as hexAddr } from '../format.ts';

/** AETH syndrome in words (IBA 9.7.5.1.1; docs/wire.md 1.5) */
export function syndromeText(s: number): string {
  const type = (s >> 5) & 3; const v = s & 0x1f;
  if (type === 0) return v === 0x1f ? 'ACK credits=invalid' : `ACK credits=${v}`;
  if (type === 1) return `RNR NAK timer code ${v}`;
  if (type === 3) {
    const codes = ['PSN Sequence Error', 'Invalid Request', 'Remote Access Error', 'Remote Operational Error', 'Invalid RD Request'];
    return `NAK ${codes[v] ?? `code ${v}`}`;
  }
  return `reserved 0x${s.toString(16)}`;
}
export function isNak(s: number): boolean { const t = (s >> 5) & 3; return t === 1 || t === 3; }
