// Labs: every lab of labs/ holds headless; the lab format refuses what it must; the console's labs extension runs a
// step through the backend host (journaled, recorded) and reports which steps hold.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { flattenLab, listLabs } from './lab.ts';
import { labJunit, runLabs } from './lab-cli.ts';
import { executorFactory } from './testlib.ts';

const make = await executorFactory('lab runs');

const tiny = (over: Record<string, unknown> = {}) => ({
  verbslab: 'lab', version: 1, id: 'tiny', title: 't', goal: 'g', question: 'q', devices: [{ name: 'dev0', profile: 'rxe' }],
  sections: [{ id: 's', title: 'S', steps: [{ id: 'pd', title: 'a PD', text: 'x', run: [{ cmd: 'pd.alloc', args: { device: 'dev0' }, as: 'pd0' }], why: { rule: 'r', source: 'IBTA' } }] }],
  ...over,
});

describe('lab format', () => {
  it('the labs of labs/ load', () => {
    const { labs, errors } = listLabs();
    expect(errors).toEqual([]);
    expect(labs.map((l) => l.lab.id)).toContain('bmme');
  });
  it('refuses a check that changes state, an unknown name, a duplicate step id', () => {
    const bad1 = tiny(); (bad1.sections as any)[0].steps[0].check = [{ cmd: 'pd.alloc', args: { device: 'dev0' } }];
    expect(flattenLab(bad1)).toMatchObject({ ok: false, error: expect.stringMatching(/check\.0: pd\.alloc changes state/) });
    const bad2 = tiny(); (bad2.sections as any)[0].steps[0].run[0].args.device = 'nodev';
    expect(flattenLab(bad2)).toMatchObject({ ok: false, error: expect.stringMatching(/lab step pd/) });
    const bad3 = tiny(); (bad3.sections as any)[0].steps.push({ ...(bad3.sections as any)[0].steps[0], run: [{ cmd: 'session.info', args: {} }] });
    expect(flattenLab(bad3)).toMatchObject({ ok: false, error: expect.stringMatching(/used twice/) });
    expect(flattenLab({ ...tiny(), why: 1 })).toMatchObject({ ok: false });
  });
});

describe('labs headless and in the host', () => {
  it('every lab holds headless; the JUnit report has one test case per step (and one per headless agent)', async () => {
    const { runs, errors } = await runLabs('all', { factory: make });
    expect(errors).toEqual([]);
    for (const r of runs) expect(r.steps.filter((s) => !s.passed).map((s) => `${r.id}/${s.id}: ${s.failure}`)).toEqual([]);
    for (const r of runs) if (r.agent) expect(r.agent.passed, `${r.id}: ${r.agent.lines.join('\n')}`).toBe(true);
    const xml = labJunit(runs);
    expect((xml.match(/<testcase /g) ?? []).length).toBe(runs.reduce((n, r) => n + r.steps.length + (r.agent ? 1 : 0), 0));
  }, 300_000);   // lab cq's agent runs its explorer: 4 variants x 200 seeds on the real device
  it('a failing expectation fails its step and the steps after it do not run', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-labs-'));
    const lab = tiny();
    (lab.sections as any)[0].steps.push({ id: 'read', title: 'r', text: 'x', why: { rule: 'r', source: 's' },
      run: [{ cmd: 'buffer.alloc', args: { length: 16 }, as: 'b' }], check: [{ cmd: 'memory.read', args: { addr: '$b.addr', length: 1 }, expect: { bytes: [{ addr: '$b.addr', hex: 'ff' }] } }] });
    (lab.sections as any)[0].steps.push({ id: 'after', title: 'a', text: 'x', why: { rule: 'r', source: 's' }, run: [{ cmd: 'pd.alloc', args: { device: 'dev0' } }] });
    fs.mkdirSync(path.join(dir, 'tiny')); fs.writeFileSync(path.join(dir, 'tiny', 'lab.json'), JSON.stringify(lab));
    const { runs } = await runLabs(['tiny'], { factory: make, dir });
    expect(runs[0]!.steps.map((s) => [s.id, s.passed, s.ran])).toEqual([['pd', true, true], ['read', false, true], ['after', false, false]]);
    expect(runs[0]!.steps[1]!.failure).toMatch(/expected ff/);
  });
  it('lab.start / lab.step / lab.status through the host: the commands are journaled, the step turns green', async () => {
    const { HostCore } = await import('../host/core.ts');
    const { attach } = await import('../host/labs.ts');
    const { attach: attachRecorder } = await import('../host/recorder.ts');
    const core = new HostCore(make(1) as never, { sessionDir: fs.mkdtempSync(path.join(os.tmpdir(), 'vl-labhost-')), defaultDevice: null });
    attachRecorder(core); attach(core);
    core.start();
    const call = (command: unknown) => { let out: any; core.handle({ type: 'request', id: 1, command }, (r) => { out = r; }); return out; };
    expect(call({ cmd: 'lab.list', args: {} }).result.labs.map((l: { id: string }) => l.id)).toContain('bmme');
    expect(call({ cmd: 'lab.step', args: { id: 'bmme', step: 'pair' } })).toMatchObject({ ok: false, error: { code: 'ENOENT' } });
    const st = call({ cmd: 'lab.start', args: { id: 'bmme' } });
    expect(st).toMatchObject({ ok: true, result: { started: true } });
    expect(st.result.steps.every((s: { done: boolean }) => !s.done)).toBe(true);
    const r = call({ cmd: 'lab.step', args: { id: 'bmme', step: 'alloc' } });   // runs "pair" first
    expect(r.result.ran).toMatchObject({ id: 'alloc', done: true, holds: true });
    expect(r.result.steps.slice(0, 3).map((s: { holds: boolean }) => s.holds)).toEqual([true, true, false]);
    const cmds = core.journal.read().entries.map((e) => e.command.cmd);
    expect(cmds[0]).toBe('session.reset');
    expect(cmds).toContain('mr.alloc');
    expect(call({ cmd: 'lab.status', args: { id: 'bmme' } }).result.steps[1]).toMatchObject({ id: 'alloc', holds: true });
    const rec = call({ cmd: 'scenario.get', args: {} }).result.recording.steps.map((s: { cmd: string }) => s.cmd);
    expect(rec).toContain('mr.map_sg');   // the recorder saw the lab's commands like any other
    core.close();
  });
  it('a step done by hand (not by "Do it") turns green when its outcome is seen in the event stream', async () => {
    const { HostCore } = await import('../host/core.ts');
    const { attach } = await import('../host/labs.ts');
    const { ScenarioRun } = await import('./run.ts');
    const core = new HostCore(make(1) as never, { sessionDir: fs.mkdtempSync(path.join(os.tmpdir(), 'vl-labhand-')), defaultDevice: null });
    attach(core);
    core.start();
    const call = (command: unknown) => { let out: any; core.handle({ type: 'request', id: 1, command }, (r) => { out = r; }); return out; };
    call({ cmd: 'lab.start', args: { id: 'bmme' } });
    // "by hand": the fastreg section's commands executed through the host as the other panels do, not by lab.step
    const flat = listLabs().labs.find((l) => l.lab.id === 'bmme')!;
    const n = flat.owner.filter((o) => ['pair', 'alloc', 'register', 'invalidate', 'stale'].includes(o)).length;
    const mine: any[] = [];
    core.onEvents((evs) => { for (const e of evs) mine.push(e); });
    const byHand = new ScenarioRun({ ...flat.scenario, steps: flat.scenario.steps.slice(0, n) }, {
      exec: (c) => core.execute(c), drainEvents: () => mine.splice(0), pcap: () => core.executor.pcap(), close: () => {},
    });
    const status = () => call({ cmd: 'lab.status', args: { id: 'bmme' } }).result.steps as { id: string; done: boolean; holds: boolean; byHand: boolean; watchable: boolean }[];
    expect(status().filter((s) => s.byHand)).toEqual([]);
    // only the first step ("pair": objects and a connection; no outcome to see): nothing is green yet
    expect(byHand.begin()).toBe(true);
    byHand.runTo(flat.owner.indexOf('alloc'));
    expect(status().find((s) => s.id === 'pair')).toMatchObject({ watchable: false, byHand: false, done: false });
    expect(status().find((s) => s.id === 'register')).toMatchObject({ watchable: true, byHand: false });
    byHand.runTo(n);
    expect(byHand.report().failedStep).toBeUndefined();
    const st = status();
    for (const id of ['alloc', 'register', 'invalidate', 'stale']) expect(st.find((s) => s.id === id), id).toMatchObject({ done: true, holds: true, byHand: true });
    // later steps whose outcomes were not produced stay grey (keybyte-write expects another REM_ACCESS_ERR after these)
    expect(st.find((s) => s.id === 'keybyte-write')).toMatchObject({ done: false, byHand: false });
    expect(st.find((s) => s.id === 'fenced')).toMatchObject({ done: false, byHand: false });
    core.close();
  });
});
