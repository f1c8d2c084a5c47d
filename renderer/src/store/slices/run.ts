// The run slice: engine controls (autorun paced or free running, step, run to idle), faults, session reset, and
// the objects of a session this page connected to late (session.info). While the load generator runs on autorun
// its counts move without any reply of ours: they are read from session.info twice a second (read-only).
import { describeRun, type Faults } from '../views.ts';
import { fmtNs } from '../../format.ts';
import type { ConsoleState } from '../store.ts';
import type { Slice } from '../slice.ts';

export interface RunSlice {
  autorun: boolean; stepsPerSecond: number; faults: Faults; lastRun: string;
  /** the virtual time of the last step / run reply, in ns (the raw value behind lastRun's scaled one) */
  lastRunNs: number | null;
  /** autorun free running (engine.autorun free): the engine on its own thread, the console shown a sample */
  freeRun: boolean;
  setAutorun(on: boolean, stepsPerSecond?: number, free?: boolean): Promise<void>; step(count: number): Promise<void>; runToIdle(): Promise<void>;
  setFaults(f: Faults): Promise<boolean>;
  /** session.reset: a fresh session (the host drops every object); the console forgets what it drew. `real`: the
   *  session drives that real device through libibverbs instead (docs/real-devices.md) */
  resetSession(seed?: number, real?: string): Promise<boolean>;
  /** on connect: devices, and the objects alive in the session (session.info) */
  syncObjects(): Promise<void>;
}

/** how often the load generator's counts are read while it runs on autorun */
export const TRAFFIC_POLL_MS = 500;
const NO_FAULTS: Faults = { loss: 0, duplicate: 0, reorder: 0, delay: 0, delayNs: 0 };

export const createRunSlice: Slice<RunSlice> = (set, get, ctx) => {
  const { model, transport } = ctx;
  let trafficPoll: ReturnType<typeof setInterval> | null = null;
  ctx.syncTrafficPoll = () => {
    const want = !!transport && get().autorun && get().traffic?.on === true;
    if (want && !trafficPoll) {
      trafficPoll = setInterval(() => {
        void get().run('traffic.status', 'session.info', {}).then((r) => { if (r) ctx.setTrafficFrom(r); ctx.syncTrafficPoll(); });
      }, TRAFFIC_POLL_MS);
    } else if (!want && trafficPoll) { clearInterval(trafficPoll); trafficPoll = null; }
  };
  /** the load generator's state from a reply that carries it (engine.traffic, engine.step, session.info) */
  ctx.setTrafficFrom = (result) => {
    const t = result.traffic;
    if (t) set({ traffic: 'qp' in t ? { on: t.on, qp: t.qp, posted: t.posted, completed: t.completed, stopped: t.stopped } : { on: false } });
  };
  return {
    autorun: false, stepsPerSecond: 1000, freeRun: false, faults: NO_FAULTS, lastRun: '', lastRunNs: null,
    async setAutorun(on, sps, fr) {
      const stepsPerSecond = sps ?? get().stepsPerSecond;
      const free = fr ?? get().freeRun;
      if (await get().exec('engine.autorun', { cmd: 'engine.autorun', args: { on, stepsPerSecond, free } })) set({ autorun: on, stepsPerSecond, freeRun: free });
      else if (sps !== undefined && !on) set({ stepsPerSecond });
      ctx.syncTrafficPoll();
    },
    async step(count) {
      const r = await get().run('engine.step', 'engine.step', { count });
      if (r) set({ lastRun: describeRun('step', r, fmtNs), lastRunNs: Number(r.nowNs) });
      if (r) ctx.setTrafficFrom(r);
    },
    async runToIdle() {
      const r = await get().run('engine.run', 'engine.run', {});
      if (r) set({ lastRun: describeRun('run', r, fmtNs), lastRunNs: Number(r.nowNs) });
    },
    async resetSession(seed, real) {
      const args = { ...(seed === undefined ? {} : { seed }), ...(real === undefined ? {} : { backend: 'ibverbs' as const, device: real }) };
      const r = await get().exec(real === undefined ? 'session.reset' : `session.reset:${real}`, { cmd: 'session.reset', args });
      if (!r) return false;
      get().resetModels();
      set({ autorun: false, freeRun: false, lastRun: '', traffic: null, lastPosted: {}, faults: NO_FAULTS, forms: {} });
      ctx.syncTrafficPoll();
      await get().syncObjects();
      return true;
    },
    async setFaults(f) {
      const ok = !!(await get().exec('engine.faults', { cmd: 'engine.faults', args: f }));
      if (ok) set({ faults: f });
      return ok;
    },
    async syncObjects() {
      await get().refreshDevices();
      if (model.ring.total === 0) await ctx.loadRecent();
      const r = await get().run('session.info', 'session.info', {});
      if (!r) return;
      if (r.realTime) set({ realTime: true });
      set({ autorun: r.autorun.on, stepsPerSecond: r.autorun.stepsPerSecond, freeRun: r.autorun.free });
      ctx.setTrafficFrom(r); ctx.syncTrafficPoll();
      const unknown: ConsoleState['unknownObjects'] = [];
      const queries: Promise<void>[] = [];
      for (const o of r.objects) {
        const h = o.handle; const kind = o.kind; const dev = o.device;
        if (kind === 'buffer' && !get().buffers.some((b) => b.handle === h)) unknown.push({ handle: h, kind, device: dev });
        if (kind === 'mr' || kind === 'mw') {
          // the host describes its MRs and MWs (PD, keys, range, access, kind, state): merged into the key table, so a
          // console that connected late or after a host restart shows what the events alone do not carry
          const info = o.info;
          if (info) { const k = model.keys.applyInfo(kind === 'mr' ? 'MR' : 'MW', info, h); if (k && dev) k.device = dev; ctx.dirty.keys = true; }
          else if (!model.keys.byHandle.has(h)) unknown.push({ handle: h, kind, device: dev });
        }
        if (kind === 'pd' && !get().pds.some((p) => p.handle === h)) set((s) => ({ pds: [...s.pds, { handle: h, device: dev, destroyed: false }] }));
        if (kind === 'cq') model.queues.cq(h).device = dev;
        if (kind === 'qp') queries.push(get().queryQp(h));
      }
      // the peers of connected QPs (qp.connect's reply named them; after a restart the QPs' destinations do)
      await Promise.all(queries);
      model.queues.linkPeers();
      set({ unknownObjects: unknown });
      ctx.dirty.queues = true; ctx.queueFlush();
    },
  };
};
