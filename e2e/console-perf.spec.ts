// UI benchmark (issue 4, "a benchmark, not a test"): real RDMA WRITE traffic from the backend host's load generator
// (engine.traffic) with the engine free running on its own thread (engine.autorun free, VL_UI_BENCH_MODE=free, the
// default) or paced by the console (VL_UI_BENCH_MODE=paced), measured with the browser's own performance data while
// the console shows a panel following the stream:
//   ui_fps_at_1M_events_per_s   animation frames per second the page achieved (requestAnimationFrame count)
//   ui_event_to_screen_p99_ms   p99 of "the device produced the events" (free run: when the runner's batch that
//                                produced the oldest event of a frame started, stamped in the frame) -> "the frame
//                                after the console published them"; paced: from the batch's arrival in the page
//   ui_longest_task_ms          longest main-thread task (PerformanceObserver "longtask")
// plus engine_events_per_s, the rate at which the device produced events (its event seq over the wall clock), and
// events_per_s, the rate of events the console received and drew (free run: a sample of them). The figures are
// reported with those rates, never scaled. Opt-in: VL_UI_BENCH=1; writes test-results/ui-bench.json (or
// VL_UI_BENCH_OUT). It asserts nothing about time.
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';

import { START } from './helpers.ts';
const SECONDS = Number(process.env.VL_UI_BENCH_SECONDS ?? 5);
const FREE = (process.env.VL_UI_BENCH_MODE ?? 'free') === 'free';
// engine steps per second: free, about 2.2 events per step under this load (450 k steps/s: about 1 M events/s);
// paced, an upper bound (the console's acknowledgements pace it)
const SPS = Number(process.env.VL_UI_BENCH_SPS ?? (FREE ? 450_000 : 1_000_000));
const PANEL = process.env.VL_UI_BENCH_PANEL ?? 'events';      // the panel on screen while measuring

test.skip(!process.env.VL_UI_BENCH, 'UI benchmark: set VL_UI_BENCH=1 to run');
// the harness's own recording (trace screencast and snapshots, kept on failure) costs the browser and GPU processes
// more than half a core on this machine: measured without it, as a user's browser runs
test.use({ trace: 'off', screenshot: 'off', video: 'off' });

test('UI under a stream of device events', async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto(START);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');
  await page.getByTestId(`nav-${PANEL}`).click();

  const result: Record<string, number> = await page.evaluate(async ({ seconds, sps, free }) => {
    type Exec = (form: string, c: unknown) => Promise<{ result: unknown } | null>;
    const store = (globalThis as unknown as { __vlStore: { getState(): { exec: Exec; model: { ring: { total: number }; latency: { reset(): void; percentile(p: number): number; n: number } } } } }).__vlStore;
    const st = () => store.getState();
    const run = async (c: { cmd: string; args: Record<string, unknown> }) => {
      const r = await st().exec('bench', c);
      if (!r) throw new Error(`${c.cmd} failed: ${JSON.stringify((store.getState() as unknown as { errors: Record<string, unknown> }).errors.bench)}`);
      return r.result as Record<string, number>;
    };
    const tag = Math.random().toString(36).slice(2, 6);
    const a = await run({ cmd: 'device.create', args: { profile: 'rxe', name: `bencha_${tag}` } });
    const b = await run({ cmd: 'device.create', args: { profile: 'rxe', name: `benchb_${tag}` } });
    const pda = await run({ cmd: 'pd.alloc', args: { device: a.device } });
    const pdb = await run({ cmd: 'pd.alloc', args: { device: b.device } });
    const ba = await run({ cmd: 'buffer.alloc', args: { length: 65536 } });
    const bb = await run({ cmd: 'buffer.alloc', args: { length: 65536 } });
    const acc = ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE'];
    const mra = await run({ cmd: 'mr.reg', args: { pd: pda.pd, addr: ba.addr, length: 65536, access: acc } });
    const mrb = await run({ cmd: 'mr.reg', args: { pd: pdb.pd, addr: bb.addr, length: 65536, access: acc } });
    const cqa = await run({ cmd: 'cq.create', args: { device: a.device, cqe: 32767 } });
    const cqb = await run({ cmd: 'cq.create', args: { device: b.device, cqe: 32767 } });
    const cap = { maxSendWr: 4096, maxRecvWr: 16, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 };
    const qa = await run({ cmd: 'qp.create', args: { pd: pda.pd, sendCq: cqa.cq, recvCq: cqa.cq, qpType: 'IBV_QPT_RC', cap } });
    const qb = await run({ cmd: 'qp.create', args: { pd: pdb.pd, sendCq: cqb.cq, recvCq: cqb.cq, qpType: 'IBV_QPT_RC', cap } });
    await run({ cmd: 'qp.connect', args: { qp: qa.qp, peer: qb.qp } });
    const wrs = Array.from({ length: 1024 }, (_, i) => ({
      wrId: i, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: i % 256 === 255 ? ['IBV_SEND_SIGNALED'] : [],
      sgList: [{ addr: ba.addr + (i % 64) * 64, length: 64, lkey: mra.lkey }], remoteAddr: bb.addr + (i % 64) * 64, rkey: mrb.rkey,
    }));
    // the host's load generator keeps the send queue full (no command round trip per batch)
    await run({ cmd: 'engine.traffic', args: { on: true, qp: qa.qp, cq: cqa.cq, wrs } });
    await run({ cmd: 'engine.autorun', args: { on: true, stepsPerSecond: sps, free } });
    await new Promise((r) => setTimeout(r, 500));   // past the start

    // attribution: how big the batches are and how long the console's own ingest of each one takes
    const sizes: number[] = []; let ingestMax = 0;
    type Ingest = (b: unknown[], d?: number) => void;
    const s0 = store as unknown as { getState(): { ingest: Ingest; ingestFrames: Ingest }; setState(p: object): void };
    const timed = (orig: Ingest, size: (b: unknown[]) => number): Ingest => (b, d) => {
      const t = performance.now(); orig(b, d); ingestMax = Math.max(ingestMax, performance.now() - t); sizes.push(size(b));
    };
    s0.setState({
      ingest: timed(s0.getState().ingest, (b) => b.length),
      ingestFrames: timed(s0.getState().ingestFrames, (b) => (b as { count: number }[]).reduce((n, f) => n + f.count, 0)),
    });
    // measure
    let longest = 0; let longTasks = 0;
    const po = new PerformanceObserver((l) => { for (const e of l.getEntries()) { longest = Math.max(longest, e.duration); longTasks++; } });
    try { po.observe({ type: 'longtask', buffered: false }); } catch { /* not supported */ }
    st().model.latency.reset();
    let frames = 0; let stop = false;
    const tick = () => { frames++; if (!stop) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
    const seq = async () => Number((await run({ cmd: 'session.info', args: {} })).eventSeq);
    const ev0 = st().model.ring.total; const d0 = (st().model.ring as unknown as { dropped: number }).dropped; const q0 = await seq(); const t0 = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    stop = true;
    const t1 = performance.now(); const ev1 = st().model.ring.total; const d1 = (st().model.ring as unknown as { dropped: number }).dropped; const q1 = await seq();
    await run({ cmd: 'engine.autorun', args: { on: false, stepsPerSecond: 1000 } });
    const traffic = (await run({ cmd: 'engine.traffic', args: { on: false } })) as unknown as { traffic: { posted: number; completed: number } };
    po.disconnect();
    const secs = (t1 - t0) / 1000;
    return {
      ui_fps_at_1M_events_per_s: frames / secs,
      ui_event_to_screen_p99_ms: st().model.latency.percentile(99),
      ui_event_to_screen_p50_ms: st().model.latency.percentile(50),
      ui_longest_task_ms: longest, long_tasks: longTasks,
      events_per_s: (ev1 - ev0) / secs,
      engine_events_per_s: (q1 - q0) / secs, sampled_out_per_s: (d1 - d0) / secs, free: free ? 1 : 0,
      latency_samples: st().model.latency.n,
      batches: sizes.length, batch_max_events: Math.max(0, ...sizes), ingest_max_ms: ingestMax,
      seconds: secs, steps_per_s: sps, wrs_posted: traffic.traffic.posted, wrs_completed: traffic.traffic.completed,
    };
  }, { seconds: SECONDS, sps: SPS, free: FREE });

  // scrolling the whole log (every rAF jumps to another place in it), after the stream stopped
  await page.getByTestId('nav-events').click();
  const scroll = await page.evaluate(async () => {
    const el = document.querySelector('[data-testid="event-log"]') as HTMLElement;
    const follow = [...document.querySelectorAll('input[type="checkbox"]')].find((x) => x.parentElement?.textContent?.includes('follow')) as HTMLInputElement | undefined;
    if (follow?.checked) follow.click();
    await new Promise((r) => requestAnimationFrame(() => r(null)));
    let frames = 0; const t0 = performance.now(); let longest = 0;
    const po = new PerformanceObserver((l) => { for (const e of l.getEntries()) longest = Math.max(longest, e.duration); });
    try { po.observe({ type: 'longtask', buffered: false }); } catch { /* */ }
    await new Promise<void>((done) => {
      const step = () => {
        frames++;
        el.scrollTop = ((frames * 7919) % 1000) / 1000 * (el.scrollHeight - el.clientHeight);
        if (performance.now() - t0 < 2000) requestAnimationFrame(step); else done();
      };
      requestAnimationFrame(step);
    });
    po.disconnect();
    const rows = Number(el.getAttribute('aria-rowcount'));
    return { ui_scroll_fps: frames / ((performance.now() - t0) / 1000), ui_scroll_longest_task_ms: longest, rows, dom_rows: el.querySelectorAll('[role="row"]').length };
  });
  Object.assign(result, scroll);

  // a text filter over the whole log: scanned a slice per frame; how long until it is complete, longest task meanwhile
  const filtering = await page.evaluate(async () => {
    type View = { pending: number; length: number };
    const store = (globalThis as unknown as { __vlStore: { getState(): { setFilter(f: object): void; model: { view: View } } } }).__vlStore;
    let longest = 0;
    const po = new PerformanceObserver((l) => { for (const e of l.getEntries()) longest = Math.max(longest, e.duration); });
    try { po.observe({ type: 'longtask', buffered: false }); } catch { /* */ }
    const t0 = performance.now();
    store.getState().setFilter({ text: 'acknowledge' });
    let frames = 0;
    while (store.getState().model.view.pending > 0) { await new Promise((r) => requestAnimationFrame(() => r(null))); frames++; }
    const ms = performance.now() - t0;
    const matched = store.getState().model.view.length;
    store.getState().setFilter({ text: '' });
    while (store.getState().model.view.pending > 0) await new Promise((r) => requestAnimationFrame(() => r(null)));
    po.disconnect();
    return { ui_filter_ms: ms, ui_filter_frames: frames, ui_filter_longest_task_ms: longest, ui_filter_matched: matched };
  });
  Object.assign(result, filtering);

  const out = process.env.VL_UI_BENCH_OUT ?? path.join('test-results', 'ui-bench.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify({ ...result, panel: PANEL, note: FREE
    ? `the device produced ${Math.round(result.engine_events_per_s)} events/s (free-running engine thread); the console received and drew a sample of ${Math.round(result.events_per_s)} events/s (every state event, the newest of the rest) and the device's rings; latency from the device producing an event to the frame showing it; scroll figures over ${result.rows} rows`
    : `paced: measured at ${Math.round(result.events_per_s)} events/s (every event reached the console; the rate this machine reached), not 1 M/s; scroll figures over ${result.rows} rows` }, null, 2));
  test.info().annotations.push({ type: 'ui-bench', description: JSON.stringify(result) });
  await page.screenshot({ path: 'e2e/screenshots/events-under-load.png' });
  expect(result.events_per_s).toBeGreaterThan(0);
});
