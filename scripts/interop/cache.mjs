// The interop suite's guest image (docs/interop.md): Debian's own kernel (linux-image-6.1.0-N-amd64, the one
// linux-image-amd64 depends on) and a busybox initramfs with the modules Soft-RoCE needs and the host's Debian
// RDMA userspace. Built once into build/interop-cache/<kernel release>-<content hash>/ and reused.
//   node scripts/interop/cache.mjs [--force]     builds (or finds) the cache and prints its directory
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '..', '..');
export const CACHE_ROOT = process.env.VERBSLAB_INTEROP_CACHE || path.join(root, 'build', 'interop-cache');

// Debian packages the suite needs on the host: qemu, busybox for the initramfs, cpio to pack it, kmod's depmod /
// modprobe to resolve module dependencies, and the userspace copied into the guest (also run on the host side).
export const HOST_PACKAGES = {
  'qemu-system-x86_64': 'qemu-system-x86', cpio: 'cpio', depmod: 'kmod', ibv_rc_pingpong: 'ibverbs-utils',
  rping: 'rdmacm-utils', ib_write_bw: 'perftest', rdma: 'iproute2', tc: 'iproute2',
};
const BUSYBOX = '/bin/busybox';               // busybox-static: a static busybox (the dynamic one is /bin/busybox too)
const RXE_DRIVER = '/etc/libibverbs.d/rxe.driver';

// Modules loaded in the guest, in this order (each with its dependencies, modprobe --show-depends). crc32_generic:
// rxe computes its ICRC through the crypto API's "crc32", whose accelerated crc32-pclmul does not load under TCG.
export const GUEST_MODULES = ['virtio_pci', 'virtio_net', 'virtio_console', 'crc32_generic', 'rdma_rxe', 'ib_uverbs', 'rdma_cm', 'rdma_ucm', 'sch_netem'];
// The userspace copied into the guest, by name on the host's PATH.
export const GUEST_PROGRAMS = [
  'ibv_devices', 'ibv_devinfo', 'ibv_rc_pingpong', 'ibv_ud_pingpong', 'ibv_uc_pingpong', 'ibv_srq_pingpong',
  'rping', 'ucmatose', 'udaddy', 'ib_write_bw', 'ib_read_bw', 'ib_send_bw', 'ib_write_lat', 'ib_atomic_bw',
  'rdma', 'ip', 'tc',
];

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status ?? r.signal}\n${r.stderr ?? ''}`);
  return r.stdout;
}
const which = (p) => spawnSync('sh', ['-c', `command -v ${p}`], { encoding: 'utf8' }).stdout.trim();

/** The Debian packages the suite needs that this host lacks. */
export function missingHostPackages() {
  const missing = new Set();
  for (const [prog, pkg] of Object.entries(HOST_PACKAGES)) if (!which(prog)) missing.add(pkg);
  // busybox-static's binary is /bin/busybox; the dynamic busybox package has the same path
  if (!fs.existsSync(BUSYBOX) || spawnSync('ldd', [BUSYBOX], { encoding: 'utf8' }).status === 0) missing.add('busybox-static');
  if (!fs.existsSync(RXE_DRIVER)) missing.add('ibverbs-providers');
  return [...missing];
}

/** Missing Debian packages: installed with apt-get when root, else a clear message (as scripts/test.mjs). */
export function ensureHostPackages() {
  const list = missingHostPackages();
  if (!list.length) return;
  if (process.getuid?.() === 0 && which('apt-get')) {
    console.error(`interop: installing Debian packages: ${list.join(' ')}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    let r = spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
    if (r.status === 0) r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...list], { stdio: 'inherit', env });
    if (r.status !== 0) throw new Error(`apt-get install ${list.join(' ')} failed`);
    return;
  }
  throw new Error(`interop: missing Debian packages: ${list.join(', ')}. Install them with: sudo apt-get update && sudo apt-get install -y ${list.join(' ')}`);
}

/** The kernel image package to use: the one linux-image-amd64's candidate depends on (a 6.1 image with rdma_rxe). */
export function kernelPackage() {
  if (process.env.VERBSLAB_INTEROP_KERNEL) return process.env.VERBSLAB_INTEROP_KERNEL;
  const deps = sh('apt-cache', ['depends', '--no-recommends', '--no-suggests', 'linux-image-amd64']);
  const m = /Depends:\s+(linux-image-[0-9.]+-\d+-amd64)\b/.exec(deps);
  if (m) return m[1];
  // no metapackage candidate: the newest linux-image-6.1.0-N-amd64 the archive knows (never -cloud / -rt)
  const names = sh('apt-cache', ['pkgnames', 'linux-image-6.1.0-']).split('\n').filter((n) => /^linux-image-6\.1\.0-\d+-amd64$/.test(n));
  names.sort((a, b) => Number(/-(\d+)-amd64/.exec(a)[1]) - Number(/-(\d+)-amd64/.exec(b)[1]));
  if (!names.length) throw new Error('interop: apt knows no linux-image-6.1.0-N-amd64 (apt-get update?)');
  return names.at(-1);
}

/** ldd's list of shared objects for a file (absolute paths, the loader included). */
function lddPaths(file) {
  const r = spawnSync('ldd', [file], { encoding: 'utf8' });
  if (r.status !== 0) return [];
  const out = [];
  for (const line of r.stdout.split('\n')) {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s+(\/\S+)\s+\(/.exec(line);
    if (m) out.push(m[1]);
  }
  return out;
}

// The guest's /init: mounts, loads the modules, hands the virtio console hvc0 to the control loop (ctl.sh). The
// kernel console is ttyS0 (a log file on the host). (A 16550 port lost request bytes while a peer kept the one vCPU
// busy; virtio-serial's rings have no FIFO to overrun.)
const INIT = `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /tmp /run /var/run
while read -r m; do insmod "/modules/$m" || echo "interop-init: insmod $m failed"; done </modules/order
ip link set lo up
n=0; while [ ! -c /dev/hvc0 ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done
stty -F /dev/hvc0 raw -echo -echoe -echok -echoctl -echoke
echo "interop-init: control loop on hvc0"
exec /ctl.sh </dev/hvc0 >/dev/hvc0 2>&1
`;

// The control loop: each request is one line "ID TIMEOUT BASE64" (a shell script); the reply is "@@BEGIN ID", its
// output, "@@END ID RC" (RC 137 when the guest-side timeout killed it). A line that is not of that form is not run:
// the reply is "@@BAD" and the host sends the request again. Requests run one at a time; long-running peers are
// started in the background by the script itself (scripts/interop/vm.mjs, Vm.spawn).
const CTL = `#!/bin/busybox sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
echo "@@READY"
while read -r id tmo b64; do
  [ -n "$id" ] || continue
  case "$id:$tmo" in c[0-9]*:[0-9]*) ;; *) echo "@@BAD"; continue ;; esac
  echo "$b64" | base64 -d > /tmp/cmd.$id 2>/dev/null || { echo "@@BEGIN $id"; echo "bad request"; echo "@@END $id 254"; continue; }
  timeout -s KILL "$tmo" sh /tmp/cmd.$id > /tmp/out.$id 2>&1 </dev/null
  rc=$?
  echo "@@BEGIN $id"
  cat /tmp/out.$id
  echo ""
  echo "@@END $id $rc"
  rm -f /tmp/cmd.$id /tmp/out.$id
done
`;

function contentHash(pkg) {
  const h = crypto.createHash('sha256');
  h.update(pkg); h.update(INIT); h.update(CTL); h.update(GUEST_MODULES.join(',')); h.update(GUEST_PROGRAMS.join(','));
  h.update(fs.readFileSync(fileURLToPath(import.meta.url)));
  return h.digest('hex').slice(0, 12);
}

/**
 * Finds or builds the cache. Returns { dir, kernel, initrd, release, pkg, built, seconds }.
 */
export function ensureCache({ force = false, log = (m) => console.error(m) } = {}) {
  ensureHostPackages();
  const pkg = kernelPackage();
  const release = pkg.replace(/^linux-image-/, '');
  const dir = path.join(CACHE_ROOT, `${release}-${contentHash(pkg)}`);
  const meta = path.join(dir, 'meta.json');
  if (!force && fs.existsSync(meta)) return { ...JSON.parse(fs.readFileSync(meta, 'utf8')), dir, built: false, seconds: 0 };
  const t0 = Date.now();
  log(`interop: building the guest image for ${pkg} in ${path.relative(root, dir)}`);
  fs.rmSync(dir, { recursive: true, force: true });
  // images of this release built by an older builder are stale: remove them
  for (const d of fs.existsSync(CACHE_ROOT) ? fs.readdirSync(CACHE_ROOT) : []) {
    if (d.startsWith(`${release}-`)) fs.rmSync(path.join(CACHE_ROOT, d), { recursive: true, force: true });
  }
  const work = path.join(dir, 'work');
  fs.mkdirSync(work, { recursive: true });
  // 1. the kernel package, unpacked (not installed)
  sh('apt-get', ['download', pkg], { cwd: work });
  const deb = fs.readdirSync(work).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'));
  if (!deb) throw new Error(`interop: apt-get download ${pkg} left no .deb`);
  const version = /_([^_]+)_amd64\.deb$/.exec(deb)?.[1] ?? '?';
  const kx = path.join(work, 'kx');
  sh('dpkg', ['-x', path.join(work, deb), kx]);
  const vmlinuz = path.join(kx, 'boot', `vmlinuz-${release}`);
  if (!fs.existsSync(vmlinuz)) throw new Error(`interop: ${deb} has no boot/vmlinuz-${release}`);
  sh('depmod', ['-b', kx, release]);
  // 2. the initramfs tree
  const rd = path.join(work, 'rd');
  for (const d of ['bin', 'sbin', 'usr/bin', 'usr/sbin', 'proc', 'sys', 'dev', 'tmp', 'etc/libibverbs.d', 'modules', 'lib64', 'lib/x86_64-linux-gnu', 'usr/lib/x86_64-linux-gnu/libibverbs']) {
    fs.mkdirSync(path.join(rd, d), { recursive: true });
  }
  fs.copyFileSync(BUSYBOX, path.join(rd, 'bin', 'busybox'));
  fs.chmodSync(path.join(rd, 'bin', 'busybox'), 0o755);
  const order = [];
  for (const m of GUEST_MODULES) {
    const dep = sh('modprobe', ['-d', kx, '-S', release, '--show-depends', m]);
    for (const line of dep.split('\n')) {
      const ko = /^insmod\s+(\S+\.ko)/.exec(line)?.[1];
      if (!ko) continue;                           // "builtin X": nothing to load
      const base = path.basename(ko);
      if (order.includes(base)) continue;
      fs.copyFileSync(ko, path.join(rd, 'modules', base));
      order.push(base);
    }
  }
  fs.writeFileSync(path.join(rd, 'modules', 'order'), order.join('\n') + '\n');
  const libs = new Set();
  const copyAt = (src, dst = src) => {
    const to = path.join(rd, dst);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(fs.realpathSync(src), to);
    fs.chmodSync(to, 0o755);
  };
  const programs = {};
  for (const p of GUEST_PROGRAMS) {
    const at = which(p);
    if (!at) throw new Error(`interop: ${p} is not on this host's PATH`);
    const dst = path.join(/sbin\//.test(at) ? '/usr/sbin' : '/usr/bin', p);
    copyAt(at, dst);
    programs[p] = dst;
    for (const l of lddPaths(at)) libs.add(l);
  }
  // the rxe provider (dlopened by libibverbs: not in ldd), its libraries, libgcc_s (rping: pthread_cancel unwinds)
  const provDir = '/usr/lib/x86_64-linux-gnu/libibverbs';
  const prov = fs.readdirSync(provDir).find((f) => /^librxe-rdmav\d+\.so$/.test(f));
  if (!prov) throw new Error(`interop: no librxe-rdmav*.so in ${provDir} (ibverbs-providers)`);
  copyAt(path.join(provDir, prov));
  for (const l of lddPaths(path.join(provDir, prov))) libs.add(l);
  const gcc = lddPaths(which('ibv_devinfo')).find((l) => /libgcc_s/.test(l)) ?? ['/lib/x86_64-linux-gnu/libgcc_s.so.1', '/usr/lib/x86_64-linux-gnu/libgcc_s.so.1'].find((f) => fs.existsSync(f));
  if (gcc) libs.add(gcc);
  for (const l of libs) copyAt(l);
  fs.copyFileSync(RXE_DRIVER, path.join(rd, RXE_DRIVER));
  fs.writeFileSync(path.join(rd, 'etc', 'passwd'), 'root:x:0:0:root:/:/bin/sh\n');
  fs.writeFileSync(path.join(rd, 'etc', 'group'), 'root:x:0:\n');
  fs.writeFileSync(path.join(rd, 'etc', 'hosts'), '127.0.0.1 localhost\n');
  fs.writeFileSync(path.join(rd, 'init'), INIT, { mode: 0o755 });
  fs.writeFileSync(path.join(rd, 'ctl.sh'), CTL, { mode: 0o755 });
  // 3. pack: newc cpio, gzip (the kernel's own decompressor)
  const initrd = path.join(dir, 'initrd.img');
  sh('sh', ['-c', `cd '${rd}' && find . | cpio -o -H newc --quiet | gzip -1 > '${initrd}'`]);
  fs.copyFileSync(vmlinuz, path.join(dir, 'vmlinuz'));
  const info = {
    pkg, version, release, kernel: path.join(dir, 'vmlinuz'), initrd, modules: order, programs: Object.keys(programs),
    provider: prov, builtAt: new Date().toISOString(), buildSeconds: Math.round((Date.now() - t0) / 100) / 10,
  };
  fs.rmSync(work, { recursive: true, force: true });
  fs.writeFileSync(meta, JSON.stringify(info, null, 2) + '\n');
  log(`interop: guest image ready (${info.buildSeconds} s, initramfs ${(fs.statSync(initrd).size / 1e6).toFixed(1)} MB)`);
  return { ...info, dir, built: true, seconds: info.buildSeconds };
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const c = ensureCache({ force: process.argv.includes('--force') });
    console.log(JSON.stringify({ dir: c.dir, pkg: c.pkg, version: c.version, built: c.built, seconds: c.seconds }));
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
