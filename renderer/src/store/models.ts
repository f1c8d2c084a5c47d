// Mutable lookups derived from the device's events (and from the host's replies, which carry the same
// objects' full descriptions). High-rate updates mutate these in place; the store publishes a version
// number per domain once per animation frame (docs/console.md).
import type { DeviceEvent, ResultOf, RingSnapshot } from '../../../app/protocol/index.ts';
import { Access, Change, KeyState, QpState, QpType, WcOpcode, WcStatus, WrOpcode, bthOpcodeName, namesOf } from '../../../app/protocol/index.ts';
import { decodePayload, payloadOfPacket, type DecodedPayload } from '../../../app/protocol/decoders.ts';
import { bool, isNak, isRec, num, pick, str, syndromeText, type Rec } from './spec.ts';

// ------------------------------------------------------------------ keys (MRs and MWs)
export interface KeySeg { addr: number; length: number }
export interface KeyEntry {
  handle: number; type: 'MR' | 'MW'; kind: string; device: number; pd: number;
  lkey: number; rkey: number; addr: number; length: number; access: number; state: string;
  boundQp: number; mr: number; sg: KeySeg[]; destroyed: boolean;
}
export { keyIndex, keyByte } from '../format.ts';
import { keyIndex } from '../format.ts';
/** an MR's or MW's description as the host gives it (MrOut / MwOut) */
export type KeyInfo = ResultOf<'mr.reg'> | ResultOf<'mw.alloc'>;
export const accessNames = (access: number) => namesOf(Access, access).map((n) => n.replace('IBV_ACCESS_', ''));

function accessOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (Array.isArray(v)) return v.reduce<number>((m, n) => m | (Access.values[n as keyof typeof Access.values] ?? 0), 0);
  return undefined;
}

export class KeyTable {
  readonly byHandle = new Map<number, KeyEntry>();

  private entry(handle: number, type: 'MR' | 'MW'): KeyEntry {
    let e = this.byHandle.get(handle);
    if (!e) {
      e = { handle, type, kind: type === 'MR' ? 'user' : 'type 1', device: 0, pd: 0, lkey: 0, rkey: 0, addr: 0, length: 0,
        access: 0, state: 'valid', boundQp: 0, mr: 0, sg: [], destroyed: false };
      this.byHandle.set(handle, e);
    }
    return e;
  }

  /** merge the description of an MR or MW (the protocol's MrOut / MwOut: replies of mr.reg, mr.alloc, mr.map_sg,
   *  mw.alloc; session.info's objects) */
  applyInfo(type: 'MR' | 'MW', info: KeyInfo, handleHint?: number): KeyEntry {
    const e = this.entry(info.handle ?? handleHint, type);
    e.pd = info.pd; e.access = info.access; e.state = info.state; e.length = Number(info.length);
    if ('lkey' in info) {
      // an MR: the range is its iova (what a remote peer addresses); the SG list of a fast-registration MR
      e.lkey = info.lkey; e.rkey = info.rkey; e.addr = Number(info.iova); e.kind = info.kind;
      e.sg = info.sg.map((s) => ({ addr: Number(s.addr), length: s.length }));
    } else {
      e.lkey = e.rkey = info.rkey; e.addr = Number(info.addr); e.kind = `type ${info.type}`; e.boundQp = info.qp; e.mr = info.mr;
    }
    return e;
  }

  /** the event kinds applyEvent looks at (the store routes only these here) */
  static readonly KINDS = ['ObjectCreated', 'ObjectModified', 'ObjectDestroyed'];
  /** ObjectCreated / ObjectModified / ObjectDestroyed events for mr and mw objects */
  applyEvent(e: DeviceEvent): boolean {
    if (e.objKind !== 'mr' && e.objKind !== 'mw') return false;
    const type = e.objKind === 'mr' ? 'MR' : 'MW';
    if (e.kind === 'ObjectDestroyed') {
      const k = this.byHandle.get(e.obj);
      if (k) { k.destroyed = true; k.state = 'destroyed'; }
      return !!k;
    }
    if (e.kind !== 'ObjectCreated' && e.kind !== 'ObjectModified') return false;
    const k = this.entry(e.obj, type);
    if (e.device) k.device = e.device;
    // Event numbers (native/EVENTS.md); what changed is the event's typed `change`, the key's state its `keyState`
    if (e.kind === 'ObjectCreated' && type === 'MR') {
      // user MR: a = lkey, b = rkey, c = addr, d = length; fast-reg MRs are created free, no range yet (c = max_num_sg)
      if (e.a) k.lkey = e.a; if (e.b) k.rkey = e.b;
      if (e.keyState !== KeyState.values.free) { if (e.c) k.addr = e.c; if (e.d) k.length = e.d; }
    }
    if (e.kind === 'ObjectCreated' && type === 'MW') { k.rkey = k.lkey = e.a; k.kind = `type ${e.b}`; }
    if (e.kind === 'ObjectModified') {
      switch (e.change) {
        case Change.values.BIND: case Change.values.UNBIND: k.rkey = k.lkey = e.a; k.addr = e.b; k.length = e.c; k.access = e.d; break;   // a = rkey, b = addr, c = length, d = access
        case Change.values.REREG: k.lkey = e.a; k.rkey = e.b; break;                                          // a = lkey, b = rkey
        case Change.values.REG_MR: k.lkey = k.rkey = e.a; k.addr = e.b; k.length = e.c; k.access = e.d; break;  // a = key, b = iova, c = length, d = access
        case Change.values.MAP_MR_SG: k.addr = e.c; k.length = e.d; break;                                   // c = iova, d = length
      }
    }
    // any structured detail the host decoded for us wins
    const info = (e as unknown as Rec).info ?? (e as unknown as Rec).obj_info;
    if (isRec(info)) this.applyInfo(type, info as unknown as KeyInfo, e.obj);
    if (e.keyState !== undefined) k.state = KeyState.name(e.keyState);
    return true;
  }

  rows(includeDestroyed = true): KeyEntry[] {
    const out = [...this.byHandle.values()].filter((k) => includeDestroyed || !k.destroyed);
    return out.sort((x, y) => keyIndex(x.rkey || x.lkey) - keyIndex(y.rkey || y.lkey) || x.handle - y.handle);
  }
}

// ------------------------------------------------------------------ rings (SQ, RQ, SRQ, CQ)
export interface Slot {
  abs: number;             // absolute WQE/CQE number (slot = abs % depth)
  opcode: string;          // rdma-core name of the WR opcode or WC opcode
  status: string;          // 'posted' | 'started' | 'done' | IBV_WC_* for CQEs
  wrId: number;
  ok: boolean;
  text: string;
  /** what the device said as it started the WQE (a local operation it refused says why here) */
  why?: string;
}
export interface Ring {
  key: string;             // "qp:5:sq", "cq:3", "srq:4"
  owner: number; queue: 'sq' | 'rq' | 'cq' | 'srq';
  depth: number; producer: number; consumer: number;
  started: number;          // next WQE expected to start (send WQEs start in order)
  slots: Map<number, Slot>; // abs -> slot (only the last `depth` are kept)
}

export interface QpView { handle: number; qpn: number; destQpn: number; lastAsync: string; stateWhy: string; device: number; pd: number; type: string; state: number; sendCq: number; recvCq: number; srq: number; peer: number; destroyed: boolean }
export interface CqView { handle: number; device: number; cqe: number; channel: boolean; armed: boolean; solicitedOnly: boolean; pendingEvents: number; destroyed: boolean }
export interface SrqView { handle: number; device: number; maxWr: number; limit: number; destroyed: boolean }

const RING_KINDS = new Set(['WqePosted', 'WqeStarted', 'WqeCompleted', 'Cqe']);

export class QueueModel {
  readonly rings = new Map<string, Ring>();
  /** Free running: the event stream reached us sampled (some events were dropped), so the rings cannot follow the
   *  WQE / CQE events; they show the device's own snapshot (after event `snapshotSeq`) until the events are whole
   *  again. `stale`: events were dropped since the last snapshot (the rings wait for the next one). */
  snapshotSeq: number | null = null;
  stale = false;
  readonly qps = new Map<number, QpView>();
  readonly cqs = new Map<number, CqView>();
  readonly srqs = new Map<number, SrqView>();

  ring(key: string, owner: number, queue: Ring['queue'], depth = 16): Ring {
    let r = this.rings.get(key);
    if (!r) { r = { key, owner, queue, depth: Math.max(1, depth), producer: 0, consumer: 0, started: 0, slots: new Map() }; this.rings.set(key, r); }
    return r;
  }
  private trim(r: Ring) {
    if (r.slots.size <= r.depth) return;
    for (const k of r.slots.keys()) { if (k > r.producer - r.depth - 1) break; r.slots.delete(k); }
  }

  qp(handle: number): QpView {
    let q = this.qps.get(handle);
    if (!q) { q = { handle, qpn: 0, destQpn: 0, lastAsync: '', stateWhy: '', device: 0, pd: 0, type: 'IBV_QPT_RC', state: 0, sendCq: 0, recvCq: 0, srq: 0, peer: 0, destroyed: false }; this.qps.set(handle, q); }
    return q;
  }
  cq(handle: number): CqView {
    let c = this.cqs.get(handle);
    if (!c) { c = { handle, device: 0, cqe: 16, channel: false, armed: false, solicitedOnly: false, pendingEvents: 0, destroyed: false }; this.cqs.set(handle, c); }
    return c;
  }

  /** a qp.create / qp.query reply (the protocol's QpOut) */
  applyQpInfo(info: ResultOf<'qp.query'>): QpView {
    const h = info.qp;
    const q = this.qp(h);
    q.qpn = info.qpNum; q.device = info.device;
    const { init, attr } = info;
    q.pd = init.pd; q.sendCq = init.sendCq; q.recvCq = init.recvCq; q.srq = init.srq;
    q.type = QpType.name(init.qpType);
    q.destQpn = attr.destQpNum; q.state = attr.qpState;
    const sw = init.cap.maxSendWr; const rw = init.cap.maxRecvWr;
    if (sw) this.ring(`qp:${h}:sq`, h, 'sq', sw).depth = sw;
    if (rw) this.ring(`qp:${h}:rq`, h, 'rq', rw).depth = rw;
    return q;
  }

  static readonly KINDS = ['ObjectCreated', 'ObjectDestroyed', 'ObjectModified', 'QpState', 'WqePosted', 'WqeStarted', 'WqeCompleted', 'Cqe', 'AsyncEvent', 'CqArmed', 'CompEvent'];

  /** forget everything (the host restarts and replays its journal) */
  clear(): void {
    this.rings.clear(); this.qps.clear(); this.cqs.clear(); this.srqs.clear();
    this.snapshotSeq = null; this.stale = false;
  }

  /** Some events did not reach us (the host sampled a free run): the rings wait for the device's snapshot. */
  gap(): void { this.stale = true; }
  /** The rings as the device holds them after event `seq`: every ring is redrawn from it (the slots of a ring are the
   *  occupied ones; the others are free). */
  applySnapshot(m: RingSnapshot): void {
    for (const r of m.rings) {
      const key = r.queue === 'sq' || r.queue === 'rq' ? `qp:${r.owner}:${r.queue}` : `${r.queue}:${r.owner}`;
      const ring = this.ring(key, r.owner, r.queue, r.depth);
      ring.depth = Math.max(1, r.depth);
      if (r.queue === 'cq' && r.depth) this.cq(r.owner).cqe = r.depth;   // the depth the device granted (its ObjectCreated may be older than what was sent)
      ring.producer = r.producer; ring.consumer = r.consumer;
      ring.slots.clear();
      ring.started = r.producer;
      r.slots.forEach((x, i) => {
        const abs = r.first + i;
        const done = x.state === 'done';
        const opcode = r.queue === 'sq' ? WrOpcode.name(x.opcode) : r.queue === 'cq' ? WcOpcode.name(x.opcode) : 'RECV';
        const status = r.queue === 'cq' || (done && r.queue === 'sq') ? WcStatus.name(x.status) : x.state;
        if (r.queue === 'sq' && x.state === 'posted' && abs < ring.started) ring.started = abs;
        ring.slots.set(abs, { abs, opcode, status, wrId: x.wrId, ok: !done || x.status === 0, text: r.queue === 'cq' && x.qpNum !== undefined ? `QP 0x${x.qpNum.toString(16)}` : '' });
      });
    }
    this.snapshotSeq = m.seq;
    this.stale = false;
  }

  /** returns true if anything drawn changed */
  applyEvent(e: DeviceEvent): boolean {
    // after a gap the ring contents come from the next snapshot, not from the events that happen to arrive
    if (this.stale && RING_KINDS.has(e.kind)) return false;
    switch (e.kind) {
      case 'ObjectCreated': {
        if (e.objKind === 'qp') { const q = this.qp(e.obj); q.device = e.device; if (e.a) q.qpn = e.a; return true; }
        if (e.objKind === 'cq') { const c = this.cq(e.obj); c.device = e.device; c.channel = !!e.b; if (e.a) { c.cqe = e.a; this.ring(`cq:${e.obj}`, e.obj, 'cq', e.a).depth = e.a; } return true; }
        if (e.objKind === 'srq') {
          const s: SrqView = { handle: e.obj, device: e.device, maxWr: e.a || 16, limit: e.c, destroyed: false };
          this.srqs.set(e.obj, s); this.ring(`srq:${e.obj}`, e.obj, 'srq', s.maxWr); return true;
        }
        return false;
      }
      case 'ObjectDestroyed': {
        if (e.objKind === 'qp' && this.qps.has(e.obj)) { this.qp(e.obj).destroyed = true; return true; }
        if (e.objKind === 'cq' && this.cqs.has(e.obj)) { this.cq(e.obj).destroyed = true; return true; }
        if (e.objKind === 'srq' && this.srqs.has(e.obj)) { this.srqs.get(e.obj)!.destroyed = true; return true; }
        return false;
      }
      case 'ObjectModified': {
        if (e.objKind === 'srq' && this.srqs.has(e.obj)) { this.srqs.get(e.obj)!.limit = e.a; return true; }
        return false;
      }
      case 'QpState': {
        // a = previous state, b = new state, c = QPN
        const q = this.qp(e.obj); q.state = e.b; if (e.c) q.qpn = e.c; q.stateWhy = e.text ?? ''; return true;
      }
      case 'WqePosted': {
        // SQ: a = wr_id, b = WR opcode, c = length, d = SQ occupancy; RQ: b = 128 (RECV); SRQ: objKind "srq"
        const isSrq = e.objKind === 'srq';
        const queue: Ring['queue'] = isSrq ? 'srq' : e.b === 128 ? 'rq' : 'sq';
        const key = isSrq ? `srq:${e.obj}` : `qp:${e.obj}:${queue}`;
        const r = this.ring(key, e.obj, queue, isSrq ? this.srqs.get(e.obj)?.maxWr : undefined);
        const abs = r.producer++;
        r.slots.set(abs, { abs, opcode: queue === 'sq' ? WrOpcode.name(e.b) : 'RECV', status: 'posted', wrId: e.a, ok: true, text: e.text ?? '' });
        this.trim(r);
        return true;
      }
      case 'WqeStarted': {
        // a = wr_id, b = WR opcode, c/d = first/last PSN
        const r = this.rings.get(`qp:${e.obj}:sq`);
        if (!r) return false;
        // WQEs start in order: look at the next expected one first, then a short scan (bounded cost per event)
        if (r.started < r.consumer) r.started = r.consumer;
        for (let i = r.started, n = 0; i < r.producer && n < 64; i++, n++) {
          const s = r.slots.get(i);
          if (s && s.status === 'posted' && s.wrId === e.a) {
            s.status = 'started'; if (e.text) { s.text = e.text; s.why = e.text; }
            if (i === r.started) r.started++;
            return true;
          }
        }
        return false;
      }
      case 'WqeCompleted': {
        // a = wr_id, b = status, c = WC opcode, d = whether a CQE is generated; receive completions have c >= 128
        const recv = e.c >= WcOpcode.values.IBV_WC_RECV;   // receive completions carry IBV_WC_RECV / RECV_RDMA_WITH_IMM
        const q = this.qps.get(e.obj);
        const key = recv ? (q?.srq ? `srq:${q.srq}` : `qp:${e.obj}:rq`) : `qp:${e.obj}:sq`;
        const r = this.rings.get(key);
        if (!r) return false;
        // completions come in order too: the oldest outstanding WQE, checked against wr_id within a short window
        let s = r.slots.get(r.consumer);
        for (let i = r.consumer, n = 0; i < r.producer && n < 64; i++, n++) { const x = r.slots.get(i); if (x && x.wrId === e.a && (x.status === 'posted' || x.status === 'started')) { s = x; break; } }
        const st = e.b;
        if (s) { s.status = WcStatus.name(st); s.ok = st === 0; if (e.text) s.text = e.text; }
        r.consumer = Math.min(r.producer, r.consumer + 1);
        return true;
      }
      case 'Cqe': {
        // obj = cq; a = status, b = WC opcode, c = QPN, d = CQ occupancy after this CQE; wc = the ibv_wc
        const c = this.cq(e.obj);
        const r = this.ring(`cq:${e.obj}`, e.obj, 'cq', c.cqe);
        const abs = r.producer++;
        const st = num(e.wc, 'status') ?? e.a;
        const op = num(e.wc, 'opcode') ?? e.b;
        r.slots.set(abs, { abs, opcode: WcOpcode.name(op), status: WcStatus.name(st), wrId: num(e.wc, 'wrId') ?? 0, ok: st === 0, text: e.text ?? '' });
        if (e.d) r.consumer = Math.max(r.consumer, r.producer - e.d);
        this.trim(r);
        // the arming is one-shot (rxe_cq.c rxe_cq_post, the device's cq_post): armed for the next completion, any CQE
        // disarms it; armed solicited-only, an error CQE does (a solicited success too: with a channel its CompEvent
        // follows, without one the device says nothing, so the badge says "solicited" and stays)
        if (c.armed && (!c.solicitedOnly || st !== 0)) c.armed = false;
        return true;
      }
      case 'AsyncEvent': {
        // a = ibv_event_type; text names it and says why
        if (e.objKind === 'qp') { this.qp(e.obj).lastAsync = e.text ?? ''; return true; }
        return false;
      }
      case 'CqArmed': { const c = this.cq(e.obj); c.armed = true; c.solicitedOnly = !!e.a; return true; }
      case 'CompEvent': { const c = this.cq(e.obj); c.armed = false; c.pendingEvents += 1; return true; }
      default: return false;
    }
  }

  /** QPs of this session connected to each other (each one's destination QPN is the other's QPN, same type) are
   *  each other's peer */
  linkPeers(): void {
    const byQpn = new Map<number, QpView[]>();   // QPNs are per device: two devices may both have QPN 0x11
    for (const q of this.qps.values()) if (!q.destroyed && q.qpn) { const l = byQpn.get(q.qpn); if (l) l.push(q); else byQpn.set(q.qpn, [q]); }
    for (const q of this.qps.values()) {
      const p = q.destQpn ? byQpn.get(q.destQpn)?.find((x) => x !== q && x.destQpn === q.qpn && x.type === q.type) : undefined;
      if (p) q.peer = p.handle;
    }
  }

  /** the text of the newest send WQE with this wr_id on the QP with this QPN (what the device said when it started
   *  or completed it), for explaining a completion */
  sqSlotText(qpn: number, wrId: number): string | undefined {
    for (const q of this.qps.values()) {
      if (q.qpn !== qpn) continue;
      const r = this.rings.get(`qp:${q.handle}:sq`);
      if (!r) return undefined;
      for (let i = r.producer - 1; i >= r.producer - r.depth && i >= 0; i--) { const s = r.slots.get(i); if (s && s.wrId === wrId) return s.why || undefined; }
    }
    return undefined;
  }

  /** cq.get_event returned an event of this CQ: it is no longer queued on the channel (still to be acknowledged) */
  takeEvent(cq: number): void { const c = this.cq(cq); c.pendingEvents = Math.max(0, c.pendingEvents - 1); }

  /** cq.poll reply: the consumer index moves by the number of WCs returned */
  applyPoll(cq: number, n: number): void {
    const r = this.ring(`cq:${cq}`, cq, 'cq', this.cq(cq).cqe);
    r.consumer = Math.min(r.producer, r.consumer + n);
  }
}

// ------------------------------------------------------------------ wire
/** One packet of the wire log. The list fields come from the packet's decoded headers, which are decoded on first
 *  use (the list draws only the rows in view; under a flood most packets are never looked at). */
export class PacketRow {
  private p: Rec | null = null;
  private f: { dstQpn: number; opcode: number; opName: string; psn: number; ackReq: boolean; syndrome: number | null; synText: string; nak: boolean; length: number; hex: string } | null = null;
  srcQpn = 0;   // BTH carries no source QPN (UD: DETH srcQp); the console derives it from the sending QP
  constructor(
    readonly id: number,   // index in the wire log
    readonly seq: number, readonly t: number, readonly event: 'sent' | 'received' | 'dropped',
    // PacketSent: device = sender, peer = receiving device; PacketReceived/Dropped: device = receiver, peer = sender
    readonly device: number, readonly obj: number, readonly peer: number,
    readonly text: string, private readonly source: () => Rec,
  ) {}
  get pkt(): Rec { return (this.p ??= this.source() ?? {}); }
  private get fields() {
    if (this.f) return this.f;
    const p = this.pkt;
    const bth = isRec(p.bth) ? p.bth : p;
    const opcode = num(bth, 'opcode') ?? 0;
    const aeth = isRec(p.aeth) ? p.aeth : p;
    const syn = num(aeth, 'aethSyndrome', 'syndrome');
    const hex = str(p, 'hex') ?? '';
    return (this.f = {
      dstQpn: num(bth, 'destQp') ?? 0, opcode, opName: str(p, 'opcodeName', 'opName', 'name') ?? bthOpcodeName(opcode),
      psn: num(bth, 'psn') ?? 0, ackReq: bool(bth, 'ackReq', 'a') ?? false,
      syndrome: syn ?? null, synText: syn === undefined ? '' : (str(aeth, 'text') ?? syndromeText(syn)),
      nak: syn !== undefined && isNak(syn), length: num(p, 'length', 'len', 'size') ?? hex.length / 2, hex,
    });
  }
  get dstQpn() { return this.fields.dstQpn; }
  get opcode() { return this.fields.opcode; }
  get opName() { return this.fields.opName; }
  get psn() { return this.fields.psn; }
  get ackReq() { return this.fields.ackReq; }
  get syndrome() { return this.fields.syndrome; }
  get synText() { return this.fields.synText; }
  get nak() { return this.fields.nak; }
  get length() { return this.fields.length; }
  get hex() { return this.fields.hex; }
  private d: DecodedPayload | null | undefined;
  /** the payload as a registered upper-layer decoder reads it (app/protocol/decoders.ts), decoded on first use */
  get payload(): DecodedPayload | undefined {
    if (this.d === undefined) { const input = payloadOfPacket(this.pkt); this.d = (input && decodePayload(input)) ?? null; }
    return this.d ?? undefined;
  }
}

/** decoded header fields of a packet, flattened for the header pane (computed only for the selected packet) */
export function packetFields(p: PacketRow): [string, string][] {
  const fields: [string, string][] = [];
  const walk = (o: Rec, prefix: string) => {
    for (const [k, v] of Object.entries(o)) {
      if (HIDDEN.has(k)) continue;
      if (isRec(v)) walk(v, `${prefix}${k}.`); else fields.push([`${prefix}${k}`, fieldText(v)]);
    }
  };
  walk(p.pkt, '');
  const d = p.payload;
  if (d) { fields.push([d.protocol, d.summary]); walk(d.fields, `${d.protocol}.`); }
  return fields;
}

const HIDDEN = new Set(['hex', 'bytes', 'payload']);
function fieldText(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) && v > 9 ? `${v} (0x${v.toString(16)})` : String(v);
  if (typeof v === 'string' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** A list of packet rows the wire view draws: its length and the row at an index. */
export interface PacketList {
  readonly length: number; at(i: number): PacketRow;
  /** index of the row with this id, -1 if the list does not hold it */
  indexOfId(id: number): number;
  /** index of the last row whose id is at most `id` (-1: none) */
  indexAtOrBefore(id: number): number;
}

/** every packet event of a WireLog */
class AllPackets implements PacketList {
  constructor(private readonly w: WireLog) {}
  get length() { return this.w.rows.length; }
  at(i: number) { return this.w.rows[i]!; }
  indexOfId(id: number) { const i = id - this.w.base; return i >= 0 && i < this.w.rows.length ? i : -1; }
  indexAtOrBefore(id: number) { return Math.min(this.w.rows.length - 1, id - this.w.base); }
}
/** the packets a WireLog lists by default (WireLog.listedIds) */
class ListedPackets implements PacketList {
  constructor(private readonly w: WireLog) {}
  get length() { return this.w.listedIds.length - this.w.listedHead; }
  at(i: number) { return this.w.rows[this.w.listedIds[this.w.listedHead + i]! - this.w.base]!; }
  indexOfId(id: number) { const i = this.indexAtOrBefore(id); return i >= 0 && this.at(i).id === id ? i : -1; }
  indexAtOrBefore(id: number) {
    const ids = this.w.listedIds;   // ids increase: binary search
    let lo = this.w.listedHead; let hi = ids.length - 1;
    while (lo <= hi) { const mid = (lo + hi) >> 1; if (ids[mid]! <= id) lo = mid + 1; else hi = mid - 1; }
    return hi - this.w.listedHead;
  }
}

export class WireLog {
  rows: PacketRow[] = [];
  constructor(readonly capacity = 200_000) {}
  base = 0; // ids of rows[0]
  /** ids of the rows listed by default, kept as packets arrive (not recomputed per frame): each packet once (sent or
   *  dropped; its receive event is the same packet) and the packets received from a remote host (their only record) */
  listedIds: number[] = [];
  listedHead = 0;
  readonly all: PacketList = new AllPackets(this);
  readonly listed: PacketList = new ListedPackets(this);

  clear(): void { this.rows = []; this.base = 0; this.listedIds = []; this.listedHead = 0; }

  static readonly KINDS = ['PacketSent', 'PacketReceived', 'PacketDropped'];
  applyEvent(e: DeviceEvent): boolean {
    if (e.kind !== 'PacketSent' && e.kind !== 'PacketDropped' && e.kind !== 'PacketReceived') return false;
    // an event view over a binary frame hands the packet over for decoding later; an event object has it already
    const later = (e as { pktLater?: () => () => Rec }).pktLater;
    let source: () => Rec;
    if (later) source = later.call(e);
    else { const pkt = (e.pkt ?? {}) as Rec; source = () => pkt; }
    const id = this.base + this.rows.length;
    const event = e.kind === 'PacketSent' ? 'sent' : e.kind === 'PacketDropped' ? 'dropped' : 'received';
    this.rows.push(new PacketRow(id, e.seq, e.t, event, e.device, e.obj, e.d, e.text ?? '', source));
    if (event !== 'received' || e.d === 0) this.listedIds.push(id);
    // trim in chunks so the amortized cost stays O(1) per packet
    if (this.rows.length > this.capacity + (this.capacity >> 3)) {
      const cut = this.rows.length - this.capacity; this.rows.splice(0, cut); this.base += cut;
      while (this.listedHead < this.listedIds.length && this.listedIds[this.listedHead]! < this.base) this.listedHead++;
      if (this.listedHead > 4096) { this.listedIds = this.listedIds.slice(this.listedHead); this.listedHead = 0; }
    }
    return true;
  }
}

// ------------------------------------------------------------------ memory writes (hex highlight + heat)
export interface WriteMark { seq: number; addr: number; length: number }
export class MemoryMarks {
  /** per buffer handle: recent writes (newest last) */
  readonly writes = new Map<number, WriteMark[]>();
  static readonly KINDS = ['MemWrite'];
  applyEvent(e: DeviceEvent): boolean {
    if (e.kind !== 'MemWrite') return false;
    // obj = buffer, a = virtual address, b = length
    let l = this.writes.get(e.obj);
    if (!l) { l = []; this.writes.set(e.obj, l); }
    l.push({ seq: e.seq, addr: e.a, length: e.b });
    if (l.length > 8192) l.splice(0, l.length - 4096);   // trim in chunks: O(1) amortized
    return true;
  }
  /** write counts per byte over [addr, addr+len) */
  heat(buffer: number, addr: number, len: number): Uint32Array {
    const h = new Uint32Array(len);
    for (const w of this.writes.get(buffer) ?? []) {
      const s = Math.max(addr, w.addr); const e = Math.min(addr + len, w.addr + w.length);
      for (let x = s; x < e; x++) h[x - addr]++;
    }
    return h;
  }
  /** seq of the last write per byte (0 = never) */
  lastWrite(buffer: number, addr: number, len: number): Float64Array {
    const out = new Float64Array(len);
    for (const w of this.writes.get(buffer) ?? []) {
      const s = Math.max(addr, w.addr); const e = Math.min(addr + len, w.addr + w.length);
      for (let x = s; x < e; x++) out[x - addr] = w.seq;
    }
    return out;
  }
}

// ------------------------------------------------------------------ KeyCheck failures (to explain WCs)
export interface KeyCheckRecord { seq: number; device: number; obj: number; key: number; ok: boolean; text: string }
export class KeyChecks {
  rows: KeyCheckRecord[] = [];
  static readonly KINDS = ['KeyCheck'];
  applyEvent(e: DeviceEvent): boolean {
    if (e.kind !== 'KeyCheck') return false;
    // a = key checked
    this.rows.push({ seq: e.seq, device: e.device, obj: e.obj, key: e.a, ok: e.ok !== false, text: e.text ?? '' });
    if (this.rows.length > 2000) this.rows.splice(0, 1000);
    return true;
  }
  lastFailure(before = Infinity): KeyCheckRecord | undefined {
    for (let i = this.rows.length - 1; i >= 0; i--) if (!this.rows[i].ok && this.rows[i].seq < before) return this.rows[i];
    return undefined;
  }
}
