// Lab 2's interleaving explorer. A run is one seed: a seeded scheduler (mulberry32) picks, at every step, one of
// the actors that may act (the submitter posting the next request, the device taking one engine step, the
// interrupt-context handler, worker i of the thread pipeline) and that actor does one atomic action through the
// executor. Same seed, same variant, same options: same run, step for step (the device is deterministic too), so
// a failing seed replays in the console. explore() runs many seeds and reports the first that breaks order.
import type { Executor } from '../../app/host/api.ts';
import { NativeExecutor } from '../../app/host/executor.ts';
import { Pipeline, VARIANTS } from './consumers.ts';
import type { Ctx, Delivery, PipelineOptions, VariantName } from './consumers.ts';
import { CqRig } from './rig.ts';
import type { CqView } from './timeline.ts';

export type Actor = 'submit' | 'device' | 'irq' | `w${number}`;

/** One step of a run: who acted, what it did, and the state after it (the timeline's row). */
export interface TraceStep {
  step: number; actor: Actor; action: string;
  cq: CqView; mode: 'irq' | 'thread'; depth: number; irqOff: boolean;
  handler: string; workers: string[];
}

export type Verdict = 'in-order' | 'violation' | 'stall' | 'bound';

export interface RunResult {
  variant: VariantName; seed: number; verdict: Verdict; steps: number;
  delivered: number; violations: Delivery[];
  /** stall: entries left in the CQ with nothing armed to wake anyone (the lost wakeup) */
  stall?: { entries: number; armed: boolean; pendingEvents: number };
  maskedSteps: number; maskedEngineSteps: number; deferredIrqSteps: number;
  trace?: TraceStep[];
}

export const DEFAULT_OPTIONS: PipelineOptions & { maxSteps: number; scheduler: SchedulerKind } = {
  workers: 3, total: 32, maxDepth: 10, low: 3, high: 5, maxSteps: 20_000, scheduler: 'weighted',
};

/** mulberry32: a small, well-known 32-bit PRNG; the whole schedule follows from the seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** How the next actor is chosen among those that may act:
 *  - 'uniform': each with the same probability;
 *  - 'weighted': each actor draws a speed for the whole run (1 / (1 + 30 u^2), u uniform): some seeds make a worker,
 *    the handler or the device much slower than the others, as a preempted thread or a busy CPU is. Races whose
 *    window needs one context held back for many steps show up in far fewer seeds than with 'uniform'. */
export type SchedulerKind = 'uniform' | 'weighted';

export function scheduler(kind: SchedulerKind, seed: number): (ready: Actor[]) => Actor {
  const rand = mulberry32(seed);
  if (kind === 'uniform') return (ready) => ready[Math.floor(rand() * ready.length)]!;
  const speed = new Map<Actor, number>();
  return (ready) => {
    let sum = 0;
    for (const a of ready) {
      if (!speed.has(a)) { const u = rand(); speed.set(a, 1 / (1 + 30 * u * u)); }
      sum += speed.get(a)!;
    }
    let x = rand() * sum;
    for (const a of ready) { x -= speed.get(a)!; if (x < 0) return a; }
    return ready[ready.length - 1]!;
  };
}

function runnable(p: Pipeline): Actor[] {
  const out: Actor[] = [];
  if (p.canSubmit()) out.push('submit');
  if (p.canStep()) out.push('device');
  if (p.canHandle()) out.push('irq');
  for (let i = 0; i < p.workers.length; i++) if (p.canWork(i)) out.push(`w${i}`);
  return out;
}

function act(p: Pipeline, a: Actor): string {
  if (a === 'submit') return p.submit();
  if (a === 'device') return p.deviceStep();
  if (a === 'irq') return p.handle();
  return p.work(Number(a.slice(1)));
}

export interface RunOptions extends Partial<typeof DEFAULT_OPTIONS> { trace?: boolean; executor?: () => Executor }

/** One seeded run of a variant on a fresh device session. */
export function runSeed(variant: VariantName, seed: number, opts: RunOptions = {}): RunResult {
  const o = { ...DEFAULT_OPTIONS, ...opts };
  const v = VARIANTS[variant];
  const ex = opts.executor ? opts.executor() : new NativeExecutor({ seed });
  try {
    const rig = new CqRig(ex, v.profile, 2 * o.maxDepth + 4);
    rig.setup();
    rig.arm(v.reportMissedEvents);            // the driver starts in interrupt context, armed
    const p = new Pipeline(rig, v, o);
    const pick = scheduler(o.scheduler, seed);
    const trace: TraceStep[] | undefined = opts.trace ? [] : undefined;
    let ended: 'done' | 'stall' | 'bound' = 'done';
    while (!p.done) {
      if (p.step >= o.maxSteps) { ended = 'bound'; break; }
      const ready = runnable(p);
      if (!ready.length) { ended = 'stall'; break; }
      const who = pick(ready);
      const action = act(p, who);
      p.account();
      trace?.push({
        step: p.step, actor: who, action, cq: { ...rig.view }, mode: p.mode, depth: p.depth, irqOff: p.irqMasked,
        handler: p.handler.pc, workers: p.workers.map((w) => w.pc),
      });
    }
    const verdict: Verdict = ended === 'bound' ? 'bound' : p.violations.length ? 'violation' : ended === 'stall' ? 'stall' : 'in-order';
    return {
      variant, seed, verdict, steps: p.step, delivered: p.delivered.length, violations: p.violations,
      ...(ended === 'stall' ? { stall: { entries: rig.view.entries, armed: rig.view.armed, pendingEvents: rig.view.pendingEvents } } : {}),
      maskedSteps: p.maskedSteps, maskedEngineSteps: p.maskedEngineSteps, deferredIrqSteps: p.deferredIrqSteps,
      ...(trace ? { trace } : {}),
    };
  } finally {
    ex.close();
  }
}

export interface ExploreResult {
  variant: VariantName; label: string; profile: string; expect: string;
  options: typeof DEFAULT_OPTIONS; seeds: { from: number; count: number };
  /** runs (interleavings) tried, and how they ended */
  tried: number; steps: number; inOrder: number; violating: number; stalled: number; bounded: number;
  /** out-of-order deliveries over all runs */
  violations: number;
  firstFailingSeed: number | null;
  /** the first out-of-order delivery of the first failing seed: which completion, by which context */
  firstViolation: (Delivery & { by: Ctx }) | null;
  firstStall: { seed: number; entries: number; armed: boolean; pendingEvents: number } | null;
  /** irq-lock cost: scheduler steps (and engine steps among them) with interrupts off, summed over the runs; worst run */
  maskedSteps: number; maskedEngineSteps: number; deferredIrqSteps: number; worstMaskedSteps: number;
  verdict: 'violation' | 'in-order' | 'stall';
}

/** Runs `count` seeds from `from`; the verdict is 'violation' if any run broke order, else 'stall' if any stalled. */
export function explore(variant: VariantName, count = 100, from = 1, opts: RunOptions = {}): ExploreResult {
  const o = { ...DEFAULT_OPTIONS, ...opts };
  const v = VARIANTS[variant];
  const r: ExploreResult = {
    variant, label: v.label, profile: v.profile, expect: v.expect, options: o, seeds: { from, count },
    tried: 0, steps: 0, inOrder: 0, violating: 0, stalled: 0, bounded: 0, violations: 0, firstFailingSeed: null, firstViolation: null,
    firstStall: null, maskedSteps: 0, maskedEngineSteps: 0, deferredIrqSteps: 0, worstMaskedSteps: 0, verdict: 'in-order',
  };
  for (let seed = from; seed < from + count; seed++) {
    const run = runSeed(variant, seed, { ...opts, trace: false });
    r.tried++;
    r.steps += run.steps;
    r.maskedSteps += run.maskedSteps; r.maskedEngineSteps += run.maskedEngineSteps; r.deferredIrqSteps += run.deferredIrqSteps;
    r.worstMaskedSteps = Math.max(r.worstMaskedSteps, run.maskedSteps);
    if (run.verdict === 'bound') { r.bounded++; continue; }
    if (run.stall) {
      r.stalled++;
      r.firstStall ??= { seed, ...run.stall };
    }
    if (run.violations.length) {
      r.violating++;
      r.violations += run.violations.length;
      if (r.firstFailingSeed === null) { r.firstFailingSeed = seed; r.firstViolation = run.violations[0]!; }
    } else if (run.verdict === 'in-order') r.inOrder++;
  }
  r.verdict = r.violating ? 'violation' : r.stalled ? 'stall' : 'in-order';
  return r;
}
