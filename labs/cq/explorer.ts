// Lab 2's interleaving explorer. A run is one seed: a seeded scheduler (mulberry32) picks, at every step, one of
// the actors that may act (the submitter posting the next request, the device taking one engine step, the
// interrupt-context handler, worker i of the thread pipeline) and that actor does one atomic action through the
// executor. Same seed, same variant, same options: same run, step for step (the device is deterministic too), so
// a failing seed replays in the console. explore() runs many seeds and reports the first that breaks order.
import { NativeExecutor } from '../../app/host/executor.ts';
import { Pipeline, VARIANTS } from './consumers.ts';
import type { Ctx, Delivery, PipelineOptions, VariantName } from './consumers.ts';
import { CqRig } from './rig.ts';
import type { RigPort } from './rig.ts';
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

export interface RunOptions extends Partial<typeof DEFAULT_OPTIONS> { trace?: boolean }

/** One seeded run, one step at a time, over any port to a device session (a fresh executor for the explorer, the
 *  backend host for the lab's step-by-step replay in the console). The session must be fresh (seeded with `seed`):
 *  the rig creates its own devices. */
export class SeededRun {
  readonly options: typeof DEFAULT_OPTIONS;
  readonly rig: CqRig;
  readonly pipeline: Pipeline;
  readonly trace: TraceStep[] = [];
  private ended: 'running' | 'done' | 'stall' | 'bound' = 'running';
  private readonly pick: (ready: Actor[]) => Actor;

  constructor(readonly variant: VariantName, readonly seed: number, port: RigPort, opts: RunOptions = {}, private readonly keepTrace = true) {
    this.options = { ...DEFAULT_OPTIONS, ...opts };
    const v = VARIANTS[variant];
    this.rig = new CqRig(port, v.profile, 2 * this.options.maxDepth + 4);
    this.rig.setup();
    this.rig.arm(v.reportMissedEvents);            // the driver starts in interrupt context, armed
    this.pipeline = new Pipeline(this.rig, v, this.options);
    this.pick = scheduler(this.options.scheduler, seed);
  }

  get finished(): boolean { return this.ended !== 'running'; }

  /** The next step (null once the run has ended: all delivered, nobody can act, or the step bound). */
  next(): TraceStep | null {
    if (this.ended !== 'running') return null;
    const p = this.pipeline;
    if (p.done) { this.ended = 'done'; return null; }
    if (p.step >= this.options.maxSteps) { this.ended = 'bound'; return null; }
    const ready = runnable(p);
    if (!ready.length) { this.ended = 'stall'; return null; }
    const who = this.pick(ready);
    const action = act(p, who);
    p.account();
    const t: TraceStep = {
      step: p.step, actor: who, action, cq: { ...this.rig.view }, mode: p.mode, depth: p.depth, irqOff: p.irqMasked,
      handler: p.handler.pc, workers: p.workers.map((w) => w.pc),
    };
    if (this.keepTrace) this.trace.push(t);
    if (p.done) this.ended = 'done';
    return t;
  }

  result(): RunResult {
    const p = this.pipeline, e = this.ended, view = this.rig.view;
    const verdict: Verdict = e === 'bound' ? 'bound' : p.violations.length ? 'violation' : e === 'stall' ? 'stall' : 'in-order';
    return {
      variant: this.variant, seed: this.seed, verdict, steps: p.step, delivered: p.delivered.length, violations: p.violations,
      ...(e === 'stall' ? { stall: { entries: view.entries, armed: view.armed, pendingEvents: view.pendingEvents } } : {}),
      maskedSteps: p.maskedSteps, maskedEngineSteps: p.maskedEngineSteps, deferredIrqSteps: p.deferredIrqSteps,
      ...(this.keepTrace ? { trace: this.trace } : {}),
    };
  }
}

/** One seeded run of a variant on a fresh device session, to its end. */
export function runSeed(variant: VariantName, seed: number, opts: RunOptions = {}): RunResult {
  const ex = new NativeExecutor({ seed });
  try {
    const run = new SeededRun(variant, seed, ex, opts, opts.trace ?? false);
    while (run.next());
    return run.result();
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
