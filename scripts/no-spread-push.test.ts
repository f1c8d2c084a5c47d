// Lint: no `push(...array)` / `unshift(...array)` anywhere in the TypeScript / JavaScript of the repo. Spreading an
// array into a call puts every element on the stack: a journal replay's 129 000 events in one batch threw
// "RangeError: Maximum call stack size exceeded" out of labs/cq/host.ts and the host never started (issue 29).
// Append in a loop instead: `for (const e of evs) out.push(e)`.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '..');
const DIRS = ['app', 'labs', 'renderer', 'scripts', 'e2e'];
const EXT = /\.(ts|tsx|mts|mjs|js)$/;
const SPREAD_CALL = /\.(push|unshift)\(\s*\.\.\./;

function* files(dir: string): Generator<string> {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (EXT.test(e.name)) yield p;
  }
}

describe('no push(...array)', () => {
  it('the pattern is found where it is written (the check can fail)', () => {
    expect(SPREAD_CALL.test('out.push(...evs);')).toBe(true);
    expect(SPREAD_CALL.test('q.unshift( ...more)')).toBe(true);
    expect(SPREAD_CALL.test('for (const e of evs) out.push(e);')).toBe(false);
  });

  it('appears in no source file', () => {
    const found: string[] = [];
    for (const d of DIRS) {
      if (!fs.existsSync(path.join(root, d))) continue;
      for (const f of files(path.join(root, d))) {
        if (f === __filename) continue;
        fs.readFileSync(f, 'utf8').split('\n').forEach((line, i) => {
          if (SPREAD_CALL.test(line) && !/^\s*(\/\/|\*)/.test(line)) found.push(`${path.relative(root, f)}:${i + 1}: ${line.trim()}`);
        });
      }
    }
    expect(found, `append in a loop instead:\n${found.join('\n')}`).toEqual([]);
  });
});
