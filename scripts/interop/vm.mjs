// The interop suite's network and guest (docs/interop.md): a network namespace of its own with a tap device, Debian's
// kernel under qemu (TCG) on that tap, a control channel on the guest's second serial port and qemu's monitor for
// per-case packet captures (filter-dump). Nothing leaves the namespace; the namespace and the VM go at close().
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${(r.stderr || r.stdout || '').trim() || `exit ${r.status}`}`);
  return r.stdout;
}

// Addresses on the tap's link (the namespace is private, so fixed ones do not collide with anything): IPv4, a ULA
// IPv6 /64. Both ends get nodad (no 1-2 s wait for duplicate address detection on a link of two).
export const NET = {
  hostV4: '10.77.0.1', guestV4: '10.77.0.2', prefixV4: 24,
  hostV6: 'fd00:77::1', guestV6: 'fd00:77::2', prefixV6: 64,
  guestMac: '52:54:00:77:00:02',
};

/** A network namespace with a tap device in it; removed by close() (and by the exit hooks if the process dies). */
export class Netns {
  constructor() {
    this.name = `vlinterop-${process.pid}-${Math.random().toString(36).slice(2, 7)}`;
    this.tap = 'vltap0';
  }
  create() {
    run('ip', ['netns', 'add', this.name]);
    live.add(this);
    const ns = ['netns', 'exec', this.name];
    run('ip', [...ns, 'ip', 'link', 'set', 'lo', 'up']);
    run('ip', [...ns, 'ip', 'tuntap', 'add', 'dev', this.tap, 'mode', 'tap']);
    run('ip', [...ns, 'ip', 'addr', 'add', `${NET.hostV4}/${NET.prefixV4}`, 'dev', this.tap]);
    run('ip', [...ns, 'ip', '-6', 'addr', 'add', `${NET.hostV6}/${NET.prefixV6}`, 'dev', this.tap, 'nodad']);
    run('ip', [...ns, 'ip', 'link', 'set', this.tap, 'up']);
    return this;
  }
  /** argv prefix that runs a program inside the namespace */
  exec(argv) { return ['ip', 'netns', 'exec', this.name, ...argv]; }
  close() {
    if (!live.has(this)) return;
    live.delete(this);
    spawnSync('ip', ['netns', 'del', this.name], { stdio: 'ignore' });
  }
}
const live = new Set();
const vms = new Set();
function cleanupAll() {
  for (const v of vms) v.kill();
  for (const n of live) n.close();
}
process.on('exit', cleanupAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => { cleanupAll(); process.exit(128 + (sig === 'SIGINT' ? 2 : sig === 'SIGTERM' ? 15 : 1)); });

/** A line-oriented reader over a stream socket. */
class Lines {
  constructor(sock) {
    this.buf = '';
    this.waiters = [];
    this.closed = false;
    sock.setEncoding('utf8');
    sock.on('data', (d) => { this.buf += d.replace(/\r/g, ''); this.wake(); });
    sock.on('close', () => { this.closed = true; this.wake(); });
    sock.on('error', () => { this.closed = true; this.wake(); });
  }
  wake() { const w = this.waiters; this.waiters = []; for (const f of w) f(); }
  /** waits until pred(buf) returns a non-null value (or the deadline); returns it */
  async until(pred, ms, what) {
    const end = Date.now() + ms;
    for (;;) {
      const v = pred(this.buf);
      if (v != null) return v;
      if (this.closed) throw new Error(`${what}: the connection closed`);
      const left = end - Date.now();
      if (left <= 0) throw new Error(`${what}: no answer in ${ms} ms`);
      await new Promise((r) => { const t = setTimeout(r, left); this.waiters.push(() => { clearTimeout(t); r(); }); });
    }
  }
}

/** Debian's kernel under qemu TCG on the namespace's tap. */
export class Vm {
  constructor({ cache, netns, outDir, memMB = 768 }) {
    this.cache = cache;
    this.netns = netns;
    this.outDir = outDir;
    this.memMB = memMB;
    this.seq = 0;
    this.dumps = 0;
    this.tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vlinterop-'));
    this.consoleLog = path.join(outDir, 'guest-console.log');
  }

  async boot({ timeoutMs = 120_000 } = {}) {
    const t0 = Date.now();
    const ctl = path.join(this.tmp, 'ctl.sock');
    const mon = path.join(this.tmp, 'mon.sock');
    const args = [
      '-accel', 'tcg', '-m', String(this.memMB), '-smp', '1', '-nodefaults', '-no-user-config', '-display', 'none',
      '-kernel', this.cache.kernel, '-initrd', this.cache.initrd,
      '-append', 'console=ttyS0 panic=-1 no_timer_check loglevel=4 quiet',
      '-no-reboot',
      '-serial', `file:${this.consoleLog}`,
      '-device', 'virtio-serial-pci', '-chardev', `socket,id=ctl,path=${ctl},server=on,wait=on`, '-device', 'virtconsole,chardev=ctl',
      '-chardev', `socket,id=mon,path=${mon},server=on,wait=off`, '-mon', 'chardev=mon,mode=readline',
      '-netdev', `tap,id=n0,ifname=${this.netns.tap},script=no,downscript=no,vnet_hdr=off`,
      '-device', `virtio-net-pci,netdev=n0,mac=${NET.guestMac}`,
    ];
    this.qemuLog = '';
    this.proc = spawn(this.netns.exec(['qemu-system-x86_64', ...args])[0], this.netns.exec(['qemu-system-x86_64', ...args]).slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    vms.add(this);
    this.exited = null;
    this.proc.stdout.on('data', (d) => { this.qemuLog += d; });
    this.proc.stderr.on('data', (d) => { this.qemuLog += d; });
    this.proc.on('exit', (code, sig) => { this.exited = sig ?? code; });
    // qemu waits for the control connection (wait=on) before it runs the guest: nothing the guest writes is lost
    this.ctl = await this.connect(ctl, 'control socket');
    this.lines = new Lines(this.ctl);
    this.mon = await this.connect(mon, 'monitor socket');
    this.monLines = new Lines(this.mon);
    await this.monLines.until((b) => (b.includes('(qemu)') ? true : null), 10_000, 'qemu monitor');
    try {
      await this.lines.until((b) => (b.includes('@@READY\n') ? true : null), timeoutMs, 'guest boot');
    } catch (e) {
      throw new Error(`${e.message}\n--- guest console (tail)\n${this.consoleTail()}\n--- qemu\n${this.qemuLog}`);
    }
    this.lines.buf = this.lines.buf.slice(this.lines.buf.indexOf('@@READY\n') + 8);
    this.bootSeconds = (Date.now() - t0) / 1000;
    return this.bootSeconds;
  }

  async connect(sock, what) {
    const end = Date.now() + 20_000;
    for (;;) {
      if (this.exited !== null) throw new Error(`qemu exited (${this.exited}) before its ${what} was up:\n${this.qemuLog}`);
      if (fs.existsSync(sock)) {
        const s = await new Promise((resolve) => {
          const c = net.connect(sock);
          c.once('connect', () => resolve(c));
          c.once('error', () => resolve(null));
        });
        if (s) return s;
      }
      if (Date.now() > end) throw new Error(`qemu: no ${what} after 20 s:\n${this.qemuLog}`);
      await sleep(50);
    }
  }

  consoleTail(n = 40) {
    try { return fs.readFileSync(this.consoleLog, 'utf8').split('\n').slice(-n).join('\n'); } catch { return '(no console log)'; }
  }

  /** Runs a shell script in the guest; resolves { rc, out }. The guest kills it after timeoutS (rc 137). */
  async sh(script, timeoutS = 30, attempt = 0) {
    if (this.exited !== null) throw new Error(`the guest is gone (qemu exited ${this.exited})`);
    const id = `c${++this.seq}`;
    this.ctl.write(`${id} ${timeoutS} ${Buffer.from(script).toString('base64')}\n`);
    const begin = `@@BEGIN ${id}\n`;
    const endRe = new RegExp(`\\n@@END ${id} (\\d+)\\n`);
    let bad = false;
    try {
      const r = await this.lines.until((b) => {
        const k = b.indexOf('@@BAD\n');
        if (k >= 0 && b.indexOf(begin) < 0) { this.lines.buf = b.slice(k + 6); bad = true; return {}; }
        const i = b.indexOf(begin);
        if (i < 0) return null;
        const m = endRe.exec(b.slice(i + begin.length - 1));
        if (!m) return null;
        const out = b.slice(i + begin.length, i + begin.length - 1 + m.index).replace(/\n$/, '');
        this.lines.buf = b.slice(i + begin.length - 1 + m.index + m[0].length);
        return { rc: Number(m[1]), out };
      }, timeoutS * 1000 + 15_000, `guest command ${id}`);
      if (!bad) return r;
      // the request arrived damaged and was not run: send it again (a few times at most)
      if (attempt >= 3) throw new Error(`guest command ${id}: the request arrived damaged ${attempt + 1} times`);
      return this.sh(script, timeoutS, attempt + 1);
    } catch (e) {
      const pending = this.lines.buf.slice(-600);
      throw new Error(`${e.message} (script: ${script.slice(0, 200)})\n--- control channel, unread (tail)\n${pending}\n--- guest console (tail)\n${this.consoleTail(15)}`);
    }
  }

  /** Starts a program in the guest in the background; wait() gives { rc, out } once it ended (or was killed). */
  async spawn(cmd, timeoutS) {
    const j = `j${++this.seq}`;
    // niceness 10 (busybox renice; it has no nice): a peer spinning on its CQ (the pingpongs, perftest) must not
    // starve the control loop on the one vCPU
    const inner = `renice -n 10 -p $$ >/dev/null 2>&1; ${cmd}`;
    const r = await this.sh(`( timeout -s KILL ${timeoutS} sh -c '${inner.replace(/'/g, `'\\''`)}' > /tmp/${j}.out 2>&1 </dev/null; echo $? > /tmp/${j}.rc ) >/dev/null 2>&1 &\necho started`, 10);
    if (r.rc !== 0) throw new Error(`guest: could not start ${cmd}: ${r.out}`);
    return {
      done: async () => (await this.sh(`[ -f /tmp/${j}.rc ]`, 5)).rc === 0,
      wait: async (ms) => {
        const end = Date.now() + ms;
        while (Date.now() < end) {
          const r2 = await this.sh(`[ -f /tmp/${j}.rc ] && { cat /tmp/${j}.rc; cat /tmp/${j}.out; }`, 10);
          if (r2.rc === 0) {
            const nl = r2.out.indexOf('\n');
            return { rc: Number(nl < 0 ? r2.out : r2.out.slice(0, nl)), out: nl < 0 ? '' : r2.out.slice(nl + 1) };
          }
          await sleep(300);
        }
        const r3 = await this.sh(`cat /tmp/${j}.out`, 10);
        return { rc: -1, out: `${r3.out}\n[still running after ${ms} ms]` };
      },
      output: async () => (await this.sh(`cat /tmp/${j}.out`, 10)).out,
    };
  }

  /** An HMP command on qemu's monitor; resolves its output. */
  async monitor(cmd) {
    this.monLines.buf = '';
    this.mon.write(`${cmd}\n`);
    const out = await this.monLines.until((b) => {
      const i = b.lastIndexOf('(qemu)');
      return i > b.indexOf(cmd) && b.indexOf(cmd) >= 0 ? b.slice(b.indexOf(cmd) + cmd.length, i).trim() : null;
    }, 10_000, `monitor: ${cmd}`);
    return out.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').trim();
  }

  /** Starts recording the guest's frames into file (pcap); stopDump() closes it. */
  async startDump(file) {
    const id = `dump${++this.dumps}`;
    const out = await this.monitor(`object_add filter-dump,id=${id},netdev=n0,file=${file}`);
    if (out) throw new Error(`filter-dump: ${out}`);
    this.dumpId = id;
  }
  async stopDump() {
    if (!this.dumpId) return;
    const id = this.dumpId;
    this.dumpId = null;
    await this.monitor(`object_del ${id}`);
  }

  kill() {
    vms.delete(this);
    try { this.ctl?.destroy(); this.mon?.destroy(); } catch { /* gone */ }
    if (this.proc && this.exited === null) this.proc.kill('SIGKILL');
    fs.rmSync(this.tmp, { recursive: true, force: true });
  }
}
