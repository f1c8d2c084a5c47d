// Record a live session (numeric handles, literal keys and addresses, as the console sends them), save it,
// then replay the saved file headless on a fresh session: it passes, and it names objects and refers to keys.
import { describe, expect, it } from 'vitest';
import { ScenarioRecorder } from './record.ts';
import { parseScenarioText } from './load.ts';
import { ScenarioRun } from './run.ts';
import { Command, type Command as Cmd } from '../protocol/index.ts';
import type { Executor } from '../host/api.ts';
import { executorFactory } from './testlib.ts';

const factory = await executorFactory('recorder tests');

describe('scenario recorder', () => {
  it('records a live RDMA WRITE session with handles and literal keys, and the saved file replays headless', () => {
    const ex = factory(7);
    const rec = new ScenarioRecorder({ name: 'recorded write', seed: 7 });
    const run = (raw: unknown) => {
      const c = Command.parse(raw) as Cmd;
      const out = ex.exec(c);
      rec.record(c, out);
      rec.observe(ex.drainEvents());
      if (!out.ok && !(raw as { allowFail?: boolean }).allowFail) { /* recorded with its error */ }
      return out.ok ? (out.result as Record<string, any>) : { error: out.error.code };
    };
    try {
      const d0 = run({ cmd: 'device.create', args: { profile: 'rxe', name: 'left' } }).handle;
      const d1 = run({ cmd: 'device.create', args: { profile: 'rxe' } }).handle;
      run({ cmd: 'session.info', args: {} });
      const pa = run({ cmd: 'pd.alloc', args: { device: d0 } }).pd;
      const pb = run({ cmd: 'pd.alloc', args: { device: d1 } }).pd;
      const ba = run({ cmd: 'buffer.alloc', args: { length: 4096 } });
      const bb = run({ cmd: 'buffer.alloc', args: { length: 4096 } });
      const ma = run({ cmd: 'mr.reg', args: { pd: pa, addr: ba.addr, length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE'] } });
      run({ cmd: 'mr.reg', args: { pd: pb, addr: bb.addr, length: 4096, access: ['IBV_ACCESS_REMOTE_WRITE'] } }); // fails: EINVAL
      const mb = run({ cmd: 'mr.reg', args: { pd: pb, addr: bb.addr, length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE'] } });
      const ca = run({ cmd: 'cq.create', args: { device: d0, cqe: 8 } }).cq;
      const cb = run({ cmd: 'cq.create', args: { device: d1, cqe: 8 } }).cq;
      const qa = run({ cmd: 'qp.create', args: { pd: pa, sendCq: ca, recvCq: ca, qpType: 'IBV_QPT_RC' } }).handle;
      const qb = run({ cmd: 'qp.create', args: { pd: pb, sendCq: cb, recvCq: cb, qpType: 'IBV_QPT_RC' } }).handle;
      run({ cmd: 'qp.connect', args: { qp: qa, peer: qb } });
      run({ cmd: 'memory.write', args: { addr: ba.addr, data: 'cafebabe' } });
      run({ cmd: 'post.send', args: { qp: qa, wrs: [{ wrId: 5, opcode: 'IBV_WR_RDMA_WRITE', sgList: [{ addr: ba.addr, length: 4, lkey: ma.lkey }], remoteAddr: bb.addr + 100, rkey: mb.rkey }] } });
      run({ cmd: 'engine.run', args: {} });
      const poll = rec.length;
      run({ cmd: 'cq.poll', args: { cq: ca } });
      const read = rec.length;
      run({ cmd: 'memory.read', args: { addr: bb.addr + 100, length: 4 } });
      run({ cmd: 'post.send', args: { qp: qa, wrs: [{ wrId: 6, opcode: 'IBV_WR_RDMA_WRITE', sgList: [{ addr: ba.addr, length: 4, lkey: ma.lkey }], remoteAddr: bb.addr, rkey: mb.rkey ^ 0x01 }] } });
      run({ cmd: 'engine.run', args: {} });
      const poll2 = rec.length;
      run({ cmd: 'cq.poll', args: { cq: ca } });

      rec.addExpectation(poll, rec.expectFromOutcome(poll));      // "expect this CQE"
      rec.addExpectation(read, rec.expectFromOutcome(read));      // "expect these bytes"
      rec.addExpectation(poll2, rec.expectFromOutcome(poll2));
      expect(rec.rename('qp0', 'requester')).toBeNull();
      expect(rec.rename('left', 'Bad')).not.toBeNull();
      rec.setNote(poll2, 'the stale key byte fails');
    } finally { ex.close(); }

    const text = rec.toJSON();
    expect(text).toContain('"devices": [{"name":"left","profile":"rxe"},{"name":"dev0","profile":"rxe"}]');
    expect(text).not.toContain('session.info');
    expect(text).toContain('"lkey":"$mr0.lkey"');
    expect(text).toContain('"remoteAddr":"$buf1.addr+100","rkey":"$mr1.rkey"');
    expect(text).toContain('"rkey":"$mr1.rkey^0x1"');
    expect(text).toContain('"qp":"requester"');
    expect(text).toContain('"expect":{"error":"EINVAL"}');
    expect(text).toContain('"wc":[{"status":"IBV_WC_SUCCESS","wrId":5,"opcode":"IBV_WC_RDMA_WRITE"}]');
    expect(text).toContain('"wc":[{"status":"IBV_WC_REM_ACCESS_ERR","wrId":6}]');
    expect(text).toContain('"hex":"cafebabe"');

    // replay the saved file on a fresh session with another seed: different key bytes, same behaviour
    const loaded = parseScenarioText(text, 'recorded.json');
    expect(loaded.ok ? 'ok' : loaded.error.message).toBe('ok');
    if (!loaded.ok) return;
    for (const seed of [7, 99]) {
      const ex2 = factory(seed);
      try {
        const rep = new ScenarioRun(loaded.scenario, ex2, { seed }).run();
        expect(rep.failure ?? 'passed').toBe('passed');
      } finally { ex2.close(); }
    }
  });

  it('while autorun is on, every recorded command is preceded by an engine.run', () => {
    const rec = new ScenarioRecorder();
    const ex = factory(1);
    try {
      const exec = (raw: unknown) => { const c = Command.parse(raw) as Cmd; const o = ex.exec(c); rec.record(c, o); return o.ok ? (o.result as Record<string, any>) : {}; };
      const d = exec({ cmd: 'device.create', args: { profile: 'rxe' } }).handle;
      exec({ cmd: 'engine.autorun', args: { on: true } });
      const pd = exec({ cmd: 'pd.alloc', args: { device: d } }).pd;
      exec({ cmd: 'pd.dealloc', args: { pd } });
      exec({ cmd: 'engine.autorun', args: { on: false } });
      exec({ cmd: 'pd.alloc', args: { device: d } });
    } finally { ex.close(); }
    expect(rec.scenario().steps.map((s) => s.cmd)).toEqual(['pd.alloc', 'engine.run', 'pd.dealloc', 'pd.alloc']);
    expect(rec.toScenario().ok).toBe(true);
  });

  it('a removed step that created a name makes the recording invalid, with the step and field', () => {
    const rec = new ScenarioRecorder();
    const ex = factory(1);
    try {
      const exec = (raw: unknown) => { const c = Command.parse(raw) as Cmd; const o = ex.exec(c); rec.record(c, o); return o.ok ? (o.result as Record<string, any>) : {}; };
      const d = exec({ cmd: 'device.create', args: { profile: 'rxe' } }).handle;
      const pd = exec({ cmd: 'pd.alloc', args: { device: d } }).pd;
      exec({ cmd: 'pd.dealloc', args: { pd } });
    } finally { ex.close(); }
    expect(rec.toScenario().ok).toBe(true);
    rec.removeStep(0);
    const r = rec.toScenario();
    expect(r.ok ? '' : r.error.message).toBe('step 1 (pd.dealloc) args.pd: unknown name "pd0" (names come from "devices" or an earlier step\'s "as")');
  });
});
