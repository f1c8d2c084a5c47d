// `verbslab run FILE|DIR...` and `verbslab export-c FILE -o OUT.c`.
// app/cli/verbslab.mjs delegates here: main(argv) gets the arguments after "verbslab" (with or without the
// leading "run"); it returns the exit code: 0 only if every expectation of every scenario held, 1 if one
// failed (or a file was refused), 2 for a usage error. Also runnable directly: npx tsx app/scenario/cli.ts run ...
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Executor } from '../host/api.ts';
import { parseScenarioText } from './load.ts';
import { ScenarioRun, type ScenarioReport } from './run.ts';
import { exportC } from './export-c.ts';
import { inShard, parseShard, type Shard } from './shard.ts';

const USAGE = `usage:
  verbslab run [--seed N] [--junit FILE] [--pcap FILE] [--json] [--keep-going] [--shard I/N] FILE|DIR...
  verbslab export-c FILE [-o OUT.c]
run: loads, validates and runs each scenario on a fresh software-device session; prints one line per scenario
     with the digest of its event log (same file + same seed => same digest); exit code 0 only if every
     expectation held. A directory means every *.json file in it (not recursive).
     --pcap FILE writes the wire capture (with several scenarios: FILE gets the scenario's name inserted).
     --shard I/N runs only the files of shard I of N (by the hash of each file's path: stable as files come and
     go); each shard's --junit report joins the others with verbslab junit-merge OUT IN...`;

export interface RunSummaryEntry {
  file: string; name: string; passed: boolean; seed: number; digest: string; stepsRun: number; stepsTotal: number;
  failedStep?: number; failure?: string; events: number; packets: number; pcap?: string;
}
export interface RunSummary { passed: number; failed: number; scenarios: RunSummaryEntry[] }

type ExecutorFactory = (seed: number) => Executor;

async function defaultFactory(): Promise<ExecutorFactory> {
  const mod = await import('../host/executor.ts');
  return (seed: number) => mod.createExecutor({ seed });
}

/** Files named on the command line; directories expand to their *.json files except the JSON Schema. */
export function expandFiles(args: string[]): string[] {
  const out: string[] = [];
  for (const a of args) {
    let st: fs.Stats | undefined;
    try { st = fs.statSync(a); } catch { out.push(a); continue; }
    if (st.isDirectory()) {
      for (const f of fs.readdirSync(a).sort()) if (f.endsWith('.json') && !f.endsWith('.schema.json')) out.push(path.join(a, f));
    } else out.push(a);
  }
  return out;
}

function xmlEscape(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!)
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');
}

export function junitXml(summary: RunSummary, reports: Map<string, ScenarioReport | undefined>): string {
  const lines = [`<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="verbslab scenarios" tests="${summary.scenarios.length}" failures="${summary.failed}">`,
    `  <testsuite name="verbslab scenarios" tests="${summary.scenarios.length}" failures="${summary.failed}" errors="0" skipped="0">`];
  for (const s of summary.scenarios) {
    const rep = reports.get(s.file);
    lines.push(`    <testcase classname="scenarios.${xmlEscape(path.basename(s.file, '.json'))}" name="${xmlEscape(s.name)}" file="${xmlEscape(s.file)}">`);
    if (!s.passed) lines.push(`      <failure message="${xmlEscape(s.failure ?? 'failed')}" type="expectation">${xmlEscape(s.failure ?? '')}</failure>`);
    const out = [`seed ${s.seed}`, `digest ${s.digest}`, `steps ${s.stepsRun}/${s.stepsTotal}, events ${s.events}, packets ${s.packets}`,
      ...(rep?.steps ?? []).map((st) => `${st.ok ? 'ok  ' : 'FAIL'} step ${st.number} ${st.cmd}${st.note ? ` — ${st.note}` : ''}${st.ok ? '' : `: ${st.failures.join('; ')}`}`)];
    lines.push(`      <system-out>${xmlEscape(out.join('\n'))}</system-out>`);
    lines.push('    </testcase>');
  }
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}

function pcapName(base: string, scenarioFile: string, many: boolean): string {
  if (!many) return base;
  const ext = path.extname(base) || '.pcap';
  return `${base.slice(0, base.length - path.extname(base).length)}.${path.basename(scenarioFile, '.json')}${ext}`;
}

/** Run scenario files; returns the summary (and writes --junit/--pcap files). */
export async function runFiles(files: string[], opts: { seed?: number; junit?: string; pcap?: string; keepGoing?: boolean; factory?: ExecutorFactory; log?: (s: string) => void } = {}): Promise<RunSummary> {
  const log = opts.log ?? (() => {});
  const factory = opts.factory ?? await defaultFactory();
  const summary: RunSummary = { passed: 0, failed: 0, scenarios: [] };
  const reports = new Map<string, ScenarioReport | undefined>();
  for (const file of files) {
    let text: string;
    let entry: RunSummaryEntry;
    try {
      const st = fs.statSync(file);
      if (st.size > 4 * 1024 * 1024 + 1) throw new Error(`too large (${st.size} bytes; the limit is ${4 * 1024 * 1024} bytes)`);
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      entry = { file, name: path.basename(file), passed: false, seed: opts.seed ?? 0, digest: '', stepsRun: 0, stepsTotal: 0, failure: `${file}: ${(e as Error).message}`, events: 0, packets: 0 };
      summary.scenarios.push(entry); summary.failed++; reports.set(file, undefined);
      log(`FAIL ${file}: ${(e as Error).message}`);
      continue;
    }
    const loaded = parseScenarioText(text, file);
    if (!loaded.ok) {
      entry = { file, name: path.basename(file), passed: false, seed: opts.seed ?? 0, digest: '', stepsRun: 0, stepsTotal: 0, failedStep: loaded.error.step, failure: loaded.error.message, events: 0, packets: 0 };
      summary.scenarios.push(entry); summary.failed++; reports.set(file, undefined);
      log(`FAIL ${file}: refused: ${loaded.error.message}`);
      continue;
    }
    const seed = opts.seed ?? loaded.scenario.seed;
    const ex = factory(seed);
    let rep: ScenarioReport;
    let pcapFile: string | undefined;
    try {
      rep = new ScenarioRun(loaded.scenario, ex, { seed, keepGoing: opts.keepGoing }).run();
      if (opts.pcap) {
        pcapFile = pcapName(opts.pcap, file, files.length > 1);
        try { fs.writeFileSync(pcapFile, ex.pcap()); } catch (e) { log(`warning: ${file}: cannot write ${pcapFile}: ${(e as Error).message}`); pcapFile = undefined; }
      }
    } finally {
      ex.close();
    }
    entry = {
      file, name: rep.name, passed: rep.passed, seed: rep.seed, digest: rep.digest, stepsRun: rep.stepsRun, stepsTotal: rep.stepsTotal,
      failedStep: rep.failedStep, failure: rep.failure, events: rep.events, packets: rep.packets, ...(pcapFile ? { pcap: pcapFile } : {}),
    };
    summary.scenarios.push(entry);
    reports.set(file, rep);
    if (rep.passed) summary.passed++; else summary.failed++;
    log(`${rep.passed ? 'PASS' : 'FAIL'} ${file} (${rep.stepsRun}/${rep.stepsTotal} steps, ${rep.events} events, ${rep.packets} packets, seed ${rep.seed}) digest ${rep.digest}`);
    if (!rep.passed) log(`     ${rep.failure}`);
  }
  if (opts.junit) fs.writeFileSync(opts.junit, junitXml(summary, reports));
  return summary;
}

export async function main(argv: string[]): Promise<number> {
  const args = [...argv];
  let sub = 'run';
  if (args[0] === 'run' || args[0] === 'export-c') sub = args.shift()!;
  if (args.includes('-h') || args.includes('--help')) { console.log(USAGE); return 0; }
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const err = (s: string) => process.stderr.write(`${s}\n`);

  if (sub === 'export-c') {
    let outFile: string | undefined;
    const files: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a === '-o' || a === '--output') { outFile = args[++i]; if (!outFile) { err(`-o needs a file name\n${USAGE}`); return 2; } }
      else if (a.startsWith('-')) { err(`unknown option ${a}\n${USAGE}`); return 2; }
      else files.push(a);
    }
    if (files.length !== 1) { err(`export-c takes exactly one scenario file\n${USAGE}`); return 2; }
    let text: string;
    try { text = fs.readFileSync(files[0]!, 'utf8'); } catch (e) { err(`${files[0]}: ${(e as Error).message}`); return 1; }
    const loaded = parseScenarioText(text, files[0]);
    if (!loaded.ok) { err(`refused: ${loaded.error.message}`); return 1; }
    const c = exportC(loaded.scenario, { source: files[0] });
    if (outFile) fs.writeFileSync(outFile, c); else process.stdout.write(c);
    return 0;
  }

  const opts: { seed?: number; junit?: string; pcap?: string; keepGoing?: boolean } = {};
  let json = false;
  let shard: Shard | undefined;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const val = () => { const v = args[++i]; if (v === undefined) throw new Error(`${a} needs a value`); return v; };
    try {
      if (a === '--seed') {
        const v = val();
        if (!/^\d{1,10}$/.test(v) || Number(v) > 2 ** 32 - 1) throw new Error(`--seed: expected an integer 0..4294967295, got "${v}"`);
        opts.seed = Number(v);
      } else if (a === '--junit') opts.junit = val();
      else if (a === '--pcap') opts.pcap = val();
      else if (a === '--json') json = true;
      else if (a === '--keep-going') opts.keepGoing = true;
      else if (a === '--shard') shard = parseShard(val());
      else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
      else files.push(a);
    } catch (e) { err(`${(e as Error).message}\n${USAGE}`); return 2; }
  }
  if (!files.length) { err(`no scenario files\n${USAGE}`); return 2; }
  const all = expandFiles(files);
  if (!all.length) { err(`no scenario files (*.json) in ${files.join(' ')}`); return 2; }
  const expanded = inShard(all, shard, (f) => f);   // a shard may be empty: 0 passed, 0 failed
  let summary: RunSummary;
  try {
    summary = await runFiles(expanded, { ...opts, log: json ? err : out });
  } catch (e) {
    err(`verbslab run: ${(e as Error).message}`);
    return 1;
  }
  if (json) out(JSON.stringify(summary, null, 2));
  else out(`${summary.passed} passed, ${summary.failed} failed`);
  return summary.failed === 0 ? 0 : 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (e) => { console.error(e); process.exit(1); });
}
