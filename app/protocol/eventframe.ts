// Binary event frames: the device's event flood as typed columns, so that neither the backend host nor the
// console builds a JSON text or a JS object per event (issue 4's event rate). The native addon writes them
// (native/addon/event_frame.cpp); this module is the one definition of the layout and its reader.
//
// A message (one WebSocket binary message, one MessagePort/IPC transfer) is one or more frames back to back.
// A frame, little-endian, every part 8-byte aligned so the columns are typed-array views without a copy:
//   header (40 bytes)  u32 magic "VLE1" | u32 totalBytes | u32 count n | u32 dropped (events lost before this
//                      frame, the message's first frame) | f64 seq of the first event | u32 extraBytes |
//                      u32 blobBytes | f64 producedAt (Unix epoch ms when the device produced the events, 0 when
//                      not known: the console's event-to-screen latency counts from it)
//   f64 columns        seq[n] t[n] a[n] b[n] c[n] d[n]        (a..d as doubles; exact up to 2^53-1)
//   u32 columns        device[n] obj[n] extraOff[n]          (extraOff: the event's record in extras, or 0xffffffff)
//   u8 columns         kind[n] objKind[n] flags[n]           (kind: index in EVENT_KINDS; objKind: index in OBJ_KINDS
//                                                             or 255 = the name is in extras), padded to 8
//   extras             per event with any of these flags, in this order:
//                      BIG       a b c d as u64 (lo u32, hi u32) each (the JSON path writes "0x.." strings for them)
//                      OBJ_TEXT  u16 length + the object kind's name
//                      TEXT      u32 index of the text in the frame's blobs
//                      PKT       u32 index of the packet (UDP payload BTH..ICRC) in the frame's blobs; the next blob
//                                is its decoded headers as JSON without "hex" (the wire codec's own decode)
//                      WC        the ibv_wc: wr_id u64, then status opcode vendor_err byte_len imm_data
//                                invalidated_rkey qp_num src_qp wc_flags pkey_index slid sl dlid_path_bits (u32 each)
//                      DETAIL    u8 change, u8 keyState (0xff: the event has none; enums.ts Change / KeyState)
//                      padded to 8
//   blobs              each distinct text and each distinct packet (with its decode) of the frame once: u32
//                      length + bytes, one after the other; padded to 8 (a packet delivered within the session is
//                      a PacketSent and a PacketReceived event: one copy)
//   flags              OK 1 (KeyCheck passed; 1 for every other kind) | TEXT 2 | PKT 4 | WC 8 | BIG 16 | OBJ_TEXT 32 |
//                      DETAIL 64
//
// frameEvent() gives an event exactly as the JSON path does (app/host/eventjson.test.ts checks it on every
// scenario), for the few places that want objects; the console reads the columns directly.
import { WcFlag, WcOpcode, WcStatus, namesOf } from './enums.ts';
import type { DeviceEvent } from './messages.ts';

export const FRAME_MAGIC = 0x31454c56;
export const FRAME_HEADER_BYTES = 40;
export const F_OK = 1, F_TEXT = 2, F_PKT = 4, F_WC = 8, F_BIG = 16, F_OBJ_TEXT = 32, F_DETAIL = 64;
const NONE = 0xff;
const WC_BYTES = 8 + 13 * 4;
const NO_EXTRA = 0xffffffff;
const MAX_SAFE = 2 ** 53 - 1;

/** vl::EventKind in order (native/include/vl/session.h; names in vl/names.h kEventKindNames, tables.test.ts) */
export const EVENT_KINDS = ['ObjectCreated', 'ObjectDestroyed', 'ObjectModified', 'WqePosted', 'WqeStarted', 'WqeCompleted',
  'PacketSent', 'PacketReceived', 'PacketDropped', 'KeyCheck', 'Cqe', 'CqArmed', 'CompEvent', 'AsyncEvent', 'QpState',
  'MemWrite', 'Timer', 'Fault', 'Log', 'Offload', 'CmState', 'CmMad'] as const;
/** object kinds with a one-byte id (native/include/vl/names.h kObjKindNames) */
export const OBJ_KINDS = ['', 'device', 'pd', 'buffer', 'mr', 'mw', 'cq', 'qp', 'srq', 'ah', 'packet', 'session', 'cm_id'] as const;

const utf8 = new TextDecoder();
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** One frame's columns (views into the message's bytes) and its extras. */
export class EventFrame {
  readonly count: number;
  dropped: number;
  readonly firstSeq: number;
  /** Unix epoch ms when the device produced these events (0: not known) */
  readonly producedAt: number;
  readonly seq: Float64Array; readonly t: Float64Array;
  readonly a: Float64Array; readonly b: Float64Array; readonly c: Float64Array; readonly d: Float64Array;
  readonly device: Uint32Array; readonly obj: Uint32Array; readonly extraOff: Uint32Array;
  readonly kind: Uint8Array; readonly objKind: Uint8Array; readonly flags: Uint8Array;
  private readonly x: DataView;
  private readonly xb: Uint8Array;

  /** `buf` must be 8-byte aligned at `at` (decodeFrames copies when it is not). */
  constructor(buf: ArrayBuffer, at: number, readonly bytes: number) {
    const h = new DataView(buf, at, FRAME_HEADER_BYTES);
    const n = this.count = h.getUint32(8, true);
    this.dropped = h.getUint32(12, true);
    this.firstSeq = h.getFloat64(16, true);
    this.producedAt = h.getFloat64(32, true);
    const extraBytes = h.getUint32(24, true);
    const blobBytes = h.getUint32(28, true);
    let p = at + FRAME_HEADER_BYTES;
    const f64 = () => { const v = new Float64Array(buf, p, n); p += 8 * n; return v; };
    const u32 = () => { const v = new Uint32Array(buf, p, n); p += 4 * n; return v; };
    const u8 = () => { const v = new Uint8Array(buf, p, n); p += n; return v; };
    this.seq = f64(); this.t = f64(); this.a = f64(); this.b = f64(); this.c = f64(); this.d = f64();
    this.device = u32(); this.obj = u32(); this.extraOff = u32();
    this.kind = u8(); this.objKind = u8(); this.flags = u8();
    p = at + FRAME_HEADER_BYTES + ((n * 63 + 7) & ~7);
    this.x = new DataView(buf, p, extraBytes);
    this.xb = new Uint8Array(buf, p, extraBytes);
    p += (extraBytes + 7) & ~7;
    this.bb = new Uint8Array(buf, p, blobBytes);
  }

  private readonly bb: Uint8Array;
  private blobAt: number[] | null = null;
  private texts: (string | undefined)[] = [];
  /** blob k's bytes (the offsets are found once, on first use) */
  private blob(k: number): Uint8Array {
    if (!this.blobAt) {
      const at: number[] = [];
      const v = new DataView(this.bb.buffer, this.bb.byteOffset, this.bb.byteLength);
      for (let o = 0; o + 4 <= this.bb.byteLength; o += 4 + v.getUint32(o, true)) at.push(o);
      this.blobAt = at;
    }
    const o = this.blobAt[k];
    if (o === undefined) throw new Error(`event frame: no blob ${k}`);
    const len = this.bb[o]! | (this.bb[o + 1]! << 8) | (this.bb[o + 2]! << 16) | (this.bb[o + 3]! << 24);
    return this.bb.subarray(o + 4, o + 4 + (len >>> 0));
  }
  private blobText(k: number): string {
    let t = this.texts[k];
    if (t === undefined) { const b = this.blob(k); t = this.texts[k] = b.length <= INTERN_MAX ? intern(b) : utf8.decode(b); }
    return t;
  }

  kindName(i: number): string { return EVENT_KINDS[this.kind[i]!] ?? `Unknown`; }
  objKindName(i: number): string {
    const k = this.objKind[i]!;
    if (k !== 255) return OBJ_KINDS[k] ?? '';
    const r = this.record(i, F_OBJ_TEXT);
    return this.str(r, this.x.getUint16(r, true), 2);
  }
  ok(i: number): boolean { return (this.flags[i]! & F_OK) !== 0; }
  text(i: number): string | undefined {
    if (!(this.flags[i]! & F_TEXT)) return undefined;
    return this.blobText(this.x.getUint32(this.record(i, F_TEXT), true));
  }
  /** the packet as the JSON path gives it: its decoded headers plus "hex" */
  pkt(i: number): Record<string, unknown> | undefined {
    if (!(this.flags[i]! & F_PKT)) return undefined;
    const k = this.x.getUint32(this.record(i, F_PKT), true);
    return packetRecord(this.blob(k), this.blob(k + 1));
  }
  /** pkt(i) later: decoded on the first call (the frame's bytes stay alive as long as the function does) */
  pktLater(i: number): () => Record<string, unknown> {
    if (!(this.flags[i]! & F_PKT)) return () => ({});
    let done: Record<string, unknown> | null = null;
    return () => (done ??= this.pkt(i)!);
  }
  /** the ibv_wc, as the JSON path gives it (values named with the protocol's enum tables) */
  wc(i: number): Record<string, unknown> | undefined {
    if (!(this.flags[i]! & F_WC)) return undefined;
    const r = this.record(i, F_WC);
    const u = (k: number) => this.x.getUint32(r + 8 + 4 * k, true);
    const flags = u(8);
    const names = namesOf(WcFlag, flags);
    return {
      wrId: u64(this.x, r), status: u(0), opcode: u(1), vendorErr: u(2), byteLen: u(3), immData: u(4), invalidatedRkey: u(5),
      qpNum: u(6), srcQp: u(7), wcFlags: flags, pkeyIndex: u(9), slid: u(10), sl: u(11), dlidPathBits: u(12),
      statusName: WcStatus.name(u(0)), opcodeName: WcOpcode.name(u(1)), wcFlagsNames: names,
    };
  }
  /** DeviceEvent.change (enums.ts Change), undefined when the event has none */
  change(i: number): number | undefined { return this.detail(i, 0); }
  /** DeviceEvent.keyState (enums.ts KeyState), undefined when the event has none */
  keyState(i: number): number | undefined { return this.detail(i, 1); }
  private detail(i: number, k: 0 | 1): number | undefined {
    if (!(this.flags[i]! & F_DETAIL)) return undefined;
    const v = this.xb[this.record(i, F_DETAIL) + k]!;
    return v === NONE ? undefined : v;
  }
  /** a..d exactly (numbers up to 2^53-1, "0x.." strings above, as the JSON path) */
  nums(i: number): [number, number, number, number] {
    if (!(this.flags[i]! & F_BIG)) return [this.a[i]!, this.b[i]!, this.c[i]!, this.d[i]!];
    const r = this.record(i, F_BIG);
    return [0, 1, 2, 3].map((k) => u64(this.x, r + 8 * k)) as [number, number, number, number];
  }

  /** event i as the protocol's DeviceEvent (the JSON path's object, field for field) */
  event(i: number): DeviceEvent {
    const [a, b, c, d] = this.nums(i);
    const kind = this.kindName(i);
    const e: DeviceEvent = { seq: this.seq[i]!, t: this.t[i]!, kind, device: this.device[i]!, obj: this.obj[i]!, objKind: this.objKindName(i), a, b, c, d };
    const text = this.text(i);
    if (text !== undefined) e.text = text;
    if (kind === 'KeyCheck') e.ok = this.ok(i);
    const change = this.change(i);
    if (change !== undefined) e.change = change;
    const keyState = this.keyState(i);
    if (keyState !== undefined) e.keyState = keyState;
    const pkt = this.pkt(i);
    if (pkt) e.pkt = pkt;
    const wc = this.wc(i);
    if (wc) e.wc = wc;
    return e;
  }
  events(): DeviceEvent[] { return Array.from({ length: this.count }, (_, i) => this.event(i)); }

  /** where the extras part of `flag` starts in event i's record */
  private record(i: number, flag: number): number {
    const f = this.flags[i]!;
    let r = this.extraOff[i]!;
    if (r === NO_EXTRA) throw new Error(`event frame: event ${i} has no extras`);
    if (flag === F_BIG) return r;
    if (f & F_BIG) r += 32;
    if (flag === F_OBJ_TEXT) return r;
    if (f & F_OBJ_TEXT) r += 2 + this.x.getUint16(r, true);
    if (flag === F_TEXT) return r;
    if (f & F_TEXT) r += 4;
    if (flag === F_PKT) return r;
    if (f & F_PKT) r += 4;
    if (flag === F_WC) return r;
    if (f & F_WC) r += WC_BYTES;
    return r;   // F_DETAIL
  }
  private str(r: number, len: number, skip: number): string {
    const s = this.xb.subarray(r + skip, r + skip + len);
    return len <= INTERN_MAX ? intern(s) : utf8.decode(s);
  }
}

// Short texts repeat all the time under a flood ("RC Acknowledge", "IBV_WC_SUCCESS", key check verdicts): they are
// interned (one string per distinct text, found by a hash of its bytes and checked byte for byte), so that a
// million events do not make a million strings for the garbage collector.
const INTERN_MAX = 96;
const interned = new Map<number, string>();
function intern(b: Uint8Array): string {
  let h = 0x811c9dc5;
  let ascii = true;
  for (let k = 0; k < b.length; k++) { const c = b[k]!; if (c >= 0x80) ascii = false; h = Math.imul(h ^ c, 0x01000193); }
  if (!ascii) return utf8.decode(b);
  h = (h ^ b.length) >>> 0;
  const hit = interned.get(h);
  if (hit !== undefined && hit.length === b.length) {
    let same = true;
    for (let k = 0; k < b.length; k++) if (hit.charCodeAt(k) !== b[k]) { same = false; break; }
    if (same) return hit;
  }
  const v = String.fromCharCode.apply(null, b as unknown as number[]);
  if (interned.size >= 8192) interned.clear();
  interned.set(h, v);
  return v;
}

/** a packet's bytes and decoded headers (JSON) as { ...headers, hex } */
function packetRecord(bytes: Uint8Array, headers: Uint8Array): Record<string, unknown> {
  const hdr = JSON.parse(utf8.decode(headers)) as Record<string, unknown>;
  let hex = '';
  for (let k = 0; k < bytes.length; k++) hex += HEX[bytes[k]!];
  return { ...hdr, hex };
}

function u64(x: DataView, at: number): number {
  const lo = x.getUint32(at, true); const hi = x.getUint32(at + 4, true);
  const v = hi * 2 ** 32 + lo;
  if (v <= MAX_SAFE) return v;
  return `0x${hi.toString(16)}${lo.toString(16).padStart(8, '0')}` as unknown as number;   // as the JSON path: a string
}

/** true when `data` is a binary event message (not JSON text) */
export function isFrameMessage(data: unknown): data is ArrayBuffer | ArrayBufferView {
  if (!(data instanceof ArrayBuffer) && !ArrayBuffer.isView(data)) return false;
  const v = data instanceof ArrayBuffer ? new DataView(data) : new DataView(data.buffer, data.byteOffset, data.byteLength);
  return v.byteLength >= FRAME_HEADER_BYTES && v.getUint32(0, true) === FRAME_MAGIC;
}

/** The frames of one message; throws on bytes that are not frames (a message names what is wrong). */
export function decodeFrames(data: ArrayBuffer | ArrayBufferView): EventFrame[] {
  let buf: ArrayBuffer; let at: number; let len: number;
  if (data instanceof ArrayBuffer) { buf = data; at = 0; len = data.byteLength; }
  else if (data.byteOffset % 8 === 0 && data.buffer instanceof ArrayBuffer) { buf = data.buffer; at = data.byteOffset; len = data.byteLength; }
  else { const copy = new Uint8Array(data.byteLength); copy.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)); buf = copy.buffer; at = 0; len = copy.byteLength; }
  const out: EventFrame[] = [];
  const end = at + len;
  while (at < end) {
    if (end - at < FRAME_HEADER_BYTES) throw new Error(`event frame: ${end - at} trailing bytes, not a frame`);
    const h = new DataView(buf, at, FRAME_HEADER_BYTES);
    if (h.getUint32(0, true) !== FRAME_MAGIC) throw new Error(`event frame: bad magic at byte ${at}`);
    const total = h.getUint32(4, true); const n = h.getUint32(8, true); const xb = h.getUint32(24, true); const bb = h.getUint32(28, true);
    const need = FRAME_HEADER_BYTES + ((n * 63 + 7) & ~7) + ((xb + 7) & ~7) + ((bb + 7) & ~7);
    if (total !== need || at + total > end) throw new Error(`event frame: size ${total} does not fit ${n} events, ${xb} extra and ${bb} blob bytes in ${end - at} bytes`);
    out.push(new EventFrame(buf, at, total));
    at += total;
  }
  return out;
}

/** Frames back to back in one new buffer (a message); `dropped` is written into the first frame's header. */
export function concatFrames(parts: Uint8Array[], dropped = 0): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.byteLength;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.byteLength; }
  if (n >= FRAME_HEADER_BYTES) new DataView(out.buffer).setUint32(12, dropped >>> 0, true);
  return out;
}

/** a copy of a message with `extra` more dropped events in its first frame's header */
export function addDropped(msg: Uint8Array, extra: number): Uint8Array {
  const out = msg.slice();
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  v.setUint32(12, (v.getUint32(12, true) + extra) >>> 0, true);
  return out;
}

/** the events of a message as DeviceEvent objects */
export function frameEvents(data: ArrayBuffer | ArrayBufferView): DeviceEvent[] {
  return decodeFrames(data).flatMap((f) => f.events());
}

/** events in a message, and the sum of the frames' dropped counts */
export function frameTotals(frames: EventFrame[]): { count: number; dropped: number; first: number } {
  let count = 0; let dropped = 0;
  for (const f of frames) { count += f.count; dropped += f.dropped; }
  return { count, dropped, first: frames.find((f) => f.count)?.firstSeq ?? 0 };
}

/** An 'events' message of binary frames, as a transport hands it to the console. */
export interface FrameBatch { type: 'events'; frames: EventFrame[]; first: number; count: number; dropped: number }

/**
 * Event i of a frame seen through the DeviceEvent shape without building one: the console's models read the
 * few fields they need straight from the columns. One view is re-pointed for each event (`at`), so a model must
 * copy what it keeps (pktLater() gives a packet to decode later).
 */
export class FrameEventView {
  f!: EventFrame;
  i = 0;
  at(f: EventFrame, i: number): this { this.f = f; this.i = i; return this; }
  get seq(): number { return this.f.seq[this.i]!; }
  get t(): number { return this.f.t[this.i]!; }
  get kind(): string { return this.f.kindName(this.i); }
  get objKind(): string { return this.f.objKindName(this.i); }
  get device(): number { return this.f.device[this.i]!; }
  get obj(): number { return this.f.obj[this.i]!; }
  get a(): number { return this.f.flags[this.i]! & F_BIG ? this.f.nums(this.i)[0] : this.f.a[this.i]!; }
  get b(): number { return this.f.flags[this.i]! & F_BIG ? this.f.nums(this.i)[1] : this.f.b[this.i]!; }
  get c(): number { return this.f.flags[this.i]! & F_BIG ? this.f.nums(this.i)[2] : this.f.c[this.i]!; }
  get d(): number { return this.f.flags[this.i]! & F_BIG ? this.f.nums(this.i)[3] : this.f.d[this.i]!; }
  private tf: EventFrame | null = null;
  private ti = -1;
  private tv: string | undefined;
  /** (read by several models per event: decoded once) */
  get text(): string | undefined {
    if (this.tf !== this.f || this.ti !== this.i) { this.tf = this.f; this.ti = this.i; this.tv = this.f.text(this.i); }
    return this.tv;
  }
  get ok(): boolean | undefined { return this.f.kind[this.i] === KEYCHECK ? this.f.ok(this.i) : undefined; }
  get pkt(): Record<string, unknown> | undefined { return this.f.pkt(this.i); }
  get wc(): Record<string, unknown> | undefined { return this.f.wc(this.i); }
  get change(): number | undefined { return this.f.change(this.i); }
  get keyState(): number | undefined { return this.f.keyState(this.i); }
  pktLater(): () => Record<string, unknown> { return this.f.pktLater(this.i); }
}
const KEYCHECK = EVENT_KINDS.indexOf('KeyCheck');
