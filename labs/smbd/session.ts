// Two SMB Direct peers on the software device (a client, the active side, and a server, the passive side), each
// on its own device, their RC QPs connected: negotiation with its rule records, then the engine stepped one packet
// at a time with both peers' completions handled between steps (deterministic for a session seed), the virtual
// clock for the keepalive timers, seeded load, and the stall detector the deadlock is shown with.
import { checkNegotiateRequest, checkNegotiateResponse, negotiateRequestOf, negotiateResponseOf, notSupportedResponse } from './negotiate.ts';
import type { NegotiatedSizes, RuleResult } from './negotiate.ts';
import { decodeNegotiateRequest, decodeNegotiateResponse, encodeNegotiateRequest, encodeNegotiateResponse, toHex } from './pdu.ts';
import type { NegotiateRequest, NegotiateResponse } from './pdu.ts';
import { mulberry32 } from '../cq/explorer.ts';
import { SmbdPeer, must } from './peer.ts';
import type { Port } from './peer.ts';
import type { ConnView } from './conn.ts';
import { LINUX_CONFIG, PROFILES } from './profiles.ts';
import type { PeerConfig, ProfileId } from './profiles.ts';

export interface SessionOptions {
  client?: ProfileId; server?: ProfileId;
  clientCfg?: Partial<PeerConfig>; serverCfg?: Partial<PeerConfig>;
  /** the device profile both peers run on */
  device?: string;
}

export interface NegotiationView {
  requestHex: string; request: NegotiateRequest | null; serverRules: RuleResult[]; serverOutcome: 'accept' | 'reject' | 'terminate';
  responseHex: string | null; response: NegotiateResponse | null; clientRules: RuleResult[]; clientOutcome: 'accept' | 'terminate' | 'no-response' | null;
  client: NegotiatedSizes | null; server: NegotiatedSizes | null;
}

export interface SideView extends ConnView { postedRecvs: number; sendsInFlight: number; delivered: number }
export interface BoardView { nowNs: number; client: SideView | null; server: SideView | null; stalled: boolean }

/** A small-credit configuration: 8 credits each way, so a burst of a few dozen messages exhausts them (the
 *  Linux defaults are 255: the same deadlock needs bursts of more than 255 messages each way), and ksmbd's lazy
 *  reposting (receives reposted once credits fall to max / 8). */
export const LAB_CREDITS: Partial<PeerConfig> = { receiveCreditMax: 8, sendCreditTarget: 8, repostAt: 8 >> 3 };

export class SmbdSession {
  readonly client: SmbdPeer;
  readonly server: SmbdPeer;
  /** virtual time: the device's clock plus the idle time the lab skipped (compressed timers) */
  skewNs = 0;
  deviceNs = 0;
  steps = 0;
  negotiation: NegotiationView | null = null;

  constructor(readonly port: Port, readonly opts: SessionOptions = {}) {
    const dev = opts.device ?? 'rxe';
    this.client = new SmbdPeer(port, 'smb_client', PROFILES[opts.client ?? 'spec'], { ...LINUX_CONFIG, ...opts.clientCfg }, dev);
    this.server = new SmbdPeer(port, 'smb_server', PROFILES[opts.server ?? 'spec'], { ...LINUX_CONFIG, ...opts.serverCfg }, dev);
  }

  get nowNs(): number { return this.deviceNs + this.skewNs; }

  setup(): void {
    this.client.setup();
    this.server.setup();
    must(this.port, 'qp.connect', { qp: this.client.qp, peer: this.server.qp, pathMtu: 'IBV_MTU_1024' });
  }

  /** One engine step, then both peers' completions; true when anything moved. */
  step(): boolean {
    const r = must(this.port, 'engine.step', { count: 1 });
    this.deviceNs = Number(r.nowNs);
    this.steps++;
    const n = this.client.poll(this.nowNs) + this.server.poll(this.nowNs);
    this.tick();
    return !(r.idle as boolean) || n > 0;
  }

  private tick(): void {
    for (const p of [this.client, this.server]) if (p.conn && !p.paused) p.apply(p.conn.tick(this.nowNs));
  }

  /** Step until nothing moves (or `maxSteps`); returns the steps taken. */
  run(maxSteps = 200_000): number {
    let n = 0, quiet = 0;
    while (n < maxSteps) {
      n++;
      // two idle steps in a row: the completions of the first may have posted work
      if (this.step()) quiet = 0; else if (++quiet >= 2) break;
    }
    return n;
  }

  /** Skip `ns` of idle virtual time (the keepalive timers fire as if it had passed), then run. */
  advance(ns: number): void {
    this.skewNs += ns;
    this.tick();
    this.run();
  }

  /** [MS-SMBD] 3.1.5.2 to 3.1.5.7 over the QPs; `override` changes request fields (the lab's edge cases). */
  negotiate(override: Partial<NegotiateRequest> = {}): NegotiationView {
    const c = this.client, s = this.server;
    s.postRecvs(1);
    c.postRecvs(1);
    const reqBytes = encodeNegotiateRequest({ ...negotiateRequestOf(c.cfg), ...override });
    c.postMessage(reqBytes);
    this.run();
    const got = s.negotiateIn ?? new Uint8Array(0);
    const sc = checkNegotiateRequest(got, s.profile, s.cfg);
    const v: NegotiationView = {
      requestHex: toHex(got), request: got.length >= 20 ? decodeNegotiateRequest(got) : null, serverRules: sc.rules, serverOutcome: sc.outcome,
      responseHex: null, response: null, clientRules: [], clientOutcome: null, client: null, server: null,
    };
    this.negotiation = v;
    let resp: NegotiateResponse | null = null;
    if (sc.outcome === 'accept') {
      const granted = Math.min(sc.sizes!.receiveCreditTarget, s.cfg.receiveCreditMax);
      s.postRecvs(granted);
      resp = negotiateResponseOf(s.cfg, sc.sizes!, granted);
      s.establish(s.profile, sc.sizes!, granted, this.nowNs);
      v.server = sc.sizes!;
    } else if (sc.outcome === 'reject') resp = notSupportedResponse();
    if (!resp) { v.clientOutcome = 'no-response'; return v; }
    s.postMessage(encodeNegotiateResponse(resp));
    this.run();
    const back = c.negotiateIn;
    if (!back) { v.clientOutcome = 'no-response'; return v; }
    v.responseHex = toHex(back);
    v.response = back.length >= 32 ? decodeNegotiateResponse(back) : null;
    const cc = checkNegotiateResponse(back, c.cfg);
    v.clientRules = cc.rules;
    v.clientOutcome = cc.outcome === 'accept' ? 'accept' : 'terminate';
    if (cc.outcome === 'accept') {
      c.establish(c.profile, cc.sizes!, 0, this.nowNs);
      v.client = cc.sizes!;
    }
    return v;
  }

  /** Both sides queue upper-layer messages (seeded sizes, 1..maxFragments fragments each) at once, then run. */
  burst(seed: number, perSide: number, maxFragments = 3, run = true): void {
    const rnd = mulberry32(seed);
    const make = (per: number) => {
      const len = 1 + Math.floor(rnd() * per * maxFragments);
      const b = new Uint8Array(len);
      for (let i = 0; i < len; i++) b[i] = Math.floor(rnd() * 256);
      return b;
    };
    const c = this.client, s = this.server;
    if (!c.conn || !s.conn) throw new Error('burst: negotiate first');
    this.sentByClient = []; this.sentByServer = [];
    for (let i = 0; i < perSide; i++) {
      const a = make(c.conn.fragmentPayload), b = make(s.conn.fragmentPayload);
      this.sentByClient.push(a); this.sentByServer.push(b);
      c.apply(c.conn.send(a));
      s.apply(s.conn.send(b));
    }
    if (run) this.run();
  }
  sentByClient: Uint8Array[] = [];
  sentByServer: Uint8Array[] = [];

  /** Nothing moves, and a side still has messages queued: the connection is stalled. */
  stalled(): boolean {
    const q = (p: SmbdPeer) => (p.conn && p.conn.state === 'established' ? p.conn.queued : 0);
    return (q(this.client) > 0 || q(this.server) > 0) && this.client.sendsInFlight === 0 && this.server.sendsInFlight === 0;
  }

  private side(p: SmbdPeer): SideView | null {
    return p.conn ? { ...p.conn.view(), postedRecvs: p.postedRecvs, sendsInFlight: p.sendsInFlight, delivered: p.delivered.length } : null;
  }

  board(): BoardView {
    return { nowNs: this.nowNs, client: this.side(this.client), server: this.side(this.server), stalled: this.stalled() };
  }
}
