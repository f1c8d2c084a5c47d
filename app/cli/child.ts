// Runs a program in the foreground of a `verbslab` command: stdio inherited, Ctrl-C / SIGTERM forwarded to it, and
// its exit status returned (128 + signal number when a signal ended it, as a shell reports it).
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// Builds what a command runs (scripts/build.mjs, incremental: nothing to do when up to date); false after saying why.
export async function buildFirst(cmd: string, target: 'buildTools' | 'buildLibverbs' | 'buildLibrdmacm'): Promise<boolean> {
  const build = await import(pathToFileURL(path.join(root, 'scripts', 'build.mjs')).href);
  try {
    await build[target]('release');
    return true;
  } catch (e) {
    console.error(`verbslab ${cmd}: build failed: ${(e as Error).message}`);
    return false;
  }
}

export function runForeground(cmd: string, bin: string, argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise<number>((resolve) => {
    const child = spawn(bin, argv, { stdio: 'inherit', env });
    const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
    const onInt = forward('SIGINT');
    const onTerm = forward('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    child.on('error', (e) => { console.error(`verbslab ${cmd}: ${bin}: ${e.message}`); resolve(127); });
    child.on('exit', (code, signal) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(code ?? 128 + (signal ? os.constants.signals[signal] ?? 15 : 1));
    });
  });
}
