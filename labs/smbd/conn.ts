// One side of an established SMB Direct connection: the credit algorithm, fragmentation and reassembly, and the
// keepalive state machine, as [MS-SMBD] 3.1.5.1 (send), 3.1.5.8 (receive), 3.1.5.9 (credit management before
// sending), 3.1.4.2 (upper-layer message too large), 3.1.2.2 (idle connection timer) state them. Pure and
// deterministic: the machine never touches the device. It answers with actions (post this many receives, send these
// bytes, deliver this upper-layer message, disconnect) that an agent turns into verbs (labs/smbd/peer.ts); time is
// given to it (virtual time, so the 120 s idle timer can be compressed in the lab).
import {
  DATA_MIN_HDR_SIZE, DATA_OFFSET, FLAG_RESPONSE_REQUESTED, decodeDataTransfer, encodeDataTransfer,
} from './pdu.ts';
import type { DataTransfer } from './pdu.ts';
import type { NegotiatedSizes } from './negotiate.ts';
import type { PeerConfig, PeerProfile } from './profiles.ts';

export type KeepaliveState = 'NONE' | 'PENDING' | 'SENT';
/** why the send queue is not moving: no credit at all, or the last one held back by 3.1.5.1 step 3 */
export type Blocked = null | 'no-send-credits' | 'last-credit-rule';

export type Action =
  | { kind: 'post-recv'; count: number }
  | { kind: 'send'; bytes: Uint8Array; header: DataTransfer; invalidateToken?: number }
  | { kind: 'deliver'; message: Uint8Array; fragments: number; rfc1002Length: number }
  | { kind: 'disconnect'; rule: string; reason: string };

interface Queued { data: Uint8Array; remaining: number; invalidateToken?: number }

/** The credit board's numbers for one side (the panel draws these; the agents reply with them). */
export interface ConnView {
  state: 'established' | 'disconnected';
  sendCredits: number; sendCreditTarget: number;
  receiveCredits: number; receiveCreditTarget: number; receiveCreditMax: number;
  /** credits posted but not yet carried to the peer in a message (Linux: new_credits_offered) */
  pendingGrant: number;
  sendQueue: number; blocked: Blocked; keepalive: KeepaliveState; sendImmediate: boolean;
  reassemblyBytes: number; reassemblyRemaining: number;
  idleDeadlineNs: number; keepaliveDeadlineNs: number | null;
  sent: number; received: number; creditsGrantedSent: number; creditsGrantedReceived: number;
  lastCreditHolds: number; delivered: number; disconnect: { rule: string; reason: string } | null;
}

export class SmbdConnection {
  sendCredits: number;
  readonly sendCreditTarget: number;
  receiveCredits: number;
  receiveCreditTarget: number;
  readonly receiveCreditMax: number;
  pendingGrant = 0;
  keepalive: KeepaliveState = 'NONE';
  sendImmediate = false;
  blocked: Blocked = null;
  state: 'established' | 'disconnected' = 'established';
  disconnect: { rule: string; reason: string } | null = null;
  private readonly queue: Queued[] = [];
  private reassembly: Uint8Array[] = [];
  private reassemblyBytes = 0;
  private reassemblyRemaining = 0;
  private fragmentsSeen = 0;
  private rfc1002 = 0;
  now: number;
  idleDeadlineNs: number;
  keepaliveDeadlineNs: number | null = null;
  counters = { sent: 0, received: 0, creditsGrantedSent: 0, creditsGrantedReceived: 0, lastCreditHolds: 0, delivered: 0 };

  /** `postedReceives`: receives already posted (and granted) when the connection is established */
  constructor(readonly profile: PeerProfile, readonly cfg: PeerConfig, readonly sizes: NegotiatedSizes, postedReceives: number, nowNs = 0) {
    this.sendCredits = sizes.sendCredits;
    this.sendCreditTarget = cfg.sendCreditTarget;
    this.receiveCredits = postedReceives;
    this.receiveCreditTarget = sizes.receiveCreditTarget;
    this.receiveCreditMax = cfg.receiveCreditMax;
    this.now = nowNs;
    this.idleDeadlineNs = nowNs + cfg.keepaliveIntervalNs;
  }

  /** payload bytes per data transfer message: MaxSendSize - 24 */
  get fragmentPayload(): number { return this.sizes.maxSendSize - DATA_OFFSET; }

  /** [MS-SMBD] 3.1.4.2 / 3.1.5.1: queue an upper-layer message, cut into fragments; then send what credits allow. */
  send(message: Uint8Array, invalidateToken?: number): Action[] {
    if (this.state !== 'established') return [];
    if (message.length > this.sizes.maxFragmentedSendSize) {
      throw new RangeError(`[MS-SMBD] 3.1.4.2: message of ${message.length} bytes > MaxFragmentedSendSize ${this.sizes.maxFragmentedSendSize}`);
    }
    const per = this.fragmentPayload;
    const frags: Queued[] = [];
    if (message.length === 0) frags.push({ data: message, remaining: 0 });
    for (let off = 0; off < message.length; off += per) {
      const data = message.subarray(off, Math.min(message.length, off + per));
      frags.push({ data, remaining: message.length - off - data.length });
    }
    // a remote token to invalidate rides on the last fragment (the response that ends the operation)
    if (invalidateToken !== undefined) frags[frags.length - 1]!.invalidateToken = invalidateToken;
    for (const f of frags) this.queue.push(f);
    return this.pump();
  }

  /** [MS-SMBD] 3.1.5.9: post receives so credits can be granted; the new credits wait in pendingGrant. */
  private manageCredits(out: Action[]): number {
    const want = Math.min(this.receiveCreditTarget, this.receiveCreditMax);
    const low = this.cfg.repostAt === undefined || this.receiveCredits <= this.cfg.repostAt;
    let n = this.receiveCredits < want && low ? want - this.receiveCredits : 0;
    // the second half is the last-credit rule's own: the bug profile does not have it
    const must = this.receiveCredits === 0 || (this.profile.lastCreditRule && this.sendCredits === 1 && this.queue.length > 0);
    if (must && n === 0 && this.receiveCredits < this.receiveCreditMax) n = 1;
    if (n > 0) {
      this.receiveCredits += n;
      this.pendingGrant += n;
      out.push({ kind: 'post-recv', count: n });
    }
    return n;
  }

  /** [MS-SMBD] 3.1.5.1: send queued messages while credits allow. */
  pump(): Action[] {
    const out: Action[] = [];
    if (this.state !== 'established') return out;
    if (this.queue.length === 0 && this.sendImmediate) this.queue.push({ data: new Uint8Array(0), remaining: 0 });
    this.sendImmediate = false;
    this.blocked = null;
    while (this.queue.length > 0) {
      if (this.sendCredits === 0) { this.blocked = 'no-send-credits'; break; }                     // step 1
      if (this.pendingGrant === 0) this.manageCredits(out);                                        // step 2
      if (this.profile.lastCreditRule && this.sendCredits === 1 && this.pendingGrant === 0) {      // step 3
        this.blocked = 'last-credit-rule';
        this.counters.lastCreditHolds++;
        break;
      }
      const m = this.queue.shift()!;                                                               // step 4
      this.sendCredits--;
      let flags = 0;
      if (this.keepalive === 'PENDING') {                                                          // step 6
        flags |= FLAG_RESPONSE_REQUESTED;
        this.keepalive = 'SENT';
        this.keepaliveDeadlineNs = this.now + this.cfg.keepaliveTimeoutNs;
      }
      const header = { creditsRequested: this.sendCreditTarget, creditsGranted: this.pendingGrant, flags, remainingDataLength: m.remaining };
      this.counters.creditsGrantedSent += this.pendingGrant;
      this.pendingGrant = 0;
      const bytes = encodeDataTransfer(header, m.data);
      this.counters.sent++;
      out.push({ kind: 'send', bytes, header: decodeDataTransfer(bytes), ...(m.invalidateToken !== undefined ? { invalidateToken: m.invalidateToken } : {}) });
    }
    return out;
  }

  private terminate(rule: string, reason: string): Action[] {
    this.state = 'disconnected';
    this.disconnect = { rule, reason };
    return [{ kind: 'disconnect', rule, reason }];
  }

  /** [MS-SMBD] 3.1.5.8: a data transfer message arrived (the received bytes, byte_len of the receive completion). */
  onReceive(bytes: Uint8Array, nowNs = this.now): Action[] {
    if (this.state !== 'established') return [];
    this.now = Math.max(this.now, nowNs);
    // step 1: any failure terminates the connection
    if (bytes.length < DATA_MIN_HDR_SIZE) return this.terminate('recv.length', `${bytes.length} bytes < ${DATA_MIN_HDR_SIZE}`);
    const h = decodeDataTransfer(bytes);
    if (h.creditsRequested === 0) return this.terminate('recv.credits-requested', 'CreditsRequested = 0');
    if (h.dataOffset % 8 !== 0) return this.terminate('recv.data-offset-aligned', `DataOffset ${h.dataOffset} not 8-byte aligned`);
    if (h.dataLength > 0 && h.dataOffset < DATA_MIN_HDR_SIZE) return this.terminate('recv.data-offset-aligned', `DataOffset ${h.dataOffset} inside the header`);
    if (h.dataOffset + h.dataLength > bytes.length) return this.terminate('recv.data-in-message', `DataOffset ${h.dataOffset} + DataLength ${h.dataLength} > ${bytes.length}`);
    if (h.dataLength + h.remainingDataLength > this.sizes.maxFragmentedRecvSize) {
      return this.terminate('recv.max-fragmented', `DataLength ${h.dataLength} + RemainingDataLength ${h.remainingDataLength} > MaxFragmentedRecvSize ${this.sizes.maxFragmentedRecvSize}`);
    }
    const out: Action[] = [];
    this.counters.received++;
    this.receiveCredits = Math.max(0, this.receiveCredits - 1);                                    // step 2
    // 3.1.2.2: a message from the peer ends an outstanding keepalive and restarts the idle timer
    if (this.keepalive === 'SENT') { this.keepalive = 'NONE'; this.keepaliveDeadlineNs = null; }
    this.idleDeadlineNs = this.now + this.cfg.keepaliveIntervalNs;
    // step 3: with nothing queued, post receives now; the credits go promptly in a message of their own when the
    // peer is running low (cifs smbd_post_send_credits: receive credits below target - 1; "promptly" is left to the
    // implementation). Without that bound every credit-only message would answer the last one, forever.
    const before = this.receiveCredits;
    if (this.queue.length === 0 && this.manageCredits(out) > 0 && before < this.receiveCreditTarget - 1) this.sendImmediate = true;
    this.receiveCreditTarget = h.creditsRequested;                                                 // step 4
    if (h.flags & FLAG_RESPONSE_REQUESTED) this.sendImmediate = true;                              // step 5
    if (h.creditsGranted > 0) { this.sendCredits += h.creditsGranted; this.counters.creditsGrantedReceived += h.creditsGranted; } // step 6
    if (h.dataLength > 0 || h.remainingDataLength > 0) {                                           // step 7
      if (this.reassemblyBytes === 0 && this.fragmentsSeen === 0) this.rfc1002 = h.dataLength + h.remainingDataLength;
      this.reassembly.push(bytes.slice(h.dataOffset, h.dataOffset + h.dataLength));
      this.reassemblyBytes += h.dataLength;
      this.reassemblyRemaining = h.remainingDataLength;
      this.fragmentsSeen++;
      if (h.remainingDataLength === 0) {
        const message = new Uint8Array(this.reassemblyBytes);
        let at = 0;
        for (const p of this.reassembly) { message.set(p, at); at += p.length; }
        out.push({ kind: 'deliver', message, fragments: this.fragmentsSeen, rfc1002Length: this.rfc1002 });
        this.counters.delivered++;
        this.reassembly = []; this.reassemblyBytes = 0; this.fragmentsSeen = 0; this.rfc1002 = 0;
      }
    }
    for (const m of this.pump()) out.push(m);
    return out;
  }

  /** Virtual time moves on: the idle connection timer and the keepalive response timeout ([MS-SMBD] 3.1.2.2). */
  tick(nowNs: number): Action[] {
    if (this.state !== 'established') return [];
    this.now = Math.max(this.now, nowNs);
    if (this.keepalive === 'SENT' && this.keepaliveDeadlineNs !== null && this.now >= this.keepaliveDeadlineNs) {
      return this.terminate('keepalive.timeout', `no message within ${this.cfg.keepaliveTimeoutNs} ns of the keepalive`);
    }
    if (this.keepalive === 'NONE' && this.now >= this.idleDeadlineNs) {
      this.keepalive = 'PENDING';
      this.sendImmediate = true;
      this.idleDeadlineNs = this.now + this.cfg.keepaliveIntervalNs;
      return this.pump();
    }
    return [];
  }

  /** The earliest virtual time at which tick() has something to do. */
  nextTimerNs(): number {
    return this.keepalive === 'SENT' && this.keepaliveDeadlineNs !== null ? this.keepaliveDeadlineNs : this.idleDeadlineNs;
  }

  get queued(): number { return this.queue.length; }

  view(): ConnView {
    return {
      state: this.state, sendCredits: this.sendCredits, sendCreditTarget: this.sendCreditTarget,
      receiveCredits: this.receiveCredits, receiveCreditTarget: this.receiveCreditTarget, receiveCreditMax: this.receiveCreditMax,
      pendingGrant: this.pendingGrant, sendQueue: this.queue.length, blocked: this.blocked, keepalive: this.keepalive,
      sendImmediate: this.sendImmediate, reassemblyBytes: this.reassemblyBytes, reassemblyRemaining: this.reassemblyRemaining,
      idleDeadlineNs: this.idleDeadlineNs, keepaliveDeadlineNs: this.keepaliveDeadlineNs, ...this.counters, disconnect: this.disconnect,
    };
  }
}
