// The interleaving explorer's verdicts, against the real device (the native addon): "may return > 0 without a
// lock" breaks order within its seeds, "always <= 0" and "IRQ-safe lock" never do (the lock at a cost), and the
// drain-then-arm loop without a re-poll stalls with an entry in the CQ. Runs are reproducible from their seed.
import { describe, expect, it } from 'vitest';
import { VARIANTS } from './consumers.ts';
import { explore, mulberry32, runSeed } from './explorer.ts';

const SEEDS = 40;

// runs of the real device: give them room on a loaded machine (a budget, not a speed check)
const SLOW = 120_000;

describe('lab cq explorer', () => {
  it('finds an in-order violation when notify may return > 0 and the re-poll runs without a lock', () => {
    const r = explore('report-missed', SEEDS);
    expect(r.tried).toBe(SEEDS);
    expect(r.verdict).toBe('violation');
    expect(r.firstFailingSeed).not.toBeNull();
    const v = r.firstViolation!;
    expect(v.wrId).not.toBe(v.expected);
    // the failing seed replays to the same violation, and the trace shows both contexts polling the CQ
    const again = runSeed('report-missed', r.firstFailingSeed!, { trace: true });
    expect(again.verdict).toBe('violation');
    expect(again.violations[0]).toEqual(v);
    const polls = again.trace!.filter((t) => t.step <= v.step && /poll -> wr_id/.test(t.action));
    expect(new Set(polls.map((t) => (t.actor === 'irq' ? 'irq' : 'thread')))).toEqual(new Set(['irq', 'thread']));
  }, SLOW);

  it('finds none when notify never returns > 0 (the arm fires over unpolled entries)', () => {
    const r = explore('never-reports', SEEDS);
    expect(r).toMatchObject({ tried: SEEDS, verdict: 'in-order', violating: 0, violations: 0, stalled: 0, bounded: 0, firstFailingSeed: null });
    expect(r.inOrder).toBe(SEEDS);
    expect(r.maskedSteps).toBe(0);
  }, SLOW);

  it('finds none with the IRQ-safe lock, and counts its cost (time with interrupts off)', () => {
    const r = explore('irq-lock', SEEDS);
    expect(r).toMatchObject({ tried: SEEDS, verdict: 'in-order', violating: 0, violations: 0, stalled: 0, bounded: 0 });
    expect(r.maskedSteps).toBeGreaterThan(0);
    expect(r.maskedEngineSteps).toBeGreaterThan(0);
  }, SLOW);

  it('shows the lost wakeup: drain, arm without re-poll stalls with an entry in the CQ and no event', () => {
    const r = explore('no-repoll', SEEDS);
    expect(r.verdict).toBe('stall');
    expect(r.firstStall).not.toBeNull();
    expect(r.firstStall!.entries).toBeGreaterThan(0);
    expect(r.firstStall!.pendingEvents).toBe(0);
  }, SLOW);

  it('is deterministic: a seed gives the same run, step for step', () => {
    const a = runSeed('report-missed', 7, { trace: true });
    const b = runSeed('report-missed', 7, { trace: true });
    expect(b.trace).toEqual(a.trace);
    expect(a.trace!.length).toBe(a.steps);
    const c = runSeed('report-missed', 8, { trace: true });
    expect(c.trace).not.toEqual(a.trace);
  }, SLOW);

  it('names a profile for every variant, and mulberry32 is seeded', () => {
    for (const v of Object.values(VARIANTS)) expect(['rxe', 'cx']).toContain(v.profile);
    const x = mulberry32(1), y = mulberry32(1);
    expect([x(), x(), x()]).toEqual([y(), y(), y()]);
  }, SLOW);
});
