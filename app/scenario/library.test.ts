// The whole scenario library (scenarios/*.json and labs/*/scenarios/*.json) passes headless on the software device, and
// running a scenario twice with the same seed gives the same digest.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseScenarioText } from './load.ts';
import { ScenarioRun, runScenario } from './run.ts';
import { REPO_ROOT, libraryFiles } from './library.ts';
import { executorFactory } from './testlib.ts';

const files = libraryFiles().map((f) => path.relative(REPO_ROOT, f));
const dir = REPO_ROOT;

const factory = await executorFactory('scenario library tests');

describe('scenario library (software device)', () => {
  it('has scenarios', () => { expect(files.length).toBeGreaterThan(0); });
  for (const f of files) {
    it(f, () => {
      const text = fs.readFileSync(path.join(dir, f), 'utf8');
      const ex = factory(1);
      try {
        const rep = runScenario(text, ex, { file: f });
        const failed = rep.steps.find((s) => !s.ok);
        expect(rep.failure ?? 'passed', failed ? JSON.stringify({ result: failed.result, error: failed.error }).slice(0, 800) : '').toBe('passed');
        expect(rep.passed).toBe(true);
        expect(rep.stepsRun).toBe(rep.stepsTotal);
      } finally { ex.close(); }
    });
  }

  it('same file and seed twice -> same digest; one more step -> another digest', () => {
    for (const f of files) {
      const loaded = parseScenarioText(fs.readFileSync(path.join(dir, f), 'utf8'), f);
      if (!loaded.ok) throw new Error(loaded.error.message);
      const digest = (seed: number, mutate = false) => {
        const ex = factory(seed);
        try {
          const sc = structuredClone(loaded.scenario);
          if (mutate) sc.steps.push({ cmd: 'buffer.alloc', args: { length: 64 } });
          return new ScenarioRun(sc, ex, { seed }).run().digest;
        } finally { ex.close(); }
      };
      const a = digest(1), b = digest(1);
      expect(a, f).toMatch(/^[0-9a-f]{64}$/);
      expect(b, f).toBe(a);
      expect(digest(1, true), f).not.toBe(a);
    }
  });
});
