// The NVMe-oF software target (lab 4): one subsystem, one dynamic controller, an admin queue and I/O queues, each an
// RC QP of the device with capsule-sized receive buffers. It acts only on work completions it polls from the device
// and on the bytes those completions landed, between engine steps (the fabric's pump), so a run is deterministic.
// Behaviour follows the Linux target (drivers/nvme/target/rdma.c, fabrics-cmd.c, admin-cmd.c, core.c) and SPDK's
// request states (lib/nvmf/rdma.c); formats are capsule.ts's. Data is served from the namespace backend
// (namespace.ts: bytes in the lab's process). With the device's offload (offload.ts) the queues receive from the
// NVMe-oF offload SRQ and this software sees only the capsules the device leaves to it.
import type { NativeSession, NWc } from '../../app/host/native.ts';
import { WcOpcode, WcStatus, WrOpcode, SendFlag } from '../../app/protocol/enums.ts';
import {
  CQE_LEN, SQE_LEN, encodeCqe, nlbOf, parseConnectData, parseConnectSqe, parseProperty, parseSqe, slbaOf,
  type ParsedSqe, type Sgl,
} from './capsule.ts';
import type { FlowLog } from './flow.ts';
import { drainCq, must, splitWrId, u64, wrIdOf } from './verbs.ts';
import { buildIdentifyCtrl, buildIdentifyNs, buildNsList } from './identify.ts';
import type { MemNamespace } from './namespace.ts';
import {
  AdminOpc, CC, CNTLID_DYNAMIC, CSTS, Cns, ConnectData, ConnectSqe, FABRICS_OPC, Fctype, IoOpc, Prop, Sc, Sct, ipoIattr,
  statusWord,
} from './spec.ts';

export interface TargetConfig {
  subnqn: string;
  /** host NQNs allowed (empty: any host, nvmet's attr_allow_any_host) */
  allowHosts: string[];
  /** entries per queue (CAP.MQES + 1) and receive buffers posted per queue */
  queueDepth: number;
  /** in-capsule data bytes a receive buffer takes after the SQE (IOCCSZ = (64 + this) / 16) */
  inlineSize: number;
  /** MDTS as bytes (the largest data transfer) */
  maxIo: number;
  maxIoQueues: number;
}

export const DEFAULT_TARGET: TargetConfig = {
  subnqn: 'nqn.2026-11.lab.verbs:nvmf-target', allowHosts: [], queueDepth: 128, inlineSize: 4096, maxIo: 128 * 1024, maxIoQueues: 4,
};

/** VS 1.3.0 (nvmet's NVMET_DEFAULT_VS). CAP as the Linux target in the fixture capture: MQES, TO 15 (7.5 s), CSS bit 37
 *  (NVM command set) and bit 43 (I/O command sets), MPSMIN = MPSMAX = 0 (4 KiB). */
const VS_1_3 = 0x00010300;
const capFor = (depth: number): bigint => (1n << 43n) | (1n << 37n) | (15n << 24n) | BigInt(depth - 1);

const K = { RECV: 1, READ: 2, WRITE: 3, SEND: 4 } as const;   // the kinds of wr_id (verbs.ts wrIdOf)

interface Req { slot: number; sqe: ParsedSqe; raw: Uint8Array; byteLen: number; name: string; invalidate?: number; dataLen: number }

export interface TargetQueue {
  index: number; qp: number; qpNum: number;
  /** null until a Connect succeeds on it */
  qid: number | null; sqsize: number; sqhd: number;
  /** the QID of the CM REQ's private data (nvmet's host_qid), known before the Fabrics Connect */
  cmQid: number | null;
  base: number; lkey: number; reqs: (Req | null)[];
  /** the NVMe-oF offload SRQ the QP receives from (null: its own receive queue). Such queues share the SRQ pool's
   *  buffers, slots and wr_ids; a completion is routed to its queue by the QP number it names. */
  srq: number | null;
}

export interface ControllerState { cntlid: number; hostnqn: string; cc: number; csts: number; kato: number; ioQueues: number[] }

export class SoftTarget {
  readonly queues: TargetQueue[] = [];
  ctrl: ControllerState | null = null;
  readonly cap: bigint;
  readonly counters = { capsules: 0, responses: 0, rdmaReads: 0, rdmaWrites: 0, errors: 0, softwareSteps: 0 };
  private nextCntlid = 1;

  constructor(
    private readonly s: NativeSession, readonly device: number, readonly pd: number, readonly cq: number,
    readonly ns: MemNamespace, readonly cfg: TargetConfig, private readonly flow: FlowLog,
  ) { this.cap = capFor(cfg.queueDepth); }

  private get recvSize(): number { return SQE_LEN + this.cfg.inlineSize; }
  private get slotSize(): number { return this.recvSize + CQE_LEN + this.cfg.maxIo; }

  /** A QP for a new queue (rdma_accept's side): buffers registered LOCAL_WRITE only (the host never reads or
   *  writes target memory), every receive buffer posted. The fabric connects it to the host's QP. */
  addQueue(): TargetQueue {
    const d = this.cfg.queueDepth, pool = this.srqPool;
    const qp = must(this.s.create_qp(this.pd, { sendCq: this.cq, recvCq: this.cq, ...(pool ? { srq: pool.srq! } : {}), qpType: 2, sqSigAll: false, cap: { maxSendWr: 3 * d + 2, maxRecvWr: pool ? 0 : d, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 } }), 'target create_qp');
    const q: TargetQueue = pool
      ? { ...pool, qp: qp.handle, qpNum: qp.qpNum }
      : { ...this.buffers(d), index: this.queues.length, qp: qp.handle, qpNum: qp.qpNum, qid: null, cmQid: null, sqsize: 0, sqhd: 0, srq: null };
    this.queues.push(q);
    return q;
  }

  private buffers(slots: number): { base: number; lkey: number; reqs: (Req | null)[] } {
    const buf = must(this.s.alloc_buffer(slots * this.slotSize), 'target buffer');
    const mr = must(this.s.reg_mr(this.pd, buf.addr, slots * this.slotSize, 1 /* IBV_ACCESS_LOCAL_WRITE */), 'target reg_mr');
    return { base: Number(buf.addr), lkey: mr.lkey, reqs: new Array<Req | null>(slots).fill(null) };
  }

  /** The NVMe-oF offload SRQ (MLNX_OFED nvmet_rdma_offload: every queue of the subsystem receives from it): a pool of
   *  capsule buffers posted to it once; queues added from now on receive from the SRQ. The capsules the device does
   *  not offload (Connect, admin, Fabrics, what it passes to software) complete on the target's CQ as ordinary RECVs. */
  useSrq(srq: number, slots: number): void {
    const b = this.buffers(slots);
    this.srqPool = { ...b, index: this.queues.length, qp: -1, qpNum: -1, qid: null, cmQid: null, sqsize: 0, sqhd: 0, srq };
    this.queues.push(this.srqPool);   // holds the pool's wr_id index; never a queue of its own
    const r = this.s.post_srq_recv(srq, b.reqs.map((_, i) => this.recvWr(this.srqPool!, i)));
    if (r.err) throw new Error(`target post_srq_recv: ${r.msg}`);
  }
  private srqPool: TargetQueue | null = null;

  private recvWr(q: TargetQueue, slot: number) {
    return { wrId: wrIdOf(q.index, K.RECV, slot), sgList: [{ addr: this.addr(q, slot, 'recv'), length: this.recvSize, lkey: q.lkey }] };
  }

  /** Post every receive buffer of a connected QP (after RTR); a queue on the SRQ has none of its own. */
  postReceives(q: TargetQueue): void {
    if (q.srq !== null) return;
    const r = this.s.post_recv(q.qp, q.reqs.map((_, i) => this.recvWr(q, i)));
    if (r.err) throw new Error(`target post_recv: ${r.msg}`);
  }

  private addr(q: TargetQueue, slot: number, part: 'recv' | 'rsp' | 'data'): number {
    const off = slot * this.slotSize + (part === 'recv' ? 0 : part === 'rsp' ? this.recvSize : this.recvSize + CQE_LEN);
    return q.base + off;
  }

  /** Every completion of the target's CQ polled now; returns how many. */
  poll(): number { return drainCq(this.s, this.cq, (wc) => this.onWc(wc)); }

  private row(q: TargetQueue, cid: number, stage: string, verb?: string, detail?: string): void {
    this.flow.add({ qid: q.qid ?? q.cmQid ?? -1, cid, owner: 'software', stage, ...(verb ? { verb } : {}), ...(detail ? { detail } : {}) });
  }

  private onWc(wc: NWc): void {
    const { q: qi, kind, slot } = splitWrId(Number(wc.wrId));
    const q = this.queues[qi]?.srq != null ? this.queues.find((x) => x.qpNum === wc.qpNum) : this.queues[qi];
    if (!q) return;
    this.counters.softwareSteps++;
    const req = q.reqs[slot] ?? null;
    if (wc.status !== WcStatus.values.IBV_WC_SUCCESS) {
      // a failed RDMA READ / WRITE / SEND moves the QP to the error state: nvmet tears the queue down
      // (nvmet_rdma_read_data_done / nvmet_rdma_send_done -> nvmet_rdma_error_comp); flushed receives end here too
      if (wc.status !== WcStatus.values.IBV_WC_WR_FLUSH_ERR) this.counters.errors++;
      if (req) this.row(q, req.sqe.cid, 'ERROR', WcOpcode.name(wc.opcode), WcStatus.name(wc.status));
      q.reqs[slot] = null;
      return;
    }
    if (kind === K.RECV) return this.onCapsule(q, slot, wc.byteLen);
    if (!req) return;
    if (kind === K.READ) {
      this.row(q, req.sqe.cid, 'READY_TO_EXECUTE', 'IBV_WC_RDMA_READ', `${req.dataLen} bytes fetched`);
      return this.execute(q, req, this.s.read_memory(this.addr(q, slot, 'data'), req.dataLen).value as Uint8Array);
    }
    if (kind === K.SEND) {
      this.row(q, req.sqe.cid, 'COMPLETED', 'IBV_WC_SEND');
      q.reqs[slot] = null;
      const r = q.srq !== null ? this.s.post_srq_recv(q.srq, [this.recvWr(q, slot)]) : this.s.post_recv(q.qp, [this.recvWr(q, slot)]);
      if (r.err) this.counters.errors++;
    }
  }

  private onCapsule(q: TargetQueue, slot: number, byteLen: number): void {
    this.counters.capsules++;
    const raw = this.s.read_memory(this.addr(q, slot, 'recv'), byteLen).value as Uint8Array;
    if (byteLen < SQE_LEN) { this.counters.errors++; return; }   // nvmet_rdma_recv_done: "too small" capsule, dropped
    const sqe = parseSqe(raw);
    const req: Req = { slot, sqe, raw, byteLen, name: nameOf(sqe, q.qid), dataLen: 0 };
    q.reqs[slot] = req;
    q.sqhd = (q.sqhd + 1) % Math.max(1, q.sqsize + 1);
    this.row(q, sqe.cid, 'NEW', 'IBV_WC_RECV', `${req.name}, ${byteLen} bytes`);
    // nvmet_parse_connect_cmd: on a queue not yet connected only a Fabrics Connect is accepted
    if (q.qid === null && !(sqe.opc === FABRICS_OPC && sqe.fctype === Fctype.CONNECT)) return this.respond(q, req, statusWord(Sct.GENERIC, Sc.INVALID_OPCODE, true));
    if (sqe.opc === FABRICS_OPC) {
      if (sqe.fctype === Fctype.CONNECT) return this.needData(q, req, ConnectData.SIZE, true);
      if (q.qid !== 0) return this.respond(q, req, statusWord(Sct.GENERIC, Sc.INVALID_OPCODE, true));
      return this.execute(q, req, null);
    }
    if (q.qid === 0) {
      // nvmet_check_ctrl_status: admin commands other than Fabrics need CSTS.RDY
      if (!(this.ctrl!.csts & CSTS.RDY)) return this.respond(q, req, statusWord(Sct.GENERIC, Sc.CMD_SEQ_ERROR, true));
      return this.execute(q, req, null);
    }
    if (sqe.opc === IoOpc.WRITE || sqe.opc === IoOpc.READ) {
      if (sqe.nsid !== this.ns.nsid) return this.respond(q, req, statusWord(Sct.GENERIC, Sc.INVALID_NS, true));
      const len = nlbOf(sqe) * this.ns.lbaSize;
      if (sqe.opc === IoOpc.WRITE) return this.needData(q, req, len, true);
      return this.execute(q, req, null);
    }
    return this.execute(q, req, null);
  }

  /** Host-to-controller data (nvmet_rdma_map_sgl): in-capsule bytes, or an RDMA READ of the keyed SGL. */
  private needData(q: TargetQueue, req: Req, len: number, toController: boolean): void {
    const st = this.checkSgl(q, req, len, toController);
    if (st !== 0) return this.respond(q, req, st);
    const sgl = req.sqe.sgl!;
    if (sgl.kind === 'inline') {
      this.row(q, req.sqe.cid, 'READY_TO_EXECUTE', undefined, `${sgl.length} bytes in capsule`);
      return this.execute(q, req, req.raw.subarray(SQE_LEN + sgl.offset, SQE_LEN + sgl.offset + sgl.length));
    }
    const r = this.s.post_send(q.qp, [{
      wrId: wrIdOf(q.index, K.READ, req.slot), opcode: WrOpcode.values.IBV_WR_RDMA_READ, sendFlags: SendFlag.values.IBV_SEND_SIGNALED,
      sgList: [{ addr: this.addr(q, req.slot, 'data'), length: len, lkey: q.lkey }], remoteAddr: u64(sgl.addr), rkey: sgl.key,
    }]);
    if (r.err) return this.respond(q, req, statusWord(Sct.GENERIC, Sc.INTERNAL, true));
    this.counters.rdmaReads++;
    this.row(q, req.sqe.cid, 'TRANSFERRING_HOST_TO_CONTROLLER', 'IBV_WR_RDMA_READ', `${len} bytes, rkey 0x${sgl.key.toString(16)}`);
  }

  /** The SGL checks of nvmet_rdma_map_sgl / _keyed / _inline: 0 when the descriptor can carry `len` bytes. */
  private checkSgl(q: TargetQueue, req: Req, len: number, toController: boolean): number {
    const sgl = req.sqe.sgl;
    if (!sgl) return statusWord(Sct.GENERIC, Sc.SGL_INVALID_TYPE, true);
    if (sgl.kind === 'inline') {
      if (!toController) return statusWord(Sct.GENERIC, Sc.INVALID_FIELD, true);
      if (sgl.offset + sgl.length > this.cfg.inlineSize || SQE_LEN + sgl.offset + sgl.length > req.byteLen) return statusWord(Sct.GENERIC, Sc.SGL_INVALID_OFFSET, true);
    } else if (sgl.length > this.cfg.maxIo) return statusWord(Sct.GENERIC, Sc.SGL_INVALID_DATA, true);
    // nvmet_check_transfer_len: the descriptor's length is the command's transfer length
    if (sgl.length !== len) return statusWord(Sct.GENERIC, Sc.SGL_INVALID_DATA, true);
    if (sgl.kind === 'keyed' && sgl.invalidate && len > 0) req.invalidate = sgl.key;
    req.dataLen = len;
    void q;
    return 0;
  }

  private execute(q: TargetQueue, req: Req, data: Uint8Array | null): void {
    const sqe = req.sqe;
    this.row(q, sqe.cid, 'EXECUTING');
    if (sqe.opc === FABRICS_OPC) {
      if (sqe.fctype === Fctype.CONNECT) return this.connect(q, req, data!);
      const p = parseProperty(req.raw);
      if (sqe.fctype === Fctype.PROPERTY_GET) return this.executed(q, req, 0, this.propGet(p.offset, p.size));
      if (sqe.fctype === Fctype.PROPERTY_SET) {
        // nvmet_execute_prop_set: only CC, only as 4 bytes
        if (p.size !== 4 || p.offset !== Prop.CC) return this.executed(q, req, statusWord(Sct.GENERIC, Sc.INVALID_FIELD, true));
        this.setCc(Number(p.value & 0xffffffffn));
        return this.executed(q, req, 0);
      }
      return this.executed(q, req, statusWord(Sct.GENERIC, Sc.INVALID_OPCODE, true));
    }
    if (q.qid === 0) return this.admin(q, req);
    return this.io(q, req, data);
  }

  private admin(q: TargetQueue, req: Req): void {
    const sqe = req.sqe;
    switch (sqe.opc) {
      case AdminOpc.KEEP_ALIVE: return this.executed(q, req, 0);
      case AdminOpc.SET_FEATURES:
        // Number of Queues (FID 0x07): DW0 = NSQA | NCQA << 16, both 0's based (nvmet_set_feat_num_queues)
        if ((sqe.cdw10 & 0xff) === 0x07) return this.executed(q, req, 0, BigInt((this.cfg.maxIoQueues - 1) | ((this.cfg.maxIoQueues - 1) << 16)));
        return this.executed(q, req, statusWord(Sct.GENERIC, Sc.INVALID_FIELD, true));
      case AdminOpc.IDENTIFY: {
        const cns = sqe.cdw10 & 0xff;
        let page: Uint8Array | null = null;
        if (cns === Cns.CONTROLLER) page = buildIdentifyCtrl({ cntlid: this.ctrl!.cntlid, subnqn: this.cfg.subnqn, queueDepth: this.cfg.queueDepth, inlineSize: this.cfg.inlineSize, maxIo: this.cfg.maxIo, nn: this.ns.nsid });
        else if (cns === Cns.NAMESPACE) {
          if (sqe.nsid !== this.ns.nsid) return this.executed(q, req, statusWord(Sct.GENERIC, Sc.INVALID_NS, true));
          page = buildIdentifyNs(this.ns.blocks, this.ns.lbaSize);
        } else if (cns === Cns.ACTIVE_NS_LIST) page = buildNsList(sqe.nsid < this.ns.nsid ? [this.ns.nsid] : []);
        if (!page) return this.executed(q, req, statusWord(Sct.GENERIC, Sc.INVALID_FIELD, true));
        return this.toHost(q, req, page);
      }
      default: return this.executed(q, req, statusWord(Sct.GENERIC, Sc.INVALID_OPCODE, true));
    }
  }

  private io(q: TargetQueue, req: Req, data: Uint8Array | null): void {
    const sqe = req.sqe, c = this.ns.counters;
    if (sqe.opc === IoOpc.FLUSH) { c.flushCmds++; return this.executed(q, req, 0); }
    if (sqe.opc !== IoOpc.READ && sqe.opc !== IoOpc.WRITE) return this.executed(q, req, statusWord(Sct.GENERIC, Sc.INVALID_OPCODE, true));
    const slba = slbaOf(sqe), nlb = nlbOf(sqe);
    if (!this.ns.inRange(slba, nlb)) { c.errorCmds++; return this.executed(q, req, statusWord(Sct.GENERIC, Sc.LBA_RANGE, true)); }
    if (sqe.opc === IoOpc.WRITE) {
      this.ns.write(slba, data!);
      c.writeCmds++; c.writeBlocks += nlb;
      if (sqe.sgl?.kind === 'inline') c.writeInlineCmds++;
      return this.executed(q, req, 0);
    }
    const st = this.checkSgl(q, req, nlb * this.ns.lbaSize, false);
    if (st !== 0) { c.errorCmds++; return this.executed(q, req, st); }
    c.readCmds++; c.readBlocks += nlb;
    return this.toHost(q, req, this.ns.read(slba, nlb));
  }

  /** Controller-to-host data: RDMA WRITE to the keyed SGL, the response SEND chained behind it on the same QP. */
  private toHost(q: TargetQueue, req: Req, bytes: Uint8Array): void {
    const sgl = req.sqe.sgl;
    if (!sgl || sgl.kind !== 'keyed') return this.executed(q, req, statusWord(Sct.GENERIC, sgl ? Sc.INVALID_FIELD : Sc.SGL_INVALID_TYPE, true));
    if (sgl.length < bytes.length || sgl.length > this.cfg.maxIo) return this.executed(q, req, statusWord(Sct.GENERIC, Sc.SGL_INVALID_DATA, true));
    if (sgl.invalidate) req.invalidate = sgl.key;
    this.row(q, req.sqe.cid, 'EXECUTED');
    this.s.write_memory(this.addr(q, req.slot, 'data'), bytes);
    const write = {
      wrId: wrIdOf(q.index, K.WRITE, req.slot), opcode: WrOpcode.values.IBV_WR_RDMA_WRITE,
      sgList: [{ addr: this.addr(q, req.slot, 'data'), length: bytes.length, lkey: q.lkey }], remoteAddr: u64(sgl.addr), rkey: sgl.key,
    };
    this.counters.rdmaWrites++;
    this.row(q, req.sqe.cid, 'TRANSFERRING_CONTROLLER_TO_HOST', 'IBV_WR_RDMA_WRITE', `${bytes.length} bytes, rkey 0x${sgl.key.toString(16)}`);
    this.send(q, req, 0, 0n, [write]);
  }

  private executed(q: TargetQueue, req: Req, status: number, result = 0n): void {
    this.row(q, req.sqe.cid, 'EXECUTED', undefined, status ? `status 0x${status.toString(16)}` : undefined);
    this.send(q, req, status, result, []);
  }

  private respond(q: TargetQueue, req: Req, status: number, result = 0n): void { this.executed(q, req, status, result); }

  /** The response capsule: CQE with SQHD and the host's CID; SEND, or SEND with Invalidate of the host's rkey when
   *  the keyed SGL asked for it (nvmet_rdma_queue_response). */
  private send(q: TargetQueue, req: Req, status: number, result: bigint, before: Parameters<NativeSession['post_send']>[1]): void {
    if (status) this.counters.errors++;
    const cqe = encodeCqe({ dw0: Number(result & 0xffffffffn), dw1: Number(result >> 32n), sqhd: q.sqhd, sqid: q.qid ?? 0, cid: req.sqe.cid, status });
    this.s.write_memory(this.addr(q, req.slot, 'rsp'), cqe);
    const inv = req.invalidate !== undefined;
    const send = {
      wrId: wrIdOf(q.index, K.SEND, req.slot), opcode: inv ? WrOpcode.values.IBV_WR_SEND_WITH_INV : WrOpcode.values.IBV_WR_SEND,
      sendFlags: SendFlag.values.IBV_SEND_SIGNALED, sgList: [{ addr: this.addr(q, req.slot, 'rsp'), length: CQE_LEN, lkey: q.lkey }],
      ...(inv ? { immData: req.invalidate } : {}),
    };
    const r = this.s.post_send(q.qp, [...before, send]);
    if (r.err) { this.counters.errors++; this.row(q, req.sqe.cid, 'ERROR', 'ibv_post_send', r.msg); return; }
    this.counters.responses++;
    this.row(q, req.sqe.cid, 'COMPLETING', inv ? 'IBV_WR_SEND_WITH_INV' : 'IBV_WR_SEND', status ? `status 0x${status.toString(16)}` : 'success');
  }

  // ---- Fabrics: Connect and properties (nvmet fabrics-cmd.c, core.c)

  private connect(q: TargetQueue, req: Req, data: Uint8Array): void {
    const c = parseConnectSqe(req.raw), d = parseConnectData(data);
    const bad = (inData: boolean, off: number, sc: number = Sc.CONNECT_INVALID_PARAM) => this.executed(q, req, statusWord(Sct.COMMAND_SPECIFIC, sc, true), BigInt(ipoIattr(inData, off)));
    if (c.recfmt !== 0) return bad(false, ConnectSqe.RECFMT, Sc.CONNECT_INVALID_PARAM);
    if (d.subnqn !== this.cfg.subnqn) return bad(true, ConnectData.SUBNQN);
    if (this.cfg.allowHosts.length && !this.cfg.allowHosts.includes(d.hostnqn)) return bad(true, ConnectData.HOSTNQN, Sc.CONNECT_INVALID_HOST);
    if (c.sqsize === 0 || c.sqsize > this.cfg.queueDepth - 1) return bad(false, ConnectSqe.SQSIZE);
    if (c.qid === 0) {
      // admin queue: a dynamic controller (CNTLID 0xFFFF), CNTLID returned in DW0 (nvmet_execute_admin_connect)
      if (d.cntlid !== CNTLID_DYNAMIC) return bad(true, ConnectData.CNTLID);
      this.ctrl = { cntlid: this.nextCntlid++, hostnqn: d.hostnqn, cc: 0, csts: 0, kato: c.kato, ioQueues: [] };
    } else {
      // I/O queue: the controller the admin Connect created (nvmet_execute_io_connect)
      if (!this.ctrl || d.cntlid !== this.ctrl.cntlid || d.hostnqn !== this.ctrl.hostnqn) return bad(true, ConnectData.CNTLID);
      if (c.qid > this.cfg.maxIoQueues || this.ctrl.ioQueues.includes(c.qid)) return bad(false, ConnectSqe.QID);
      this.ctrl.ioQueues.push(c.qid);
    }
    q.qid = c.qid; q.sqsize = c.sqsize;
    this.executed(q, req, 0, BigInt(this.ctrl!.cntlid));
  }

  private propGet(offset: number, size: 4 | 8): bigint {
    const c = this.ctrl!;
    switch (offset) {
      case Prop.CAP: return size === 8 ? this.cap : this.cap & 0xffffffffn;
      case Prop.VS: return BigInt(VS_1_3);
      case Prop.CC: return BigInt(c.cc >>> 0);
      case Prop.CSTS: return BigInt(c.csts >>> 0);
      default: return 0n;
    }
  }

  /** nvmet_update_cc: EN 0->1 starts the controller if IOSQES = 6 and IOCQES = 4 (else CSTS.CFS), EN 1->0 clears
   *  RDY, a shutdown notification completes at once (SHST = 2). */
  private setCc(v: number): void {
    const c = this.ctrl!, old = c.cc;
    c.cc = v >>> 0;
    if ((v & CC.EN) && !(old & CC.EN)) {
      const iosqes = (v >> CC.IOSQES_SHIFT) & 0xf, iocqes = (v >> CC.IOCQES_SHIFT) & 0xf;
      c.csts = iosqes === 6 && iocqes === 4 ? CSTS.RDY : CSTS.CFS;
    }
    if (!(v & CC.EN) && (old & CC.EN)) c.csts = 0;
    if ((v >> CC.SHN_SHIFT) & 3) c.csts |= CSTS.SHST_CMPLT;
  }
}

function nameOf(sqe: ParsedSqe, qid: number | null): string {
  if (sqe.opc === FABRICS_OPC) return ({ 0: 'Property Set', 1: 'Connect', 4: 'Property Get' } as Record<number, string>)[sqe.fctype] ?? `Fabrics 0x${sqe.fctype.toString(16)}`;
  if (qid === 0) return ({ 0x06: 'Identify', 0x09: 'Set Features', 0x18: 'Keep Alive', 0x02: 'Get Log Page' } as Record<number, string>)[sqe.opc] ?? `Admin 0x${sqe.opc.toString(16)}`;
  return ({ 0x00: 'Flush', 0x01: 'Write', 0x02: 'Read' } as Record<number, string>)[sqe.opc] ?? `I/O 0x${sqe.opc.toString(16)}`;
}

export type { Sgl };
