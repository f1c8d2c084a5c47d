// The Executor over the native addon: maps every protocol Command to vl::Session calls.
// Enum names become numeric values through app/protocol/enums.ts; results carry both the numbers and the
// rdma-core names; native errors (errno + a message naming the field/rule) come back as values, including the
// core's honest "ENOSYS not built yet".
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command, CommandArgs, DeviceEvent, ErrorInfo } from '../protocol/index.ts';
import {
  Command as CommandSchema, describeZodError,
  Access, AtomicCap, DeviceCap, EventType, Mtu, MwType, QpAttrMask, QpState, QpType, SendFlag, WcOpcode, WcStatus,
  WrOpcode, flagsOf, namesOf, parseGid,
} from '../protocol/index.ts';
import type { ExecResult, Executor, ExecutorOptions } from './api.ts';
import type { EventChunk } from './batcher.ts';
import type {
  NDevice, NEvent, NInterface, NMr, NMw, NNet, NPost, NProfile, NQp, NQpAttr, NRecvWr, NResult, NSendWr, NStatus, NWc, NativeAddon,
  NativeSession, U64,
} from './native.ts';
import { loadAddon } from './native.ts';
import { realDevices } from './ibverbs.ts';

const ERRNO_NAMES = new Map<number, string>();
for (const [name, value] of Object.entries(os.constants.errno)) {
  // Linux has EOPNOTSUPP == ENOTSUP (95) and EWOULDBLOCK == EAGAIN; prefer the names rdma-core uses.
  if (!ERRNO_NAMES.has(value) || name === 'EOPNOTSUPP' || name === 'EAGAIN') ERRNO_NAMES.set(value, name);
}
export function errnoName(err: number): string {
  return ERRNO_NAMES.get(Math.abs(err)) ?? `E${Math.abs(err)}`;
}

const IBV_REREG_MR_CHANGE_TRANSLATION = 1;
const IBV_REREG_MR_CHANGE_PD = 2;
const IBV_REREG_MR_CHANGE_ACCESS = 4;

export interface TrackedObject { handle: number; kind: string; device: number }
export interface ExecutorExtra extends ExecutorOptions { addon?: NativeAddon; maxPendingEvents?: number }

type Ok = { ok: true; result: unknown };
const ok = (result: unknown): Ok => ({ ok: true, result });
const fail = (code: string, message: string, field?: string): ExecResult => ({ ok: false, error: { code, message, ...(field ? { field } : {}) } });

function u64n(v: U64): number { return typeof v === 'number' ? v : Number(BigInt(v)); }

export function profileOut(p: NProfile) {
  const caps = typeof p.deviceCapFlags === 'number' ? p.deviceCapFlags : Number(BigInt(p.deviceCapFlags) & 0xffffffffn);
  return {
    ...p,
    deviceCapNames: namesOf(DeviceCap, caps),
    atomicCapName: AtomicCap.name(p.atomicCap),
    activeMtuName: Mtu.name(p.activeMtu),
  };
}
export function deviceOut(d: NDevice) {
  return { ...d, device: d.handle, profile: profileOut(d.profile), portStateName: d.portState === 4 ? 'IBV_PORT_ACTIVE' : `port state ${d.portState}` };
}
export function mrOut(m: NMr) { return { ...m, mr: m.handle, accessNames: namesOf(Access, m.access) }; }
export function mwOut(w: NMw) { return { ...w, mw: w.handle, typeName: MwType.name(w.type), accessNames: namesOf(Access, w.access) }; }
export function wcOut(w: NWc) {
  return {
    ...w, statusName: WcStatus.name(w.status), opcodeName: WcOpcode.name(w.opcode),
    wcFlagsNames: [...(w.wcFlags & 2 ? ['IBV_WC_WITH_IMM'] : []), ...(w.wcFlags & 8 ? ['IBV_WC_WITH_INV'] : [])],
  };
}
export function qpOut(q: NQp) {
  return {
    ...q, qp: q.handle,
    init: { ...q.init, qpTypeName: QpType.name(q.init.qpType) },
    attr: {
      ...q.attr, qpStateName: QpState.name(q.attr.qpState), curQpStateName: QpState.name(q.attr.curQpState),
      pathMtuName: Mtu.name(q.attr.pathMtu), qpAccessFlagsNames: namesOf(Access, q.attr.qpAccessFlags),
    },
  };
}
export function eventOut(e: NEvent): DeviceEvent {
  const ev: DeviceEvent = {
    seq: u64n(e.seq), t: u64n(e.t), kind: e.kind, device: e.device, obj: e.obj, objKind: e.objKind,
    // a..d stay lossless: numbers up to 2^53-1, "0x.." strings above (atomic operands can be that large)
    a: e.a as number, b: e.b as number, c: e.c as number, d: e.d as number,
  };
  if (e.text !== undefined) ev.text = e.text;
  if (e.ok !== undefined) ev.ok = e.ok;
  if (e.change !== undefined) ev.change = e.change;
  if (e.keyState !== undefined) ev.keyState = e.keyState;
  if (e.pkt) ev.pkt = e.pkt;
  if (e.wc) ev.wc = wcOut(e.wc);
  if (e.kind === 'AsyncEvent') ev.text = ev.text ?? EventType.name(Number(e.a));
  return ev;
}


/** A chunk of events as protocol JSON text (see EventChunk in batcher.ts), with its lifecycle events decoded. */
export type ExecEventChunk = EventChunk & { objects: DeviceEvent[] };

export class NativeExecutor implements Executor {
  readonly addon: NativeAddon;
  private s: NativeSession;
  private seed: number;
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
  private netDevices = new Set<number>();

  constructor(opts: ExecutorExtra = {}) {
    this.addon = opts.addon ?? loadAddon();
    this.seed = opts.seed ?? 1;
    this.maxPending = opts.maxPendingEvents ?? 200_000;
    this.s = new this.addon.Session(this.seed);
  }

  get native(): NativeSession { return this.s; }

  private realCache: ReturnType<typeof realDevices> | null = null;
  /** Real devices, enumerated once per executor (they do not change during a lab session). */
  private get real(): ReturnType<typeof realDevices> {
    this.realCache ??= realDevices(typeof this.addon.ibverbsDevices === 'function' ? this.addon.ibverbsDevices() : null);
    return this.realCache;
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
      const r = this.dispatch(parsed.data);
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
  netActive(): boolean { return this.netDevices.size > 0; }
  /** Receive datagrams and run the engine actions due in real time (no waiting); events are collected. */
  netPoll(): number {
    if (!this.netDevices.size) return 0;
    const n = this.s.net_poll(0);
    if (n) this.collect();
    return n;
  }
  private netName(): string {
    const names = [...this.netDevices].map((h) => this.deviceInfo(h)?.name ?? `device ${h}`);
    return names.join(', ');
  }
  /** The refusal of hand stepping while the engine free runs. */
  private freeRun(cmd: string): ExecResult {
    return fail('EBUSY', `${cmd}: the engine is free running (engine.autorun with free: true); turn autorun off to step it by hand`, 'command.cmd');
  }
  /** The refusal of deterministic run controls while a device is on the network. */
  private realTime(cmd: string): ExecResult {
    return fail('EBUSY', `${cmd}: ${this.netName()} ${this.netDevices.size > 1 ? 'are' : 'is'} on the network, so the session runs in real time `
      + '(the UDP transport drives the clock and the backend host polls it); single-step, run to idle and autorun are unavailable '
      + 'until every device is taken off the network (device.detachNet)', 'command.cmd');
  }
  private hostInterfaces(): NInterface[] {
    return typeof this.addon.netInterfaces === 'function' ? this.addon.netInterfaces() : [];
  }

  private attachNet(a: CommandArgs<'device.attachNet'>): ExecResult {
    if ((a.interface === undefined) === (a.address === undefined))
      return fail('EINVAL', 'args.interface: give exactly one of "interface" (a host interface such as lo or eth0) or "address" (one local IP address)', 'args.interface');
    if (!this.deviceInfo(a.device)) return fail('ENOENT', `args.device: no device with handle ${a.device}`, 'args.device');
    if (this.netDevices.has(a.device)) return fail('EBUSY', `args.device: device ${a.device} is already on the network (take it off first)`, 'args.device');
    const ifs = this.hostInterfaces();
    if (a.interface !== undefined && !ifs.some((i) => i.name === a.interface))
      return fail('ENODEV', `args.interface: interface "${a.interface}" not found on this host (it has: ${ifs.map((i) => i.name).join(', ') || 'none'})`, 'args.interface');
    if (this.autorun.on) this.autorun = { ...this.autorun, on: false, free: false };   // real time replaces the virtual-time autorun
    if (this.s.runner_running()) this.stepsLeft += u64n(this.s.runner_stop());
    const r = this.s.attach_net(a.device, { interface: a.interface, address: a.address, port: a.port, peerPort: a.peerPort });
    if (r.err) {
      const field = /^(options\.)?interface/.test(r.msg) ? 'args.interface' : /bind|GID \d+:/.test(r.msg) ? (a.address !== undefined ? 'args.address' : 'args.port')
        : /address|parse|literal|numeric/i.test(r.msg) ? 'args.address' : 'args.device';
      return fail(errnoName(r.err), `${field}: ${r.msg}`, field);
    }
    this.netDevices.add(a.device);
    return ok({ device: a.device, ...(r.value as NNet), peerPort: a.peerPort ?? (r.value as NNet).port, realTime: true });
  }

  /** The default sgid index for a remote dgid: a GID of the same family that the transport bound a socket for. */
  private sgidFor(dev: number, dgid: Uint8Array): number | undefined {
    const net = this.s.net_info(dev);
    if (!net) return undefined;
    const v4 = dgid.slice(0, 12).every((b, i) => b === (i < 10 ? 0 : 0xff));
    const ll = dgid[0] === 0xfe && (dgid[1]! & 0xc0) === 0x80;
    const isV4 = (g: string) => g.startsWith('0000:0000:0000:0000:0000:ffff:');
    const isLl = (g: string) => /^fe[89ab]/.test(g);
    const g = net.gids.find((x) => (v4 ? isV4(x.gid) : ll ? isLl(x.gid) : !isV4(x.gid) && !isLl(x.gid)));
    return g?.index;
  }

  // ------------------------------------------------------------------ helpers
  private st(s: NStatus, result: unknown = {}, field?: string): ExecResult {
    return s.err ? fail(errnoName(s.err), s.msg || `${errnoName(s.err)}`, field) : ok(result);
  }
  private res<T>(r: NResult<T>, map: (v: T) => unknown, field?: string): ExecResult {
    return r.err ? fail(errnoName(r.err), r.msg || `${errnoName(r.err)}`, field) : ok(map(r.value as T));
  }
  private post(r: NPost, n: number): ExecResult {
    if (!r.err) return ok({ posted: n });
    const at = r.badWr < n ? r.badWr : undefined;
    return {
      ok: false,
      error: { code: errnoName(r.err), message: `${at !== undefined ? `args.wrs.${at}: ` : ''}${r.msg || errnoName(r.err)}`, ...(at !== undefined ? { field: `args.wrs.${at}`, badWr: at } : {}) },
    };
  }
  /** the load generator (engine.traffic): configured at least once (its state lives in the addon) */
  private traffic = false;
  private trafficView() {
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
  private stepsLeft = 0;
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

  private deviceInfo(h: number): NDevice | undefined { return this.s.devices().find((d) => d.handle === h); }

  private sendWr(w: CommandArgs<'post.send'>['wrs'][number]): NSendWr {
    const out: NSendWr = {
      wrId: w.wrId, opcode: WrOpcode.values[w.opcode], sendFlags: flagsOf(SendFlag, w.sendFlags),
      sgList: w.sgList,
    };
    if (w.inlineData !== undefined) out.inlineData = Buffer.from(w.inlineData, 'hex');
    // IBV_WR_SEND_WITH_INV and IBV_WR_LOCAL_INV carry the key in imm_data's union slot (invalidate_rkey)
    if (w.immData !== undefined) out.immData = w.immData;
    if (w.invalidateRkey !== undefined) out.immData = w.invalidateRkey;
    const copy = ['remoteAddr', 'rkey', 'compareAdd', 'swap', 'ah', 'remoteQpn', 'remoteQkey', 'mw', 'bindRkey', 'bindMr',
      'bindAddr', 'bindLength', 'regMr', 'regKey'] as const;
    for (const k of copy) if (w[k] !== undefined) (out as unknown as Record<string, unknown>)[k] = w[k];
    // regKey is the new 8-bit key byte (ib_update_fast_reg_key); the REG_MR WR carries the whole key:
    // the MR's 24-bit index with that byte (kernel struct ib_reg_wr.key)
    if (w.regKey !== undefined && w.regMr !== undefined) {
      const m = this.s.mr_info(w.regMr);
      if (m) out.regKey = ((m.lkey & ~0xff) | w.regKey) >>> 0;
    }
    if (w.bindAccess) out.bindAccess = flagsOf(Access, w.bindAccess);
    if (w.regAccess) out.regAccess = flagsOf(Access, w.regAccess);
    return out;
  }
  private recvWr(w: { wrId: number | string; sgList: { addr: number; length: number; lkey: number }[] }): NRecvWr {
    return { wrId: w.wrId, sgList: w.sgList };
  }

  /** Address vector for a peer device: the GID at sgidIndex of the destination device's port 1. */
  private dgidOf(destDevice: number, sgidIndex: number): Uint8Array | undefined {
    const d = this.deviceInfo(destDevice);
    const g = d?.gids.find((x) => x.index === sgidIndex);
    return g ? Buffer.from(g.gid.replace(/:/g, ''), 'hex') : undefined;
  }
  /** The RoCE v2 GID index (rc_pingpong -g): first GID of type "RoCE v2", else 0. */
  private roceV2Index(dev: number): number {
    const d = this.deviceInfo(dev);
    return d?.gids.find((g) => /v2/i.test(g.type))?.index ?? 0;
  }

  private qpAttr(a: CommandArgs<'qp.modify'>['attr']): NQpAttr {
    const out: NQpAttr = {};
    if (a.qpState !== undefined) out.qpState = QpState.values[a.qpState];
    if (a.pathMtu !== undefined) out.pathMtu = Mtu.values[a.pathMtu];
    if (a.qpAccessFlags !== undefined) out.qpAccessFlags = flagsOf(Access, a.qpAccessFlags);
    const copy = ['qkey', 'rqPsn', 'sqPsn', 'destQpNum', 'destDevice', 'sgidIndex', 'pkeyIndex', 'portNum', 'maxRdAtomic',
      'maxDestRdAtomic', 'minRnrTimer', 'timeout', 'retryCnt', 'rnrRetry'] as const;
    for (const k of copy) if (a[k] !== undefined) (out as unknown as Record<string, unknown>)[k] = a[k];
    if (a.destDevice !== undefined) {
      const g = this.dgidOf(a.destDevice, a.sgidIndex ?? 0);
      if (g) out.dgid = g;
    }
    if (a.dgid !== undefined) {          // a remote host's GID (schema-checked); destDevice 0 = that host
      const g = parseGid(a.dgid);
      if (g) { out.dgid = g; out.destDevice ??= 0; }
    }
    return out;
  }

  /** qp.connect: RESET->INIT->RTR->RTS on both QPs with rc_pingpong's attributes. */
  private connect(a: CommandArgs<'qp.connect'>): ExecResult {
    const q1 = this.s.query_qp(a.qp);
    if (!q1) return fail('ENOENT', `args.qp: no QP with handle ${a.qp}`, 'args.qp');
    if ((a.peer === undefined) === (a.remote === undefined))
      return fail('EINVAL', 'args.peer: give exactly one of "peer" (a QP of this session) or "remote" (a QP on another host: dgid, qpn, psn)', 'args.peer');
    if (a.remote) return this.connectRemote(a, q1, a.remote);
    const q2 = this.s.query_qp(a.peer!);
    if (!q2) return fail('ENOENT', `args.peer: no QP with handle ${a.peer}`, 'args.peer');
    const pairs: [NQp, NQp][] = a.qp === a.peer ? [[q1, q1]] : [[q1, q2], [q2, q1]];
    const access = flagsOf(Access, a.access);
    const mtu = Mtu.values[a.pathMtu];
    const M = QpAttrMask.values;
    const PSN = 0; // rc_pingpong draws a random PSN; the lab uses 0 so recorded sessions are reproducible
    const steps: { state: string; attr: (me: NQp, peer: NQp) => NQpAttr; mask: (t: number) => number }[] = [
      {
        state: 'IBV_QPS_INIT',
        attr: (me) => (me.init.qpType === QpType.values.IBV_QPT_UD
          ? { qpState: QpState.values.IBV_QPS_INIT, pkeyIndex: 0, portNum: 1, qkey: 0x11111111 }
          : { qpState: QpState.values.IBV_QPS_INIT, pkeyIndex: 0, portNum: 1, qpAccessFlags: access }),
        mask: (t) => M.IBV_QP_STATE | M.IBV_QP_PKEY_INDEX | M.IBV_QP_PORT | (t === QpType.values.IBV_QPT_UD ? M.IBV_QP_QKEY : M.IBV_QP_ACCESS_FLAGS),
      },
      {
        state: 'IBV_QPS_RTR',
        attr: (me, peer) => {
          if (me.init.qpType === QpType.values.IBV_QPT_UD) return { qpState: QpState.values.IBV_QPS_RTR };
          const sgid = this.roceV2Index(peer.device);
          const dgid = this.dgidOf(peer.device, sgid);
          return {
            qpState: QpState.values.IBV_QPS_RTR, pathMtu: mtu, destQpNum: peer.qpNum, rqPsn: PSN,
            maxDestRdAtomic: 1, minRnrTimer: 12, destDevice: peer.device, sgidIndex: this.roceV2Index(me.device),
            portNum: 1, ...(dgid ? { dgid } : {}),
          };
        },
        mask: (t) => M.IBV_QP_STATE | (t === QpType.values.IBV_QPT_UD ? 0
          : M.IBV_QP_AV | M.IBV_QP_PATH_MTU | M.IBV_QP_DEST_QPN | M.IBV_QP_RQ_PSN
            | (t === QpType.values.IBV_QPT_RC ? M.IBV_QP_MAX_DEST_RD_ATOMIC | M.IBV_QP_MIN_RNR_TIMER : 0)),
      },
      {
        state: 'IBV_QPS_RTS',
        attr: () => ({ qpState: QpState.values.IBV_QPS_RTS, sqPsn: PSN, timeout: 14, retryCnt: 7, rnrRetry: 7, maxRdAtomic: 1 }),
        mask: (t) => M.IBV_QP_STATE | M.IBV_QP_SQ_PSN
          | (t === QpType.values.IBV_QPT_RC ? M.IBV_QP_TIMEOUT | M.IBV_QP_RETRY_CNT | M.IBV_QP_RNR_RETRY | M.IBV_QP_MAX_QP_RD_ATOMIC : 0),
      },
    ];
    const transitions: { qp: number; to: string }[] = [];
    for (const step of steps) {
      for (const [me, peer] of pairs) {
        const st = this.s.modify_qp(me.handle, step.attr(me, peer), step.mask(me.init.qpType));
        if (st.err) {
          const which = me.handle === a.qp ? 'args.qp' : 'args.peer';
          return fail(errnoName(st.err), `${which}: modify to ${step.state} failed: ${st.msg}`, which);
        }
        transitions.push({ qp: me.handle, to: step.state });
      }
    }
    const after = pairs.map(([me]) => this.s.query_qp(me.handle)).filter((q): q is NQp => !!q).map(qpOut);
    return ok({ transitions, qps: after });
  }

  /** The capture of one device's network traffic, with the real IP/UDP headers (UdpTransport::write_pcap). */
  private netPcap(dev: number): ExecResult {
    if (!this.netDevices.has(dev)) return fail('ENOENT', `args.device: device ${dev} is not on the network (its traffic is in the session pcap: pcap.get without device)`, 'args.device');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verbslab-pcap-'));
    try {
      const st = this.s.write_net_pcap(dev, path.join(dir, 'net.pcap'));
      if (st.err) return this.st(st);
      const bytes = fs.readFileSync(path.join(dir, 'net.pcap'));
      return ok({ format: 'pcap', linktype: 'LINKTYPE_ETHERNET', device: dev, network: true, length: bytes.length, base64: bytes.toString('base64') });
    } finally { fs.rmSync(dir, { recursive: true, force: true }); }
  }

  /** qp.connect to a QP on another host: RESET->INIT->RTR->RTS on this side only, the address vector naming the
   *  remote GID (ibv_modify_qp as rc_pingpong does it with the numbers the other side printed). */
  private connectRemote(a: CommandArgs<'qp.connect'>, q: NQp, rem: NonNullable<CommandArgs<'qp.connect'>['remote']>): ExecResult {
    if (q.init.qpType === QpType.values.IBV_QPT_UD)
      return fail('EOPNOTSUPP', 'args.remote: UD QPs are not carried over the network (an address handle names no remote GID)', 'args.remote');
    if (!this.netDevices.has(q.device))
      return fail('ENETDOWN', `args.remote: qp ${q.handle} is on ${this.deviceInfo(q.device)?.name ?? `device ${q.device}`}, which is not on the network (put it on the network first: device.attachNet)`, 'args.remote');
    const dgid = parseGid(rem.dgid);
    if (!dgid) return fail('EINVAL', `args.remote.dgid: "${rem.dgid}" is not a GID`, 'args.remote.dgid');
    const gids = this.s.net_info(q.device)?.gids ?? [];
    const sgid = rem.sgidIndex ?? this.sgidFor(q.device, dgid);
    if (sgid === undefined)
      return fail('EINVAL', `args.remote.sgidIndex: no local GID of the same family as ${rem.dgid} (the device's GIDs: ${gids.map((g) => `${g.index} ${g.gid}`).join(', ')}); give sgidIndex`, 'args.remote.sgidIndex');
    if (!gids.some((g) => g.index === sgid))
      return fail('EINVAL', `args.remote.sgidIndex: the device has no GID ${sgid} (it has ${gids.length})`, 'args.remote.sgidIndex');
    const M = QpAttrMask.values; const S = QpState.values;
    const uc = q.init.qpType === QpType.values.IBV_QPT_UC;
    const steps: { state: string; attr: NQpAttr; mask: number }[] = [
      { state: 'IBV_QPS_INIT', attr: { qpState: S.IBV_QPS_INIT, pkeyIndex: 0, portNum: 1, qpAccessFlags: flagsOf(Access, a.access) },
        mask: M.IBV_QP_STATE | M.IBV_QP_PKEY_INDEX | M.IBV_QP_PORT | M.IBV_QP_ACCESS_FLAGS },
      { state: 'IBV_QPS_RTR', attr: { qpState: S.IBV_QPS_RTR, pathMtu: Mtu.values[a.pathMtu], destQpNum: rem.qpn, rqPsn: rem.psn,
        maxDestRdAtomic: 1, minRnrTimer: 12, destDevice: 0, sgidIndex: sgid, portNum: 1, dgid },
        mask: M.IBV_QP_STATE | M.IBV_QP_AV | M.IBV_QP_PATH_MTU | M.IBV_QP_DEST_QPN | M.IBV_QP_RQ_PSN | (uc ? 0 : M.IBV_QP_MAX_DEST_RD_ATOMIC | M.IBV_QP_MIN_RNR_TIMER) },
      { state: 'IBV_QPS_RTS', attr: { qpState: S.IBV_QPS_RTS, sqPsn: a.sqPsn ?? 0, timeout: 14, retryCnt: 7, rnrRetry: 7, maxRdAtomic: 1 },
        mask: M.IBV_QP_STATE | M.IBV_QP_SQ_PSN | (uc ? 0 : M.IBV_QP_TIMEOUT | M.IBV_QP_RETRY_CNT | M.IBV_QP_RNR_RETRY | M.IBV_QP_MAX_QP_RD_ATOMIC) },
    ];
    const transitions: { qp: number; to: string }[] = [];
    for (const st of steps) {
      const r = this.s.modify_qp(q.handle, st.attr, st.mask);
      if (r.err) return fail(errnoName(r.err), `args.qp: modify to ${st.state} failed: ${r.msg}`, 'args.qp');
      transitions.push({ qp: q.handle, to: st.state });
    }
    const after = this.s.query_qp(q.handle);
    return ok({ transitions, qps: after ? [qpOut(after)] : [], remote: { dgid: rem.dgid, qpn: rem.qpn, psn: rem.psn }, sgidIndex: sgid });
  }

  private dispatch(c: Command): ExecResult {
    const s = this.s;
    switch (c.cmd) {
      case 'session.info':
        return ok({
          seed: this.seed, epoch: this.epoch, nowNs: s.now_ns(), napiVersion: this.addon.napiVersion,
          profiles: this.addon.Session.profiles().map((p) => p.name), objects: this.liveObjects(),
          autorun: this.autorun, realTime: this.netDevices.size > 0, network: [...this.netDevices],
          traffic: this.traffic ? this.trafficView() : null,
          eventSeq: u64n(s.last_seq()),   // events the device produced so far (seq of the last one)
        });
      case 'session.reset': {
        s.close();                       // closes the UDP transports first
        this.netDevices.clear();
        this.seed = c.args.seed ?? this.seed;
        this.s = new this.addon.Session(this.seed);
        this.pending = []; this.objects.clear(); this.epoch++;
        this.autorun = { on: false, stepsPerSecond: this.autorun.stepsPerSecond, free: false };
        this.traffic = false;
        return ok({ seed: this.seed, epoch: this.epoch });
      }
      case 'device.list':
        return ok({
          devices: s.devices().map((d) => ({ ...deviceOut(d), net: this.netDevices.has(d.handle) ? s.net_info(d.handle) : null })),
          interfaces: this.hostInterfaces(), realTime: this.netDevices.size > 0,
          profiles: this.addon.Session.profiles().map(profileOut),
          // real devices are listed (libibverbs + sysfs) but cannot be driven yet: that backend is not built yet
          realDevices: this.real.devices, libibverbs: this.real.libibverbs, ...(this.real.error ? { libibverbsError: this.real.error } : {}),
        });
      case 'device.create': {
        const known = this.addon.Session.profiles().map((p) => p.name);
        if (!known.includes(c.args.profile)) return fail('EINVAL', `args.profile: unknown profile "${c.args.profile}" (known: ${known.join(', ')})`, 'args.profile');
        const r = s.create_device(c.args.profile, c.args.name ?? '');
        if (r.err) return this.res(r, () => null);
        const d = this.deviceInfo(r.value as number);
        return ok(d ? deviceOut(d) : { device: r.value });
      }
      case 'device.destroy': {
        const r = this.st(s.destroy_device(c.args.device), { device: c.args.device });   // takes it off the network first
        if (r.ok) this.netDevices.delete(c.args.device);
        return r;
      }
      case 'device.attachNet': return this.attachNet(c.args);
      case 'device.detachNet': {
        if (!this.netDevices.has(c.args.device)) return fail('ENOENT', `args.device: device ${c.args.device} is not on the network`, 'args.device');
        const r = this.st(s.detach_net(c.args.device), { device: c.args.device, realTime: this.netDevices.size > 1 });
        if (r.ok) this.netDevices.delete(c.args.device);
        return r;
      }
      case 'pd.alloc': return this.res(s.alloc_pd(c.args.device), (pd) => ({ pd, device: c.args.device }));
      case 'pd.dealloc': return this.st(s.dealloc_pd(c.args.pd), { pd: c.args.pd });
      case 'buffer.alloc': return this.res(s.alloc_buffer(c.args.length), (b) => ({ buffer: b.handle, addr: b.addr, length: b.length }));
      case 'buffer.free': return this.st(s.free_buffer(c.args.buffer), { buffer: c.args.buffer });
      case 'memory.write': {
        const { data, fill } = c.args;
        if ((data === undefined) === (fill === undefined)) return fail('EINVAL', 'args.data: give exactly one of "data" (hex) or "fill"', 'args.data');
        const bytes = data !== undefined ? Buffer.from(data, 'hex') : Buffer.alloc(fill!.length, fill!.byte);
        return this.st(s.write_memory(c.args.addr, bytes), { addr: c.args.addr, written: bytes.length });
      }
      case 'memory.read':
        return this.res(s.read_memory(c.args.addr, c.args.length), (b) => ({ addr: c.args.addr, length: b.length, hex: b.toString('hex') }));
      case 'mr.reg':
        return this.res(s.reg_mr(c.args.pd, c.args.addr, c.args.length, flagsOf(Access, c.args.access), c.args.iova), mrOut);
      case 'mr.rereg': {
        const a = c.args;
        let flags = 0;
        if (a.addr !== undefined || a.length !== undefined) flags |= IBV_REREG_MR_CHANGE_TRANSLATION;
        if (a.pd !== undefined) flags |= IBV_REREG_MR_CHANGE_PD;
        if (a.access !== undefined) flags |= IBV_REREG_MR_CHANGE_ACCESS;
        if (!flags) return fail('EINVAL', 'args: give at least one of pd, addr/length or access to change', 'args');
        const cur = s.mr_info(a.mr);
        if (!cur) return fail('ENOENT', `args.mr: no MR with handle ${a.mr}`, 'args.mr');
        return this.res(s.rereg_mr(a.mr, flags, a.pd ?? cur.pd, a.addr ?? cur.addr, a.length ?? cur.length,
          a.access !== undefined ? flagsOf(Access, a.access) : cur.access), mrOut);
      }
      case 'mr.dereg': return this.st(s.dereg_mr(c.args.mr), { mr: c.args.mr });
      case 'mr.alloc': return this.res(s.alloc_mr(c.args.pd, c.args.maxNumSg, c.args.indirect), mrOut);
      case 'mr.map_sg': {
        const r = s.map_mr_sg(c.args.mr, c.args.sgList, c.args.pageSize);
        if (r.err) return this.res(r, () => null);
        const info = s.mr_info(c.args.mr);
        return ok({ mapped: r.value, of: c.args.sgList.length, mrInfo: info ? mrOut(info) : null });
      }
      case 'mw.alloc': return this.res(s.alloc_mw(c.args.pd, MwType.values[c.args.type]), mwOut);
      case 'mw.dealloc': return this.st(s.dealloc_mw(c.args.mw), { mw: c.args.mw });
      case 'mw.bind': {
        const a = c.args;
        return this.res(s.bind_mw(a.qp, a.mw, a.wrId, flagsOf(SendFlag, a.sendFlags), a.mr, a.addr, a.length, flagsOf(Access, a.access)),
          (rkey) => ({ mw: a.mw, rkey }));
      }
      case 'cq.create': return this.res(s.create_cq(c.args.device, c.args.cqe, c.args.channel), (cq) => ({ cq, device: c.args.device, cqe: s.cq_info(cq)?.cqe ?? c.args.cqe, channel: c.args.channel }));   // cqe: as granted
      case 'cq.destroy': return this.st(s.destroy_cq(c.args.cq), { cq: c.args.cq });
      case 'cq.req_notify':
        if (c.args.reportMissedEvents) {
          return this.res(s.req_notify_cq_report_missed(c.args.cq, c.args.solicitedOnly), (missed) => ({ cq: c.args.cq, missedEvents: missed }));
        }
        return this.st(s.req_notify_cq(c.args.cq, c.args.solicitedOnly), { cq: c.args.cq });
      case 'cq.poll': return ok({ cq: c.args.cq, wcs: s.poll_cq(c.args.cq, c.args.max).map(wcOut) });
      case 'cq.get_event': return this.res(s.get_cq_event(c.args.device), (cq) => ({ cq }));
      case 'cq.ack_events': return this.st(s.ack_cq_events(c.args.cq, c.args.n), { cq: c.args.cq, acked: c.args.n });
      case 'srq.create': return this.res(s.create_srq(c.args.pd, c.args.maxWr, c.args.maxSge, c.args.srqLimit), (srq) => ({ srq }));
      case 'srq.modify': return this.st(s.modify_srq(c.args.srq, c.args.srqLimit), { srq: c.args.srq });
      case 'srq.destroy': return this.st(s.destroy_srq(c.args.srq), { srq: c.args.srq });
      case 'srq.post_recv': return this.post(s.post_srq_recv(c.args.srq, c.args.wrs.map((w) => this.recvWr(w))), c.args.wrs.length);
      case 'qp.create': {
        const a = c.args;
        return this.res(s.create_qp(a.pd, {
          sendCq: a.sendCq, recvCq: a.recvCq, srq: a.srq ?? 0, qpType: QpType.values[a.qpType], sqSigAll: a.sqSigAll, cap: a.cap,
        }), qpOut);
      }
      case 'qp.modify': {
        const st = s.modify_qp(c.args.qp, this.qpAttr(c.args.attr), flagsOf(QpAttrMask, c.args.mask));
        if (st.err) return this.st(st);
        const q = s.query_qp(c.args.qp);
        return ok(q ? qpOut(q) : { qp: c.args.qp });
      }
      case 'qp.query': {
        const q = s.query_qp(c.args.qp);
        return q ? ok(qpOut(q)) : fail('ENOENT', `args.qp: no QP with handle ${c.args.qp}`, 'args.qp');
      }
      case 'qp.destroy': return this.st(s.destroy_qp(c.args.qp), { qp: c.args.qp });
      case 'qp.connect': return this.connect(c.args);
      case 'ah.create': return this.res(s.create_ah(c.args.pd, c.args.destDevice, c.args.sgidIndex), (ah) => ({ ah }));
      case 'post.send': return this.post(s.post_send(c.args.qp, c.args.wrs.map((w) => this.sendWr(w))), c.args.wrs.length);
      case 'post.recv': return this.post(s.post_recv(c.args.qp, c.args.wrs.map((w) => this.recvWr(w))), c.args.wrs.length);
      case 'engine.step': {
        if (this.netDevices.size) return this.realTime('engine.step');
        if (s.runner_running()) return this.freeRun('engine.step');
        // the load generator (if on) refills the send queue every 256 steps and whenever the engine runs dry
        const r = s.step_traffic(c.args.count);
        return ok({ steps: u64n(r.steps), idle: r.idle, nowNs: s.now_ns(), ...(this.traffic ? { traffic: this.trafficView() } : {}) });
      }
      case 'engine.traffic': {
        const a = c.args;
        if (!a.on) {
          s.traffic_stop();
          return ok({ traffic: this.traffic ? this.trafficView() : { on: false } });
        }
        if (a.qp === undefined) return fail('EINVAL', 'engine.traffic: qp is required to turn the load generator on', 'command.args.qp');
        if (a.wrs === undefined) return fail('EINVAL', 'engine.traffic: wrs (the work requests to post) are required to turn the load generator on', 'command.args.wrs');
        const q = s.query_qp(a.qp);
        if (!q) return fail('EINVAL', `engine.traffic: no QP ${a.qp}`, 'command.args.qp');
        if (a.cq !== undefined && q.init.sendCq !== a.cq) return fail('EINVAL', `engine.traffic: CQ ${a.cq} is not the send CQ of QP ${a.qp} (${q.init.sendCq})`, 'command.args.cq');
        const st = s.traffic_start(a.qp, q.init.sendCq, a.wrs.map((w) => this.sendWr(w)));
        if (st.err) return fail(errnoName(st.err), `engine.traffic: ${st.msg}`, 'command.args.wrs');
        this.traffic = true;
        return ok({ traffic: this.trafficView() });
      }
      case 'engine.run': {
        if (this.netDevices.size) return this.realTime('engine.run');
        if (s.runner_running()) return this.freeRun('engine.run');
        const steps = s.run(c.args.maxSteps);
        return ok({ steps, nowNs: s.now_ns() });
      }
      case 'engine.faults':
        s.set_faults(c.args);
        return ok({ faults: c.args });
      case 'engine.autorun':
        if (c.args.on && this.netDevices.size) return this.realTime('engine.autorun');
        if (c.args.on && c.args.free && !this.replaying) {
          const st = s.runner_start(c.args.stepsPerSecond);
          if (st.err) return fail(errnoName(st.err), `engine.autorun: ${st.msg}`, 'command.args.stepsPerSecond');
        } else if (s.runner_running()) {
          this.stepsLeft += u64n(s.runner_stop());   // 0 when the host paused it (and journaled) first
        }
        this.autorun = { on: c.args.on, stepsPerSecond: c.args.stepsPerSecond, free: c.args.on && c.args.free };
        return ok({ autorun: this.autorun });
      case 'pcap.get': {
        if (c.args.device !== undefined) return this.netPcap(c.args.device);
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verbslab-pcap-'));
        let bytes: Buffer;
        try {
          const st = s.write_pcap(path.join(dir, 'session.pcap'));
          if (st.err) return this.st(st);
          bytes = fs.readFileSync(path.join(dir, 'session.pcap'));
        } finally { fs.rmSync(dir, { recursive: true, force: true }); }
        return ok({ format: 'pcap', linktype: 'LINKTYPE_ETHERNET', length: bytes.length, base64: Buffer.from(bytes).toString('base64') });
      }
      case 'journal.get': case 'events.recent':
        return fail('EOPNOTSUPP', `${c.cmd} is answered by the backend host (this executor has no journal or event history)`);
      case 'scenario.get': case 'scenario.save': case 'scenario.rename': case 'scenario.note': case 'scenario.expect':
      case 'scenario.load': case 'scenario.step': case 'scenario.run_to': case 'scenario.close':
        return fail('EOPNOTSUPP', `${c.cmd} is answered by the backend host's scenario recorder (app/host/recorder.ts), not by the device`);
    }
    // commands outside the device protocol (e.g. the recorder's scenario.*) are answered by the backend host
    return fail('EOPNOTSUPP', `${(c as { cmd: string }).cmd} is answered by the backend host, not by the device`, 'command.cmd');
  }
}

/** Convenience for runners: an executor with defaults. */
export function createExecutor(opts: ExecutorExtra = {}): NativeExecutor {
  return new NativeExecutor(opts);
}

export type { ErrorInfo };
