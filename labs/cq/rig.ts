// Lab 2's device rig: an initiator (dev0) streaming signaled RDMA WRITEs to a target (dev1) over one RC QP; the
// initiator's send CQ has a completion channel. Everything goes through the executor's protocol commands (the same
// ones the console and the scenarios use), and the CQ's state is followed from the device's event stream and the
// verbs' replies by the lab's one timeline fold (timeline.ts). Nothing here invents device state.
import type { ExecResult } from '../../app/host/api.ts';
import type { Command, DeviceEvent } from '../../app/protocol/index.ts';
import { CqTimeline } from './timeline.ts';
import type { CqView } from './timeline.ts';

export class RigError extends Error {}

/** Where the rig's commands go and its events come from: an executor (the explorer's fresh sessions), or the
 *  backend host (the lab agent: core.execute journals each command; the events come from core.onEvents). */
export interface RigPort {
  exec(command: Command): ExecResult;
  drainEvents(): DeviceEvent[];
}

const REQ_LEN = 64;

type Result = Record<string, unknown>;

export class CqRig {
  readonly timeline: CqTimeline;
  get view(): CqView { return this.timeline.view; }
  /** virtual time of the device (ns), from engine.step replies */
  nowNs = 0;
  /** the engine had nothing to do at its last step */
  idle = true;
  dev0 = 0; dev1 = 0; cq = 0; qp = 0;
  private lkey = 0; private rkey = 0; private src = 0; private dst = 0;

  /** `keepRows`: keep the CQ timeline's rows (the panel, tests); the explorer needs only the current view */
  constructor(readonly port: RigPort, readonly profile: string, readonly cqe = 64, keepRows = false) {
    this.timeline = new CqTimeline(0, keepRows);
  }

  /** Runs one command; a failure is a rig error (the lab's own setup must not fail). */
  private must(c: Command): Result {
    const r = this.port.exec(c);
    this.timeline.onEvents(this.port.drainEvents());
    if (!r.ok) throw new RigError(`${c.cmd}: ${r.error.code} ${r.error.message}`);
    return r.result as Result;
  }

  setup(): void {
    this.dev0 = this.must({ cmd: 'device.create', args: { profile: this.profile, name: 'initiator' } }).device as number;
    this.dev1 = this.must({ cmd: 'device.create', args: { profile: this.profile, name: 'target' } }).device as number;
    const pd0 = this.must({ cmd: 'pd.alloc', args: { device: this.dev0 } }).pd as number;
    const pd1 = this.must({ cmd: 'pd.alloc', args: { device: this.dev1 } }).pd as number;
    const b0 = this.must({ cmd: 'buffer.alloc', args: { length: 4096 } });
    const b1 = this.must({ cmd: 'buffer.alloc', args: { length: 4096 } });
    this.src = b0.addr as number; this.dst = b1.addr as number;
    this.lkey = this.must({ cmd: 'mr.reg', args: { pd: pd0, addr: this.src, length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE'] } }).lkey as number;
    this.rkey = this.must({ cmd: 'mr.reg', args: { pd: pd1, addr: this.dst, length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE'] } }).rkey as number;
    this.cq = this.must({ cmd: 'cq.create', args: { device: this.dev0, cqe: this.cqe, channel: true } }).cq as number;
    this.timeline.cq = this.cq;
    const rcq0 = this.must({ cmd: 'cq.create', args: { device: this.dev0, cqe: 4, channel: false } }).cq as number;
    const cq1 = this.must({ cmd: 'cq.create', args: { device: this.dev1, cqe: 4, channel: false } }).cq as number;
    const cap = { maxSendWr: this.cqe, maxRecvWr: 1, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 };
    this.qp = this.must({ cmd: 'qp.create', args: { pd: pd0, sendCq: this.cq, recvCq: rcq0, qpType: 'IBV_QPT_RC', cap, sqSigAll: false } }).qp as number;
    const qp1 = this.must({ cmd: 'qp.create', args: { pd: pd1, sendCq: cq1, recvCq: cq1, qpType: 'IBV_QPT_RC', cap, sqSigAll: false } }).qp as number;
    this.must({
      cmd: 'qp.connect',
      args: { qp: this.qp, peer: qp1, pathMtu: 'IBV_MTU_1024', access: ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE'] },
    });
  }

  /** ibv_post_send of request `wrId`: one signaled RDMA WRITE of 64 bytes. */
  post(wrId: number): void {
    const off = (wrId % 64) * REQ_LEN;
    this.must({
      cmd: 'post.send', args: {
        qp: this.qp, wrs: [{ wrId, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: ['IBV_SEND_SIGNALED'],
          sgList: [{ addr: this.src + off, length: REQ_LEN, lkey: this.lkey }], remoteAddr: this.dst + off, rkey: this.rkey }],
      },
    });
    this.idle = false;
  }

  /** One engine step (the device moves one packet / completion forward). */
  step(): void {
    const r = this.must({ cmd: 'engine.step', args: { count: 1 } });
    this.idle = r.idle as boolean;
    this.nowNs = r.nowNs as number;
  }

  /** ibv_poll_cq(cq, 1): the completion (wr_id and status name) or null when the CQ is empty. */
  poll(): { wrId: number; status: string } | null {
    const r = this.must({ cmd: 'cq.poll', args: { cq: this.cq, max: 1 } });
    const wcs = r.wcs as { wrId: number | string; statusName: string }[];
    this.timeline.polled(wcs.length);
    return wcs.length ? { wrId: Number(wcs[0]!.wrId), status: wcs[0]!.statusName } : null;
  }

  /** ib_req_notify_cq(IB_CQ_NEXT_COMP [| IB_CQ_REPORT_MISSED_EVENTS]): the return value (0 without the flag). */
  arm(reportMissedEvents: boolean): number {
    const r = this.must({ cmd: 'cq.req_notify', args: { cq: this.cq, solicitedOnly: false, reportMissedEvents } });
    return reportMissedEvents ? (r.missedEvents as number) : 0;
  }

  /** ibv_get_cq_event + ibv_ack_cq_events(cq, 1): false when no event is pending (ENOENT). */
  takeEvent(): boolean {
    const r = this.port.exec({ cmd: 'cq.get_event', args: { device: this.dev0 } });
    this.timeline.onEvents(this.port.drainEvents());
    if (!r.ok) {
      if (r.error.code === 'ENOENT') return false;
      throw new RigError(`cq.get_event: ${r.error.code} ${r.error.message}`);
    }
    this.timeline.gotEvent();
    this.must({ cmd: 'cq.ack_events', args: { cq: this.cq, n: 1 } });
    this.timeline.acked(1);
    return true;
  }
}
