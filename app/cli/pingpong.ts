// `verbslab pingpong [HOST]`: rdma-core's ibv_rc_pingpong on the software device over real UDP (RoCEv2), as server
// (no HOST) or client. Builds and runs the native program build/native/vl_pingpong (native/tools/vl_pingpong.cpp),
// passing the options through: -p -d -i -s -m -r -n -l -e -g as in ibv_rc_pingpong, plus --bind, --udp-port,
// --peer-udp-port, --pcap.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runForeground } from './child.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export async function main(argv: string[]): Promise<number> {
  const bin = path.join(root, 'build', 'native', 'vl_pingpong');
  const { buildTools } = await import(pathToFileURL(path.join(root, 'scripts', 'build.mjs')).href);
  try {
    await buildTools('release');
  } catch (e) {
    console.error(`verbslab pingpong: build failed: ${(e as Error).message}`);
    return 1;
  }
  if (!fs.existsSync(bin)) {
    console.error(`verbslab pingpong: ${bin} was not built`);
    return 1;
  }
  return runForeground('pingpong', bin, argv);
}
