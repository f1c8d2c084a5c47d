// The Scenario slice against a scripted console store (the host's replies are given, the console's exec is
// the only way out): play runs one step per request until paused, failed or done; the first replay step makes
// the console forget what it drew (the host resets the session); step replies merge their reports.
import { describe, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import type { ConsoleState, ConsoleStore } from './store.ts';
import { createScenarioStore } from './scenario.ts';

type Cmd = { cmd: string; args: Record<string, unknown> };

function fakeConsole(total: number, failAt?: number) {
  const sent: Cmd[] = [];
  let position = 0;
  let resets = 0;
  const waiting: (() => void)[] = [];
  let hold = false;
  const replay = () => ({
    file: 'x.json', name: 'x', description: '', seed: 1, devices: [], total, position,
    done: position >= total || (failAt !== undefined && position >= failAt), started: position > 0,
    passed: position >= total && failAt === undefined, ...(failAt !== undefined && position >= failAt ? { failedStep: failAt, failure: `step ${failAt} (cq.poll) expect.wc.0.status: expected A, got B` } : {}),
  });
  const exec = async (_form: string, c: Cmd) => {
    sent.push(c);
    if (hold) await new Promise<void>((r) => waiting.push(r));
    switch (c.cmd) {
      case 'scenario.load': return { result: { replay: { ...replay(), steps: Array.from({ length: total }, () => ({ cmd: 'pd.alloc', args: {} })), reports: [] } } };
      case 'scenario.step': {
        const from = position;
        position++;
        return { result: { replay: replay(), from, reports: [{ number: position, cmd: 'pd.alloc', ok: position !== failAt, failures: position === failAt ? ['expected A, got B'] : [], events: 1 }] } };
      }
      case 'scenario.get': return { result: { version: 1, unchanged: true } };
      default: return { result: {} };
    }
  };
  const c = createStore<ConsoleState>()(() => ({
    exec, versions: { events: 0 }, resetModels: () => { resets++; }, syncObjects: async () => {},
  }) as unknown as ConsoleState) as ConsoleStore;
  return {
    c, sent, get resets() { return resets; },
    holdNext() { hold = true; },
    release() { hold = false; for (const w of waiting.splice(0)) w(); },
  };
}

describe('scenario slice', () => {
  it('play steps until the end, one request per step; the first step clears the console', async () => {
    const f = fakeConsole(4);
    const s = createScenarioStore(f.c);
    expect(await s.getState().load('{}', 'x.json')).toBe(true);
    await s.getState().play();
    expect(f.sent.filter((c) => c.cmd === 'scenario.step')).toHaveLength(4);
    expect(f.resets).toBe(1);
    const rp = s.getState().replay!;
    expect(rp.reports.map((r) => r.number)).toEqual([1, 2, 3, 4]);
    expect(rp.passed).toBe(true);
    expect(s.getState().playing).toBe(false);
  });

  it('pause stops play after the step in flight', async () => {
    const f = fakeConsole(10);
    const s = createScenarioStore(f.c);
    await s.getState().load('{}', 'x.json');
    f.holdNext();
    const playing = s.getState().play();
    expect(s.getState().playing).toBe(true);
    s.getState().pause();
    f.release();
    await playing;
    expect(f.sent.filter((c) => c.cmd === 'scenario.step')).toHaveLength(1);
    expect(s.getState().replay!.position).toBe(1);
    expect(s.getState().replay!.done).toBe(false);
  });

  it('play stops at the first failed expectation', async () => {
    const f = fakeConsole(10, 3);
    const s = createScenarioStore(f.c);
    await s.getState().load('{}', 'x.json');
    await s.getState().play();
    expect(f.sent.filter((c) => c.cmd === 'scenario.step')).toHaveLength(3);
    expect(s.getState().replay).toMatchObject({ failedStep: 3, position: 3 });
    expect(s.getState().replay!.reports[2]).toMatchObject({ ok: false, failures: ['expected A, got B'] });
  });
});
