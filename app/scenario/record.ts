// Recording: turn live commands (numeric handles, literal keys and addresses) and their outcomes into a
// scenario with object names and references, so that the recording replays on a fresh session where handles,
// key bytes and addresses may differ. Framework-free: the console's recorder panel feeds it every command it
// executes (and, optionally, the event stream), then saves toScenario()/toJSON().
//
//   const rec = new ScenarioRecorder({ name: 'my lab' });
//   rec.record(command, outcome);          // after every exec; returns the step index (or null if not recorded)
//   rec.observe(events);                   // optional: keeps keys current across BIND_MW / REG_MR / invalidation
//   rec.addExpectation(i, rec.expectFromOutcome(i));   // "expect this" from what is on screen
//   const json = rec.toJSON();
import type { Command, DeviceEvent } from '../protocol/index.ts';
import type { ExecResult } from '../host/api.ts';
import {
  CREATES, DEVICE_NAME_RE, HANDLE_FIELDS, SCENARIO_VERSION, type Expect, type ObjectKind, type Scenario, type Step,
} from '../protocol/scenario.ts';
import { field, handleOf, keyEvent, kindKey, qpStateOf, toBig, wcsOf, enumField } from './results.ts';
import { QpState, WcOpcode, WcStatus } from '../protocol/enums.ts';
import { isRecorded } from '../protocol/commands.ts';
import { KIND_FACTS } from '../protocol/labs.ts';
import { validateScenario, type LoadError } from './load.ts';

type Kind = Exclude<ObjectKind, 'result'>;
interface Obj { name: string; kind: Kind; handle: number; device?: number; fields: Record<string, bigint> }
interface Recorded { step: Step; outcome: ExecResult }

const KEY_FIELDS: Record<string, 'lkey' | 'rkey'> = { lkey: 'lkey', rkey: 'rkey', invalidateRkey: 'rkey', bindRkey: 'rkey' };
const ADDR_FIELDS = new Set(['addr', 'remoteAddr', 'bindAddr']);
const QPN_FIELDS = new Set(['destQpNum', 'remoteQpn']);

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export interface RecorderOptions { name?: string; description?: string; seed?: number }

export class ScenarioRecorder {
  name: string;
  description: string;
  seed: number;
  private devices: { name: string; profile: string }[] = [];
  private steps: Recorded[] = [];
  private objs = new Map<number, Obj>();          // by handle
  private used = new Set<string>();
  private counters = new Map<string, number>();
  private ahDevice = new Map<number, number>();  // ah handle -> destination device handle
  private localDevice: number | undefined;       // device of the QP the command being symbolized posts on
  private autorun = false;

  constructor(opts: RecorderOptions = {}) {
    this.name = opts.name ?? 'recorded session';
    this.description = opts.description ?? '';
    this.seed = opts.seed ?? 1;
  }

  get length(): number { return this.steps.length; }
  /** The name given to a live handle, if any. */
  nameOf(handle: number): string | undefined { return this.objs.get(handle)?.name; }

  private fresh(kind: Kind, wanted?: string): string {
    if (wanted && !this.used.has(wanted) && (kind !== 'device' || DEVICE_NAME_RE.test(wanted))) { this.used.add(wanted); return wanted; }
    const p = KIND_FACTS[kind].prefix;
    let n = this.counters.get(p) ?? 0;
    while (this.used.has(`${p}${n}`)) n++;
    this.counters.set(p, n + 1);
    this.used.add(`${p}${n}`);
    return `${p}${n}`;
  }

  /** Record one executed live command and its outcome. Returns the step index, or null if not recorded. */
  record(command: Command, outcome: ExecResult, note?: string): number | null {
    if (!isRecorded(command.cmd)) return null;   // observation, session control (the descriptors' recorded)
    if (command.cmd === 'engine.autorun') {
      // autorun advances the engine in the background at wall-clock pace; a replay cannot reproduce that
      // timing, so while it is on every recorded command is preceded by an engine.run (run until idle)
      if (outcome.ok) this.autorun = command.args.on;
      return null;
    }
    if (this.autorun && !command.cmd.startsWith('engine.') && command.cmd !== 'session.reset' && command.cmd !== 'device.create') {
      const last = this.steps[this.steps.length - 1]?.step;
      if (last && last.cmd !== 'engine.run') {
        this.steps.push({ step: { cmd: 'engine.run', args: { maxSteps: 1_000_000 }, note: 'the engine was on autorun' }, outcome: { ok: true, result: {} } });
      }
    }
    if (command.cmd === 'session.reset') {
      this.steps = []; this.devices = []; this.objs.clear(); this.used.clear(); this.counters.clear(); this.ahDevice.clear();
      this.autorun = false;
      if (command.args.seed !== undefined) this.seed = command.args.seed;
      return null;
    }
    if (command.cmd === 'device.create') {
      if (!outcome.ok) return null;   // a device that was never created is not part of the lab
      const h = handleOf(outcome.result, 'device');
      if (h === undefined) return null;
      const name = this.fresh('device', command.args.name);
      this.devices.push({ name, profile: command.args.profile });
      this.objs.set(h, { name, kind: 'device', handle: h, fields: {} });
      return null;
    }
    const qph = (command.args as { qp?: unknown }).qp;
    this.localDevice = typeof qph === 'number' ? this.objs.get(qph)?.device : undefined;
    const args = this.symbolize(command.args as Record<string, unknown>, undefined, command);
    const step: Step = { cmd: command.cmd, args: args as Record<string, unknown> };
    if (note) step.note = note;
    const kind = CREATES[command.cmd] as Kind | undefined;
    if (outcome.ok && kind) {
      const h = handleOf(outcome.result, kind);
      if (h !== undefined) {
        const name = this.fresh(kind);
        let device = kind === 'qp' ? toNum(field(outcome.result, 'device')) : kind === 'cq' || kind === 'pd' ? toNum((command.args as { device?: number }).device) : undefined;
        const pdh = (command.args as { pd?: unknown }).pd;
        if (device === undefined && typeof pdh === 'number') device = this.objs.get(pdh)?.device;
        const o: Obj = { name, kind, handle: h, device, fields: numeric(outcome.result) };
        if (kind === 'qp') { const qpn = toBig(field(outcome.result, 'qpNum')); if (qpn !== undefined) o.fields.qpNum = qpn; }
        this.objs.set(h, o);
        step.as = name;
        if (command.cmd === 'ah.create') this.ahDevice.set(h, command.args.destDevice);
      }
    }
    if (!outcome.ok) step.expect = { error: outcome.error.code };
    if (outcome.ok) this.track(command, outcome.result);
    this.steps.push({ step, outcome });
    return this.steps.length - 1;
  }

  /** Keep keys current from the device's own events (REG_MR, binds, re-registration), like the runner does. */
  observe(events: readonly DeviceEvent[]) {
    for (const e of events) {
      const k = keyEvent(e);
      const o = k && this.objs.get(e.obj);
      if (!o) continue;
      if (k.lkey !== undefined && e.objKind === 'mr') o.fields.lkey = k.lkey;
      if (k.rkey !== undefined) o.fields.rkey = k.rkey;
    }
  }

  private track(c: Command, result: unknown) {
    if (c.cmd === 'mr.rereg') { const o = this.objs.get(c.args.mr); if (o) Object.assign(o.fields, numeric(result)); }
    if (c.cmd === 'mw.bind') { const o = this.objs.get(c.args.mw); const k = toBig(field(result, 'rkey')); if (o && k !== undefined) o.fields.rkey = k; }
    if (c.cmd === 'post.send') {
      for (const w of c.args.wrs) {
        if (w.opcode === 'IBV_WR_BIND_MW' && w.mw !== undefined && w.bindRkey !== undefined) { const o = this.objs.get(w.mw); if (o) o.fields.rkey = BigInt(w.bindRkey); }
        if (w.opcode === 'IB_WR_REG_MR' && w.regMr !== undefined && w.regKey !== undefined) {
          const o = this.objs.get(w.regMr);
          if (o) for (const k of ['lkey', 'rkey'] as const) if (o.fields[k] !== undefined) o.fields[k] = (o.fields[k]! & ~0xffn) | BigInt(w.regKey);
        }
      }
    }
    if (c.cmd === 'mr.dereg' || c.cmd === 'mw.dealloc') {
      // the name stays (later steps may still use the stale key on purpose); nothing to do
    }
  }

  /** Live args -> scenario args: handles to names, keys/addresses/QP numbers to references. */
  private symbolize(v: unknown, key: string | undefined, c: Command, ctx: Record<string, unknown> = {}): unknown {
    if (Array.isArray(v)) return v.map((x) => this.symbolize(x, undefined, c, ctx));
    if (isObj(v)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = this.symbolize(x, k, c, v);
      return out;
    }
    if (typeof v !== 'number' || !key) return v;
    if (HANDLE_FIELDS[key]) { const o = this.objs.get(v); return o && o.kind === HANDLE_FIELDS[key] ? o.name : v; }
    const kf = KEY_FIELDS[key];
    if (kf) {
      // an rkey in a work request names the peer's key (except LOCAL_INV / BIND_MW, which are local)
      const op = (ctx as { opcode?: string }).opcode;
      const remote = c.cmd === 'post.send' && kf === 'rkey' && key !== 'bindRkey' && op !== 'IBV_WR_LOCAL_INV';
      return this.keyRef(v, kf, remote) ?? v;
    }
    if (ADDR_FIELDS.has(key)) return this.addrRef(v) ?? v;
    if (QPN_FIELDS.has(key)) {
      const dev = key === 'remoteQpn' ? this.ahDevice.get(ctx.ah as number) : (ctx.destDevice as number | undefined);
      return this.qpnRef(v, dev) ?? v;
    }
    return v;
  }

  private keyRef(v: number, kind: 'lkey' | 'rkey', remote = false): string | undefined {
    const b = BigInt(v);
    // keys of different devices can share an index: look first on the side the key belongs to
    const here = this.localDevice;
    const rank = (o: Obj) => (here === undefined || o.device === undefined ? 1 : (o.device === here) !== remote ? 0 : 2);
    const keyed = [...this.objs.values()].filter((o) => o.kind === 'mr' || o.kind === 'mw').sort((x, y) => rank(x) - rank(y));
    const order = kind === 'lkey' ? ['lkey', 'rkey'] : ['rkey', 'lkey'];
    for (const f of order) for (const o of keyed) if (o.fields[f] === b) return `$${o.name}.${f}`;
    // same 24-bit index, another key byte: a deliberately stale or wrong key
    for (const o of keyed) {
      const k = o.fields[kind] ?? o.fields.rkey;
      if (k !== undefined && (k >> 8n) === (b >> 8n)) return `$${o.name}.${kind in o.fields ? kind : 'rkey'}^0x${(k ^ b).toString(16)}`;
    }
    return undefined;
  }

  private addrRef(v: number): string | undefined {
    const b = BigInt(v);
    for (const o of this.objs.values()) {
      if (o.kind !== 'buffer') continue;
      const a = o.fields.addr, len = o.fields.length;
      if (a === undefined || len === undefined) continue;
      if (b >= a && b <= a + len) return b === a ? `$${o.name}.addr` : `$${o.name}.addr+${b - a}`;
    }
    return undefined;
  }

  private qpnRef(v: number, dev: number | undefined): string | undefined {
    const b = BigInt(v);
    const hits = [...this.objs.values()].filter((o) => o.kind === 'qp' && o.fields.qpNum === b && (dev === undefined || o.device === dev));
    return hits.length === 1 ? `$${hits[0]!.name}.qpNum` : undefined;
  }

  /** Rename an object everywhere (names in handle positions, references, expectations). */
  rename(from: string, to: string): LoadError | null {
    if (!/^[A-Za-z][A-Za-z0-9_]{0,31}$/.test(to)) return { message: `"${to}" is not a valid name` };
    if (this.used.has(to)) return { message: `"${to}" is already used` };
    const o = [...this.objs.values()].find((x) => x.name === from);
    if (!o) return { message: `no object named "${from}"` };
    if (o.kind === 'device' && !DEVICE_NAME_RE.test(to)) return { message: `"${to}" is not a valid device name (lower case)` };
    o.name = to; this.used.delete(from); this.used.add(to);
    const d = this.devices.find((x) => x.name === from); if (d) d.name = to;
    const re = new RegExp(`^\\$${from}\\.`);
    const fix = (v: unknown): unknown => {
      if (typeof v === 'string') return v === from ? to : v.replace(re, `$${to}.`);
      if (Array.isArray(v)) return v.map(fix);
      if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fix(x)]));
      return v;
    };
    for (const r of this.steps) {
      r.step.args = fix(r.step.args) as Record<string, unknown>;
      if (r.step.as === from) r.step.as = to;
      if (r.step.expect) r.step.expect = fix(r.step.expect) as Expect;
    }
    return null;
  }

  setNote(i: number, note: string | undefined) { const r = this.steps[i]; if (r) { if (note) r.step.note = note; else delete r.step.note; } }

  /** Values captured before step i (a replayed scenario's own "capture", which its expectations may refer to). */
  setCapture(i: number, c: Step['capture']) { const r = this.steps[i]; if (r) { if (c) r.step.capture = c; else delete r.step.capture; } }

  /** Remove a step (and nothing else: later references to what it created will be reported by validation). */
  removeStep(i: number) { this.steps.splice(i, 1); }

  /** Merge expectations into step i (arrays are appended, scalars replaced). */
  addExpectation(i: number, ex: Expect) {
    const r = this.steps[i];
    if (!r) return;
    const cur = (r.step.expect ?? {}) as Record<string, unknown>;
    for (const [k, v] of Object.entries(ex)) {
      if (Array.isArray(v) && Array.isArray(cur[k]) && k !== 'wc') cur[k] = [...(cur[k] as unknown[]), ...v];
      else cur[k] = v;
    }
    r.step.expect = cur as Expect;
  }

  /**
   * What the console showed after step i, as an expectation: the error of a failed verb; the completions of a
   * poll (status, opcode and byte_len of successful ones, wr_id); the bytes a memory.read returned; the state a
   * qp.query/qp.modify reported; the CQ of a completion event; the "missed events" of an arm.
   * `only` picks one completion of a poll ("expect this CQE": the poll must return exactly that one).
   */
  expectFromOutcome(i: number, only?: number): Expect {
    const r = this.steps[i];
    if (!r) return {};
    const { step, outcome } = r;
    if (!outcome.ok) return { error: outcome.error.code };
    const res = outcome.result;
    switch (step.cmd) {
      case 'cq.poll': {
        let wcs = wcsOf(res);
        if (only !== undefined) wcs = wcs.slice(only, only + 1);
        return {
          wc: wcs.map((w) => {
            const st = enumField(w, 'status', WcStatus);
            const e: NonNullable<Expect['wc']>[number] = { status: WcStatus.name(st.num ?? -1) as never };
            const wr = field(w, 'wrId');
            if (typeof wr === 'number' || typeof wr === 'string') e.wrId = wr;
            if (st.num === 0) {
              const op = enumField(w, 'opcode', WcOpcode);
              if (op.num !== undefined) e.opcode = WcOpcode.name(op.num) as never;
              const bl = toNum(field(w, 'byteLen'));
              if (bl !== undefined && (op.num === 2 || op.num === 3 || op.num === 4 || (op.num ?? 0) >= 128)) e.byteLen = bl;
              const fl = toNum(field(w, 'wcFlags'));
              if (fl !== undefined && (op.num ?? 0) >= 128) {
                const names: ('IBV_WC_GRH' | 'IBV_WC_WITH_IMM' | 'IBV_WC_IP_CSUM_OK' | 'IBV_WC_WITH_INV')[] = [];
                if (fl & 1) names.push('IBV_WC_GRH'); if (fl & 2) names.push('IBV_WC_WITH_IMM'); if (fl & 4) names.push('IBV_WC_IP_CSUM_OK'); if (fl & 8) names.push('IBV_WC_WITH_INV');
                e.wcFlags = names;
                if (fl & 2) { const imm = toNum(field(w, 'immData')); if (imm !== undefined) e.immData = imm; }
                if (fl & 8) { const k = toNum(field(w, 'invalidatedRkey')); if (k !== undefined) e.invalidatedRkey = this.keyRef(k, 'rkey') ?? k; }
              }
            }
            return e;
          }),
        };
      }
      case 'memory.read': {
        const hex = field(res, 'hex');
        const addr = (step.args as { addr: unknown }).addr;
        return typeof hex === 'string' && hex.length ? { bytes: [{ addr: addr as number, hex }] } : {};
      }
      case 'qp.query': case 'qp.modify': {
        const s = qpStateOf(res, QpState);
        const qp = (step.args as { qp: unknown }).qp;
        return s.num !== undefined && typeof qp === 'string' ? { qpState: [{ qp, state: QpState.name(s.num) as never }] } : {};
      }
      case 'cq.get_event': {
        const cq = toNum(field(res, 'cq'));
        const name = cq !== undefined ? this.nameOf(cq) : undefined;
        return name ? { result: { cq: name } } : {};
      }
      case 'cq.req_notify': {
        const m = toNum(field(res, 'missedEvents'));
        return m !== undefined ? { result: { missedEvents: m } } : {};
      }
      default: return {};
    }
  }

  /** The recording as a scenario object (not validated). */
  scenario(): Scenario {
    return {
      name: this.name, description: this.description, seed: this.seed,
      devices: this.devices.map((d) => ({ ...d })),
      steps: this.steps.map((r) => structuredClone(r.step)),
    } as Scenario;
  }

  /** The recording as a validated scenario, or the first problem (e.g. a removed step that created a name). */
  toScenario(): { ok: true; scenario: Scenario } | { ok: false; error: LoadError } {
    return validateScenario(this.fileObject(), 'recording');
  }

  private fileObject() {
    const s = this.scenario();
    return { verbslab: 'scenario', version: SCENARIO_VERSION, name: s.name, description: s.description, seed: s.seed, devices: s.devices, steps: s.steps };
  }

  /** The scenario file text: the header fields, then one step per line. */
  toJSON(): string {
    const f = this.fileObject();
    const head = Object.entries(f).filter(([k]) => k !== 'steps').map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    const steps = f.steps.map((s, i) => `    ${JSON.stringify(s)}${i + 1 < f.steps.length ? ',' : ''}`);
    return `{\n${head.join(',\n')},\n  "steps": [\n${steps.join('\n')}${steps.length ? '\n' : ''}  ]\n}\n`;
  }
}

function toNum(v: unknown): number | undefined {
  const b = toBig(v);
  return b !== undefined && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : undefined;
}
function numeric(r: unknown): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  if (!isObj(r)) return out;
  for (const [k, v] of Object.entries(r)) { const b = toBig(v); if (b !== undefined) out[k] = b; }
  return out;
}
