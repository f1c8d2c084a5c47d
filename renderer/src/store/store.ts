// The console's zustand store: one vanilla store, built from slices per domain (host, ui, devices,
// memory/keys, queues, wire, events, run controls). Every user action goes through `exec`, which validates
// the protocol command with the shared zod schema, sends it, and files any error under the form that caused
// it. Device events are ingested into mutable models (typed-array ring, key table, rings, wire log) and the
// store is notified at most once per animation frame.
import { createStore, type StoreApi } from 'zustand/vanilla';
import {
  Command, DeviceCap, AtomicCap, FrameEventView, Mtu, QpState, describeZodError, namesOf,
  type DeviceEvent, type ErrorInfo, type EventBatch, type EventFrame, type FrameBatch, type HostStatus, type Reply, type RingSnapshot, type SendWr, type RecvWr,
} from '../../../app/protocol/index.ts';
import { EventRing, FilteredView, type EventFilter } from './eventRing.ts';
import { KeyChecks, KeyTable, MemoryMarks, QueueModel, WireLog } from './models.ts';
import { handleOf, isRec, num, pick, str, type Rec } from './spec.ts';

// ------------------------------------------------------------------ transport (shape of renderer/src/transport)
export interface ConsoleTransport {
  call(command: Command): Promise<Reply>;
  onEvents(cb: (batch: EventBatch | FrameBatch | RingSnapshot | DeviceEvent[]) => void): unknown;
  onHost(cb: (h: HostStatus) => void): unknown;
  control(action: 'restart-host' | 'kill-host'): unknown;
  /** tell the host the console has drawn the events up to seq and how many more it asks for (optional: flow
   *  control of autorun) */
  ack?(seq: number, window?: number): unknown;
}

export type Scheduler = (cb: () => void) => void;

// which models an event kind goes to (from the kinds each model declares)
const TO_KEYS = 1, TO_QUEUES = 2, TO_WIRE = 4, TO_CHECKS = 8, TO_MARKS = 16;
const ROUTE = new Map<string, number>();
for (const [bit, kinds] of [[TO_KEYS, KeyTable.KINDS], [TO_QUEUES, QueueModel.KINDS], [TO_WIRE, WireLog.KINDS], [TO_CHECKS, KeyChecks.KINDS], [TO_MARKS, MemoryMarks.KINDS]] as const)
  for (const k of kinds) ROUTE.set(k, (ROUTE.get(k) ?? 0) | bit);
// lifecycle events also update the store's own lists (buffers, PDs, devices)
ROUTE.set('ObjectCreated', ROUTE.get('ObjectCreated')! | 32); ROUTE.set('ObjectDestroyed', ROUTE.get('ObjectDestroyed')! | 32);
/** main-thread time the console spends applying events per frame; the rest waits for the next frame */
export const FRAME_BUDGET_MS = 8;
export const rafScheduler: Scheduler = (cb) => {
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => cb());
  else setTimeout(cb, 16);
};

// ------------------------------------------------------------------ views
export interface ProfileView { name: string; description: string; transport: string; raw: Rec }
export interface DeviceView {
  handle: number; name: string; profile: string; capFlags: number; capNames: string[]; atomicCap: string;
  limits: [string, number][]; gids: { index: number; gid: string; type: string }[]; portState: number; portStateName: string;
  activeMtu: string; transport: string; nodeGuid: string;
  /** the device's UDP transport when it is on a real network (device.attachNet), else null */
  net: NetView | null;
  raw: Rec;
}
export interface NetView {
  interface: string; port: number;
  gids: { index: number; gid: string; type: string; ip?: string }[];
  stats: { txPackets: number; txBytes: number; rxPackets: number; rxBytes: number; rxDropped: number; txDropped: number };
}
export interface HostInterface { name: string; up: boolean; loopback: boolean; mtu: number; addrs: string[] }
/** where a device goes on the network: a host interface or one local address; UDP port; remote hosts' port */
export interface AttachNetArgs { interface?: string; address?: string; port: number; peerPort?: number }
/** the other side of a connection on another host, as it shows it (rc_pingpong's "remote address") */
export interface RemoteDestArgs { dgid: string; qpn: number; psn: number; sgidIndex?: number }
export interface BufferView { handle: number; addr: number; length: number; destroyed: boolean }
export interface PdView { handle: number; device: number; destroyed: boolean }
export interface PollView { cq: number; wcs: Rec[]; seqAt: number }
export type PanelId = 'devices' | 'memory' | 'queues' | 'wire' | 'events' | 'run' | 'scenario' | 'sg';
export interface Faults { loss: number; duplicate: number; reorder: number; delay: number; delayNs: number }

/** renderer-side latency samples: a batch's arrival -> the frame after the store published it (ms) */
export class LatencyStats {
  readonly samples = new Float64Array(8192);
  n = 0;
  add(ms: number) { this.samples[this.n++ % this.samples.length] = ms; }
  percentile(p: number): number {
    const k = Math.min(this.n, this.samples.length);
    if (!k) return NaN;
    const a = Array.from(this.samples.subarray(0, k)).sort((x, y) => x - y);
    return a[Math.min(k - 1, Math.floor((p / 100) * k))];
  }
  reset() { this.n = 0; }
}

export interface Model {
  latency: LatencyStats;
  ring: EventRing; view: FilteredView; keys: KeyTable; queues: QueueModel; wire: WireLog; marks: MemoryMarks; checks: KeyChecks;
}

export interface ConsoleState {
  model: Model;
  versions: { events: number; keys: number; queues: number; wire: number; memory: number };
  // host
  host: { state: 'connecting' | 'starting' | 'up' | 'down'; reason?: string; restarts?: number; pid?: number };
  hasTransport: boolean;
  restartHost(): void;
  /** the "crash the backend" demo: kill the host process (the console then shows it down, with the reason) */
  killHost(): void;
  // ui
  theme: 'light' | 'dark'; panel: PanelId;
  errors: Record<string, ErrorInfo | undefined>; pending: Record<string, boolean>;
  setTheme(t: 'light' | 'dark'): void; setPanel(p: PanelId): void; clearError(form: string): void;
  exec(form: string, command: unknown): Promise<{ result: unknown } | null>;
  // devices
  devicesLoaded: boolean; devices: DeviceView[]; profiles: ProfileView[]; realDevices: Rec[]; selectedDevice: number | null; pds: PdView[];
  refreshDevices(): Promise<void>; createDevice(profile: string, name?: string): Promise<void>;
  destroyDevice(handle: number): Promise<void>; selectDevice(h: number | null): void; allocPd(device: number): Promise<void>;
  /** host interfaces (for the "Put on network" form) and whether the session runs in real time (a device is on
   *  the network: the UDP transport drives the clock, so step / run / autorun are refused) */
  interfaces: HostInterface[]; realTime: boolean;
  attachNet(device: number, a: AttachNetArgs): Promise<boolean>; detachNet(device: number): Promise<boolean>;
  // memory & keys
  buffers: BufferView[]; selectedBuffer: number | null;
  /** objects alive in the session that this page has no details for (created before it connected) */
  unknownObjects: { handle: number; kind: string; device: number }[];
  hex: Record<number, { addr: number; bytes: Uint8Array; seqAt: number }>;
  allocBuffer(length: number): Promise<void>; freeBuffer(h: number): Promise<void>; selectBuffer(h: number | null): void;
  writeMemory(form: string, addr: number, hexData: string): Promise<boolean>; readBuffer(h: number): Promise<void>;
  /** which 4 KiB window of each buffer the hex view shows (offset from the buffer start) */
  hexOffset: Record<number, number>; setHexOffset(h: number, offset: number): void;
  regMr(args: { pd: number; addr: number; length: number; access: string[] }): Promise<boolean>;
  deregMr(h: number): Promise<void>;
  allocMw(pd: number, type: 'IBV_MW_TYPE_1' | 'IBV_MW_TYPE_2'): Promise<boolean>;
  allocMr(pd: number, maxNumSg: number, indirect: boolean): Promise<boolean>;
  mapMrSg(mr: number, sgList: { addr: number; length: number; lkey: number }[], pageSize: number): Promise<boolean>;
  bindMw(args: { qp: number; mw: number; mr: number; addr: number; length: number; access: string[] }): Promise<boolean>;
  createSrq(pd: number, maxWr: number, srqLimit: number): Promise<boolean>;
  // queues
  createCq(device: number, cqe: number): Promise<boolean>;
  createQp(args: { pd: number; sendCq: number; recvCq: number; qpType: string; maxSendWr: number; maxRecvWr: number }): Promise<boolean>;
  connectQps(qp: number, peer: number): Promise<boolean>;
  /** connect qp to a QP on another host (only this side moves to RTS); sqPsn = our PSN the other side needs */
  connectRemote(qp: number, remote: RemoteDestArgs, sqPsn: number): Promise<boolean>;
  queryQp(qp: number): Promise<void>;
  postSend(qp: number, wr: SendWr): Promise<boolean>;
  /** the last WR posted from the console on each QP (the load generator repeats it) */
  lastPosted: Record<number, SendWr>;
  /** the load generator's state as the host last reported it (engine.traffic) */
  traffic: { on: boolean; qp?: number; posted?: number; completed?: number; stopped?: string } | null;
  setTraffic(on: boolean, qp?: number): Promise<boolean>; postRecv(qp: number, wr: RecvWr): Promise<boolean>;
  pollCq(cq: number, max: number): Promise<void>; reqNotify(cq: number): Promise<void>;
  lastPoll: Record<number, PollView>;
  // wire
  selectedPacket: number | null; selectPacket(id: number | null): void;
  /** the session's pcap, or (device given) the capture of that device's real network traffic */
  savePcap(device?: number): Promise<Uint8Array | null>;
  // events
  filter: EventFilter; setFilter(f: Partial<EventFilter>): void;
  ingest(events: DeviceEvent[], dropped?: number): void;
  /** the same for binary event frames (the autorun flood): the events are read from the columns, no object each */
  ingestFrames(frames: EventFrame[], dropped?: number): void;
  /** free run: the rings as the device holds them after event `seq`, applied in order with the events */
  ingestRings(m: RingSnapshot): void;
  /** forget everything drawn (host restarting: its journal replay sends the events again) */
  resetModels(): void;
  /** on connect: devices, and the objects alive in the session (session.info) */
  syncObjects(): Promise<void>;
  // run controls
  autorun: boolean; stepsPerSecond: number; faults: Faults; lastRun: string;
  /** autorun free running (engine.autorun free): the engine on its own thread, the console shown a sample */
  freeRun: boolean;
  setAutorun(on: boolean, stepsPerSecond?: number, free?: boolean): Promise<void>; step(count: number): Promise<void>; runToIdle(): Promise<void>;
  setFaults(f: Faults): Promise<boolean>;
  /** session.reset: a fresh session (the host drops every object); the console forgets what it drew */
  resetSession(seed?: number): Promise<boolean>;
}

export type ConsoleStore = StoreApi<ConsoleState>;

// ------------------------------------------------------------------ normalizers of replies
const CAP_SKIP = new Set(['name', 'description', 'transport', 'keyBytePolicy', 'key_byte_policy']);
const snakeName = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function profileView(p: unknown): ProfileView {
  const r = (isRec(p) ? p : { name: String(p) }) as Rec;
  return { name: str(r, 'name') ?? '?', description: str(r, 'description') ?? '', transport: str(r, 'transport') ?? '', raw: r };
}
function gidText(g: unknown): string {
  if (typeof g === 'string') return g;
  if (Array.isArray(g)) {
    const b = g as number[]; const parts: string[] = [];
    for (let i = 0; i < b.length; i += 2) parts.push(((b[i] << 8) | (b[i + 1] ?? 0)).toString(16).padStart(4, '0'));
    return parts.join(':');
  }
  return '';
}
export function deviceView(d: unknown): DeviceView {
  const r = (isRec(d) ? d : {}) as Rec;
  const prof = pick(r, 'profile');
  const pr = (isRec(prof) ? prof : r) as Rec;
  const capFlags = num(pr, 'deviceCapFlags', 'capFlags') ?? 0;
  const atomic = pick(pr, 'atomicCap');
  const limits: [string, number][] = [];
  for (const [k, v] of Object.entries(pr)) {
    if (CAP_SKIP.has(k) || typeof v !== 'number') continue;
    const s = snakeName(k);
    if (s.startsWith('max_') || s === 'page_size_cap' || s === 'active_mtu') limits.push([s, v]);
  }
  const gids = pick(r, 'gids');
  return {
    handle: handleOf(r, 'device') ?? 0,
    name: str(r, 'name') ?? '?',
    profile: typeof prof === 'string' ? prof : str(pr, 'name') ?? '?',
    capFlags, capNames: namesOf(DeviceCap, capFlags),
    atomicCap: typeof atomic === 'string' ? atomic : AtomicCap.name(typeof atomic === 'number' ? atomic : 0),
    limits,
    gids: Array.isArray(gids) ? gids.map((g, i) => ({ index: num(g, 'index') ?? i, gid: gidText(pick(g, 'gid') ?? g), type: str(g, 'type') ?? '' })) : [],
    portState: num(r, 'portState') ?? 0,
    portStateName: str(r, 'portStateName') ?? (num(r, 'portState') === 4 ? 'IBV_PORT_ACTIVE' : `port state ${num(r, 'portState') ?? '?'}`),
    activeMtu: str(pr, 'activeMtuName') ?? Mtu.name(num(pr, 'activeMtu') ?? 0),
    transport: str(pr, 'transport') ?? '',
    net: netView(pick(r, 'net')),
    nodeGuid: (() => { const v = pick(r, 'nodeGuid'); return typeof v === 'number' ? `0x${v.toString(16)}` : typeof v === 'string' ? v : ''; })(),
    raw: r,
  };
}
export function netView(v: unknown): NetView | null {
  if (!isRec(v)) return null;
  const st = (isRec(v.stats) ? v.stats : {}) as Rec;
  const n = (k: string) => num(st, k) ?? 0;
  const gids = Array.isArray(v.gids) ? v.gids.filter(isRec) as Rec[] : [];
  return {
    interface: str(v, 'interface') ?? '', port: num(v, 'port') ?? 0,
    gids: gids.map((g, i) => ({ index: num(g, 'index') ?? i, gid: str(g, 'gid') ?? '', type: str(g, 'type') ?? '', ...(str(g, 'ip') ? { ip: str(g, 'ip') } : {}) })),
    stats: { txPackets: n('txPackets'), txBytes: n('txBytes'), rxPackets: n('rxPackets'), rxBytes: n('rxBytes'), rxDropped: n('rxDropped'), txDropped: n('txDropped') },
  };
}
/** The GID this device sends from by default (same rule as the host): its first IPv4-mapped GID, else its first. */
export function localGid(net: NetView | null): { index: number; gid: string; ip?: string } | null {
  if (!net || !net.gids.length) return null;
  return net.gids.find((g) => g.gid.startsWith('0000:0000:0000:0000:0000:ffff:')) ?? net.gids[0]!;
}
export function bytesFrom(v: unknown): Uint8Array {
  const s = typeof v === 'string' ? v : str(v, 'data', 'hex', 'bytes');
  if (typeof s === 'string') {
    const out = new Uint8Array(s.length >> 1);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(i * 2, 2), 16);
    return out;
  }
  const arr = Array.isArray(v) ? v : pick(v, 'data', 'bytes');
  if (Array.isArray(arr)) return Uint8Array.from(arr as number[]);
  return new Uint8Array(0);
}
function listOf(result: unknown, ...names: string[]): unknown[] {
  if (Array.isArray(result)) return result;
  const v = pick(result, ...names);
  return Array.isArray(v) ? v : [];
}

// ------------------------------------------------------------------ the store
export interface StoreOptions {
  transport?: ConsoleTransport | null; schedule?: Scheduler; ringCapacity?: number; transportProblem?: string; frameBudgetMs?: number;
  /** clock (ms); injectable for tests */
  now?: () => number;
}

/** Frame pacing of the flow control: with each acknowledgement the console asks the host for a window of events
 *  (autorun stays at most that many ahead of what was drawn). A frame that came more than SLOW_FRAME_MS after the
 *  previous one means the page is dropping frames: the window halves; frames on time widen it a little (additive
 *  increase, multiplicative decrease, as TCP does). Gaps longer than IDLE_GAP_MS are pauses of the stream, not slow
 *  frames. The console keeps its frame rate first and takes the event rate the machine leaves it. */
export const SLOW_FRAME_MS = 25;
/** how often the load generator's counts are read while it runs on autorun */
export const TRAFFIC_POLL_MS = 500;
export const ACK_WINDOW = { initial: 4000, min: 256, max: 65536 };
export const IDLE_GAP_MS = 250;

export function createConsoleStore(opts: StoreOptions = {}): ConsoleStore {
  const transport = opts.transport ?? null;
  const schedule = opts.schedule ?? rafScheduler;
  const budget = opts.frameBudgetMs ?? FRAME_BUDGET_MS;
  const ring = new EventRing(opts.ringCapacity ?? 1 << 20);
  const model: Model = {
    latency: new LatencyStats(),
    ring, view: new FilteredView(ring), keys: new KeyTable(), queues: new QueueModel(), wire: new WireLog(),
    marks: new MemoryMarks(), checks: new KeyChecks(),
  };
  // dirty bits, published once per frame
  const dirty = { events: false, keys: false, queues: false, wire: false, memory: false, devices: false, hexBuffers: new Set<number>() };
  let flushQueued = false;
  let pendingSince = -1;   // arrival time of the oldest batch not yet published
  // batches received, not yet applied: event objects, or a frame's events from index `from`; in a free run also the
  // points where events were dropped and the rings snapshots, in arrival order
  const inbox: (DeviceEvent[] | { frame: EventFrame; from: number } | { gap: true } | { rings: RingSnapshot })[] = [];
  let inboxHead = 0;                   // next event in inbox[0]
  const view = new FrameEventView();   // re-pointed at each frame event as it is applied
  let held: ({ events: DeviceEvent[]; dropped: number } | { frames: EventFrame[]; dropped: number })[] | null = null;   // live batches while events.recent is fetched
  let skipUpTo = -1;                   // seq of the last event of that history (live duplicates are skipped)
  let recentLoading: Promise<void> | null = null;
  let lastAcked = -1;                  // seq of the last event acknowledged to the host
  const now = opts.now ?? (() => (typeof performance !== 'undefined' ? performance.now() : Date.now()));
  let lastFrameAt = -Infinity;         // when the previous flush ran (frame pacing of the ack)
  let ackWindow = ACK_WINDOW.initial;  // the window of events asked for with each ack
  let slowSinceAck = false;            // a frame came late since the last ack
  let lastIngestAt = -Infinity;        // when the last events arrived
  let trafficPoll: ReturnType<typeof setInterval> | null = null;   // see syncTrafficPoll
  const reading = new Set<number>();

  const store = createStore<ConsoleState>()((set, get) => {
    const setError = (form: string, err: ErrorInfo | undefined) => set((s) => ({ errors: { ...s.errors, [form]: err } }));

    /** apply one event (from a frame: f/j, and e is the view on it) */
    function apply(e: DeviceEvent, sel: number | null, shown: Record<number, unknown>, f?: EventFrame, j = 0) {
      if (f) ring.pushFrameEvent(f, j, e.text); else ring.push(e);
      dirty.events = true;
      // only the models that look at this kind of event (most kinds concern one)
      const kind = e.kind;
      const to = ROUTE.get(kind) ?? 0;
      if (to === 0) return;
      if (to & TO_KEYS && model.keys.applyEvent(e)) dirty.keys = true;
      if (to & TO_QUEUES && model.queues.applyEvent(e)) dirty.queues = true;
      if (to & TO_WIRE && model.wire.applyEvent(e)) dirty.wire = true;
      if (to & TO_CHECKS && model.checks.applyEvent(e)) dirty.keys = true;
      if (to & TO_MARKS && model.marks.applyEvent(e)) {
        dirty.memory = true;
        if (e.obj === sel || shown[e.obj]) dirty.hexBuffers.add(e.obj);
      }
      if (kind === 'ObjectCreated' || kind === 'ObjectDestroyed') {
        if (e.objKind === 'device') dirty.devices = true;
        if (e.objKind === 'buffer' || e.objKind === 'pd') applyObjectEvent(e);
      }
    }
    /** apply queued events for at most budgetMs (checked every 256 events); true when the inbox is empty */
    function drain(budgetMs: number): boolean {
      const t0 = now();
      const sel = get().selectedBuffer; const shown = get().hex;
      while (inbox.length) {
        const b = inbox[0]!;
        if ('gap' in b) model.queues.gap();
        else if ('rings' in b) { model.queues.applySnapshot(b.rings); dirty.queues = true; }
        else if (Array.isArray(b)) {
          while (inboxHead < b.length) {
            apply(b[inboxHead++]!, sel, shown);
            if ((inboxHead & 255) === 0 && now() - t0 > budgetMs) return false;
          }
        } else {
          if (inboxHead < b.from) inboxHead = b.from;
          const f = b.frame;
          while (inboxHead < f.count) {
            const j = inboxHead++;
            apply(view.at(f, j) as unknown as DeviceEvent, sel, shown, f, j);
            if ((inboxHead & 255) === 0 && now() - t0 > budgetMs) return false;
          }
        }
        inbox.shift(); inboxHead = 0;
      }
      return true;
    }

    function flush() {
      flushQueued = false;
      const frameAt = now();
      const gap = frameAt - lastFrameAt;
      lastFrameAt = frameAt;
      if (gap > SLOW_FRAME_MS && gap < IDLE_GAP_MS) slowSinceAck = true;
      const done = drain(budget);
      if (inbox.length || !done) dirty.events = true;
      const anyDirty = dirty.events || dirty.keys || dirty.queues || dirty.wire || dirty.memory || model.view.pending > 0;
      const v = { ...get().versions };
      // the filtered view scans what came in, within what is left of the frame's budget (a new filter over a million
      // rows is scanned over several frames)
      if (dirty.events || model.view.pending) { model.view.update(frameAt + budget, now); v.events++; }
      if (dirty.keys) v.keys++;
      if (dirty.queues) v.queues++;
      if (dirty.wire) v.wire++;
      if (dirty.memory) v.memory++;
      const refreshDevices = dirty.devices;
      const hexBuffers = [...dirty.hexBuffers];
      dirty.events = dirty.keys = dirty.queues = dirty.wire = dirty.memory = dirty.devices = false;
      dirty.hexBuffers.clear();
      if (anyDirty) set({ versions: v });
      // everything received is applied: say so once per frame, with the window we ask for (see SLOW_FRAME_MS), so the
      // host's autorun stays just ahead of us
      if (done && transport?.ack && ring.total > 0) {
        const last = ring.seq[(ring.total - 1) % ring.capacity]!;
        if (last !== lastAcked) {
          ackWindow = slowSinceAck ? Math.max(ACK_WINDOW.min, ackWindow >> 1) : Math.min(ACK_WINDOW.max, ackWindow + Math.max(64, ackWindow >> 4));
          slowSinceAck = false;
          lastAcked = last; transport.ack(last, ackWindow);
        }
      }
      // the rest next frame: no frame does more than the budget; while events stream (flow control on), every frame
      // comes here, so that the gaps measured above are the page's frame intervals
      if (!done || model.view.pending > 0 || (transport?.ack && frameAt - lastIngestAt < IDLE_GAP_MS)) queueFlush();
      if (done && pendingSince >= 0) {
        const since = pendingSince; pendingSince = -1;
        schedule(() => model.latency.add(now() - since));   // the next frame: this one has been painted
      }
      if (refreshDevices) void get().refreshDevices();
      for (const b of hexBuffers) void get().readBuffer(b);
    }
    const queueFlush = () => { if (!flushQueued) { flushQueued = true; schedule(flush); } };

    return {
      model,
      versions: { events: 0, keys: 0, queues: 0, wire: 0, memory: 0 },
      host: transport ? { state: 'connecting' } : { state: 'down', reason: opts.transportProblem ?? 'no transport to the backend host (not built yet)' },
      hasTransport: !!transport,
      restartHost() { if (transport) transport.control('restart-host'); else setError('host', { code: 'HOST_DOWN', message: 'no transport to the backend host (not built yet)' }); },
      killHost() { if (transport) transport.control('kill-host'); else setError('host', { code: 'HOST_DOWN', message: 'no transport to the backend host (not built yet)' }); },

      theme: 'light', panel: 'devices', errors: {}, pending: {},
      setTheme: (theme) => set({ theme }),
      setPanel: (panel) => set({ panel }),
      clearError: (form) => setError(form, undefined),

      async exec(form, command) {
        const parsed = Command.safeParse(command);
        if (!parsed.success) { setError(form, describeZodError(parsed.error)); return null; }
        if (!transport) { setError(form, { code: 'HOST_DOWN', message: 'no transport to the backend host (not built yet)' }); return null; }
        set((s) => ({ pending: { ...s.pending, [form]: true } }));
        let reply: Reply;
        try { reply = await transport.call(parsed.data); } catch (e) {
          reply = { type: 'reply', id: null, ok: false, error: { code: 'HOST_DOWN', message: (e as Error)?.message ?? String(e) } };
        }
        set((s) => ({ pending: { ...s.pending, [form]: false } }));
        if (!reply.ok) { setError(form, reply.error ?? { code: 'ERROR', message: 'the host refused the command without a reason' }); return null; }
        if (get().errors[form]) setError(form, undefined);
        if (get().host.state === 'connecting') set({ host: { state: 'up' } });
        return { result: reply.result };
      },

      // ---------------------------------------------------------- devices
      devicesLoaded: false, devices: [], profiles: [], realDevices: [], selectedDevice: null, pds: [],
      async refreshDevices() {
        const r = await get().exec('devices', { cmd: 'device.list', args: {} });
        if (!r) return;
        const devices = listOf(r.result, 'devices').map(deviceView);
        const profiles = listOf(r.result, 'profiles').map(profileView);
        const real = listOf(r.result, 'realDevices', 'real', 'ibverbs').filter(isRec) as Rec[];
        const sel = get().selectedDevice;
        const ifs = listOf(r.result, 'interfaces').filter(isRec).map((i) => ({
          name: str(i, 'name') ?? '', up: pick(i, 'up') === true, loopback: pick(i, 'loopback') === true, mtu: num(i, 'mtu') ?? 0,
          addrs: (Array.isArray(i.addrs) ? i.addrs : []).filter((a): a is string => typeof a === 'string'),
        }));
        const realTime = devices.some((d) => d.net);
        set({
          interfaces: ifs, realTime, ...(realTime ? { autorun: false } : {}),
          devicesLoaded: true, devices, realDevices: real,
          profiles: profiles.length ? profiles : get().profiles,
          selectedDevice: sel !== null && devices.some((d) => d.handle === sel) ? sel : devices[0]?.handle ?? null,
        });
      },
      async createDevice(profile, name) {
        const r = await get().exec('device.create', { cmd: 'device.create', args: name ? { profile, name } : { profile } });
        if (r) { await get().refreshDevices(); const h = handleOf(r.result, 'device'); if (h) set({ selectedDevice: h }); }
      },
      async destroyDevice(handle) {
        if (await get().exec(`device.destroy:${handle}`, { cmd: 'device.destroy', args: { device: handle } })) await get().refreshDevices();
      },
      selectDevice: (h) => set({ selectedDevice: h }),
      interfaces: [], realTime: false,
      async attachNet(device, a) {
        const args: Record<string, unknown> = { device, port: a.port };
        if (a.interface !== undefined) args.interface = a.interface; else args.address = a.address;
        if (a.peerPort !== undefined) args.peerPort = a.peerPort;
        const r = await get().exec(`device.attachNet:${device}`, { cmd: 'device.attachNet', args });
        await get().refreshDevices();
        return !!r;
      },
      async detachNet(device) {
        const r = await get().exec(`device.detachNet:${device}`, { cmd: 'device.detachNet', args: { device } });
        await get().refreshDevices();
        return !!r;
      },
      async allocPd(device) {
        const r = await get().exec(`pd.alloc:${device}`, { cmd: 'pd.alloc', args: { device } });
        const h = r && handleOf(r.result, 'pd');
        if (h && !get().pds.some((p) => p.handle === h)) set((s) => ({ pds: [...s.pds, { handle: h, device, destroyed: false }] }));
      },

      // ---------------------------------------------------------- memory & keys
      buffers: [], selectedBuffer: null, hex: {}, unknownObjects: [], hexOffset: {},
      setHexOffset(h, offset) { set((s) => ({ hexOffset: { ...s.hexOffset, [h]: offset } })); void get().readBuffer(h); },
      async allocBuffer(length) {
        const r = await get().exec('buffer.alloc', { cmd: 'buffer.alloc', args: { length } });
        if (!r) return;
        const h = handleOf(r.result, 'buffer'); const addr = num(r.result, 'addr', 'va');
        if (h && addr !== undefined) {
          const b: BufferView = { handle: h, addr, length: num(r.result, 'length') ?? length, destroyed: false };
          set((s) => ({ buffers: s.buffers.some((x) => x.handle === h) ? s.buffers : [...s.buffers, b], selectedBuffer: h }));
          void get().readBuffer(h);
        }
      },
      async freeBuffer(h) {
        if (await get().exec(`buffer.free:${h}`, { cmd: 'buffer.free', args: { buffer: h } }))
          set((s) => ({ buffers: s.buffers.map((b) => (b.handle === h ? { ...b, destroyed: true } : b)) }));
      },
      selectBuffer(h) { set({ selectedBuffer: h }); if (h) void get().readBuffer(h); },
      async writeMemory(form, addr, hexData) {
        return !!(await get().exec(form, { cmd: 'memory.write', args: { addr, data: hexData } }));
      },
      async readBuffer(h) {
        const b = get().buffers.find((x) => x.handle === h);
        if (!b || b.destroyed || reading.has(h)) return;
        reading.add(h);
        const seqAt = model.ring.total;
        try {
          const off = Math.max(0, Math.min(get().hexOffset[h] ?? 0, Math.max(0, b.length - 1)));
          const addr = b.addr + off;
          const r = await get().exec(`memory.read:${h}`, { cmd: 'memory.read', args: { addr, length: Math.min(b.length - off, 4096) } });
          if (r) set((s) => ({ hex: { ...s.hex, [h]: { addr, bytes: bytesFrom(r.result), seqAt } } }));
        } finally { reading.delete(h); }
      },
      async regMr(args) {
        const r = await get().exec('mr.reg', { cmd: 'mr.reg', args });
        if (!r) return false;
        model.keys.applyInfo('MR', r.result, handleOf(r.result, 'mr'));
        dirty.keys = true; queueFlush();
        return true;
      },
      async deregMr(h) {
        if (await get().exec(`mr.dereg:${h}`, { cmd: 'mr.dereg', args: { mr: h } })) {
          const k = model.keys.byHandle.get(h); if (k) { k.destroyed = true; k.state = 'destroyed'; }
          dirty.keys = true; queueFlush();
        }
      },

      async allocMw(pd, type) {
        const r = await get().exec('mw.alloc', { cmd: 'mw.alloc', args: { pd, type } });
        if (!r) return false;
        model.keys.applyInfo('MW', r.result, handleOf(r.result, 'mw'));
        dirty.keys = true; queueFlush();
        return true;
      },
      async allocMr(pd, maxNumSg, indirect) {
        const r = await get().exec('mr.alloc', { cmd: 'mr.alloc', args: { pd, maxNumSg, indirect } });
        if (!r) return false;
        model.keys.applyInfo('MR', r.result, handleOf(r.result, 'mr'));
        dirty.keys = true; queueFlush();
        return true;
      },
      async mapMrSg(mr, sgList, pageSize) {
        const r = await get().exec('mr.map_sg', { cmd: 'mr.map_sg', args: { mr, sgList, pageSize } });
        if (!r) return false;
        const info = pick(r.result, 'mrInfo');
        if (isRec(info)) model.keys.applyInfo('MR', info, mr);
        dirty.keys = true; queueFlush();
        return true;
      },
      async bindMw(args) {
        // the bind is a send-queue operation: its completion and the new rkey arrive as events
        return !!(await get().exec('mw.bind', { cmd: 'mw.bind', args }));
      },
      async createSrq(pd, maxWr, srqLimit) {
        return !!(await get().exec('srq.create', { cmd: 'srq.create', args: { pd, maxWr, srqLimit } }));
      },

      // ---------------------------------------------------------- queues
      async createCq(device, cqe) {
        const r = await get().exec('cq.create', { cmd: 'cq.create', args: { device, cqe } });
        const h = r && handleOf(r.result, 'cq');
        if (!h) return false;
        const c = model.queues.cq(h); c.device = device; c.cqe = num(r.result, 'cqe') ?? Math.max(c.cqe, cqe);
        model.queues.ring(`cq:${h}`, h, 'cq', c.cqe).depth = c.cqe;
        dirty.queues = true; queueFlush();
        return true;
      },
      async createQp(a) {
        const r = await get().exec('qp.create', { cmd: 'qp.create', args: { pd: a.pd, sendCq: a.sendCq, recvCq: a.recvCq, qpType: a.qpType,
          cap: { maxSendWr: a.maxSendWr, maxRecvWr: a.maxRecvWr, maxSendSge: 4, maxRecvSge: 4, maxInlineData: 0 } } });
        if (!r) return false;
        const h = handleOf(r.result, 'qp');
        const q = model.queues.applyQpInfo(isRec(r.result) ? r.result : {}, h);
        if (q) {
          q.pd = q.pd || a.pd; q.sendCq = q.sendCq || a.sendCq; q.recvCq = q.recvCq || a.recvCq;
          q.device ||= get().pds.find((p) => p.handle === a.pd)?.device ?? 0;
          model.queues.ring(`qp:${q.handle}:sq`, q.handle, 'sq', a.maxSendWr);
          model.queues.ring(`qp:${q.handle}:rq`, q.handle, 'rq', a.maxRecvWr);
        }
        dirty.queues = true; queueFlush();
        return true;
      },
      async connectQps(qp, peer) {
        const r = await get().exec('qp.connect', { cmd: 'qp.connect', args: { qp, peer } });
        if (!r) return false;
        model.queues.qp(qp).peer = peer; model.queues.qp(peer).peer = qp;
        await get().queryQp(qp); await get().queryQp(peer);
        return true;
      },
      async connectRemote(qp, remote, sqPsn) {
        const r = await get().exec('qp.connect:remote', { cmd: 'qp.connect', args: { qp, remote, sqPsn } });
        if (!r) return false;
        await get().queryQp(qp);
        return true;
      },
      async queryQp(qp) {
        const r = await get().exec(`qp.query:${qp}`, { cmd: 'qp.query', args: { qp } });
        if (r && isRec(r.result)) { model.queues.applyQpInfo(r.result, qp); dirty.queues = true; queueFlush(); }
      },
      async postSend(qp, wr) {
        const ok = !!(await get().exec('post.send', { cmd: 'post.send', args: { qp, wrs: [wr] } }));
        if (ok) set((s) => ({ lastPosted: { ...s.lastPosted, [qp]: wr } }));
        return ok;
      },
      lastPosted: {},
      traffic: null,
      async setTraffic(on, qp) {
        const wr = qp !== undefined ? get().lastPosted[qp] : undefined;
        const args = on ? { on, qp, wrs: wr ? [wr] : undefined } : { on };
        const r = await get().exec('engine.traffic', { cmd: 'engine.traffic', args } as Command);
        if (r) setTrafficFrom(r.result);
        syncTrafficPoll();
        return !!r;
      },
      async postRecv(qp, wr) { return !!(await get().exec('post.recv', { cmd: 'post.recv', args: { qp, wrs: [wr] } })); },
      lastPoll: {},
      async pollCq(cq, max) {
        const r = await get().exec(`cq.poll:${cq}`, { cmd: 'cq.poll', args: { cq, max } });
        if (!r) return;
        const wcs = listOf(r.result, 'wcs', 'wc').filter(isRec) as Rec[];
        model.queues.applyPoll(cq, wcs.length);
        dirty.queues = true; queueFlush();
        set((s) => ({ lastPoll: { ...s.lastPoll, [cq]: { cq, wcs, seqAt: model.ring.total } } }));
      },
      async reqNotify(cq) { await get().exec(`cq.req_notify:${cq}`, { cmd: 'cq.req_notify', args: { cq } }); },

      // ---------------------------------------------------------- wire
      selectedPacket: null,
      selectPacket: (id) => set({ selectedPacket: id }),
      async savePcap(device) {
        const r = await get().exec('pcap.get', { cmd: 'pcap.get', args: device === undefined ? {} : { device } });
        if (!r) return null;
        const res = r.result;
        const b64 = str(res, 'base64');
        if (b64 !== undefined) {
          const bin = atob(b64); const out = new Uint8Array(bin.length);
          for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
          return out;
        }
        return bytesFrom(res);
      },

      // ---------------------------------------------------------- events
      filter: { kind: '', obj: null, text: '' },
      setFilter(f) {
        const filter = { ...get().filter, ...f };
        model.view.setFilter(filter); model.view.update(now() + budget, now);
        set((s) => ({ filter, versions: { ...s.versions, events: s.versions.events + 1 } }));
        if (model.view.pending) queueFlush();   // the rest of the scan in the next frames
      },
      ingest(events, dropped = 0) {
        // while the recent history is being fetched, live batches wait (they may overlap it)
        lastIngestAt = now();
        if (held) { held.push({ events, dropped }); return; }
        // events the history already held (sent before it was taken, delivered after) are skipped
        if (skipUpTo >= 0 && events.length) {
          if (events[events.length - 1]!.seq > skipUpTo) { events = events.filter((e) => e.seq > skipUpTo); skipUpTo = -1; }
          else events = [];
        }
        // batches queue up and are applied in the next frame, within a time budget (see drain)
        ring.dropped += dropped;
        if (dropped) inbox.push({ gap: true });
        if (events.length) { inbox.push(events); if (pendingSince < 0) pendingSince = now(); }
        if (events.length || dropped) { dirty.events = true; queueFlush(); }
      },
      ingestFrames(frames, dropped = 0) {
        lastIngestAt = now();
        if (held) { held.push({ frames, dropped }); return; }
        ring.dropped += dropped;
        if (dropped) inbox.push({ gap: true });
        let any = false;
        for (const frame of frames) {
          if (!frame.count) continue;
          // the device's production time, when the host knows it (free run): the latency counts from there
          if (frame.producedAt > 0 && typeof performance !== 'undefined') {
            const t = frame.producedAt - performance.timeOrigin;
            if (pendingSince < 0 || t < pendingSince) pendingSince = t;
          }
          // events the history already held are skipped (seq rises within a frame; a free run's sample has gaps)
          let from = 0;
          if (skipUpTo >= 0) {
            let hi = frame.count;
            while (from < hi) { const m = (from + hi) >> 1; if (frame.seq[m]! <= skipUpTo) from = m + 1; else hi = m; }
            if (from >= frame.count) continue;
            skipUpTo = -1;
          }
          inbox.push({ frame, from }); any = true;
        }
        if (any && pendingSince < 0) pendingSince = now();
        if (any || dropped) { dirty.events = true; queueFlush(); }
      },

      ingestRings(m) {
        if (held) return;   // the next one comes within a tenth of a second
        inbox.push({ rings: m });
        dirty.queues = true; queueFlush();
      },

      resetModels() {
        skipUpTo = -1;
        inbox.length = 0; inboxHead = 0;
        ring.clear(); model.view.reset();
        model.keys.byHandle.clear();
        model.queues.clear();
        model.wire.clear();
        model.marks.writes.clear(); model.checks.rows = [];
        set((s) => ({
          buffers: [], pds: [], hex: {}, hexOffset: {}, lastPoll: {}, selectedPacket: null, selectedBuffer: null, unknownObjects: [],
          versions: { events: s.versions.events + 1, keys: s.versions.keys + 1, queues: s.versions.queues + 1, wire: s.versions.wire + 1, memory: s.versions.memory + 1 },
        }));
      },
      async syncObjects() {
        await get().refreshDevices();
        if (ring.total === 0) await loadRecent();
        const r = await get().exec('session.info', { cmd: 'session.info', args: {} });
        if (!r) return;
        if (pick(r.result, 'realTime') === true) set({ realTime: true });
        const ar = pick(r.result, 'autorun');
        if (isRec(ar) && typeof ar.on === 'boolean') set({ autorun: ar.on, stepsPerSecond: num(ar, 'stepsPerSecond') ?? get().stepsPerSecond, freeRun: ar.free === true });
        setTrafficFrom(r.result); syncTrafficPoll();
        const objs = listOf(r.result, 'objects').filter(isRec) as Rec[];
        const unknown: ConsoleState['unknownObjects'] = [];
        for (const o of objs) {
          const h = num(o, 'handle'); const kind = str(o, 'kind'); const dev = num(o, 'device') ?? 0;
          if (!h) continue;
          if (kind === 'buffer' && !get().buffers.some((b) => b.handle === h)) unknown.push({ handle: h, kind, device: dev });
          if ((kind === 'mr' || kind === 'mw') && !model.keys.byHandle.has(h)) unknown.push({ handle: h, kind, device: dev });
          if (kind === 'pd' && !get().pds.some((p) => p.handle === h)) set((s) => ({ pds: [...s.pds, { handle: h, device: dev, destroyed: false }] }));
          if (kind === 'cq') model.queues.cq(h).device = dev;
          if (kind === 'qp') void get().queryQp(h);
        }
        set({ unknownObjects: unknown });
        dirty.queues = true; queueFlush();
      },

      // ---------------------------------------------------------- run controls
      autorun: false, stepsPerSecond: 1000, freeRun: false, faults: { loss: 0, duplicate: 0, reorder: 0, delay: 0, delayNs: 0 }, lastRun: '',
      async setAutorun(on, sps, fr) {
        const stepsPerSecond = sps ?? get().stepsPerSecond;
        const free = fr ?? get().freeRun;
        if (await get().exec('engine.autorun', { cmd: 'engine.autorun', args: { on, stepsPerSecond, free } })) set({ autorun: on, stepsPerSecond, freeRun: free });
        else if (sps !== undefined && !on) set({ stepsPerSecond });
        syncTrafficPoll();
      },
      async step(count) {
        const r = await get().exec('engine.step', { cmd: 'engine.step', args: { count } });
        if (r) set({ lastRun: describeRun('step', r.result) });
        if (r) setTrafficFrom(r.result);
      },
      async runToIdle() {
        const r = await get().exec('engine.run', { cmd: 'engine.run', args: {} });
        if (r) set({ lastRun: describeRun('run', r.result) });
      },
      async resetSession(seed) {
        const r = await get().exec('session.reset', { cmd: 'session.reset', args: seed === undefined ? {} : { seed } });
        if (!r) return false;
        get().resetModels();
        set({ autorun: false, freeRun: false, lastRun: '', traffic: null, lastPosted: {}, faults: { loss: 0, duplicate: 0, reorder: 0, delay: 0, delayNs: 0 } });
        syncTrafficPoll();
        await get().syncObjects();
        return true;
      },
      async setFaults(f) {
        const ok = !!(await get().exec('engine.faults', { cmd: 'engine.faults', args: f }));
        if (ok) set({ faults: f });
        return ok;
      },
    };

    /** A console that connects to a session already under way draws the events the host sent most recently
     *  (events.recent) before the live ones. */
    function loadRecent(): Promise<void> {
      // syncObjects can run twice at once (host up + a panel); both wait for the one fetch
      recentLoading ??= fetchRecent().finally(() => { recentLoading = null; });
      return recentLoading;
    }
    async function fetchRecent() {
      held = [];
      try {
        const r = await get().exec('events.recent', { cmd: 'events.recent', args: {} });
        const evs = (r ? listOf(r.result, 'events').filter(isRec) : []) as unknown as DeviceEvent[];
        if (evs.length && ring.total === 0) {
          const h = held; held = null;
          get().ingest(evs);
          skipUpTo = evs[evs.length - 1]!.seq;
          replay(h);
        }
      } finally {
        if (held) { const h = held; held = null; replay(h); }
      }
    }
    function replay(h: NonNullable<typeof held>) {
      for (const b of h) if ('frames' in b) get().ingestFrames(b.frames, b.dropped); else get().ingest(b.events, b.dropped);
    }

    /** While the load generator runs on autorun its counts move without any reply of ours: they are read from
     *  session.info twice a second (read-only, not journaled or recorded). */
    function syncTrafficPoll() {
      const want = !!transport && get().autorun && get().traffic?.on === true;
      if (want && !trafficPoll) {
        trafficPoll = setInterval(() => {
          void get().exec('traffic.status', { cmd: 'session.info', args: {} }).then((r) => { if (r) setTrafficFrom(r.result); syncTrafficPoll(); });
        }, TRAFFIC_POLL_MS);
      } else if (!want && trafficPoll) { clearInterval(trafficPoll); trafficPoll = null; }
    }

    /** the load generator's state from a reply that carries it (engine.traffic, engine.step, session.info) */
    function setTrafficFrom(result: unknown) {
      const t = pick(result, 'traffic');
      if (isRec(t)) set({ traffic: { on: t.on === true, qp: num(t, 'qp'), posted: num(t, 'posted'), completed: num(t, 'completed'), stopped: str(t, 'stopped') } });
    }

    function applyObjectEvent(e: DeviceEvent) {
      const created = e.kind === 'ObjectCreated';
      if (e.objKind === 'buffer') {
        set((s) => {
          const has = s.buffers.find((b) => b.handle === e.obj);
          if (created && !has) return { buffers: [...s.buffers, { handle: e.obj, addr: e.a, length: e.b, destroyed: false }] };
          if (!created && has) return { buffers: s.buffers.map((b) => (b.handle === e.obj ? { ...b, destroyed: true } : b)) };
          return {};
        });
      } else {
        set((s) => {
          const has = s.pds.find((p) => p.handle === e.obj);
          if (created && !has) return { pds: [...s.pds, { handle: e.obj, device: e.device, destroyed: false }] };
          if (!created && has) return { pds: s.pds.map((p) => (p.handle === e.obj ? { ...p, destroyed: true } : p)) };
          return {};
        });
      }
    }
  });

  if (transport) {
    transport.onHost((h) => {
      const prev = store.getState().host.state;
      // a (re)starting host replays its journal and its events arrive again: drop what was drawn
      if (h.state === 'starting') store.getState().resetModels();
      store.setState({ host: { state: h.state, reason: h.reason, restarts: h.restarts, pid: h.pid } });
      if (h.state === 'up' && prev !== 'up') void store.getState().syncObjects();
    });
    transport.onEvents((b) => {
      if (Array.isArray(b)) store.getState().ingest(b);
      else if (b.type === 'rings') store.getState().ingestRings(b);
      else if ('frames' in b) store.getState().ingestFrames(b.frames, b.dropped ?? 0);
      else store.getState().ingest(b.events ?? [], b.dropped ?? 0);
    });
  }
  return store;
}

function describeRun(what: string, result: unknown): string {
  const steps = typeof result === 'number' ? result : num(result, 'steps', 'taken', 'count');
  const idle = pick(result, 'idle');
  const t = num(result, 'now', 'nowNs', 'timeNs');
  const parts = [steps !== undefined ? `${what}: ${steps} step${steps === 1 ? '' : 's'}` : `${what}: done`];
  if (idle !== undefined) parts.push(idle ? 'engine idle' : 'engine still busy');
  if (t !== undefined) parts.push(`virtual time ${t} ns`);
  return parts.join(', ');
}

export { QpState };
