// One program attached to the console (app/host/attach.ts): what it sent, kept in the host, and the read-only
// commands of the console's panels answered from it with the same result shapes as the embedded device's
// (app/protocol/commands/*.ts result schemas; every answer is checked against its schema before it leaves).
import type { AttachedSession, AttachMessage, AttachState, CommandName, DeviceEvent, ErrorInfo, FromHost, ResultOf } from '../protocol/index.ts';
import { cmIdsOfEvents } from './attach-cm.ts';
import {
  ATTACH_FORWARD_MAX, ATTACH_FORWARD_MS, ATTACH_KEEP_EVENTS, ATTACH_KEEP_FRAMES, ATTACH_READ_COMMANDS, ATTACH_STALL_MS, ATTACH_STATE_KINDS,
  Command, describeZodError, resultSchema,
} from '../protocol/index.ts';
import type { NMr, NMw, NProfile, NQp } from './native.ts';
import { deviceOut, mrOut, mwOut, profileOut, qpOut } from './commands/out.ts';

/** what one session may keep, in bytes (besides the counts ATTACH_KEEP_EVENTS / ATTACH_KEEP_FRAMES): 16 sessions
 *  at most, so at most 16 x 24 MiB whatever a program sends (docs/hardening.md) */
export const ATTACH_KEEP_EVENT_BYTES = 16 * 1024 * 1024;
export const ATTACH_KEEP_FRAME_BYTES = 8 * 1024 * 1024;
/** an event's weight: a fixed part, its text and its packet's hex (the bulk of a datagram's event) */
const eventBytes = (e: DeviceEvent): number => {
  const hex = (e.pkt as { hex?: unknown } | undefined)?.hex;
  return 256 + (e.text?.length ?? 0) + (typeof hex === 'string' ? hex.length : 0);
};

type Answer = { ok: true; result: unknown } | { ok: false; error: ErrorInfo };
const fail = (code: string, message: string, field?: string): Answer => ({ ok: false, error: { code, message, ...(field ? { field } : {}) } });

/** the profiles the console's own device library knows (the program's device runs the same code) */
export interface ProfileSource { profiles(): NProfile[]; napiVersion: number }

export class AttachSession {
  readonly attachedAt = Date.now();
  endedAt: number | undefined;
  ended: string | null = null;      // why it ended
  lastLine = Date.now();
  events: DeviceEvent[] = [];
  /** the state events (object life cycle, QP states, async events) of the whole session, at most ATTACH_KEEP_EVENTS:
   *  events.recent gives those older than its window too, so a console that looks late learns every object's
   *  creation (a CQ's depth, a QP's type) and not only the newest traffic */
  lifecycle: DeviceEvent[] = [];
  frames: { t: number; bytes: Buffer }[] = [];
  private eventBytesKept = 0;
  private frameBytesKept = 0;
  state: AttachState | null = null;
  received = { events: 0, frames: 0 };
  /** events not yet sent to the consoles (forward(), every ATTACH_FORWARD_MS) and the count dropped before them */
  private pending: DeviceEvent[] = [];
  private pendingDropped = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  dropped = { events: 0, frames: 0, keptOut: 0 };

  constructor(readonly id: number, readonly pid: number, readonly program: string, readonly argv: string[],
    private readonly send: (msg: FromHost) => void, private readonly lib: ProfileSource) {}

  view(now = Date.now()): AttachedSession {
    const stalled = !this.ended && now - this.lastLine > ATTACH_STALL_MS;
    const dev = this.state?.devices[0];
    return {
      session: this.id, pid: this.pid, program: this.program, argv: this.argv,
      state: this.ended ? 'ended' : stalled ? 'stalled' : 'live',
      ...(this.ended ? { reason: this.ended } : stalled ? { reason: `nothing heard for ${Math.round((now - this.lastLine) / 1000)} s: the program is stopped (a debugger, SIGSTOP) or cannot run` } : {}),
      attachedAt: this.attachedAt, ...(this.endedAt ? { endedAt: this.endedAt } : {}),
      ...(dev ? { device: dev.name } : {}), ...(this.state?.address ? { address: this.state.address } : {}),
      events: this.received.events, frames: this.received.frames, dropped: { ...this.dropped },
    };
  }

  end(reason: string): void {
    if (this.ended) return;
    this.forward();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.ended = reason;
    this.endedAt = Date.now();
  }

  /** one validated message from the program */
  apply(m: AttachMessage): void {
    this.lastLine = Date.now();
    switch (m.t) {
      case 'events': {
        this.dropped.events += m.dropped;
        this.received.events += m.events.length;
        if (!m.events.length && !m.dropped) return;
        const evs = m.events as DeviceEvent[];   // a..d as the host's own event text has them (numbers, or "0x.." above 2^53)
        for (const e of evs) {
          this.events.push(e); this.pending.push(e);
          this.eventBytesKept += eventBytes(e);
          if (ATTACH_STATE_KINDS.has(e.kind) && this.lifecycle.length < ATTACH_KEEP_EVENTS) this.lifecycle.push(e);
        }
        this.pendingDropped += m.dropped;
        // the newest ATTACH_KEEP_EVENTS, and no more than ATTACH_KEEP_EVENT_BYTES of them
        let cut = Math.max(0, this.events.length - ATTACH_KEEP_EVENTS);
        for (let i = 0; i < cut; i++) this.eventBytesKept -= eventBytes(this.events[i]!);
        while (this.eventBytesKept > ATTACH_KEEP_EVENT_BYTES && cut < this.events.length - 1) this.eventBytesKept -= eventBytes(this.events[cut++]!);
        if (cut) {
          this.events.splice(0, cut);
          this.dropped.keptOut += cut;
        }
        this.timer ??= setInterval(() => this.forward(), ATTACH_FORWARD_MS);
        this.timer.unref?.();
        return;
      }
      case 'frames':
        this.dropped.frames += m.dropped;
        this.received.frames += m.frames.length;
        for (const f of m.frames) {
          const bytes = Buffer.from(f.hex, 'hex');
          this.frames.push({ t: f.t, bytes });
          this.frameBytesKept += bytes.length;
        }
        {   // the newest ATTACH_KEEP_FRAMES, and no more than ATTACH_KEEP_FRAME_BYTES of them
          let cut = Math.max(0, this.frames.length - ATTACH_KEEP_FRAMES);
          for (let i = 0; i < cut; i++) this.frameBytesKept -= this.frames[i]!.bytes.length;
          while (this.frameBytesKept > ATTACH_KEEP_FRAME_BYTES && cut < this.frames.length - 1) this.frameBytesKept -= this.frames[cut++]!.bytes.length;
          if (cut) this.frames.splice(0, cut);
        }
        return;
      case 'state':
        this.forward();                  // the events before the state go first (the console applies both in order)
        this.state = m;
        this.send({ type: 'rings', session: this.id, seq: num(m.seq), rings: m.rings });
        return;
      case 'bye':
        this.end(m.reason === 'exited' ? 'the program exited' : `the program said goodbye: ${m.reason}`);
        return;
      case 'beat':
        return;
    }
  }

  /** the events received since the last call to the consoles: the state events and the newest ATTACH_FORWARD_MAX */
  forward(): void {
    if (!this.pending.length && !this.pendingDropped) return;
    let evs = this.pending;
    let dropped = this.pendingDropped;
    this.pending = []; this.pendingDropped = 0;
    if (evs.length > ATTACH_FORWARD_MAX) {
      const from = evs.length - ATTACH_FORWARD_MAX;
      const kept = evs.filter((e, i) => i >= from || ATTACH_STATE_KINDS.has(e.kind));
      dropped += evs.length - kept.length;
      evs = kept;
    }
    this.send({ type: 'events', session: this.id, first: evs[0]?.seq ?? 0, count: evs.length, dropped, events: evs });
  }

  /** attach.call: a panel's read-only command, answered from what the program sent */
  call(raw: { cmd: string; args: Record<string, unknown> }): Answer {
    const who = `${this.program} (pid ${this.pid})`;
    if (!(ATTACH_READ_COMMANDS as readonly string[]).includes(raw.cmd)) {
      return fail('PROGRAM_OWNED', `${raw.cmd}: ${who} owns this device; the console shows what it does and does not act on it (attached sessions are read-only)`, 'command.cmd');
    }
    const parsed = Command.safeParse(raw);
    if (!parsed.success) return { ok: false, error: describeZodError(parsed.error, 'command') };
    const c = parsed.data;
    const out = this.answer(c);
    if (!out.ok) return out;
    // events keep a..d as the device wrote them: above 2^53-1 a "0x.." string (the host's own event text does the same,
    // native/addon/event_json.cpp; DeviceEvent's schema names only numbers), so the check reads those as numbers
    const probe = c.cmd === 'events.recent' ? { ...(out.result as object), events: (out.result as { events: DeviceEvent[] }).events.map(asNumbers) } : out.result;
    const checked = resultSchema(c.cmd as CommandName).safeParse(probe);
    if (!checked.success) return fail('INTERNAL', `${c.cmd} for ${who}: the answer does not match the result schema: ${describeZodError(checked.error, 'result').message}`);
    return out;
  }

  private answer(c: Command): Answer {
    const s = this.state;
    const ok = <N extends CommandName>(_n: N, result: ResultOf<N>): Answer => ({ ok: true, result });
    switch (c.cmd) {
      case 'events.recent': {
        // at most half of the answer for the life-cycle events older than the newest events (the newest of them)
        const max = c.args.max;
        const from = this.events[Math.max(0, this.events.length - max)]?.seq ?? Infinity;
        const half = Math.floor(max / 2);
        const older = half ? this.lifecycle.filter((e) => e.seq < from).slice(-half) : [];
        const window = this.events.slice(-(max - older.length));
        const evs = older.length ? [...older.filter((e) => e.seq < (window[0]?.seq ?? Infinity)), ...window] : window;
        return ok('events.recent', { first: evs[0]?.seq ?? 0, count: evs.length, events: evs });
      }
      case 'device.list': {
        const profiles = this.lib.profiles();
        const devices = [];
        for (const d of s?.devices ?? []) {
          const p = profiles.find((x) => x.name === d.profile);
          if (!p) return fail('ENOENT', `the program's device profile "${d.profile}" is not one this console knows (${profiles.map((x) => x.name).join(', ')})`);
          const net = s?.net ? { interface: s.net.interface, port: s.net.port, gids: d.gids, stats: s.net.stats } : null;
          devices.push({ ...deviceOut({ ...d, profile: p }), net });
        }
        return ok('device.list', { devices, interfaces: [], realTime: true, profiles: profiles.map(profileOut), realDevices: [], libibverbs: false });
      }
      case 'session.info': {
        const objects = (s?.objects ?? []).map((o) => {
          if (!o.info) return { handle: o.handle, kind: o.kind, device: o.device };
          return { handle: o.handle, kind: o.kind, device: o.device, info: o.kind === 'mr' ? mrOut(o.info as unknown as NMr) : mwOut(o.info as unknown as NMw) };
        });
        return ok('session.info', {
          seed: 0, epoch: 0, nowNs: s ? s.nowNs : 0, napiVersion: this.lib.napiVersion, profiles: this.lib.profiles().map((p) => p.name),
          objects, autorun: { on: false, stepsPerSecond: 0, free: false }, realTime: true,
          network: s?.net ? (s.devices ?? []).map((d) => d.handle) : [], traffic: null,
          eventSeq: this.events.length ? this.events[this.events.length - 1]!.seq : 0,
        });
      }
      case 'qp.query': {
        const q = s?.qps.find((x) => x.handle === c.args.qp);
        return q ? ok('qp.query', qpOut(q as unknown as NQp)) : fail('ENOENT', `args.qp: QP ${c.args.qp} is not in the program's last state (destroyed, or not sent yet)`, 'args.qp');
      }
      case 'mr.query': {
        const m = s?.objects.find((o) => o.kind === 'mr' && o.handle === c.args.mr)?.info;
        return m ? ok('mr.query', mrOut(m as unknown as NMr)) : fail('ENOENT', `args.mr: MR ${c.args.mr} is not in the program's last state`, 'args.mr');
      }
      case 'pcap.get': {
        const bytes = pcapOf(this.frames);
        return ok('pcap.get', {
          format: 'pcap', linktype: 'LINKTYPE_ETHERNET', length: bytes.length, base64: bytes.toString('base64'),
          ...(c.args.device !== undefined ? { device: c.args.device, network: true } : {}),
        });
      }
      case 'cm.list':   // from the events: the program's state message has no CM IDs (attach-cm.ts)
        return ok('cm.list', { ids: cmIdsOfEvents([...this.lifecycle, ...this.events], c.args.device), supported: true });
      default:
        return fail('PROGRAM_OWNED', `${c.cmd}: not answered for an attached program`);
    }
  }
}

function num(v: number | string): number { return typeof v === 'number' ? v : Number(BigInt(v)); }
function asNumbers(e: DeviceEvent): DeviceEvent {
  const u = e as unknown as Record<'a' | 'b' | 'c' | 'd', number | string>;
  return { ...e, a: num(u.a), b: num(u.b), c: num(u.c), d: num(u.d) };
}

/** classic pcap, LINKTYPE_ETHERNET, microsecond timestamps (as native/src/wire PcapWriter writes it) */
export function pcapOf(frames: readonly { t: number; bytes: Buffer }[]): Buffer {
  const head = Buffer.alloc(24);
  head.writeUInt32LE(0xa1b2c3d4, 0); head.writeUInt16LE(2, 4); head.writeUInt16LE(4, 6);
  head.writeUInt32LE(65535, 16); head.writeUInt32LE(1, 20);
  const parts: Buffer[] = [head];
  for (const f of frames) {
    const r = Buffer.alloc(16);
    const us = Math.floor(f.t / 1000);
    r.writeUInt32LE(Math.floor(us / 1e6) >>> 0, 0); r.writeUInt32LE(us % 1e6, 4);
    r.writeUInt32LE(f.bytes.length, 8); r.writeUInt32LE(f.bytes.length, 12);
    parts.push(r, f.bytes);
  }
  return Buffer.concat(parts);
}
