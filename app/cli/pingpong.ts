// `verbslab pingpong [HOST]`: rdma-core's ibv_rc_pingpong on the software device over real UDP (RoCEv2), as server
// (no HOST) or client. Builds and runs the native program build/native/vl_pingpong (native/tools/vl_pingpong.cpp),
// passing the options through: -p -d -i -s -m -r -n -l -e -g as in ibv_rc_pingpong, plus --bind, --udp-port,
// --peer-udp-port, --pcap.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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
  return new Promise<number>((resolve) => {
    const child = spawn(bin, argv, { stdio: 'inherit' });
    const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
    const onInt = forward('SIGINT');
    const onTerm = forward('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    child.on('error', (e) => { console.error(`verbslab pingpong: ${e.message}`); resolve(1); });
    child.on('exit', (code, signal) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(code ?? (signal ? 128 + 15 : 1));
    });
  });
}
