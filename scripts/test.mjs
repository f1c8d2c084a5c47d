#!/usr/bin/env node
// npm test: installs what is missing, then runs every suite and ends with one line "N passed, N failed, N skipped"
// (a skip outside scripts/skips.mjs counts as a failure).
//   (a) C++ unit tests (gtest, release)   (b) the same under ASan+UBSan   (c) tsc (main + Electron configs)
//   (d) vitest (app/**, renderer/** *.test.ts)   (e) scenarios (scenarios/*.json, labs/*/scenarios/*.json)
//   (f) Playwright e2e   (g) fuzz: each libFuzzer target (fuzz/*.cpp, clang, ASan + UBSan) for a few seconds over its
//   seed corpus   (h) labs (every lab of labs/ headless: verbslab lab run all)
//   (i) soak: 30 s of the chaos soak (native/tools/vl_soak.cpp; `npm run soak -- --minutes N` by hand)
//   (j) libibverbs: unmodified ibverbs-utils / perftest / rdmacm-utils programs under `verbslab exec` (scripts/libibverbs-test.mjs)
//   (k) interop: a short subset of `npm run interop` against the Linux kernel's Soft-RoCE in qemu (scripts/interop,
//       docs/interop.md; root only: it makes a network namespace and a tap device)
// Options: --only a,b,...  (suite letters or names: cpp, asan, tsc, vitest, scenarios, e2e, fuzz, labs, soak, libibverbs, interop)
//          -- FILES...      (vitest: only these test files)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findChromium, freePort } from './browser.mjs';
import { gtestSkipped, judgeSkips, playwrightSkipped, vitestSkipped } from './skips.mjs';
import { missingHostPackages as interopMissing } from './interop/cache.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const results = process.env.VL_TEST_RESULTS || path.join(root, 'build', 'test-results');
fs.mkdirSync(results, { recursive: true });
const argv = process.argv.slice(2);
const vitestFiles = argv.includes('--') ? argv.slice(argv.indexOf('--') + 1) : [];
const onlyArg = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] ?? '' : '';
const SUITES = { a: 'cpp', b: 'asan', c: 'tsc', d: 'vitest', e: 'scenarios', f: 'e2e', g: 'fuzz', h: 'labs', i: 'soak', j: 'libibverbs', k: 'interop' };
const only = new Set(onlyArg.split(',').filter(Boolean).map((s) => SUITES[s] ?? s));
const want = (name) => only.size === 0 || only.has(name);
const t0 = Date.now();

const have = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const isRoot = process.getuid?.() === 0;
/** clang's libFuzzer runtime (Debian: libclang-rt-N-dev) under /usr/lib/llvm-N */
function haveFuzzerRuntime() {
  try {
    return fs.readdirSync('/usr/lib').filter((d) => d.startsWith('llvm-')).some((d) => {
      const base = `/usr/lib/${d}/lib/clang`;
      return fs.existsSync(base) && fs.readdirSync(base).some((v) => fs.existsSync(`${base}/${v}/lib/linux`) && fs.readdirSync(`${base}/${v}/lib/linux`).some((f) => f.startsWith('libclang_rt.fuzzer-')));
    });
  } catch { return false; }
}

function sh(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], ...opts });
    let out = '';
    c.stdout?.on('data', (d) => { out += d; if (opts.echo) process.stdout.write(d); });
    c.on('error', (e) => resolve({ code: 127, signal: null, out, error: e }));
    c.on('exit', (code, signal) => resolve({ code, signal, out }));
  });
}

// ------------------------------------------------------------------ 1. prerequisites
function step(msg) { console.log(`\n== ${msg}`); }

if (!fs.existsSync(path.join(root, 'node_modules', 'vitest')) || !fs.existsSync(path.join(root, 'node_modules', '@playwright', 'test'))) {
  step('installing npm dependencies (ELECTRON_SKIP_BINARY_DOWNLOAD=1, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1)');
  const useCi = fs.existsSync(path.join(root, 'package-lock.json'));
  const r = spawnSync('npm', [useCi ? 'ci' : 'install', '--no-audit', '--no-fund'], {
    cwd: root, stdio: 'inherit', env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1', PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
  });
  if (r.status !== 0) { console.error('npm install failed'); process.exit(1); }
}

const needE2e = want('e2e');
const needCpp = want('cpp') || want('asan');
const needFuzz = want('fuzz');
const missing = [];
if (needE2e && !findChromium()) missing.push('chromium');
if (needCpp && !(fs.existsSync('/usr/include/gtest/gtest.h') && ['/usr/lib/x86_64-linux-gnu/libgtest.a', '/usr/lib/aarch64-linux-gnu/libgtest.a', '/usr/lib/libgtest.a', '/usr/local/lib/libgtest.a'].some((p) => fs.existsSync(p)))) missing.push('libgtest-dev');
if ((needCpp || want('vitest')) && !fs.existsSync('/usr/include/infiniband/verbs.h')) missing.push('libibverbs-dev');   // vitest: export-c, realdev
if ((needCpp || want('vitest')) && !have('tshark')) missing.push('tshark');   // vitest: app/scenario/tshark-icrc.test.ts
if (needFuzz && !have('clang++')) missing.push('clang');
if (needFuzz && !haveFuzzerRuntime()) missing.push('libclang-rt-14-dev');
if (want('libibverbs')) {
  if (!fs.existsSync('/usr/include/infiniband/verbs.h') && !missing.includes('libibverbs-dev')) missing.push('libibverbs-dev');
  if (!have('ib_write_bw')) missing.push('perftest');
  if (!fs.existsSync('/usr/include/rdma/rdma_cma.h')) missing.push('librdmacm-dev');   // the librdmacm self-test
  if (!have('rping')) missing.push('rdmacm-utils');
}
if ((want('libibverbs') || needE2e) && !have('ibv_rc_pingpong')) missing.push('ibverbs-utils');   // e2e: live-attach.spec.ts
if (want('interop') && isRoot) for (const p of interopMissing()) if (!missing.includes(p)) missing.push(p);
if (missing.length) {
  if (isRoot && have('apt-get')) {
    step(`installing Debian packages: ${missing.join(' ')} (apt-get update; apt-get install -y)`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    let r = spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
    if (r.status === 0) r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
    if (r.status !== 0) { console.error(`apt-get install ${missing.join(' ')} failed`); process.exit(1); }
  } else {
    console.error(`missing: ${missing.join(', ')}.`);
    console.error(`Install them with: sudo apt-get update && sudo apt-get install -y ${missing.join(' ')}`);
    if (missing.includes('chromium')) console.error('(or point CHROMIUM_PATH at a Chromium/Chrome binary)');
    process.exit(1);
  }
}
const chromium = needE2e ? findChromium() : null;
if (needE2e && !chromium) { console.error('Chromium still not found: set CHROMIUM_PATH'); process.exit(1); }

// ------------------------------------------------------------------ 2. suites
const summary = [];
function record(name, passed, failed, note = '', skipped = 0) {
  summary.push({ name, passed, failed, note, skipped });
  console.log(`-- ${name}: ${passed} passed, ${failed} failed, ${skipped} skipped${note ? ` (${note})` : ''}`);
}
/** record a suite with its skipped tests (ids); a skip outside scripts/skips.mjs is one more failure */
function recordSkips(name, suite, passed, failed, ids, note = '') {
  const { allowed, unexpected } = judgeSkips(suite, ids);
  for (const a of allowed) console.log(`   skip ${a.id}: ${a.reason}`);
  for (const id of unexpected) console.log(`   FAIL skipped without an allowed reason (scripts/skips.mjs): ${id}`);
  record(name, passed, failed + unexpected.length, [note, unexpected.length ? `${unexpected.length} skip(s) not allowed` : ''].filter(Boolean).join(', '), ids.length);
}

/** Count a gtest JSON report; a crash without a report counts as one failure. */
function gtestCounts(file) {
  if (!fs.existsSync(file)) return null;
  let data;
  try { data = JSON.parse(fs.readFileSync(file, 'utf8')); } catch { return null; }
  const skipped = gtestSkipped(data);
  let passed = 0, failed = 0;
  for (const suite of data.testsuites ?? []) for (const t of suite.testsuite ?? []) if (t.failures?.length) failed++; else passed++;
  return { passed: passed - skipped.length, failed, skipped };
}

async function gtestSuite(name, profile, bin, env = {}) {
  step(`${name}: building (${profile})`);
  const b = await sh(process.execPath, ['scripts/build.mjs', profile === 'release' ? 'tests' : 'asan']);
  if (b.code !== 0) { record(name, 0, 1, 'build failed'); return; }
  const out = path.join(results, `gtest-${profile}.json`);
  fs.rmSync(out, { force: true });
  step(`${name}: running ${path.relative(root, bin)}`);
  const r = await sh(bin, [`--gtest_output=json:${out}`, '--gtest_brief=1'], { env: { ...process.env, ...env } });
  const c = gtestCounts(out);
  if (!c) { record(name, 0, 1, `no report: exited ${r.signal ?? r.code}`); return; }
  // a crash after the report (e.g. a sanitizer failure at exit) is one more failure
  const extra = r.code !== 0 && c.failed === 0 ? 1 : 0;
  recordSkips(name, 'cpp', c.passed, c.failed + extra, c.skipped, extra ? `exit ${r.signal ?? r.code} after the tests` : '');
}

if (want('cpp')) await gtestSuite('C++ unit tests (gtest)', 'release', path.join(root, 'build', 'native', 'vl_tests'));
if (want('asan')) {
  await gtestSuite('C++ unit tests under ASan+UBSan', 'asan', path.join(root, 'build', 'native-asan', 'vl_tests'), {
    ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0:halt_on_error=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
  });
}

if (want('tsc')) {
  for (const [label, project] of [['tsc (tsconfig.json)', 'tsconfig.json'], ['tsc (app/electron)', 'app/electron/tsconfig.json']]) {
    step(label);
    const r = await sh(process.execPath, ['node_modules/typescript/bin/tsc', '-p', project, '--noEmit']);
    record(label, r.code === 0 ? 1 : 0, r.code === 0 ? 0 : 1);
  }
}

if (want('vitest')) {
  step('vitest (app/**, renderer/** *.test.ts)');
  const ba = await sh(process.execPath, ['scripts/build.mjs', 'addon']);   // host tests run the real native session
  if (ba.code !== 0) console.log('   (addon build failed: tests that need it will fail)');
  const out = path.join(results, 'vitest.json');
  fs.rmSync(out, { force: true });
  const r = await sh(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--root', '.', '--dir', '.', '--reporter=default', '--reporter=json', `--outputFile.json=${out}`, ...vitestFiles]);
  if (fs.existsSync(out)) {
    const j = JSON.parse(fs.readFileSync(out, 'utf8'));
    const failedFiles = (j.testResults ?? []).filter((f) => f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed')).length;
    recordSkips('vitest', 'vitest', j.numPassedTests ?? 0, (j.numFailedTests ?? 0) + failedFiles, vitestSkipped(j, root), failedFiles ? `${failedFiles} file(s) failed to load` : '');
  } else record('vitest', 0, 1, `no report (exit ${r.code})`);
}

if (want('scenarios')) {
  // the general library and each lab's recorded scenarios (the runner takes directories)
  const labsDir = path.join(root, 'labs');
  const dirs = ['scenarios', ...(fs.existsSync(labsDir) ? fs.readdirSync(labsDir).sort().map((id) => path.join('labs', id, 'scenarios')) : [])]
    .filter((d) => fs.existsSync(path.join(root, d)));
  const count = dirs.reduce((n, d) => n + fs.readdirSync(path.join(root, d)).filter((f) => f.endsWith('.json') && !f.endsWith('.schema.json')).length, 0);
  if (count && fs.existsSync(path.join(root, 'app', 'scenario', 'cli.ts'))) {
    step(`scenarios (${count} in ${dirs.join(', ')})`);
    await sh(process.execPath, ['scripts/build.mjs', 'addon']);
    const r = await sh(process.execPath, ['app/cli/verbslab.mjs', 'run', '--json', ...dirs], { stdio: ['ignore', 'pipe', 'inherit'] });
    let s = null;
    try { s = JSON.parse(r.out); } catch { /* not JSON */ }
    if (s && typeof s.passed === 'number') {
      for (const sc of s.scenarios ?? []) console.log(`   ${sc.passed ? 'PASS' : 'FAIL'} ${sc.file}${sc.passed ? '' : `: ${sc.failure}`}`);
      record('scenarios', s.passed, s.failed);
    } else record('scenarios', 0, 1, `no JSON summary (exit ${r.code})`);
  } else {
    console.log('\n== scenarios: none registered (scenarios/*.json with app/scenario/cli.ts)');
  }
}

if (want('labs')) {
  const labsDir = path.join(root, 'labs');
  const ids = fs.existsSync(labsDir) ? fs.readdirSync(labsDir).filter((id) => fs.existsSync(path.join(labsDir, id, 'lab.json'))) : [];
  if (ids.length) {
    step(`labs (${ids.join(', ')}: every step headless)`);
    await sh(process.execPath, ['scripts/build.mjs', 'addon']);
    const r = await sh(process.execPath, ['app/cli/verbslab.mjs', 'lab', 'run', 'all', '--json', '--junit', path.join(results, 'labs.xml')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let s = null;
    try { s = JSON.parse(r.out); } catch { /* not JSON */ }
    if (s && Array.isArray(s.runs)) {
      const steps = s.runs.flatMap((x) => x.steps.map((st) => ({ ...st, lab: x.id })));
      for (const st of steps) if (!st.passed) console.log(`   FAIL ${st.lab}/${st.id}: ${st.failure}`);
      record('labs', steps.filter((st) => st.passed).length, steps.filter((st) => !st.passed).length + s.errors.length, s.errors.join('; '));
    } else record('labs', 0, 1, `no JSON summary (exit ${r.code})`);
  } else console.log('\n== labs: none (labs/<id>/lab.json)');
}

if (want('e2e')) {
  step('Playwright e2e (browser mode, headless Chromium)');
  const b1 = await sh(process.execPath, ['scripts/build.mjs', 'addon']);
  const b2 = b1.code === 0 ? await sh(process.execPath, ['scripts/build.mjs', 'renderer']) : b1;
  if (b2.code === 0) await sh(process.execPath, ['scripts/build.mjs', 'libibverbs']);   // live-attach.spec.ts (fails, not skips, without it)
  if (b1.code !== 0 || b2.code !== 0) record('Playwright e2e', 0, 1, 'build failed');
  else {
    const out = path.join(results, 'playwright.json');
    fs.rmSync(out, { force: true });
    const env = {
      ...process.env, CHROMIUM_PATH: chromium, PLAYWRIGHT_JSON_OUTPUT_NAME: out, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
      VERBSLAB_E2E_PORT: String(await freePort()),
    };
    const r = await sh(process.execPath, ['node_modules/@playwright/test/cli.js', 'test', '--reporter=list,json'], { env });
    if (fs.existsSync(out)) {
      const rep = JSON.parse(fs.readFileSync(out, 'utf8'));
      const st = rep.stats ?? {};
      const failed = (st.unexpected ?? 0) + (st.flaky ?? 0);
      const errs = rep.errors ?? [];
      recordSkips('Playwright e2e', 'e2e', st.expected ?? 0, failed + (errs.length && !failed ? 1 : 0), playwrightSkipped(rep), [st.flaky ? `${st.flaky} flaky counted as failed` : '', errs.length ? `${errs.length} global error(s)` : ''].filter(Boolean).join(', '));
    } else record('Playwright e2e', 0, 1, `no report (exit ${r.code})`);
  }
}

if (want('fuzz')) {
  // seconds-long: a smoke run over the checked-in seeds (the long run is `npm run fuzz -- --minutes N`)
  const secs = Number(process.env.VL_FUZZ_SECONDS ?? 15);
  step(`fuzz (each target ${secs} s, ASan + UBSan)`);
  const r = await sh(process.execPath, ['scripts/fuzz.mjs', '--seconds', String(secs), '--fresh', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let s = null;
  // the summary is the last top-level JSON object on stdout (a first build prints its progress before it)
  const at = r.out.lastIndexOf('\n{\n');
  try { s = JSON.parse(at >= 0 ? r.out.slice(at + 1) : r.out); } catch { /* not JSON */ }
  if (s && Array.isArray(s.targets) && s.targets.length) {
    for (const t of s.targets) console.log(`   ${t.ok ? 'ok  ' : 'FAIL'} ${t.target}: ${t.executions} executions, cov ${t.coverage}, corpus ${t.corpus}${t.ok ? '' : ` — ${t.error} (input ${t.artifact})`}`);
    record('fuzz', s.targets.filter((t) => t.ok).length, s.targets.filter((t) => !t.ok).length);
  } else record('fuzz', 0, 1, `no JSON summary (exit ${r.code})`);
}

if (want('soak')) {
  const secs = Number(process.env.VL_SOAK_SECONDS ?? 30);
  step(`soak (${secs} s: two devices over UDP on loopback, faults and corrupted datagrams)`);
  const r = await sh(process.execPath, ['scripts/soak.mjs', '--seconds', String(secs), '--json', '--seed', '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let s = null;
  try { s = JSON.parse(r.out.trim().split('\n').pop() ?? ''); } catch { /* not JSON */ }
  if (r.code === 0 && s) {
    console.log(`   ${s.ops} ops, ${(s.bytes / 1e6).toFixed(1)} MB verified, 0 lost; injected ${s.injected.loss} losses, ${s.injected.duplicate} duplicates, ${s.injected.corrupted} corrupted (${s.b_dropped.bad_icrc} dropped on the ICRC)`);
    record('soak', 1, 0);
  } else record('soak', 0, 1, `exit ${r.code}`);
}

if (want('libibverbs')) {
  step('libibverbs: unmodified programs under verbslab exec (loopback RoCEv2/UDP)');
  const r = await sh(process.execPath, ['scripts/libibverbs-test.mjs', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let s = null;
  try { s = JSON.parse(r.out.trim().split('\n').pop()); } catch { /* not JSON */ }
  if (s && typeof s.passed === 'number') {
    for (const c of s.cases) {
      console.log(`   ${c.ok ? 'PASS' : 'FAIL'} ${c.name.padEnd(20)} ${c.detail}`);
      if (!c.ok && c.output) console.log(c.output.split('\n').map((l) => `     | ${l}`).join('\n'));
    }
    record('libibverbs (verbslab exec)', s.passed, s.failed);
  } else record('libibverbs (verbslab exec)', 0, 1, `no JSON summary (exit ${r.code})`);
}

if (want('interop')) {
  // root only (ip netns, a tap device); the whole matrix is `npm run interop`
  if (!isRoot) {
    console.log('\n== interop: skipped (needs root: it creates a network namespace and a tap device; run `sudo npm run interop`)');
  } else {
    step('interop: kernel Soft-RoCE in qemu <-> verbslab exec (subset; the whole matrix is npm run interop)');
    const b = await sh(process.execPath, ['scripts/build.mjs', 'libibverbs']);
    if (b.code !== 0) record('interop (kernel rxe in qemu)', 0, 1, 'build failed');
    else {
      const r = await sh(process.execPath, ['scripts/interop/run.mjs', '--subset', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let s = null;
      try { s = JSON.parse(r.out.trim().split('\n').pop()); } catch { /* not JSON */ }
      if (s && typeof s.passed === 'number') {
        for (const c of s.cases) console.log(`   ${c.ok ? 'PASS' : c.ok === null ? 'SKIP' : 'FAIL'} ${c.name.padEnd(40)} ${c.detail}`);
        record('interop (kernel rxe in qemu)', s.passed, s.failed, `${s.kernel}; image ${s.cacheSeconds?.toFixed?.(0) ?? '?'} s, boot ${s.bootSeconds?.toFixed?.(0) ?? '?'} s, ${s.seconds} s in all`);
      } else record('interop (kernel rxe in qemu)', 0, 1, `no JSON summary (exit ${r.code})`);
    }
  }
}

// ------------------------------------------------------------------ 3. summary
const passed = summary.reduce((a, s) => a + s.passed, 0);
const failed = summary.reduce((a, s) => a + s.failed, 0);
const skipped = summary.reduce((a, s) => a + s.skipped, 0);
console.log('\n== summary');
for (const s of summary) console.log(`   ${s.name.padEnd(36)} ${String(s.passed).padStart(5)} passed ${String(s.failed).padStart(4)} failed ${String(s.skipped).padStart(4)} skipped${s.note ? `  (${s.note})` : ''}`);
console.log(`   (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed ? 1 : 0);
