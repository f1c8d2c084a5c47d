// The host's scenario plugin on the real software device: live commands become named steps, "expect this"
// comes from real outcomes, a saved recording replays headless, a library scenario replays step by step
// through the host (journaled, events to clients), a failed expectation stops the replay and says why, and a
// malformed file is refused with the loader's step/field message.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Command, DeviceEvent, FromHost } from '../protocol/index.ts';
import type { ExecResult } from './api.ts';
import { HostCore, type HostExecutor } from './core.ts';
import { ScenarioHostCore } from './recorder.ts';
import { REPO_ROOT, libraryFile, libraryFiles } from '../scenario/library.ts';
import { runScenario } from '../scenario/run.ts';
import { needAddon } from '../scenario/testlib.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const mod = await needAddon('recorder tests');
const make = (): HostExecutor => mod.createExecutor({ seed: 1 });

function host() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-rec-'));
  const core = new ScenarioHostCore(make(), { sessionDir: dir, defaultDevice: null, batcher: { intervalMs: 0 } });
  const plugin = core.scenario;
  core.start();
  const batches: FromHost[] = [];
  core.addClient((m) => batches.push(m));
  const x = (c: unknown): ExecResult => core.execute(c as Command);
  const okr = (c: unknown) => { const r = x(c); if (!r.ok) throw new Error(`${(c as Command).cmd}: ${r.error.code} ${r.error.message}`); return r.result as Record<string, unknown>; };
  return { core, plugin, x, okr, batches, dir };
}

/** two devices with a PD, a 4 KiB buffer and an MR each (B's also remotely writable, plus `moreAccessB`), a CQ each
 *  and two connected RC QPs, created through the host in this order (the recording names follow it) */
function connectedPair(okr: ReturnType<typeof host>['okr'], moreAccessB: string[]) {
  const d0 = okr({ cmd: 'device.create', args: { profile: 'rxe' } }).handle as number;
  const d1 = okr({ cmd: 'device.create', args: { profile: 'rxe' } }).handle as number;
  const pdA = okr({ cmd: 'pd.alloc', args: { device: d0 } }).pd as number;
  const pdB = okr({ cmd: 'pd.alloc', args: { device: d1 } }).pd as number;
  const bufA = okr({ cmd: 'buffer.alloc', args: { length: 4096 } });
  const bufB = okr({ cmd: 'buffer.alloc', args: { length: 4096 } });
  const mrA = okr({ cmd: 'mr.reg', args: { pd: pdA, addr: bufA.addr, length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE'] } });
  const mrB = okr({ cmd: 'mr.reg', args: { pd: pdB, addr: bufB.addr, length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE', ...moreAccessB] } });
  const cqA = okr({ cmd: 'cq.create', args: { device: d0, cqe: 16 } }).cq as number;
  const cqB = okr({ cmd: 'cq.create', args: { device: d1, cqe: 16 } }).cq as number;
  const qpA = okr({ cmd: 'qp.create', args: { pd: pdA, sendCq: cqA, recvCq: cqA, qpType: 'IBV_QPT_RC' } }).qp as number;
  const qpB = okr({ cmd: 'qp.create', args: { pd: pdB, sendCq: cqB, recvCq: cqB, qpType: 'IBV_QPT_RC' } }).qp as number;
  okr({ cmd: 'qp.connect', args: { qp: qpA, peer: qpB } });
  return { pdA, pdB, bufA, bufB, mrA, mrB, cqA, cqB, qpA, qpB };
}

describe('scenario plugin of the backend host', () => {
  it('records a console session with names and references, adds expectations from outcomes, and the saved file passes headless', () => {
    const { core, x, okr } = host();
    const { bufA, bufB, mrA, mrB, cqA, qpA } = connectedPair(okr, []);
    okr({ cmd: 'memory.write', args: { addr: bufA.addr, data: 'cafebabe' } });
    okr({ cmd: 'memory.read', args: { addr: bufA.addr, length: 4 } });   // a read: not a step
    okr({ cmd: 'post.send', args: { qp: qpA, wrs: [{ wrId: 7, opcode: 'IBV_WR_RDMA_WRITE', sgList: [{ addr: bufA.addr, length: 4, lkey: mrA.lkey }], remoteAddr: (bufB.addr as number) + 8, rkey: mrB.rkey }] } });
    okr({ cmd: 'engine.run', args: {} });
    okr({ cmd: 'cq.poll', args: { cq: cqA } });
    expect(x({ cmd: 'pd.dealloc', args: { pd: 99999 } }).ok).toBe(false);

    const st = okr({ cmd: 'scenario.get', args: {} }) as { recording: { devices: unknown[]; steps: { cmd: string; args: Record<string, unknown>; as?: string; note?: string; expect?: unknown }[]; outcomes: ({ wcs?: { status: string }[] } | null)[] } };
    const steps = st.recording.steps;
    expect(st.recording.devices).toEqual([{ name: 'dev0', profile: 'rxe' }, { name: 'dev1', profile: 'rxe' }]);
    expect(steps.map((s) => s.cmd)).not.toContain('memory.read');
    const post = steps.find((s) => s.cmd === 'post.send')!;
    expect(JSON.stringify(post.args)).toContain('"rkey":"$mr1.rkey"');
    expect(JSON.stringify(post.args)).toContain('"remoteAddr":"$buf1.addr+8"');
    expect(steps[steps.length - 1]).toMatchObject({ cmd: 'pd.dealloc', expect: { error: 'ENOENT' } });
    const poll = steps.findIndex((s) => s.cmd === 'cq.poll');
    expect(st.recording.outcomes[poll]!.wcs![0]!.status).toBe('IBV_WC_SUCCESS');

    // the failed dealloc of an unknown handle cannot replay (no name for it): rename a QP, expect, then save
    expect(x({ cmd: 'scenario.rename', args: { from: 'qp0', to: 'qpA' } }).ok).toBe(true);
    const bad = x({ cmd: 'scenario.rename', args: { from: 'qp1', to: 'qpA' } });
    expect(bad.ok === false && bad.error.message).toMatch(/already used/);
    expect(x({ cmd: 'scenario.expect', args: { step: poll + 1, only: 0 } }).ok).toBe(true);
    expect(x({ cmd: 'scenario.expect', args: { step: poll + 1, bytes: { addr: (bufB.addr as number) + 8, length: 4 } } }).ok).toBe(true);
    expect(x({ cmd: 'scenario.expect', args: { step: poll + 1, qp: qpA } }).ok).toBe(true);
    expect(x({ cmd: 'scenario.note', args: { step: 1, note: 'first PD' } }).ok).toBe(true);
    const after = (okr({ cmd: 'scenario.get', args: {} }) as typeof st).recording.steps;
    expect(after[poll]!.expect).toEqual({
      wc: [{ status: 'IBV_WC_SUCCESS', opcode: 'IBV_WC_RDMA_WRITE', wrId: 7 }],
      bytes: [{ addr: '$buf1.addr+8', hex: 'cafebabe' }],
      qpState: [{ qp: 'qpA', state: 'IBV_QPS_RTS' }],
    });
    expect(JSON.stringify(after)).toContain('"qp":"qpA"');
    expect(after[0]!.note).toBe('first PD');

    // "expect these packets": what the device sent while engine.run ran
    const run = steps.findIndex((s) => s.cmd === 'engine.run');
    const seen = (st.recording.outcomes[run] as unknown as { packet: unknown[] }).packet;
    expect(seen).toEqual([
      { opcode: 'RC_RDMA_WRITE_ONLY', count: 1, from: 'dev0' },
      { opcode: 'RC_ACKNOWLEDGE', syndrome: 'ACK', count: 1, from: 'dev1' },
    ]);
    expect(x({ cmd: 'scenario.expect', args: { step: run + 1, packets: true } }).ok).toBe(true);
    const none = x({ cmd: 'scenario.expect', args: { step: 1, packets: true } });
    expect(none.ok === false && none.error.message).toMatch(/sent no packet/);

    okr({ cmd: 'scenario.meta', args: { name: 'my lab', description: 'an RDMA WRITE' } });
    // the failed dealloc of unknown handle 99999 (last step) can go
    const n0 = (okr({ cmd: 'scenario.get', args: {} }) as typeof st).recording.steps.length;
    okr({ cmd: 'scenario.remove', args: { step: n0 } });
    expect((okr({ cmd: 'scenario.get', args: {} }) as typeof st).recording.steps.map((s) => s.cmd)).not.toContain('pd.dealloc');
    const saved = okr({ cmd: 'scenario.save', args: {} }) as { json: string; name: string };
    expect(saved.name).toBe('my lab');
    const obj = JSON.parse(saved.json);
    expect(obj).toMatchObject({ name: 'my lab', description: 'an RDMA WRITE' });
    expect(obj.steps[run].expect).toEqual({ packet: seen });
    const headless = make();
    try {
      const rep = runScenario(obj, headless);
      expect(rep.failure).toBeUndefined();
      expect(rep.passed).toBe(true);
      // and a wrong expectation fails (the check is real)
      obj.steps[poll].expect.bytes[0].hex = 'cafebabf';
      const rep2 = runScenario(obj, headless);
      expect(rep2.passed).toBe(false);
      expect(rep2.failure).toMatch(/expect\.bytes\.0: .*expected cafebabf, got cafebabe/);
    } finally { headless.close(); }
    // removing a step that created a name used later: saving says which step and which name
    okr({ cmd: 'scenario.remove', args: { step: 1 } });
    const refused = x({ cmd: 'scenario.save', args: {} });
    expect(refused.ok === false && refused.error.message).toMatch(/step \d+ \(mr\.reg\) args\.pd: unknown name "pd0"/);
    core.close();
  });

  it('keeps keys current when a bind completes inside an autorun tick (the binary event path), so later steps name them', () => {
    const { core, okr } = host();
    const { pdB, bufA, bufB, mrA, mrB, qpA, qpB } = connectedPair(okr, ['IBV_ACCESS_MW_BIND']);
    const mw = okr({ cmd: 'mw.alloc', args: { pd: pdB, type: 'IBV_MW_TYPE_2' } });
    const bound = (mw.rkey as number) ^ 1;
    okr({ cmd: 'post.send', args: { qp: qpB, wrs: [{ wrId: 60, opcode: 'IBV_WR_BIND_MW', mw: mw.mw, bindRkey: bound, bindMr: mrB.mr, bindAddr: bufB.addr, bindLength: 512, bindAccess: ['IBV_ACCESS_REMOTE_WRITE'] }] } });
    // the bind completes inside an autorun tick: its events leave the device in bulk (binary frames), not through a
    // command; the recorder sees its lifecycle events all the same
    const rec = (core.scenario as unknown as { recorder: { observe(e: readonly DeviceEvent[]): void } }).recorder;
    const observed: DeviceEvent[] = [];
    const observe = rec.observe.bind(rec);
    rec.observe = (evs) => { for (const item of evs) observed.push(item); observe(evs); };
    expect(core.executor.execBulk!({ cmd: 'engine.step', args: { count: 50 } }).ok).toBe(true);
    core.pumpEvents(true);
    expect(observed.filter((e) => e.kind === 'ObjectModified' && e.objKind === 'mw').map((e) => e.a)).toEqual([bound]);
    okr({ cmd: 'post.send', args: { qp: qpA, wrs: [{ wrId: 1, opcode: 'IBV_WR_RDMA_WRITE', sgList: [{ addr: bufA.addr, length: 4, lkey: mrA.lkey }], remoteAddr: bufB.addr, rkey: bound }] } });
    const steps = (okr({ cmd: 'scenario.get', args: {} }) as { recording: { steps: { cmd: string; args: Record<string, unknown> }[] } }).recording.steps;
    const write = steps.filter((s) => s.cmd === 'post.send').pop()!;
    expect(JSON.stringify(write.args)).toContain('"rkey":"$mw0.rkey"');
    core.close();
  });

  it('replays a library scenario step by step through the host; the journal and the clients see it; the recording takes its names', () => {
    const { core, x, okr, batches } = host();
    const text = fs.readFileSync(libraryFile('rc_rdma_write.json'), 'utf8');
    const loaded = okr({ cmd: 'scenario.load', args: { text, file: 'rc_rdma_write.json' } }) as { replay: { total: number; position: number } };
    expect(loaded.replay.position).toBe(0);
    const total = loaded.replay.total;
    const first = okr({ cmd: 'scenario.step', args: {} }) as { replay: { position: number }; reports: { number: number; ok: boolean }[] };
    expect(first.reports).toEqual([expect.objectContaining({ number: 1, ok: true, cmd: 'pd.alloc' })]);
    expect(first.replay.position).toBe(1);
    const rest = okr({ cmd: 'scenario.run_to', args: { step: total } }) as { replay: { passed: boolean; done: boolean; digest: string }; reports: { ok: boolean }[] };
    expect(rest.reports).toHaveLength(total - 1);
    expect(rest.reports.every((r) => r.ok)).toBe(true);
    expect(rest.replay).toMatchObject({ passed: true, done: true });
    // same digest as the headless runner
    const ex = make();
    try { expect(rest.replay.digest).toBe(runScenario(text, ex).digest); } finally { ex.close(); }
    // it ran on the host: journaled, and event batches went out to the clients
    expect(core.journal.read().entries.map((e) => e.command.cmd)).toContain('post.send');
    core.batcher.flushNow();
    expect(batches.some((b) => b.type === 'events')).toBe(true);
    const rec = (okr({ cmd: 'scenario.get', args: {} }) as { recording: { name: string; steps: { as?: string; expect?: unknown }[] } }).recording;
    expect(rec.name).toBe('RC RDMA WRITE: bytes land in the remote MR');
    expect(rec.steps.map((s) => s.as).filter(Boolean)).toEqual(['pdA', 'pdB', 'bufA', 'bufB', 'mrA', 'mrB', 'cqA', 'cqB', 'qpA', 'qpB']);
    expect(x({ cmd: 'scenario.step', args: {} }).ok).toBe(true);   // finished: nothing more runs
    core.close();
  });

  it('a restarted host rebuilds the recording from its journal; an unchanged recording is not sent again', () => {
    const { core, okr, dir } = host();
    const d = okr({ cmd: 'device.create', args: { profile: 'rxe', name: 'alpha' } }).handle as number;
    okr({ cmd: 'pd.alloc', args: { device: d } });
    const buf = okr({ cmd: 'buffer.alloc', args: { length: 64 } });
    const v = (okr({ cmd: 'scenario.get', args: {} }) as { version: number }).version;
    expect(okr({ cmd: 'scenario.get', args: { known: v } })).toEqual({ version: v, unchanged: true });
    okr({ cmd: 'memory.read', args: { addr: buf.addr, length: 8 } });   // a read changes nothing
    expect(okr({ cmd: 'scenario.get', args: { known: v } })).toEqual({ version: v, unchanged: true });
    okr({ cmd: 'memory.write', args: { addr: buf.addr, data: '01' } });
    expect(okr({ cmd: 'scenario.get', args: { known: v } }).version).toBeGreaterThan(v);
    core.close();
    const again = new ScenarioHostCore(make(), { sessionDir: dir, defaultDevice: null });
    again.start();
    const r = again.execute({ cmd: 'scenario.get', args: {} });
    expect(r.ok && (r.result as { recording: unknown }).recording).toMatchObject({
      devices: [{ name: 'alpha', profile: 'rxe' }],
      steps: [{ cmd: 'pd.alloc', args: { device: 'alpha' }, as: 'pd0' }, { cmd: 'buffer.alloc', args: { length: 64 }, as: 'buf0' },
        { cmd: 'memory.write', args: { addr: '$buf0.addr', data: '01' } }],
    });
    again.close();
  });

  it('a restarted host replays a journal whose steps produce hundreds of thousands of events (a free run\'s)', () => {
    // the journal written by a plain host (a free run journals its steps the same way)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-rec-'));
    const core = new HostCore(make(), { sessionDir: dir, defaultDevice: null });
    core.start();
    const okr = (c: unknown) => { const r = core.execute(c as Command); if (!r.ok) throw new Error(`${(c as Command).cmd}: ${r.error.message}`); return r.result as Record<string, unknown>; };
    const { bufA, bufB, mrA, mrB, qpA } = connectedPair(okr, []);
    const wrs = [0, 1, 2, 3].map((i) => ({ wrId: i, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: i === 3 ? ['IBV_SEND_SIGNALED'] : [],
      sgList: [{ addr: bufA.addr, length: 4, lkey: mrA.lkey }], remoteAddr: (bufB.addr as number) + 64 * i, rkey: mrB.rkey }));
    okr({ cmd: 'engine.traffic', args: { on: true, qp: qpA, wrs } });
    for (let i = 0; i < 3; i++) core.journal.append({ cmd: 'engine.step', args: { count: 100_000 } });   // as a free run journals them
    okr({ cmd: 'engine.traffic', args: { on: false } });
    core.close();
    const again = new ScenarioHostCore(make(), { sessionDir: dir, defaultDevice: null });
    expect(again.start().failed).toEqual([]);   // the recorder took every replayed event (it overflowed the stack before)
    const info = again.execute({ cmd: 'session.info', args: {} });
    expect(info.ok && (info.result as { eventSeq: number }).eventSeq).toBeGreaterThan(300_000);
    again.close();
  }, 60_000);

  it('stops at the first failed expectation with expected vs got, and refuses a malformed file with step and field', () => {
    const { core, x, okr } = host();
    const sc = JSON.parse(fs.readFileSync(libraryFile('rc_rdma_write.json'), 'utf8'));
    const poll = sc.steps.findIndex((s: { cmd: string }) => s.cmd === 'cq.poll');
    sc.steps[poll].expect.wc[0].status = 'IBV_WC_REM_ACCESS_ERR';
    okr({ cmd: 'scenario.load', args: { text: JSON.stringify(sc) } });
    const r = okr({ cmd: 'scenario.run_to', args: { step: sc.steps.length } }) as { replay: { passed: boolean; failedStep: number; failure: string; position: number } };
    expect(r.replay.passed).toBe(false);
    expect(r.replay.failedStep).toBe(poll + 1);
    expect(r.replay.failure).toMatch(/expect\.wc\.0\.status: expected IBV_WC_REM_ACCESS_ERR \(10\), got IBV_WC_SUCCESS \(0\)/);
    expect(r.replay.position).toBe(poll + 1);

    sc.steps[3].args = { length: 'big' };
    const bad = x({ cmd: 'scenario.load', args: { text: JSON.stringify(sc), file: 'bad.json' } });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.error.code).toBe('BAD_SCENARIO');
      expect(bad.error.message).toMatch(/step 4 \(buffer\.alloc\) args\.length/);
      expect(bad.error.field).toBe('steps.3.args.length');
    }
    const notJson = x({ cmd: 'scenario.load', args: { text: '{"verbslab": ', file: 'x.json' } });
    expect(notJson.ok === false && notJson.error.message).toMatch(/x\.json/);
    core.close();
  });

  it('every library scenario replays through the host, and what the host recorded of it passes headless again', () => {
    const dir = REPO_ROOT;
    const files = libraryFiles().map((f) => path.relative(REPO_ROOT, f));
    expect(files.length).toBeGreaterThan(10);
    const results: string[] = [];
    for (const f of files) {
      const { core, okr } = host();
      const text = fs.readFileSync(path.join(dir, f), 'utf8');
      const total = (okr({ cmd: 'scenario.load', args: { text, file: f } }) as { replay: { total: number } }).replay.total;
      const rp = (okr({ cmd: 'scenario.run_to', args: { step: total } }) as { replay: { passed: boolean; failure?: string } }).replay;
      if (f === 'srq_limit_event.json') {
        // what the console shows of a step includes the async events the device raised during it
        const outs = (okr({ cmd: 'scenario.get', args: {} }) as { recording: { outcomes: ({ asyncEvent?: { type: string; obj?: string }[] } | null)[] } }).recording.outcomes;
        const k = outs.findIndex((o) => o?.asyncEvent?.some((a) => a.type === 'IBV_EVENT_SRQ_LIMIT_REACHED'));
        expect(k).toBeGreaterThanOrEqual(0);
        expect(outs[k]!.asyncEvent![0]!.obj).toMatch(/^[A-Za-z]/);
      }
      const saved = okr({ cmd: 'scenario.save', args: {} }) as { json: string };
      const ex = make();
      try {
        const rep = runScenario(saved.json, ex);
        results.push(`${f}: replay ${rp.passed ? 'passed' : rp.failure}; recording ${rep.passed ? 'passed' : rep.failure}`);
      } finally { ex.close(); core.close(); }
    }
    expect(results).toEqual(files.map((f) => `${f}: replay passed; recording passed`));
  });
});
