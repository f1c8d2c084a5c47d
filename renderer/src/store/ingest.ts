// The events slice: ingest. Device events (objects or binary frames) are queued on arrival and applied in the next
// animation frame within a time budget, each to the models that look at its kind (event ring, key table, rings,
// wire log, memory marks, key checks); the store publishes one version number per domain at most once per frame.
// It also acknowledges what it drew to the host (flow control of autorun), fetches the host's recent events for a
// console that connects late, and forgets everything when the host restarts (its journal replay sends it again).
import { FrameEventView, type DeviceEvent, type EventFrame, type RingSnapshot } from '../../../app/protocol/index.ts';
import type { EventFilter } from './eventRing.ts';
import { KeyChecks, KeyTable, MemoryMarks, QueueModel, WireLog } from './models.ts';
import { PacketFates } from './ladder.ts';
import type { Scheduler, Slice } from './slice.ts';

export interface EventsSlice {
  model: import('./slice.ts').Model;
  versions: { events: number; keys: number; queues: number; wire: number; memory: number };
  filter: EventFilter; setFilter(f: Partial<EventFilter>): void;
  ingest(events: DeviceEvent[], dropped?: number): void;
  /** the same for binary event frames (the autorun flood): the events are read from the columns, no object each */
  ingestFrames(frames: EventFrame[], dropped?: number): void;
  /** free run: the rings as the device holds them after event `seq`, applied in order with the events */
  ingestRings(m: RingSnapshot): void;
  /** forget everything drawn (host restarting: its journal replay sends the events again) */
  resetModels(): void;
}

// which models an event kind goes to (from the kinds each model declares)
const TO_KEYS = 1, TO_QUEUES = 2, TO_WIRE = 4, TO_CHECKS = 8, TO_MARKS = 16, TO_STORE = 32, TO_FATES = 64;
const ROUTE = new Map<string, number>();
for (const [bit, kinds] of [[TO_KEYS, KeyTable.KINDS], [TO_QUEUES, QueueModel.KINDS], [TO_WIRE, WireLog.KINDS], [TO_CHECKS, KeyChecks.KINDS], [TO_MARKS, MemoryMarks.KINDS], [TO_FATES, PacketFates.KINDS]] as const)
  for (const k of kinds) ROUTE.set(k, (ROUTE.get(k) ?? 0) | bit);
// lifecycle events also update the store's own lists (buffers, PDs, devices)
ROUTE.set('ObjectCreated', ROUTE.get('ObjectCreated')! | TO_STORE); ROUTE.set('ObjectDestroyed', ROUTE.get('ObjectDestroyed')! | TO_STORE);

/** main-thread time the console spends applying events per frame; the rest waits for the next frame */
export const FRAME_BUDGET_MS = 8;
export const rafScheduler: Scheduler = (cb) => {
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => cb());
  else setTimeout(cb, 16);
};
/** Frame pacing of the flow control: with each acknowledgement the console asks the host for a window of events
 *  (autorun stays at most that many ahead of what was drawn). A frame that came more than SLOW_FRAME_MS after the
 *  previous one means the page is dropping frames: the window halves; frames on time widen it a little (additive
 *  increase, multiplicative decrease, as TCP does). Gaps longer than IDLE_GAP_MS are pauses of the stream, not slow
 *  frames. The console keeps its frame rate first and takes the event rate the machine leaves it. */
export const SLOW_FRAME_MS = 25;
export const ACK_WINDOW = { initial: 4000, min: 256, max: 65536 };
export const IDLE_GAP_MS = 250;

export interface IngestOptions { schedule: Scheduler; budget: number; now: () => number }

/** Builds the events slice and, in ctx.queueFlush, the frame loop every slice publishes through. */
export function createEventsSlice(o: IngestOptions): Slice<EventsSlice> {
  return (set, get, ctx) => {
    const { model, dirty, transport } = ctx;
    const { ring } = model;
    const { now, budget, schedule } = o;
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
    let lastFrameAt = -Infinity;         // when the previous flush ran (frame pacing of the ack)
    let ackWindow = ACK_WINDOW.initial;  // the window of events asked for with each ack
    let slowSinceAck = false;            // a frame came late since the last ack
    let lastIngestAt = -Infinity;        // when the last events arrived

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
      if (to & TO_FATES && model.fates.applyEvent(e)) dirty.wire = true;   // after the wire log: it reads the newest row
      if (to & TO_CHECKS && model.checks.applyEvent(e)) dirty.keys = true;
      if (to & TO_MARKS && model.marks.applyEvent(e)) {
        dirty.memory = true;
        if (e.obj === sel || shown[e.obj]) dirty.hexBuffers.add(e.obj);
      }
      if (to & TO_STORE) {
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
    ctx.queueFlush = queueFlush;

    /** A console that connects to a session already under way draws the events the host sent most recently
     *  (events.recent) before the live ones. */
    ctx.loadRecent = () => {
      // events already came (a restarted host sends its journal replay's events as it replays them, maybe not yet
      // applied): the history would draw them twice
      if (ring.total > 0 || inbox.length > 0) return Promise.resolve();
      // syncObjects can run twice at once (host up + a panel); both wait for the one fetch
      recentLoading ??= fetchRecent().finally(() => { recentLoading = null; });
      return recentLoading;
    };
    async function fetchRecent() {
      held = [];
      try {
        const r = await get().run('events.recent', 'events.recent', {});
        const evs = (r?.events ?? []) as DeviceEvent[];
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

    return {
      model,
      versions: { events: 0, keys: 0, queues: 0, wire: 0, memory: 0 },
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
        model.wire.clear(); model.fates.clear();
        model.marks.writes.clear(); model.checks.rows = [];
        set((s) => ({
          buffers: [], pds: [], hex: {}, hexOffset: {}, lastPoll: {}, unackedEvents: {}, ahs: [], selectedPacket: null, selectedBuffer: null, unknownObjects: [],
          versions: { events: s.versions.events + 1, keys: s.versions.keys + 1, queues: s.versions.queues + 1, wire: s.versions.wire + 1, memory: s.versions.memory + 1 },
        }));
      },
    };
  };
}
