// The target's offload backend (lab 4, MLNX_OFED nvmet_rdma_offload's setup order): the device's NVMe-oF offload SRQ
// with its staging buffer, a soft NVMe function of the device as the backend SSD with a peer-to-peer I/O queue pair
// handed to the device as an nvme_ctrl, and the namespace map fe NSID -> backend NSID. Every queue the target adds
// afterwards receives from the SRQ; once a queue's Connect is done the target enables offload on its QP
// (ibv_qp_set_nvmf after CONNECT) and the device serves its READ / WRITE / FLUSH capsules itself, while what it does not
// offload (Connect, admin, Fabrics) still reaches the software target as ordinary RECV completions.
import type { Command } from '../../app/protocol/index.ts';
import type { NvmfFabric } from './fabric.ts';
import { must } from './verbs.ts';

export interface OffloadBackend { srq: number; nvme: number; nvmeCtrl: number; bar0: number; stagingAddr: number; stagingLen: number }

/** A protocol command through the fabric's executor (the device's offload verbs, labs/nvmf/commands.ts). */
function run<T>(f: NvmfFabric, cmd: string, args: Record<string, unknown>): T {
  const r = f.x.exec({ cmd, args } as unknown as Command);
  if (!r.ok) throw new OffloadError(r.error.code, `${cmd}: ${r.error.message}`);
  return r.result as T;
}
export class OffloadError extends Error { constructor(readonly code: string, message: string) { super(message); } }

/** Set up the backend before any queue exists (the SRQ must be there when the queues' QPs are created). */
export function attachOffload(f: NvmfFabric, stagingLen = 1 << 20): OffloadBackend {
  if (f.pairs.size) throw new OffloadError('EBUSY', 'the offload SRQ must exist before the first queue (nvmf.offload before nvmf.queue)');
  const s = f.x.s, t = f.target, depth = f.cfg.queueDepth;
  const stg = must(s.alloc_buffer(stagingLen), 'staging buffer');
  const smr = must(s.reg_mr(t.pd, stg.addr, stagingLen, 1 /* IBV_ACCESS_LOCAL_WRITE */), 'staging reg_mr');
  const stagingAddr = Number(stg.addr);
  const slots = depth * (f.cfg.maxIoQueues + 1);
  const srq = run<{ srq: number }>(f, 'nvmf.srq_create', {
    pd: t.pd, maxWr: slots, stagingBuf: { mr: smr.handle, addr: stagingAddr, len: stagingLen }, cq: t.cq,
    ioccsz: (64 + f.cfg.inlineSize) / 16, maxIoSz: f.cfg.maxIo, nvmeQueueDepth: depth,
  }).srq;
  t.useSrq(srq, slots);
  const nv = run<{ nvme: number; bar0: number }>(f, 'nvme.create', {});
  run(f, 'nvme.add_namespace', { nvme: nv.nvme, nsid: f.cfg.nsid, lbaData: f.cfg.lbaSize, nlba: f.cfg.blocks });
  const q = run<{ sqMr: number; cqMr: number; sqAddr: number; cqAddr: number; sqdb: number; cqdb: number }>(f, 'nvme.p2p_queue', { nvme: nv.nvme, pd: t.pd, depth });
  const nvmeCtrl = run<{ nvmeCtrl: number }>(f, 'nvmf.ctrl_create', {
    srq, sqBuf: { mr: q.sqMr, addr: q.sqAddr, len: depth * 64 }, cqBuf: { mr: q.cqMr, addr: q.cqAddr, len: depth * 16 }, sqdb: q.sqdb, cqdb: q.cqdb,
  }).nvmeCtrl;
  run(f, 'nvmf.map_nsid', { nvmeCtrl, feNsid: f.cfg.nsid, lbaDataSize: f.cfg.lbaSize, nvmeNsid: f.cfg.nsid });
  return { srq, nvme: nv.nvme, nvmeCtrl, bar0: nv.bar0, stagingAddr, stagingLen };
}

/** ibv_qp_set_nvmf(IBV_QP_NVMF_ATTR_FLAG_ENABLE) on the target QP of a queue. */
export function enableOffload(f: NvmfFabric, qid: number): void {
  const p = f.pairs.get(qid);
  if (!p) throw new OffloadError('ENOENT', `no queue ${qid}`);
  run(f, 'nvmf.qp_enable', { qp: p.target.qp });
}
