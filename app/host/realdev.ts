// The real-device backend as the backend host sees it: a session over ONE device of a libibverbs.so.1 loaded with
// dlopen (native/ibverbs/realdev.h through the addon's RealDevice), with the software session's interface
// (NativeSession), so the command handlers of app/host/commands run unchanged on it. docs/real-devices.md.
//
// What software can see of a real device is reported as events in the software device's format (native/EVENTS.md),
// made here from the verbs the host called and what they returned: objects created / destroyed / modified with
// their keys, QP state changes (ibv_modify_qp, and ibv_query_qp after an error completion), work requests posted,
// completions as ibv_poll_cq returned them, CQ arming, completion-channel events and asynchronous events (the
// addon's thread on ibv_get_async_event). What it cannot see (the rings inside the NIC, the packets, the key
// tables, the engine's steps) is refused with NOT_VISIBLE; verbs the library or provider lacks come back with the
// library's own errno.
import type { NativeAddon, NativeSession, NDevice, NEvent, NMr, NMw, NPost, NProfile, NQp, NQpAttr, NRecvWr, NResult, NSendWr, NStatus, NWc, U64 } from './native.ts';
import type { ProfileQuirks } from '../protocol/quirks.ts';

/** the libibverbs.so.1 the backend loads: VERBSLAB_LIBIBVERBS (a path or soname), else the system's */
export function realLibrary(): string { return process.env.VERBSLAB_LIBIBVERBS || ''; }

export const NOT_VISIBLE = 'not visible on a real device';
const EOPNOTSUPP = 95; const ENOENT = 2;

/** The binding (native/addon/realdev.cpp). */
export interface NRealDevice {
  open_status(): NStatus;
  close(): void;
  info(): NRealInfo;
  alloc_pd(): NResult<number>;
  dealloc_pd(pd: number): NStatus;
  alloc_buffer(length: number): NResult<{ handle: number; addr: U64; length: U64 }>;
  free_buffer(buf: number): NStatus;
  write_memory(addr: U64, data: Uint8Array): NStatus;
  read_memory(addr: U64, len: number): NResult<Buffer>;
  reg_mr(pd: number, addr: U64, length: U64, access: number, iova?: U64): NResult<RealMr>;
  rereg_mr(mr: number, flags: number, pd: number, addr: U64, length: U64, access: number): NResult<RealMr>;
  dereg_mr(mr: number): NStatus;
  mr_info(mr: number): RealMr | null;
  alloc_mw(pd: number, type: number): NResult<NMw>;
  dealloc_mw(mw: number): NStatus;
  bind_mw(qp: number, mw: number, wrId: U64, sendFlags: number, mr: number, addr: U64, length: U64, access: number): NResult<number>;
  mw_info(mw: number): NMw | null;
  create_cq(cqe: number, channel: boolean): NResult<{ cq: number; cqe: number; channel: boolean }>;
  destroy_cq(cq: number): NStatus;
  cq_info(cq: number): { cq: number; device: number; cqe: number; channel: boolean } | null;
  req_notify_cq(cq: number, solicitedOnly: boolean): NStatus;
  poll_cq(cq: number, max: number): NResult<NWc[]>;
  get_cq_event(): NResult<number>;
  ack_cq_events(cq: number, n: number): NStatus;
  create_srq(pd: number, maxWr: number, maxSge: number, srqLimit: number): NResult<number>;
  modify_srq(srq: number, srqLimit: number): NStatus;
  destroy_srq(srq: number): NStatus;
  post_srq_recv(srq: number, wrs: NRecvWr[]): NPost;
  create_qp(pd: number, init: { sendCq: number; recvCq: number; srq?: number; qpType: number; sqSigAll: boolean; cap: NQp['init']['cap'] }): NResult<NQp>;
  modify_qp(qp: number, attr: NQpAttr, mask: number): NStatus;
  query_qp(qp: number): NResult<NQp>;
  destroy_qp(qp: number): NStatus;
  create_ah(pd: number, dgid: Uint8Array, sgidIndex: number): NResult<number>;
  post_send(qp: number, wrs: NSendWr[]): NPost;
  post_recv(qp: number, wrs: NRecvWr[]): NPost;
  take_async(): { type: number; obj: number; objKind: string; t: U64 }[];
}
export type RealMr = Omit<NMr, 'kind' | 'state' | 'sg'>;
export interface NRealInfo {
  name: string; library: string; software: boolean; fwVer: string; nodeGuid: string;
  attr: Record<string, U64> & { deviceCapFlags: number; atomicCap: number };
  port: { state: number; activeMtu: number; maxMtu: number; linkLayer: number; lid: number; gidTblLen: number };
  gids: { index: number; gid: string; type: string }[];
}
export interface RealAddon { RealDevice?: new (library: string, device: string) => NRealDevice; realdevList?(library: string): RealListing }
export interface RealListing { library: boolean; software: boolean; path: string; error?: string; devices: { name: string; guid: string }[] }

/** What the session's backend is (session.info, device.list). */
export interface BackendInfo { kind: 'ibverbs'; device: string; library: string; software: boolean }

// IBV_LINK_LAYER_* (verbs.h)
const LINK = ['unspecified', 'InfiniBand', 'Ethernet'];

/** Open `device` ("" = the first) of the library; the error names the library's refusal (dlerror text, the
 *  devices it lists). */
export function openReal(addon: NativeAddon & RealAddon, device: string, library = realLibrary()): { ok: true; session: RealSession } | { ok: false; err: number; msg: string } {
  if (!addon.RealDevice) return { ok: false, err: EOPNOTSUPP, msg: 'the native addon was built without the real-device backend (rebuild: node scripts/build.mjs addon)' };
  const d = new addon.RealDevice(library, device);
  const st = d.open_status();
  if (st.err) { d.close(); return { ok: false, err: st.err, msg: st.msg }; }
  return { ok: true, session: new RealSession(d) };
}

/** A result with its value mapped (an error stays the error). */
function mapped<A, B>(r: NResult<A>, f: (v: A) => B): NResult<B> {
  return r.err ? { err: r.err, msg: r.msg } : { err: r.err, msg: r.msg, value: f(r.value as A) };
}

/** A session over one real device: the NativeSession interface over the binding. */
export class RealSession implements NativeSession {
  readonly info: NRealInfo;
  private events: NEvent[] = [];
  private seq = 0;
  private readonly t0 = process.hrtime.bigint();
  /** per handle: the object kind and (QPs) the state last seen, for the events */
  private kinds = new Map<number, string>();
  private qpState = new Map<number, number>();
  /** QP number -> handle, for the completions (ibv_wc names the QP by number) */
  private qpNums = new Map<number, number>();
  private closed = false;

  constructor(readonly d: NRealDevice) {
    this.info = d.info();
    this.emit('ObjectCreated', 1, 'device', {
      text: `${this.info.name} opened through ${this.info.library}${this.info.software ? ' (Verbs Lab\'s software-device library: the libibverbs ABI end to end)' : ''}`,
    });
  }

  get backend(): BackendInfo { return { kind: 'ibverbs', device: this.info.name, library: this.info.library, software: this.info.software }; }

  private now(): number { return Number(process.hrtime.bigint() - this.t0); }
  private emit(kind: string, obj: number, objKind: string, f: Partial<NEvent> = {}): void {
    this.events.push({ seq: ++this.seq, t: this.now(), kind, device: objKind === 'buffer' ? 0 : 1, obj, objKind, a: 0, b: 0, c: 0, d: 0, ...f });
  }
  private created<T>(r: NResult<T>, objKind: string, handle: (v: T) => number, f: (v: T) => Partial<NEvent> = () => ({})): NResult<T> {
    if (!r.err) { const h = handle(r.value as T); this.kinds.set(h, objKind); this.emit('ObjectCreated', h, objKind, f(r.value as T)); }
    return r;
  }
  private destroyed(s: NStatus, h: number, objKind: string, f: Partial<NEvent> = {}): NStatus {
    if (!s.err) { this.kinds.delete(h); this.qpState.delete(h); this.emit('ObjectDestroyed', h, objKind, f); }
    return s;
  }
  private notVisible(what: string, hint = ''): NStatus { return { err: EOPNOTSUPP, msg: `${what}: ${NOT_VISIBLE}${hint ? ` (${hint})` : ''}` }; }

  close(): void { if (!this.closed) { this.closed = true; this.d.close(); } }

  // ---- the device
  create_device(): NResult<number> { return this.notVisible('device.create', `this session drives ${this.info.name} only; session.reset without backend returns to the software devices`) as NResult<number>; }
  destroy_device(): NStatus { return { err: EOPNOTSUPP, msg: `device.destroy: ${this.info.name} is a real device; session.reset closes it` }; }
  devices(): NDevice[] {
    const i = this.info; const a = i.attr;
    const num = (v: U64 | undefined) => Number(v ?? 0);
    const profile: NProfile = {
      name: 'ibverbs', description: `real device ${i.name} through ${i.library} (fw ${i.fwVer || '?'}, vendor 0x${num(a.vendorId).toString(16)} part ${num(a.vendorPartId)})`,
      transport: LINK[i.port.linkLayer] ?? `link layer ${i.port.linkLayer}`, deviceCapFlags: a.deviceCapFlags, atomicCap: a.atomicCap,
      maxQp: num(a.maxQp), maxQpWr: num(a.maxQpWr), maxSge: num(a.maxSge), maxCq: num(a.maxCq), maxCqe: num(a.maxCqe), maxMr: num(a.maxMr),
      maxPd: num(a.maxPd), maxMw: num(a.maxMw), maxSrq: num(a.maxSrq), maxSrqWr: num(a.maxSrqWr), maxSrqSge: num(a.maxSrqSge),
      maxQpRdAtom: num(a.maxQpRdAtom), maxQpInitRdAtom: num(a.maxQpInitRdAtom),
      // not in struct ibv_device_attr (ibv_query_device_ex's fields): 0 = not reported
      maxFastRegPageListLen: 0, maxInlineData: 0,
      activeMtu: i.port.activeMtu, maxMrSize: a.maxMrSize ?? 0, pageSizeCap: a.pageSizeCap ?? 0,
      // kernel-only features and the software device's modelled rules: a real device does not report them
      indirectReg: false, zeroBasedMr: false, readWithInv: false, lkeyEqRkey: false, keyBytePolicy: NOT_VISIBLE,
      notifyReportsMissed: false, quirks: {} as ProfileQuirks,
    };
    return [{ handle: 1, name: i.name, profile, nodeGuid: i.nodeGuid, gids: i.gids, portState: i.port.state }];
  }

  // ---- memory
  alloc_pd(): NResult<number> { return this.created(this.d.alloc_pd(), 'pd', (pd) => pd); }
  dealloc_pd(pd: number): NStatus { return this.destroyed(this.d.dealloc_pd(pd), pd, 'pd'); }
  alloc_buffer(length: number) { return this.created(this.d.alloc_buffer(length), 'buffer', (b) => b.handle, (b) => ({ a: b.addr, b: b.length })); }
  free_buffer(buf: number): NStatus { return this.destroyed(this.d.free_buffer(buf), buf, 'buffer'); }
  write_memory(addr: U64, data: Uint8Array): NStatus {
    const s = this.d.write_memory(addr, data);
    if (!s.err) this.events.push({ seq: ++this.seq, t: this.now(), kind: 'MemWrite', device: 0, obj: 0, objKind: 'buffer', a: addr, b: data.length, c: 0, d: 0 });
    return s;
  }
  read_memory(addr: U64, len: number): NResult<Buffer> { return this.d.read_memory(addr, len); }
  private mr(m: RealMr): NMr { return { ...m, kind: 'user', state: 'valid', sg: [] }; }
  reg_mr(pd: number, addr: U64, length: U64, access: number, iova?: U64): NResult<NMr> {
    const r = this.created(this.d.reg_mr(pd, addr, length, access, iova), 'mr', (m) => m.handle,
      (m) => ({ a: m.lkey, b: m.rkey, c: m.addr, d: m.length, keyState: 2 }));
    return mapped(r, (m) => this.mr(m));
  }
  rereg_mr(mr: number, flags: number, pd: number, addr: U64, length: U64, access: number): NResult<NMr> {
    const r = this.d.rereg_mr(mr, flags, pd, addr, length, access);
    if (!r.err) this.emit('ObjectModified', mr, 'mr', { a: r.value!.lkey, b: r.value!.rkey, c: flags, change: 0, keyState: 2 });
    return mapped(r, (m) => this.mr(m));
  }
  dereg_mr(mr: number): NStatus {
    const m = this.d.mr_info(mr);
    return this.destroyed(this.d.dereg_mr(mr), mr, 'mr', { a: m?.lkey ?? 0, keyState: 0 });
  }
  mr_info(mr: number): NMr | null { const m = this.d.mr_info(mr); return m ? this.mr(m) : null; }
  alloc_mr(): NResult<NMr> { return { err: EOPNOTSUPP, msg: 'mr.alloc: ib_alloc_mr is a kernel verb; libibverbs has no fast-registration MRs' }; }
  map_mr_sg(): NResult<number> { return { err: EOPNOTSUPP, msg: 'mr.map_sg: ib_map_mr_sg is a kernel verb; libibverbs has no fast-registration MRs' }; }
  alloc_mw(pd: number, type: number): NResult<NMw> {
    return this.created(this.d.alloc_mw(pd, type), 'mw', (w) => w.handle, (w) => ({ a: w.rkey, b: w.type, keyState: type === 1 ? 2 : 1 }));
  }
  dealloc_mw(mw: number): NStatus { const w = this.d.mw_info(mw); return this.destroyed(this.d.dealloc_mw(mw), mw, 'mw', { a: w?.rkey ?? 0, keyState: 0 }); }
  bind_mw(qp: number, mw: number, wrId: U64, sendFlags: number, mr: number, addr: U64, length: U64, access: number): NResult<number> {
    const r = this.d.bind_mw(qp, mw, wrId, sendFlags, mr, addr, length, access);
    if (!r.err) this.emit('ObjectModified', mw, 'mw', { a: r.value!, b: addr, c: length, d: access, change: Number(length) === 0 ? 10 : 5, keyState: 2 });
    return r;
  }
  mw_info(mw: number): NMw | null { return this.d.mw_info(mw); }

  // ---- CQs
  create_cq(dev: number, cqe: number, withChannel: boolean): NResult<number> {
    if (dev !== 1) return { err: ENOENT, msg: `no device with handle ${dev} (this session's device is 1: ${this.info.name})` };
    const r = this.created(this.d.create_cq(cqe, withChannel), 'cq', (c) => c.cq, (c) => ({ a: c.cqe, b: c.channel ? 1 : 0 }));
    return mapped(r, (c) => c.cq);
  }
  cq_info(cq: number) { return this.d.cq_info(cq); }
  destroy_cq(cq: number): NStatus { return this.destroyed(this.d.destroy_cq(cq), cq, 'cq'); }
  req_notify_cq(cq: number, solicitedOnly: boolean): NStatus {
    const s = this.d.req_notify_cq(cq, solicitedOnly);
    if (!s.err) this.emit('CqArmed', cq, 'cq', { a: solicitedOnly ? 1 : 0 });
    return s;
  }
  req_notify_cq_report_missed(): NResult<number> {
    return { err: EOPNOTSUPP, msg: 'cq.req_notify reportMissedEvents: IB_CQ_REPORT_MISSED_EVENTS is a kernel flag (ib_req_notify_cq); libibverbs has no such argument' };
  }
  /** ibv_poll_cq: the completions as the device returned them (events Cqe / WqeCompleted at the time of the poll; a
   *  QP an error completion names is queried, and its state change reported) */
  poll_cq(cq: number, max: number): NWc[] {
    const r = this.d.poll_cq(cq, max);
    if (r.err === ENOENT) return [];   // an unknown CQ polls empty, as on the software device
    if (r.err) throw new Error(r.msg);   // the provider's poll failed: the executor answers INTERNAL with its message
    for (const w of r.value!) {
      const qp = this.qpByNum(w.qpNum);
      this.emit('Cqe', cq, 'cq', { a: w.status, b: w.opcode, c: w.qpNum, wc: w, text: 'returned by ibv_poll_cq' });
      if (qp) this.emit('WqeCompleted', qp, 'qp', { a: w.wrId, b: w.status, c: w.opcode, d: 1, wc: w, text: (w.opcode & 128) ? 'receive (seen by ibv_poll_cq)' : 'seen by ibv_poll_cq' });
      if (w.status !== 0 && qp) this.requery(qp, 'after an error completion (ibv_query_qp)');
    }
    return r.value!;
  }
  get_cq_event(dev: number): NResult<number> {
    if (dev !== 1) return { err: ENOENT, msg: `no device with handle ${dev}` };
    const r = this.d.get_cq_event();
    if (!r.err) this.emit('CompEvent', r.value!, 'cq', { text: 'ibv_get_cq_event on the completion channel' });
    return r;
  }
  ack_cq_events(cq: number, n: number): NStatus { return this.d.ack_cq_events(cq, n); }

  // ---- SRQs
  create_srq(pd: number, maxWr: number, maxSge: number, srqLimit: number): NResult<number> {
    return this.created(this.d.create_srq(pd, maxWr, maxSge, srqLimit), 'srq', (s) => s, () => ({ a: maxWr, b: maxSge, c: srqLimit }));
  }
  modify_srq(srq: number, srqLimit: number): NStatus {
    const s = this.d.modify_srq(srq, srqLimit);
    if (!s.err) this.emit('ObjectModified', srq, 'srq', { a: srqLimit, change: 8 });
    return s;
  }
  destroy_srq(srq: number): NStatus { return this.destroyed(this.d.destroy_srq(srq), srq, 'srq'); }
  post_srq_recv(srq: number, wrs: NRecvWr[]): NPost {
    const r = this.d.post_srq_recv(srq, wrs);
    for (const w of wrs.slice(0, r.err ? r.badWr : wrs.length)) this.emit('WqePosted', srq, 'srq', { a: w.wrId ?? 0 });
    return r;
  }

  // ---- QPs
  create_qp(pd: number, init: Parameters<NRealDevice['create_qp']>[1]): NResult<NQp> {
    const r = this.created(this.d.create_qp(pd, init), 'qp', (q) => q.handle, (q) => ({ a: q.qpNum, b: q.init.qpType }));
    if (!r.err) { this.qpState.set(r.value!.handle, 0); this.qpNums.set(r.value!.qpNum, r.value!.handle); }
    return r;
  }
  modify_qp(qp: number, attr: NQpAttr, mask: number): NStatus {
    const s = this.d.modify_qp(qp, attr, mask);
    if (s.err) return s;
    if (attr.qpState !== undefined && (mask & 1)) this.requery(qp, 'ibv_modify_qp');
    else this.emit('ObjectModified', qp, 'qp', { a: mask, change: 7 });
    return s;
  }
  query_qp(qp: number): NQp | null { const r = this.d.query_qp(qp); return r.err ? null : r.value!; }
  destroy_qp(qp: number): NStatus {
    const n = this.query_qp(qp)?.qpNum;
    const s = this.destroyed(this.d.destroy_qp(qp), qp, 'qp');
    if (!s.err && n !== undefined) this.qpNums.delete(n);
    return s;
  }
  create_ah(pd: number, destDevice: number, sgidIndex: number): NResult<number> {
    if (destDevice !== 1) return { err: ENOENT, msg: `destDevice: no device with handle ${destDevice} (a real device's session has device 1 only)` };
    const g = this.info.gids.find((x) => x.index === sgidIndex);
    if (!g) return { err: 22, msg: `sgidIndex: ${this.info.name} has no GID ${sgidIndex} (it has: ${this.info.gids.map((x) => x.index).join(', ')})` };
    return this.created(this.d.create_ah(pd, Buffer.from(g.gid.replace(/:/g, ''), 'hex'), sgidIndex), 'ah', (a) => a, () => ({ a: destDevice }));
  }
  post_send(qp: number, wrs: NSendWr[]): NPost {
    const r = this.d.post_send(qp, wrs);
    for (const w of wrs.slice(0, r.err ? r.badWr : wrs.length)) {
      const len = w.inlineData ? w.inlineData.length : (w.sgList ?? []).reduce((s, g) => s + g.length, 0);
      this.emit('WqePosted', qp, 'qp', { a: w.wrId ?? 0, b: w.opcode, c: len });
    }
    return r;
  }
  post_recv(qp: number, wrs: NRecvWr[]): NPost {
    const r = this.d.post_recv(qp, wrs);
    for (const w of wrs.slice(0, r.err ? r.badWr : wrs.length)) this.emit('WqePosted', qp, 'qp', { a: w.wrId ?? 0, b: 128, c: (w.sgList ?? []).reduce((s, g) => s + g.length, 0) });
    return r;
  }
  private qpByNum(qpn: number): number { return this.qpNums.get(qpn) ?? 0; }
  /** ibv_query_qp; a state other than the one last seen becomes a QpState event */
  private requery(qp: number, how: string): void {
    const q = this.query_qp(qp);
    if (!q) return;
    const was = this.qpState.get(qp) ?? 0;
    if (q.attr.qpState !== was) {
      this.qpState.set(qp, q.attr.qpState);
      this.emit('QpState', qp, 'qp', { a: was, b: q.attr.qpState, c: q.qpNum, text: `${how}` });
    }
  }

  // ---- events
  /** the async events the addon's thread collected (what ibv_get_async_event returned), as AsyncEvent events */
  private takeAsync(): number {
    const evs = this.d.take_async();
    for (const e of evs) {
      this.emit('AsyncEvent', e.obj, e.objKind, { a: e.type });   // text: the ibv_event_type name (eventOut)
      if (e.objKind === 'qp' && e.obj) this.requery(e.obj, 'after an asynchronous event (ibv_query_qp)');
    }
    return evs.length;
  }
  drain_events(max = Infinity): NEvent[] {
    this.takeAsync();
    if (max >= this.events.length) { const all = this.events; this.events = []; return all; }
    return this.events.splice(0, max);
  }
  drain_events_json(max = 2000) {
    const evs = this.drain_events(max);
    return { json: evs.map((e) => JSON.stringify(e)).join(','), count: evs.length, first: evs[0]?.seq ?? 0, objects: evs.filter((e) => e.kind.startsWith('Object')) };
  }
  drain_events_frame(): never { throw new Error(`binary event frames: ${NOT_VISIBLE} session (no engine flood to sample)`); }
  drain_events_sample(): never { throw new Error(`free running: ${NOT_VISIBLE}`); }
  last_seq(): U64 { return this.seq; }
  sample_events(): U64 { return 0; }
  set_event_capture(): void { /* the events are the verbs' own: always on */ }
  set_data_path(): NStatus { return this.notVisible('dataPath', 'a real NIC moves the bytes itself; Fast / Strict choose how the software device does'); }
  data_path(): 'fast' | 'strict' { return 'strict'; }   // what the session reports; nothing is skipped on a real device
  now_ns(): U64 { return this.now(); }
  /** the host's poll while the session is real-time: asynchronous events */
  net_poll(): number { return this.takeAsync(); }

  // ---- what a real device does not let software see or drive
  set_faults(): void { /* refused by the engine handlers before reaching here */ }
  step(): boolean { return false; }
  run(): U64 { return 0; }
  step_traffic() { return { steps: 0, idle: true }; }
  traffic_start(): NStatus { return this.notVisible('engine.traffic', 'the load generator drives the software device only'); }
  traffic_stop(): void { /* never started */ }
  traffic_state() { return { on: false, qp: 0, cq: 0, wrs: 0, posted: 0, completed: 0 }; }
  runner_start(): NStatus { return this.notVisible('engine.autorun', 'the device runs in hardware, in real time'); }
  runner_stop(): U64 { return 0; }
  runner_pause(): U64 { return 0; }
  runner_resume(): void { /* no runner */ }
  runner_take(): U64 { return 0; }
  runner_running(): boolean { return false; }
  runner_set_event_budget(): void { /* no runner */ }
  queue_snapshot() { return []; }
  write_pcap(): NStatus { return this.notVisible('pcap.get', 'the NIC sends and receives the packets itself; capture them on the wire (tcpdump on the RoCE interface, ibdump, a mirror port)'); }
  attach_net(): NResult<never> { return this.notVisible('device.attachNet', `${this.info.name} is on its own network already`) as NResult<never>; }
  detach_net(): NStatus { return this.notVisible('device.detachNet'); }
  net_info(): null { return null; }
  write_net_pcap(): NStatus { return this.write_pcap(); }
}
