// The real-device backend end to end through the libibverbs ABI: the backend host's executor opens a device of a
// libibverbs.so.1 loaded with dlopen — Verbs Lab's own (build/libibverbs, the software device behind rdma-core's
// ABI: versioned symbols, context ops, completion channel fds) — and runs the console's commands on it: memory
// registered, CQ and QPs created and connected (loopback), a WRITE and a SEND whose bytes are read back, completions
// polled, a completion event read from the channel, an asynchronous event from the library's async fd. Error paths:
// dlopen failure (the dlerror text), an unknown device, a verb the library refuses, what a real device does not
// show; each leaves the current session as it was. Every reply is checked against its command's result schema.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command, CommandName } from '../protocol/index.ts';
import { resultSchema } from '../protocol/index.ts';
import type { ExecResult } from './api.ts';
import { HostCore } from './core.ts';
import { NativeExecutor } from './executor.ts';
import { defaultAddonPath } from './native.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const lib = path.join(root, 'build/libibverbs/libibverbs.so.1');
const canon = (v: unknown): string => JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('real-device backend through dlopen (Verbs Lab\'s libibverbs.so.1)', () => {
  let x: NativeExecutor;
  const saved = process.env.VERBSLAB_LIBIBVERBS;
  const problems: string[] = [];
  /** a command through the executor; a successful reply must match its result schema exactly */
  const run = (cmd: string, args: Record<string, unknown> = {}): ExecResult => {
    const r = x.exec({ cmd, args } as Command);
    if (r.ok) {
      const p = resultSchema(cmd as CommandName).safeParse(r.result);
      if (!p.success) problems.push(`${cmd}: ${JSON.stringify(p.error.issues[0])}`);
      else if (canon(p.data) !== canon(JSON.parse(JSON.stringify(r.result)))) problems.push(`${cmd}: fields the schema does not name`);
    }
    return r;
  };
  const ok = <T = Record<string, unknown>>(cmd: string, args: Record<string, unknown> = {}): T => {
    const r = run(cmd, args);
    if (!r.ok) throw new Error(`${cmd}: ${r.error.code} ${r.error.message}`);
    return r.result as T;
  };
  const err = (cmd: string, args: Record<string, unknown> = {}) => {
    const r = run(cmd, args);
    if (r.ok) throw new Error(`${cmd} succeeded; an error was expected`);
    return r.error;
  };
  /** poll until n completions came (the device completes in real time on its own thread), bounded */
  async function pollFor(cq: number, n: number): Promise<Record<string, unknown>[]> {
    const got: Record<string, unknown>[] = [];
    for (let i = 0; i < 400 && got.length < n; i++) {
      for (const wc of ok<{ wcs: Record<string, unknown>[] }>('cq.poll', { cq, max: 16 }).wcs) got.push(wc);
      if (got.length < n) await sleep(5);
    }
    return got;
  }

  beforeAll(async () => {
    if (!fs.existsSync(lib)) {   // the library `verbslab exec` uses; incremental (the device objects are the addon's)
      const r = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs'), 'libibverbs'], { cwd: root, stdio: 'inherit' });
      if (r.status !== 0) throw new Error(`node scripts/build.mjs libibverbs exited ${r.status}`);
    }
    process.env.VERBSLAB_LIBIBVERBS = lib;
    x = new NativeExecutor({ seed: 1 });
    ok('device.create', { profile: 'rxe' });   // the software session the failed opens must leave alone
  }, 300_000);
  afterAll(() => {
    x?.close();
    if (saved === undefined) delete process.env.VERBSLAB_LIBIBVERBS; else process.env.VERBSLAB_LIBIBVERBS = saved;
  });

  it('lists the library\'s device as openable, marked as the software device behind the ABI', () => {
    const l = ok<{ realDevices: { name: string; usable: boolean; software?: boolean; library?: string }[]; backend?: unknown }>('device.list');
    expect(l.realDevices).toEqual([expect.objectContaining({ name: 'vlrxe0', usable: true, software: true, library: lib })]);
    expect(l.backend).toBeUndefined();
  });

  it('a library dlopen cannot load: the dlerror text, the software session kept', () => {
    process.env.VERBSLAB_LIBIBVERBS = '/nonexistent/libibverbs.so.1';
    try {
      const e = err('session.reset', { backend: 'ibverbs' });
      expect(e.code).toBe('ENOENT');
      expect(e.field).toBe('args.backend');
      expect(e.message).toContain('/nonexistent/libibverbs.so.1: cannot open shared object file: No such file or directory');
    } finally { process.env.VERBSLAB_LIBIBVERBS = lib; }
    const e2 = (() => { process.env.VERBSLAB_LIBIBVERBS = defaultAddonPath;   // a shared object, not a libibverbs
      try { return err('session.reset', { backend: 'ibverbs' }); } finally { process.env.VERBSLAB_LIBIBVERBS = lib; } })();
    expect(e2.code).toBe('ENOEXEC');
    expect(e2.message).toContain('is not a libibverbs.so.1: it does not export ibv_get_device_list');
    expect(ok<{ devices: { profile: { name: string } }[] }>('device.list').devices.map((d) => d.profile.name)).toEqual(['rxe']);
  });

  it('an unknown device: ENODEV naming the devices the library lists, the software session kept', () => {
    const e = err('session.reset', { backend: 'ibverbs', device: 'mlx5_9' });
    expect(e.code).toBe('ENODEV');
    expect(e.field).toBe('args.device');
    expect(e.message).toContain('no RDMA device "mlx5_9"');
    expect(e.message).toContain('it lists: vlrxe0');
    expect(ok<{ devices: unknown[] }>('device.list').devices).toHaveLength(1);
  });

  it('opens the device: its attributes, port and GID table as the library reports them', () => {
    const r = ok<{ epoch: number; backend: { kind: string; device: string; library: string; software: boolean } }>('session.reset', { backend: 'ibverbs', device: 'vlrxe0' });
    expect(r.backend).toEqual({ kind: 'ibverbs', device: 'vlrxe0', library: lib, software: true });
    const l = ok<{ devices: { device: number; name: string; portStateName: string; gids: { gid: string; type: string }[]; profile: Record<string, unknown> }[]; backend: unknown }>('device.list');
    expect(l.backend).toEqual(r.backend);
    expect(l.devices).toHaveLength(1);
    const d = l.devices[0]!;
    expect(d).toMatchObject({ device: 1, name: 'vlrxe0', portStateName: 'IBV_PORT_ACTIVE' });
    expect(d.profile).toMatchObject({ name: 'ibverbs', transport: 'Ethernet', maxQpWr: 16384, atomicCapName: 'IBV_ATOMIC_HCA' });
    expect(d.gids.some((g) => g.type === 'RoCE v2' && g.gid.startsWith('0000:0000:0000:0000:0000:ffff:7f00:'))).toBe(true);
    expect(ok<{ backend?: unknown }>('session.info').backend).toEqual(r.backend);
  });

  it('registers memory, connects two QPs (loopback), a WRITE and a SEND move the bytes, completions and a channel event', async () => {
    const { pd } = ok<{ pd: number }>('pd.alloc', { device: 1 });
    const buf = ok<{ buffer: number; addr: number }>('buffer.alloc', { length: 16384 });
    const mr = ok<{ mr: number; lkey: number; rkey: number; accessNames: string[] }>('mr.reg', {
      pd, addr: buf.addr, length: 16384,
      access: ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_READ', 'IBV_ACCESS_REMOTE_ATOMIC'],
    });
    expect(mr.lkey).toBeGreaterThan(0);
    expect(ok<{ rkey: number }>('mr.query', { mr: mr.mr }).rkey).toBe(mr.rkey);
    const { cq } = ok<{ cq: number; cqe: number }>('cq.create', { device: 1, cqe: 64, channel: true });
    const cap = { maxSendWr: 16, maxRecvWr: 16, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 };
    const q1 = ok<{ qp: number; qpNum: number }>('qp.create', { pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC', cap });
    const q2 = ok<{ qp: number; qpNum: number }>('qp.create', { pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC', cap });
    const c = ok<{ transitions: { to: string }[]; qps: { attr: { qpStateName: string; destQpNum: number; dgid: string } }[] }>('qp.connect', { qp: q1.qp, peer: q2.qp });
    expect(c.transitions.map((t) => t.to)).toEqual(['IBV_QPS_INIT', 'IBV_QPS_INIT', 'IBV_QPS_RTR', 'IBV_QPS_RTR', 'IBV_QPS_RTS', 'IBV_QPS_RTS']);
    expect(c.qps.map((q) => q.attr.qpStateName)).toEqual(['IBV_QPS_RTS', 'IBV_QPS_RTS']);
    expect(c.qps[0]!.attr.destQpNum).toBe(q2.qpNum);
    expect(c.qps[0]!.attr.dgid).toMatch(/^0000:0000:0000:0000:0000:ffff:7f00:/);   // the routable RoCE v2 GID

    // RDMA WRITE: 32 bytes from offset 0 into offset 4096 through the rkey
    const data = Buffer.from('real device: written by RDMA WRITE'.padEnd(32, '.')).subarray(0, 32);
    ok('memory.write', { addr: buf.addr, data: data.toString('hex') });
    ok('post.send', { qp: q1.qp, wrs: [{ wrId: 11, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: ['IBV_SEND_SIGNALED'], sgList: [{ addr: buf.addr, length: 32, lkey: mr.lkey }], remoteAddr: buf.addr + 4096, rkey: mr.rkey }] });
    const w = await pollFor(cq, 1);
    expect(w).toEqual([expect.objectContaining({ wrId: 11, statusName: 'IBV_WC_SUCCESS', opcodeName: 'IBV_WC_RDMA_WRITE', qpNum: q1.qpNum })]);
    expect(ok<{ hex: string }>('memory.read', { addr: buf.addr + 4096, length: 32 }).hex).toBe(data.toString('hex'));

    // SEND with immediate into a posted receive at 8192; the CQ armed first, so the channel gets an event
    ok('cq.req_notify', { cq });
    ok('post.recv', { qp: q2.qp, wrs: [{ wrId: 21, sgList: [{ addr: buf.addr + 8192, length: 64, lkey: mr.lkey }] }] });
    const msg = Buffer.from('a SEND through the libibverbs ABI');
    ok('memory.write', { addr: buf.addr + 1024, data: msg.toString('hex') });
    ok('post.send', { qp: q1.qp, wrs: [{ wrId: 12, opcode: 'IBV_WR_SEND_WITH_IMM', immData: 0x1234abcd, sendFlags: ['IBV_SEND_SIGNALED'], sgList: [{ addr: buf.addr + 1024, length: msg.length, lkey: mr.lkey }] }] });
    const s = await pollFor(cq, 2);
    expect(s).toEqual(expect.arrayContaining([
      expect.objectContaining({ wrId: 12, statusName: 'IBV_WC_SUCCESS', opcodeName: 'IBV_WC_SEND', qpNum: q1.qpNum }),
      expect.objectContaining({ wrId: 21, statusName: 'IBV_WC_SUCCESS', opcodeName: 'IBV_WC_RECV', byteLen: msg.length, immData: 0x1234abcd, qpNum: q2.qpNum, wcFlagsNames: expect.arrayContaining(['IBV_WC_WITH_IMM']) }),
    ]));
    expect(ok<{ hex: string }>('memory.read', { addr: buf.addr + 8192, length: msg.length }).hex).toBe(msg.toString('hex'));
    let ev: ExecResult | undefined;
    for (let i = 0; i < 200; i++) { ev = run('cq.get_event', { device: 1 }); if (ev.ok) break; await sleep(5); }
    expect(ev).toMatchObject({ ok: true, result: { cq } });
    ok('cq.ack_events', { cq, n: 1 });
    const again = err('cq.get_event', { device: 1 });
    expect(again.code).toBe('EAGAIN');

    // what software saw, as events in the software device's format
    const evs = x.drainEvents();
    const kinds = (k: string) => evs.filter((e) => e.kind === k);
    expect(kinds('ObjectCreated').find((e) => e.objKind === 'mr')).toMatchObject({ obj: mr.mr, a: mr.lkey, b: mr.rkey, keyState: 2 });
    expect(kinds('QpState').filter((e) => e.obj === q1.qp).map((e) => e.b)).toEqual([1, 2, 3]);
    expect(kinds('WqePosted').map((e) => e.a)).toEqual(expect.arrayContaining([11, 12, 21]));
    expect(kinds('Cqe').map((e) => e.wc?.wrId)).toEqual(expect.arrayContaining([11, 12, 21]));
    expect(kinds('CqArmed')).toHaveLength(1);
    expect(kinds('CompEvent')).toEqual([expect.objectContaining({ obj: cq, objKind: 'cq' })]);
  });

  it('qp.connect to a "remote host" (the numbers rc_pingpong prints): a real device is on its own network', async () => {
    const { pd } = ok<{ pd: number }>('pd.alloc', { device: 1 });
    const buf = ok<{ addr: number }>('buffer.alloc', { length: 4096 });
    const mr = ok<{ lkey: number; rkey: number }>('mr.reg', { pd, addr: buf.addr, length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE'] });
    const { cq } = ok<{ cq: number }>('cq.create', { device: 1, cqe: 16 });
    const cap = { maxSendWr: 8, maxRecvWr: 8, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 };
    const a = ok<{ qp: number; qpNum: number }>('qp.create', { pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC', cap });
    const b = ok<{ qp: number; qpNum: number }>('qp.create', { pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC', cap });
    // our own address, typed in as the other side's: each QP connected on its own, as two rc_pingpong processes do
    const ip = ok<{ devices: { gids: { gid: string }[] }[] }>('device.list').devices[0]!.gids.map((g) => g.gid).find((g) => g.startsWith('0000:0000:0000:0000:0000:ffff:'))!;
    const v4 = ip.slice(-9).split(':').map((h) => [parseInt(h.slice(0, 2), 16), parseInt(h.slice(2), 16)]).flat().join('.');
    const ca = ok<{ sgidIndex: number; qps: { attr: { qpStateName: string } }[] }>('qp.connect', { qp: a.qp, remote: { dgid: v4, qpn: b.qpNum, psn: 0 } });
    ok('qp.connect', { qp: b.qp, remote: { dgid: v4, qpn: a.qpNum, psn: 0 } });
    expect(ca.qps[0]!.attr.qpStateName).toBe('IBV_QPS_RTS');
    expect(ca.sgidIndex).toBe(1);   // the RoCE v2 GID of the IPv4 family
    ok('memory.write', { addr: buf.addr, data: 'c0ffee' });
    ok('post.send', { qp: a.qp, wrs: [{ wrId: 31, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: ['IBV_SEND_SIGNALED'], sgList: [{ addr: buf.addr, length: 3, lkey: mr.lkey }], remoteAddr: buf.addr + 100, rkey: mr.rkey }] });
    expect((await pollFor(cq, 1)).map((w) => w.statusName)).toEqual(['IBV_WC_SUCCESS']);
    expect(ok<{ hex: string }>('memory.read', { addr: buf.addr + 100, length: 3 }).hex).toBe('c0ffee');
  });

  it('an SRQ under its limit: IBV_EVENT_SRQ_LIMIT_REACHED from the async-event thread', async () => {
    const { pd } = ok<{ pd: number }>('pd.alloc', { device: 1 });
    const buf = ok<{ addr: number }>('buffer.alloc', { length: 4096 });
    const mr = ok<{ lkey: number }>('mr.reg', { pd, addr: buf.addr, length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE'] });
    const { cq } = ok<{ cq: number }>('cq.create', { device: 1, cqe: 16 });
    const { srq } = ok<{ srq: number }>('srq.create', { pd, maxWr: 16, maxSge: 1 });
    const cap = { maxSendWr: 8, maxRecvWr: 8, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 };
    const rq = ok<{ qp: number }>('qp.create', { pd, sendCq: cq, recvCq: cq, srq, qpType: 'IBV_QPT_RC', cap });
    const sq = ok<{ qp: number }>('qp.create', { pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC', cap });
    ok('qp.connect', { qp: sq.qp, peer: rq.qp });
    ok('srq.post_recv', { srq, wrs: [0, 1, 2, 3].map((i) => ({ wrId: 100 + i, sgList: [{ addr: buf.addr + 256 * i, length: 256, lkey: mr.lkey }] })) });
    ok('srq.modify', { srq, srqLimit: 4 });   // armed: fires when fewer than 4 receives are left
    ok('post.send', { qp: sq.qp, wrs: [{ wrId: 1, opcode: 'IBV_WR_SEND', sendFlags: ['IBV_SEND_SIGNALED'], sgList: [{ addr: buf.addr + 2048, length: 8, lkey: mr.lkey }] }] });
    expect((await pollFor(cq, 2)).map((w) => w.statusName)).toEqual(['IBV_WC_SUCCESS', 'IBV_WC_SUCCESS']);
    let seen: { kind: string; obj: number; objKind: string; a: number | string }[] = [];
    for (let i = 0; i < 200 && !seen.length; i++) {
      x.netPoll();   // what the backend host does every millisecond while the session is real-time
      seen = x.drainEvents().filter((e) => e.kind === 'AsyncEvent');
      if (!seen.length) await sleep(5);
    }
    expect(x.netActive()).toBe(true);
    expect(seen).toEqual([expect.objectContaining({ obj: srq, objKind: 'srq', a: 15, text: 'IBV_EVENT_SRQ_LIMIT_REACHED' })]);
  });

  it('a verb the library refuses comes back with its errno; what a real device does not show is said so', () => {
    const big = err('cq.create', { device: 1, cqe: 1 << 20 });   // above the device's max_cqe
    expect(big.code).toBe('EINVAL');
    expect(big.message).toContain('ibv_create_cq on vlrxe0');
    const { pd } = ok<{ pd: number }>('pd.alloc', { device: 1 });
    const outside = err('mr.reg', { pd, addr: 4096, length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE'] });
    expect(outside.code).toBe('EFAULT');   // only the session's buffers can be registered: a peer could write there
    expect(err('memory.read', { addr: 4096, length: 16 }).code).toBe('EFAULT');
    expect(err('mr.alloc', { pd, maxNumSg: 4 }).message).toContain('kernel verb');
    for (const [cmd, args] of [['engine.step', { count: 1 }], ['engine.run', {}], ['engine.autorun', { on: true }]] as const) {
      const e = err(cmd, args);
      expect(e.code).toBe('EOPNOTSUPP');
      expect(e.message).toContain('not available on a real device (vlrxe0)');
    }
    expect(err('pcap.get').message).toContain('not visible on a real device');
    expect(err('device.create', { profile: 'rxe' }).message).toContain('not visible on a real device');
    expect(x.queueSnapshot()).toEqual([]);
  });

  it('the backend host journals a real-device session, sends its events, and replays it after a restart', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-realdev-'));
    try {
      const a = new HostCore(new NativeExecutor(), { sessionDir: dir, defaultDevice: 'rxe' });
      a.start();
      const sent: string[] = [];
      a.addClient((m) => { sent.push(JSON.stringify(m)); });
      expect(a.execute({ cmd: 'session.reset', args: { backend: 'ibverbs', device: 'vlrxe0' } } as Command)).toMatchObject({ ok: true });
      expect(a.execute({ cmd: 'pd.alloc', args: { device: 1 } })).toMatchObject({ ok: true, result: { pd: 2 } });
      expect(a.execute({ cmd: 'buffer.alloc', args: { length: 4096 } })).toMatchObject({ ok: true });
      expect(a.executor.netActive?.()).toBe(true);   // the host polls the async events in real time
      const before = a.execute({ cmd: 'session.info', args: {} }) as { ok: true; result: { objects: unknown[]; backend?: unknown } };
      expect(before.result.backend).toMatchObject({ device: 'vlrxe0' });
      a.close();   // flushes the events to the client
      const events = sent.map((m) => JSON.parse(m) as { type: string; json?: string })
        .filter((m) => m.type === 'events' && m.json).flatMap((m) => JSON.parse(`[${m.json}]`) as { kind: string; objKind: string }[]);
      expect(events.map((e) => `${e.kind} ${e.objKind}`)).toEqual(['ObjectCreated device', 'ObjectCreated pd', 'ObjectCreated buffer']);
      const b = new HostCore(new NativeExecutor(), { sessionDir: dir, defaultDevice: 'rxe' });
      const report = b.start();
      expect(report).toMatchObject({ entries: 3, failed: [] });   // the reset truncated the journal: reset, pd, buffer
      const after = b.execute({ cmd: 'session.info', args: {} }) as { ok: true; result: { objects: unknown[]; backend?: unknown } };
      expect(after.result.backend).toMatchObject({ device: 'vlrxe0' });
      expect(after.result.objects.map((o) => (o as { kind: string }).kind)).toEqual((before.result.objects).map((o) => (o as { kind: string }).kind));
      b.close();
    } finally { fs.rmSync(dir, { recursive: true, force: true }); }
  });

  it('session.reset returns to the software devices; every reply matched its schema', () => {
    expect(ok<{ backend?: unknown }>('session.reset').backend).toBeUndefined();
    expect(x.realSession).toBeNull();
    ok('device.create', { profile: 'rxe' });
    const l = ok<{ devices: { profile: { name: string } }[]; backend?: unknown }>('device.list');
    expect(l.devices.map((d) => d.profile.name)).toEqual(['rxe']);
    expect(l.backend).toBeUndefined();
    expect(problems).toEqual([]);
  });
});
