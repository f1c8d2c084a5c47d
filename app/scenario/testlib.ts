// Shared by the scenario runner's tests: a library scenario by file name, and executors on the real software device
// when the native addon is built (undefined otherwise, with the reason printed once, so the tests can skip).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseScenarioText } from './load.ts';
import { libraryFile } from './library.ts';
import type { Scenario } from '../protocol/scenario.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A library scenario (scenarios/ or labs/<id>/scenarios/) by file name, loaded and validated (throws the load error). */
export function loadLibrary(file: string): Scenario {
  const r = parseScenarioText(fs.readFileSync(libraryFile(file), 'utf8'), file);
  if (!r.ok) throw new Error(r.error.message);
  return r.scenario;
}

/** A factory of executors over the native addon, or undefined when it cannot be loaded (`what`: the skipped tests). */
export { nativeFactory as executorFactory } from '../host/testing.ts';
