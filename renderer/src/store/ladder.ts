// What became of each packet, and the sequence diagram drawn from it: one lane per QP, arrows in the direction the
// packet travelled. Fates come from the device's own events, matched by numbers, never by text:
// - PacketSent (a = BTH opcode, b = destination QPN, c = PSN, d = destination device) opens a packet;
// - Fault right after it (native/src/core/net.cpp send_packet_raw: a = 0 loss, 1 duplicate, 2 reorder, 3 delay; b/c =
//   its QPN/PSN) says the wire lost or duplicated it;
// - PacketReceived (same a/b/c, d = source device) is its arrival; a second one is the duplicate;
// - PacketDropped on a QP (the responder's drop, resp.cpp: no pkt) drops the packet that QP received last; one with
//   a pkt (net.cpp deliver_framed: bad ICRC, no such QP…) is matched by the packet's own opcode/QPN/PSN;
// - a PacketSent with the opcode/QPN/PSN of an earlier one from the same device is a retransmission (IBA 9.7.5.1:
//   the requester resends from the PSN of the first unacknowledged request).
import type { DeviceEvent } from '../../../app/protocol/index.ts';
import type { PacketList, PacketRow, QueueModel, WireLog } from './models.ts';

export interface Fate {
  /** for a sent packet: how many times it arrived */
  received: number;
  lost?: boolean;
  duplicated?: boolean;
  /** the receiver dropped it: its reason (the device's words) and the device */
  dropped?: string; droppedAt?: number;
  /** id of the first send of the same packet, when this one is a retransmission */
  retransmitOf?: number;
  /** for a receive or drop row: the id of the sent packet it belongs to */
  of?: number;
}

const MAX_KEYS = 1 << 16;   // packets remembered for matching (PSNs of a long run are forgotten in chunks)

export class PacketFates {
  static readonly KINDS = ['PacketSent', 'PacketReceived', 'PacketDropped', 'Fault', 'QpState'];
  readonly byId = new Map<number, Fate>();
  // "dstDev:qpn:psn:opcode" -> its sends not yet received, oldest first (the wire keeps order unless reordered), and
  // the last one received (a duplicate arrives after its original)
  private sentTo = new Map<string, { waiting: number[]; last: number }>();
  private firstSend = new Map<string, number>();   // "srcDev>dstDev:qpn:psn:opcode" -> first send of it
  private lastRecv = new Map<string, number>();    // "device:qp handle" -> newest receive row on that QP
  private lastSent = -1;
  private lastSentKey = '';
  constructor(private readonly wire: WireLog) {}

  clear(): void { this.byId.clear(); this.sentTo.clear(); this.firstSend.clear(); this.lastRecv.clear(); this.lastSent = -1; }
  fate(id: number): Fate | undefined { return this.byId.get(id); }
  private of(id: number): Fate { let f = this.byId.get(id); if (!f) { f = { received: 0 }; this.byId.set(id, f); } return f; }

  /** call after WireLog.applyEvent (the row of a packet event is the newest one) */
  applyEvent(e: DeviceEvent): boolean {
    const id = this.wire.base + this.wire.rows.length - 1;
    if (this.byId.size > this.wire.capacity + (this.wire.capacity >> 2)) {   // rows the wire log trimmed: forget them
      for (const k of this.byId.keys()) if (k < this.wire.base) this.byId.delete(k);
    }
    switch (e.kind) {
      case 'QpState': {
        // a QP back in RESET starts its PSNs again: what it sends next is not a retransmission of what it sent before
        if (e.b === 0) this.firstSend.clear();
        return false;
      }
      case 'PacketSent': {
        if (this.sentTo.size > MAX_KEYS) { this.sentTo.clear(); this.firstSend.clear(); }
        const k = `${e.d}:${e.b}:${e.c}:${e.a}`;
        const first = this.firstSend.get(`${e.device}>${k}`);
        if (first !== undefined) this.of(id).retransmitOf = first; else this.firstSend.set(`${e.device}>${k}`, id);
        const s = this.sentTo.get(k);
        if (s) s.waiting.push(id); else this.sentTo.set(k, { waiting: [id], last: -1 });
        this.lastSent = id; this.lastSentKey = k;
        return true;
      }
      case 'Fault': {
        if (e.objKind !== 'packet' || this.lastSent < 0) return false;
        const p = this.wire.all.at(this.lastSent - this.wire.base) as PacketRow | undefined;
        // the packet it names (a sampled stream may have dropped the send it followed)
        if (!p || p.device !== e.device || p.dstQpn !== e.b || p.psn !== e.c) return false;
        if (e.a === 0) {
          // never arrives: a later receive of the same numbers is its retransmission's
          this.of(this.lastSent).lost = true;
          const s = this.sentTo.get(this.lastSentKey);
          if (s && s.waiting[s.waiting.length - 1] === this.lastSent) s.waiting.pop();
        }
        else if (e.a === 1) this.of(this.lastSent).duplicated = true;
        else return false;
        return true;
      }
      case 'PacketReceived': {
        if (e.d === 0) return false;   // from a remote host: no send of ours to match
        const s = this.sentTo.get(`${e.device}:${e.b}:${e.c}:${e.a}`);
        this.lastRecv.set(`${e.device}:${e.obj}`, id);
        if (!s) return false;
        const sent = s.waiting.length ? s.waiting.shift()! : s.last;
        if (sent < 0) return false;
        s.last = sent;
        this.of(sent).received++;
        this.of(id).of = sent;
        return true;
      }
      case 'PacketDropped': {
        let sent: number | undefined;
        if (e.objKind === 'qp') {
          const recv = this.lastRecv.get(`${e.device}:${e.obj}`);
          sent = recv === undefined ? undefined : this.byId.get(recv)?.of;
        } else {
          const p = this.wire.all.at(id - this.wire.base);
          const s = p?.pkt && Object.keys(p.pkt).length ? this.sentTo.get(`${e.device}:${p.dstQpn}:${p.psn}:${p.opcode}`) : undefined;
          if (s?.waiting.length) { sent = s.waiting.shift()!; s.last = sent; }
        }
        if (sent === undefined) return false;
        const f = this.of(sent); f.dropped = e.text ?? 'dropped'; f.droppedAt = e.device;
        this.of(id).of = sent;
        return true;
      }
      default: return false;
    }
  }
}

// ------------------------------------------------------------------ the sequence diagram's model
export interface Lane { key: string; device: number; qpn: number | null; label: string }
export type ArrowFate = 'delivered' | 'lost' | 'dropped' | 'in flight';
export interface Arrow {
  id: number; from: number; to: number; opName: string; psn: number; t: number;
  fate: ArrowFate; why: string; retransmit: boolean; duplicated: boolean; ack: boolean; nak: boolean; synText: string;
}
export interface Ladder { lanes: Lane[]; arrows: Arrow[]; mode: 'newest' | 'around'; }

/** source QPN of a sent packet: BTH has none, so it is the QP on the sending device whose destination QPN is the
 *  packet's (UD: the packet's DETH names it) */
export function srcQpnOf(queues: QueueModel, p: PacketRow): number | null {
  if (p.srcQpn) return p.srcQpn;
  for (const q of queues.qps.values()) if (q.device === p.device && q.destQpn === p.dstQpn && q.destQpn) return q.qpn;
  return null;
}

/** The sequence diagram: the newest `max` packets (follow newest), or the ones around `anchorId`; one lane per QP
 *  (named by QPN and device), receive and drop events folded into the packet they belong to. */
export function ladderOf(rows: PacketList, fates: PacketFates, queues: QueueModel, devName: (d: number) => string,
  anchorId: number | null, max = 30): Ladder {
  const shown = (p: PacketRow) => p.event === 'sent' || (p.event === 'dropped' && fates.fate(p.id)?.of === undefined);
  const picked: PacketRow[] = [];
  const scan = 20_000;   // rows looked at per draw at most (the list holds up to 200 k packets)
  if (anchorId === null) {
    for (let i = rows.length - 1, n = 0; i >= 0 && picked.length < max && n < scan; i--, n++) { const p = rows.at(i); if (shown(p)) picked.push(p); }
    picked.reverse();
  } else {
    const at = Math.max(0, rows.indexAtOrBefore(anchorId));
    const after: PacketRow[] = [];
    for (let i = at + 1, n = 0; i < rows.length && after.length < max >> 1 && n < scan; i++, n++) { const p = rows.at(i); if (shown(p)) after.push(p); }
    for (let i = at, n = 0; i >= 0 && picked.length < max - after.length && n < scan; i--, n++) { const p = rows.at(i); if (shown(p)) picked.push(p); }
    picked.reverse(); for (const a of after) picked.push(a);
  }
  const lanes: Lane[] = [];
  const laneAt = (device: number, qpn: number | null): number => {
    const key = `${device}:${qpn ?? '?'}`;
    let i = lanes.findIndex((l) => l.key === key);
    if (i < 0) {
      const label = device === 0 ? 'the other end (not a device of this session)' : qpn === null ? `${devName(device)} (QP unknown)` : `QPN 0x${qpn.toString(16)} on ${devName(device)}`;
      i = lanes.push({ key, device, qpn, label }) - 1;
    }
    return i;
  };
  const arrows: Arrow[] = picked.map((p) => {
    const f = fates.fate(p.id);
    // a PacketDropped nobody sent (a remote host's packet the device refused): drawn into the receiving QP
    const sent = p.event === 'sent';
    const from = sent ? laneAt(p.device, srcQpnOf(queues, p)) : laneAt(p.peer, null);
    const to = laneAt(sent ? p.peer : p.device, p.dstQpn);
    const fate: ArrowFate = !sent || f?.dropped ? 'dropped' : f?.lost ? 'lost' : (f?.received ?? 0) > 0 || p.peer === 0 ? 'delivered' : 'in flight';
    return {
      id: p.id, from, to, opName: p.opName.replace(/^(RC|UC|UD) /, ''), psn: p.psn, t: p.t, fate,
      why: fate === 'dropped' ? (sent ? f?.dropped ?? '' : p.text) : fate === 'lost' ? 'lost on the wire (seeded loss)' : '',
      // (a responder that ACKs a duplicate request again sends the same ACK: not a retransmission of the requester's)
      retransmit: f?.retransmitOf !== undefined && p.syndrome === null, duplicated: !!f?.duplicated,
      ack: p.syndrome !== null, nak: p.nak, synText: p.synText,
    };
  });
  return { lanes, arrows, mode: anchorId === null ? 'newest' : 'around' };
}
