// The scenario recorder and step-by-step replayer (issue 5): a host extension (HostCore.register / onCommand /
// onEvents / onStart) answering the console-only `scenario.*` commands (app/protocol/commands/scenario.ts).
//
// Recording: every command the host executes for its clients (and every journal entry it replays after a
// restart) goes through app/scenario/record.ts with its real outcome, so the current scenario always describes
// this session, with object names and references instead of handles. Read-only commands (memory.read,
// qp.query, session.info, ...) are not steps; they back "expect these bytes" / "expect this state".
//
// Replay: scenario.load validates a file with app/scenario/load.ts (the loader's step/field message on error);
// scenario.step / scenario.run_to drive app/scenario/run.ts's ScenarioRun against this host's own execution
// path, so replayed commands reach the real device, are journaled, stream their events to every client, and
// are recorded (under the scenario's own names, notes and expectations) like anything a person does.
import type { Command, CommandName, DeviceEvent } from '../protocol/index.ts';
import { BthOpcode, CREATES, SyndromeNames, type BthOpcodeName, type Expect, type Scenario } from '../protocol/scenario.ts';
import { EventType, WcOpcode, WcStatus } from '../protocol/enums.ts';
import type { ExecResult, Executor } from './api.ts';
import { HostCore, type HostExecutor, type HostOptions } from './core.ts';
import { journaled } from './journal.ts';
import { ScenarioRecorder } from '../scenario/record.ts';
import { ScenarioRun, syndromeName, type StepReport } from '../scenario/run.ts';
import { parseScenarioText } from '../scenario/load.ts';
import { enumField, field, handleOf, kindKey, packetBytes, wcsOf } from '../scenario/results.ts';

type ScenarioCommand = Extract<Command, { cmd: `scenario.${string}` }>;

/** A replayed step as the console shows it (the runner's report without the bulky result). */
export interface ReplayStep { number: number; cmd: string; ok: boolean; failures: string[]; error?: { code: string; message: string }; events: number }

interface Replay {
  scenario: Scenario;
  file: string;
  run: ScenarioRun;
  started: boolean;
  reports: ReplayStep[];
  // bookkeeping while one run.step() executes
  active: boolean;
  events: DeviceEvent[];
  setupLeft: number;
  stepCmdSeen: boolean;
  stepIndex: number;
}

const fail = (code: string, message: string, field?: string): ExecResult => ({ ok: false, error: { code, message, ...(field ? { field } : {}) } });
const ok = (result: unknown): ExecResult => ({ ok: true, result });

/** What a recorded step's outcome showed, compactly (enough for "expect this CQE"). */
function outcomeView(cmd: string, r: ExecResult | undefined, seen: Partial<Expect>) {
  if (!r) return null;
  if (!r.ok) return { ok: false, error: { code: r.error.code, message: r.error.message }, ...seen };
  if (cmd !== 'cq.poll') return { ok: true, ...seen };
  return {
    ok: true, ...seen,
    wcs: wcsOf(r.result).map((w) => {
      const st = enumField(w, 'status', WcStatus), op = enumField(w, 'opcode', WcOpcode);
      return {
        status: WcStatus.name(st.num ?? -1), opcode: st.num === 0 ? WcOpcode.name(op.num ?? -1) : undefined,
        byteLen: field(w, 'byteLen'), wrId: field(w, 'wrId'),
      };
    }),
  };
}

/** Packets sent and async events raised while a step ran, as the device reported them. */
interface Seen {
  packets: { opcode: BthOpcodeName; syndrome?: string; device: number; count: number }[];
  asyncs: { type: string; obj: number }[];
}
const OPCODE_NAME = new Map(Object.entries(BthOpcode).map(([k, v]) => [v as number, k as BthOpcodeName]));
function seenOf(evs: readonly DeviceEvent[]): Seen {
  const packets = new Map<string, Seen['packets'][number]>();
  const asyncs: Seen['asyncs'] = [];
  for (const e of evs) {
    const k = kindKey(e.kind);
    if (k === 'packetsent') {
      const b = packetBytes(e);
      const opcode = b && b.length >= 12 ? OPCODE_NAME.get(b[0]!) : undefined;
      if (!opcode) continue;
      const syn = syndromeName(b!);
      const syndrome = syn && (SyndromeNames as readonly string[]).includes(syn) ? syn : undefined;
      const key = `${opcode}/${syndrome ?? ''}/${e.device}`;
      const p = packets.get(key);
      if (p) p.count++; else packets.set(key, { opcode, ...(syndrome ? { syndrome } : {}), device: e.device, count: 1 });
    } else if (k === 'asyncevent') {
      const type = EventType.name(e.a);
      if (type && (EventType.names as readonly string[]).includes(type)) asyncs.push({ type, obj: e.obj });
    }
  }
  return { packets: [...packets.values()], asyncs };
}

function compact(r: StepReport): ReplayStep {
  return { number: r.number, cmd: r.cmd, ok: r.ok, failures: r.failures, ...(r.error ? { error: r.error } : {}), events: r.events };
}

/** Attach the recorder/replayer to a host core (the host extension entry point app/host/main.ts calls): it answers
 *  scenario.* and records everything the core executes. */
export function attach(core: HostCore): ScenarioHost { return new ScenarioHost(core); }

/** HostCore with the recorder attached (tests). */
export class ScenarioHostCore extends HostCore {
  readonly scenario: ScenarioHost;
  constructor(executor: HostExecutor, opts: HostOptions) {
    super(executor, opts);
    this.scenario = attach(this);
  }
}

const SCENARIO_COMMANDS: CommandName[] = ['scenario.get', 'scenario.save', 'scenario.rename', 'scenario.note', 'scenario.remove',
  'scenario.meta', 'scenario.expect', 'scenario.load', 'scenario.step', 'scenario.run_to', 'scenario.close'];

export class ScenarioHost {
  recorder = new ScenarioRecorder();
  /** outcome of each recorded step (same index as the recorder's steps) */
  private outcomes: (ExecResult | undefined)[] = [];
  /** packets and async events during each recorded step (same index) */
  private seen: (Seen | undefined)[] = [];
  /** bumped whenever the recording or the replay changes, so clients can skip unchanged refreshes; starts from
   *  the clock so that a restarted host never repeats a version a client already holds */
  private version = Date.now() * 1000;
  private pending: DeviceEvent[] = [];
  private restoring = false;
  private replay: Replay | null = null;
  /** set while the recorder executes a command itself (replay, expectation reads): onCommand leaves it alone */
  private own = false;

  constructor(readonly core: HostCore) {
    // events feed the recorder (keys change inside the device) and the replayer's checks; the autorun flood's
    // life-cycle events are all observe() needs; a replay needs every event, so the flood goes as objects then
    core.onEvents((evs, { inCommand }) => this.tapped(evs, inCommand));
    core.textEvents = () => !this.replay?.active;
    // every device command the host executes for a client (and every journal entry it replays at start) is recorded
    // with its real outcome
    core.onCommand((c, r) => {
      if (this.own) return;
      this.record(c, r);
      if (!this.restoring) this.flushObserved();
    });
    core.onStart((phase) => {
      this.restoring = phase === 'replaying';
      if (phase === 'started') this.flushObserved();
    });
    for (const name of SCENARIO_COMMANDS) {
      core.register({
        name,
        handler: (c) => {
          // (the recorder's state objects: the scenario.* result schemas are open records)
          try { return this.scenarioCommand(c as ScenarioCommand) as never; } catch (e) { return fail('INTERNAL', `${c.cmd}: ${(e as Error).message}`) as never; }
        },
      });
    }
  }

  private tapped(evs: DeviceEvent[], inCommand: boolean) {
    // a loop, not push(...evs): a journal replay drains hundreds of thousands of events at once
    if (this.replay?.active) for (const e of evs) this.replay.events.push(e);
    if (inCommand || this.restoring) for (const e of evs) this.pending.push(e);
    else this.recorder.observe(evs);   // autorun ticks
  }
  private flushObserved() {
    if (!this.pending.length) return;
    const evs = this.pending; this.pending = [];
    this.recorder.observe(evs);
  }

  private record(c: Command, r: ExecResult): number | null {
    if (!journaled(c.cmd)) return null;
    const before = this.recorder.length;
    const i = this.recorder.record(c, r);
    if (c.cmd === 'session.reset') { this.outcomes = []; this.seen = []; this.recorder.name = 'recorded session'; this.recorder.description = ''; }
    else if (i !== null) this.keep(i, before, r);
    this.version++;
    return i;
  }

  /** Remember step i's outcome and what the device showed during it (events drained while it ran). */
  private keep(i: number, before: number, r: ExecResult) {
    this.outcomes.length = before; this.outcomes[i] = r;
    this.seen.length = before; this.seen[i] = seenOf(this.pending);
  }

  /** Execute through the host (journal, events to clients) without recording. */
  private run(c: Command): ExecResult {
    const was = this.own;
    this.own = true;
    try { return this.core.execute(c); } finally { this.own = was; }
  }

  // ---------------------------------------------------------------- scenario.* commands
  private scenarioCommand(c: ScenarioCommand): ExecResult {
    switch (c.cmd) {
      case 'scenario.get':
        if (c.args.known !== undefined && c.args.known === this.version) return ok({ version: this.version, unchanged: true });
        return ok(this.state(true));
      case 'scenario.save': {
        const v = this.recorder.toScenario();
        if (!v.ok) return fail('BAD_SCENARIO', `the recording is not a valid scenario: ${v.error.message}`);
        return ok({ name: this.recorder.name, steps: this.recorder.length, json: this.recorder.toJSON() });
      }
      case 'scenario.rename': {
        const e = this.recorder.rename(c.args.from, c.args.to);
        if (e) return fail('EINVAL', `rename ${c.args.from} -> ${c.args.to}: ${e.message}`, 'args.to');
        this.version++;
        return ok(this.state(false));
      }
      case 'scenario.note': {
        const i = c.args.step - 1;
        if (i >= this.recorder.length) return fail('ENOENT', `step ${c.args.step}: the recording has ${this.recorder.length} steps`, 'args.step');
        this.recorder.setNote(i, c.args.note.trim() || undefined);
        this.version++;
        return ok(this.state(false));
      }
      case 'scenario.remove': {
        const i = c.args.step - 1;
        if (i >= this.recorder.length) return fail('ENOENT', `step ${c.args.step}: the recording has ${this.recorder.length} steps`, 'args.step');
        this.recorder.removeStep(i);
        this.outcomes.splice(i, 1);
        this.seen.splice(i, 1);
        this.version++;
        // what the step created stays named on the device; a later step that uses it makes saving say so
        return ok(this.state(false));
      }
      case 'scenario.meta':
        if (c.args.name !== undefined) this.recorder.name = c.args.name.trim() || this.recorder.name;
        if (c.args.description !== undefined) this.recorder.description = c.args.description;
        this.version++;
        return ok(this.state(false));
      case 'scenario.expect': return this.expect(c.args);
      case 'scenario.load': {
        const file = c.args.file ?? 'scenario';
        const loaded = parseScenarioText(c.args.text, file);
        if (!loaded.ok) {
          const e = loaded.error;
          const where = e.step ? `steps.${e.step - 1}${e.field ? `.${e.field}` : ''}` : e.field;
          return fail('BAD_SCENARIO', e.message, where);
        }
        this.startReplay(loaded.scenario, file);
        this.version++;
        return ok(this.replayState(true));
      }
      case 'scenario.step': {
        const rp = this.replay;
        if (!rp) return fail('ENOENT', 'no scenario is loaded for replay (scenario.load first)');
        const before = rp.reports.length;
        if (!rp.run.done) this.replayStep(rp);
        return ok({ ...this.replayState(false), reports: rp.reports.slice(before), from: before });
      }
      case 'scenario.run_to': {
        const rp = this.replay;
        if (!rp) return fail('ENOENT', 'no scenario is loaded for replay (scenario.load first)');
        if (c.args.step > rp.scenario.steps.length) return fail('EINVAL', `step ${c.args.step}: the scenario has ${rp.scenario.steps.length} steps`, 'args.step');
        const before = rp.reports.length;
        while (!rp.run.done && rp.run.position < c.args.step) {
          const rep = this.replayStep(rp);
          if (!rep || !rep.ok) break;
        }
        return ok({ ...this.replayState(false), reports: rp.reports.slice(before), from: before });
      }
      case 'scenario.close':
        this.replay = null;
        this.version++;
        return ok({ replay: null });
    }
    const never: never = c;
    return fail('BAD_REQUEST', `unknown command ${(never as { cmd: string }).cmd}`, 'command.cmd');
  }

  /** "expect this": from a step's own outcome, or from what the device holds now (bytes, a QP's state). */
  private expect(a: Extract<ScenarioCommand, { cmd: 'scenario.expect' }>['args']): ExecResult {
    const i = a.step - 1;
    if (i >= this.recorder.length) return fail('ENOENT', `step ${a.step}: the recording has ${this.recorder.length} steps`, 'args.step');
    let ex: ReturnType<ScenarioRecorder['expectFromOutcome']>;
    if (a.bytes || a.qp !== undefined) {
      // read the device now, record the read as a scratch step to get its expectation in scenario terms
      // (addresses as "$buf.addr+N", QPs by name), then drop the scratch step
      const read: Command = a.bytes ? { cmd: 'memory.read', args: { addr: a.bytes.addr, length: a.bytes.length } } : { cmd: 'qp.query', args: { qp: a.qp! } };
      const r = this.run(read);
      this.flushObserved();
      if (!r.ok) return fail(r.error.code, `${read.cmd}: ${r.error.message}`, a.bytes ? 'args.bytes' : 'args.qp');
      const before = this.recorder.length;
      const k = this.recorder.record(read, r);
      ex = k === null ? {} : this.recorder.expectFromOutcome(k);
      while (this.recorder.length > before) this.recorder.removeStep(this.recorder.length - 1);
      const what = a.bytes ? 'bytes' : 'qpState';
      if (!ex[what]) return fail('EINVAL', a.bytes ? `no bytes read at 0x${a.bytes.addr.toString(16)}` : `qp ${a.qp}: no state in the query result`, a.bytes ? 'args.bytes' : 'args.qp');
      if (a.bytes && typeof ex.bytes![0]!.addr === 'number') return fail('EINVAL', `0x${a.bytes.addr.toString(16)} is not inside a buffer of this recording, so a replay could not find it`, 'args.bytes.addr');
    } else if (a.packets || a.asyncEvents) {
      const seen = this.seenView(this.seen[i]);
      ex = a.packets ? { packet: seen.packet } : { asyncEvent: seen.asyncEvent };
      if (!ex.packet && !ex.asyncEvent) return fail('EINVAL', `step ${a.step}: the device ${a.packets ? 'sent no packet' : 'raised no async event'} while it ran`, 'args.step');
    } else {
      const r = this.outcomes[i];
      const cmd = this.recorder.scenario().steps[i]?.cmd;
      if (a.only !== undefined && r?.ok && a.only >= wcsOf(r.result).length) return fail('EINVAL', `step ${a.step} polled ${wcsOf(r.result).length} completion(s); there is no completion ${a.only}`, 'args.only');
      ex = this.recorder.expectFromOutcome(i, a.only);
      if (!Object.keys(ex).length) return fail('EINVAL', `step ${a.step} (${cmd}) showed nothing to expect (expectations come from errors, polls, reads, queries, events)`, 'args.step');
    }
    this.recorder.addExpectation(i, ex);
    this.version++;
    return ok({ ...this.state(false), added: ex });
  }

  /** A step's packets / async events as expectations, in scenario terms (device and object names). */
  private seenView(s: Seen | undefined): Partial<Expect> {
    if (!s) return {};
    const out: Partial<Expect> = {};
    if (s.packets.length) {
      out.packet = s.packets.map((p) => {
        const from = this.recorder.nameOf(p.device);
        return { opcode: p.opcode, ...(p.syndrome ? { syndrome: p.syndrome as never } : {}), count: p.count, ...(from ? { from } : {}) };
      });
    }
    if (s.asyncs.length) {
      out.asyncEvent = s.asyncs.map((a) => {
        const obj = this.recorder.nameOf(a.obj);
        return { type: a.type as never, ...(obj ? { obj } : {}) };
      });
    }
    return out;
  }

  // ---------------------------------------------------------------- replay
  private startReplay(scenario: Scenario, file: string) {
    const self = this;
    const adapter: Executor = {
      exec(c: Command): ExecResult { return self.replayExec(c); },
      drainEvents(): DeviceEvent[] {
        const rp = self.replay;
        if (!rp) return [];
        const evs = rp.events; rp.events = [];
        return evs;
      },
      pcap: () => this.core.executor.pcap(),
      close() { /* the host owns the session */ },
    };
    this.replay = {
      scenario, file, run: new ScenarioRun(scenario, adapter), started: false, reports: [],
      active: false, events: [], setupLeft: 0, stepCmdSeen: false, stepIndex: 0,
    };
  }

  private replayStep(rp: Replay): ReplayStep | null {
    rp.stepIndex = rp.run.position;
    rp.setupLeft = rp.started ? 0 : 1 + rp.scenario.devices.length;
    rp.stepCmdSeen = false;
    rp.active = true;
    let rep: StepReport | null;
    try { rep = rp.run.step(); } finally { rp.active = false; rp.started = true; rp.events = []; this.version++; }
    if (!rep) return null;
    const c = compact(rep);
    rp.reports.push(c);
    return c;
  }

  /** A command of the replay: setup and the step's own command are recorded; the runner's checking reads are not. */
  private replayExec(c: Command): ExecResult {
    const rp = this.replay!;
    const r = this.run(c);
    if (rp.setupLeft > 0) {
      rp.setupLeft--;
      this.record(c, r);
      if (c.cmd === 'session.reset') { this.recorder.name = rp.scenario.name; this.recorder.description = rp.scenario.description; }
    }
    else if (!rp.stepCmdSeen) {
      rp.stepCmdSeen = true;
      const before = this.recorder.length;
      const i = this.recorder.record(c, r);
      if (i !== null) { this.keep(i, before, r); this.version++; this.adopt(rp.scenario.steps[rp.stepIndex], c, r, i); }
    }
    this.flushObserved();
    return r;
  }

  /** Give the recorded step the scenario's own name, note and expectations. */
  private adopt(st: Scenario['steps'][number] | undefined, c: Command, r: ExecResult, i: number) {
    if (!st) return;
    const kind = CREATES[c.cmd];
    if (st.as && kind && r.ok) {
      const h = handleOf(r.result, kind);
      const auto = h !== undefined ? this.recorder.nameOf(h) : undefined;
      if (auto && auto !== st.as) this.recorder.rename(auto, st.as);
    }
    if (st.note) this.recorder.setNote(i, st.note);
    if (st.capture) this.recorder.setCapture(i, structuredClone(st.capture));
    if (st.expect && Object.keys(st.expect).length) this.recorder.addExpectation(i, structuredClone(st.expect));
  }

  private replayState(full: boolean) {
    const rp = this.replay;
    if (!rp) return { replay: null };
    const rep = rp.run.report();
    return {
      replay: {
        file: rp.file, name: rp.scenario.name, description: rp.scenario.description, seed: rp.scenario.seed,
        devices: rp.scenario.devices, total: rp.scenario.steps.length,
        position: rp.run.position, done: rp.run.done, started: rp.started,
        passed: rep.passed, failedStep: rep.failedStep, failure: rep.failure,
        digest: rp.run.done ? rep.digest : undefined,
        ...(full ? { steps: rp.scenario.steps, reports: rp.reports } : {}),
      },
    };
  }

  /** The recording (and the replay, if one is loaded) as the console's Scenario tab shows it. */
  private state(full: boolean) {
    const s = this.recorder.scenario();
    return {
      version: this.version,
      recording: {
        name: s.name, description: s.description, seed: s.seed, devices: s.devices, steps: s.steps,
        outcomes: s.steps.map((st, i) => outcomeView(st.cmd, this.outcomes[i], this.seenView(this.seen[i]))),
      },
      ...(full ? this.replayState(true) : {}),
    };
  }
}
