#!/usr/bin/env node
// Builds the native parts with g++ directly (no cmake/make/python needed) and the renderer with Vite.
//   node scripts/build.mjs [native|addon|tests|asan|tsan|fuzz|bench|tools|libibverbs|librdmacm|renderer|all]
// tsan (ThreadSanitizer, manual): build/native-tsan/vl_tests --gtest_filter='EngineThreads.*' (see README)
// fuzz: the libFuzzer targets fuzz/*.cpp with clang (ASan + UBSan) -> build/native-fuzz/vl_fuzz_<name> (scripts/fuzz.mjs)
// Objects are incremental (g++ -MMD dependency files), compiled in parallel on every core.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const CXX = process.env.CXX || 'g++';
const JOBS = Math.max(1, Number(process.env.VL_JOBS) || os.cpus().length);

function walk(dir, ext) {
  if (!fs.existsSync(dir)) return [];
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) for (const f of walk(p, ext)) out.push(f);
    else if (p.endsWith(ext)) out.push(p);
  }
  return out.sort();
}

function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], cwd: root, ...opts });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.slice(-3).join(' ')} exited ${code}`))));
  });
}

function mtime(p) {
  try { return fs.statSync(p).mtimeMs; } catch { return -1; }
}

// true if obj is missing or older than any dependency listed in its .d file
function stale(obj, src) {
  const t = mtime(obj);
  if (t < 0 || mtime(src) > t) return true;
  const dep = obj.replace(/\.o$/, '.d');
  if (!fs.existsSync(dep)) return true;
  // first rule only ("obj: src hdr ..."); -MP adds phony "hdr:" rules after it
  const firstRule = fs.readFileSync(dep, 'utf8').replace(/\\\n/g, ' ').split('\n')[0];
  const deps = firstRule.slice(firstRule.indexOf(': ') + 2).split(/\s+/).filter(Boolean);
  return deps.some((d) => mtime(path.resolve(root, d)) > t || mtime(path.resolve(root, d)) < 0);
}

async function pool(tasks) {
  let i = 0;
  const errors = [];
  async function worker() {
    while (i < tasks.length) {
      const t = tasks[i++];
      try { await t(); } catch (e) { errors.push(e); }
    }
  }
  await Promise.all(Array.from({ length: JOBS }, worker));
  if (errors.length) throw errors[0];
}

const WARN = ['-Wall', '-Wextra', '-Wno-unused-parameter', '-Wno-missing-field-initializers'];
const PROFILES = {
  release: { dir: 'build/native', flags: ['-O2', '-g', '-fPIC', '-DNDEBUG'] },
  asan: { dir: 'build/native-asan', flags: ['-O1', '-g', '-fPIC', '-fsanitize=address,undefined', '-fno-omit-frame-pointer', '-fno-sanitize-recover=undefined'] },
  tsan: { dir: 'build/native-tsan', flags: ['-O1', '-g', '-fPIC', '-fsanitize=thread', '-fno-omit-frame-pointer'] },
  // libFuzzer needs clang (Debian's clang + libclang-rt-dev); the library is instrumented for coverage, not linked with main
  fuzz: {
    dir: 'build/native-fuzz', cxx: process.env.VL_FUZZ_CXX || 'clang++',
    flags: ['-O1', '-g', '-fPIC', '-fsanitize=fuzzer-no-link,address,undefined', '-fno-omit-frame-pointer', '-fno-sanitize-recover=undefined'],
    linkFlags: ['-g', '-fsanitize=fuzzer,address,undefined'],
  },
};

async function compile(profile, srcs, extraFlags = []) {
  const { dir, flags } = PROFILES[profile];
  const objs = [];
  const tasks = [];
  for (const src of srcs) {
    const rel = path.relative(path.join(root, 'native'), src);
    const obj = path.join(root, dir, 'obj', rel.replace(/\.cpp$/, '.o'));
    objs.push(obj);
    if (!stale(obj, src)) continue;
    tasks.push(async () => {
      fs.mkdirSync(path.dirname(obj), { recursive: true });
      console.log(`  c++ [${profile}] ${rel}`);
      await run(PROFILES[profile].cxx ?? CXX, ['-std=c++20', ...WARN, ...flags, ...extraFlags, '-pthread', '-I', 'native/include', '-I', 'native/src', '-MMD', '-MP', '-c', src, '-o', obj]);
    });
  }
  await pool(tasks);
  return objs;
}

async function link(profile, out, objs, libs = [], shared = false) {
  const { flags, linkFlags, cxx } = PROFILES[profile];
  const t = mtime(out);
  if (t >= 0 && objs.every((o) => mtime(o) <= t)) return out;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  console.log(`  link ${path.relative(root, out)}`);
  await run(cxx ?? CXX, [...(linkFlags ?? flags), '-pthread', ...(shared ? ['-shared'] : []), ...objs, '-o', out, ...libs]);
  return out;
}

const libSrcs = () => walk(path.join(root, 'native/src'), '.cpp');

export async function buildAddon() {
  const napiInc = require('node-api-headers').include_dir;
  const addonInc = path.dirname(require.resolve('node-addon-api/package.json'));
  const lib = await compile('release', libSrcs());
  // native/ibverbs: the real-device backend (dlopen of libibverbs.so.1, docs/real-devices.md), Node-free, in the addon
  const addon = await compile('release', [...walk(path.join(root, 'native/addon'), '.cpp'), ...walk(path.join(root, 'native/ibverbs'), '.cpp')],
    ['-I', napiInc, '-I', addonInc, '-DNAPI_VERSION=8', '-DNAPI_DISABLE_CPP_EXCEPTIONS', '-DNODE_ADDON_API_DISABLE_DEPRECATED', '-fvisibility=hidden']);
  return link('release', path.join(root, 'build/Release/verbslab.node'), [...lib, ...addon], ['-ldl'], true);
}

export async function buildTests(profile = 'release') {
  const lib = await compile(profile, libSrcs());
  // native/ibverbs (the real-device backend) is tested against build/libibverbs (built by the tests target)
  const tests = await compile(profile, [...walk(path.join(root, 'native/tests'), '.cpp'), ...walk(path.join(root, 'native/ibverbs'), '.cpp')]);
  return link(profile, path.join(root, PROFILES[profile].dir, 'vl_tests'), [...lib, ...tests], ['-lgtest', '-lgtest_main', '-ldl']);
}

// native/tools/*.cpp: one program each (e.g. vl_pingpong), linked against the library, next to vl_tests
export async function buildTools(profile = 'release') {
  const lib = await compile(profile, libSrcs());
  const out = [];
  for (const src of walk(path.join(root, 'native/tools'), '.cpp')) {
    const objs = await compile(profile, [src]);
    out.push(await link(profile, path.join(root, PROFILES[profile].dir, path.basename(src, '.cpp')), [...lib, ...objs], ['-ldl']));
  }
  return out;
}

// fuzz/*.cpp: one libFuzzer program each, build/native-fuzz/vl_fuzz_<name>
export async function buildFuzz() {
  const lib = await compile('fuzz', libSrcs());
  const out = [];
  for (const src of walk(path.join(root, 'fuzz'), '.cpp')) {
    const objs = await compile('fuzz', [src]);
    out.push(await link('fuzz', path.join(root, PROFILES.fuzz.dir, `vl_fuzz_${path.basename(src, '.cpp')}`), [...lib, ...objs], ['-ldl']));
  }
  return out;
}

export async function buildBench() {
  const lib = await compile('release', libSrcs());
  const bench = await compile('release', walk(path.join(root, 'native/bench'), '.cpp'));
  return link('release', path.join(root, 'build/native/vl_bench'), [...lib, ...bench], ['-ldl']);
}

// native/libibverbs: a libibverbs.so.1 (soname, symbol versions of rdma-core's) over the software device, for
// unmodified programs: LD_LIBRARY_PATH=build/libibverbs (what `verbslab exec` sets). docs/libibverbs.md.
export async function buildLibverbs(profile = 'release') {
  const lib = await compile(profile, libSrcs());
  // + the addon's event JSON (plain C++): a program attached to a console sends its events in the protocol's text
  const own = await compile(profile, [...walk(path.join(root, 'native/libibverbs'), '.cpp'), path.join(root, 'native/addon/event_json.cpp')], ['-fvisibility=hidden']);
  const map = path.join(root, 'native/libibverbs/libibverbs.map');
  const dir = profile === 'release' ? 'build/libibverbs' : `build/libibverbs-${profile}`;
  const out = path.join(root, dir, 'libibverbs.so.1');
  if (mtime(map) > mtime(out)) fs.rmSync(out, { force: true });
  return link(profile, out, [...lib, ...own],
    ['-Wl,-soname,libibverbs.so.1', `-Wl,--version-script=${map}`, '-Wl,-z,defs', '-ldl'], true);
}

// native/librdmacm: a librdmacm.so.1 (soname, symbol versions of rdma-core's) over the device's connection manager,
// next to libibverbs.so.1 in the same directory (one LD_LIBRARY_PATH entry) and linked against it: both reach the
// process's one device through libibverbs' private interface (VERBSLAB_PRIVATE_1.0). docs/librdmacm.md.
export async function buildLibrdmacm(profile = 'release') {
  const verbs = await buildLibverbs(profile);
  const own = await compile(profile, walk(path.join(root, 'native/librdmacm'), '.cpp'), ['-fvisibility=hidden']);
  const map = path.join(root, 'native/librdmacm/librdmacm.map');
  const out = path.join(path.dirname(verbs), 'librdmacm.so.1');
  if (mtime(map) > mtime(out) || mtime(verbs) > mtime(out)) fs.rmSync(out, { force: true });
  return link(profile, out, own,
    ['-Wl,-soname,librdmacm.so.1', `-Wl,--version-script=${map}`, '-Wl,-z,defs', verbs, "-Wl,-rpath,$ORIGIN"], true);
}

export async function buildRenderer() {
  await run(process.execPath, [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn']);
}

async function main() {
  const what = process.argv[2] || 'all';
  const t0 = Date.now();
  if (what === 'native' || what === 'all') { await buildAddon(); }
  if (what === 'addon') await buildAddon();
  // the real-device tests (native/tests/realdev_test.cpp) dlopen build/libibverbs/libibverbs.so.1
  if (what === 'tests') { await buildTests('release'); await buildTools('release'); await buildLibrdmacm('release'); }
  if (what === 'asan') { await buildTests('asan'); await buildTools('asan'); await buildLibrdmacm('release'); }
  if (what === 'tsan') { await buildTests('tsan'); await buildTools('tsan'); }
  if (what === 'tools') await buildTools('release');
  if (what === 'fuzz') await buildFuzz();
  if (what === 'bench') await buildBench();
  if (what === 'libibverbs') await buildLibverbs('release');
  if (what === 'librdmacm') await buildLibrdmacm('release');
  if (what === 'renderer' || what === 'all') await buildRenderer();
  console.log(`build ${what}: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => { console.error(`build failed: ${e.message}`); process.exit(1); });
}
