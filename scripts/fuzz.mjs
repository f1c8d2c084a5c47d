#!/usr/bin/env node
// The libFuzzer targets (fuzz/*.cpp, clang, ASan + UBSan): build, then run each for a while over its checked-in
// seed corpus (fuzz/corpus/<name>) and a working corpus (build/fuzz-corpus/<name>, kept between runs by hand).
//   npm run fuzz -- --minutes N          every target for N minutes each (default 1)
//   npm run fuzz -- --seconds S --fresh  S seconds each on a fresh working corpus (npm test's short run)
//   options: --target NAME (one target), --json (one JSON object on stdout), --jobs J (libFuzzer -fork=J)
// A crash, leak, timeout or invariant violation stops that target; the input is saved under
// build/fuzz-artifacts/ and the run fails. Prints executions, coverage (libFuzzer's cov / ft counters) and corpus
// size per target.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFuzz } from './build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const arg = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const seconds = arg('--seconds') !== undefined ? Number(arg('--seconds')) : 60 * Number(arg('--minutes') ?? 1);
const json = argv.includes('--json');
const fresh = argv.includes('--fresh');
const only = arg('--target');
const jobs = Number(arg('--jobs') ?? 0);
if (!(seconds > 0)) { console.error('--minutes / --seconds: expected a positive number'); process.exit(2); }
const say = (l) => { if (!json) console.log(l); else console.error(l); };

let bins;
try {
  say('building the fuzz targets (clang, -fsanitize=fuzzer,address,undefined)…');
  bins = await buildFuzz();
} catch (e) {
  console.error(`fuzz build failed: ${e.message} (needs clang and libclang-rt-dev: apt-get install clang libclang-rt-14-dev)`);
  process.exit(1);
}

function runTarget(bin) {
  const name = path.basename(bin).replace(/^vl_fuzz_/, '');
  const seeds = path.join(root, 'fuzz', 'corpus', name);
  const work = fresh ? fs.mkdtempSync(path.join(os.tmpdir(), `vl-fuzz-${name}-`)) : path.join(root, 'build', 'fuzz-corpus', name);
  const artifacts = path.join(root, 'build', 'fuzz-artifacts') + path.sep;
  fs.mkdirSync(work, { recursive: true });
  fs.mkdirSync(artifacts, { recursive: true });
  const args = [`-max_total_time=${Math.round(seconds)}`, '-print_final_stats=1', '-timeout=10', '-rss_limit_mb=2048',
    '-max_len=8192', `-artifact_prefix=${artifacts}${name}-`, ...(jobs > 0 ? [`-fork=${jobs}`] : []), work, ...(fs.existsSync(seeds) ? [seeds] : [])];
  say(`fuzzing ${name} for ${Math.round(seconds)} s (seeds ${path.relative(root, seeds)}, corpus ${fresh ? 'fresh' : path.relative(root, work)})`);
  return new Promise((resolve) => {
    const c = spawn(bin, args, {
      cwd: root, stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=1:symbolize=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
    });
    let log = '';
    const keep = (d) => { log += d; if (log.length > 1 << 20) log = log.slice(-(1 << 19)); };
    c.stdout.on('data', keep);
    c.stderr.on('data', keep);
    c.on('close', (code, signal) => {
      const stat = (k) => { const m = new RegExp(`stat::${k}:\\s*(\\d+)`).exec(log); return m ? Number(m[1]) : null; };
      const done = [...log.matchAll(/#(\d+)\s+(?:DONE|pulse|NEW|REDUCE|INITED)\s+cov: (\d+) ft: (\d+) corp: (\d+)/g)].pop();
      const crash = code !== 0 || signal !== null;
      const artifact = /Test unit written to (\S+)/.exec(log)?.[1] ?? null;
      const r = {
        target: name, seconds: Math.round(seconds), ok: !crash,
        executions: stat('number_of_executed_units') ?? (done ? Number(done[1]) : null),
        execPerSec: stat('average_exec_per_sec'),
        coverage: done ? Number(done[2]) : null, features: done ? Number(done[3]) : null, corpus: done ? Number(done[4]) : null,
        peakRssMb: stat('peak_rss_mb'),
        ...(crash ? { exit: signal ?? code, artifact, error: (/(==\d+==ERROR.*|INVARIANT BROKEN.*|runtime error.*|ERROR: libFuzzer.*)/.exec(log)?.[1] ?? log.slice(-2000)) } : {}),
      };
      if (fresh) fs.rmSync(work, { recursive: true, force: true });
      if (crash && !json) console.log(log.slice(-6000));
      resolve(r);
    });
  });
}

const results = [];
for (const bin of bins.filter((b) => !only || path.basename(b) === `vl_fuzz_${only}`)) results.push(await runTarget(bin));
if (json) console.log(JSON.stringify({ seconds: Math.round(seconds), targets: results }, null, 2));
else {
  for (const r of results) {
    console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.target}: ${r.executions ?? '?'} executions in ${r.seconds} s (${r.execPerSec ?? '?'}/s), ` +
      `cov ${r.coverage ?? '?'} ft ${r.features ?? '?'}, corpus ${r.corpus ?? '?'}, peak RSS ${r.peakRssMb ?? '?'} MB${r.ok ? '' : ` — ${r.error} (input: ${r.artifact})`}`);
  }
}
process.exit(results.every((r) => r.ok) && results.length ? 0 : 1);
