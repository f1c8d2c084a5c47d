// Headless scenario runner and step-by-step replay API (framework-free; no Node imports, so the GUI can use it).
//
//   const run = new ScenarioRun(scenario, executor, { seed });
//   run.step();            // one step (the first call also resets the session and creates the devices)
//   run.runTo(5);          // up to and including step 5 (1-based), stops at the first failure
//   const report = run.run();   // everything; report.passed, report.failure, report.digest
// With an asynchronous executor (the console over IPC/WebSocket): stepAsync(), runToAsync(n), runAsync().
//
// Names ("pd0", "qp1") are resolved to handles and references ("$mrA.rkey+4") to numbers just before a step
// runs; the resolved command is validated against the live protocol schema. Expectations are checked after
// the step; the event log (drained after every command) feeds the packet/async-event checks and the digest.
import { Command, EventType, QpState, WcOpcode, WcStatus, bthOpcodeId, describeZodError, type DeviceEvent } from '../protocol/index.ts';
import type { Executor, ExecResult } from '../host/api.ts';
import { networkStepReason,
  BthOpcode, CREATES, HANDLE_FIELDS, SyndromeNames, WcFlag, parseRef, type Expect, type ObjectKind, type Scenario, type Step,
} from '../protocol/scenario.ts';
import { parseScenarioText, validateScenario, type LoadError } from './load.ts';
import {
  bytesOf, bytesToHex, enumField, field, handleOf, hexToBytes, keyEvent, kindKey, numericFields, packetBytes, qpStateOf, toBig, wcsOf,
} from './results.ts';
import { Sha256 } from './sha256.ts';

/** An executor whose calls complete later (the renderer's transport to the backend host). */
export interface AsyncExecutor {
  exec(command: Command): Promise<ExecResult>;
  drainEvents(max?: number): Promise<DeviceEvent[]>;
}

/** What the runner's core asks its driver for: execute a command, or hand over pending events. */
type Req = { t: 'exec'; c: Command } | { t: 'drain' };
type Gen<T> = Generator<Req, T, unknown>;

export interface RunOptions {
  /** Overrides the scenario's seed. */
  seed?: number;
  /** Keep going after a failed step (default false: stop at the first failed expectation). */
  keepGoing?: boolean;
  /** Reset the session (session.reset with the seed) before creating the devices (default true). */
  reset?: boolean;
}

export interface StepReport {
  index: number;            // 0-based position in steps
  number: number;           // 1-based, as in messages ("step 4")
  cmd: string;
  note?: string;
  ok: boolean;
  failures: string[];       // why the step failed (empty when ok)
  command?: Command;        // the resolved command as executed
  result?: unknown;
  error?: { code: string; message: string };
  events: number;           // events drained during the step
}

export interface ScenarioReport {
  name: string;
  file?: string;
  seed: number;
  passed: boolean;
  steps: StepReport[];
  stepsTotal: number;
  stepsRun: number;
  failedStep?: number;      // 1-based (0: setup)
  failure?: string;         // "step 7 (cq.poll) expect.wc.0.status: expected IBV_WC_REM_ACCESS_ERR (10), got IBV_WC_SUCCESS (0)"
  digest: string;           // sha256 of the canonical event log
  events: number;
  packets: number;
}

interface Sym { kind: ObjectKind; handle?: number; fields: Record<string, bigint>; qpNum?: number }

const MAX_U64 = (1n << 64n) - 1n;
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Canonical JSON: sorted keys, bigints as decimal strings, typed arrays as hex. */
export function canonical(v: unknown): string {
  if (v === undefined) return 'null';
  if (typeof v === 'bigint') return JSON.stringify(v.toString());
  if (v instanceof Uint8Array) return JSON.stringify(bytesToHex(v));
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObj(v)) {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** A result without its wall-clock measurements (fields named wall…, e.g. the SG lab's wallNs): they differ from
 *  run to run, so the digest leaves them out as it leaves out event times. */
function withoutWallClock(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutWallClock);
  if (!isObj(v)) return v;
  return Object.fromEntries(Object.entries(v).filter(([k]) => !/^wall[A-Z]/.test(k)).map(([k, x]) => [k, withoutWallClock(x)]));
}

/** The part of an event that is reproducible: no sequence numbers, no times. */
function canonicalEvent(e: DeviceEvent): string {
  const { seq: _s, t: _t, pkt, ...rest } = e as DeviceEvent & Record<string, unknown>;
  const out: Record<string, unknown> = { ...rest };
  if (pkt) {
    const b = packetBytes(e);
    out.pkt = b ? bytesToHex(b) : pkt;
  }
  for (const k of Object.keys(out)) if (/^(t|time|timeNs|time_ns|wall.*|ms)$/.test(k)) delete out[k];
  return canonical(out);
}

export class ScenarioRun {
  readonly scenario: Scenario;
  readonly seed: number;
  private ex: Executor | AsyncExecutor;
  private opts: RunOptions;
  private syms = new Map<string, Sym>();
  private pos = -1;          // -1: not started; otherwise the index of the next step
  private failed?: { step: number; why: string };
  private reports: StepReport[] = [];
  private hash = new Sha256();
  private eventCount = 0;
  private packetCount = 0;
  private stepEvents: DeviceEvent[] = [];

  constructor(scenario: Scenario, executor: Executor | AsyncExecutor, opts: RunOptions = {}) {
    this.scenario = scenario;
    this.ex = executor;
    this.opts = opts;
    this.seed = opts.seed ?? scenario.seed;
  }

  /** Index (0-based) of the next step to run; steps.length when finished. */
  get position(): number { return Math.max(0, this.pos); }
  get done(): boolean { return this.pos >= this.scenario.steps.length || (!!this.failed && !this.opts.keepGoing); }
  get failure(): { step: number; why: string } | undefined { return this.failed; }
  /** Handle of a named object (for the GUI: highlight what a step touches). */
  handleOf(name: string): number | undefined { return this.syms.get(name)?.handle; }
  names(): ReadonlyMap<string, { kind: ObjectKind; handle?: number }> { return this.syms; }

  // ---------------------------------------------------------------- execution plumbing
  private *exec(c: Command): Gen<ExecResult> {
    const r = (yield { t: 'exec', c }) as ExecResult;
    // session.* results describe the executor's history (reset epochs, live objects), not the scenario: left out
    const result = c.cmd.startsWith('session.') ? undefined : r.ok ? r.result : undefined;
    this.hash.update(canonical({ cmd: c.cmd, args: c.args, ok: r.ok, ...(r.ok ? { result: withoutWallClock(result) } : { error: r.error.code }) }));
    this.hash.update('\n');
    yield* this.drain();
    return r;
  }

  private *drain(): Gen<void> {
    for (;;) {
      const evs = (yield { t: 'drain' }) as DeviceEvent[];
      if (!evs.length) return;
      for (const e of evs) {
        this.hash.update(canonicalEvent(e)); this.hash.update('\n');
        this.eventCount++;
        if (kindKey(e.kind) === 'packetsent') this.packetCount++;
        this.stepEvents.push(e);
        this.observe(e);
      }
    }
  }

  private *start(): Gen<string | null> {
    this.pos = 0;
    if (this.opts.reset !== false) {
      const r = yield* this.exec({ cmd: 'session.reset', args: { seed: this.seed } });
      if (!r.ok) return `session.reset: ${r.error.code}: ${r.error.message}`;
    }
    for (const d of this.scenario.devices) {
      const r = yield* this.exec({ cmd: 'device.create', args: { profile: d.profile, name: d.name } });
      if (!r.ok) return `devices: cannot create "${d.name}" (profile "${d.profile}"): ${r.error.code}: ${r.error.message}`;
      const h = handleOf(r.result, 'device');
      if (h === undefined) return `devices: device.create for "${d.name}" returned no handle`;
      this.syms.set(d.name, { kind: 'device', handle: h, fields: { ...numericFields(r.result), handle: BigInt(h) } });
    }
    this.stepEvents = [];
    return null;
  }

  // ---------------------------------------------------------------- name and reference resolution
  private refValue(text: string): bigint {
    const ref = parseRef(text);
    if (!ref) throw new Error(`bad reference ${text}`);
    const s = this.syms.get(ref.name);
    if (!s) throw new Error(`reference ${text}: "${ref.name}" is not defined (its step failed or did not run)`);
    let v = s.fields[ref.field];
    if (v === undefined) throw new Error(`reference ${text}: the result of "${ref.name}" has no numeric field "${ref.field}" (has: ${Object.keys(s.fields).join(', ') || 'none'})`);
    if (ref.op === '+') v = (v + ref.operand!) & MAX_U64;
    else if (ref.op === '-') v = (v - ref.operand! + (1n << 64n)) & MAX_U64;
    else if (ref.op === '^') v = v ^ ref.operand!;
    return v;
  }

  private resolve(v: unknown, key?: string): unknown {
    if (typeof v === 'string') {
      if (v.startsWith('$')) {
        const b = this.refValue(v);
        return b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : `0x${b.toString(16)}`;
      }
      if (key && HANDLE_FIELDS[key]) {
        const s = this.syms.get(v);
        if (!s || s.handle === undefined) throw new Error(`"${v}" is not defined (its step failed or did not run)`);
        return s.handle;
      }
      return v;
    }
    if (Array.isArray(v)) return v.map((x) => this.resolve(x));
    if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.resolve(x, k)]));
    return v;
  }

  // ---------------------------------------------------------------- stepping
  // ---------------------------------------------------------------- drivers
  private static execError(e: unknown): ExecResult {
    return { ok: false, error: { code: 'EXCEPTION', message: String((e as Error)?.message ?? e) } };
  }
  private driveSync<T>(g: Gen<T>): T {
    const ex = this.ex;
    let r = g.next();
    while (!r.done) {
      const req = r.value;
      let resp: unknown;
      try { resp = req.t === 'exec' ? ex.exec(req.c) : ex.drainEvents(); } catch (e) { resp = req.t === 'exec' ? ScenarioRun.execError(e) : []; }
      if (resp instanceof Promise) throw new Error('this executor is asynchronous: use stepAsync(), runToAsync() or runAsync()');
      r = g.next(resp);
    }
    return r.value;
  }
  private async driveAsync<T>(g: Gen<T>): Promise<T> {
    const ex = this.ex;
    let r = g.next();
    while (!r.done) {
      const req = r.value;
      let resp: unknown;
      try { resp = req.t === 'exec' ? await ex.exec(req.c) : await ex.drainEvents(); } catch (e) { resp = req.t === 'exec' ? ScenarioRun.execError(e) : []; }
      r = g.next(resp);
    }
    return r.value;
  }

  /** Run the setup (session.reset, the devices) without running a step; false when it failed (see failure). */
  begin(): boolean { return this.driveSync(this.beginG()); }
  private *beginG(): Gen<boolean> {
    if (this.pos >= 0) return !this.failed;
    const why = yield* this.start();
    if (why) { this.failed = { step: 0, why: `setup: ${why}` }; this.pos = this.scenario.steps.length; }
    return !why;
  }

  /** Run the next step; null when finished (or stopped at a failure). */
  step(): StepReport | null { return this.driveSync(this.stepG()); }
  /** step() for an asynchronous executor. */
  stepAsync(): Promise<StepReport | null> { return this.driveAsync(this.stepG()); }

  private *stepG(): Gen<StepReport | null> {
    if (this.pos < 0) {
      const why = yield* this.start();
      if (why) {
        this.failed = { step: 0, why: `setup: ${why}` };
        this.pos = this.scenario.steps.length;
        return null;
      }
    }
    if (this.done) return null;
    const i = this.pos++;
    const st = this.scenario.steps[i]!;
    const rep = yield* this.runStep(i, st);
    this.reports.push(rep);
    if (!rep.ok && !this.failed) this.failed = { step: i + 1, why: `step ${i + 1} (${st.cmd}) ${rep.failures[0]}` };
    return rep;
  }

  /** Run up to and including step `n` (1-based); stops early at the first failure. */
  runTo(n: number): StepReport[] {
    const out: StepReport[] = [];
    while (!this.done && this.pos < n) {
      const r = this.step();
      if (!r) break;
      out.push(r);
      if (!r.ok && !this.opts.keepGoing) break;
    }
    return out;
  }

  /** runTo() for an asynchronous executor. */
  async runToAsync(n: number): Promise<StepReport[]> {
    const out: StepReport[] = [];
    while (!this.done && this.pos < n) {
      const r = await this.stepAsync();
      if (!r) break;
      out.push(r);
      if (!r.ok && !this.opts.keepGoing) break;
    }
    return out;
  }

  /** Run every remaining step and return the report. */
  run(): ScenarioReport {
    this.runTo(this.scenario.steps.length);
    if (this.pos < 0) this.step();
    return this.report();
  }
  /** run() for an asynchronous executor. */
  async runAsync(): Promise<ScenarioReport> {
    await this.runToAsync(this.scenario.steps.length);
    if (this.pos < 0) await this.stepAsync();
    return this.report();
  }

  report(): ScenarioReport {
    const digest = this.hash.clone().digestHex();
    return {
      name: this.scenario.name,
      seed: this.seed,
      passed: !this.failed && this.pos >= this.scenario.steps.length,
      steps: this.reports,
      stepsTotal: this.scenario.steps.length,
      stepsRun: this.reports.length,
      failedStep: this.failed?.step,
      failure: this.failed?.why,
      digest,
      events: this.eventCount,
      packets: this.packetCount,
    };
  }

  private *runStep(i: number, st: Step): Gen<StepReport> {
    this.stepEvents = [];
    const rep: StepReport = { index: i, number: i + 1, cmd: st.cmd, note: st.note, ok: true, failures: [], events: 0 };
    const fail = (field: string, msg: string) => { rep.ok = false; rep.failures.push(`${field ? `${field}: ` : ''}${msg}`); };
    // resolve and validate against the live protocol
    let command: Command;
    try {
      const args = this.resolve(st.args);
      const parsed = Command.safeParse({ cmd: st.cmd, args });
      if (!parsed.success) {
        const d = describeZodError(parsed.error);
        fail(d.field ?? 'args', d.message.replace(/^[^:]*: /, ''));
        return rep;
      }
      command = parsed.data;
    } catch (e) {
      fail('args', (e as Error).message);
      return rep;
    }
    rep.command = command;
    if (st.capture) {
      try {
        const fields: Record<string, bigint> = {};
        for (const [f, ref] of Object.entries(st.capture.fields)) fields[f] = this.refValue(ref);
        this.syms.set(st.capture.as, { kind: 'result', fields });
      } catch (e) {
        fail('capture', (e as Error).message);
        return rep;
      }
    }
    const net = networkStepReason(command.cmd, command.args);
    if (net) { fail('', net); return rep; }
    const r = yield* this.exec(command);
    const ex = st.expect ?? {};
    if (r.ok) rep.result = r.result; else rep.error = { code: r.error.code, message: r.error.message };

    if (ex.error) {
      if (r.ok) fail('expect.error', `expected the verb to fail with ${ex.error}, but it succeeded`);
      else if (r.error.code !== ex.error) fail('expect.error', `expected ${ex.error}, got ${r.error.code}: ${r.error.message}`);
    } else if (!r.ok) {
      fail('', `${r.error.code}: ${r.error.message}`);
    }

    if (r.ok) this.record(st, command, r.result);
    try {
      if (rep.ok) yield* this.checkExpect(st, ex, r, fail);
    } catch (e) {
      fail('expect', (e as Error).message);
    }
    rep.events = this.stepEvents.length;
    return rep;
  }

  /** Remember what the step created or changed, for later names and references. */
  private record(st: Step, c: Command, result: unknown) {
    const kind = CREATES[st.cmd];
    if (st.as) {
      const h = kind ? handleOf(result, kind) : undefined;
      const fields = numericFields(result);
      if (h !== undefined) fields.handle = BigInt(h);
      if (kind === 'qp') {
        const n = toBig(field(result, 'qpNum')) ?? toBig(field(result, 'qpn'));
        if (n !== undefined) fields.qpNum = n;
      }
      this.syms.set(st.as, { kind: kind ?? 'result', handle: h, fields });
      const state = field(result, 'state');
      if (h !== undefined && (kind === 'mr' || kind === 'mw') && typeof state === 'string') this.keyStates.set(h, state);
    }
    const byHandle = (h: unknown) => [...this.syms.values()].find((s) => s.handle === h && s.kind !== 'result');
    // re-registration and binds change keys: keep the named object's fields current
    if (c.cmd === 'mr.rereg') {
      const s = byHandle(c.args.mr);
      if (s) Object.assign(s.fields, numericFields(result));
    } else if (c.cmd === 'mw.bind') {
      const s = byHandle(c.args.mw);
      if (s) {
        const n = typeof result === 'number' ? BigInt(result) : toBig(field(result, 'rkey'));
        if (n !== undefined) s.fields.rkey = n;
      }
    }
  }

  private num(v: number | string): bigint {
    if (typeof v === 'string' && v.startsWith('$')) return this.refValue(v);
    return toBig(v)!;
  }

  private *checkExpect(st: Step, ex: Expect, r: ExecResult, fail: (f: string, m: string) => void): Gen<void> {
    if (ex.wc) {
      const got = r.ok ? wcsOf(r.result) : [];
      if (got.length !== ex.wc.length) {
        fail('expect.wc', `expected ${ex.wc.length} completion${ex.wc.length === 1 ? '' : 's'}, polled ${got.length}${got.length ? ` (${got.map((w) => describeWc(w)).join('; ')})` : ''}`);
      }
      for (let k = 0; k < Math.min(got.length, ex.wc.length); k++) {
        const w = got[k]!, e = ex.wc[k]!;
        const p = `expect.wc.${k}`;
        const st0 = enumField(w, 'status', WcStatus);
        if (st0.num !== WcStatus.values[e.status]) fail(`${p}.status`, `expected ${e.status} (${WcStatus.values[e.status]}), got ${WcStatus.name(st0.num ?? -1)} (${st0.num})`);
        if (e.opcode) {
          const op = enumField(w, 'opcode', WcOpcode);
          if (op.num !== WcOpcode.values[e.opcode]) fail(`${p}.opcode`, `expected ${e.opcode} (${WcOpcode.values[e.opcode]}), got ${WcOpcode.name(op.num ?? -1)} (${op.num})`);
        }
        const cmpNum = (key: string, want: number | string | undefined) => {
          if (want === undefined) return;
          const exp = this.num(want), got1 = toBig(field(w, key));
          if (got1 !== exp) fail(`${p}.${key}`, `expected ${fmt(exp)}, got ${got1 === undefined ? 'nothing' : fmt(got1)}`);
        };
        cmpNum('byteLen', e.byteLen);
        cmpNum('wrId', e.wrId);
        cmpNum('immData', e.immData);
        cmpNum('invalidatedRkey', e.invalidatedRkey);
        if (e.wcFlags || e.wcFlagsSet || e.wcFlagsClear) {
          const bits = (ns: readonly string[]) => ns.reduce((a, n) => a | (WcFlag.values as Record<string, number>)[n]!, 0);
          const gotB = toBig(field(w, 'wcFlags'));
          const g = gotB === undefined ? undefined : Number(gotB);
          const names = (v: number) => WcFlag.names.filter((n) => v & (WcFlag.values as Record<string, number>)[n]!).join('|') || '0';
          const show = g === undefined ? 'nothing' : `${names(g)} (${g})`;
          if (e.wcFlags && g !== bits(e.wcFlags)) fail(`${p}.wcFlags`, `expected ${e.wcFlags.join('|') || '0'} (${bits(e.wcFlags)}), got ${show}`);
          if (e.wcFlagsSet && (g === undefined || (g & bits(e.wcFlagsSet)) !== bits(e.wcFlagsSet))) fail(`${p}.wcFlagsSet`, `expected ${e.wcFlagsSet.join('|')} set, got ${show}`);
          if (e.wcFlagsClear && (g === undefined || (g & bits(e.wcFlagsClear)) !== 0)) fail(`${p}.wcFlagsClear`, `expected ${e.wcFlagsClear.join('|')} clear, got ${show}`);
        }
        if (e.qp) {
          const s = this.syms.get(e.qp);
          const gotQ = toBig(field(w, 'qpNum'));
          if (s?.fields.qpNum !== undefined && gotQ !== s.fields.qpNum) fail(`${p}.qp`, `expected qp_num ${fmt(s.fields.qpNum)} (${e.qp}), got ${gotQ === undefined ? 'nothing' : fmt(gotQ)}`);
        }
      }
    }
    if (ex.result) {
      const want = this.resolve(ex.result);
      const why = partialMatch(want, r.ok ? r.result : undefined, 'expect.result');
      if (why) fail(why.field, why.msg);
    }
    for (const [k, a] of (ex.asyncEvent ?? []).entries()) {
      const code = EventType.values[a.type];
      const h = a.obj ? this.syms.get(a.obj)?.handle : undefined;
      const seen = this.stepEvents.filter((e) => kindKey(e.kind) === 'asyncevent');
      const hit = seen.find((e) => e.a === code && (h === undefined || e.obj === h));
      if (!hit) fail(`expect.asyncEvent.${k}`, `expected ${a.type}${a.obj ? ` on ${a.obj}` : ''}; async events during the step: ${seen.map((e) => `${EventType.name(e.a)} on ${e.objKind} ${e.obj}`).join(', ') || 'none'}`);
    }
    for (const [k, a] of (ex.noAsyncEvent ?? []).entries()) {
      const code = EventType.values[a.type];
      const h = a.obj ? this.syms.get(a.obj)?.handle : undefined;
      if (a.obj && h === undefined) { fail(`expect.noAsyncEvent.${k}`, `"${a.obj}" has no handle`); continue; }
      const hit = this.stepEvents.find((e) => kindKey(e.kind) === 'asyncevent' && e.a === code && (h === undefined || e.obj === h));
      if (hit) fail(`expect.noAsyncEvent.${k}`, `${a.type} was raised on ${hit.objKind} ${hit.obj} during the step`);
    }
    if (ex.badWr !== undefined) {
      const got = r.ok ? undefined : r.error.badWr;
      if (r.ok) fail('expect.badWr', `expected work request ${ex.badWr} to be refused, but the post succeeded`);
      else if (got !== ex.badWr) fail('expect.badWr', `expected bad_wr ${ex.badWr}, got ${got === undefined ? 'none (the post was refused before any work request)' : got}`);
    }
    for (const [k, p] of (ex.packet ?? []).entries()) {
      const dev = p.from ? this.syms.get(p.from)?.handle : undefined;
      const pkts = this.stepEvents.filter((e) => kindKey(e.kind) === 'packetsent' && (dev === undefined || e.device === dev))
        .map((e) => packetBytes(e)).filter((b): b is Uint8Array => !!b && b.length >= 12);
      const match = pkts.filter((b) => b[0] === BthOpcode[p.opcode] && (p.syndrome === undefined || syndromeName(b) === p.syndrome));
      const ok = p.count === undefined ? match.length >= (p.min ?? 1) : match.length === p.count;
      if (!ok) {
        fail(`expect.packet.${k}`, `expected ${p.count === undefined ? `at least ${p.min ?? 1}` : p.count} ${p.opcode}${p.syndrome ? ` ${p.syndrome}` : ''} packet${p.count === 1 ? '' : 's'}, saw ${match.length}; packets${p.from ? ` from ${p.from}` : ''} during the step: ${pkts.map(describePacket).join(', ') || 'none'}`);
      }
    }
    for (const [k, b] of (ex.bytes ?? []).entries()) {
      const addr = this.num(b.addr);
      const want = hexToBytes(b.hex);
      const read = Command.safeParse({ cmd: 'memory.read', args: { addr: Number(addr), length: want.length } });
      if (!read.success || addr > BigInt(Number.MAX_SAFE_INTEGER)) { fail(`expect.bytes.${k}`, `cannot read ${want.length} bytes at 0x${addr.toString(16)}: ${read.success ? 'address too large' : describeZodError(read.error).message}`); continue; }
      const rr = yield* this.exec(read.data);
      if (!rr.ok) { fail(`expect.bytes.${k}`, `memory.read at 0x${addr.toString(16)} failed: ${rr.error.code}: ${rr.error.message}`); continue; }
      const got = bytesOf(rr.result);
      if (!got) { fail(`expect.bytes.${k}`, 'memory.read returned no bytes'); continue; }
      const gh = bytesToHex(got), wh = b.hex.toLowerCase();
      if (gh !== wh) {
        let at = 0; while (at < want.length && got[at] === want[at]) at++;
        fail(`expect.bytes.${k}`, `at 0x${addr.toString(16)}: expected ${wh}, got ${gh} (first difference at byte ${at})`);
      }
    }
    for (const [k, q] of (ex.qpState ?? []).entries()) {
      const h = this.syms.get(q.qp)?.handle;
      if (h === undefined) { fail(`expect.qpState.${k}`, `"${q.qp}" has no handle`); continue; }
      const rr = yield* this.exec({ cmd: 'qp.query', args: { qp: h } });
      if (!rr.ok) { fail(`expect.qpState.${k}`, `qp.query failed: ${rr.error.code}: ${rr.error.message}`); continue; }
      const s = qpStateOf(rr.result, QpState);
      if (s.num !== QpState.values[q.state]) fail(`expect.qpState.${k}`, `${q.qp}: expected ${q.state}, got ${s.name ?? QpState.name(s.num ?? -1)}`);
    }
    for (const [k, ks] of (ex.keyState ?? []).entries()) {
      const got = this.keyState(ks.key);
      if (got === undefined) fail(`expect.keyState.${k}`, `the state of "${ks.key}" is not observable: no event reported it`);
      else if (got !== ks.state) fail(`expect.keyState.${k}`, `${ks.key}: expected ${ks.state}, got ${got}`);
    }
  }

  /**
   * Keys and states change inside the device (REG_MR and BIND_MW work requests, invalidation, re-registration):
   * follow the object events so that "$mwB.rkey" and keyState see the device's current values. The events say
   * it in typed fields (results.ts keyEvent: `keyState`, and `change` for which keys are new); ObjectDestroyed
   * makes a key invalid.
   */
  private observe(e: DeviceEvent) {
    if (e.objKind !== 'mr' && e.objKind !== 'mw') return;
    if (kindKey(e.kind) === 'objectdestroyed') { this.keyStates.set(e.obj, 'invalid'); return; }
    const k = keyEvent(e);
    if (!k) return;
    if (k.state) this.keyStates.set(e.obj, k.state);
    const sym = [...this.syms.values()].find((s) => s.handle === e.obj && s.kind === e.objKind);
    if (!sym) return;
    if (k.lkey !== undefined && e.objKind === 'mr') sym.fields.lkey = k.lkey;
    if (k.rkey !== undefined) sym.fields.rkey = k.rkey;
  }

  /** Latest state of an MR/MW: from its creating result, then from its object events. */
  private keyStates = new Map<number, string>();
  private keyState(name: string): string | undefined {
    const s = this.syms.get(name);
    if (s?.handle === undefined) return undefined;
    return this.keyStates.get(s.handle);
  }
}

const fmt = (b: bigint) => (b > 9n ? `${b} (0x${b.toString(16)})` : String(b));

function describeWc(w: Record<string, unknown>): string {
  const s = enumField(w, 'status', WcStatus), o = enumField(w, 'opcode', WcOpcode);
  return `${WcStatus.name(s.num ?? -1)} ${s.num === 0 ? WcOpcode.name(o.num ?? -1) : ''}`.trim();
}

const AETH_OPCODES = new Set([0x0d, 0x0f, 0x10, 0x11, 0x12]);
export function syndromeName(b: Uint8Array): string | undefined {
  if (!AETH_OPCODES.has(b[0]!) || b.length < 16) return undefined;
  const syn = b[12]!;
  const type = (syn >> 5) & 3, code = syn & 0x1f;
  if (type === 0) return 'ACK';
  if (type === 1) return 'RNR_NAK';
  if (type === 3) return SyndromeNames[2 + code] ?? `NAK_${code}`;
  return `RESERVED_${syn.toString(16)}`;
}
function describePacket(b: Uint8Array): string {
  const s = syndromeName(b);
  return `${bthOpcodeId(b[0]!) ?? `0x${b[0]!.toString(16)}`}${s ? ` ${s}` : ''}`;
}

function partialMatch(want: unknown, got: unknown, path: string): { field: string; msg: string } | null {
  if (isObj(want)) {
    if (!isObj(got)) return { field: path, msg: `expected an object, got ${JSON.stringify(got)}` };
    for (const [k, v] of Object.entries(want)) {
      const g = field(got, k);
      const r = partialMatch(v, g, `${path}.${k}`);
      if (r) return r;
    }
    return null;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) return { field: path, msg: `expected ${want.length} items, got ${Array.isArray(got) ? got.length : JSON.stringify(got)}` };
    for (let i = 0; i < want.length; i++) { const r = partialMatch(want[i], got[i], `${path}.${i}`); if (r) return r; }
    return null;
  }
  const wb = toBig(want), gb = toBig(got);
  if (wb !== undefined && gb !== undefined) return wb === gb ? null : { field: path, msg: `expected ${fmt(wb)}, got ${fmt(gb)}` };
  return want === got ? null : { field: path, msg: `expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}` };
}

// ---------------------------------------------------------------- convenience API
export type ScenarioInput = string | Scenario | Record<string, unknown>;

/** Load (text or object), validate and run a scenario to the end (or its first failure). */
export function runScenario(input: ScenarioInput, executor: Executor, opts: RunOptions & { file?: string } = {}): ScenarioReport & { loadError?: LoadError } {
  const loaded = typeof input === 'string' ? parseScenarioText(input, opts.file) : validateScenario(input, opts.file);
  if (!loaded.ok) {
    return {
      name: opts.file ?? 'scenario', file: opts.file, seed: opts.seed ?? 0, passed: false, steps: [], stepsTotal: 0, stepsRun: 0,
      failedStep: loaded.error.step, failure: loaded.error.message, digest: '', events: 0, packets: 0, loadError: loaded.error,
    };
  }
  const rep = new ScenarioRun(loaded.scenario, executor, opts).run();
  return { ...rep, file: opts.file };
}
