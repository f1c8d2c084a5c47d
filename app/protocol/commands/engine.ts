// The engine: stepping virtual time, the load generator, fault injection, autorun.
import { z } from 'zod';
import { command, RU64 } from '../descriptor.ts';
import { AutorunOut, TrafficOut } from './session.ts';
import type { Shared } from './shared.ts';

const Faults = {
  loss: z.number().min(0).max(1).default(0), duplicate: z.number().min(0).max(1).default(0),
  reorder: z.number().min(0).max(1).default(0), delay: z.number().min(0).max(1).default(0),
  delayNs: z.number().int().min(0).max(10_000_000_000).default(0),
};

export const engineCommands = {
  'engine.step': command({
    args: () => ({ count: z.number().int().min(1).max(1_000_000).default(1) }),
    result: z.object({ steps: z.number(), idle: z.boolean(), nowNs: RU64, traffic: TrafficOut.optional() }),
  }),
  'engine.run': command({
    args: () => ({ maxSteps: z.number().int().min(1).max(100_000_000).default(1_000_000) }),
    result: z.object({ steps: RU64, nowNs: RU64 }),
  }),
  // load generator (like perftest's ib_write_bw loop): while on, every engine.step (and autorun tick) first
  // polls the QP's send CQ (`cq`, if given, must be it) and posts `wrs` on `qp` again whenever the send queue
  // has room; off by { on: false }
  'engine.traffic': command({
    args: (h, x: Shared) => ({ on: z.boolean(), qp: h('qp').optional(), cq: h('cq').optional(), wrs: z.array(x.SendWr).min(1).max(1024).optional() }),
    result: z.object({ traffic: z.union([TrafficOut, z.object({ on: z.literal(false) })]) }),
  }),
  'engine.faults': command({ args: () => Faults, result: z.object({ faults: z.object(Faults) }) }),
  // free: the engine runs on its own thread at stepsPerSecond whatever the console draws (the console gets a sample
  // of the events, every state event, and the rings as the device holds them); otherwise autorun is paced by the
  // console's acknowledgements and every event reaches it
  'engine.autorun': command({
    args: () => ({ on: z.boolean(), stepsPerSecond: z.number().int().min(1).max(1_000_000_000).default(1000), free: z.boolean().default(false) }),
    result: z.object({ autorun: AutorunOut }),
  }),
};
