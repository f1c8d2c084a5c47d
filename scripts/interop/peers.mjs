// The two sides of an interop case (docs/interop.md): a program on the host under `verbslab exec` inside the
// namespace (the project's libibverbs, its device on the tap), and a program in the guest on the kernel's rxe0.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { root } from './cache.mjs';

const CLI = path.join(root, 'app', 'cli', 'verbslab.mjs');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** TCP ports in LISTEN state in a /proc/net/tcp{,6} text */
export function listeningPorts(text) {
  const ports = new Set();
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols[3] === '0A' && /:[0-9A-F]{4}$/.test(cols[1] ?? '')) ports.add(parseInt(cols[1].slice(-4), 16));
  }
  return ports;
}

/**
 * A program on the host side: `ip netns exec NS node verbslab.mjs exec --no-build --iface TAP -- argv`, in its own
 * process group (killed as a whole at the timeout). Resolves { code, out, ms } at exit.
 */
export function hostRun(netns, argv, { timeoutMs, env = {} }) {
  const cmd = netns.exec([process.execPath, CLI, 'exec', '--no-build', '--iface', netns.tap, '--', ...argv]);
  const t0 = Date.now();
  const c = spawn(cmd[0], cmd.slice(1), { cwd: root, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  c.stdout.on('data', (d) => { out += d; });
  c.stderr.on('data', (d) => { out += d; });
  const done = new Promise((resolve) => {
    const t = setTimeout(() => { out += `\n[host side killed after ${timeoutMs} ms]`; try { process.kill(-c.pid, 'SIGKILL'); } catch { /* gone */ } }, timeoutMs);
    c.on('exit', (code, signal) => { clearTimeout(t); resolve({ code: code ?? -1, signal, out, ms: Date.now() - t0 }); });
    c.on('error', (e) => { clearTimeout(t); resolve({ code: 127, signal: null, out: String(e), ms: 0 }); });
  });
  return {
    pid: c.pid, done,
    kill: () => { try { process.kill(-c.pid, 'SIGKILL'); } catch { /* gone */ } },
    /** the host-side server listens on port (its own network namespace's /proc/PID/net/tcp) */
    async listening(port, ms) {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        let text = '';
        for (const f of ['tcp', 'tcp6']) try { text += fs.readFileSync(`/proc/${c.pid}/net/${f}`, 'utf8'); } catch { /* not yet */ }
        if (listeningPorts(text).has(port)) return true;
        if (await Promise.race([done.then(() => true), sleep(100).then(() => false)])) return false;
      }
      return false;
    },
  };
}

/** The guest side's server waits for a TCP port (its /proc/net/tcp{,6}). */
export async function guestListening(vm, port, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const r = await vm.sh('cat /proc/net/tcp /proc/net/tcp6', 10);
    if (listeningPorts(r.out).has(port)) return true;
    await sleep(200);
  }
  return false;
}

/** GID table lines "GID[ i]: gid, RoCE v2" of ibv_devinfo -v: [{ index, gid }] */
export function parseGids(text) {
  return [...text.matchAll(/GID\[\s*(\d+)\]:\s+([0-9a-f:.]+),\s*RoCE v2/g)].map((m) => ({ index: Number(m[1]), gid: m[2] }));
}
