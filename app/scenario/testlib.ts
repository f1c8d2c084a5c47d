// Shared by the tests: a library scenario by file name, and executors on the real software device. A suite that
// needs the native addon fails when it is missing (it never turns into skips): scripts/test.mjs counts skips and
// fails on any outside scripts/skips.mjs.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseScenarioText } from './load.ts';
import { libraryFile } from './library.ts';
import type { Scenario } from '../protocol/scenario.ts';
import type { Executor } from '../host/api.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A library scenario (scenarios/ or labs/<id>/scenarios/) by file name, loaded and validated (throws the load error). */
export function loadLibrary(file: string): Scenario {
  const r = parseScenarioText(fs.readFileSync(libraryFile(file), 'utf8'), file);
  if (!r.ok) throw new Error(r.error.message);
  return r.scenario;
}

/** The native module (app/host/executor.ts) with a session opened and closed once; throws a readable error naming
 *  `what` when the addon cannot be loaded, so the test file fails instead of skipping. */
export async function needAddon(what: string): Promise<typeof import('../host/executor.ts')> {
  const mod = await import('../host/executor.ts');
  try { new mod.NativeExecutor({ seed: 1 }).close(); } catch (e) {
    const why = (e as Error).message.split('\n')[0]!;
    throw new Error(`${what} need the native addon: ${why}${why.includes('build.mjs') ? '' : ' (build it: node scripts/build.mjs addon)'}`);
  }
  return mod;
}

/** A factory of executors over the native addon (`what`: the tests that need it; see needAddon). */
export async function executorFactory(what: string): Promise<(seed: number) => Executor> {
  const mod = await needAddon(what);
  return (seed: number) => mod.createExecutor({ seed });
}
