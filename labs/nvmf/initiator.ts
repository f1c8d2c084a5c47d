// The NVMe-oF host driver of lab 4 (the initiator agent), shaped as Linux drivers/nvme/host/rdma.c: per queue an RC
// QP with a response receive buffer per slot; command capsules sent as SEND; data described by a keyed SGL to a
// registered buffer (the PD-wide MR, or a fast-registration MR per command whose rkey the target invalidates with its
// response: nvme_rdma_map_sg_fr, subtype 0xF), or carried in the capsule (in-capsule data, I/O writes only). Each
// response is matched by CID; the data of every READ is compared byte for byte with what this host wrote.
import type { NativeSession, NWc } from '../../app/host/native.ts';
import { Access, SendFlag, WcFlag, WcOpcode, WcStatus, WrOpcode } from '../../app/protocol/enums.ts';
import {
  CQE_LEN, SQE_LEN, connectData, connectSqe, encodeSqe, parseCqe, propertyGetSqe, propertySetSqe, rwSqe, type Cqe, type Sgl,
} from './capsule.ts';
import type { FlowLog } from './flow.ts';
import { drainCq, must, splitWrId, wrIdOf } from './verbs.ts';
import { AdminOpc, CNTLID_DYNAMIC, IoOpc } from './spec.ts';

/** How a command's data is described. */
export type SglMode = 'keyed' | 'keyed-inv' | 'inline';

export type HostCommand =
  | { op: 'connect'; qid: number; sqsize: number; kato: number; cntlid?: number; subnqn: string; hostnqn: string }
  | { op: 'property-get'; offset: number; size: 4 | 8 }
  | { op: 'property-set'; offset: number; value: bigint }
  | { op: 'identify'; cns: number; nsid: number }
  | { op: 'keep-alive' }
  | { op: 'set-features'; fid: number; cdw11: number }
  | { op: 'write' | 'read'; nsid: number; slba: bigint; nlb: number; sgl: SglMode }
  | { op: 'flush'; nsid: number };

/** Deliberate mistakes of the host, for the lab's faults. */
export interface HostFault {
  /** the keyed SGL carries this rkey instead of the right one (a stale or foreign key) */
  badKey?: boolean;
  /** the SGL's length is this instead of the transfer length */
  sglLength?: number;
  /** the in-capsule SGL's offset is this */
  inlineOffset?: number;
}

export interface Done {
  qid: number; cid: number; op: HostCommand['op']; cqe: Cqe & { sc: number; sct: number; dnr: boolean };
  /** READ / Identify: the data every byte of which was compared (true), or a mismatch (false); null: no data in */
  verified: boolean | null;
  /** the bytes read (Identify, Property Get results are in the CQE) */
  data?: Uint8Array;
  /** the response came with SEND with Invalidate of this rkey */
  invalidatedRkey?: number;
}

interface Pending { slot: number; cid: number; cmd: HostCommand; sent: boolean; cqe?: Done['cqe']; invalidated?: number; dataLen: number; key?: number }

export interface HostQueue { index: number; qid: number; qp: number; qpNum: number; depth: number; base: number; lkey: number; rkey: number; pending: (Pending | null)[]; nextCid: number }

const K = { SEND: 1, RECV: 2, REG: 3 } as const;

/** The pattern a WRITE carries: deterministic per (LBA, generation) so a READ knows what each block must hold. */
export function blockPattern(lba: bigint, gen: number, lbaSize: number): Uint8Array {
  const b = new Uint8Array(lbaSize);
  let x = (Number(lba & 0xffffffn) * 2654435761 + gen * 40503 + 1) >>> 0;
  for (let i = 0; i < lbaSize; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; b[i] = x & 0xff; }
  return b;
}

export class HostDriver {
  readonly queues: HostQueue[] = [];
  readonly done: Done[] = [];
  readonly counters = { submitted: 0, completed: 0, verifiedBytes: 0, mismatches: 0, errors: 0 };
  private frMrs = new Map<string, { handle: number; keyByte: number; lkey: number }>();
  /** what every block of the namespace holds, as this host wrote it (never written: zeros) */
  private readonly oracle: Uint8Array;
  private gen = 0;

  constructor(
    private readonly s: NativeSession, readonly device: number, readonly pd: number, readonly cq: number,
    readonly lbaSize: number, blocks: number, readonly maxIo: number, readonly inlineSize: number, private readonly flow: FlowLog,
    readonly hostid = new Uint8Array(16).map((_, i) => 0x10 + i),
  ) { this.oracle = new Uint8Array(lbaSize * blocks); }

  private get slotSize(): number { return SQE_LEN + this.inlineSize + CQE_LEN + this.maxIo; }

  addQueue(qid: number, depth: number): HostQueue {
    const qp = must(this.s.create_qp(this.pd, { sendCq: this.cq, recvCq: this.cq, qpType: 2, sqSigAll: false, cap: { maxSendWr: 3 * depth + 1, maxRecvWr: depth, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 } }), 'host create_qp');
    const len = depth * this.slotSize;
    const buf = must(this.s.alloc_buffer(len), 'host buffer');
    const acc = Access.values.IBV_ACCESS_LOCAL_WRITE | Access.values.IBV_ACCESS_REMOTE_READ | Access.values.IBV_ACCESS_REMOTE_WRITE;
    // one MR per queue's buffers; its rkey is what a 'keyed' SGL names (the Linux host's PD-wide key when
    // register_always is off)
    const mr = must(this.s.reg_mr(this.pd, buf.addr, len, acc), 'host reg_mr');
    const q: HostQueue = { index: this.queues.length, qid, qp: qp.handle, qpNum: qp.qpNum, depth, base: Number(buf.addr), lkey: mr.lkey, rkey: mr.rkey, pending: new Array<Pending | null>(depth).fill(null), nextCid: 1 };
    this.queues.push(q);
    return q;
  }

  postReceives(q: HostQueue): void {
    const r = this.s.post_recv(q.qp, q.pending.map((_, i) => ({ wrId: wrIdOf(q.index, K.RECV, i), sgList: [{ addr: this.addr(q, i, 'rsp'), length: CQE_LEN, lkey: q.lkey }] })));
    if (r.err) throw new Error(`host post_recv: ${r.msg}`);
  }

  private addr(q: HostQueue, slot: number, part: 'cmd' | 'rsp' | 'data'): number {
    const off = slot * this.slotSize + (part === 'cmd' ? 0 : part === 'rsp' ? SQE_LEN + this.inlineSize : SQE_LEN + this.inlineSize + CQE_LEN);
    return q.base + off;
  }

  /** free slots of a queue */
  free(q: HostQueue): number { return q.pending.filter((p) => p === null).length; }

  /** Build the capsule and post it; returns the CID, or null when the queue is full. */
  submit(q: HostQueue, cmd: HostCommand, fault: HostFault = {}): number | null {
    const slot = q.pending.indexOf(null);
    if (slot < 0) return null;
    const cid = q.nextCid; q.nextCid = (q.nextCid % 0xfffe) + 1;
    const mr = q;
    const dataAddr = this.addr(q, slot, 'data');
    const p: Pending = { slot, cid, cmd, sent: false, dataLen: 0 };
    const wrs: Parameters<NativeSession['post_send']>[1] = [];
    const keyed = (len: number, mode: SglMode): Sgl => {
      p.dataLen = len;
      let key = mr.rkey;
      if (mode === 'keyed-inv') key = this.fastReg(q, slot, dataAddr, len, mr.lkey, wrs);
      p.key = key;
      return { kind: 'keyed', addr: BigInt(dataAddr), length: fault.sglLength ?? len, key: fault.badKey ? (key ^ 0x80) >>> 0 : key, invalidate: mode === 'keyed-inv' };
    };
    let sqe: Uint8Array, inline: Uint8Array | null = null;
    switch (cmd.op) {
      case 'connect': {
        const data = connectData({ hostid: this.hostid, cntlid: cmd.cntlid ?? CNTLID_DYNAMIC, subnqn: cmd.subnqn, hostnqn: cmd.hostnqn });
        this.s.write_memory(dataAddr, data);
        // the Linux host sends the Connect data by a keyed SGL with "invalidate key" (nvme_rdma_map_data)
        sqe = connectSqe({ cid, qid: cmd.qid, sqsize: cmd.sqsize, kato: cmd.kato, sgl: keyed(data.length, 'keyed') });
        break;
      }
      case 'property-get': sqe = propertyGetSqe({ cid, offset: cmd.offset, size: cmd.size }); break;
      case 'property-set': sqe = propertySetSqe({ cid, offset: cmd.offset, size: 4, value: cmd.value }); break;
      case 'identify': sqe = encodeSqe({ opc: AdminOpc.IDENTIFY, cid, nsid: cmd.nsid, sgl: keyed(4096, 'keyed'), cdw: { 10: cmd.cns } }); break;
      case 'keep-alive': sqe = encodeSqe({ opc: AdminOpc.KEEP_ALIVE, cid, sgl: { kind: 'keyed', addr: 0n, length: 0, key: 0, invalidate: false } }); break;
      case 'set-features': sqe = encodeSqe({ opc: AdminOpc.SET_FEATURES, cid, sgl: { kind: 'keyed', addr: 0n, length: 0, key: 0, invalidate: false }, cdw: { 10: cmd.fid, 11: cmd.cdw11 } }); break;
      case 'flush': sqe = encodeSqe({ opc: IoOpc.FLUSH, cid, nsid: cmd.nsid, sgl: { kind: 'keyed', addr: 0n, length: 0, key: 0, invalidate: false } }); break;
      case 'write': case 'read': {
        const len = cmd.nlb * this.lbaSize;
        if (cmd.op === 'write') {
          const bytes = new Uint8Array(len);
          this.gen++;
          for (let i = 0; i < cmd.nlb; i++) bytes.set(blockPattern(cmd.slba + BigInt(i), this.gen, this.lbaSize), i * this.lbaSize);
          (p as Pending & { bytes?: Uint8Array }).bytes = bytes;
          if (cmd.sgl === 'inline') { inline = bytes; p.dataLen = len; } else this.s.write_memory(dataAddr, bytes);
        } else this.s.write_memory(dataAddr, new Uint8Array(len));   // the read buffer starts zeroed: stale bytes cannot pass
        const sgl: Sgl = cmd.sgl === 'inline'
          ? { kind: 'inline', offset: fault.inlineOffset ?? 0, length: fault.sglLength ?? len }
          : keyed(len, cmd.sgl);
        sqe = rwSqe({ opc: cmd.op === 'write' ? IoOpc.WRITE : IoOpc.READ, cid, nsid: cmd.nsid, slba: cmd.slba, nlb: cmd.nlb, sgl });
        break;
      }
    }
    const capsule = inline ? concat(sqe, inline) : sqe;
    this.s.write_memory(this.addr(q, slot, 'cmd'), capsule);
    wrs.push({ wrId: wrIdOf(q.index, K.SEND, slot), opcode: WrOpcode.values.IBV_WR_SEND, sendFlags: SendFlag.values.IBV_SEND_SIGNALED, sgList: [{ addr: this.addr(q, slot, 'cmd'), length: capsule.length, lkey: mr.lkey }] });
    const r = this.s.post_send(q.qp, wrs);
    if (r.err) throw new Error(`host post_send: ${r.msg}`);
    q.pending[slot] = p;
    this.counters.submitted++;
    this.flow.add({ qid: q.qid, cid, owner: 'host', stage: 'SUBMIT', verb: 'IBV_WR_SEND', detail: `${cmd.op}, ${capsule.length}-byte capsule${p.key !== undefined ? `, rkey 0x${p.key.toString(16)}` : ''}` });
    return cid;
  }

  /** nvme_rdma_map_sg_fr: a fast-registration MR over the slot's data, a fresh key byte per use (REG_MR before the
   *  capsule on the same QP: ordered). Returns the rkey the SGL names. */
  private fastReg(q: HostQueue, slot: number, addr: number, len: number, lkey: number, wrs: Parameters<NativeSession['post_send']>[1]): number {
    const k = `${q.index}:${slot}`;
    let m = this.frMrs.get(k);
    if (!m) {
      const mr = must(this.s.alloc_mr(this.pd, Math.ceil(this.maxIo / 4096) + 1, false), 'host alloc_mr');
      m = { handle: mr.handle, keyByte: mr.lkey & 0xff, lkey: mr.lkey };
      this.frMrs.set(k, m);
    }
    const n = must(this.s.map_mr_sg(m.handle, [{ addr, length: len, lkey }], 4096), 'host map_mr_sg');
    if (!n) throw new Error('host map_mr_sg mapped nothing');
    m.keyByte = (m.keyByte + 1) & 0xff;   // ib_update_fast_reg_key
    const key = ((m.lkey & ~0xff) | m.keyByte) >>> 0;
    wrs.push({ wrId: wrIdOf(q.index, K.REG, slot), opcode: WrOpcode.values.IB_WR_REG_MR, regMr: m.handle, regKey: key, regAccess: Access.values.IBV_ACCESS_LOCAL_WRITE | Access.values.IBV_ACCESS_REMOTE_READ | Access.values.IBV_ACCESS_REMOTE_WRITE });
    return key;
  }

  poll(): number { return drainCq(this.s, this.cq, (wc) => this.onWc(wc)); }

  private onWc(wc: NWc): void {
    const { q: qi, kind, slot } = splitWrId(Number(wc.wrId));
    const q = this.queues[qi];
    if (!q) return;
    if (wc.status !== WcStatus.values.IBV_WC_SUCCESS) {
      if (wc.status !== WcStatus.values.IBV_WC_WR_FLUSH_ERR) this.counters.errors++;
      const p = q.pending[slot];
      if (p && kind !== K.RECV) this.flow.add({ qid: q.qid, cid: p.cid, owner: 'host', stage: 'ERROR', verb: WcOpcode.name(wc.opcode), detail: WcStatus.name(wc.status) });
      return;
    }
    if (kind === K.SEND) {
      const p = q.pending[slot];
      if (p) { p.sent = true; this.finish(q, p); }
      return;
    }
    if (kind !== K.RECV) return;
    const cqe = parseCqe(this.s.read_memory(this.addr(q, slot, 'rsp'), CQE_LEN).value as Uint8Array);
    // repost the response buffer at once (nvme_rdma_recv_done -> nvme_rdma_post_recv)
    this.s.post_recv(q.qp, [{ wrId: wrIdOf(q.index, K.RECV, slot), sgList: [{ addr: this.addr(q, slot, 'rsp'), length: CQE_LEN, lkey: q.lkey }] }]);
    const p = q.pending.find((x) => x?.cid === cqe.cid);
    if (!p) { this.counters.errors++; return; }   // nvme_rdma_process_nvme_rsp: "tag not found"
    p.cqe = cqe;
    if (wc.wcFlags & WcFlag.values.IBV_WC_WITH_INV) p.invalidated = wc.invalidatedRkey;
    this.flow.add({ qid: q.qid, cid: p.cid, owner: 'host', stage: 'RESPONSE', verb: 'IBV_WC_RECV', detail: `SQHD ${cqe.sqhd}, ${cqe.status ? `SCT ${cqe.sct} SC 0x${cqe.sc.toString(16)}${cqe.dnr ? ' DNR' : ''}` : 'success'}${p.invalidated !== undefined ? `, invalidated rkey 0x${p.invalidated.toString(16)}` : ''}` });
    this.finish(q, p);
  }

  /** A command ends when its capsule SEND completed and its response came (nvme_rdma_end_request). */
  private finish(q: HostQueue, p: Pending): void {
    if (!p.sent || !p.cqe) return;
    q.pending[p.slot] = null;
    const cmd = p.cmd;
    let verified: boolean | null = null, data: Uint8Array | undefined;
    const ok = p.cqe.status === 0;
    if (ok && cmd.op === 'write') this.oracle.set((p as Pending & { bytes: Uint8Array }).bytes, Number(cmd.slba) * this.lbaSize);
    if (ok && (cmd.op === 'read' || cmd.op === 'identify')) {
      data = this.s.read_memory(this.addr(q, p.slot, 'data'), p.dataLen).value as Uint8Array;
      if (cmd.op === 'read') {
        const want = this.oracle.subarray(Number(cmd.slba) * this.lbaSize, Number(cmd.slba) * this.lbaSize + p.dataLen);
        verified = want.length === data.length && Buffer.compare(Buffer.from(want), Buffer.from(data)) === 0;
        if (verified) this.counters.verifiedBytes += data.length; else this.counters.mismatches++;
        this.flow.add({ qid: q.qid, cid: p.cid, owner: 'host', stage: verified ? 'VERIFIED' : 'MISMATCH', detail: `${data.length} bytes compared` });
      }
    }
    if (!ok) this.counters.errors++;
    this.counters.completed++;
    this.done.push({ qid: q.qid, cid: p.cid, op: cmd.op, cqe: p.cqe, verified, ...(data ? { data } : {}), ...(p.invalidated !== undefined ? { invalidatedRkey: p.invalidated } : {}) });
  }

  /** what the namespace must hold at [slba, slba + nlb), as this host wrote it */
  expected(slba: bigint, nlb: number): Uint8Array { return this.oracle.slice(Number(slba) * this.lbaSize, (Number(slba) + nlb) * this.lbaSize); }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array { const o = new Uint8Array(a.length + b.length); o.set(a); o.set(b, a.length); return o; }
