// Lab 2 headless: the explorer over every variant, and a failing seed replayed step by step.
//   npx tsx labs/cq/run.ts [--json] [--seeds N] [--from S]      every variant; exit 1 if a verdict differs from
//                                                                 what the variant expects (VARIANTS[v].expect)
//   npx tsx labs/cq/run.ts --replay VARIANT:SEED [--json]        one run, every step with the CQ and both contexts
import { pathToFileURL } from 'node:url';
import { VARIANTS } from './consumers.ts';
import type { VariantName } from './consumers.ts';
import { DEFAULT_OPTIONS, explore, runSeed } from './explorer.ts';
import type { ExploreResult, RunResult } from './explorer.ts';

export interface LabCqResult {
  lab: 'cq'; seeds: { from: number; count: number }; options: typeof DEFAULT_OPTIONS;
  variants: ExploreResult[];
  /** every variant's verdict is the one it expects */
  pass: boolean;
}

export function runLab(count = 200, from = 1): LabCqResult {
  const variants = (Object.keys(VARIANTS) as VariantName[]).map((v) => explore(v, count, from));
  return { lab: 'cq', seeds: { from, count }, options: DEFAULT_OPTIONS, variants, pass: variants.every((r) => r.verdict === r.expect) };
}

export function formatLab(r: LabCqResult): string {
  const out = [`lab cq: ${r.seeds.count} seeds from ${r.seeds.from} per variant (${r.options.workers} workers, ${r.options.total} requests, depth <= ${r.options.maxDepth}, thread context above ${r.options.high}, interrupts at or below ${r.options.low}; scheduler ${r.options.scheduler})`];
  for (const v of r.variants) {
    const ok = v.verdict === v.expect ? 'ok  ' : 'FAIL';
    let line = `${ok} ${v.variant.padEnd(14)} ${v.verdict.padEnd(9)} tried ${v.tried}, in order ${v.inOrder}, violating ${v.violating} (${v.violations} out-of-order deliveries), stalled ${v.stalled}`;
    if (v.firstFailingSeed !== null) line += `; first failing seed ${v.firstFailingSeed}: wr_id ${v.firstViolation!.wrId} delivered by ${v.firstViolation!.by} while ${v.firstViolation!.expected} was due (step ${v.firstViolation!.step})`;
    if (v.firstStall) line += `; first stall: seed ${v.firstStall.seed}, ${v.firstStall.entries} entr${v.firstStall.entries === 1 ? 'y' : 'ies'} in the CQ, armed ${v.firstStall.armed}, no event pending`;
    if (v.maskedSteps) line += `; interrupts off ${v.maskedSteps} of ${v.steps} steps (${(100 * v.maskedSteps / v.steps).toFixed(1)}%, ${(v.maskedSteps / v.tried).toFixed(1)} per run, worst run ${v.worstMaskedSteps}), ${(v.maskedEngineSteps / v.tried).toFixed(1)} engine steps per run among them, ${v.deferredIrqSteps} steps an interrupt waited`;
    out.push(line);
    out.push(`     ${v.label}`);
  }
  out.push(r.pass ? 'PASS' : 'FAIL');
  return out.join('\n');
}

export function formatRun(r: RunResult): string {
  const lines = (r.trace ?? []).map((t) => {
    const cq = `entries ${t.cq.entries} ${t.cq.armed ? 'armed' : 'not armed'} events ${t.cq.pendingEvents}`;
    return `${String(t.step).padStart(5)} ${t.actor.padEnd(6)} ${t.action.padEnd(58)} | ${cq} | ${t.mode}${t.irqOff ? ' irq-off' : ''} depth ${t.depth} | irq:${t.handler} ${t.workers.map((w, i) => `w${i}:${w}`).join(' ')}`;
  });
  lines.push(`${r.variant} seed ${r.seed}: ${r.verdict}, ${r.delivered} delivered, ${r.violations.length} out of order` +
    r.violations.map((v) => `; step ${v.step}: wr_id ${v.wrId} by ${v.by} while ${v.expected} was due`).join(''));
  return lines.join('\n');
}

function main(argv: string[]): number {
  const json = argv.includes('--json');
  const val = (k: string) => { const i = argv.indexOf(k); return i >= 0 ? argv[i + 1] : undefined; };
  const replay = val('--replay');
  if (replay) {
    const [v, s] = replay.split(':');
    if (!v || !(v in VARIANTS) || !s || !/^\d+$/.test(s)) {
      console.error(`--replay VARIANT:SEED (variants: ${Object.keys(VARIANTS).join(', ')})`);
      return 2;
    }
    const r = runSeed(v as VariantName, Number(s), { trace: true });
    console.log(json ? JSON.stringify(r, null, 2) : formatRun(r));
    return 0;
  }
  const count = Number(val('--seeds') ?? 200), from = Number(val('--from') ?? 1);
  if (!Number.isInteger(count) || count < 1 || count > 100_000 || !Number.isInteger(from) || from < 0) {
    console.error('--seeds N (1..100000), --from S (>= 0)');
    return 2;
  }
  const r = runLab(count, from);
  console.log(json ? JSON.stringify(r, null, 2) : formatLab(r));
  return r.pass ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main(process.argv.slice(2));
