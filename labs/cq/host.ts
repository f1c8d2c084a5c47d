// Lab 2's host agent: the explorer's consumers driving the console's own device session, one step at a time, so a
// failing interleaving replays in the console (every device command goes through the backend host: journaled, its
// events on the console's stream, the Queues panel following the CQ and both QPs). The consumers' own state (mode,
// where the handler and each worker are, deliveries) is the agent's and comes back in its replies.
//   explore   many seeds, each in a fresh session of its own (not the console's)
//   start     session.reset with the run's seed, then the rig's setup: the run's step 0
//   step      the next n steps of the run
import type { ExecResult } from '../../app/host/api.ts';
import type { HostCore } from '../../app/host/core.ts';
import type { Command, DeviceEvent } from '../../app/protocol/index.ts';
import { VARIANTS } from './consumers.ts';
import type { VariantName } from './consumers.ts';
import { SeededRun, explore } from './explorer.ts';
import type { ExploreResult, RunOptions, RunResult, TraceStep } from './explorer.ts';
import type { RigPort } from './rig.ts';

/** What the agent needs of the backend host (HostCore's execute and onEvents). */
export interface AgentHost {
  execute(command: Command): ExecResult;
  onEvents(fn: (events: DeviceEvent[], ctx: { complete: boolean }) => void): void;
}

/** The rig's port over the host: commands through execute() (journaled), events as the host hands them out. */
export function hostPort(host: AgentHost): RigPort {
  const pending: DeviceEvent[] = [];
  host.onEvents((evs, ctx) => { if (ctx.complete) for (const e of evs) pending.push(e); });
  return { exec: (c) => host.execute(c), drainEvents: () => pending.splice(0) };
}

/** A reply: the steps just taken (the panel keeps the ones before) and the run's result so far, without its trace. */
export interface ReplayView { variant: VariantName; seed: number; at: number; finished: boolean; steps: TraceStep[]; result: Omit<RunResult, 'trace'> }

type Out<T> = { ok: true; result: T } | { ok: false; error: { code: string; message: string; field?: string } };
const bad = (message: string, field: string): Out<never> => ({ ok: false, error: { code: 'EINVAL', message, field } });

export class CqAgent {
  private readonly port: RigPort;
  private run: SeededRun | null = null;

  constructor(private readonly host: AgentHost) { this.port = hostPort(host); }

  explore(args: { variant: string; seeds?: number; from?: number } & RunOptions): Out<ExploreResult> {
    if (!(args.variant in VARIANTS)) return bad(`variant: one of ${Object.keys(VARIANTS).join(', ')}`, 'args.variant');
    const seeds = args.seeds ?? 200, from = args.from ?? 1;
    if (!Number.isInteger(seeds) || seeds < 1 || seeds > 10_000) return bad('seeds: 1..10000', 'args.seeds');
    if (!Number.isInteger(from) || from < 0 || from > 2 ** 32 - 1 - seeds) return bad('from: a seed (0..2^32-1)', 'args.from');
    const { variant: _v, seeds: _s, from: _f, ...opts } = args;
    return { ok: true, result: explore(args.variant as VariantName, seeds, from, opts) };
  }

  /** A fresh console session seeded with `seed`, the run's devices and QPs set up, no step taken. */
  start(args: { variant: string; seed: number }): Out<ReplayView> {
    if (!(args.variant in VARIANTS)) return bad(`variant: one of ${Object.keys(VARIANTS).join(', ')}`, 'args.variant');
    if (!Number.isInteger(args.seed) || args.seed < 0 || args.seed > 2 ** 32 - 1) return bad('seed: 0..2^32-1', 'args.seed');
    const reset = this.host.execute({ cmd: 'session.reset', args: { seed: args.seed } });
    if (!reset.ok) return reset;
    this.port.drainEvents();
    try {
      this.run = new SeededRun(args.variant as VariantName, args.seed, this.port);
    } catch (e) {
      this.run = null;
      return { ok: false, error: { code: 'EIO', message: `lab cq: setting up the run failed: ${(e as Error).message}` } };
    }
    return { ok: true, result: this.view([]) };
  }

  /** The next `count` steps (fewer when the run ends). */
  step(args: { count?: number }): Out<ReplayView> {
    if (!this.run) return { ok: false, error: { code: 'ENOENT', message: 'lab cq: no run started (start one with a variant and a seed)' } };
    const n = args.count ?? 1;
    if (!Number.isInteger(n) || n < 1 || n > 100_000) return bad('count: 1..100000', 'args.count');
    const steps: TraceStep[] = [];
    for (let i = 0; i < n; i++) {
      const t = this.run.next();
      if (!t) break;
      steps.push(t);
    }
    return { ok: true, result: this.view(steps) };
  }

  private view(steps: TraceStep[]): ReplayView {
    const r = this.run!;
    const { trace: _trace, ...result } = r.result();
    return { variant: r.variant, seed: r.seed, at: r.pipeline.step, finished: r.finished, steps, result };
  }
}

/** The host extension entry point (app/host/main.ts attaches labs/<id>/host.ts): lab.cq.explore / start / step. */
export function attach(core: HostCore): CqAgent {
  const agent = new CqAgent(core);
  core.register({ name: 'lab.cq.explore', handler: (c) => agent.explore(c.args) });
  core.register({ name: 'lab.cq.start', handler: (c) => agent.start(c.args) });
  core.register({ name: 'lab.cq.step', handler: (c) => agent.step(c.args) });
  return agent;
}
