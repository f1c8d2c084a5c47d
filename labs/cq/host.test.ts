// The agent replays a seed through a host port (commands executed one by one, events handed out after each) and
// gets the explorer's run, step for step; bad arguments are refused with the field named.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HostCore } from '../../app/host/core.ts';
import { NativeExecutor } from '../../app/host/executor.ts';
import type { ExecResult } from '../../app/host/api.ts';
import type { Command, DeviceEvent } from '../../app/protocol/index.ts';
import { CqAgent, attach } from './host.ts';
import { ExploreResult, ReplayView } from './commands.ts';
import type { AgentHost } from './host.ts';
import { runSeed } from './explorer.ts';
import type { TraceStep } from './explorer.ts';

/** A stand-in for HostCore: execute() runs the command and hands its events to the listeners. */
class FakeHost implements AgentHost {
  readonly ex = new NativeExecutor({ seed: 99 });
  private fns: ((evs: DeviceEvent[], ctx: { complete: boolean }) => void)[] = [];
  commands: string[] = [];
  execute(c: Command): ExecResult {
    this.commands.push(c.cmd);
    const r = this.ex.exec(c);
    const evs = this.ex.drainEvents();
    for (const fn of this.fns) fn(evs, { complete: true });
    return r;
  }
  onEvents(fn: (evs: DeviceEvent[], ctx: { complete: boolean }) => void): void { this.fns.push(fn); }
}

const hosts: FakeHost[] = [];
afterEach(() => { for (const h of hosts.splice(0)) h.ex.close(); });
const host = () => { const h = new FakeHost(); hosts.push(h); return h; };

describe('lab cq agent', () => {
  it('replays a seed in the host session step by step: the same run as the explorer', () => {
    const h = host();
    const a = new CqAgent(h);
    const started = a.start({ variant: 'report-missed', seed: 1 });
    expect(started).toMatchObject({ ok: true, result: { at: 0, finished: false, steps: [] } });
    expect(h.commands[0]).toBe('session.reset');
    const steps: TraceStep[] = [];
    const first = a.step({ count: 1 });
    if (!first.ok) throw new Error(first.error.message);
    for (const s of first.result.steps) steps.push(s);
    for (;;) {
      const r = a.step({ count: 50 });
      if (!r.ok) throw new Error(r.error.message);
      for (const s of r.result.steps) steps.push(s);
      if (r.result.finished) { expect(r.result.result.verdict).toBe('violation'); break; }
    }
    const ref = runSeed('report-missed', 1, { trace: true });
    expect(steps).toEqual(ref.trace);
    expect(a.step({})).toMatchObject({ ok: true, result: { steps: [], finished: true } });
  }, 120_000);

  it('refuses bad arguments, naming the field, and a step before any start', () => {
    const a = new CqAgent(host());
    expect(a.step({})).toMatchObject({ ok: false, error: { code: 'ENOENT' } });
    expect(a.start({ variant: 'nope', seed: 1 })).toMatchObject({ ok: false, error: { code: 'EINVAL', field: 'args.variant' } });
    expect(a.start({ variant: 'irq-lock', seed: -1 })).toMatchObject({ ok: false, error: { field: 'args.seed' } });
    expect(a.explore({ variant: 'irq-lock', seeds: 0 })).toMatchObject({ ok: false, error: { field: 'args.seeds' } });
    expect(a.start({ variant: 'irq-lock', seed: 3 }).ok).toBe(true);
    expect(a.step({ count: 0 })).toMatchObject({ ok: false, error: { field: 'args.count' } });
  }, 120_000);

  it('explores in sessions of its own', () => {
    const h = host();
    const r = new CqAgent(h).explore({ variant: 'never-reports', seeds: 5 });
    expect(r).toMatchObject({ ok: true, result: { tried: 5, verdict: 'in-order' } });
    expect(h.commands).toEqual([]);
  }, 120_000);
});

describe('lab cq agent in the backend host', () => {
  it('answers lab.cq.start / lab.cq.step / lab.cq.explore with replies of their schemas; the run is journaled', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-labcq-'));
    const core = new HostCore(new NativeExecutor(), { sessionDir: dir, defaultDevice: 'rxe' });
    try {
      attach(core);
      core.start();
      const s = core.execute({ cmd: 'lab.cq.start', args: { variant: 'report-missed', seed: 1 } });
      expect(s.ok).toBe(true);
      expect(ReplayView.parse((s as { result: unknown }).result)).toMatchObject({ at: 0, finished: false });
      const steps: unknown[] = [];
      for (let i = 0; i < 100; i++) {
        const r = core.execute({ cmd: 'lab.cq.step', args: { count: 100 } });
        if (!r.ok) throw new Error(r.error.message);
        const v = ReplayView.parse(r.result);
        for (const s of v.steps) steps.push(s);
        if (v.finished) { expect(v.result.verdict).toBe('violation'); break; }
      }
      expect(steps).toEqual(runSeed('report-missed', 1, { trace: true }).trace);
      // the device commands went through the host: journaled (a restart replays them)
      const j = core.execute({ cmd: 'journal.get', args: {} });
      const cmds = (j as { result: { entries: { cmd: string }[] } }).result.entries.map((e) => e.cmd);
      expect(cmds[0]).toBe('session.reset');
      expect(cmds).toContain('cq.req_notify');
      expect(cmds).toContain('engine.step');
      const e = core.execute({ cmd: 'lab.cq.explore', args: { variant: 'irq-lock', seeds: 3, from: 1 } });
      expect(ExploreResult.parse((e as { result: unknown }).result)).toMatchObject({ tried: 3, verdict: 'in-order' });
      expect(core.execute({ cmd: 'lab.cq.start', args: { variant: 'nope', seed: 1 } } as never)).toMatchObject({ ok: false });
    } finally {
      core.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
