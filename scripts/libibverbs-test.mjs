#!/usr/bin/env node
// The libibverbs suite of npm test: unmodified Debian programs (ibverbs-utils, perftest, rdmacm-utils) on the
// software device, each run through `verbslab exec`, pairs of processes talking RoCEv2 over UDP on loopback
// (127.0.0.x), plus the C self-tests (native/libibverbs/tests/selftest.c, native/librdmacm/tests/selftest.c, built
// against Debian's headers). Every case is bounded
// (timeout below); a case passes on the program's exit status 0 and the checks listed with it (the tools' own data
// checks where they have one: the pingpongs' --chk). Prints one line per case and, with --json, one JSON object.
//   node scripts/libibverbs-test.mjs [--json] [--only NAME,...]
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
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

// verbslab exec --no-build -- argv...; resolves {code, out (stdout + stderr as they came), stdout}, killed after TIMEOUT_MS
function execRun(argv, { env = {}, timeout = TIMEOUT_MS } = {}) {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [CLI, 'exec', '--no-build', '--', ...argv], { cwd: root, env: { ...process.env, ...env } });
    let out = '', stdout = '';
    c.stdout.on('data', (d) => { out += d; stdout += d; });
    c.stderr.on('data', (d) => { out += d; });
    const t = setTimeout(() => { out += `\n[killed after ${timeout} ms]`; c.kill('SIGKILL'); }, timeout);
    c.on('exit', (code, signal) => { clearTimeout(t); resolve({ code: code ?? -1, signal, out, stdout }); });
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
// rping: the CM's exchange is in the stream too (CmMad / CmState events, app/protocol)
const RPING_CONSOLE = {
  run: async (env) => {
    const port = String(await freeTcpPort());
    return cmPair((a) => ['rping', '-s', '-a', a, '-p', port, '-C', '50', '-V'], (a) => ['rping', '-c', '-a', a, '-p', port, '-C', '50', '-V'], { env });
  },
  check: (x) => (/data mismatch/.test(x.out) ? ['rping -V found a data mismatch'] : []),
  session: (s, n, problems) => { if (n('CmMad') < 3) problems.push(`session ${s.id}: ${n('CmMad')} CM MAD events, not >= 3 (REQ, REP, RTU)`); },
};
const PINGPONG_CONSOLE = {
  run: async (env) => { const args = ['ibv_rc_pingpong', '-g', '1', '-n', '200', '-c']; return pair(args, args, env); },
  check: (x) => [...(/invalid data/.test(x.out) ? ["the tool's --chk found invalid data"] : []), ...(!/200 iters in/.test(x.out) ? ['no "200 iters in" line'] : [])],
  session: () => {},
};

function consoleCase(listen, how = PINGPONG_CONSOLE) {
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
    try {
      const r = await how.run({ VERBSLAB_CONSOLE: listen ? dir : path.join(dir, 'nobody.sock') });
      const problems = fails(r);
      for (const [side, x] of [['server', r.server], ['client', r.client]]) for (const p of how.check(x)) problems.push(`${side}: ${p}`);
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
          how.session(s, n, problems);
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

// ---- librdmacm programs (docs/librdmacm.md): the connection is set up by the device's CM (REQ / REP / RTU on QP1).
// The server's device goes on the network at a free 127.0.0.N (its RoCE UDP port not bound by anyone), the address
// the server binds (or VERBSLAB_ADDR for servers that bind "any"); it is ready once that UDP socket exists and the
// program had a moment to call rdma_listen after rdma_bind_addr.
function udpBound(ip, port = 4791) {
  const [a, b, c, d] = ip.split('.').map(Number);
  const want = `${[d, c, b, a].map((x) => x.toString(16).padStart(2, '0')).join('').toUpperCase()}:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let text = '';
  try { text = fs.readFileSync('/proc/net/udp', 'utf8'); } catch { return false; }
  return text.split('\n').slice(1).some((l) => l.trim().split(/\s+/)[1] === want);
}

function freeRoceAddr() {
  for (let n = 1; n < 250; n++) if (!udpBound(`127.0.0.${n}`)) return `127.0.0.${n}`;
  throw new Error('no 127.0.0.N with a free RoCE port');
}

// server(addr) / client(addr): argv; serverEnv: set VERBSLAB_ADDR for servers that bind "any"
// Another program may take the free address between the look and the server's bind (other suites, other users of
// the host): the server then exits at once with EADDRINUSE and the pair is tried again on a new address (3 times).
async function cmPair(server, client, { pinServer = false, timeout = TIMEOUT_MS, env = {} } = {}) {
  for (let attempt = 1; ; attempt++) {
    const addr = freeRoceAddr();
    let exited = null;
    const srv = execRun(server(addr), { env: { ...env, ...(pinServer ? { VERBSLAB_ADDR: addr } : {}) }, timeout });
    srv.then((r) => { exited = r; });
    const t0 = Date.now();
    while (!exited && !udpBound(addr) && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    if (exited && attempt < 3 && /Address already in use|address already in use/.test(exited.out)) continue;
    if (exited) return { server: exited, client: { code: -1, signal: null, out: '[not started: the server had exited]', stdout: '' }, addr };
    // The server's device is on the network before the program calls rdma_listen (perftest opens the device, then
    // sets up its buffers): a REQ that comes first is refused with REJ "invalid service ID" (8), as the kernel
    // refuses a connection to a port nobody listens on yet. The client is started again then (3 times).
    let cli;
    for (let c = 1; ; c++) {
      cli = await execRun(client(addr), { env, timeout });
      if (c >= 3 || exited || !/REJECTED[^\n]{0,20}\b8\b/.test(cli.out)) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const s = await srv;
    return { server: s, client: cli, addr };
  }
}

// rping's ping data (rping.c rping_test_client): "rdma-ping-N: " then letters from 'A' + N cycling A..z, size - 1 bytes
function rpingData(n, size = 64) {
  let t = `rdma-ping-${n}: `;
  let c = 65 + (n % 58);
  while (t.length < size - 1) { t += String.fromCharCode(c); c = c === 122 ? 65 : c + 1; }
  return t;
}

function rpingCase(count) {
  return async () => {
    const port = String(await freeTcpPort());
    const r = await cmPair((a) => ['rping', '-s', '-a', a, '-p', port, '-C', String(count), '-v', '-V'],
      (a) => ['rping', '-c', '-a', a, '-p', port, '-C', String(count), '-v', '-V']);
    const problems = fails(r);
    for (const [side, x, prefix] of [['client', r.client, 'ping data: '], ['server', r.server, 'server ping data: ']]) {
      const lines = x.stdout.split('\n').filter((l) => l.startsWith(prefix)).map((l) => l.slice(prefix.length));
      if (lines.length !== count) problems.push(`${side}: ${lines.length} "${prefix.trim()}" lines, not ${count}`);
      const bad = lines.findIndex((l, i) => l !== rpingData(i));
      if (bad >= 0) problems.push(`${side}: ping ${bad} carried '${lines[bad]}', not '${rpingData(bad)}'`);
      if (/data mismatch/.test(x.out)) problems.push(`${side}: rping -V found a data mismatch`);
    }
    return { ok: problems.length === 0, detail: problems.join('; ') || `${count} pings verified both sides (server ${r.addr})`, out: r.client.out + r.server.out };
  };
}

// IPv6: both programs on ::1 (loopback has no other IPv6 address), so each device takes its own RoCE UDP port and
// sends to the other's (verbslab exec --udp-port / --peer-udp-port); the server's device goes to ::1 at its bind.
function freeUdpPort() {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp6');
    s.on('error', reject);
    s.bind(0, '::1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

function rping6Case(count) {
  return async () => {
    const port = String(await freeTcpPort());
    const [us, uc] = [await freeUdpPort(), await freeUdpPort()];
    const bound = () => {
      let text = '';
      try { text = fs.readFileSync('/proc/net/udp6', 'utf8'); } catch { return false; }
      const want = `00000000000000000000000001000000:${us.toString(16).toUpperCase().padStart(4, '0')}`;
      return text.split('\n').slice(1).some((l) => l.trim().split(/\s+/)[1] === want);
    };
    const srv = execRun(['rping', '-s', '-a', '::1', '-p', port, '-C', String(count), '-v', '-V'],
      { env: { VERBSLAB_UDP_PORT: String(us), VERBSLAB_PEER_UDP_PORT: String(uc) } });
    const t0 = Date.now();
    while (!bound() && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    const cli = await execRun(['rping', '-c', '-a', '::1', '-p', port, '-C', String(count), '-v', '-V'],
      { env: { VERBSLAB_UDP_PORT: String(uc), VERBSLAB_PEER_UDP_PORT: String(us) } });
    const r = { server: await srv, client: cli };
    const problems = fails(r);
    const lines = cli.stdout.split('\n').filter((l) => l.startsWith('ping data: ')).map((l) => l.slice(11));
    if (lines.length !== count || lines.some((l, i) => l !== rpingData(i))) problems.push(`client: ${lines.length} ping lines, not ${count} verified`);
    return { ok: problems.length === 0, detail: problems.join('; ') || `${count} pings verified over ::1 (UDP ports ${us} / ${uc})`, out: r.client.out + r.server.out };
  };
}

// Tools that end with their own verdict line: ucmatose / udaddy "return status 0", rdma_client "rdma_client: end 0"
function cmToolCase(server, client, want, opts = {}) {
  return async () => {
    const port = String(await freeTcpPort());
    const r = await cmPair((a) => server(a, port), (a) => client(a, port), opts);
    const problems = fails(r);
    for (const [side, x, re] of [['server', r.server, want[0]], ['client', r.client, want[1]]]) if (!re.test(x.out)) problems.push(`${side}: no ${re}`);
    return { ok: problems.length === 0, detail: problems.join('; ') || `both ${want.map(String).join(' / ')} (server ${r.addr})`, out: r.client.out + r.server.out };
  };
}

function perftestCmCase(tool, kind) {
  return async () => {
    const port = String(await freeTcpPort());
    const r = await cmPair(() => [tool, '-R', '-n', '200', '-p', port], (a) => [tool, '-R', '-n', '200', '-p', port, a], { pinServer: true });
    const problems = fails(r);
    const line = r.client.out.split('\n').find((l) => /^\s*\d+\s+200\s/.test(l));
    if (!line) problems.push('no result line for 200 iterations');
    if (!/Link type\s*:\s*Ethernet/.test(r.client.out)) problems.push('not on an Ethernet (RoCE) link');
    if (!/rdma_cm QPs\s*:\s*ON/i.test(r.client.out)) problems.push('rdma_cm not in use');
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
  selftest: selftestCase('vl_selftest'),
  'rping -v -C 1000': rpingCase(1000),
  'rping ::1': rping6Case(100),
  'rping --console': consoleCase(true, RPING_CONSOLE),
  ucmatose: cmToolCase((a, p) => ['ucmatose', '-b', a, '-p', p, '-c', '2', '-C', '20'], (a, p) => ['ucmatose', '-s', a, '-p', p, '-c', '2', '-C', '20'],
    [/return status 0/, /return status 0/]),
  'ucmatose -m (migrate)': cmToolCase((a, p) => ['ucmatose', '-b', a, '-p', p, '-m'], (a, p) => ['ucmatose', '-s', a, '-p', p],
    [/return status 0/, /return status 0/]),
  udaddy: cmToolCase((a) => ['udaddy', '-b', a, '-c', '2', '-C', '20'], (a) => ['udaddy', '-s', a, '-c', '2', '-C', '20'],
    [/return status 0/, /return status 0/]),
  'rdma_server / rdma_client': cmToolCase((a, p) => ['rdma_server', '-s', a, '-p', p], (a, p) => ['rdma_client', '-s', a, '-p', p],
    [/rdma_server: end 0/, /rdma_client: end 0/]),
  'rdma_xserver / rdma_xclient': cmToolCase((a, p) => ['rdma_xserver', '-p', p], (a, p) => ['rdma_xclient', '-s', a, '-p', p],
    [/rdma_xserver: end 0/, /rdma_xclient: end 0/], { pinServer: true }),
  'ib_write_bw -R': perftestCmCase('ib_write_bw', 'bw'),
  'ib_send_lat -R': perftestCmCase('ib_send_lat', 'lat'),
  'rdmacm selftest': selftestCase('vl_rdmacm_selftest'),
};

function selftestCase(name) {
  return async () => {
    const bin = path.join(root, 'build', 'libibverbs', name);
    const r = await execRun([bin]);
    const failed = r.out.split('\n').filter((l) => l.startsWith('not ok'));
    const passed = r.out.split('\n').filter((l) => l.startsWith('ok')).length;
    return { ok: r.code === 0 && failed.length === 0 && passed > 0, detail: failed.length ? failed.join('; ') : `${passed} checks`, out: r.out };
  };
}

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
  const { buildLibrdmacm } = await import(new URL('./build.mjs', import.meta.url).href);
  await buildLibrdmacm('release');                // builds libibverbs.so.1 first
  for (const [dir, name, libs] of [['libibverbs', 'vl_selftest', ['-libverbs']], ['librdmacm', 'vl_rdmacm_selftest', ['-lrdmacm', '-libverbs']]]) {
    const src = path.join(root, 'native', dir, 'tests', 'selftest.c');
    const bin = path.join(root, 'build', 'libibverbs', name);
    const r = spawnSync('gcc', ['-std=gnu11', '-O1', '-g', '-Wall', '-Wextra', '-Werror', '-o', bin, src, ...libs, '-pthread'], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`gcc ${dir}/tests/selftest.c failed`);
  }
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
