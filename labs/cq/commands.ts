// Console commands of lab 2's host agent (labs/cq/host.ts): the interleaving explorer, and one seeded run replayed in
// the console's own session step by step. Answered by the host, never scenario steps (the device commands the agent
// runs are journaled and recorded themselves). The result schemas mirror explorer.ts's types (host.test.ts parses
// every reply with them).
import { z } from 'zod';
import { command } from '../../app/protocol/descriptor.ts';

const host = { answeredBy: 'host', step: false, recorded: false } as const;
const Variant = z.enum(['report-missed', 'never-reports', 'irq-lock', 'no-repoll']);
const Seed = z.number().int().min(0).max(2 ** 32 - 1);
const Worker = z.templateLiteral(['w', z.number().int().min(0)]);
const Ctx = z.union([z.literal('irq'), Worker]);

const Delivery = z.object({ step: z.number(), wrId: z.number(), expected: z.number(), by: Ctx, inOrder: z.boolean() });
const CqView = z.object({
  entries: z.number(), armed: z.boolean(), solicitedOnly: z.boolean(), pendingEvents: z.number(), unacked: z.number(), overrun: z.boolean(),
});
export const TraceStep = z.object({
  step: z.number(), actor: z.union([z.enum(['submit', 'device', 'irq']), Worker]), action: z.string(),
  cq: CqView, mode: z.enum(['irq', 'thread']), depth: z.number(), irqOff: z.boolean(), handler: z.string(), workers: z.array(z.string()),
});
const RunSummary = z.object({
  variant: Variant, seed: z.number(), verdict: z.enum(['in-order', 'violation', 'stall', 'bound']), steps: z.number(),
  delivered: z.number(), violations: z.array(Delivery),
  stall: z.object({ entries: z.number(), armed: z.boolean(), pendingEvents: z.number() }).optional(),
  maskedSteps: z.number(), maskedEngineSteps: z.number(), deferredIrqSteps: z.number(),
});
const Options = z.object({
  workers: z.number().int().min(1).max(16), total: z.number().int().min(1).max(4096), maxDepth: z.number().int().min(1).max(1024),
  low: z.number().int().min(0).max(1024), high: z.number().int().min(0).max(1024), maxSteps: z.number().int().min(1).max(1_000_000),
  scheduler: z.enum(['uniform', 'weighted']),
});
export const ExploreResult = z.object({
  variant: Variant, label: z.string(), profile: z.string(), expect: z.string(), options: Options,
  seeds: z.object({ from: z.number(), count: z.number() }),
  tried: z.number(), steps: z.number(), inOrder: z.number(), violating: z.number(), stalled: z.number(), bounded: z.number(),
  violations: z.number(), firstFailingSeed: z.number().nullable(), firstViolation: Delivery.nullable(),
  firstStall: z.object({ seed: z.number(), entries: z.number(), armed: z.boolean(), pendingEvents: z.number() }).nullable(),
  maskedSteps: z.number(), maskedEngineSteps: z.number(), deferredIrqSteps: z.number(), worstMaskedSteps: z.number(),
  verdict: z.enum(['violation', 'in-order', 'stall']),
});
export const ReplayView = z.object({
  variant: Variant, seed: z.number(), at: z.number(), finished: z.boolean(), steps: z.array(TraceStep), result: RunSummary,
});

export const labCqCommands = {
  /** many seeds of a variant, each in a fresh session of its own (not the console's) */
  'lab.cq.explore': command({
    ...host, readOnly: true,
    args: () => ({ variant: Variant, seeds: z.number().int().min(1).max(10_000).default(200), from: Seed.default(1) }),
    result: ExploreResult,
  }),
  /** session.reset with the seed, then the run's devices, QPs and CQ: step 0 of the run, in the console's session */
  'lab.cq.start': command({ ...host, args: () => ({ variant: Variant, seed: Seed }), result: ReplayView }),
  /** the next `count` steps of the started run */
  'lab.cq.step': command({ ...host, args: () => ({ count: z.number().int().min(1).max(100_000).default(1) }), result: ReplayView }),
};
