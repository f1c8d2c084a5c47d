// Runs a program in the foreground of a `verbslab` command: stdio inherited, Ctrl-C / SIGTERM forwarded to it, and
// its exit status returned (128 + signal number when a signal ended it, as a shell reports it).
import { spawn } from 'node:child_process';
import os from 'node:os';

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
