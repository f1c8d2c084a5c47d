// Lab 5's host agent: two SMB Direct peers (labs/smbd/session.ts) in the console's own device session. Every device
// command goes through the backend host (journaled; its events on the console's stream, the Queues and Wire panels
// following both QPs); the peers' protocol state (credits, queues, keepalive, reassembly) is the agent's and comes
// back in its replies as typed records (commands.ts), which the lab's panel draws.
//   start    session.reset with the seed, the peers' devices and QPs, negotiation
//   send     one upper-layer message from a side           burst   seeded messages from both sides at once
//   step     engine steps with both peers' completions      advance skip idle virtual time (keepalive timers)
//   io       SMB2 READ / WRITE through a buffer descriptor  board   the credit board now
//   measure  the buffer policies and event crossings compared (fresh sessions of their own)
import type { ExecResult } from '../../app/host/api.ts';
import type { HostCore } from '../../app/host/core.ts';
import type { Command } from '../../app/protocol/index.ts';
import { crossingBench, registrationBench } from './bench.ts';
import type { CrossingBench, RegistrationBench } from './bench.ts';
import { SmbdIo } from './io.ts';
import type { Policy } from './io.ts';
import { DeviceError } from './peer.ts';
import type { SmbdPeer, WireNote } from './peer.ts';
import { LAB_CREDITS, SmbdSession } from './session.ts';
import type { BoardView, NegotiationView } from './session.ts';
import type { ProfileId } from './profiles.ts';
import type { NegotiateRequest } from './pdu.ts';

export interface AgentHost { execute(command: Command): ExecResult }

type Out<T> = { ok: true; result: T } | { ok: false; error: { code: string; message: string; field?: string } };

export interface Board extends BoardView {
  profiles: { client: ProfileId; server: ProfileId };
  notes: { client: WireNote[]; server: WireNote[] };
  delivered: { to: 'client' | 'server'; bytes: number; fragments: number; rfc1002Length: number }[];
}

const S = 1_000_000_000;

export class SmbdAgent {
  private session: SmbdSession | null = null;
  private profiles: { client: ProfileId; server: ProfileId } = { client: 'spec', server: 'spec' };
  private seen = { client: { notes: 0, delivered: 0 }, server: { notes: 0, delivered: 0 } };
  private io: Partial<Record<Policy, SmbdIo>> = {};

  constructor(private readonly host: AgentHost) {}

  private guard<T>(what: string, fn: () => T): Out<T> {
    try { return { ok: true, result: fn() }; } catch (e) {
      const code = e instanceof DeviceError ? 'EIO' : e instanceof RangeError ? 'EMSGSIZE' : 'EPROTO';
      return { ok: false, error: { code, message: `lab smbd ${what}: ${(e as Error).message}` } };
    }
  }

  private need(): SmbdSession {
    if (!this.session) throw new NoSession();
    return this.session;
  }

  start(a: { seed?: number; client?: ProfileId; server?: ProfileId; credits?: 'linux' | 'lab'; request?: Partial<NegotiateRequest> }): Out<{ negotiation: NegotiationView; board: Board }> {
    const reset = this.host.execute({ cmd: 'session.reset', args: { seed: a.seed ?? 1 } } as Command);
    if (!reset.ok) return reset;
    this.profiles = { client: a.client ?? 'spec', server: a.server ?? 'spec' };
    const cfg = a.credits === 'lab' ? LAB_CREDITS : {};
    const port = { exec: (c: Command) => this.host.execute(c) };
    this.session = new SmbdSession(port, { ...this.profiles, clientCfg: cfg, serverCfg: cfg });
    this.seen = { client: { notes: 0, delivered: 0 }, server: { notes: 0, delivered: 0 } };
    this.io = {};
    return this.guard('start', () => {
      const s = this.session!;
      s.setup();
      const negotiation = s.negotiate(a.request ?? {});
      // the client's first message grants the server its credits ([MS-SMBD] 4.1: typically an SMB2 NEGOTIATE)
      if (s.client.conn && s.server.conn) { s.client.apply(s.client.conn.send(new Uint8Array(64))); s.run(); }
      return { negotiation, board: this.board() };
    });
  }

  send(a: { from: 'client' | 'server'; bytes: number; run?: boolean }): Out<Board> {
    return this.wrap('send', (s) => {
      const p = a.from === 'client' ? s.client : s.server;
      if (!p.conn) throw new Error(`${a.from}: not connected (negotiation did not succeed)`);
      const msg = Uint8Array.from({ length: a.bytes }, (_, i) => (i * 7 + a.bytes) & 0xff);
      p.apply(p.conn.send(msg));
      if (a.run !== false) s.run();
    });
  }

  burst(a: { seed?: number; perSide?: number; run?: boolean }): Out<Board> {
    return this.wrap('burst', (s) => { s.burst(a.seed ?? 1, a.perSide ?? 24, 3, a.run !== false); });
  }

  step(a: { count?: number }): Out<Board> {
    return this.wrap('step', (s) => { for (let i = 0; i < (a.count ?? 1); i++) s.step(); });
  }

  advance(a: { seconds: number; answer?: boolean }): Out<Board> {
    return this.wrap('advance', (s) => {
      s.server.paused = a.answer === false;
      try { s.advance(Math.round(a.seconds * S)); } finally { s.server.paused = false; }
    });
  }

  ioOp(a: { op: 'READ' | 'WRITE'; channel?: 'RDMA_V1' | 'RDMA_V1_INVALIDATE'; policy?: Policy; length?: number }) {
    let rec: ReturnType<SmbdIo['io']> | null = null, io: SmbdIo | null = null;
    const r = this.wrap('io', (s) => {
      const policy = a.policy ?? 'pool';
      const len = a.length ?? 65536;
      io = this.io[policy] ?? null;
      if (!io) { io = new SmbdIo(s, policy, 1 << 20, policy === 'pool' ? 64 : 1); io.setup(); this.io[policy] = io; }
      rec = io.io(a.op, a.channel ?? 'RDMA_V1_INVALIDATE', len);
    });
    if (!r.ok) return r;
    return { ok: true as const, result: { io: rec!, stats: { ...io!.stats }, board: r.result } };
  }

  /** the bench's comparisons, each in fresh sessions of its own */
  measure(a: { rounds?: number; events?: number }): Out<{ registration: RegistrationBench; crossing: CrossingBench }> {
    return this.guard('measure', () => ({ registration: registrationBench(a.rounds ?? 2, 2), crossing: crossingBench(a.events ?? 1024) }));
  }

  boardNow(): Out<Board> { return this.wrap('board', () => undefined); }

  private wrap(what: string, fn: (s: SmbdSession) => void): Out<Board> {
    if (!this.session) return { ok: false, error: { code: 'ENOENT', message: 'lab smbd: no session started (lab.smbd.start)' } };
    return this.guard(what, () => { fn(this.need()); return this.board(); });
  }

  private take(side: 'client' | 'server', p: SmbdPeer) {
    const seen = this.seen[side];
    const notes = p.notes.slice(seen.notes);
    const delivered = p.delivered.slice(seen.delivered).map((d) => ({ to: side, bytes: d.message.length, fragments: d.fragments, rfc1002Length: d.rfc1002Length }));
    seen.notes = p.notes.length; seen.delivered = p.delivered.length;
    return { notes, delivered };
  }

  private board(): Board {
    const s = this.need();
    const c = this.take('client', s.client), v = this.take('server', s.server);
    return { ...s.board(), profiles: this.profiles, notes: { client: c.notes, server: v.notes }, delivered: [...c.delivered, ...v.delivered] };
  }
}

class NoSession extends Error {}

/** The host extension entry point (app/host/main.ts attaches labs/<id>/host.ts). */
export function attach(core: HostCore): SmbdAgent {
  const agent = new SmbdAgent(core);
  core.register({ name: 'lab.smbd.start', handler: (c) => agent.start(c.args) });
  core.register({ name: 'lab.smbd.send', handler: (c) => agent.send(c.args) });
  core.register({ name: 'lab.smbd.burst', handler: (c) => agent.burst(c.args) });
  core.register({ name: 'lab.smbd.step', handler: (c) => agent.step(c.args) });
  core.register({ name: 'lab.smbd.advance', handler: (c) => agent.advance(c.args) });
  core.register({ name: 'lab.smbd.io', handler: (c) => agent.ioOp(c.args) });
  core.register({ name: 'lab.smbd.measure', handler: (c) => agent.measure(c.args) });
  core.register({ name: 'lab.smbd.board', handler: () => agent.boardNow() });
  return agent;
}
