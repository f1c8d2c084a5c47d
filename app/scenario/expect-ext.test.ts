// The scenario expectations added for the rxe conformance checks (noAsyncEvent, badWr, wcFlagsSet / wcFlagsClear,
// capture, granted caps in create replies) can fail, and say why.
import { describe, expect, it } from 'vitest';
import { validateScenario } from './load.ts';
import { ScenarioRun } from './run.ts';
import { executorFactory, loadLibrary as load } from './testlib.ts';
import type { Scenario, Step } from '../protocol/scenario.ts';

const factory = await executorFactory('expectation tests');
const run = (sc: Scenario) => { const ex = factory(1); try { return new ScenarioRun(sc, ex).run(); } finally { ex.close(); } };
const at = (sc: Scenario, pred: (s: Step) => boolean, from = 0) => sc.steps.findIndex((s, i) => i >= from && pred(s));

describe('scenario expectations for the rxe conformance checks', () => {
  it('the library files pass as they are', () => {
    for (const f of ['rxe_recv_cq_overrun.json', 'rxe_queue_caps.json', 'rxe_queue_caps_cx.json', 'rxe_wc_flags.json', 'rxe_mr_rereg_keys.json']) {
      expect(run(load(f)).failure, f).toBeUndefined();
    }
  });

  it('noAsyncEvent fails when the event is raised', () => {
    const sc = load('rxe_recv_cq_overrun.json');
    const i = at(sc, (s) => s.cmd === 'engine.run');
    sc.steps[i]!.expect = { noAsyncEvent: [{ type: 'IBV_EVENT_CQ_ERR', obj: 'cqB' }] };
    expect(run(sc).failure).toMatch(new RegExp(`^step ${i + 1} \\(engine\\.run\\) expect\\.noAsyncEvent\\.0: IBV_EVENT_CQ_ERR was raised on cq \\d+ during the step$`));
  });

  it('badWr compares the refused index, and fails on a post that succeeded', () => {
    const cx = load('rxe_queue_caps_cx.json');
    const i = at(cx, (s) => s.cmd === 'post.send');
    cx.steps[i]!.expect = { error: 'ENOMEM', badWr: 3 };
    expect(run(cx).failure).toBe(`step ${i + 1} (post.send) expect.badWr: expected bad_wr 3, got 4`);
    const rx = load('rxe_queue_caps.json');
    const j = at(rx, (s) => s.cmd === 'post.send');
    rx.steps[j]!.expect = { badWr: 4 };
    expect(run(rx).failure).toBe(`step ${j + 1} (post.send) expect.badWr: expected work request 4 to be refused, but the post succeeded`);
  });

  it('granted caps: the create replies report what the device granted', () => {
    const sc = load('rxe_queue_caps.json');
    const i = at(sc, (s) => s.cmd === 'cq.create');
    sc.steps[i]!.expect = { result: { cqe: 4 } };
    expect(run(sc).failure).toBe(`step ${i + 1} (cq.create) expect.result.cqe: expected 4, got 7`);
  });

  it('wcFlagsSet / wcFlagsClear check single bits', () => {
    const sc = load('rxe_wc_flags.json');
    const i = at(sc, (s) => s.cmd === 'cq.poll' && s.args.cq === 'cqB');
    const wc = sc.steps[i]!.expect!.wc![2]!;
    delete wc.wcFlagsSet;
    wc.wcFlagsClear = ['IBV_WC_GRH'];
    expect(run(sc).failure).toBe(`step ${i + 1} (cq.poll) expect.wc.2.wcFlagsClear: expected IBV_WC_GRH clear, got IBV_WC_GRH (1)`);
    const s2 = load('rxe_wc_flags.json');
    s2.steps[i]!.expect!.wc![1]!.wcFlagsSet = ['IBV_WC_WITH_INV'];
    expect(run(s2).failure).toBe(`step ${i + 1} (cq.poll) expect.wc.1.wcFlagsSet: expected IBV_WC_WITH_INV set, got IBV_WC_GRH|IBV_WC_WITH_IMM (3)`);
  });

  it('capture keeps the value from before the step; the same check fails where the step changes it', () => {
    const sc = load('rxe_mr_rereg_keys.json');
    sc.devices = sc.devices.map((d) => ({ ...d, profile: 'cx' }));   // cx gives new keys on re-registration
    const i = at(sc, (s) => s.cmd === 'mr.rereg');
    expect(run(sc).failure).toMatch(new RegExp(`^step ${i + 1} \\(mr\\.rereg\\) expect\\.result\\.lkey: expected \\d+ \\(0x[0-9a-f]+\\), got \\d+`));
  });

  it('a capture must name defined objects and a new name', () => {
    const sc = load('rxe_mr_rereg_keys.json') as unknown as Record<string, unknown> & { steps: Record<string, unknown>[] };
    const i = sc.steps.findIndex((s) => s.cmd === 'mr.rereg');
    sc.steps[i]!.capture = { as: 'old', fields: { rkey: '$nope.rkey' } };
    const r = validateScenario(sc);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/capture\.fields\.rkey: reference \$nope\.rkey: unknown name "nope"/);
    sc.steps[i]!.capture = { as: 'mrB', fields: { rkey: '$mrB.rkey' } };
    const r2 = validateScenario(sc);
    expect(r2.ok).toBe(false);
    if (!r2.ok) expect(r2.error.message).toMatch(/capture\.as: "mrB" is already defined/);
  });
});
