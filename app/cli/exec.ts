// `verbslab exec [OPTIONS] -- PROGRAM ARGS`: runs an unmodified libibverbs / librdmacm program on the Verbs Lab
// software device. Builds build/libibverbs/libibverbs.so.1 (native/libibverbs, a libibverbs.so.1 with rdma-core's
// symbol versions over the device library, in process) and build/libibverbs/librdmacm.so.1 next to it
// (native/librdmacm, over the device's connection manager), and runs PROGRAM with that directory first in
// LD_LIBRARY_PATH, so the dynamic linker loads them instead of rdma-core's. The device goes on the network (RoCEv2
// over UDP port 4791) at the program's first ibv_open_device, or at the address its first rdma_bind_addr /
// rdma_resolve_addr names; see docs/libibverbs.md and docs/librdmacm.md.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFirst, runForeground } from './child.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const LIB_DIR = path.join(root, 'build', 'libibverbs');

export const USAGE = `usage: verbslab exec [OPTIONS] -- PROGRAM [ARGS...]
  runs PROGRAM (linked against libibverbs.so.1 and/or librdmacm.so.1) on the Verbs Lab software device
  --addr A.B.C.D     bind the device to this local address (default: the address the program's first
                     rdma_bind_addr / rdma_resolve_addr names, else the first free one of 127.0.0.1, .2, ...)
  --iface NAME       bind it to a host interface instead (GID table built from its addresses, as rxe)
  --profile NAME     device profile: rxe (default), cx, ib2a, iwarp, minimal
  --device NAME      device name (default vl<profile>0)
  --udp-port N       local RoCEv2 UDP port (default 4791); --peer-udp-port N: the peers' (default: the same)
  --any-ipv4-id      check the received ICRC with any IPv4 ID (a peer whose IP stack picks them: kernel rxe), not only
                     the IDs this device's framing writes (env VERBSLAB_IPV4_ID=any; =framing for the strict check).
                     Default: strict on loopback, any on a host interface or a non-loopback address
  --console[=WHERE]  stream the device to a running console (live view): WHERE is its session directory (default
                     ./.verbslab, where \`npm start\` keeps it) or its socket; same as env VERBSLAB_CONSOLE=WHERE
  --no-build         do not (re)build the library first
  --print-env        print the environment it would set, then exit
The program then sees one device; its GID 1 is ::ffff:<address> (ibv_rc_pingpong needs -g 1).`;

interface Opts { env: Record<string, string>; build: boolean; printEnv: boolean; argv: string[] }

const VALUED: Record<string, string> = {
  '--addr': 'VERBSLAB_ADDR', '--iface': 'VERBSLAB_IFACE', '--profile': 'VERBSLAB_PROFILE',
  '--device': 'VERBSLAB_DEVICE', '--udp-port': 'VERBSLAB_UDP_PORT', '--peer-udp-port': 'VERBSLAB_PEER_UDP_PORT',
};

export function parseArgs(args: string[]): Opts | string {
  const o: Opts = { env: {}, build: true, printEnv: false, argv: [] };
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (a === '--') { i++; break; }
    if (a === '--no-build') { o.build = false; continue; }
    if (a === '--print-env') { o.printEnv = true; continue; }
    if (a === '--any-ipv4-id') { o.env.VERBSLAB_IPV4_ID = 'any'; continue; }
    if (a === '--console' || a.startsWith('--console=')) {
      const where = a === '--console' ? '.verbslab' : a.slice('--console='.length);
      if (!where) return '--console=: needs a directory or a socket';
      o.env.VERBSLAB_CONSOLE = path.resolve(where);
      continue;
    }
    const [k, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    if (k in VALUED) {
      const v = inline ?? args[++i];
      if (v === undefined || v === '') return `${k}: needs a value`;
      if ((k === '--udp-port' || k === '--peer-udp-port') && !(/^\d+$/.test(v) && +v >= 1 && +v <= 65535)) return `${k}: '${v}' is not a UDP port (1..65535)`;
      o.env[VALUED[k]] = v;
      continue;
    }
    if (a.startsWith('-')) return `unknown option ${a}`;
    break;                                       // PROGRAM without "--"
  }
  o.argv = args.slice(i);
  if (!o.argv.length && !o.printEnv) return 'no PROGRAM given';
  return o;
}

export function libEnv(extra: Record<string, string>, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const ld = base.LD_LIBRARY_PATH ? `${LIB_DIR}:${base.LD_LIBRARY_PATH}` : LIB_DIR;
  return { ...base, ...extra, LD_LIBRARY_PATH: ld };
}

export async function main(args: string[]): Promise<number> {
  if (args[0] === '-h' || args[0] === '--help') { console.log(USAGE); return 0; }
  const o = parseArgs(args);
  if (typeof o === 'string') { console.error(`verbslab exec: ${o}\n${USAGE}`); return 2; }
  if (o.build && !(await buildFirst('exec', 'buildLibrdmacm'))) return 1;
  for (const lib of ['libibverbs.so.1', 'librdmacm.so.1']) {
    if (!fs.existsSync(path.join(LIB_DIR, lib))) {
      console.error(`verbslab exec: ${path.join(LIB_DIR, lib)} is not built (node scripts/build.mjs librdmacm)`);
      return 1;
    }
  }
  const where = o.env.VERBSLAB_CONSOLE;
  if (where && !o.printEnv && !fs.existsSync(fs.existsSync(where) && fs.statSync(where).isDirectory() ? path.join(where, 'console.sock') : where)) {
    console.error(`verbslab exec: no console listens at ${where} (start one with \`npm start\` in that directory's parent, or give --console=DIR)`);
    return 1;
  }
  const env = libEnv(o.env);
  if (o.printEnv) {
    console.error(`# ${LIB_DIR} holds libibverbs.so.1 and librdmacm.so.1`);
    for (const k of ['LD_LIBRARY_PATH', ...Object.keys(o.env)]) console.log(`${k}=${env[k]}`);
    return 0;
  }
  return runForeground('exec', o.argv[0], o.argv.slice(1), env);
}
