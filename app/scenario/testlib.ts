// Shared by the scenario runner's tests: a library scenario by file name, and executors on the real software device
// when the native addon is built (undefined otherwise, with the reason printed once, so the tests can skip).
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

/** A factory of executors over the native addon, or undefined when it cannot be loaded (`what`: the skipped tests). */
export async function executorFactory(what: string): Promise<((seed: number) => Executor) | undefined> {
  try {
    const mod = await import('../host/executor.ts');
    const factory = (seed: number) => mod.createExecutor({ seed });
    factory(1).close();
    return factory;
  } catch (e) {
    console.warn(`SKIPPED ${what}: native addon not available (${(e as Error).message.split('\n')[0]}); build it with: node scripts/build.mjs addon`);
    return undefined;
  }
}
