// The runner on the real software device: expectations can fail and say why (step, field, expected, got);
// it stops at the first failure unless told to keep going; the step API (step, runTo) and the CLI
// (--json, --junit, --pcap, exit codes) behave as documented.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseScenarioText } from './load.ts';
import { ScenarioRun, runScenario } from './run.ts';
import { executorFactory, loadLibrary as load, repoRoot as root } from './testlib.ts';
import { libraryFile } from './library.ts';
import type { Scenario, Step } from '../protocol/scenario.ts';
import type { Executor } from '../host/api.ts';

const factory = await executorFactory('runner tests');
const withEx = <T>(fn: (ex: Executor) => T): T => { const ex = factory(1); try { return fn(ex); } finally { ex.close(); } };
const find = (sc: Scenario, pred: (s: Step) => boolean) => sc.steps.findIndex(pred);

describe('scenario runner', () => {
  it('a wrong completion status fails the step with expected and actual names, and stops there', () => {
    const sc = load('rc_rdma_write.json');
    const i = find(sc, (s) => s.cmd === 'cq.poll');
    sc.steps[i]!.expect!.wc![0]!.status = 'IBV_WC_REM_ACCESS_ERR';
    const rep = withEx((ex) => new ScenarioRun(sc, ex).run());
    expect(rep.passed).toBe(false);
    expect(rep.failedStep).toBe(i + 1);
    expect(rep.failure).toBe(`step ${i + 1} (cq.poll) expect.wc.0.status: expected IBV_WC_REM_ACCESS_ERR (10), got IBV_WC_SUCCESS (0)`);
    expect(rep.stepsRun).toBe(i + 1);
    expect(rep.stepsRun).toBeLessThan(rep.stepsTotal);
  });

  it('wrong bytes, wrong packet counts and a wrong QP state each fail', () => {
    const sc = load('rc_rdma_write.json');
    const poll = find(sc, (s) => s.cmd === 'cq.poll');
    const run = find(sc, (s) => s.cmd === 'engine.run');
    const b = structuredClone(sc); b.steps[poll]!.expect!.bytes![0]!.hex = b.steps[poll]!.expect!.bytes![0]!.hex.replace('000102', '000103');
    expect(withEx((ex) => new ScenarioRun(b, ex).run()).failure).toMatch(/expect\.bytes\.0: at 0x[0-9a-f]+: expected .*000103.*, got .*000102.* \(first difference at byte 18\)/);
    const p = structuredClone(sc); p.steps[run]!.expect!.packet![0]!.count = 2;
    expect(withEx((ex) => new ScenarioRun(p, ex).run()).failure).toMatch(/^step \d+ \(engine\.run\) expect\.packet\.0: expected 2 RC_RDMA_WRITE_ONLY packets, saw 1; packets from dev0 during the step: RC_RDMA_WRITE_ONLY$/);
    const q = structuredClone(sc); q.steps[poll]!.expect!.qpState = [{ qp: 'qpA', state: 'IBV_QPS_ERR' }];
    expect(withEx((ex) => new ScenarioRun(q, ex).run()).failure).toMatch(/expect\.qpState\.0: qpA: expected IBV_QPS_ERR, got IBV_QPS_RTS/);
    const n = structuredClone(sc); n.steps[poll]!.expect!.wc!.push({ status: 'IBV_WC_SUCCESS' });
    expect(withEx((ex) => new ScenarioRun(n, ex).run()).failure).toMatch(/expect\.wc: expected 2 completions, polled 1 \(IBV_WC_SUCCESS IBV_WC_RDMA_WRITE\)/);
  });

  it('an expected error that does not happen, and an unexpected one, both fail', () => {
    const sc = load('mr_reg_bad_flags.json');
    const ok = structuredClone(sc); delete ok.steps[2]!.expect;
    expect(withEx((ex) => new ScenarioRun(ok, ex).run()).failure).toMatch(/^step 3 \(mr\.reg\) EINVAL: .*LOCAL_WRITE/);
    const other = structuredClone(sc); other.steps[2]!.expect = { error: 'EPERM' };
    expect(withEx((ex) => new ScenarioRun(other, ex).run()).failure).toMatch(/^step 3 \(mr\.reg\) expect\.error: expected EPERM, got EINVAL: /);
    const none = structuredClone(sc); none.steps[5]!.expect = { error: 'EINVAL' };
    expect(withEx((ex) => new ScenarioRun(none, ex).run()).failure).toBe('step 6 (mr.reg) expect.error: expected the verb to fail with EINVAL, but it succeeded');
  });

  it('a resolved value that does not fit its field is refused at run time with the field', () => {
    const sc = load('rc_rdma_write.json');
    const post = find(sc, (s) => s.cmd === 'post.send');
    const wrs = (sc.steps[post]!.args as { wrs: Record<string, unknown>[] }).wrs;
    wrs[0]!.rkey = '$mrB.rkey+0x100000000';
    const rep = withEx((ex) => new ScenarioRun(sc, ex).run());
    expect(rep.failure).toMatch(new RegExp(`^step ${post + 1} \\(post\\.send\\) args\\.wrs\\.0\\.rkey: Too big`));
  });

  it('a name whose creating step failed is reported when used', () => {
    const sc = load('mr_reg_bad_flags.json');
    sc.steps[2]!.as = 'mrBad';
    sc.steps.splice(3, 0, { cmd: 'mr.dereg', args: { mr: 'mrBad' } });
    const r = parseScenarioText(JSON.stringify(sc), 'x.json');
    expect(r.ok).toBe(true);
    const rep = withEx((ex) => new ScenarioRun(r.ok ? r.scenario : sc, ex).run());
    expect(rep.failure).toBe('step 4 (mr.dereg) args: "mrBad" is not defined (its step failed or did not run)');
  });

  it('steps one at a time, runs to a step, and can keep going after a failure', () => {
    const sc = load('rc_send_recv.json');
    withEx((ex) => {
      const run = new ScenarioRun(sc, ex);
      expect(run.position).toBe(0);
      const first = run.step()!;
      expect(first).toMatchObject({ number: 1, cmd: 'pd.alloc', ok: true });
      expect(run.handleOf('pdA')).toBeTypeOf('number');
      const some = run.runTo(11);
      expect(some.map((s) => s.number)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      expect(run.position).toBe(11);
      const rep = run.run();
      expect(rep.passed).toBe(true);
      expect(run.step()).toBeNull();
    });
    const bad = structuredClone(sc);
    const polls = bad.steps.flatMap((s, i) => (s.cmd === 'cq.poll' ? [i] : []));
    bad.steps[polls[0]!]!.expect!.wc![0]!.wrId = 99;
    const kept = withEx((ex) => new ScenarioRun(bad, ex, { keepGoing: true }).run());
    expect(kept.stepsRun).toBe(kept.stepsTotal);
    expect(kept.passed).toBe(false);
    expect(kept.failedStep).toBe(polls[0]! + 1);
    expect(kept.steps.filter((s) => !s.ok).map((s) => s.number)).toEqual([polls[0]! + 1]);
  });

  it('runs through an asynchronous executor (the console\'s transport) with the same digest', async () => {
    const sc = load('rc_atomics.json');
    const syncRep = withEx((ex) => new ScenarioRun(sc, ex).run());
    const ex = factory(1);
    try {
      const later = <T>(v: T) => new Promise<T>((res) => setTimeout(() => res(v), 0));
      const asyncEx = { exec: (c: Parameters<Executor['exec']>[0]) => later(ex.exec(c)), drainEvents: (m?: number) => later(ex.drainEvents(m)) };
      const run = new ScenarioRun(sc, asyncEx);
      expect(() => run.step()).toThrow(/asynchronous: use stepAsync/);
      const run2 = new ScenarioRun(sc, asyncEx);
      const first = await run2.runToAsync(3);
      expect(first.map((s) => s.number)).toEqual([1, 2, 3]);
      const rep = await run2.runAsync();
      expect(rep.passed).toBe(true);
      expect(rep.digest).toBe(syncRep.digest);
    } finally { ex.close(); }
  });

  it('runScenario refuses malformed input without running anything', () => {
    const rep = withEx((ex) => runScenario('{"verbslab":"scenario","version":1,"name":"x","devices":[{"name":"d","profile":"rxe"}],"steps":[{"cmd":"pd.alloc","args":{"device":"e"}}]}', ex, { file: 'x.json' }));
    expect(rep.passed).toBe(false);
    expect(rep.stepsRun).toBe(0);
    expect(rep.failure).toMatch(/^step 1 \(pd\.alloc\) args\.device: unknown name "e"/);
  });

  it('the CLI writes --json, --junit and --pcap and returns 1 when a scenario fails, 2 for usage errors', async () => {
    const { main } = await import('./cli.ts');
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'verbslab-cli-'));
    try {
      const bad = load('rc_rdma_write.json');
      const i = find(bad, (s) => s.cmd === 'cq.poll');
      bad.steps[i]!.expect!.wc![0]!.status = 'IBV_WC_REM_ACCESS_ERR';
      fs.writeFileSync(path.join(tmp, 'bad.json'), JSON.stringify(bad));
      fs.writeFileSync(path.join(tmp, 'broken.json'), '{"verbslab": ');
      const good = libraryFile('rc_rdma_write.json');
      const junit = path.join(tmp, 'junit.xml');
      const pcap = path.join(tmp, 'wire.pcap');
      const out: string[] = [];
      const write = process.stdout.write.bind(process.stdout);
      const errw = process.stderr.write.bind(process.stderr);
      (process.stdout as { write: unknown }).write = (s: string) => { out.push(String(s)); return true; };
      (process.stderr as { write: unknown }).write = () => true;
      let code: number, usage1: number, usage2: number;
      try {
        code = await main(['run', '--json', '--junit', junit, '--pcap', pcap, good, path.join(tmp, 'bad.json'), path.join(tmp, 'broken.json')]);
        usage1 = await main(['run', '--seed', 'x', good]);
        usage2 = await main(['run', '--frobnicate', good]);
      } finally {
        (process.stdout as { write: unknown }).write = write;
        (process.stderr as { write: unknown }).write = errw;
      }
      expect(code).toBe(1);
      const summary = JSON.parse(out.join(''));
      expect(summary).toMatchObject({ passed: 1, failed: 2 });
      expect(summary.scenarios.map((s: { passed: boolean }) => s.passed)).toEqual([true, false, false]);
      expect(summary.scenarios[2].failure).toMatch(/broken\.json:1:\d+: not valid JSON/);
      const xml = fs.readFileSync(junit, 'utf8');
      expect(xml).toMatch(/<testsuite name="verbslab scenarios" tests="3" failures="2"/);
      expect(xml).toContain('expected IBV_WC_REM_ACCESS_ERR (10), got IBV_WC_SUCCESS (0)');
      const pc = fs.readFileSync(path.join(tmp, 'wire.rc_rdma_write.pcap'));
      expect(pc.readUInt32LE(0) === 0xa1b2c3d4 || pc.readUInt32LE(0) === 0xa1b23c4d).toBe(true);
      expect(pc.length).toBeGreaterThan(24 + 2 * 16);
      expect(usage1).toBe(2);
      expect(usage2).toBe(2);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
