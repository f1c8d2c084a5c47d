#!/usr/bin/env node
// npm run interop: Verbs Lab's software device against the Linux kernel's Soft-RoCE (rdma_rxe), see docs/interop.md.
// Boots Debian's kernel under qemu on a tap device in a network namespace of its own, then runs each case with one
// peer in the guest (kernel rxe0, Debian's programs) and one on the host under `verbslab exec` (this project's
// libibverbs, its device on the tap), both directions, over IPv4 and IPv6 GIDs. One line per case, then
// "N passed, N failed". Frames of each case: build/interop/pcap/<case>.pcap (qemu filter-dump on the guest's NIC).
//   node scripts/interop/run.mjs [--subset] [--only SUBSTR,...] [--json]
//   --subset: the short list npm test runs (suite interop)
import fs from 'node:fs';
import path from 'node:path';
import { ensureCache, root } from './cache.mjs';
import { guestListening, hostRun, parseGids } from './peers.mjs';
import { NET, Netns, Vm } from './vm.mjs';

const argv = process.argv.slice(2);
const opt = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] ?? '' : null);
const JSON_OUT = argv.includes('--json');
const SUBSET = argv.includes('--subset');
const ONLY = (opt('--only') ?? '').split(',').filter(Boolean);
const OUT = path.join(root, 'build', 'interop');
const log = (m) => { if (JSON_OUT) process.stderr.write(m + '\n'); else console.log(m); };

// librdmacm over the device (branch rdmacm, scripts/build.mjs buildLibrdmacm: build/libibverbs/librdmacm.so.1, beside
// libibverbs.so.1 and so on the LD_LIBRARY_PATH verbslab exec sets): the rdma_cm cases run only when it is built
const RDMACM_DIR = process.env.VERBSLAB_RDMACM_DIR
  || [path.join(root, 'build', 'libibverbs'), path.join(root, 'build', 'librdmacm')].find((d) => fs.existsSync(path.join(d, 'librdmacm.so.1')))
  || path.join(root, 'build', 'libibverbs');
const rdmacmBuilt = () => fs.existsSync(path.join(RDMACM_DIR, 'librdmacm.so.1'));

// ------------------------------------------------------------------ checks
const ITERS = 100;
function pingpongCheck(out, iters) {
  const p = [];
  if (/invalid data/i.test(out)) p.push("the tool's --chk found invalid data");
  if (!new RegExp(`${iters} iters in`).test(out)) p.push(`no "${iters} iters in" line`);
  return p;
}
function perftestCheck(out, iters) {
  const p = [];
  if (!out.split('\n').some((l) => new RegExp(`^\\s*\\d+\\s+${iters}\\s+[\\d.]+\\s+[\\d.]+`).test(l))) p.push(`no result line for ${iters} iterations`);
  if (!/Link type\s*:\s*Ethernet/.test(out)) p.push('not on an Ethernet (RoCE) link');
  return p;
}
const pingpongFig = (out) => { const m = /([\d.]+) usec\/iter/.exec(out); return m ? `${m[1]} usec/iter` : ''; };
const perftestFig = (out, iters) => {
  const l = out.split('\n').find((x) => new RegExp(`^\\s*\\d+\\s+${iters}\\s`).test(x));
  const c = l?.trim().split(/\s+/) ?? [];
  return c.length > 3 ? `${c[0]} B x ${iters}: ${c[3]} MB/s` : '';
};

// A tool: its arguments on a side given that side's GID index, the checks of each side's output. The TCP exchange
// of the pingpongs and perftest runs over IPv4 in every case; the GID index picks the RoCE addresses.
const TOOLS = {
  ibv_rc_pingpong: { args: (gid) => ['-g', gid, '-n', ITERS, '-c'], check: (o) => pingpongCheck(o, ITERS), fig: pingpongFig, secs: 60 },
  ibv_ud_pingpong: { args: (gid) => ['-g', gid, '-n', ITERS, '-s', 1024, '-c'], check: (o) => pingpongCheck(o, ITERS), fig: pingpongFig, secs: 60 },
  ib_write_bw: { args: (gid) => ['-x', gid, '-n', 200, '-F'], check: (o) => perftestCheck(o, 200), fig: (o) => perftestFig(o, 200), secs: 90 },
  ib_read_bw: { args: (gid) => ['-x', gid, '-n', 200, '-F'], check: (o) => perftestCheck(o, 200), fig: (o) => perftestFig(o, 200), secs: 90 },
  ib_send_bw: { args: (gid) => ['-x', gid, '-n', 200, '-F'], check: (o) => perftestCheck(o, 200), fig: (o) => perftestFig(o, 200), secs: 90 },
};

// rdma_cm tools (librdmacm on the host side): address-based, no GID index; the server binds the given address
const CM_TOOLS = {
  rping: {
    // -V: the client compares each ping it read back with what it sent ("data mismatch!" and exit 1 otherwise)
    server: (a) => ['rping', '-s', '-a', a, '-v', '-C', 100], client: (a) => ['rping', '-c', '-a', a, '-v', '-V', '-C', 100],
    check: (o) => [
      ...((o.match(/ping data: rdma-ping-\d+: /g) ?? []).length >= 100 ? [] : [`${(o.match(/ping data: /g) ?? []).length} "ping data" lines, not 100`]),
      ...(/data mismatch/.test(o) ? ['rping -V: data mismatch'] : []),
    ],
    fig: () => '100 pings verified', secs: 90, portArg: '-p',
  },
  'ib_write_bw -R': {                               // (IPv4 only: see matrix())
    server: () => ['ib_write_bw', '-R', '-n', 200, '-F'], client: (a) => ['ib_write_bw', '-R', '-n', 200, '-F', a],
    check: (o) => perftestCheck(o, 200), fig: (o) => perftestFig(o, 200), secs: 45, portArg: '-p',
  },
  ucmatose: {
    server: (a) => ['ucmatose', '-b', a, '-C', 10], client: (a) => ['ucmatose', '-s', a, '-C', 10],
    check: (o) => (/test complete/.test(o) ? [] : ['no "test complete"']), fig: () => '', secs: 90, portArg: '-p',
  },
  udaddy: {                                        // (its -p is the port space; the port is its fixed 7174)
    server: (a) => ['udaddy', '-b', a, '-C', 10], client: (a) => ['udaddy', '-s', a, '-C', 10],
    check: (o) => (/test complete/.test(o) ? [] : ['no "test complete"']), fig: () => '', secs: 90, portArg: null,
  },
};

// ------------------------------------------------------------------ the matrix
const FAMILIES = ['ipv4', 'ipv6'];
const DIRECTIONS = [
  { id: 'kernel-server', server: 'guest', label: 'kernel server <- verbslab client' },
  { id: 'verbslab-server', server: 'host', label: 'verbslab server <- kernel client' },
];
function matrix() {
  const cases = [];
  for (const fam of FAMILIES) {
    for (const tool of Object.keys(TOOLS)) for (const d of DIRECTIONS) cases.push({ name: `${tool} ${fam} ${d.id}`, tool, fam, dir: d, cm: false });
    for (const tool of Object.keys(CM_TOOLS)) {
      // perftest 4.5's rdma_cm client resolves the server's address as IPv4 only, --ipv6 or not ("Address family for
      // hostname not supported", the kernel's client as ours): no IPv6 ib_write_bw -R
      if (tool === 'ib_write_bw -R' && fam === 'ipv6') continue;
      for (const d of DIRECTIONS) cases.push({ name: `${tool} ${fam} ${d.id}`, tool, fam, dir: d, cm: true });
    }
  }
  // negative: the server's source GID is IPv4-mapped, the client's IPv6; the server must refuse RTR (EINVAL)
  for (const d of DIRECTIONS) cases.push({ name: `ibv_rc_pingpong mixed-family ${d.id}`, tool: 'ibv_rc_pingpong', fam: 'mixed', dir: d, cm: false });
  return cases;
}
// npm test's suite: the RC pingpong both ways over IPv4 and IPv6 and one perftest (docs/interop.md: timings)
const SUBSET_NAMES = ['ibv_rc_pingpong ipv4 kernel-server', 'ibv_rc_pingpong ipv4 verbslab-server', 'ibv_rc_pingpong ipv6 kernel-server',
  'ibv_rc_pingpong ipv6 verbslab-server', 'ib_write_bw ipv4 verbslab-server'];

// ------------------------------------------------------------------ running
const q = (a) => a.map((x) => String(x)).map((x) => (/^[\w@%+=:,./-]+$/.test(x) ? x : `'${x.replace(/'/g, `'\\''`)}'`)).join(' ');
let nextPort = 18515;

async function runCase(env, c) {
  const { vm, ns, gids } = env;
  const port = nextPort++;
  const cm = c.cm ? CM_TOOLS[c.tool] : null;
  const t = cm ?? TOOLS[c.tool];
  // mixed: the server on its IPv4-mapped GID, the client on its IPv6 GID
  const famOf = (side) => (c.fam !== 'mixed' ? c.fam : side === c.dir.server ? 'ipv4' : 'ipv6');
  const gGuest = gids.guest[famOf('guest')], gHost = gids.host[famOf('host')];
  const guestAddr = c.fam === 'ipv4' ? NET.guestV4 : NET.guestV6;
  const hostAddr = c.fam === 'ipv4' ? NET.hostV4 : NET.hostV6;
  const cmPort = cm?.portArg ? [cm.portArg, port] : [];
  const serverArgs = (side) => (cm ? [...cm.server(side === 'guest' ? guestAddr : hostAddr), ...cmPort]
    : [c.tool, ...t.args(side === 'guest' ? gGuest : gHost), '-p', port]);
  const clientArgs = (side) => (cm ? [...cm.client(side === 'guest' ? hostAddr : guestAddr), ...cmPort]
    : [c.tool, ...t.args(side === 'guest' ? gGuest : gHost), '-p', port, side === 'guest' ? NET.hostV4 : NET.guestV4]);
  // (verbslab exec puts build/libibverbs first on LD_LIBRARY_PATH; another librdmacm directory goes behind it)
  const hostEnv = cm && RDMACM_DIR !== path.join(root, 'build', 'libibverbs') ? { LD_LIBRARY_PATH: RDMACM_DIR } : {};
  const slug = c.name.replace(/[^\w.-]+/g, '_');
  const pcap = path.join(OUT, 'pcap', `${slug}.pcap`);
  fs.mkdirSync(path.dirname(pcap), { recursive: true });
  fs.rmSync(pcap, { force: true });
  const t0 = Date.now();
  let server, client;
  await vm.startDump(pcap);
  try {
    if (c.dir.server === 'guest') {
      const srv = await vm.spawn(q(serverArgs('guest')), t.secs);
      // the rdma_cm tools listen through rdma_cm, not on a TCP socket: give the server a moment instead
      if (cm) await new Promise((r) => setTimeout(r, 2000));
      else if (!(await guestListening(vm, port, 20_000))) {
        const s = await srv.wait(1000);
        return { ok: false, detail: `the kernel-side server never listened on ${port}`, out: s.out, ms: Date.now() - t0 };
      }
      const cli = await hostRun(ns, clientArgs('host'), { timeoutMs: t.secs * 1000, env: hostEnv }).done;
      client = { side: 'verbslab', rc: cli.code, out: cli.out };
      const s = await srv.wait(cli.code === 0 ? 20_000 : 3000);
      server = { side: 'kernel', rc: s.rc, out: s.out };
    } else {
      const srv = hostRun(ns, serverArgs('host'), { timeoutMs: t.secs * 1000, env: hostEnv });
      const up = cm ? (await new Promise((r) => setTimeout(r, 2000)), true) : await srv.listening(port, 20_000);
      if (!up) {
        srv.kill();
        const s = await srv.done;
        return { ok: false, detail: `the verbslab-side server never listened on ${port}`, out: s.out, ms: Date.now() - t0 };
      }
      const cli = await vm.sh(q(clientArgs('guest')), t.secs);
      client = { side: 'kernel', rc: cli.rc, out: cli.out };
      if (cli.rc !== 0) setTimeout(() => srv.kill(), 3000);
      const s = await srv.done;
      server = { side: 'verbslab', rc: s.code, out: s.out };
    }
  } finally {
    await vm.stopDump().catch(() => {});
  }
  const problems = [];
  if (c.fam === 'mixed') {
    // ibv_rc_pingpong's server moves its QP to RTR before it answers: the refusal ends both sides
    if (!/Failed to modify QP to RTR/.test(server.out)) problems.push(`server (${server.side}) did not refuse RTR`);
    if (server.rc === 0 || client.rc === 0) problems.push(`exit status server ${server.rc}, client ${client.rc}: expected both non-zero`);
    return {
      ok: problems.length === 0, ms: Date.now() - t0, pcap: path.relative(root, pcap),
      detail: problems.join('; ') || `the ${server.side} server refused RTR (sgid IPv4, dgid IPv6)`,
      out: `--- server (${server.side})\n${server.out}\n--- client (${client.side})\n${client.out}`,
    };
  }
  for (const [role, r] of [['server', server], ['client', client]]) {
    if (r.rc !== 0) problems.push(`${role} (${r.side}) exited ${r.rc === 137 || r.rc === -1 ? `${r.rc}: killed at the timeout` : r.rc}`);
    for (const p of t.check(r.out)) problems.push(`${role} (${r.side}): ${p}`);
  }
  const ms = Date.now() - t0;
  return {
    ok: problems.length === 0, ms, pcap: path.relative(root, pcap),
    detail: problems.join('; ') || t.fig(client.out) || 'ok',
    out: `--- server (${server.side})\n${server.out}\n--- client (${client.side})\n${client.out}`,
  };
}

async function setup() {
  fs.mkdirSync(OUT, { recursive: true });
  const t0 = Date.now();
  const cache = ensureCache({ log });
  const cacheS = (Date.now() - t0) / 1000;
  log(`interop: guest image ${cache.pkg} ${cache.version} (${cache.built ? `built in ${cacheS.toFixed(1)} s` : 'cached'})`);
  // the host side's libraries, incrementally: libibverbs, and librdmacm where this tree has it
  const build = await import('../build.mjs');
  await (build.buildLibrdmacm ?? build.buildLibverbs)();
  const ns = new Netns().create();
  const vm = new Vm({ cache, netns: ns, outDir: OUT });
  const env = { ns, vm, cache, cacheSeconds: cacheS };
  env.bootSeconds = await vm.boot();
  log(`interop: guest booted in ${env.bootSeconds.toFixed(1)} s (namespace ${ns.name}, tap ${ns.tap})`);
  const net = await vm.sh([
    `/usr/sbin/ip addr add ${NET.guestV4}/${NET.prefixV4} dev eth0`,
    `/usr/sbin/ip -6 addr add ${NET.guestV6}/${NET.prefixV6} dev eth0 nodad`,
    '/usr/sbin/ip link set eth0 up',
    'rdma link add rxe0 type rxe netdev eth0',
    `ping -c 1 -W 5 ${NET.hostV4} >/dev/null && ping -c 1 -W 5 ${NET.hostV6} >/dev/null || echo "no ping"`,
    'ibv_devinfo -v',
  ].join(' && '), 60);
  if (net.rc !== 0 || /no ping/.test(net.out)) throw new Error(`guest network setup failed (rc ${net.rc}):\n${net.out}`);
  const hostInfo = await hostRun(ns, ['ibv_devinfo', '-v'], { timeoutMs: 30_000 }).done;
  if (hostInfo.code !== 0) throw new Error(`verbslab exec ibv_devinfo -v on ${ns.tap} failed:\n${hostInfo.out}`);
  const pick = (text, who) => {
    const g = parseGids(text);
    const v4 = g.find((x) => x.gid.startsWith('::ffff:'));
    const v6 = g.find((x) => !x.gid.startsWith('::ffff:') && !x.gid.startsWith('fe80:'));
    if (!v4 || !v6) throw new Error(`${who}: no IPv4-mapped or no global IPv6 GID in:\n${text}`);
    return { ipv4: v4.index, ipv6: v6.index, table: g };
  };
  env.gids = { guest: pick(net.out, 'kernel rxe0'), host: pick(hostInfo.out, 'verbslab on the tap') };
  log(`interop: GIDs kernel rxe0 ${env.gids.guest.table.map((x) => `${x.index}=${x.gid}`).join(' ')}; verbslab ${env.gids.host.table.map((x) => `${x.index}=${x.gid}`).join(' ')}`);
  return env;
}

async function main() {
  const t0 = Date.now();
  let cases = matrix();
  if (SUBSET) cases = cases.filter((c) => SUBSET_NAMES.includes(c.name));
  if (ONLY.length) cases = cases.filter((c) => ONLY.some((s) => c.name.includes(s)));
  const results = [];
  let env = null;
  try {
    env = await setup();
    for (const c of cases) {
      if (c.cm && !rdmacmBuilt()) {
        results.push({ name: c.name, ok: null, detail: 'skipped: librdmacm not built' });
        log(`SKIP ${c.name.padEnd(42)} ${results.at(-1).detail}`);
        continue;
      }
      let r;
      try { r = await runCase(env, c); } catch (e) { r = { ok: false, detail: `harness: ${e.message.split('\n')[0]}`, out: e.message, ms: 0 }; }
      results.push({ name: c.name, ...r });
      log(`${r.ok ? 'PASS' : 'FAIL'} ${c.name.padEnd(42)} ${(r.ms / 1000).toFixed(1).padStart(5)} s  ${r.detail}`);
      if (!r.ok && !JSON_OUT) log(r.out.split('\n').slice(-40).map((l) => `     | ${l}`).join('\n'));
      fs.writeFileSync(path.join(OUT, `${c.name.replace(/[^\w.-]+/g, '_')}.log`), r.out ?? '');
    }
  } catch (e) {
    results.push({ name: 'setup', ok: false, detail: e.message.split('\n')[0], out: e.message });
    log(`FAIL setup: ${e.message}`);
  } finally {
    env?.vm.kill();
    env?.ns.close();
  }
  const passed = results.filter((r) => r.ok === true).length;
  const failed = results.filter((r) => r.ok === false).length;
  const skipped = results.filter((r) => r.ok === null).length;
  const secs = (Date.now() - t0) / 1000;
  const summary = {
    passed, failed, skipped, seconds: Math.round(secs), cacheSeconds: env?.cacheSeconds, bootSeconds: env?.bootSeconds,
    kernel: env ? `${env.cache.pkg} ${env.cache.version}` : null,
    cases: results.map(({ out, ...r }) => r),
  };
  if (JSON_OUT) console.log(JSON.stringify(summary));
  else console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} (${secs.toFixed(0)} s)`);
  process.exit(failed ? 1 : 0);
}

await main();
