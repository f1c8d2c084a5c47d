// The two data paths of the in-process wire (docs/perf.md) are indistinguishable: every scenario of the library
// (scenarios/*.json and labs/*/scenarios/*.json), run once with DataPath 'strict' (every packet encoded, decoded and
// ICRC-checked) and once with 'fast' (headers carried, no receive-side decode / ICRC check), gives the same event
// digest (packet bytes included), the same result for every step, and the same bytes in every buffer it allocated.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runScenario } from './run.ts';
import { REPO_ROOT, libraryFiles } from './library.ts';
import { needAddon } from './testlib.ts';

const files = libraryFiles().map((f) => path.relative(REPO_ROOT, f));

const mod = await needAddon('data path equivalence tests');
const factory = (dataPath: 'fast' | 'strict') => mod.createExecutor({ seed: 1, dataPath });

interface Outcome { dataPath: string; digest: string; passed: boolean; events: number; packets: number; steps: string[]; memory: string[] }

function outcome(file: string, dataPath: 'fast' | 'strict'): Outcome {
  const ex = factory(dataPath);
  try {
    const rep = runScenario(fs.readFileSync(path.join(REPO_ROOT, file), 'utf8'), ex, { file, keepGoing: true });
    const memory: string[] = [];
    for (const s of rep.steps) {
      const r = s.result as { addr?: number | string; length?: number | string } | undefined;
      if (s.cmd !== 'buffer.alloc' || !s.ok || r?.addr === undefined) continue;
      const m = ex.native.read_memory(r.addr, Number(r.length));   // a freed buffer: the same error in both modes
      memory.push(m.err ? `${r.addr}: ${m.msg}` : `${r.addr}: ${Buffer.from(m.value!).toString('hex')}`);
    }
    const steps = rep.steps.map((s) => JSON.stringify({ cmd: s.cmd, ok: s.ok, result: s.result, error: s.error, failures: s.failures }));
    return { dataPath, digest: rep.digest, passed: rep.passed, events: rep.events, packets: rep.packets, steps, memory };
  } finally { ex.close(); }
}

describe('data paths: strict and fast give the same events, results and memory', () => {
  it('the session default is fast, and strict can be chosen', () => {
    const ex = factory('strict');
    try {
      expect(ex.native.data_path()).toBe('strict');
      expect(ex.native.set_data_path('fast').err).toBe(0);
      expect(ex.native.data_path()).toBe('fast');
      const bad = ex.native.set_data_path('quick' as 'fast');
      expect(bad.err).toBeGreaterThan(0);
      expect(bad.msg).toMatch(/fast \| strict/);
      expect(ex.native.data_path()).toBe('fast');
    } finally { ex.close(); }
  });

  for (const f of files) {
    it(f, () => {
      const strict = outcome(f, 'strict');
      const fast = outcome(f, 'fast');
      expect(strict.passed, `${f} fails in strict mode`).toBe(true);
      expect(strict.digest).toMatch(/^[0-9a-f]{64}$/);
      expect(fast.steps).toEqual(strict.steps);
      expect(fast.memory).toEqual(strict.memory);
      expect({ ...fast, dataPath: '' }).toEqual({ ...strict, dataPath: '' });
    });
  }
});
