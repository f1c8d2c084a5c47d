// The console's zustand store: one vanilla store, the union of slices per domain (zustand's slices pattern):
// ui + host (slices/ui.ts), devices, memory & keys, queues, wire, run controls (slices/*.ts) and the events ingest
// (ingest.ts). Every user action goes through `exec` (ui slice), which validates the protocol command with the
// shared zod schema, sends it, and files any error under the form that caused it. Device events are ingested into
// mutable models (typed-array ring, key table, rings, wire log) and the store is notified at most once per
// animation frame. The slices share the transport, the models and the frame loop through `SliceCtx` (slice.ts).
import { createStore, type StoreApi } from 'zustand/vanilla';
import { QpState } from '../../../app/protocol/index.ts';
import { EventRing, FilteredView } from './eventRing.ts';
import { KeyChecks, KeyTable, MemoryMarks, QueueModel, WireLog } from './models.ts';
import { PacketFates } from './ladder.ts';
import { LatencyStats, type ConsoleTransport, type Model, type Scheduler, type SliceCtx } from './slice.ts';
import { createEventsSlice, FRAME_BUDGET_MS, rafScheduler, type EventsSlice } from './ingest.ts';
import { createUiSlice, type UiSlice } from './slices/ui.ts';
import { createDevicesSlice, type DevicesSlice } from './slices/devices.ts';
import { createMemorySlice, type MemorySlice } from './slices/memory.ts';
import { createQueuesSlice, type QueuesSlice } from './slices/queues.ts';
import { createWireSlice, type WireSlice } from './slices/wire.ts';
import { createRunSlice, type RunSlice } from './slices/run.ts';
import { createSessionsSlice, SESSIONS_POLL_MS, type SessionsSlice } from './slices/sessions.ts';

export type { ConsoleTransport, Model, Scheduler } from './slice.ts';
export { LatencyStats } from './slice.ts';
export { ACK_WINDOW, FRAME_BUDGET_MS, IDLE_GAP_MS, SLOW_FRAME_MS, rafScheduler } from './ingest.ts';
export { TRAFFIC_POLL_MS } from './slices/run.ts';
export * from './views.ts';
export type { FormValue } from './slices/ui.ts';

export type ConsoleState = UiSlice & DevicesSlice & MemorySlice & QueuesSlice & WireSlice & EventsSlice & RunSlice & SessionsSlice;
export type ConsoleStore = StoreApi<ConsoleState>;

export interface StoreOptions {
  transport?: ConsoleTransport | null; schedule?: Scheduler; ringCapacity?: number; transportProblem?: string; frameBudgetMs?: number;
  /** clock (ms); injectable for tests */
  now?: () => number;
  /** an attached program's session (attached.ts): the store takes only that session's events and rings */
  session?: number;
  /** who owns the device when the console only watches it (an attached program): the forms are read-only */
  readOnly?: string;
  /** ask the host for the attached programs every SESSIONS_POLL_MS while it is up (the console's main store) */
  pollSessions?: boolean;
}

export function createConsoleStore(opts: StoreOptions = {}): ConsoleStore {
  const transport = opts.transport ?? null;
  const ring = new EventRing(opts.ringCapacity ?? 1 << 20);
  const wire = new WireLog();
  const model: Model = {
    latency: new LatencyStats(),
    ring, view: new FilteredView(ring), keys: new KeyTable(), queues: new QueueModel(), wire, fates: new PacketFates(wire),
    marks: new MemoryMarks(), checks: new KeyChecks(),
  };
  const unset = () => { throw new Error('console store: a slice helper was called before its slice was built'); };
  const ctx: SliceCtx = {
    transport, model, reading: new Set(),
    dirty: { events: false, keys: false, queues: false, wire: false, memory: false, devices: false, hexBuffers: new Set() },
    queueFlush: unset, loadRecent: unset, syncTrafficPoll: unset, setTrafficFrom: unset,
  };
  const events = createEventsSlice({
    schedule: opts.schedule ?? rafScheduler, budget: opts.frameBudgetMs ?? FRAME_BUDGET_MS,
    now: opts.now ?? (() => (typeof performance !== 'undefined' ? performance.now() : Date.now())),
  });
  const store = createStore<ConsoleState>()((set, get) => {
    const ui = createUiSlice(set, get, ctx);
    if (!transport && opts.transportProblem) ui.host = { state: 'down', reason: opts.transportProblem };
    if (opts.readOnly) ui.readOnly = opts.readOnly;
    return {
      ...ui,
      ...createDevicesSlice(set, get, ctx),
      ...createMemorySlice(set, get, ctx),
      ...createQueuesSlice(set, get, ctx),
      ...createWireSlice(set, get, ctx),
      ...events(set, get, ctx),
      ...createRunSlice(set, get, ctx),
      ...createSessionsSlice(set, get, ctx),
    };
  });

  if (transport) {
    transport.onHost((h) => {
      const prev = store.getState().host.state;
      // a (re)starting host replays its journal and its events arrive again: drop what was drawn
      if (h.state === 'starting') store.getState().resetModels();
      store.setState({ host: { state: h.state, reason: h.reason, restarts: h.restarts, pid: h.pid } });
      if (h.state === 'up' && prev !== 'up') void store.getState().syncObjects();
    });
    if (opts.pollSessions) {
      setInterval(() => { if (store.getState().host.state === 'up') void store.getState().refreshSessions(); }, SESSIONS_POLL_MS);
    }
    transport.onEvents((b) => {
      // the events of attached programs (app/host/attach.ts) go to their own stores (attached.ts)
      if (!Array.isArray(b) && (b as { session?: number }).session !== opts.session) return;
      if (Array.isArray(b)) store.getState().ingest(b);
      else if (b.type === 'rings') store.getState().ingestRings(b);
      else if ('frames' in b) store.getState().ingestFrames(b.frames, b.dropped ?? 0);
      else store.getState().ingest(b.events ?? [], b.dropped ?? 0);
    });
  }
  return store;
}

export { QpState };
