// Verbs through the executor (qp.connect macro, RDMA WRITE, completion names, decoded packets) and the
// autorun timer driving the engine: its steps are journaled, so a replay reproduces the same memory.
// Time is virtual (vitest fake timers), nothing depends on the wall clock.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HostCore } from './core.ts';
import { NativeExecutor } from './executor.ts';
import type { Command } from '../protocol/index.ts';

type R = { ok: boolean; result?: any; error?: any };
function setup(core: { execute(c: Command): R }) {
  const x = (c: unknown) => { const r = core.execute(c as Command); expect(r, JSON.stringify(c)).toMatchObject({ ok: true }); return r.result; };
  x({ cmd: 'device.create', args: { profile: 'rxe', name: 'left' } });
  x({ cmd: 'device.create', args: { profile: 'rxe', name: 'right' } });
  const devs = x({ cmd: 'device.list', args: {} }).devices as { handle: number; name: string }[];
  const [d1, d2] = ['left', 'right'].map((n) => devs.find((d) => d.name === n)!.handle);
  const pa = x({ cmd: 'pd.alloc', args: { device: d1 } }).pd, pb = x({ cmd: 'pd.alloc', args: { device: d2 } }).pd;
  const ba = x({ cmd: 'buffer.alloc', args: { length: 4096 } }), bb = x({ cmd: 'buffer.alloc', args: { length: 4096 } });
  const acc = ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE'];
  const ma = x({ cmd: 'mr.reg', args: { pd: pa, addr: ba.addr, length: 4096, access: acc } });
  const mb = x({ cmd: 'mr.reg', args: { pd: pb, addr: bb.addr, length: 4096, access: acc } });
  const ca = x({ cmd: 'cq.create', args: { device: d1, cqe: 16 } }).cq, cb = x({ cmd: 'cq.create', args: { device: d2, cqe: 16 } }).cq;
  const qa = x({ cmd: 'qp.create', args: { pd: pa, sendCq: ca, recvCq: ca, qpType: 'IBV_QPT_RC' } }).qp;
  const qb = x({ cmd: 'qp.create', args: { pd: pb, sendCq: cb, recvCq: cb, qpType: 'IBV_QPT_RC' } }).qp;
  const conn = x({ cmd: 'qp.connect', args: { qp: qa, peer: qb } });
  x({ cmd: 'memory.write', args: { addr: ba.addr, data: 'cafebabe' } });
  const write = (rkey: number) => core.execute({ cmd: 'post.send', args: { qp: qa, wrs: [{ wrId: 7, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: ['IBV_SEND_SIGNALED'], sgList: [{ addr: ba.addr, length: 4, lkey: ma.lkey }], remoteAddr: bb.addr, rkey }] } } as Command);
  return { x, conn, ca, bb, mb, ma, ba, write, qa };
}

afterEach(() => { vi.useRealTimers(); });

describe('verbs through the executor', () => {
  it('qp.connect walks both QPs to RTS; an RDMA WRITE moves the bytes and completes with names', () => {
    const ex = new NativeExecutor();
    const s = setup({ execute: (c) => ex.exec(c) });
    expect(s.conn.transitions.map((t: { to: string }) => t.to)).toEqual(['IBV_QPS_INIT', 'IBV_QPS_INIT', 'IBV_QPS_RTR', 'IBV_QPS_RTR', 'IBV_QPS_RTS', 'IBV_QPS_RTS']);
    expect(s.conn.qps.map((q: { attr: { qpStateName: string } }) => q.attr.qpStateName)).toEqual(['IBV_QPS_RTS', 'IBV_QPS_RTS']);
    expect(s.write(s.mb.rkey).ok).toBe(true);
    s.x({ cmd: 'engine.run', args: {} });
    expect(s.x({ cmd: 'memory.read', args: { addr: s.bb.addr, length: 4 } }).hex).toBe('cafebabe');
    const wcs = s.x({ cmd: 'cq.poll', args: { cq: s.ca } }).wcs;
    expect(wcs).toEqual([expect.objectContaining({ wrId: 7, status: 0, statusName: 'IBV_WC_SUCCESS', opcode: 1, opcodeName: 'IBV_WC_RDMA_WRITE', byteLen: 4 })]);
    const pkt = ex.drainEvents().find((e) => e.kind === 'PacketSent' && (e.pkt as { opcode?: number })?.opcode === 0x0a);
    expect(pkt?.pkt).toMatchObject({ opcodeName: 'RC RDMA Write Only', reth: { va: s.bb.addr, rkey: s.mb.rkey, dmaLen: 4 }, payloadLen: 4 });
    expect(String((pkt?.pkt as { hex: string }).hex)).toContain('cafebabe');
    ex.close();
  });

  it('a wrong rkey completes with status 10 and its rdma-core name', () => {
    const ex = new NativeExecutor();
    const s = setup({ execute: (c) => ex.exec(c) });
    expect(s.write((s.mb.rkey ^ 0xff) >>> 0).ok).toBe(true);
    s.x({ cmd: 'engine.run', args: {} });
    const wcs = s.x({ cmd: 'cq.poll', args: { cq: s.ca } }).wcs;
    expect(wcs[0]).toMatchObject({ status: 10, statusName: 'IBV_WC_REM_ACCESS_ERR' });
    ex.close();
  });
});

describe('engine.autorun', () => {
  it('steps the engine on a timer, journals the steps, and a replay gives the same result', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'] });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-autorun-'));
    const core = new HostCore(new NativeExecutor(), { sessionDir: dir, defaultDevice: null });
    core.start();
    const s = setup(core);
    expect(s.write(s.mb.rkey).ok).toBe(true);
    expect(s.x({ cmd: 'memory.read', args: { addr: s.bb.addr, length: 4 } }).hex).toBe('00000000');
    s.x({ cmd: 'engine.autorun', args: { on: true, stepsPerSecond: 1000 } });
    vi.advanceTimersByTime(500);
    expect(s.x({ cmd: 'memory.read', args: { addr: s.bb.addr, length: 4 } }).hex).toBe('cafebabe');
    const steps = core.journal.read().entries.filter((e) => e.command.cmd === 'engine.step');
    expect(steps.length).toBeGreaterThan(0);
    s.x({ cmd: 'engine.autorun', args: { on: false } });
    core.close();

    const again = new HostCore(new NativeExecutor(), { sessionDir: dir, defaultDevice: null });
    const rep = again.start();
    expect(rep.failed).toEqual([]);
    expect((again.execute({ cmd: 'memory.read', args: { addr: s.bb.addr, length: 4 } }) as R).result.hex).toBe('cafebabe');
    const wcs = (again.execute({ cmd: 'cq.poll', args: { cq: s.ca, max: 16 } }) as R).result.wcs;
    expect(wcs).toEqual([expect.objectContaining({ wrId: 7, statusName: 'IBV_WC_SUCCESS' })]);
    again.close();
  }, 120_000);
});

describe('load generator (engine.traffic)', () => {
  it('keeps the send queue full while the engine runs; bytes arrive; off stops it', () => {
    const ex = new NativeExecutor();
    const s = setup({ execute: (c) => ex.exec(c) });
    const wrs = [0, 1, 2, 3].map((i) => ({ wrId: i, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: i === 3 ? ['IBV_SEND_SIGNALED'] : [],
      sgList: [{ addr: s.ba.addr, length: 4, lkey: s.ma.lkey }], remoteAddr: s.bb.addr + 64 * i, rkey: s.mb.rkey }));
    s.x({ cmd: 'engine.traffic', args: { on: true, qp: s.qa, cq: s.ca, wrs } });
    const r = s.x({ cmd: 'engine.step', args: { count: 20_000 } });
    expect(r.steps).toBe(20_000);                 // never idle: the generator refills the queue
    expect(r.traffic.on).toBe(true);
    expect(r.traffic.posted).toBeGreaterThan(100);
    expect(r.traffic.completed).toBeGreaterThan(10);
    for (let i = 0; i < 4; i++) expect(s.x({ cmd: 'memory.read', args: { addr: s.bb.addr + 64 * i, length: 4 } }).hex).toBe('cafebabe');
    const off = s.x({ cmd: 'engine.traffic', args: { on: false } });
    expect(off.traffic.on).toBe(false);
    s.x({ cmd: 'engine.run', args: {} });
    const idle = s.x({ cmd: 'engine.step', args: { count: 10 } });
    expect(idle.idle).toBe(true);
    expect(idle.traffic.posted).toBe(off.traffic.posted);
  });

  it('stops at the first error completion and says why', () => {
    const ex = new NativeExecutor();
    const s = setup({ execute: (c) => ex.exec(c) });
    const wrs = [{ wrId: 9, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: ['IBV_SEND_SIGNALED'], sgList: [{ addr: s.ba.addr, length: 4, lkey: s.ma.lkey }], remoteAddr: s.bb.addr, rkey: (s.mb.rkey ^ 0xff) >>> 0 }];
    s.x({ cmd: 'engine.traffic', args: { on: true, qp: s.qa, cq: s.ca, wrs } });
    const r = s.x({ cmd: 'engine.step', args: { count: 5_000 } });
    expect(r.traffic.on).toBe(false);
    expect(r.traffic.stopped).toMatch(/IBV_WC_REM_ACCESS_ERR/);
  });

  it('refuses a missing field or a CQ that is not the QP\'s send CQ, naming the field; cq defaults to the send CQ', () => {
    const ex = new NativeExecutor();
    const s = setup({ execute: (c) => ex.exec(c) });
    const wr = { opcode: 'IBV_WR_SEND', sgList: [] };
    expect(ex.exec({ cmd: 'engine.traffic', args: { on: true, cq: s.ca, wrs: [wr] } } as never)).toMatchObject({ ok: false, error: { field: 'command.args.qp' } });
    expect(ex.exec({ cmd: 'engine.traffic', args: { on: true, qp: s.qa, cq: s.ca } } as never)).toMatchObject({ ok: false, error: { field: 'command.args.wrs' } });
    expect(ex.exec({ cmd: 'engine.traffic', args: { on: true, qp: s.qa, wrs: [wr] } } as never)).toMatchObject({ ok: true, result: { traffic: { on: true, cq: s.ca } } });
    const other = s.x({ cmd: 'cq.create', args: { device: 1, cqe: 16 } }).cq;
    expect(ex.exec({ cmd: 'engine.traffic', args: { on: true, qp: s.qa, cq: other, wrs: [wr] } } as never)).toMatchObject({ ok: false, error: { field: 'command.args.cq' } });
  });
});

describe('engine.step with the load generator', () => {
  it('the same steps in one command or in 512-step commands give the same events (how a free run is journaled)', () => {
    const wrsOf = (s: ReturnType<typeof setup>) => Array.from({ length: 40 }, (_, i) => ({
      wrId: i, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: i % 8 === 7 ? ['IBV_SEND_SIGNALED'] : [],
      sgList: [{ addr: s.ba.addr, length: 4 + (i % 5) * 64, lkey: s.ma.lkey }], remoteAddr: s.bb.addr + (i % 4) * 512, rkey: s.mb.rkey,
    }));
    const run = (pieces: number) => {
      const ex = new NativeExecutor({ seed: 5 });
      try {
        const s = setup({ execute: (c) => ex.exec(c) });
        s.x({ cmd: 'engine.traffic', args: { on: true, qp: s.qa, wrs: wrsOf(s) } });
        ex.drainEvents();
        let steps = 0;
        for (let i = 0; i < pieces; i++) steps += s.x({ cmd: 'engine.step', args: { count: 20_480 / pieces } }).steps;
        return { steps, events: ex.drainEvents(), traffic: s.x({ cmd: 'engine.traffic', args: { on: false } }).traffic };
      } finally { ex.close(); }
    };
    const a = run(1);
    const b = run(40);
    expect(a.events.length).toBeGreaterThan(1000);
    expect(a.traffic.posted).toBeGreaterThan(100);
    expect(b.steps).toBe(a.steps);
    expect(b.traffic).toEqual(a.traffic);
    expect(b.events).toEqual(a.events);
  });
});

describe('free-running autorun (engine.autorun free)', () => {
  const until = async (what: string, ok: () => boolean) => {
    for (let i = 0; i < 2000 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(ok(), what).toBe(true);
  };
  it('runs on the runner thread; the console gets a sample, every command event and the rings; the journal replays it exactly', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-free-'));
    const core = new HostCore(new NativeExecutor(), { sessionDir: dir, defaultDevice: null, ackWindow: 64, ringSnapshotMs: 0 });
    core.start();
    const msgs: any[] = [];
    core.addClient((m) => msgs.push(m));
    const s = setup(core);
    const wrs = [0, 1, 2, 3].map((i) => ({ wrId: i, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: i === 3 ? ['IBV_SEND_SIGNALED'] : [],
      sgList: [{ addr: s.ba.addr, length: 4, lkey: s.ma.lkey }], remoteAddr: s.bb.addr + 64 * i, rkey: s.mb.rkey }));
    s.x({ cmd: 'engine.traffic', args: { on: true, qp: s.qa, cq: s.ca, wrs } });
    s.x({ cmd: 'engine.autorun', args: { on: true, stepsPerSecond: 200_000, free: true } });
    const journaled = () => core.journal.read().entries.filter((e) => e.command.cmd === 'engine.step').reduce((n, e) => n + (e.command.args as { count: number }).count, 0);
    await until('the runner ran 20k steps', () => journaled() >= 20_000);
    // hand-stepping is refused while it runs, naming why
    expect(core.execute({ cmd: 'engine.step', args: { count: 1 } })).toMatchObject({ ok: false, error: { code: 'EBUSY', message: expect.stringMatching(/free running/) } });
    // a command lands between two batches: the WRITEs after it carry the new bytes
    s.x({ cmd: 'memory.write', args: { addr: s.ba.addr, data: 'deadbeef' } });
    const at = journaled();
    await until('20k more steps', () => journaled() >= at + 20_000);
    s.x({ cmd: 'engine.autorun', args: { on: false } });
    const live = {
      bytes: s.x({ cmd: 'memory.read', args: { addr: s.bb.addr, length: 256 } }).hex,
      traffic: s.x({ cmd: 'engine.traffic', args: { on: false } }).traffic,
      seq: (core.executor as NativeExecutor).lastSeq(),
    };
    expect(live.bytes.slice(0, 8)).toBe('deadbeef');
    expect(live.traffic.posted).toBeGreaterThan(1000);
    core.close();

    // the console's share: a sample (events dropped, counted), every state and command event, the rings
    const events = msgs.filter((m) => m.type === 'events');
    expect(events.reduce((n, m) => n + m.dropped, 0)).toBeGreaterThan(10_000);
    const all = events.flatMap((m) => m.events as { kind: string; objKind: string; a: number; seq: number }[]);
    expect(all.filter((e) => e.kind === 'MemWrite' && e.a === s.ba.addr)).toHaveLength(2);   // setup's and the command's own
    expect(all.filter((e) => e.kind === 'ObjectCreated' && e.objKind === 'qp')).toHaveLength(2);
    const rings = msgs.filter((m) => m.type === 'rings');
    expect(rings.length).toBeGreaterThan(0);
    const sq = rings.at(-1).rings.find((r: { owner: number; queue: string }) => r.owner === s.qa && r.queue === 'sq');
    expect(sq.producer).toBeGreaterThan(1000);
    expect(sq.producer - sq.consumer).toBeLessThanOrEqual(sq.depth);
    expect(sq.slots.length).toBe(sq.producer - sq.first);
    // every rings message follows the events up to its seq
    let lastEventSeq = 0;
    for (const m of msgs) {
      if (m.type === 'events' && m.events.length) lastEventSeq = m.events.at(-1).seq;
      if (m.type === 'rings') expect(m.seq).toBeGreaterThanOrEqual(lastEventSeq);
    }

    const again = new HostCore(new NativeExecutor(), { sessionDir: dir, defaultDevice: null });
    expect(again.start().failed).toEqual([]);
    expect((again.execute({ cmd: 'memory.read', args: { addr: s.bb.addr, length: 256 } }) as R).result.hex).toBe(live.bytes);
    expect((again.executor as NativeExecutor).lastSeq()).toBe(live.seq);
    expect((again.execute({ cmd: 'session.info', args: {} }) as R).result.traffic).toEqual(live.traffic);
    again.close();
  }, 120_000);

  it('session.reset and device.attachNet end a free run cleanly; autorun free is refused on the network', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-free-'));
    const core = new HostCore(new NativeExecutor(), { sessionDir: dir, defaultDevice: null });
    core.start();
    const s = setup(core);
    const wrs = [{ wrId: 1, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: ['IBV_SEND_SIGNALED'], sgList: [{ addr: s.ba.addr, length: 4, lkey: s.ma.lkey }], remoteAddr: s.bb.addr, rkey: s.mb.rkey }];
    s.x({ cmd: 'engine.traffic', args: { on: true, qp: s.qa, cq: s.ca, wrs } });
    s.x({ cmd: 'engine.autorun', args: { on: true, stepsPerSecond: 100_000, free: true } });
    const ex = core.executor as NativeExecutor;
    expect(ex.freeRunning()).toBe(true);
    await until('some steps', () => core.journal.read().entries.some((e) => e.command.cmd === 'engine.step'));
    expect(s.x({ cmd: 'session.reset', args: {} }).epoch).toBe(1);
    expect(ex.freeRunning()).toBe(false);
    expect(s.x({ cmd: 'session.info', args: {} }).autorun).toMatchObject({ on: false, free: false });
    // a fresh session can free run again, and putting a device on the network stops it (real time from then on)
    const d = s.x({ cmd: 'device.create', args: { profile: 'rxe' } }).device;
    s.x({ cmd: 'engine.autorun', args: { on: true, stepsPerSecond: 1000, free: true } });
    expect(ex.freeRunning()).toBe(true);
    s.x({ cmd: 'device.attachNet', args: { device: d, address: '127.0.0.1', port: 0 } });
    expect(ex.freeRunning()).toBe(false);
    expect(core.execute({ cmd: 'engine.autorun', args: { on: true, stepsPerSecond: 1000, free: true } })).toMatchObject({ ok: false, error: { code: 'EBUSY' } });
    core.close();
  }, 60_000);
});
