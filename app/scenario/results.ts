// Reading the executor's results and events: the one place that knows their field names, so the runner's
// expectation checks do not depend on spelling details (numbers with rdma-core names beside them).
import type { DeviceEvent } from '../protocol/index.ts';
import { Change, KeyState } from '../protocol/enums.ts';

export type Num = number | bigint;

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A numeric value from a result field (numbers, 64-bit decimal/hex strings, bigints). */
export function toBig(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^(0x[0-9a-fA-F]+|[0-9]+)$/.test(v)) return BigInt(v);
  return undefined;
}

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Field `name` of an object result, trying camelCase and snake_case spellings. */
export function field(r: unknown, name: string): unknown {
  if (!isObj(r)) return undefined;
  if (name in r) return r[name];
  const s = snake(name);
  if (s in r) return r[s];
  return undefined;
}

/** The handle a creating command returned: `handle`, or the field named after the kind ({pd: 3}, {cq: 7}). */
export function handleOf(r: unknown, kind?: string): number | undefined {
  if (typeof r === 'number') return r;
  const h = field(r, 'handle');
  if (typeof h === 'number') return h;
  const k = kind ? field(r, kind) : undefined;
  return typeof k === 'number' ? k : undefined;
}

/** Numeric top-level fields of a result (for references), nested `info`/`attr` objects flattened one level. */
export function numericFields(r: unknown): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  if (typeof r === 'number') { out.handle = BigInt(r); out.value = BigInt(r); return out; }
  if (!isObj(r)) return out;
  for (const [k, v] of Object.entries(r)) {
    const b = toBig(v);
    if (b !== undefined) { out[k] = b; out[k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())] = b; }
  }
  return out;
}

/** Work completions from a cq.poll result. */
export function wcsOf(r: unknown): Record<string, unknown>[] {
  if (Array.isArray(r)) return r.filter(isObj);
  for (const k of ['wcs', 'wc', 'completions', 'entries']) {
    const v = field(r, k);
    if (Array.isArray(v)) return v.filter(isObj);
  }
  return [];
}

/** Compare a result field that may be a number, a name, or a number with a "<field>Name" beside it. */
export function enumField(o: Record<string, unknown>, key: string, table: { values: Record<string, number> }): { num?: number; name?: string } {
  const v = field(o, key);
  const nm = field(o, `${key}Name`) ?? field(o, `${key}_name`);
  const out: { num?: number; name?: string } = {};
  if (typeof v === 'number') out.num = v;
  if (typeof v === 'string') { if (v in table.values) { out.name = v; out.num = table.values[v]; } else out.name = v; }
  if (typeof nm === 'string') out.name = nm;
  if (out.num === undefined && out.name && out.name in table.values) out.num = table.values[out.name];
  return out;
}

/** Bytes from a memory.read result. */
export function bytesOf(r: unknown): Uint8Array | undefined {
  if (r instanceof Uint8Array) return r;
  if (typeof r === 'string' && /^([0-9a-fA-F]{2})*$/.test(r)) return hexToBytes(r);
  if (Array.isArray(r) && r.every((x) => typeof x === 'number')) return Uint8Array.from(r as number[]);
  for (const k of ['hex', 'data', 'bytes']) {
    const v = field(r, k);
    if (v !== undefined) return bytesOf(v);
  }
  return undefined;
}

export function hexToBytes(h: string): Uint8Array {
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.slice(2 * i, 2 * i + 2), 16);
  return out;
}
export const bytesToHex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

/** Normalised event kind: "PacketSent", "packet_sent", "packet-sent" -> "packetsent". */
export const kindKey = (k: string) => k.replace(/[_\-\s]/g, '').toLowerCase();

/** Packet bytes (BTH .. ICRC) of a packet event. */
export function packetBytes(e: DeviceEvent): Uint8Array | undefined {
  const p = e.pkt as Record<string, unknown> | undefined;
  if (!p) return undefined;
  return bytesOf(p.hex ?? p.bytes ?? p.data);
}

/** QP state from a qp.query result. */
export function qpStateOf(r: unknown, table: { values: Record<string, number> }): { num?: number; name?: string } {
  for (const o of [r, field(r, 'attr')]) {
    if (!isObj(o)) continue;
    const s = enumField(o, 'qpState', table);
    if (s.num !== undefined || s.name) return s;
    const s2 = enumField(o, 'state', table);
    if (s2.num !== undefined || s2.name) return s2;
  }
  return {};
}

/**
 * An MR / MW ObjectModified event read through its typed fields (native/EVENTS.md): the key's state after it
 * (`keyState`), and the keys it gave the object when the change gave new ones (bind: the window's rkey in a;
 * re-registration: lkey in a, rkey in b; IB_WR_REG_MR: the one key in a). Undefined for other events.
 */
export function keyEvent(e: DeviceEvent): { state?: string; lkey?: bigint; rkey?: bigint } | undefined {
  if (kindKey(e.kind) !== 'objectmodified' || (e.objKind !== 'mr' && e.objKind !== 'mw')) return undefined;
  const out: { state?: string; lkey?: bigint; rkey?: bigint } = {};
  if (e.keyState !== undefined) out.state = KeyState.name(e.keyState);
  const a = toBig(e.a), b = toBig(e.b);
  if (a === undefined) return out;
  if (e.change === Change.values.BIND || e.change === Change.values.UNBIND) out.rkey = a;
  else if (e.change === Change.values.REREG) { out.lkey = a; if (b !== undefined) out.rkey = b; }
  else if (e.change === Change.values.REG_MR) { out.lkey = a; out.rkey = a; }
  return out;
}
