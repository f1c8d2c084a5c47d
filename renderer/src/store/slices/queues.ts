// The queues slice: CQs (create with or without a completion channel, poll, arm next / solicited-only,
// get_event / ack_events, destroy), QPs (create, connect, modify to any state, query, destroy), SRQs, post
// send / recv, and the load generator (engine.traffic) that repeats the last WR posted on a QP. Rings, QP states
// and CQ arming are models fed by events (models.ts QueueModel); replies merge their QpInfo into it.
import type { Command, QpAttr, RecvWr, SendWr } from '../../../../app/protocol/index.ts';
import { touched, type ArgsOf, type Slice } from '../slice.ts';
import type { PollView, RemoteDestArgs } from '../views.ts';

export interface QueuesSlice {
  createCq(device: number, cqe: number, channel?: boolean): Promise<boolean>;
  destroyCq(cq: number): Promise<boolean>;
  createQp(args: { pd: number; sendCq: number; recvCq: number; qpType: string; maxSendWr: number; maxRecvWr: number; srq?: number }): Promise<boolean>;
  connectQps(qp: number, peer: number): Promise<boolean>;
  /** connect qp to a QP on another host (only this side moves to RTS); sqPsn = our PSN the other side needs */
  connectRemote(qp: number, remote: RemoteDestArgs, sqPsn: number): Promise<boolean>;
  /** ibv_modify_qp: attr + mask as the protocol takes them (the device checks the transition and the mask) */
  modifyQp(qp: number, attr: QpAttr, mask: string[]): Promise<boolean>;
  destroyQp(qp: number): Promise<boolean>;
  queryQp(qp: number): Promise<void>;
  createSrq(pd: number, maxWr: number, srqLimit: number): Promise<boolean>;
  destroySrq(srq: number): Promise<boolean>;
  postSend(qp: number, wr: SendWr): Promise<boolean>;
  /** ibv_post_srq_recv */
  postSrqRecv(srq: number, wr: RecvWr): Promise<boolean>;
  /** the last WR posted from the console on each QP (the load generator repeats it) */
  lastPosted: Record<number, SendWr>;
  /** the load generator's state as the host last reported it (engine.traffic) */
  traffic: { on: boolean; qp?: number; posted?: number; completed?: number; stopped?: string } | null;
  setTraffic(on: boolean, qp?: number): Promise<boolean>; postRecv(qp: number, wr: RecvWr): Promise<boolean>;
  pollCq(cq: number, max: number): Promise<void>;
  /** ibv_req_notify_cq(cq, solicited_only) */
  reqNotify(cq: number, solicitedOnly?: boolean): Promise<void>;
  /** ibv_get_cq_event on the device's completion channel: the CQ the event was for (null: none, error filed) */
  getCqEvent(device: number): Promise<number | null>;
  /** ibv_ack_cq_events(cq, n) */
  ackCqEvents(cq: number, n: number): Promise<boolean>;
  /** the completion events taken with get_event and not yet acknowledged, per CQ (ibv_destroy_cq waits for them) */
  unackedEvents: Record<number, number>;
  lastPoll: Record<number, PollView>;
  /** ah.create: an address handle to a device of the session (UD sends) */
  createAh(pd: number, destDevice: number, sgidIndex: number): Promise<number | null>;
  ahs: { handle: number; pd: number; destDevice: number }[];
}

export const createQueuesSlice: Slice<QueuesSlice> = (set, get, ctx) => {
  const { model } = ctx;
  return {
    async createCq(device, cqe, channel = false) {
      const r = await get().run('cq.create', 'cq.create', { device, cqe, channel });
      if (!r) return false;
      const h = r.cq;
      const c = model.queues.cq(h); c.device = r.device; c.cqe = r.cqe; c.channel = r.channel;
      model.queues.ring(`cq:${h}`, h, 'cq', c.cqe).depth = c.cqe;
      touched(ctx, 'queues');
      return true;
    },
    async destroyCq(cq) {
      const r = await get().exec(`cq.destroy:${cq}`, { cmd: 'cq.destroy', args: { cq } });
      if (r) { model.queues.cq(cq).destroyed = true; touched(ctx, 'queues'); }
      return !!r;
    },
    async createQp(a) {
      const r = await get().run('qp.create', 'qp.create', { pd: a.pd, sendCq: a.sendCq, recvCq: a.recvCq, qpType: a.qpType as 'IBV_QPT_RC',
        ...(a.srq ? { srq: a.srq } : {}),
        cap: { maxSendWr: a.maxSendWr, maxRecvWr: a.maxRecvWr, maxSendSge: 4, maxRecvSge: 4, maxInlineData: 0 } });
      if (!r) return false;
      model.queues.applyQpInfo(r);
      touched(ctx, 'queues');
      return true;
    },
    async connectQps(qp, peer) {
      const r = await get().exec('qp.connect', { cmd: 'qp.connect', args: { qp, peer } });
      if (!r) return false;
      model.queues.qp(qp).peer = peer; model.queues.qp(peer).peer = qp;
      await get().queryQp(qp); await get().queryQp(peer);
      return true;
    },
    async connectRemote(qp, remote, sqPsn) {
      const r = await get().exec('qp.connect:remote', { cmd: 'qp.connect', args: { qp, remote, sqPsn } });
      if (!r) return false;
      await get().queryQp(qp);
      return true;
    },
    async modifyQp(qp, attr, mask) {
      const r = await get().exec(`qp.modify:${qp}`, { cmd: 'qp.modify', args: { qp, attr, mask } });
      if (!r) return false;
      await get().queryQp(qp);
      return true;
    },
    async destroyQp(qp) {
      const r = await get().exec(`qp.destroy:${qp}`, { cmd: 'qp.destroy', args: { qp } });
      if (r) { model.queues.qp(qp).destroyed = true; touched(ctx, 'queues'); }
      return !!r;
    },
    async queryQp(qp) {
      const r = await get().run(`qp.query:${qp}`, 'qp.query', { qp });
      if (r) { model.queues.applyQpInfo(r); touched(ctx, 'queues'); }
    },
    async createSrq(pd, maxWr, srqLimit) {
      return !!(await get().exec('srq.create', { cmd: 'srq.create', args: { pd, maxWr, srqLimit } }));
    },
    async destroySrq(srq) {
      const r = await get().exec(`srq.destroy:${srq}`, { cmd: 'srq.destroy', args: { srq } });
      const s = model.queues.srqs.get(srq);
      if (r && s) { s.destroyed = true; touched(ctx, 'queues'); }
      return !!r;
    },
    async postSend(qp, wr) {
      const ok = !!(await get().exec('post.send', { cmd: 'post.send', args: { qp, wrs: [wr] } }));
      if (ok) set((s) => ({ lastPosted: { ...s.lastPosted, [qp]: wr } }));
      return ok;
    },
    lastPosted: {},
    traffic: null,
    async setTraffic(on, qp) {
      const wr = qp !== undefined ? get().lastPosted[qp] : undefined;
      const args = on ? { on, qp, wrs: wr ? [wr] : undefined } : { on };
      const r = await get().run('engine.traffic', 'engine.traffic', args as ArgsOf<'engine.traffic'>);
      if (r) ctx.setTrafficFrom(r);
      ctx.syncTrafficPoll();
      return !!r;
    },
    async postSrqRecv(srq, wr) { return !!(await get().exec('srq.post_recv', { cmd: 'srq.post_recv', args: { srq, wrs: [wr] } })); },
    async postRecv(qp, wr) { return !!(await get().exec('post.recv', { cmd: 'post.recv', args: { qp, wrs: [wr] } })); },
    lastPoll: {},
    async pollCq(cq, max) {
      const r = await get().run(`cq.poll:${cq}`, 'cq.poll', { cq, max });
      if (!r) return;
      const wcs = r.wcs;
      model.queues.applyPoll(cq, wcs.length);
      touched(ctx, 'queues');
      set((s) => ({ lastPoll: { ...s.lastPoll, [cq]: { cq, wcs, seqAt: model.ring.total } } }));
    },
    async reqNotify(cq, solicitedOnly = false) {
      await get().exec(`cq.req_notify:${cq}`, { cmd: 'cq.req_notify', args: { cq, solicitedOnly } });
    },
    unackedEvents: {},
    async getCqEvent(device) {
      const r = await get().run(`cq.get_event:${device}`, 'cq.get_event', { device });
      if (!r) return null;
      const cq = r.cq;
      model.queues.takeEvent(cq);
      touched(ctx, 'queues');
      set((s) => ({ unackedEvents: { ...s.unackedEvents, [cq]: (s.unackedEvents[cq] ?? 0) + 1 } }));
      return cq;
    },
    async ackCqEvents(cq, n) {
      const r = await get().exec(`cq.ack_events:${cq}`, { cmd: 'cq.ack_events', args: { cq, n } });
      if (r) set((s) => ({ unackedEvents: { ...s.unackedEvents, [cq]: Math.max(0, (s.unackedEvents[cq] ?? 0) - n) } }));
      return !!r;
    },
    ahs: [],
    async createAh(pd, destDevice, sgidIndex) {
      const r = await get().run('ah.create', 'ah.create', { pd, destDevice, sgidIndex });
      if (!r) return null;
      const h = r.ah;
      set((s) => ({ ahs: [...s.ahs, { handle: h, pd, destDevice }] }));
      return h;
    },
  };
};
