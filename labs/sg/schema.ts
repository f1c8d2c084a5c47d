// The SG lab's (lab 1) commands and results: zod schemas for what the addon's SG functions take and return
// (native/addon/sg_lab.cpp over native/include/vl/sg.h and sg_lab.h). The lab's agent, CLI and panel read these.
import { z } from 'zod';

/** Why an element is not mapped (vl::SgBreak flags; sg.test.ts checks the device returns the same numbers and names). */
export const SG_BREAK = {
  ok: 0,
  start: 1,               // starts inside a page, not contiguous with the previous element
  prev_end: 2,            // the previous element ends inside a page, this one does not continue it
  page_list_full: 4,      // its pages would exceed max_num_sg (the driver's set_page fails)
  entry_limit: 8,         // indirect: beyond max_num_sg entries
  not_reached: 16,        // mapping stopped at an earlier element
} as const;
export const SG_BREAK_NAMES: Record<number, string> = {
  0: 'ok', 1: 'start', 2: 'prev_end', 3: 'start+prev_end', 4: 'page_list_full', 8: 'entry_limit', 16: 'not_reached',
};

export const SG_PATTERNS = ['random', 'aligned4k', 'sectors512', 'one_byte_off', 'block_layer'] as const;
export const SG_STRATEGIES = ['fast_reg', 'bounce', 'multi_mr', 'pool512', 'indirect'] as const;
export type SgStrategy = (typeof SG_STRATEGIES)[number];

const u32 = z.number().int().min(0).max(0xffffffff);
const count = z.number().int().min(0);

/** One element of a list: where it lies in the initiator's region (which starts page aligned) and its length. */
export const SgElem = z.object({ offset: count.max(2 ** 32), length: u32.min(1) }).strict();
export type SgElem = z.infer<typeof SgElem>;

export const SgCheckArgs = z.object({
  sg: z.array(z.object({ addr: count, length: u32 }).strict()).min(1).max(65536),
  pageSize: z.number().int().min(512).max(2 ** 30).refine((v) => (v & (v - 1)) === 0, 'a power of two').default(4096),
  maxNumSg: u32.min(1).optional(),
  indirect: z.boolean().default(false),
}).strict();
export const SgVerdict = z.object({
  why: z.number().int(), reason: z.string(), text: z.string(), pages: count, contiguous: z.boolean(),
});
export const SgMapping = z.object({
  mapped: count, entries: count, length: count, firstBreak: count.nullable(), elements: z.array(SgVerdict),
});
export type SgMapping = z.infer<typeof SgMapping>;

export const SgGenerateArgs = z.object({
  pattern: z.enum(SG_PATTERNS), n: z.number().int().min(1).max(65536), total: z.number().int().min(1).max(64 << 20),
  seed: z.number().int().min(0).default(1),
}).strict();

/** A list given element by element, or by a generator (lab steps name lists this way: JSON, no references). */
export const SgListSpec = z.union([z.array(SgElem).min(1).max(65536), z.object({ generate: SgGenerateArgs }).strict()]);
export type SgListSpec = z.input<typeof SgListSpec>;

export const SgRunConfig = z.object({
  profile: z.enum(['rxe', 'cx', 'iwarp', 'minimal']).default('cx'),
  queueDepth: z.number().int().min(1).max(64).default(1),
  ios: z.number().int().min(1).max(4096).default(1),
  mrPool: z.number().int().min(1).max(65536).default(128),
  maxNumSg: u32.optional(),
  seed: z.number().int().min(0).default(1),
  ignoreShortMap: z.boolean().default(false),
}).strict();
export const SgRunArgs = z.object({
  list: z.array(SgElem).min(1).max(65536), strategy: z.enum(SG_STRATEGIES), config: SgRunConfig.default(SgRunConfig.parse({})),
}).strict();
export type SgRunArgs = z.input<typeof SgRunArgs>;

export const SgCounters = z.object({
  bytesMoved: count, bytesCopied: count, registrations: count, invalidations: count, keysOnWire: count, remoteOps: count,
  wrsPosted: count, packets: count, deviceNs: count, wallNs: count, wallInitiatorNs: count, mrsHeld: count, maxInFlight: count,
  poolWaits: count, iosDone: count,
});
export type SgCounters = z.infer<typeof SgCounters>;
export const SgRunResult = z.object({
  strategy: z.enum(SG_STRATEGIES), err: z.number().int(), msg: z.string(), wcStatus: z.number().int(), mapped: count,
  firstBreak: count.nullable(), breakWhy: z.number().int(), verified: z.boolean(), counters: SgCounters,
});
export type SgRunResult = z.infer<typeof SgRunResult>;

/** One row of the side-by-side comparison: per-pair costs at queue depth 1, throughput at queue depth 32. */
export const SgComparisonRow = z.object({
  strategy: z.enum(SG_STRATEGIES),
  outcome: z.enum(['ok', 'refused', 'failed']),
  err: z.number().int(), msg: z.string(), wcStatus: z.number().int(),
  mapped: count, firstBreak: count.nullable(), breakWhy: z.number().int(),
  verified: z.boolean(),
  /** averages over the QD 1 run's pairs (one WRITE + one READ each) */
  perPair: z.object({
    bytesMoved: z.number(), bytesCopied: z.number(), registrations: z.number(), invalidations: z.number(),
    keysOnWire: z.number(), remoteOps: z.number(), wrsPosted: z.number(), packets: z.number(), deviceNs: z.number(),
    wallNs: z.number(), wallInitiatorNs: z.number(),
  }).nullable(),
  mrsHeld: count,
  latencyQd1: z.object({ deviceNsPerIo: z.number(), wallNsPerIo: z.number() }).nullable(),
  throughputQd32: z.object({
    bytesPerDeviceSecond: z.number(), wallBytesPerSecond: z.number(), maxInFlight: count, poolWaits: count,
  }).nullable(),
});
export type SgComparisonRow = z.infer<typeof SgComparisonRow>;
export const SgComparison = z.object({
  list: z.object({ elements: count, bytes: count, pattern: z.string().optional(), seed: z.number().optional() }),
  profile: z.string(),
  check: z.object({ mapped: count, firstBreak: count.nullable(), reason: z.string(), pageSize: count }),
  rows: z.array(SgComparisonRow),
});
export type SgComparison = z.infer<typeof SgComparison>;
