// Where recorded scenarios live: scenarios/ (the general library; also the scenario JSON Schema) and each lab's
// labs/<id>/scenarios/. The runner takes any file or directory; tests and `npm test` walk these.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const GENERAL_SCENARIOS = path.join(REPO_ROOT, 'scenarios');
export const LABS_ROOT = path.join(REPO_ROOT, 'labs');

/** The scenario directories: scenarios/, then labs/<id>/scenarios/ by lab id. */
export function scenarioDirs(): string[] {
  const labs = fs.existsSync(LABS_ROOT) ? fs.readdirSync(LABS_ROOT).sort().map((id) => path.join(LABS_ROOT, id, 'scenarios')) : [];
  return [GENERAL_SCENARIOS, ...labs].filter((d) => fs.existsSync(d));
}
/** Every library scenario file (absolute paths; *.json except the JSON Schema), directory by directory, sorted. */
export function libraryFiles(): string[] {
  return scenarioDirs().flatMap((d) => fs.readdirSync(d).filter((f) => f.endsWith('.json') && !f.endsWith('.schema.json')).sort().map((f) => path.join(d, f)));
}
/** A library scenario by file name (wherever it lives). */
export function libraryFile(name: string): string {
  const f = libraryFiles().find((p) => path.basename(p) === name);
  if (!f) throw new Error(`no library scenario ${name} (in ${scenarioDirs().map((d) => path.relative(REPO_ROOT, d)).join(', ')})`);
  return f;
}
