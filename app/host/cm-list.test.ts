// cm.list (app/protocol/commands/queues.ts, handler in app/host/commands/queues.ts): the CM IDs of the session's
// devices as the console's Connections table shows them, answered from the device's cm_ids(dev), its reply exactly
// what its result schema names. The IDs are made through the session's CM (native/addon/cm.cpp), as a librdmacm
// program under `verbslab exec --console` makes them.
import { describe, expect, it } from 'vitest';
import { resultSchema, type CommandInput } from '../protocol/index.ts';
import { Command } from '../protocol/commands.ts';
import { needAddon } from '../scenario/testlib.ts';
import type { NativeCmSession, NativeSession, NCmEvent } from './native.ts';

const mod = await needAddon('cm.list');

describe('cm.list', () => {
  it('lists a listener and both ends of an established connection, per device, with rdma-core / IBA names', () => {
    const ex = new mod.NativeExecutor({ seed: 2 });
    try {
      const run = (c: CommandInput) => {
        const r = ex.exec(Command.parse(c));
        if (!r.ok) throw new Error(`${c.cmd}: ${r.error.message}`);
        return r.result as Record<string, unknown>;
      };
      const list = (device?: number) => {
        const r = run({ cmd: 'cm.list', args: device === undefined ? {} : { device } });
        const p = resultSchema('cm.list').parse(r);
        expect(JSON.parse(JSON.stringify(p))).toEqual(JSON.parse(JSON.stringify(r)));   // no field the schema does not name
        return p;
      };
      expect(list()).toEqual({ ids: [], supported: true });
      const mk = () => {
        const dev = run({ cmd: 'device.create', args: { profile: 'rxe' } }).device as number;
        const pd = run({ cmd: 'pd.alloc', args: { device: dev } }).pd as number;
        const cq = run({ cmd: 'cq.create', args: { device: dev, cqe: 16 } }).cq as number;
        const qp = run({ cmd: 'qp.create', args: { pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC' } }).qp as number;
        return { dev, qp };
      };
      const a = mk(), b = mk();
      const s = ex.s as NativeSession & NativeCmSession;
      const next = (dev: number): NCmEvent => {
        for (let i = 0; i < 10000; i++) { const [e] = s.cm_get_events(dev, 1); if (e) return e; if (!s.step()) break; }
        throw new Error('no CM event');
      };
      const l = s.cm_create_id(b.dev, 0x0106).value!;
      expect(s.cm_bind_addr(l, { ip: '10.0.0.2', port: 4420 }).err).toBe(0);
      expect(s.cm_listen(l, 4).err).toBe(0);
      const listening = list(b.dev).ids;
      expect(listening).toHaveLength(1);
      expect(listening[0]).toMatchObject({ id: l, device: b.dev, portSpace: 'RDMA_PS_TCP', state: 'IB_CM_LISTEN', listening: true, src: { family: 'ipv4', ip: '10.0.0.2', port: 4420 } });
      const c = s.cm_create_id(a.dev, 0x0106).value!;
      expect(s.cm_resolve_addr(c, { ip: '10.0.0.2', port: 4420 }).err).toBe(0);
      next(a.dev);
      expect(s.cm_resolve_route(c).err).toBe(0);
      next(a.dev);
      expect(s.cm_set_qp(c, a.qp).err).toBe(0);
      expect(s.cm_connect(c, {}).err).toBe(0);
      const req = next(b.dev);
      expect(list(a.dev).ids[0]).toMatchObject({ id: c, state: 'IB_CM_REQ_SENT', qp: a.qp });
      expect(s.cm_set_qp(req.id, b.qp).err).toBe(0);
      expect(s.cm_accept(req.id).err).toBe(0);
      expect(next(a.dev).eventName).toBe('RDMA_CM_EVENT_ESTABLISHED');
      expect(next(b.dev).eventName).toBe('RDMA_CM_EVENT_ESTABLISHED');
      const all = list().ids;
      expect(all.map((i) => i.id).sort()).toEqual([l, c, req.id].sort());
      const ci = all.find((i) => i.id === c)!, si = all.find((i) => i.id === req.id)!;
      const info = s.cm_id_info(c)!;
      expect(ci).toMatchObject({ device: a.dev, state: 'IB_CM_ESTABLISHED', stateValue: 10, qpType: 'IBV_QPT_RC', qp: a.qp, peerDevice: b.dev,
        dst: { family: 'ipv4', ip: '10.0.0.2', port: 4420 }, localCommId: info.localCommId, remoteCommId: si.localCommId,
        localQpn: info.localQpn, remoteQpn: si.localQpn, serviceId: '0x0000000001061144' });
      expect(si).toMatchObject({ device: b.dev, listenId: l, state: 'IB_CM_ESTABLISHED', remoteCommId: ci.localCommId });
      expect(list(b.dev).ids.map((i) => i.id).sort()).toEqual([l, req.id].sort());
    } finally { ex.close(); }
  });
});

describe('cm.list of an attached program (from its events: attach-cm.ts)', () => {
  it('folds ObjectCreated / CmState / ObjectDestroyed of kind cm_id, per device, an event seen twice once', async () => {
    const { cmIdsOfEvents } = await import('./attach-cm.ts');
    const ev = (seq: number, kind: string, obj: number, a: number, b: number, c = 0, d = 0, device = 1) => ({ seq, t: seq, kind, device, obj, objKind: 'cm_id', a, b, c, d });
    const evs = [
      ev(1, 'ObjectCreated', 7, 0x0106, 2), ev(2, 'CmState', 7, 0, 2, 0x11, 0), ev(3, 'CmState', 7, 2, 7, 0x11, 0x22), ev(4, 'CmState', 7, 7, 10, 0x11, 0x22),
      ev(5, 'ObjectCreated', 8, 0x0106, 2, 0, 0, 2), ev(6, 'CmState', 8, 0, 1, 0, 0, 2),
      ev(7, 'ObjectCreated', 9, 0x0111, 4), ev(8, 'ObjectDestroyed', 9, 0, 0),
      { ...ev(9, 'QpState', 7, 0, 1), objKind: 'qp' },
    ];
    const ids = cmIdsOfEvents([...evs, evs[3]!]);
    expect(ids.map((i) => [i.id, i.state])).toEqual([[7, 'IB_CM_ESTABLISHED'], [8, 'IB_CM_LISTEN']]);
    expect(ids[0]).toMatchObject({ device: 1, portSpace: 'RDMA_PS_TCP', qpType: 'IBV_QPT_RC', localCommId: 0x11, remoteCommId: 0x22, stateValue: 10 });
    expect(ids[1]).toMatchObject({ device: 2, listening: true });
    expect(resultSchema('cm.list').parse({ ids, supported: true }).ids).toHaveLength(2);
    expect(cmIdsOfEvents(evs, 2).map((i) => i.id)).toEqual([8]);
  });
});

describe('cm.createId / bind / listen / connect / accept / disconnect: two devices connected through the CM by commands', () => {
  it('ends ESTABLISHED on both sides with both QPs in RTS, then disconnects; errors name the field', () => {
    const ex = new mod.NativeExecutor({ seed: 3 });
    try {
      const exec = (c: CommandInput) => ex.exec(Command.parse(c));
      const run = (c: CommandInput) => {
        const r = exec(c);
        if (!r.ok) throw new Error(`${c.cmd}: ${r.error.message}`);
        const p = resultSchema(c.cmd).parse(r.result);
        expect(JSON.parse(JSON.stringify(p))).toEqual(JSON.parse(JSON.stringify(r.result)));
        return r.result as Record<string, number>;
      };
      const mk = () => {
        const dev = run({ cmd: 'device.create', args: { profile: 'rxe' } }).device!;
        const pd = run({ cmd: 'pd.alloc', args: { device: dev } }).pd!;
        const cq = run({ cmd: 'cq.create', args: { device: dev, cqe: 16 } }).cq!;
        const qp = run({ cmd: 'qp.create', args: { pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC' } }).qp!;
        return { dev, qp };
      };
      const a = mk(), b = mk();
      const l = run({ cmd: 'cm.createId', args: { device: b.dev } }).id!;
      run({ cmd: 'cm.bind', args: { id: l, ip: '10.0.0.2', port: 4420 } });
      run({ cmd: 'cm.listen', args: { id: l } });
      const c = run({ cmd: 'cm.createId', args: { device: a.dev } }).id!;
      run({ cmd: 'cm.connect', args: { id: c, qp: a.qp, ip: '10.0.0.2', port: 4420 } });
      const acc = run({ cmd: 'cm.accept', args: { listenId: l, qp: b.qp } });
      expect(acc.listenId).toBe(l);
      run({ cmd: 'engine.run', args: {} });
      const ids = resultSchema('cm.list').parse(run({ cmd: 'cm.list', args: {} })).ids;
      expect(ids.find((i) => i.id === c)).toMatchObject({ state: 'IB_CM_ESTABLISHED', qp: a.qp });
      expect(ids.find((i) => i.id === acc.id)).toMatchObject({ state: 'IB_CM_ESTABLISHED', qp: b.qp, listenId: l });
      for (const qp of [a.qp, b.qp]) expect((run({ cmd: 'qp.query', args: { qp } }) as unknown as { attr: { qpStateName: string } }).attr.qpStateName).toBe('IBV_QPS_RTS');
      run({ cmd: 'cm.disconnect', args: { id: c } });
      run({ cmd: 'engine.run', args: {} });
      const after = resultSchema('cm.list').parse(run({ cmd: 'cm.list', args: {} })).ids;
      expect(after.find((i) => i.id === c)!.state).not.toBe('IB_CM_ESTABLISHED');
      expect(after.find((i) => i.id === acc.id)!.state).not.toBe('IB_CM_ESTABLISHED');
      // errors: an unknown ID; nothing to accept
      const bad = exec({ cmd: 'cm.connect', args: { id: 999, qp: a.qp, ip: '10.0.0.2', port: 4420 } });
      expect(bad.ok ? null : bad.error.field).toBe('args.id');
      const none = exec({ cmd: 'cm.accept', args: { listenId: l, qp: b.qp } });
      expect(none.ok ? null : none.error.message).toMatch(/no CONNECT_REQUEST/);
    } finally { ex.close(); }
  });
});
