// lab.json's SG steps hold: every sg.* command of the guided lab, answered by the agent, gives the result its step
// expects (a partial match, as the scenario format's expect.result); bad input to the agent is an error, not a throw.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAddon } from '../../app/host/native.ts';
import { handleSg, isSgCommand } from './agent.ts';

const addon = loadAddon();
const lab = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'lab.json'), 'utf8'));

type Step = { cmd: string; args: unknown; expect?: { result?: Record<string, unknown> } };
const steps: { id: string; step: Step }[] = [];
for (const sec of lab.sections) for (const st of sec.steps) for (const r of st.run as Step[]) if (isSgCommand(r.cmd)) steps.push({ id: st.id, step: r });

/** every field of `want` equals the same field of `got` (objects compared field by field) */
function partial(got: unknown, want: unknown, where: string): string[] {
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object') return [`${where}: expected an object, got ${JSON.stringify(got)}`];
    return Object.entries(want).flatMap(([k, v]) => partial((got as Record<string, unknown>)[k], v, `${where}.${k}`));
  }
  return got === want ? [] : [`${where}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`];
}

describe('SG lab: lab.json', () => {
  it('has sg steps in every section that needs the agent', () => {
    expect(steps.length).toBeGreaterThanOrEqual(8);
    expect(new Set(steps.map((s) => s.step.cmd))).toEqual(new Set(['sg.generate', 'sg.check', 'sg.run', 'sg.compare']));
  });
  for (const { id, step } of steps) {
    it(`step ${id}: ${step.cmd} ${JSON.stringify(step.args).slice(0, 80)}`, () => {
      const r = handleSg(addon, step.cmd as never, step.args);
      expect(r.ok, r.ok ? '' : r.error.message).toBe(true);
      if (r.ok && step.expect?.result) expect(partial(r.result, step.expect.result, 'result')).toEqual([]);
    });
  }
  it('a wrong expectation is caught (the check can fail)', () => {
    const r = handleSg(addon, 'sg.run', { list: { generate: { pattern: 'one_byte_off', n: 8, total: 32768 } }, strategy: 'indirect' });
    expect(r.ok).toBe(true);
    expect(partial(r.ok && r.result, { counters: { bytesCopied: 1 } }, 'result')).not.toEqual([]);
  });
});

describe('SG lab: agent input', () => {
  it('names the field of bad input and keeps working', () => {
    const bad = handleSg(addon, 'sg.run', { list: [], strategy: 'indirect' });
    expect(bad).toMatchObject({ ok: false, error: { code: 'EINVAL' } });
    const st = handleSg(addon, 'sg.run', { list: [{ offset: 0, length: 10 }], strategy: 'nope' });
    expect(st.ok === false && st.error.message).toMatch(/^strategy/);
    const gen = handleSg(addon, 'sg.generate', { pattern: 'aligned4k', n: 8, total: 100 });
    expect(gen).toMatchObject({ ok: false, error: { code: 'EINVAL' } });
    const big = handleSg(addon, 'sg.check', { list: [{ offset: 0, length: 2 ** 33 }] });
    expect(big.ok).toBe(false);
    expect(handleSg(addon, 'sg.check', { list: [{ offset: 0, length: 100 }] })).toMatchObject({ ok: true, result: { mapped: 1 } });
  });
});

describe('SG lab: headless through the platform', () => {
  it('every step holds, and the digest is the same run after run (wall-clock figures are left out of it)', async () => {
    const { runLabs } = await import('../../app/scenario/lab-cli.ts');
    const a = await runLabs(['sg']), b = await runLabs(['sg']);
    expect(a.errors).toEqual([]);
    expect(a.runs[0]!.steps.filter((s) => !s.passed)).toEqual([]);
    expect(a.runs[0]!.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(b.runs[0]!.digest).toBe(a.runs[0]!.digest);
    const table = a.runs[0]!.steps.find((s) => s.id === 'compare')?.outputs?.table as { rows: { strategy: string; outcome: string }[] };
    expect(table.rows.map((r) => `${r.strategy}:${r.outcome}`)).toEqual(['fast_reg:refused', 'bounce:ok', 'multi_mr:ok', 'pool512:refused', 'indirect:ok']);
  }, 60_000);
});
