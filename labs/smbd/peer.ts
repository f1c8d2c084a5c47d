// One SMB Direct peer on the software device: its QP, CQ, receive and send buffers, and the connection machine
// (conn.ts) whose actions it turns into verbs. Every message really crosses the device: the bytes are written into
// a registered send buffer, posted as IBV_WR_SEND (IBV_WR_SEND_WITH_INV when a remote token is to be invalidated),
// land in a posted receive buffer of the other peer and are read back from its memory when the receive completes.
// Nothing here decides what the device did: completions come from cq.poll, bytes from memory.read.
import type { ExecResult } from '../../app/host/api.ts';
import type { Command } from '../../app/protocol/index.ts';
import { SmbdConnection } from './conn.ts';
import type { Action } from './conn.ts';
import { DATA_MIN_HDR_SIZE, decodeDataTransfer, fromHex, toHex } from './pdu.ts';
import type { PeerConfig, PeerProfile } from './profiles.ts';
import type { NegotiatedSizes } from './negotiate.ts';

/** Where the peers' commands go: a fresh executor (tests, headless, bench) or the backend host (the console). */
export interface Port { exec(command: Command): ExecResult }

export class DeviceError extends Error {}

type R = Record<string, unknown>;
/** Runs a command; a failure of the lab's own setup or data path is an error of the rig, not a protocol event. */
export function must(port: Port, cmd: string, args: R): R {
  const r = port.exec({ cmd, args } as Command);
  if (!r.ok) throw new DeviceError(`${cmd}: ${r.error.code} ${r.error.message}`);
  return r.result as R;
}

/** wr_id layout: kind in the high bits, the slot (or operation) number in the low 32 */
export const WR = { RECV: 1, SEND: 2, RDMA: 3, REG: 4, INV: 5 } as const;
export const wrId = (kind: number, n: number) => kind * 2 ** 32 + n;
export const wrKind = (id: number) => Math.floor(id / 2 ** 32);
export const wrSlot = (id: number) => id % 2 ** 32;

export interface Wc { wrId: number; status: number; statusName: string; opcode: number; opcodeName: string; byteLen: number; invalidatedRkey: number; wcFlagsNames: string[] }

/** What a peer saw, for the views: one entry per message sent or received (typed, no prose). */
export interface WireNote { dir: 'tx' | 'rx'; bytes: number; creditsRequested: number; creditsGranted: number; flags: number; remainingDataLength: number; dataLength: number; invalidate?: number }

export class SmbdPeer {
  device = 0; pd = 0; cq = 0; qp = 0; qpNum = 0;
  recvBase = 0; sendBase = 0; lkey = 0;
  private freeRecv: number[] = [];
  private freeSend: number[] = [];
  conn: SmbdConnection | null = null;
  /** upper-layer messages delivered to this peer (reassembled), with their fragment counts */
  delivered: { message: Uint8Array; fragments: number; rfc1002Length: number }[] = [];
  notes: WireNote[] = [];
  /** receives posted on the QP and not yet completed (the board's "posted receives", from the verbs) */
  postedRecvs = 0;
  sendsInFlight = 0;
  /** completions that are not SEND/RECV of SMB Direct messages, for the RDMA data path */
  other: Wc[] = [];
  /** the raw negotiate message that arrived first (before the connection is established) */
  negotiateIn: Uint8Array | null = null;

  constructor(readonly port: Port, readonly name: string, readonly profile: PeerProfile, readonly cfg: PeerConfig, readonly devProfile = 'rxe') {}

  setup(): void {
    const p = this.port;
    this.device = must(p, 'device.create', { profile: this.devProfile, name: this.name }).device as number;
    this.pd = must(p, 'pd.alloc', { device: this.device }).pd as number;
    const slots = this.cfg.receiveCreditMax + 1;
    const sendSlots = this.cfg.sendCreditTarget + 2;
    const recvLen = slots * this.cfg.maxReceiveSize, sendLen = sendSlots * this.cfg.maxSendSize;
    // one buffer: the receive slots, then the send slots; registered with local access only (never exposed by
    // rkey: [MS-SMBD] 3.1.1.1; ksmbd and cifs map them with the device's local DMA key)
    this.recvBase = must(p, 'buffer.alloc', { length: recvLen + sendLen }).addr as number;
    this.sendBase = this.recvBase + recvLen;
    this.lkey = must(p, 'mr.reg', { pd: this.pd, addr: this.recvBase, length: recvLen + sendLen, access: ['IBV_ACCESS_LOCAL_WRITE'] }).lkey as number;
    this.freeRecv = Array.from({ length: slots }, (_, i) => i);
    this.freeSend = Array.from({ length: sendSlots }, (_, i) => i);
    const depth = slots + sendSlots + 16;
    this.cq = must(p, 'cq.create', { device: this.device, cqe: 2 * depth }).cq as number;
    const q = must(p, 'qp.create', {
      pd: this.pd, sendCq: this.cq, recvCq: this.cq, qpType: 'IBV_QPT_RC',
      cap: { maxSendWr: sendSlots + 16, maxRecvWr: slots, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 }, sqSigAll: false,
    });
    this.qp = q.qp as number; this.qpNum = q.qpNum as number;
  }

  /** post `n` receives of MaxReceiveSize (the buffers of this peer's configuration) */
  postRecvs(n: number): void {
    if (n <= 0) return;
    const wrs = [];
    for (let i = 0; i < n; i++) {
      const slot = this.freeRecv.shift();
      if (slot === undefined) throw new DeviceError(`${this.name}: no receive buffer left (receiveCreditMax ${this.cfg.receiveCreditMax})`);
      wrs.push({ wrId: wrId(WR.RECV, slot), sgList: [{ addr: this.recvBase + slot * this.cfg.maxReceiveSize, length: this.cfg.maxReceiveSize, lkey: this.lkey }] });
    }
    must(this.port, 'post.recv', { qp: this.qp, wrs });
    this.postedRecvs += n;
  }

  /** one message: the bytes into a send buffer, one signaled SEND (SEND_WITH_INV with a token) */
  postMessage(bytes: Uint8Array, invalidateToken?: number): void {
    const slot = this.freeSend.shift();
    if (slot === undefined) throw new DeviceError(`${this.name}: no send buffer left`);
    const addr = this.sendBase + slot * this.cfg.maxSendSize;
    must(this.port, 'memory.write', { addr, data: toHex(bytes) });
    const wr: R = {
      wrId: wrId(WR.SEND, slot), opcode: invalidateToken !== undefined ? 'IBV_WR_SEND_WITH_INV' : 'IBV_WR_SEND',
      sendFlags: ['IBV_SEND_SIGNALED'], sgList: [{ addr, length: bytes.length, lkey: this.lkey }],
    };
    if (invalidateToken !== undefined) wr.invalidateRkey = invalidateToken;
    must(this.port, 'post.send', { qp: this.qp, wrs: [wr] });
    this.sendsInFlight++;
  }

  /** Establish the connection machine with the negotiated sizes; `posted` receives are already granted. */
  establish(profile: PeerProfile, sizes: NegotiatedSizes, posted: number, nowNs: number): void {
    this.conn = new SmbdConnection(profile, this.cfg, sizes, posted, nowNs);
  }

  /** the connection machine's actions, as verbs */
  apply(actions: Action[]): void {
    for (const a of actions) {
      if (a.kind === 'post-recv') this.postRecvs(a.count);
      else if (a.kind === 'send') {
        this.notes.push({ dir: 'tx', bytes: a.bytes.length, ...pick(a.header), ...(a.invalidateToken !== undefined ? { invalidate: a.invalidateToken } : {}) });
        this.postMessage(a.bytes, a.invalidateToken);
      } else if (a.kind === 'deliver') this.delivered.push({ message: a.message, fragments: a.fragments, rfc1002Length: a.rfc1002Length });
    }
  }

  /** a hung peer: its host stops taking completions (the device still receives into its posted buffers) */
  paused = false;

  /** ibv_poll_cq: handle every completion of this peer; returns how many there were */
  poll(nowNs: number): number {
    if (this.paused) return 0;
    const wcs = must(this.port, 'cq.poll', { cq: this.cq, max: 64 }).wcs as (Wc & { wrId: number | string })[];
    for (const raw of wcs) {
      const wc = { ...raw, wrId: Number(raw.wrId) };
      const kind = wrKind(wc.wrId), slot = wrSlot(wc.wrId);
      if (kind === WR.RECV) {
        this.postedRecvs--;
        this.freeRecv.push(slot);
        if (wc.status !== 0) { this.other.push(wc); continue; }   // flushed: the QP went to the error state
        const addr = this.recvBase + slot * this.cfg.maxReceiveSize;
        const bytes = fromHex(must(this.port, 'memory.read', { addr, length: wc.byteLen }).hex as string);
        if (!this.conn) { this.negotiateIn = bytes; continue; }
        if (bytes.length >= DATA_MIN_HDR_SIZE) this.notes.push({ dir: 'rx', bytes: bytes.length, ...pick(decodeDataTransfer(bytes)) });
        this.apply(this.conn.onReceive(bytes, nowNs));
        if (wc.wcFlagsNames.includes('IBV_WC_WITH_INV')) this.other.push(wc);
      } else if (kind === WR.SEND) {
        this.sendsInFlight--;
        this.freeSend.push(slot);
        if (wc.status !== 0) this.other.push(wc);
      } else this.other.push(wc);
    }
    return wcs.length;
  }
}

function pick(h: { creditsRequested: number; creditsGranted: number; flags: number; remainingDataLength: number; dataLength: number }) {
  return { creditsRequested: h.creditsRequested, creditsGranted: h.creditsGranted, flags: h.flags, remainingDataLength: h.remainingDataLength, dataLength: h.dataLength };
}
