// The CQ timeline folded from the real device's events and replies, on both notify semantics: the lost wakeup is a
// row with an entry, the CQ armed, and no event pending (rxe); on cx the same arm raises the event at once.
import { afterEach, describe, expect, it } from 'vitest';
import { NativeExecutor } from '../../app/host/executor.ts';
import { CqRig } from './rig.ts';

const open: NativeExecutor[] = [];
afterEach(() => { for (const ex of open.splice(0)) ex.close(); });
function rig(profile: string, keepRows = false): CqRig {
  const ex = new NativeExecutor({ seed: 1 });
  open.push(ex);
  const r = new CqRig(ex, profile, 8, keepRows);
  r.setup();
  return r;
}
function complete(r: CqRig, wrId: number): void {
  r.post(wrId);
  for (let i = 0; i < 1000 && !r.idle; i++) r.step();
  expect(r.idle).toBe(true);
}

describe('lab cq timeline', () => {
  it('rxe: drain, completion, arm -> an entry sits, armed, no event; report-missed says 1', () => {
    const r = rig('rxe');
    expect(r.poll()).toBeNull();
    complete(r, 0);
    expect(r.view).toMatchObject({ entries: 1, armed: false, pendingEvents: 0 });
    expect(r.arm(false)).toBe(0);
    complete(r, 1);   // the arm fires on the *next* completion only: here it does
    expect(r.view).toMatchObject({ entries: 2, armed: false, pendingEvents: 1 });
    expect(r.takeEvent()).toBe(true);
    expect(r.view).toMatchObject({ pendingEvents: 0, unacked: 0 });
    expect(r.poll()).toEqual({ wrId: 0, status: 'IBV_WC_SUCCESS' });
    expect(r.poll()).toEqual({ wrId: 1, status: 'IBV_WC_SUCCESS' });
    // the stall: completion slips in after the drain, then the arm
    complete(r, 2);
    expect(r.arm(false)).toBe(0);
    expect(r.view).toMatchObject({ entries: 1, armed: true, pendingEvents: 0 });
    expect(r.takeEvent()).toBe(false);
    expect(r.arm(true)).toBe(1);
  });

  it('cx: the arm over an unpolled entry fires at once and report-missed is 0', () => {
    const r = rig('cx');
    complete(r, 0);
    expect(r.arm(true)).toBe(0);
    expect(r.view).toMatchObject({ entries: 1, armed: false, pendingEvents: 1 });
    expect(r.takeEvent()).toBe(true);
    expect(r.poll()).toEqual({ wrId: 0, status: 'IBV_WC_SUCCESS' });
    expect(r.view.entries).toBe(0);
  });

  it('keeps a row per change when asked (the panel)', () => {
    const r = rig('rxe', true);
    r.arm(false);
    complete(r, 0);
    r.takeEvent();
    r.poll();
    expect(r.timeline.rows.map((x) => x.what)).toEqual(['armed (next)', 'CQE (depth 1)', 'completion event', 'get_cq_event', 'ack_cq_events 1', 'poll: 1']);
    expect(r.timeline.rows.at(-1)!.cq).toMatchObject({ entries: 0, armed: false, pendingEvents: 0, unacked: 0 });
  });
});
