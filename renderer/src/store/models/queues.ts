// Rings (SQ, RQ, SRQ, CQ), QPs, CQs and SRQs as the device reports them: the Queues panel's model.
import type { DeviceEvent, ResultOf, RingSnapshot } from '../../../../app/protocol/index.ts';
import { QpState, QpType, WcOpcode, WcStatus, WrOpcode } from '../../../../app/protocol/index.ts';
import { num } from '../spec.ts';

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
