// `verbslab lab list` and `verbslab lab run ID|all [--json] [--junit FILE] [--pcap FILE] [--seed N]`: the labs of
// labs/ headless. Each lab runs on a fresh software-device session as its flattened scenario (app/scenario/lab.ts);
// one line (and one JUnit test case) per lab step. Exit code 0 only if every step of every lab held.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Executor } from '../host/api.ts';
import { ScenarioRun } from './run.ts';
import { LABS_DIR, labResults, listLabs, type LabStepResult } from './lab.ts';
import { inShard, parseShard, type Shard } from './shard.ts';
import { LABS } from '../protocol/labs.ts';

const USAGE = `usage:
  verbslab lab list [--json]
  verbslab lab run ID|all [--json] [--junit FILE] [--pcap FILE] [--seed N] [--shard I/N]
list: the labs of labs/ (id, title, the question each answers, its steps).
run:  runs a lab's steps headless on a fresh software-device session, in order: a step holds when every expectation
      of its commands and of its check holds. Exit code 0 only if every step of every lab held.
      --shard I/N: only the labs of shard I of N (by the hash of labs/<id>/lab.json; verbslab junit-merge joins
      the shards' --junit reports).`;

/** What a lab computes beyond its steps, headless: the module its manifest names (`headless`) exports headless()
 *  (lab 2: the interleaving explorer's verdicts). It counts toward the lab's pass. */
export interface LabAgentResult { passed: boolean; lines: string[]; result: unknown }
export interface LabRun { id: string; title: string; passed: boolean; seed: number; digest: string; steps: LabStepResult[]; failure?: string; pcap?: string; agent?: LabAgentResult }

async function headlessOf(dir: string, id: string): Promise<LabAgentResult | undefined> {
  const module = dir === LABS_DIR ? LABS.find((m) => m.id === id)?.headless : undefined;   // labs of another folder: none
  if (!module) return undefined;
  const file = path.join(dir, id, module);
  const m = await import(pathToFileURL(file).href) as { headless?: () => LabAgentResult };
  return typeof m.headless === 'function' ? m.headless() : undefined;
}

function xml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!)
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');
}
export function labJunit(runs: LabRun[]): string {
  const tests = runs.reduce((n, r) => n + r.steps.length + (r.agent ? 1 : 0), 0);
  const failures = runs.reduce((n, r) => n + r.steps.filter((s) => !s.passed).length + (r.agent && !r.agent.passed ? 1 : 0), 0);
  const out = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="verbslab labs" tests="${tests}" failures="${failures}">`];
  for (const r of runs) {
    const f = r.steps.filter((s) => !s.passed).length + (r.agent && !r.agent.passed ? 1 : 0);
    out.push(`  <testsuite name="lab ${xml(r.id)}: ${xml(r.title)}" tests="${r.steps.length + (r.agent ? 1 : 0)}" failures="${f}" errors="0" skipped="0">`);
    for (const s of r.steps) {
      out.push(`    <testcase classname="labs.${xml(r.id)}.${xml(s.section)}" name="${xml(s.id)}: ${xml(s.title)}">`);
      if (!s.passed) out.push(`      <failure message="${xml(s.failure ?? 'failed')}" type="expectation">${xml(s.failure ?? '')}</failure>`);
      out.push('    </testcase>');
    }
    if (r.agent) {
      out.push(`    <testcase classname="labs.${xml(r.id)}.headless" name="headless agent">`);
      if (!r.agent.passed) out.push(`      <failure message="headless agent" type="expectation">${xml(r.agent.lines.join('\n'))}</failure>`);
      out.push('    </testcase>');
    }
    out.push(`    <system-out>${xml(`seed ${r.seed}\ndigest ${r.digest}`)}</system-out>`, '  </testsuite>');
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}

/** Run labs (by id, or every lab) headless. */
export async function runLabs(ids: string[] | 'all', opts: { seed?: number; pcap?: string; dir?: string; factory?: (seed: number) => Executor; shard?: Shard } = {}): Promise<{ runs: LabRun[]; errors: string[] }> {
  const dir = opts.dir ?? LABS_DIR;
  const { labs: listed, errors } = listLabs(dir);
  const labs = inShard(listed, opts.shard, (l) => path.join(dir, l.lab.id, 'lab.json'));
  const factory = opts.factory ?? await (async () => { const m = await import('../host/executor.ts'); return (seed: number) => m.createExecutor({ seed }); })();
  const chosen = ids === 'all' ? labs : ids.map((id) => labs.find((l) => l.lab.id === id) ?? id);
  const runs: LabRun[] = [];
  for (const flat of chosen) {
    if (typeof flat === 'string') { errors.push(`no lab "${flat}" (labs: ${labs.map((l) => l.lab.id).join(', ') || 'none'})`); continue; }
    const seed = opts.seed ?? flat.scenario.seed;
    const ex = factory(seed);
    let pcap: string | undefined;
    try {
      const rep = new ScenarioRun(flat.scenario, ex, { seed }).run();
      if (opts.pcap) {
        pcap = chosen.length > 1 ? opts.pcap.replace(/(\.pcap)?$/, `.${flat.lab.id}.pcap`) : opts.pcap;
        fs.writeFileSync(pcap, ex.pcap());
      }
      const steps = labResults(flat, rep);
      const agent = await headlessOf(dir, flat.lab.id);
      runs.push({
        id: flat.lab.id, title: flat.lab.title, passed: steps.every((s) => s.passed) && (agent?.passed ?? true), seed, digest: rep.digest, steps,
        ...(rep.failure ? { failure: rep.failure } : {}), ...(pcap ? { pcap } : {}), ...(agent ? { agent } : {}),
      });
    } finally { ex.close(); }
  }
  return { runs, errors };
}

export async function main(argv: string[]): Promise<number> {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const err = (s: string) => process.stderr.write(`${s}\n`);
  const [sub, ...args] = argv;
  if (!sub || sub === '-h' || sub === '--help') { (sub ? out : err)(USAGE); return sub ? 0 : 2; }
  let json = false; let junit: string | undefined; let pcap: string | undefined; let seed: number | undefined; let shard: Shard | undefined;
  const ids: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const val = () => { const v = args[++i]; if (v === undefined) throw new Error(`${a} needs a value`); return v; };
    try {
      if (a === '--json') json = true;
      else if (a === '--junit') junit = val();
      else if (a === '--pcap') pcap = val();
      else if (a === '--seed') { const v = val(); if (!/^\d{1,10}$/.test(v) || Number(v) > 2 ** 32 - 1) throw new Error(`--seed: expected an integer 0..4294967295, got "${v}"`); seed = Number(v); }
      else if (a === '--shard') shard = parseShard(val());
      else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
      else ids.push(a);
    } catch (e) { err(`${(e as Error).message}\n${USAGE}`); return 2; }
  }
  if (sub === 'list') {
    const { labs, errors } = listLabs();
    for (const e of errors) err(`broken lab: ${e}`);
    if (json) out(JSON.stringify(labs.map((l) => ({ id: l.lab.id, title: l.lab.title, question: l.lab.question, steps: l.steps.map((s) => s.id) })), null, 2));
    else for (const l of labs) out(`${l.lab.id.padEnd(10)} ${l.lab.title} (${l.steps.length} steps)\n           ${l.lab.question}`);
    return errors.length ? 1 : 0;
  }
  if (sub !== 'run') { err(`unknown lab command "${sub}"\n${USAGE}`); return 2; }
  if (!ids.length) { err(`lab run: name a lab id (or all)\n${USAGE}`); return 2; }
  if (shard && !ids.includes('all')) { err(`lab run: --shard goes with all\n${USAGE}`); return 2; }
  const { runs, errors } = await runLabs(ids.includes('all') ? 'all' : ids, { seed, pcap, shard });
  for (const e of errors) err(e);
  if (junit) fs.writeFileSync(junit, labJunit(runs));
  const log = json ? err : out;
  for (const r of runs) {
    log(`${r.passed ? 'PASS' : 'FAIL'} lab ${r.id}: ${r.title} (seed ${r.seed}) digest ${r.digest}`);
    for (const s of r.steps) log(`  ${s.passed ? 'ok  ' : 'FAIL'} ${s.section}/${s.id}: ${s.title}${s.failure ? ` — ${s.failure}` : ''}`);
    if (r.agent) for (const l of r.agent.lines) log(`  ${l}`);
  }
  if (json) out(JSON.stringify({ runs, errors }, null, 2));
  return errors.length || runs.some((r) => !r.passed) ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (e) => { console.error(e); process.exit(1); });
}
