// The backend host's logic, independent of how messages arrive (Node IPC from the browser-mode server,
// MessagePorts from Electron, or direct calls in tests): validate -> execute -> journal -> reply, batch
// events to every client, replay the journal on start, drive the engine when autorun is on.
import type { Command, CommandName, DeviceEvent, ErrorInfo, FromHost, Reply, ResultOf, RingSnapshot } from '../protocol/index.ts';
import { answeredBy, parseToHost } from '../protocol/index.ts';
import type { ExecResult, Executor } from './api.ts';
import { EventBatcher } from './batcher.ts';
import type { BatcherOptions, EventChunk } from './batcher.ts';
import { Journal, journaled } from './journal.ts';

/** The executor features the host needs beyond the Executor contract (NativeExecutor has them). */
export interface HostExecutor extends Executor {
  autorun: { on: boolean; stepsPerSecond: number };
  takeDropped?(): number;
  /** exec() that leaves the events in the device for drainEventChunks() (NativeExecutor) */
  execBulk?(command: Command): ExecResult;
  /** the events as binary event frames or protocol JSON text chunks, lifecycle events also as objects (NativeExecutor) */
  drainEventChunks?(format: 'frames' | 'json', maxPerChunk?: number): (EventChunk & { objects: DeviceEvent[] })[];
  /** set while the host replays its journal (NativeExecutor: engine.autorun free does not start the runner) */
  replaying?: boolean;
  resumeAutorun?(): void;
  /** the free-running engine (engine.autorun free): NativeExecutor */
  freeRunning?(): boolean;
  runnerPause?(): number;
  runnerResume?(): void;
  runnerTake?(): number;
  setEventBudget?(n: number): void;
  /** drop the queued events except the state ones (counted as dropped): a replayed engine.step's flood */
  shedEvents?(): void;
  drainSample?(window: number): EventChunk & { objects: DeviceEvent[]; dropped: number; last: number };
  queueSnapshot?(maxSlots?: number): RingSnapshot['rings'];
  lastSeq?(): number;
  /** true while a device is on a real network (the host then polls the UDP transport in real time) */
  netActive?(): boolean;
  /** receive datagrams and run the engine actions due now, without waiting; returns the work done */
  netPoll?(): number;
}

export interface HostOptions {
  sessionDir: string;
  /** profile of the device created in a fresh session (empty journal); null = none */
  defaultDevice?: string | null;
  batcher?: BatcherOptions;
  /** autorun tick; injectable for tests */
  autorunTickMs?: number;
  /** autorun waits while more than this many sent events are not yet acknowledged by the fastest console */
  ackWindow?: number;
  /** at most this much of each autorun tick runs the engine (default 8 ms of the 16 ms tick) */
  autorunBusyMs?: number;
  /** network poll period while a device is on the network (default 1 ms) */
  netPollMs?: number;
  /** the autorun flood as binary event frames (default) or, false, as JSON text */
  eventFrames?: boolean;
  /** free-running autorun: the host's tick (journal the steps, send a sample; default autorunTickMs: at 8 ms the host took CPU from the engine and the latency did not improve) */
  freeTickMs?: number;
  /** free-running autorun: at most one ring snapshot per this many ms (default 100) */
  ringSnapshotMs?: number;
}

/** engine.step's largest count that is a multiple of the load generator's 256-step refill period: a free run's
 *  steps journaled in pieces of it replay exactly as they ran */
const STEP_PIECE = Math.floor(1_000_000 / 256) * 256;
/** engine.step / engine.run longer than STEP_SLICE run in slices of SLICE_MIN..STEP_SLICE steps (multiples of the load
 *  generator's 256-step period), sized to take about SLICE_MS each */
export const STEP_SLICE = 64 * 256;
const SLICE_MIN = 256;
/** journal.get returns the entries that fit this much command text */
const JOURNAL_GET_BYTES = 6 * 1024 * 1024;
const SLICE_FIRST = 4096;
const SLICE_MS = 20;

/** A host-level command handler (e.g. the scenario recorder): runs device commands through core.execute(),
 *  which journals them, so a replay rebuilds the device state without the handler. */
export type HostHandler = (command: Command, core: HostCore) => ExecResult;

// ---- the host extension API: code that answers console commands of its own (register), follows every device
// command with its outcome (onCommand), the device's events (onEvents) and the journal replay (onStart). The scenario
// recorder (app/host/recorder.ts) and the labs (app/host/labs.ts) are extensions; lab agents are too: they react to
// the device's completions between engine steps, deterministically, through the same hooks.
/** A console command answered by an extension: its descriptor in app/protocol (answeredBy 'host') + this handler. */
export interface HostCommand<N extends CommandName = CommandName> {
  name: N;
  handler: (command: Extract<Command, { cmd: N }>, core: HostCore) => { ok: true; result: ResultOf<N> } | { ok: false; error: ErrorInfo };
}
/** After every device command the host executed: for a client or an extension (replay false), or re-executed from
 *  the journal when the host starts (replay true). */
export type CommandListener = (command: Command, outcome: ExecResult, ctx: { replay: boolean }) => void;
/** Device events as they leave the device. `complete` false: only the life-cycle events of a bulk drain (the
 *  autorun flood goes to the console as frames, without a JS object per event). `inCommand`: drained while a
 *  command ran (they belong to it). */
export type EventsListener = (events: DeviceEvent[], ctx: { complete: boolean; inCommand: boolean }) => void;
/** The journal replay at start: 'replaying' before the first entry, 'started' when the host is up. */
export type StartListener = (phase: 'replaying' | 'started', report?: ReplayReport) => void;
/** An extension module exports attach(core). */
export interface HostExtension { attach(core: HostCore): unknown }

export interface ReplayReport { entries: number; failed: { n: number; cmd: string; error: string }[]; skipped: { line: number; reason: string }[] }

export class HostCore {
  readonly journal: Journal;
  readonly batcher: EventBatcher;
  private clients = new Map<number, (msg: FromHost) => void>();
  private nextClient = 1;
  private autorunTimer: ReturnType<typeof setInterval> | null = null;
  private autorunCarry = 0;
  private autorunLast = 0;
  private netTimer: ReturnType<typeof setInterval> | null = null;
  /** network polls done and work found (datagrams + engine actions), for tests and session.info */
  netPolls = { ticks: 0, work: 0 };
  replayReport: ReplayReport = { entries: 0, failed: [], skipped: [] };
  private handlers = new Map<string, HostHandler>();
  private listeners: { command: CommandListener[]; events: EventsListener[]; start: StartListener[] } = { command: [], events: [], start: [] };
  /** commands being executed (nested: an extension's command runs device commands) */
  private depth = 0;

  /** Answer a console command in the host instead of the device executor (not journaled itself; the device commands
   *  it runs through execute() are). The form (name, handler) takes any command name (tests, overrides). */
  register<N extends CommandName>(d: HostCommand<N>): void;
  register(cmd: string, handler: HostHandler): void;
  register(d: HostCommand | string, handler?: HostHandler): void {
    if (typeof d === 'string') { this.handlers.set(d, handler!); return; }
    if (answeredBy(d.name) !== 'host') throw new Error(`${d.name} is a device command (its descriptor says answeredBy 'device')`);
    this.handlers.set(d.name, d.handler as HostHandler);
  }
  /** Follow every device command and its outcome (see CommandListener). */
  onCommand(fn: CommandListener): void { this.listeners.command.push(fn); }
  /** Follow the device's events (see EventsListener). */
  onEvents(fn: EventsListener): void { this.listeners.events.push(fn); }
  /** Follow the journal replay at start (see StartListener). */
  onStart(fn: StartListener): void { this.listeners.start.push(fn); }
  /** true while a command executes (events drained now belong to it) */
  get inCommand(): boolean { return this.depth > 0; }
  private emitEvents(evs: DeviceEvent[], complete: boolean): void {
    if (!evs.length) return;
    for (const fn of this.listeners.events) fn(evs, { complete, inCommand: this.depth > 0 });
  }
  private emitCommand(c: Command, r: ExecResult, replay: boolean): void {
    for (const fn of this.listeners.command) fn(c, r, { replay });
  }

  constructor(readonly executor: HostExecutor, private readonly opts: HostOptions) {
    this.journal = new Journal(opts.sessionDir);
    this.batcher = new EventBatcher((b) => this.broadcast(b), opts.batcher);
  }

  /** Replay the journal (or create the default device in a fresh session). Call once after construction. */
  start(): ReplayReport {
    const report: ReplayReport = { entries: 0, failed: [], skipped: [] };
    for (const fn of this.listeners.start) fn('replaying');
    this.executor.replaying = true;
    // one entry at a time as the journal is read (journal.ts scan): a journal of any size replays in bounded memory
    const read = this.journal.scan((line) => {
      // engine steps (autorun's, a free run's millions): their flood of events is shed natively, the state events stay
      const flood = line.command.cmd === 'engine.step' && this.executor.execBulk && this.executor.shedEvents;
      const r = flood ? this.executor.execBulk!(line.command) : this.executor.exec(line.command);
      if (flood) this.executor.shedEvents!();
      this.emitCommand(line.command, r, true);
      if (!r.ok) report.failed.push({ n: line.n, cmd: line.command.cmd, error: `${r.error.code}: ${r.error.message}` });
    });
    report.entries = read.entries;
    report.skipped = read.skipped;
    this.executor.replaying = false;
    this.executor.resumeAutorun?.();
    if (read.entries === 0 && this.opts.defaultDevice) {
      this.execute({ cmd: 'device.create', args: { profile: this.opts.defaultDevice } });
    }
    this.pumpEvents();
    this.syncAutorun();
    this.syncNet();
    this.replayReport = report;
    for (const fn of this.listeners.start) fn('started', report);
    return report;
  }

  addClient(send: (msg: FromHost) => void): number {
    const id = this.nextClient++;
    this.clients.set(id, send);
    return id;
  }
  removeClient(id: number): void { this.clients.delete(id); }
  broadcast(msg: FromHost): void { for (const send of this.clients.values()) send(msg); }

  /** Execute a validated command, journal it when it succeeded and changes state, queue its events. */
  execute(command: Command, journalAs?: (r: ExecResult) => Command): ExecResult {
    if (command.cmd === 'events.recent') {
      const r = this.batcher.recent(command.args.max);
      return { ok: true, result: { first: r.first, count: r.count, events: r.events } };
    }
    if (command.cmd === 'journal.get') {
      // the entries that fit one reply (JOURNAL_GET_BYTES of command text); the rest are named, not sent
      const entries: Command[] = [];
      let bytes = 0, cut = 0;
      const read = this.journal.scan((e) => {
        const n = cut ? 0 : JSON.stringify(e.command).length;
        if (cut || bytes + n > JOURNAL_GET_BYTES) { cut ||= e.n; return; }
        bytes += n;
        entries.push(e.command);
      }, { repair: false });
      const skipped = cut ? [...read.skipped, { line: cut, reason: `entries ${cut}..${read.entries} not returned: past the reply limit of ${JOURNAL_GET_BYTES / 1024 / 1024} MiB (read ${this.journal.file})` }] : read.skipped;
      return { ok: true, result: { dir: this.journal.dir, file: this.journal.file, entries, skipped } };
    }
    this.holdRunner();
    this.depth++;
    try { return this.executeHeld(command, journalAs); } finally { this.depth--; this.releaseRunner(); }
  }

  // ---- the free-running engine: a command runs between two of the runner's batches. The steps run before it are
  // journaled before it (so a replay interleaves them the same), and the flood before it goes out sampled, so that
  // the command's own events (drained as objects by exec) reach the console whole.
  private holds = 0;
  private paused = false;
  private holdRunner(): void {
    if (this.holds++ > 0 || !this.executor.freeRunning?.()) return;
    this.journalSteps(this.executor.runnerPause!());
    this.paused = true;
    this.pumpSample();
    if (this.ringsWanted()) this.sendRings();
  }
  private releaseRunner(): void {
    if (--this.holds > 0 || !this.paused) return;
    this.paused = false;
    // a command ended the free run: the rings as it left them (the events are whole again from here)
    if (!this.executor.freeRunning!()) this.sendRings();
    this.executor.runnerResume!();
  }
  private journalSteps(n: number): void {
    for (; n > 0; n -= STEP_PIECE) this.journal.append({ cmd: 'engine.step', args: { count: Math.min(n, STEP_PIECE) } });
  }
  /** The window of events the fastest console asks for (the host's default when none acknowledges). */
  private ackedWindow(): number {
    const fresh = performance.now() - this.acked.at <= 2000;
    return (fresh ? this.acked.window : undefined) ?? this.opts.ackWindow ?? 4_000;
  }
  private lastRings = -Infinity;
  private budget = -1;
  private ringsDue = false;
  /** Free running: every event the device queued leaves the device; the console gets the state events and the
   *  newest window of them (none while it has not drawn the last sample), the rest is counted as dropped (most of
   *  them already at the source: the runner keeps at most a window of events queued). When some were dropped the
   *  console's rings cannot follow the events, so the device's rings follow (sendRings, with the runner paused). */
  private pumpSample(): void {
    const ex = this.executor;
    const behind = this.unacked() > 0;   // the console has not drawn the last sample yet
    const window = this.ackedWindow();
    if (window !== this.budget) { ex.setEventBudget?.(window); this.budget = window; }   // (waits for the runner's batch)
    const chunk = ex.drainSample!(behind ? 0 : window);
    this.emitEvents(chunk.objects, false);
    if (chunk.count || chunk.dropped) {
      this.batcher.pushChunks(chunk.count ? [chunk] : [], chunk.dropped);
      this.batcher.flushNow();   // the tick paces the samples already: no wait for the batcher's next slot
    }
    if (chunk.dropped) this.ringsDue = true;
  }
  /** events were dropped since the last rings snapshot, and the last one is at least ringSnapshotMs old */
  private ringsWanted(): boolean {
    return this.ringsDue && performance.now() - this.lastRings >= (this.opts.ringSnapshotMs ?? 100);
  }
  /** The rings as the device holds them after its last event, ordered after the events sent so far. Call with the
   *  runner paused or stopped. */
  private sendRings(): void {
    const ex = this.executor;
    const rings = ex.queueSnapshot!();
    const seq = ex.lastSeq!();
    this.ringsDue = false; this.lastRings = performance.now();
    this.batcher.flushNow();   // the events up to seq go first
    this.broadcast({ type: 'rings', seq, rings });
  }
  /** One tick of a free run: the steps to the journal, a sample of the events to the console; every
   *  ringSnapshotMs (when events were dropped) with the runner paused, so the rings match the events sent. */
  private freeTick(): void {
    if (!this.executor.freeRunning?.()) return;
    if (this.ringsWanted()) { this.holdRunner(); this.releaseRunner(); return; }
    this.journalSteps(this.executor.runnerTake!());
    this.pumpSample();
  }

  private executeHeld(command: Command, journalAs?: (r: ExecResult) => Command): ExecResult {
    const handler = this.handlers.get(command.cmd);
    if (handler) {
      let r: ExecResult;
      try { r = handler(command, this); } catch (e) { r = { ok: false, error: { code: 'INTERNAL', message: `${command.cmd}: ${(e as Error).message}` } }; }
      this.pumpEvents();
      return r;
    }
    const r = this.executor.exec(command);
    if (r.ok && journaled(command.cmd)) {
      if (command.cmd === 'session.reset') { this.journal.truncate(); this.batcher.clear(); }
      this.journal.append(journalAs ? journalAs(r) : command);
    }
    this.pumpEvents();
    this.emitCommand(command, r, false);
    if (command.cmd === 'engine.autorun' || command.cmd === 'session.reset' || command.cmd === 'device.attachNet') this.syncAutorun();
    this.syncNet();
    return r;
  }

  /** Handle one raw message from a client (string or object); the reply goes back through `reply`. `from` names the
   *  client (a connection id, a port): while a long engine.step / engine.run of that client runs in slices, its later
   *  messages wait their turn (in order); the other clients' requests run between the slices. */
  handle(raw: unknown, reply: (msg: Reply) => void, from?: unknown): void {
    const waiting = from !== undefined ? this.waiting.get(from) : undefined;
    if (waiting) { waiting.push({ raw, reply }); return; }
    const parsed = parseToHost(raw);
    if (!parsed.ok) { reply(parsed.reply); return; }
    const msg = parsed.msg;
    if (msg.type === 'ack') { this.ack(msg.seq, msg.window); return; }
    if (msg.type === 'control') {
      reply({ type: 'reply', id: null, ok: false, error: { code: 'EOPNOTSUPP', message: `control "${msg.action}" is handled by the shell (server or Electron main), not the backend host` } });
      return;
    }
    if (this.sliceable(msg.command)) { this.runSliced(msg.command, msg.id, reply, from); return; }
    let r: ExecResult;
    // a command the executor cannot cope with is that command's error, never the host's end
    try { r = this.execute(msg.command); } catch (e) {
      r = { ok: false, error: { code: 'INTERNAL', message: `${msg.command.cmd}: ${(e as Error)?.message ?? String(e)}` } };
    }
    reply(r.ok ? { type: 'reply', id: msg.id, ok: true, result: r.result } : { type: 'reply', id: msg.id, ok: false, error: r.error });
  }

  // ---- long commands in slices (docs/hardening.md): engine.step / engine.run over STEP_SLICE steps run a slice at a
  // time, each journaled as the engine.step / engine.run it was (so a replay runs the same steps), the host's event
  // loop free between two slices (the events go out, the other consoles are answered, a kill is heard).
  private readonly waiting = new Map<unknown, { raw: unknown; reply: (msg: Reply) => void }[]>();
  private sliceable(c: Command): boolean {
    if (this.handlers.has(c.cmd)) return false;
    if (c.cmd === 'engine.step') return c.args.count > STEP_SLICE;
    if (c.cmd === 'engine.run') return c.args.maxSteps > STEP_SLICE;
    return false;
  }
  private runSliced(c: Command, id: number | null | undefined, reply: (msg: Reply) => void, from: unknown): void {
    const key = from ?? {};
    this.waiting.set(key, []);
    const step = c.cmd === 'engine.step';
    let left = step ? (c.args as { count: number }).count : (c.args as { maxSteps: number }).maxSteps;
    let steps = 0;
    let size = SLICE_FIRST;   // then adapted so that a slice takes about SLICE_MS
    let first = true;
    const finish = (r: ExecResult) => {
      reply(r.ok ? { type: 'reply', id: id ?? null, ok: true, result: r.result } : { type: 'reply', id: id ?? null, ok: false, error: r.error });
      const queued = this.waiting.get(key) ?? [];
      this.waiting.delete(key);
      for (const q of queued) this.handle(q.raw, q.reply, from);   // in order; a later long one queues the rest again
    };
    const slice = () => {
      const n = Math.min(left, size);
      const t0 = performance.now();
      let r: ExecResult;
      try {
        // a command done in its first slice (an engine.run that goes idle) is journaled as it was sent; otherwise each
        // slice as the command it was, in the order it ran among the other consoles' commands
        const whole = first;
        r = this.execute(step ? { cmd: 'engine.step', args: { count: n } } : { cmd: 'engine.run', args: { maxSteps: n } }, (res) => {
          const done = res.ok && (n >= left || Number((res.result as { steps: number | string }).steps) < n || (res.result as { idle?: boolean }).idle === true);
          return whole && done ? c : (step ? { cmd: 'engine.step', args: { count: n } } : { cmd: 'engine.run', args: { maxSteps: n } });
        });
        first = false;
      } catch (e) { r = { ok: false, error: { code: 'INTERNAL', message: `${c.cmd}: ${(e as Error)?.message ?? String(e)}` } }; }
      if (!r.ok) { finish(r); return; }
      const res = r.result as { steps: number | string; idle?: boolean };
      const did = Number(res.steps);
      steps += did;
      left -= n;
      if (left <= 0 || did < n || res.idle) { finish({ ok: true, result: { ...res, steps: typeof res.steps === 'string' ? String(steps) : steps } }); return; }
      const ms = performance.now() - t0;
      if (ms < SLICE_MS / 2 && size < STEP_SLICE) size *= 2;
      else if (ms > SLICE_MS * 2 && size > SLICE_MIN) size /= 2;
      setImmediate(slice);
    };
    slice();
  }

  /** the fastest console's acknowledgement (EventsAck: seq, and the window it asks for) and when it came */
  private acked: { seq: number; at: number; window?: number } = { seq: -1, at: -Infinity };
  ack(seq: number, window?: number): void {
    if (seq > this.acked.seq || performance.now() - this.acked.at > 2000) this.acked = { seq, at: performance.now(), window };
  }
  /** Events sent but not yet drawn by the fastest console that acknowledges (0 when none acknowledged in the last
   *  2 s: a session without a console, or one that does not acknowledge, is not held back). */
  unacked(): number {
    if (performance.now() - this.acked.at > 2000) return 0;
    return Math.max(0, this.batcher.lastSentSeq - this.acked.seq);
  }

  /** Autorun produces events only while the console keeps up: fewer than a window of events queued here or sent
   *  and not yet drawn by the fastest acknowledging console (the window it asked for, else `ackWindow`). */
  autorunMayRun(): boolean {
    return this.batcher.queued + this.unacked() <= this.ackedWindow();
  }

  /** Whether bulk pumps may carry events as JSON text (the scenario replayer turns it off while it needs every
   *  event as an object). */
  textEvents: () => boolean = () => true;

  /** Queue the device's new events for the clients. `bulk` (the autorun tick): as binary event frames (or JSON
   *  text) written by the addon, without a JS object per event. */
  pumpEvents(bulk = false): void {
    if (bulk && this.executor.drainEventChunks && this.textEvents()) {
      const chunks = this.executor.drainEventChunks(this.opts.eventFrames === false ? 'json' : 'frames');
      for (const c of chunks) this.emitEvents(c.objects, false);
      const dropped = this.executor.takeDropped?.() ?? 0;
      if (chunks.length || dropped) this.batcher.pushChunks(chunks, dropped);
      return;
    }
    const evs = this.executor.drainEvents();
    this.emitEvents(evs, true);
    const dropped = this.executor.takeDropped?.() ?? 0;
    if (evs.length || dropped) this.batcher.push(evs, dropped);
  }

  private autorunFree = false;
  private syncAutorun(): void {
    const { on, stepsPerSecond } = this.executor.autorun;
    const free = !!this.executor.freeRunning?.();
    if (!on || (this.autorunTimer && free !== this.autorunFree)) {
      if (this.autorunTimer) clearInterval(this.autorunTimer);
      this.autorunTimer = null;
      if (!on) return;
    }
    if (this.autorunTimer) return;
    const tick = this.opts.autorunTickMs ?? 16;
    this.autorunFree = free;
    if (free) {
      // the runner thread runs the engine; each tick journals its steps and sends a sample of what it did
      this.autorunTimer = setInterval(() => this.freeTick(), this.opts.freeTickMs ?? tick);
      return;
    }
    this.autorunLast = performance.now();
    this.autorunCarry = 0;
    this.autorunTimer = setInterval(() => {
      const now = performance.now();
      const budget = this.executor.autorun.stepsPerSecond * (now - this.autorunLast) / 1000 + this.autorunCarry;
      this.autorunLast = now;
      const count = Math.min(100_000, Math.floor(budget));
      this.autorunCarry = Math.min(budget - count, stepsPerSecond);
      if (count < 1) return;
      // the clients are behind (more than two full batches wait here): produce nothing this tick; autorun's speed
      // is an upper bound, the console is never buried under events it cannot draw
      if (!this.autorunMayRun()) { this.autorunCarry = 0; return; }
      // in chunks of 512 steps (a multiple of the load generator's 256-step period, so one journal entry with the
      // sum replays the same), for at most autorunBusyMs of this tick: the host stays responsive and the batches
      // keep flowing when the engine could produce more than the console can draw
      const busyUntil = performance.now() + (this.opts.autorunBusyMs ?? 8);
      let steps = 0;
      for (;;) {
        const chunk = Math.min(512, count - steps);
        const step: Command = { cmd: 'engine.step', args: { count: chunk } };
        const r = this.executor.execBulk ? this.executor.execBulk(step) : this.executor.exec(step);
        const n = r.ok ? (r.result as { steps: number }).steps : 0;
        steps += n;
        this.pumpEvents(true);   // formatting the events counts against the tick's budget too
        if (n < chunk || steps >= count) break;
        if (!this.autorunMayRun()) { this.autorunCarry = 0; break; }   // far enough ahead of the console
        if (performance.now() > busyUntil) { this.autorunCarry = 0; break; }
      }
      // journaled like any command (only when the engine did something) so replay reproduces it
      if (steps > 0) this.journal.append({ cmd: 'engine.step', args: { count: steps } });
      this.pumpEvents(true);
    }, tick);
  }

  /** While a device is on the network, poll its UDP transport every netPollMs: each tick polls (without
   *  waiting) until nothing is left or ~4 ms passed, so a burst is served at once and the event loop is never
   *  held longer than that; what the engine did goes out through the batcher like any other events. */
  private syncNet(): void {
    const active = this.executor.netActive?.() ?? false;
    if (!active) {
      if (this.netTimer) clearInterval(this.netTimer);
      this.netTimer = null;
      return;
    }
    if (this.netTimer) return;
    this.netTimer = setInterval(() => this.pollNet(), this.opts.netPollMs ?? 1);
  }
  /** One poll tick (also called by tests). */
  pollNet(): number {
    if (!this.executor.netPoll) return 0;
    const t0 = performance.now();
    let total = 0;
    for (let i = 0; i < 1024; i++) {
      const n = this.executor.netPoll();
      total += n;
      if (!n || performance.now() - t0 > 4) break;
    }
    this.netPolls.ticks++; this.netPolls.work += total;
    if (total) this.pumpEvents();
    return total;
  }

  close(): void {
    if (this.executor.freeRunning?.()) this.journalSteps(this.executor.runnerPause!());   // the steps of the last tick
    if (this.netTimer) clearInterval(this.netTimer);
    this.netTimer = null;
    if (this.autorunTimer) clearInterval(this.autorunTimer);
    this.autorunTimer = null;
    this.batcher.flushNow();
    this.batcher.close();
    this.executor.close();
  }
}
