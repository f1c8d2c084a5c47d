// The SG lab's operations over the addon: the page / entry rule per element (the device's own rule, vl/sg.h),
// list generators, one strategy run, and the side-by-side comparison of the five strategies.
import type { NativeAddon, NativeSession, NResult } from '../../app/host/native.ts';
import {
  SG_BREAK_NAMES, SG_STRATEGIES, SgCheckArgs, SgComparison, SgComparisonRow, SgElem, SgGenerateArgs, SgMapping, SgRunArgs,
  SgRunResult,
} from './schema.ts';

/** The SG functions of the addon (native/addon/sg_lab.cpp), merged into the addon's interface (app/host/native.ts;
 *  app/host/native-interface.test.ts checks every declared method against the built addon's method tables). */
interface SgAddon {
  sgCheck(args: unknown): NResult<unknown>;
  sgGenerate(args: unknown): NResult<unknown>;
}
interface SgSession { sg_lab_run(list: unknown, strategy: string, config: unknown): NResult<unknown> }
// optional: a real device's session (app/host/realdev.ts) and an addon built before the lab have none of them
declare module '../../app/host/native.ts' {
  interface NativeAddon extends Partial<SgAddon> {}
  interface NativeSession extends Partial<SgSession> {}
}

function sgAddon(addon: NativeAddon): SgAddon {
  const a: Partial<SgAddon> = addon;   // an addon built before the lab has none of them
  if (typeof a.sgCheck !== 'function' || typeof a.sgGenerate !== 'function')
    throw new Error('the native addon has no SG lab functions: rebuild it (node scripts/build.mjs addon)');
  return a as SgAddon;
}

/** A refusal or failure the device reported, with its errno-style code. */
export class SgError extends Error {
  constructor(readonly err: number, msg: string) { super(msg); }
}

function value<T>(r: NResult<unknown>, parse: (v: unknown) => T): T {
  if (r.err !== 0 || r.value === undefined) throw new SgError(r.err, r.msg);
  return parse(r.value);
}

/** Where the lab puts a list for the rule check: any page-aligned base gives the same verdicts. */
export const SG_CHECK_BASE = 0x7f0000000000;

/** Each element's verdict under ib_sg_to_pages (or the indirect entry rule), as the device's map_mr_sg applies it. */
export function sgCheck(addon: NativeAddon, args: unknown): SgMapping {
  const a = SgCheckArgs.parse(args);
  return value(sgAddon(addon).sgCheck(a), (v) => SgMapping.parse(v));
}

/** sgCheck for a list given as (offset, length) elements of a page-aligned region. */
export function checkList(addon: NativeAddon, list: SgElem[], pageSize = 4096, maxNumSg?: number, indirect = false): SgMapping {
  return sgCheck(addon, { sg: list.map((e) => ({ addr: SG_CHECK_BASE + e.offset, length: e.length })), pageSize, maxNumSg, indirect });
}

export function sgGenerate(addon: NativeAddon, args: unknown): SgElem[] {
  const a = SgGenerateArgs.parse(args);
  return value(sgAddon(addon).sgGenerate(a), (v) => SgElem.array().parse(v));
}

/** One strategy on the session: the figures come back with a refusal too (err != 0). */
export function sgRun(session: NativeSession, args: SgRunArgs): SgRunResult {
  const a = SgRunArgs.parse(args);
  const s: Partial<SgSession> = session;
  if (typeof s.sg_lab_run !== 'function') throw new Error('the native addon has no sg_lab_run: rebuild it (node scripts/build.mjs addon)');
  const r = s.sg_lab_run(a.list, a.strategy, a.config);
  if (r.value === undefined) throw new SgError(r.err, r.msg);
  return SgRunResult.parse(r.value);
}

const REFUSALS = new Set([22 /* EINVAL */, 12 /* ENOMEM */, 95 /* EOPNOTSUPP */]);

export interface CompareOptions {
  profile?: 'rxe' | 'cx' | 'iwarp' | 'minimal';
  seed?: number;
  pattern?: string;
  pairsQd1?: number;       // I/O pairs measured at queue depth 1
  pairsQd32?: number;      // I/O pairs measured at queue depth 32
  mrPool?: number;
}

/** The five strategies on one list, each run as verbs on a fresh session: per-pair costs at QD 1, throughput at QD 32. */
export function compare(addon: NativeAddon, list: SgElem[], o: CompareOptions = {}): SgComparison {
  const profile = o.profile ?? 'cx';
  const prof = addon.Session.profiles().find((p) => p.name === profile);
  const check = checkList(addon, list, 4096, prof?.maxFastRegPageListLen || undefined);
  const bytes = list.reduce((n, e) => n + e.length, 0);
  const rows: SgComparisonRow[] = [];
  for (const strategy of SG_STRATEGIES) {
    const run = (queueDepth: number, ios: number) => {
      const s = new addon.Session(o.seed ?? 1);
      try {
        s.set_event_capture(false);
        return sgRun(s, { list, strategy, config: { profile, queueDepth, ios, seed: o.seed ?? 1, mrPool: o.mrPool ?? 128 } });
      } finally { s.close(); }
    };
    const pairs = o.pairsQd1 ?? 4;
    run(1, 1);                                    // warm-up: first-use costs (page faults, caches) are not the strategy's
    // three measured runs, the one with the median wall time kept (the box is shared: one preempted run must not
    // decide the row); the device's counters are the same in all three
    const r1 = [run(1, pairs), run(1, pairs), run(1, pairs)].sort((a, b) => a.counters.wallNs - b.counters.wallNs)[1]!;
    const outcome = r1.err === 0 && r1.verified ? 'ok' : REFUSALS.has(r1.err) ? 'refused' : 'failed';
    const base = {
      strategy, outcome, err: r1.err, msg: r1.msg, wcStatus: r1.wcStatus, mapped: r1.mapped, firstBreak: r1.firstBreak,
      breakWhy: r1.breakWhy, verified: r1.verified, mrsHeld: r1.counters.mrsHeld,
    } as const;
    if (outcome !== 'ok') { rows.push({ ...base, perPair: null, latencyQd1: null, throughputQd32: null }); continue; }
    const c = r1.counters;
    const per = (v: number) => v / pairs;
    const pairs32 = o.pairsQd32 ?? 64;
    const r32 = run(32, pairs32);
    rows.push({
      ...base,
      verified: r1.verified && r32.verified,
      perPair: {
        bytesMoved: per(c.bytesMoved), bytesCopied: per(c.bytesCopied), registrations: per(c.registrations),
        invalidations: per(c.invalidations), keysOnWire: per(c.keysOnWire), remoteOps: per(c.remoteOps),
        wrsPosted: per(c.wrsPosted), packets: per(c.packets), deviceNs: per(c.deviceNs), wallNs: per(c.wallNs),
        wallInitiatorNs: per(c.wallInitiatorNs),
      },
      latencyQd1: { deviceNsPerIo: c.deviceNs / (2 * pairs), wallNsPerIo: c.wallNs / (2 * pairs) },
      throughputQd32: r32.err !== 0 ? null : {
        bytesPerDeviceSecond: r32.counters.deviceNs ? (r32.counters.bytesMoved * 1e9) / r32.counters.deviceNs : 0,
        wallBytesPerSecond: r32.counters.wallNs ? (r32.counters.bytesMoved * 1e9) / r32.counters.wallNs : 0,
        maxInFlight: r32.counters.maxInFlight, poolWaits: r32.counters.poolWaits,
      },
    });
  }
  return SgComparison.parse({
    list: { elements: list.length, bytes, pattern: o.pattern, seed: o.seed },
    profile,
    check: { mapped: check.mapped, firstBreak: check.firstBreak, reason: SG_BREAK_NAMES[check.firstBreak === null ? 0 : check.elements[check.firstBreak].why] ?? '?', pageSize: 4096 },
    rows,
  });
}
