// `verbslab pingpong [HOST]`: rdma-core's ibv_rc_pingpong on the software device over real UDP (RoCEv2), as server
// (no HOST) or client. Builds and runs the native program build/native/vl_pingpong (native/tools/vl_pingpong.cpp),
// passing the options through: -p -d -i -s -m -r -n -l -e -g as in ibv_rc_pingpong, plus --bind, --udp-port,
// --peer-udp-port, --pcap.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFirst, runForeground } from './child.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export async function main(argv: string[]): Promise<number> {
  const bin = path.join(root, 'build', 'native', 'vl_pingpong');
  if (!(await buildFirst('pingpong', 'buildTools'))) return 1;
  if (!fs.existsSync(bin)) {
    console.error(`verbslab pingpong: ${bin} was not built`);
    return 1;
  }
  return runForeground('pingpong', bin, argv);
}
