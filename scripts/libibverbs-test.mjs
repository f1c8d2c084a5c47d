#!/usr/bin/env node
// The libibverbs suite of npm test: unmodified Debian programs (ibverbs-utils, perftest) on the software device,
// each run through `verbslab exec`, pairs of processes talking RoCEv2 over UDP on loopback (127.0.0.x), plus the C
// self-test (native/libibverbs/tests/selftest.c, built against Debian's <infiniband/verbs.h>). Every case is bounded
// (timeout below); a case passes on the program's exit status 0 and the checks listed with it (the tools' own data
// checks where they have one: the pingpongs' --chk). Prints one line per case and, with --json, one JSON object.
//   node scripts/libibverbs-test.mjs [--json] [--only NAME,...]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(root, 'app', 'cli', 'verbslab.mjs');
const TIMEOUT_MS = 60_000;

function freeTcpPort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

// verbslab exec --no-build -- argv...; resolves {code, out} (stdout + stderr), killed after TIMEOUT_MS
function execRun(argv, { env = {}, timeout = TIMEOUT_MS } = {}) {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [CLI, 'exec', '--no-build', '--', ...argv], { cwd: root, env: { ...process.env, ...env } });
    let out = '';
    c.stdout.on('data', (d) => { out += d; });
    c.stderr.on('data', (d) => { out += d; });
    const t = setTimeout(() => { out += `\n[killed after ${timeout} ms]`; c.kill('SIGKILL'); }, timeout);
    c.on('exit', (code, signal) => { clearTimeout(t); resolve({ code: code ?? -1, signal, out }); });
  });
}

// A TCP port is listening (the server side of a pair is ready) when /proc/net/tcp lists it in state 0A.
function listening(port) {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try { text = fs.readFileSync(f, 'utf8'); } catch { continue; }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[1]?.endsWith(`:${hex}`) && cols[3] === '0A') return true;
    }
  }
  return false;
}

async function pair(server, client, env = {}) {
  const port = await freeTcpPort();
  const srv = execRun([...server, '-p', String(port)], { env });
  const t0 = Date.now();
  while (!listening(port) && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 50));
  const cli = await execRun([...client, '-p', String(port), '127.0.0.1'], { env });
  const s = await srv;
  return { server: s, client: cli };
}

const fails = (r) => [r.server, r.client].flatMap((x, i) => (x.code === 0 ? [] : [`${i ? 'client' : 'server'} exited ${x.signal ?? x.code}`]));

function pingpongCase(tool, extra = []) {
  return async () => {
    const args = [tool, '-g', '1', '-n', '200', '-c', ...extra];
    const r = await pair(args, args);
    const problems = fails(r);
    for (const [side, x] of [['server', r.server], ['client', r.client]]) {
      if (/invalid data/.test(x.out)) problems.push(`${side}: the tool's --chk found invalid data`);
      if (!/200 iters in/.test(x.out)) problems.push(`${side}: no "200 iters in" line`);
    }
    const fig = /([\d.]+) usec\/iter/.exec(r.client.out)?.[1];
    return { ok: problems.length === 0, detail: problems.join('; ') || `${fig} usec/iter`, out: r.client.out + r.server.out };
  };
}

// Live in the console (docs/libibverbs.md): the pair streams to a console's attach socket (app/host/attach.ts, here
// without a host around it); both programs' sessions must carry what they did, and end as exited. Without a console
// listening (VERBSLAB_CONSOLE naming nothing) the programs run as usual.
function consoleCase(listen) {
  return async () => {
    const fsP = await import('node:fs');
    const os = await import('node:os');
    const dir = fsP.mkdtempSync(path.join(os.tmpdir(), 'vl-attach-suite-'));
    let srv = null;
    if (listen) {
      const { tsImport } = await import('tsx/esm/api');
      const { AttachServer } = await tsImport(new URL('../app/host/attach.ts', import.meta.url).href, import.meta.url);
      srv = new AttachServer({ dir, lib: { profiles: () => [], napiVersion: 0 }, send: () => {}, log: () => {} });
      const err = await srv.start();
      if (err) return { ok: false, detail: err, out: '' };
    }
    const args = ['ibv_rc_pingpong', '-g', '1', '-n', '200', '-c'];
    try {
      const r = await pair(args, args, { VERBSLAB_CONSOLE: listen ? dir : path.join(dir, 'nobody.sock') });
      const problems = fails(r);
      for (const [side, x] of [['server', r.server], ['client', r.client]]) {
        if (/invalid data/.test(x.out)) problems.push(`${side}: the tool's --chk found invalid data`);
        if (!/200 iters in/.test(x.out)) problems.push(`${side}: no "200 iters in" line`);
      }
      let detail = 'ran without a console';
      if (srv) {
        const t0 = Date.now();
        while ([...srv.sessions.values()].some((s) => !s.ended) && Date.now() - t0 < 5000) await new Promise((res) => setTimeout(res, 50));
        const ss = [...srv.sessions.values()];
        if (ss.length !== 2) problems.push(`${ss.length} sessions attached, not 2`);
        for (const s of ss) {
          const n = (k) => s.events.filter((e) => e.kind === k).length;
          const lost = s.dropped.events + s.dropped.frames;
          if (s.ended !== 'the program exited') problems.push(`session ${s.id}: ${s.ended ?? 'not ended'}`);
          if (!s.events.some((e) => e.kind === 'ObjectCreated' && e.objKind === 'qp')) problems.push(`session ${s.id}: no QP creation`);
          if (!lost && n('PacketSent') < 200) problems.push(`session ${s.id}: ${n('PacketSent')} packets sent, not >= 200`);
          if (!lost && s.frames.length < 400) problems.push(`session ${s.id}: ${s.frames.length} datagrams, not >= 400 (sent + received)`);
          if (s.state?.qps.length !== 0) problems.push(`session ${s.id}: the last state still has QPs (the program destroyed them)`);
        }
        detail = ss.map((s) => `${s.received.events} events, ${s.frames.length} datagrams, ${s.dropped.events} dropped`).join('; ');
      }
      return { ok: problems.length === 0, detail: problems.join('; ') || detail, out: r.client.out + r.server.out };
    } finally {
      srv?.close();
      fsP.rmSync(dir, { recursive: true, force: true });
    }
  };
}

function perftestCase(tool, kind, extra = []) {
  return async () => {
    const args = [tool, '-n', '200', ...extra];
    const r = await pair(args, args);
    const problems = fails(r);
    const line = r.client.out.split('\n').find((l) => /^\s*\d+\s+200\s/.test(l));
    if (!line) problems.push('no result line for 200 iterations');
    if (!/Link type\s*:\s*Ethernet/.test(r.client.out)) problems.push('not on an Ethernet (RoCE) link');
    const cols = line?.trim().split(/\s+/) ?? [];
    const detail = kind === 'bw' ? `${cols[0]} B: ${cols[3]} MB/s average` : `${cols[0]} B: t_typical ${cols[4]} usec`;
    return { ok: problems.length === 0, detail: problems.join('; ') || detail, out: r.client.out + r.server.out };
  };
}

const CASES = {
  ibv_devices: async () => {
    const r = await execRun(['ibv_devices']);
    const ok = r.code === 0 && /^\s+vlrxe0\s+[0-9a-f]{16}\s*$/m.test(r.out);
    return { ok, detail: ok ? 'vlrxe0 listed with its node GUID' : `exit ${r.code}`, out: r.out };
  },
  'ibv_devinfo -v': async () => {
    const r = await execRun(['ibv_devinfo', '-v'], { env: { VERBSLAB_ADDR: '127.0.0.200' } });
    const want = [/hca_id:\s+vlrxe0/, /state:\s+PORT_ACTIVE \(4\)/, /link_layer:\s+Ethernet/, /GID\[\s*1\]:\s+::ffff:127\.0\.0\.200, RoCE v2/,
      /max_qp_wr:\s+\d+/, /atomic_cap:\s+ATOMIC_HCA/];
    const missing = want.filter((w) => !w.test(r.out)).map(String);
    return { ok: r.code === 0 && !missing.length, detail: missing.length ? `missing ${missing.join(', ')}` : 'port active, Ethernet, GID 1 = ::ffff:127.0.0.200', out: r.out };
  },
  ibv_rc_pingpong: pingpongCase('ibv_rc_pingpong'),
  'ibv_rc_pingpong -e': pingpongCase('ibv_rc_pingpong', ['-e']),
  'ibv_rc_pingpong --console': consoleCase(true),
  'ibv_rc_pingpong --console (none listening)': consoleCase(false),
  ibv_uc_pingpong: pingpongCase('ibv_uc_pingpong'),
  ibv_srq_pingpong: pingpongCase('ibv_srq_pingpong'),
  ibv_ud_pingpong: pingpongCase('ibv_ud_pingpong'),
  ib_write_bw: perftestCase('ib_write_bw', 'bw'),
  ib_read_bw: perftestCase('ib_read_bw', 'bw'),
  ib_send_bw: perftestCase('ib_send_bw', 'bw'),
  ib_write_lat: perftestCase('ib_write_lat', 'lat'),
  ib_atomic_bw: perftestCase('ib_atomic_bw', 'bw'),
  'ib_send_bw -c UD': perftestCase('ib_send_bw', 'bw', ['-c', 'UD']),
  selftest: async () => {
    const bin = path.join(root, 'build', 'libibverbs', 'vl_selftest');
    const r = await execRun([bin]);
    const failed = r.out.split('\n').filter((l) => l.startsWith('not ok'));
    const passed = r.out.split('\n').filter((l) => l.startsWith('ok')).length;
    return { ok: r.code === 0 && failed.length === 0 && passed > 0, detail: failed.length ? failed.join('; ') : `${passed} checks`, out: r.out };
  },
};

// Every library scenario (scenarios/, labs/<id>/scenarios/) exported to C, compiled and run on the library (app/cli/exec-scenarios.ts): one case each.
async function exportedScenarios() {
  const { tsImport } = await import('tsx/esm/api');
  const mod = await tsImport(new URL('../app/cli/exec-scenarios.ts', import.meta.url).href, import.meta.url);
  return mod.runExportedScenarios().map((r) => ({ name: `export-c ${r.name}`, ok: r.ok, detail: r.detail, ms: 0, ...(r.ok ? {} : { output: r.output ?? '' }) }));
}

export async function runAll(only = []) {
  const out = [];
  for (const [name, fn] of Object.entries(CASES)) {
    if (only.length && !only.includes(name)) continue;
    const t0 = Date.now();
    let res;
    try { res = await fn(); } catch (e) { res = { ok: false, detail: String(e?.message ?? e), out: '' }; }
    out.push({ name, ok: res.ok, detail: res.detail, ms: Date.now() - t0, ...(res.ok ? {} : { output: res.out.slice(-3000) }) });
  }
  if (!only.length || only.includes('export-c')) {
    try { for (const c of await exportedScenarios()) out.push(c); } catch (e) { out.push({ name: 'export-c', ok: false, detail: String(e?.message ?? e), ms: 0, output: '' }); }
  }
  return out;
}

// Builds the library and the self-test (gcc, Debian's headers, linked against the installed libibverbs.so.1 the way
// any program is; at run time verbslab exec substitutes ours).
export async function build() {
  const { buildLibverbs } = await import(new URL('./build.mjs', import.meta.url).href);
  await buildLibverbs('release');
  const src = path.join(root, 'native', 'libibverbs', 'tests', 'selftest.c');
  const bin = path.join(root, 'build', 'libibverbs', 'vl_selftest');
  const r = spawnSync('gcc', ['-std=gnu11', '-O1', '-g', '-Wall', '-Wextra', '-Werror', '-o', bin, src, '-libverbs', '-pthread'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('gcc selftest.c failed');
}

async function main() {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  const only = argv.includes('--only') ? (argv[argv.indexOf('--only') + 1] ?? '').split(',').filter(Boolean) : [];
  await build();
  const res = await runAll(only);
  if (json) { console.log(JSON.stringify({ passed: res.filter((r) => r.ok).length, failed: res.filter((r) => !r.ok).length, cases: res })); }
  else {
    for (const r of res) {
      console.log(`${r.ok ? 'PASS' : 'FAIL'} ${r.name.padEnd(20)} ${r.detail} (${(r.ms / 1000).toFixed(1)} s)`);
      if (!r.ok) console.log(r.output.split('\n').map((l) => `     | ${l}`).join('\n'));
    }
  }
  return res.every((r) => r.ok) ? 0 : 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then((c) => { process.exitCode = c; }, (e) => { console.error(e?.message ?? e); process.exitCode = 1; });
}
