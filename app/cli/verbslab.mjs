#!/usr/bin/env node
// verbslab: command-line entry.
//   verbslab devices            software device profiles, and real RDMA devices (or "none found")
//   verbslab bench [--json] [--no-ui] [--runs N]  native figures (build/native/vl_bench, built if needed) and the console's
//                               figures in headless Chromium (e2e/console-perf.spec.ts); one JSON object with --json
//   verbslab run ...            scenarios, headless (app/scenario/cli.ts)
//   verbslab export-c ...       scenario -> C (app/scenario/cli.ts)
//   verbslab pingpong [HOST]    ibv_rc_pingpong on the software device over UDP (native/tools/vl_pingpong.cpp)
//   verbslab exec -- PROG ARGS  an unmodified libibverbs program on the software device (native/libibverbs)
// TypeScript modules are loaded through tsx's API (tsx is a dependency).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { medianOfRuns } from './bench-median.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const USAGE = `usage: verbslab <command>
  devices            list the software device profiles and the real RDMA devices
  bench [--json] [--no-ui] [--runs N]
                     run the benchmarks: native device (vl_bench) and the console in headless Chromium;
                     --runs N: the native figures are the median of N runs, with their spread
  run ...            run scenario files headless (verbslab run --help)
  lab list|run ...   the guided labs of labs/, headless (verbslab lab --help)
  export-c ...       export a scenario as a C program using libibverbs
  junit-merge OUT IN...
                     one JUnit report from the --junit reports of the shards of a run (--shard I/N)
  pingpong [HOST]    ibv_rc_pingpong on the software device over UDP (server without HOST; -h for options)
  exec [OPTIONS] -- PROGRAM [ARGS]
                     run an unmodified libibverbs program on the software device (verbslab exec --help)`;

async function ts(rel) {
  const { tsImport } = await import('tsx/esm/api');
  return tsImport(pathToFileURL(path.join(root, rel)).href, import.meta.url);
}

async function devices(args) {
  const json = args.includes('--json');
  const { NativeExecutor } = await ts('app/host/executor.ts');
  const ex = new NativeExecutor({ seed: 1 });
  const profiles = ex.addon.Session.profiles();
  const rd = ex.real;   // libibverbs' devices (VERBSLAB_LIBIBVERBS: that library's), completed with sysfs
  const real = rd.devices;
  ex.close();
  if (json) { console.log(JSON.stringify({ profiles, real, libibverbs: rd.libibverbs, ...(rd.error ? { error: rd.error } : {}) }, null, 2)); return 0; }
  console.log('Software RDMA device (embedded) — profiles:');
  for (const p of profiles) console.log(`  ${p.name.padEnd(8)} ${p.transport.padEnd(7)} ${p.description}`);
  console.log(`Real RDMA devices (${rd.libibverbs ? 'libibverbs' : 'libibverbs not installed; /sys/class/infiniband'}):`);
  if (!real.length) console.log('  none found');
  for (const d of real) console.log(`  ${d.name}  ${d.nodeType ?? ''}  guid ${d.guid ?? d.nodeGuid ?? '?'}  ports: ${d.ports.map((p) => `${p.port} ${p.state ?? '?'} ${p.linkLayer ?? ''}`.trim()).join(', ') || 'none'}`);
  if (rd.error) console.log(`  (libibverbs: ${rd.error})`);
  for (const d of real) if (d.software) console.log(`  (${d.name}: ${d.note})`);
  console.log(`libibverbs runtime: ${rd.libibverbs ? 'installed' : 'not installed'}; the console opens a real device from Devices (docs/real-devices.md)`);
  return 0;
}

async function bench(args) {
  const json = args.includes('--json');
  const noUi = args.includes('--no-ui');
  const srcDir = path.join(root, 'native', 'bench');
  const hasSrc = fs.existsSync(srcDir) && fs.readdirSync(srcDir).some((f) => f.endsWith('.cpp'));
  if (!hasSrc) { console.error('verbslab bench: not built yet (native/bench has no benchmarks yet)'); return 2; }
  const mod = await import(pathToFileURL(path.join(root, 'scripts', 'build.mjs')).href);
  // build progress goes to stderr: with --json, stdout carries exactly one JSON object
  const quiet = (fn) => async () => { const log = console.log; console.log = console.error; try { return await fn(); } finally { console.log = log; } };
  const build = { buildBench: quiet(mod.buildBench), buildAddon: quiet(mod.buildAddon), buildRenderer: quiet(mod.buildRenderer) };
  try { await build.buildBench(); } catch (e) { console.error(`verbslab bench: build failed: ${e.message}`); return 1; }
  const bin = path.join(root, 'build', 'native', 'vl_bench');
  const runsAt = args.indexOf('--runs');
  const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 1;
  if (!Number.isInteger(runs) || runs < 1 || runs > 99) { console.error('verbslab bench: --runs takes a whole number from 1 to 99'); return 2; }
  const passArgs = args.filter((a, i) => a !== '--json' && a !== '--no-ui' && i !== runsAt && i !== runsAt + 1);
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(bin, ['--json', ...passArgs], { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status !== 0) { console.error(`verbslab bench: vl_bench exited with ${r.status ?? r.signal}`); return 1; }
    try { samples.push(JSON.parse(r.stdout)); } catch { process.stdout.write(r.stdout); return json ? 1 : 0; }
    if (runs > 1) console.error(`verbslab bench: native run ${i + 1}/${runs} done`);
  }
  const data = medianOfRuns(samples);
  Object.assign(data, await labBenches(build));
  if (!noUi) Object.assign(data, await uiBench(build));
  if (json) { process.stdout.write(`${JSON.stringify(data)}\n`); return 0; }
  printFigures(data, '');
  return 0;
}

// The labs' figures: each lab manifest's `bench` module (labs/<id>/index.ts) exporting bench() (one object of keys),
// run through the addon.
async function labBenches(build) {
  const out = {};
  const { LAB_MANIFESTS } = await ts(path.join('labs', 'index.generated.ts'));
  const benches = LAB_MANIFESTS.filter((m) => m.bench);
  if (!benches.length) return out;
  try { await build.buildAddon(); } catch (e) { return { labs: { skipped: `addon build failed: ${e.message}` } }; }
  for (const { id, bench } of benches) {
    // one lab's failure is reported under its id and does not take the other figures with it
    try {
      const m = await ts(path.join('labs', id, bench));
      if (typeof m.bench === 'function') Object.assign(out, await m.bench());
    } catch (e) { out[id] = { skipped: `lab ${id} bench failed: ${e.message}` }; }
  }
  return out;
}

// The console's figures (issue 4): e2e/console-perf.spec.ts in headless Chromium against the browser-mode server,
// run by Playwright; its progress goes to stderr so that --json stays one object on stdout.
async function uiBench(build) {
  const { findChromium, freePort } = await import(pathToFileURL(path.join(root, 'scripts', 'browser.mjs')).href);
  const chromium = findChromium();
  const skipped = (why) => ({ ui_fps_at_1M_events_per_s: null, ui_event_to_screen_p99_ms: null, ui_longest_task_ms: null, ui: { skipped: why } });
  if (!chromium) return skipped('no Chromium found (install Debian\'s chromium or set CHROMIUM_PATH); --no-ui skips this part');
  try { await build.buildAddon(); await build.buildRenderer(); } catch (e) { return skipped(`build failed: ${e.message}`); }
  const out = path.join(root, 'build', 'ui-bench.json');
  fs.rmSync(out, { force: true });
  console.error('verbslab bench: UI benchmark (Playwright, headless Chromium; e2e/console-perf.spec.ts) ...');
  const r = spawnSync(process.execPath, [path.join(root, 'node_modules', '@playwright', 'test', 'cli.js'), 'test', 'e2e/console-perf.spec.ts', '--reporter=line'], {
    cwd: root, encoding: 'utf8', stdio: ['ignore', 2, 2],
    env: { ...process.env, VL_UI_BENCH: '1', VL_UI_BENCH_OUT: out, CHROMIUM_PATH: chromium, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1', VERBSLAB_E2E_PORT: String(await freePort()) },
  });
  if (!fs.existsSync(out)) return skipped(`the UI benchmark produced no figures (Playwright exit ${r.status ?? r.signal})`);
  const ui = JSON.parse(fs.readFileSync(out, 'utf8'));
  const { ui_fps_at_1M_events_per_s: fps, ui_event_to_screen_p99_ms: p99, ui_longest_task_ms: longest, ...rest } = ui;
  return { ui_fps_at_1M_events_per_s: round(fps, 1), ui_event_to_screen_p99_ms: round(p99, 1), ui_longest_task_ms: round(longest, 1), ui: rest };
}

const round = (v, d) => (typeof v === 'number' ? Number(v.toFixed(d)) : v);

function printFigures(v, indent) {
  if (Array.isArray(v)) { v.forEach((x, i) => { console.log(`${indent}[${i}]`); printFigures(x, indent + '  '); }); return; }
  if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (x && typeof x === 'object') { console.log(`${indent}${k}:`); printFigures(x, indent + '  '); }
      else console.log(`${indent}${k}: ${x}`);
    }
    return;
  }
  console.log(`${indent}${v}`);
}

async function scenario(argv) {
  if (!fs.existsSync(path.join(root, 'app', 'scenario', 'cli.ts'))) {
    console.error('verbslab run: not built yet (app/scenario/cli.ts is missing)');
    return 2;
  }
  const mod = await ts('app/scenario/cli.ts');
  return mod.main(argv);
}

async function main() {
  const [cmd, ...rest] = process.argv.slice(2);
  switch (cmd) {
    case 'devices': return devices(rest);
    case 'bench': return bench(rest);
    case 'run': return scenario(['run', ...rest]);
    case 'export-c': return scenario(['export-c', ...rest]);
    case 'lab': return (await ts('app/scenario/lab-cli.ts')).main(rest);
    case 'junit-merge': {
      if (rest.length < 2) { console.error('usage: verbslab junit-merge OUT IN...'); return 2; }
      (await ts('app/scenario/shard.ts')).mergeJunitFiles(rest[0], rest.slice(1));
      return 0;
    }
    case 'pingpong': return (await ts('app/cli/pingpong.ts')).main(rest);
    case 'exec': return (await ts('app/cli/exec.ts')).main(rest);
    case undefined: case '-h': case '--help': case 'help': console.log(USAGE); return cmd ? 0 : 2;
    default: console.error(`unknown command "${cmd}"\n${USAGE}`); return 2;
  }
}

main().then((code) => { process.exitCode = code; }, (e) => { console.error(`verbslab: ${e?.message ?? e}`); process.exitCode = 1; });
