// The CM through the addon (native/addon/cm.cpp): two devices of one session connect with rdma_cm's sequence, the
// typed events and IDs come back with rdma-core's names, and the CmState / CmMad device events carry the
// app/protocol enums. Skipped when the addon is not built (node scripts/build.mjs addon).
import { describe, expect, it } from 'vitest';
import { CmAttr, CmEvent, CmMadDir, CmState, QpType } from '../protocol/enums.ts';
import type { NativeCmSession, NativeSession, NCmEvent } from './native.ts';

let addon: typeof import('./native.ts') extends { loadAddon: () => infer A } ? A : never;
try { addon = (await import('./native.ts')).loadAddon(); } catch { addon = undefined as never; }

const PS_TCP = 0x0106;

function next(s: NativeSession & NativeCmSession, dev: number, want: number): NCmEvent {
  for (let i = 0; i < 10000; i++) {
    const [e] = s.cm_get_events(dev, 1);
    if (e) {
      expect(e.eventName).toBe(Object.keys(CmEvent.values).find((k) => CmEvent.values[k as keyof typeof CmEvent.values] === want));
      return e;
    }
    if (!s.step()) break;
  }
  throw new Error(`no CM event ${want}`);
}

describe.skipIf(!addon)('the connection manager through the addon', () => {
  it('connects two devices and reports typed CM events', () => {
    const s = new addon.Session(5);
    const mk = () => {
      const dev = s.create_device('rxe').value!;
      const pd = s.alloc_pd(dev).value!;
      const cq = s.create_cq(dev, 64, false).value!;
      const qp = s.create_qp(pd, { sendCq: cq, recvCq: cq, qpType: QpType.values.IBV_QPT_RC, sqSigAll: false, cap: { maxSendWr: 4, maxRecvWr: 4, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 } });
      return { dev, qp: qp.value!.handle };
    };
    const a = mk(), b = mk();
    const l = s.cm_create_id(b.dev, PS_TCP).value!;
    expect(s.cm_bind_addr(l, { ip: '10.0.0.2', port: 4420 }).err).toBe(0);
    expect(s.cm_listen(l, 4).err).toBe(0);
    const c = s.cm_create_id(a.dev, PS_TCP).value!;
    expect(s.cm_resolve_addr(c, { ip: '10.0.0.2', port: 4420 }).err).toBe(0);
    next(s, a.dev, CmEvent.values.RDMA_CM_EVENT_ADDR_RESOLVED);
    expect(s.cm_resolve_route(c).err).toBe(0);
    next(s, a.dev, CmEvent.values.RDMA_CM_EVENT_ROUTE_RESOLVED);
    expect(s.cm_set_qp(c, a.qp).err).toBe(0);
    expect(s.cm_connect(c, { privateData: new Uint8Array([7, 7]) }).err).toBe(0);
    const req = next(s, b.dev, CmEvent.values.RDMA_CM_EVENT_CONNECT_REQUEST);
    expect(req.listenId).toBe(l);
    expect(Array.from(req.param.privateData.slice(0, 2))).toEqual([7, 7]);
    expect(s.cm_set_qp(req.id, b.qp).err).toBe(0);
    expect(s.cm_accept(req.id).err).toBe(0);
    next(s, a.dev, CmEvent.values.RDMA_CM_EVENT_ESTABLISHED);
    next(s, b.dev, CmEvent.values.RDMA_CM_EVENT_ESTABLISHED);
    const ci = s.cm_id_info(c)!;
    expect(ci.stateName).toBe('IB_CM_ESTABLISHED');
    expect(ci.state).toBe(CmState.values.IB_CM_ESTABLISHED);
    expect(ci.dst).toEqual({ family: 'ipv4', ip: '10.0.0.2', port: 4420 });
    expect(ci.peerDev).toBe(b.dev);
    expect(s.cm_ids(b.dev).map((i) => i.id).sort()).toEqual([l, req.id].sort());
    expect(() => s.cm_bind_addr(c, { ip: 'not an address' })).toThrow(/numeric IPv4 or IPv6/);
    const evs = s.drain_events();
    const mads = evs.filter((e) => e.kind === 'CmMad' && Number(e.b) === CmMadDir.values.SENT).map((e) => Number(e.a));
    expect(mads).toEqual([CmAttr.values.REQ, CmAttr.values.REP, CmAttr.values.RTU]);
    const states = evs.filter((e) => e.kind === 'CmState' && e.obj === c).map((e) => Number(e.b));
    expect(states).toEqual([CmState.values.IB_CM_REQ_SENT, CmState.values.IB_CM_REP_RCVD, CmState.values.IB_CM_MRA_REP_SENT,
      CmState.values.IB_CM_ESTABLISHED]);
    expect(Number(s.cm_counters(a.dev).tx)).toBe(2);
    s.close();
  });
});
