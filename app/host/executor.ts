// The Executor over the native addon: maps every protocol Command to vl::Session calls.
// Enum names become numeric values through app/protocol/enums.ts; results carry both the numbers and the
// rdma-core names; native errors (errno + a message naming the field/rule) come back as values, including the
// core's honest "ENOSYS not built yet".
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command, DeviceEvent, ErrorInfo } from '../protocol/index.ts';
import { Command as CommandSchema, describeZodError, EventType, WcOpcode, WcStatus } from '../protocol/index.ts';
import type { ExecResult, Executor, ExecutorOptions } from './api.ts';
import type { EventChunk } from './batcher.ts';
import type { NDevice, NEvent, NInterface, NativeAddon, NativeSession } from './native.ts';
import { loadAddon } from './native.ts';
import { realDevices } from './ibverbs.ts';
import { openReal, realLibrary, type RealAddon, type RealSession } from './realdev.ts';
import { HANDLERS } from './commands/index.ts';
import type { DeviceCommandName, Handler } from './commands/handler.ts';
import { errnoName, fail, u64n } from './commands/handler.ts';
import { eventOut } from './commands/out.ts';

export { errnoName } from './commands/handler.ts';
export { deviceOut, eventOut, mrOut, mwOut, profileOut, qpOut, wcOut } from './commands/out.ts';

export interface TrackedObject { handle: number; kind: string; device: number }
/** dataPath: the in-process wire's data path for this executor's sessions (docs/perf.md); the device's default is 'fast' */
export interface ExecutorExtra extends ExecutorOptions { addon?: NativeAddon; maxPendingEvents?: number; dataPath?: 'fast' | 'strict' }

/** A chunk of events as protocol JSON text (see EventChunk in batcher.ts), with its lifecycle events decoded. */
export type ExecEventChunk = EventChunk & { objects: DeviceEvent[] };

export class NativeExecutor implements Executor {
  readonly addon: NativeAddon;
  /** the native session (the handlers in app/host/commands drive it) */
  s: NativeSession;
  seed: number;
  private pending: DeviceEvent[] = [];
  private droppedEvents = 0;
  private readonly maxPending: number;
  private objects = new Map<number, TrackedObject>();
  /** engine.autorun state; the backend host runs the timer (paced) or the native runner thread runs the engine (free) */
  autorun = { on: false, stepsPerSecond: 1000, free: false };
  /** bumped by session.reset so clients can drop what they drew */
  epoch = 0;
  /** devices on a real network (device.attachNet): while any is, the UDP transport drives the session clock in
   *  real time, so engine.step / engine.run / autorun are refused; the backend host calls netPoll() */
  netDevices = new Set<number>();

  constructor(opts: ExecutorExtra = {}) {
    this.addon = opts.addon ?? loadAddon();
    this.seed = opts.seed ?? 1;
    this.maxPending = opts.maxPendingEvents ?? 200_000;
    this.dataPath = opts.dataPath;
    this.s = this.newSession();
  }

  private readonly dataPath: 'fast' | 'strict' | undefined;
  private newSession(): NativeSession {
    const s = new this.addon.Session(this.seed);
    if (this.dataPath) {
      const st = s.set_data_path(this.dataPath);
      if (st.err) { s.close(); throw new Error(`dataPath: ${st.msg}`); }
    }
    return s;
  }

  get native(): NativeSession { return this.s; }

  private labStates = new WeakMap<NativeSession, Map<string, unknown>>();
  /** A lab agent's state for the current session (LabContext.labState): it goes with the session, so session.reset
   *  starts the lab's agents over, and no lab keeps state at module level. */
  labState<T>(lab: string, make: () => T): T {
    let m = this.labStates.get(this.s);
    if (!m) this.labStates.set(this.s, (m = new Map()));
    if (!m.has(lab)) m.set(lab, make());
    return m.get(lab) as T;
  }

  private realCache: ReturnType<typeof realDevices> | null = null;
  /** Real devices, enumerated once per executor (they do not change during a lab session). */
  get real(): ReturnType<typeof realDevices> {
    const ra = this.addon as NativeAddon & RealAddon;
    // VERBSLAB_LIBIBVERBS names the library to list and open (a path: e.g. Verbs Lab's own, for tests); else the
    // system's libibverbs.so.1, listed without the software-device library (enumerate.h)
    const lib = realLibrary();
    this.realCache ??= realDevices(lib && ra.realdevList ? ra.realdevList(lib)
      : typeof this.addon.ibverbsDevices === 'function' ? this.addon.ibverbsDevices() : null, typeof ra.RealDevice === 'function');
    return this.realCache;
  }

  /** The session's real device (session.reset { backend: 'ibverbs' }), or null on the software devices. */
  realSession: RealSession | null = null;
  /** session.reset { backend: 'ibverbs', device }: a session over that device of libibverbs.so.1 (dlopen); the
   *  current session is kept when it cannot be opened */
  openRealSession(device: string, seed?: number): { ok: true; result: { seed: number; epoch: number } } | { ok: false; err: number; msg: string } {
    const r = openReal(this.addon as NativeAddon & RealAddon, device);
    if (!r.ok) return r;
    const out = this.resetSession(seed);
    this.s.close();
    this.s = r.session;
    this.realSession = r.session;
    return { ok: true, result: out };
  }
  /** The refusal of what a real device's session cannot do (engine controls, faults, the load generator). */
  onReal(cmd: string, why: string) {
    return fail('EOPNOTSUPP', `${cmd}: not available on a real device (${this.realSession!.info.name}): ${why}`, 'command.cmd');
  }

  /** Number of events dropped because nobody drained them (oldest first); reset by takeDropped(). */
  takeDropped(): number { const d = this.droppedEvents; this.droppedEvents = 0; return d; }

  /** Objects alive in the session (from ObjectCreated/ObjectDestroyed events), for session.info. */
  liveObjects(): TrackedObject[] { return [...this.objects.values()].sort((a, b) => a.handle - b.handle); }

  exec(command: Command): ExecResult {
    // Callers hand over validated commands; parsing again is cheap (~µs) and makes every caller (scenario
    // runner, CLI, tests) get defaults filled in and a field-naming error instead of a crash.
    const parsed = CommandSchema.safeParse(command);
    if (!parsed.success) return { ok: false, error: describeZodError(parsed.error, 'command') };
    try {
      const c = parsed.data;
      const h = (HANDLERS as Record<string, Handler<DeviceCommandName> | undefined>)[c.cmd];
      // commands answered by host extensions (journal.get, events.recent, scenario.*, lab.*) never reach the device
      const r: ExecResult = h ? h(this, c.args as never) : fail('EOPNOTSUPP', `${c.cmd} is answered by the backend host, not by the device`, 'command.cmd');
      if (!this.bulk) this.collect();
      return r;
    } catch (e) {
      if (!this.bulk) this.collect();
      return fail('INTERNAL', `${command.cmd}: ${(e as Error).message}`);
    }
  }

  drainEvents(max = Infinity): DeviceEvent[] {
    this.collect();
    if (max >= this.pending.length) { const all = this.pending; this.pending = []; return all; }
    return this.pending.splice(0, max);
  }

  /** The events collected and not yet drained, oldest first, left in place (lab 4's agents turn the offload engine's
   *  typed events of their own commands into flow rows while the console still receives every event). */
  pendingEvents(): readonly DeviceEvent[] { this.collect(); return this.pending; }

  private bulk = false;
  /** Like exec(), but the command's events stay in the native session for drainEventChunks() (the autorun tick:
   *  a flood of events that goes to the console without a JS object per event). */
  execBulk(command: Command): ExecResult {
    this.bulk = true;
    try { return this.exec(command); } finally { this.bulk = false; }
  }

  /** Every event not yet drained, oldest first, without a JS object per event: as binary event frames
   *  (app/protocol/eventframe.ts; `format` 'frames') or as protocol JSON text ('json'), in chunks of at most
   *  `maxPerChunk` native events; the lifecycle events (created / destroyed / modified) also as objects. Events
   *  already drained into JS objects (by exec) come first, as a text chunk. Same events, same values as drainEvents()
   *  (app/host/eventjson.test.ts). */
  drainEventChunks(format: 'frames' | 'json', maxPerChunk = 2000): ExecEventChunk[] {
    const out: ExecEventChunk[] = [];
    if (this.pending.length) {
      const evs = this.pending; this.pending = [];
      out.push({ json: evs.map((e) => JSON.stringify(e)).join(','), count: evs.length, first: evs[0]!.seq, objects: evs.filter((e) => e.kind.startsWith('Object')) });
    }
    for (;;) {
      const r = format === 'frames' ? this.s.drain_events_frame(maxPerChunk) : this.s.drain_events_json(maxPerChunk);
      if (!r.count) break;
      const objects = this.tracked(r.objects);
      const first = u64n(r.first);
      out.push('frame' in r ? { frame: r.frame, count: r.count, first, objects } : { json: r.json, count: r.count, first, objects });
      if (r.count < maxPerChunk) break;
    }
    return out;
  }

  /** a drained chunk's life-cycle events, decoded, with the object table following them */
  private tracked(objects: NEvent[]): DeviceEvent[] {
    const out = objects.map(eventOut);
    for (const e of out) this.track(e);
    return out;
  }

  private track(e: { kind: string; obj: number; objKind: string; device: number }): void {
    if (e.kind === 'ObjectCreated') this.objects.set(e.obj, { handle: e.obj, kind: e.objKind, device: e.device });
    else if (e.kind === 'ObjectDestroyed') this.objects.delete(e.obj);
  }

  /** Move native events into the pending queue and keep the object table current. */
  collect(): void {
    const evs = this.s.drain_events();
    for (const e of evs) {
      this.track(e);
      this.pending.push(eventOut(e));
    }
    if (this.pending.length > this.maxPending) {
      const drop = this.pending.length - this.maxPending;
      this.pending.splice(0, drop);
      this.droppedEvents += drop;
    }
  }

  pcap(): Uint8Array {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verbslab-pcap-'));
    const file = path.join(dir, 'session.pcap');
    try {
      const st = this.s.write_pcap(file);
      if (st.err) throw new Error(`${errnoName(st.err)}: ${st.msg}`);
      return new Uint8Array(fs.readFileSync(file));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  close(): void { this.netDevices.clear(); this.s.close(); }

  /** True while some device of the session is on the network (the backend host then polls netPoll()). */
  netActive(): boolean { return this.netDevices.size > 0 || this.realSession !== null; }
  /** Receive datagrams and run the engine actions due in real time (no waiting); events are collected. A real
   *  device's session: the asynchronous events its thread collected. */
  netPoll(): number {
    if (!this.netDevices.size && !this.realSession) return 0;
    const n = this.s.net_poll(0);
    if (n) this.collect();
    return n;
  }
  private netName(): string {
    const names = [...this.netDevices].map((h) => this.deviceInfo(h)?.name ?? `device ${h}`);
    return names.join(', ');
  }
  /** The refusal of hand stepping while the engine free runs. */
  freeRun(cmd: string) {
    return fail('EBUSY', `${cmd}: the engine is free running (engine.autorun with free: true); turn autorun off to step it by hand`, 'command.cmd');
  }
  /** The refusal of deterministic run controls while a device is on the network. */
  realTime(cmd: string) {
    return fail('EBUSY', `${cmd}: ${this.netName()} ${this.netDevices.size > 1 ? 'are' : 'is'} on the network, so the session runs in real time `
      + '(the UDP transport drives the clock and the backend host polls it); single-step, run to idle and autorun are unavailable '
      + 'until every device is taken off the network (device.detachNet)', 'command.cmd');
  }
  hostInterfaces(): NInterface[] {
    return typeof this.addon.netInterfaces === 'function' ? this.addon.netInterfaces() : [];
  }

  /** the load generator (engine.traffic): configured at least once (its state lives in the addon) */
  traffic = false;
  trafficView() {
    const t = this.s.traffic_state();
    return { on: t.on, qp: t.qp, cq: t.cq, wrs: t.wrs, posted: u64n(t.posted), completed: u64n(t.completed), ...(t.stopped ? { stopped: t.stopped } : {}) };
  }

  // ---- the free-running engine (engine.autorun with free: true): the addon's runner thread runs the engine and
  // the load generator at the set rate whatever the console draws; the backend host journals the steps it ran and
  // sends the console a sample of the events (drainSample) and the rings as the device holds them (queueSnapshot).
  /** true while the runner thread runs */
  freeRunning(): boolean { return this.s.runner_running(); }
  /** holds the runner between two batches; returns the steps it ran since the last take (to journal) */
  runnerPause(): number { return this.takeLeft() + u64n(this.s.runner_pause()); }
  runnerResume(): void { this.s.runner_resume(); }
  /** the steps the runner ran since the last take */
  runnerTake(): number { return this.takeLeft() + u64n(this.s.runner_take()); }
  /** steps of a runner stopped by a command (engine.autorun off, device.attachNet) not taken yet */
  stepsLeft = 0;
  private takeLeft(): number { const n = this.stepsLeft; this.stepsLeft = 0; return n; }
  /** the runner keeps at most n queued events besides the state ones (sampling at the source, on its thread) */
  setEventBudget(n: number): void { this.s.runner_set_event_budget(n); }
  /** every event queued, sampled: the state events and the newest `window` (one frame); the rest counted in dropped */
  drainSample(window: number): ExecEventChunk & { dropped: number; last: number } {
    const r = this.s.drain_events_sample(window);
    return { frame: r.frame, count: r.count, first: u64n(r.first), last: u64n(r.last), dropped: r.dropped, objects: this.tracked(r.objects) };
  }
  /** every SQ / RQ / CQ / SRQ as the device holds it now (at most maxSlots slots each, the newest) */
  queueSnapshot(maxSlots = 256) {
    return this.s.queue_snapshot(maxSlots).map((r) => ({
      owner: r.owner, device: r.device, queue: r.queue, depth: r.depth,
      producer: u64n(r.producer), consumer: u64n(r.consumer), first: u64n(r.first),
      slots: r.slots.map((x) => ({ wrId: u64n(x.wrId), opcode: x.opcode, status: x.status, state: x.state, ...(x.qpNum !== undefined ? { qpNum: x.qpNum } : {}) })),
    }));
  }
  lastSeq(): number { return u64n(this.s.last_seq()); }
  /** The flood of a replayed engine.step, shed natively (a long free run journals millions of steps): only the
   *  state events stay (the object table and the recorder follow them); the rest are counted as dropped. */
  shedEvents(): void {
    this.droppedEvents += u64n(this.s.sample_events(0));
  }
  /** While the backend host replays its journal, engine.autorun free only sets the state (the journaled steps
   *  replay the free run); resumeAutorun() then starts the runner if autorun is on and free. */
  replaying = false;
  resumeAutorun(): void {
    if (this.autorun.on && this.autorun.free && !this.s.runner_running() && !this.netDevices.size) this.s.runner_start(this.autorun.stepsPerSecond);
  }

  deviceInfo(h: number): NDevice | undefined { return this.s.devices().find((d) => d.handle === h); }

  /** session.reset: a new native session with the seed (the old one's UDP transports closed first) */
  resetSession(seed?: number): { seed: number; epoch: number } {
    this.s.close();
    this.realSession = null;
    this.netDevices.clear();
    this.seed = seed ?? this.seed;
    this.s = this.newSession();
    this.pending = []; this.objects.clear(); this.epoch++;
    this.autorun = { on: false, stepsPerSecond: this.autorun.stepsPerSecond, free: false };
    this.traffic = false;
    return { seed: this.seed, epoch: this.epoch };
  }
}

/** Convenience for runners: an executor with defaults. */
export function createExecutor(opts: ExecutorExtra = {}): NativeExecutor {
  return new NativeExecutor(opts);
}

export type { ErrorInfo };
