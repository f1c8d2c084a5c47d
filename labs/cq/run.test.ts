// The headless lab: every variant gets the verdict it expects, the text names the first failing seed, and a replay
// prints every step with the CQ and both contexts.
import { describe, expect, it } from 'vitest';
import { formatLab, formatRun, runLab } from './run.ts';
import { runSeed } from './explorer.ts';

// runs of the real device: give them room on a loaded machine (a budget, not a speed check)
const SLOW = 120_000;

describe('lab cq headless', () => {
  it('runs every variant and passes when each verdict is the expected one', () => {
    const r = runLab(10);
    expect(r.variants.map((v) => [v.variant, v.verdict])).toEqual([
      ['report-missed', 'violation'], ['never-reports', 'in-order'], ['irq-lock', 'in-order'], ['no-repoll', 'stall'],
    ]);
    expect(r.pass).toBe(true);
    const text = formatLab(r);
    expect(text).toContain(`first failing seed ${r.variants[0]!.firstFailingSeed}`);
    expect(text.split('\n').at(-1)).toBe('PASS');
  }, SLOW);
  it('replays a seed step by step', () => {
    const run = runSeed('report-missed', 1, { trace: true });
    const lines = formatRun(run).split('\n');
    expect(lines.length).toBe(run.steps + 1);
    expect(lines.at(-1)).toMatch(/^report-missed seed 1: violation/);
    expect(lines.some((l) => / irq +poll -> wr_id/.test(l))).toBe(true);
  }, SLOW);
});
