// The wire log: one row per packet event, its decoded headers and payload on first use.
import type { DeviceEvent } from '../../../../app/protocol/index.ts';
import { bthOpcodeName } from '../../../../app/protocol/index.ts';
import { decodePayload, payloadOfPacket, type DecodedPayload } from '../../../../app/protocol/decoders.ts';
import { bool, isNak, isRec, num, str, syndromeText, type Rec } from '../spec.ts';

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
