// Headless SG lab: build a list, compare the five strategies, evaluate the lab's checks.
//   node --import tsx labs/sg/run.ts [--json] [--junit FILE] [--pattern P] [--n N] [--total BYTES] [--seed S] [--profile cx]
// Exit 0 when every check holds, 1 when one fails, 2 for usage errors.
import fs from 'node:fs';
import { loadAddon } from '../../app/host/native.ts';
import { labChecks } from './checks.ts';
import type { SgCheckResult } from './checks.ts';
import { SG_PATTERNS } from './schema.ts';
import type { SgComparison } from './schema.ts';
import { compare, sgGenerate } from './sg.ts';

const xml = (s: string) => s.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);

export function junit(checks: SgCheckResult[]): string {
  const failed = checks.filter((c) => !c.pass).length;
  const cases = checks.map((c) => `  <testcase classname="lab.sg" name="${xml(c.id)}: ${xml(c.title)}">` +
    (c.pass ? '' : `<failure message="${xml(c.detail)}">${xml(c.why)}</failure>`) + '</testcase>');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="lab sg" tests="${checks.length}" failures="${failed}">\n${cases.join('\n')}\n</testsuite>\n`;
}

const fmt = (v: number | undefined | null, unit = '') => (v === undefined || v === null ? '-' : `${Number.isInteger(v) ? v : v.toFixed(1)}${unit}`);

export function table(c: SgComparison): string {
  const head = ['strategy', 'outcome', 'copied', 'regs', 'invs', 'keys', 'rdma ops', 'WRs', 'packets', 'dev ns', 'wall us', 'QD1 dev ns/IO', 'QD32 MB/s (wall)', 'in flight', 'MRs'];
  const lines = c.rows.map((r) => [r.strategy, r.outcome, fmt(r.perPair?.bytesCopied), fmt(r.perPair?.registrations), fmt(r.perPair?.invalidations),
    fmt(r.perPair?.keysOnWire), fmt(r.perPair?.remoteOps), fmt(r.perPair?.wrsPosted), fmt(r.perPair?.packets), fmt(r.perPair?.deviceNs),
    fmt(r.perPair ? r.perPair.wallNs / 1000 : null), fmt(r.latencyQd1?.deviceNsPerIo), fmt(r.throughputQd32 ? r.throughputQd32.bytesPerWallSecond / 1e6 : null),
    fmt(r.throughputQd32?.maxInFlight), fmt(r.mrsHeld)]);
  const w = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (l: string[]) => l.map((x, i) => x.padEnd(w[i]!)).join('  ');
  return [row(head), ...lines.map(row)].join('\n');
}

export function main(argv: string[]): number {
  const opt = (k: string, d: string) => (argv.includes(k) ? argv[argv.indexOf(k) + 1] ?? '' : d);
  const pattern = opt('--pattern', 'random');
  if (!(SG_PATTERNS as readonly string[]).includes(pattern)) { console.error(`--pattern: one of ${SG_PATTERNS.join(', ')}`); return 2; }
  const n = Number(opt('--n', '32')), total = Number(opt('--total', String(32 * 4096))), seed = Number(opt('--seed', '1'));
  const profile = opt('--profile', 'cx') as 'cx';
  if (![n, total, seed].every(Number.isInteger)) { console.error('--n, --total, --seed: integers'); return 2; }
  const addon = loadAddon();
  let list;
  try { list = sgGenerate(addon, { pattern, n, total, seed }); } catch (e) { console.error(`sg: ${(e as Error).message}`); return 2; }
  const c = compare(addon, list, { profile, seed, pattern });
  const checks = labChecks(addon, list, c);
  const junitFile = argv.includes('--junit') ? opt('--junit', '') : '';
  if (junitFile) fs.writeFileSync(junitFile, junit(checks));
  if (argv.includes('--json')) process.stdout.write(`${JSON.stringify({ lab: 'sg', comparison: c, checks })}\n`);
  else {
    console.log(`SG lab: ${c.list.elements} elements, ${c.list.bytes} bytes (${pattern}, seed ${seed}), profile ${c.profile}; ` +
      (c.check.firstBreak === null ? 'keeps the page rule' : `breaks the page rule at element ${c.check.firstBreak} (${c.check.reason})`));
    console.log(table(c));
    for (const k of checks) console.log(`${k.pass ? 'ok  ' : 'FAIL'} ${k.title}${k.pass ? '' : `: ${k.detail}`}`);
  }
  return checks.every((k) => k.pass) ? 0 : 1;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) process.exitCode = main(process.argv.slice(2));
