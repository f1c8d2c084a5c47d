// The target's offload backend (lab 4, MLNX_OFED nvmet_rdma_offload's setup order): the device's NVMe-oF offload SRQ
// with its staging buffer, a soft NVMe function of the device as the backend SSD with a peer-to-peer I/O queue pair
// handed to the device as an nvme_ctrl, and the namespace map fe NSID -> backend NSID. Every queue the target adds
// afterwards receives from the SRQ; once a queue's Connect is done the target enables offload on its QP
// (ibv_qp_set_nvmf after CONNECT) and the device serves its READ / WRITE / FLUSH capsules itself, while what it does not
// offload (Connect, admin, Fabrics) still reaches the software target as ordinary RECV completions.
import { NvmfPass, NvmfStep } from './enums.ts';
import { Command, type DeviceEvent } from '../../app/protocol/index.ts';
import type { FlowRow } from './flow.ts';
import type { NvmfFabric } from './fabric.ts';
import { must } from './verbs.ts';

export interface OffloadBackend { srq: number; nvme: number; nvmeCtrl: number; bar0: number; stagingAddr: number; stagingLen: number; enabledQids: number[] }

/** A protocol command through the fabric's executor (the device's offload verbs, labs/nvmf/commands.ts). */
function run<T>(f: NvmfFabric, cmd: string, args: Record<string, unknown>): T {
  const r = f.x.exec(Command.parse({ cmd, args }));   // validated as the protocol validates it
  if (!r.ok) throw new OffloadError(r.error.code, `${cmd}: ${r.error.message}`);
  return r.result as T;
}
export class OffloadError extends Error { constructor(readonly code: string, message: string) { super(message); } }

/** Set up the backend. Queues added from now on receive from the SRQ (their QP is created on it); queues that exist
 *  already keep their own receive queue and stay served by software. Called again once the backend is down (a fault
 *  tore the nvme_ctrl down), it replaces the SSD: unmap, remove the dead nvme_ctrl, a new soft NVMe function with its
 *  P2P queue pair as a new nvme_ctrl on the same SRQ, map again (the new SSD's medium starts empty). */
export function attachOffload(f: NvmfFabric, stagingLen = 1 << 20): OffloadBackend {
  if (f.offload) return replaceBackend(f, f.offload);
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
  f.offload = { srq, nvme: nv.nvme, nvmeCtrl, bar0: nv.bar0, stagingAddr, stagingLen, enabledQids: [] };
  return f.offload;
}

function ctrlAlive(f: NvmfFabric, b: OffloadBackend): boolean {
  return run<{ ctrls: { ctrl: number; alive: boolean }[] }>(f, 'nvmf.snapshot', { srq: b.srq }).ctrls.find((c) => c.ctrl === b.nvmeCtrl)?.alive ?? false;
}

function replaceBackend(f: NvmfFabric, b: OffloadBackend): OffloadBackend {
  if (ctrlAlive(f, b)) throw new OffloadError('EEXIST', 'the target has its offload backend already (and it is up)');
  const depth = f.cfg.queueDepth;
  run(f, 'nvmf.unmap_nsid', { nvmeCtrl: b.nvmeCtrl, feNsid: f.cfg.nsid });
  run(f, 'nvmf.ctrl_remove', { nvmeCtrl: b.nvmeCtrl });
  const nv = run<{ nvme: number; bar0: number }>(f, 'nvme.create', {});
  run(f, 'nvme.add_namespace', { nvme: nv.nvme, nsid: f.cfg.nsid, lbaData: f.cfg.lbaSize, nlba: f.cfg.blocks });
  const q = run<{ sqMr: number; cqMr: number; sqAddr: number; cqAddr: number; sqdb: number; cqdb: number }>(f, 'nvme.p2p_queue', { nvme: nv.nvme, pd: f.target.pd, depth });
  const nvmeCtrl = run<{ nvmeCtrl: number }>(f, 'nvmf.ctrl_create', {
    srq: b.srq, sqBuf: { mr: q.sqMr, addr: q.sqAddr, len: depth * 64 }, cqBuf: { mr: q.cqMr, addr: q.cqAddr, len: depth * 16 }, sqdb: q.sqdb, cqdb: q.cqdb,
  }).nvmeCtrl;
  run(f, 'nvmf.map_nsid', { nvmeCtrl, feNsid: f.cfg.nsid, lbaDataSize: f.cfg.lbaSize, nvmeNsid: f.cfg.nsid });
  f.offload = { ...b, nvme: nv.nvme, nvmeCtrl, bar0: nv.bar0 };
  return f.offload;
}

/** ibv_qp_set_nvmf(IBV_QP_NVMF_ATTR_FLAG_ENABLE) on the target QP of a queue. */
export function enableOffload(f: NvmfFabric, qid: number): void {
  const p = f.pairs.get(qid);
  if (!p) throw new OffloadError('ENOENT', `no queue ${qid}`);
  run(f, 'nvmf.qp_enable', { qp: p.target.qp });
  if (f.offload && !f.offload.enabledQids.includes(qid)) f.offload.enabledQids.push(qid);
}

/** A fault of the backend SSD (nvme.inject_timeout: the next command is fetched and never completed; nvme.pci_error),
 *  then the engine run until it settles (the watchdog fires at the nvme_ctrl's deadline in virtual time). Returns
 *  whether the nvme_ctrl is still alive. */
export function offloadFault(f: NvmfFabric, fault: 'timeout' | 'pci-error'): boolean {
  const b = f.offload;
  if (!b) throw new OffloadError('ENOENT', 'no offload backend');
  if (fault === 'timeout') run(f, 'nvme.inject_timeout', { nvme: b.nvme, n: 1 });
  else run(f, 'nvme.pci_error', { nvme: b.nvme });
  f.afterStep?.();   // the PCI error's events come from the command itself, not from an engine step
  f.pump();
  return ctrlAlive(f, b);
}

const stepName = (a: number): string => NvmfStep.names.find((n) => NvmfStep.values[n] === a) ?? `step ${a}`;
const passName = (c: number): string => NvmfPass.names.find((n) => NvmfPass.values[n] === c) ?? `reason ${c}`;
const hex = (v: number) => `0x${(v >>> 0).toString(16)}`;

/** A device flow row from one Offload event (a/b/c/d as native/EVENTS.md and docs/nvmf-offload.md say): stage = the
 *  engine's step, verb = the work request the device posts itself, detail from c / d. */
export function deviceRow(e: DeviceEvent, qid: number): Omit<FlowRow, 't'> {
  const step = stepName(e.a), c = e.c, d = e.d;
  const row = (verb: string | undefined, detail: string) => ({ qid, cid: e.b, owner: 'device' as const, stage: step, ...(verb ? { verb } : {}), detail: `${detail} (modelled)` });
  switch (step) {
    case 'RECV': return row('IBV_WC_RECV', `opcode ${hex(c)}, fe NSID ${d}`);
    case 'PARSE': return row(undefined, `${c} bytes, SGL ${hex(d)}`);
    case 'TO_SOFTWARE': return row(undefined, `to software: ${passName(c)}`);
    case 'STAGING_ALLOC': return row(undefined, `staging pages ${c}..${c + d - 1}`);
    case 'STAGING_WAIT': return row(undefined, `waits for ${c} staging pages`);
    case 'RDMA_READ': return row('IBV_WR_RDMA_READ', `${c} bytes host -> staging, rkey ${hex(d)}`);
    case 'RDMA_READ_DONE': return row('IBV_WC_RDMA_READ', `${c} bytes in staging`);
    case 'ICD_COPY': return row(undefined, `${c} bytes in-capsule data -> staging`);
    case 'SQE_WRITE': return row(undefined, `backend SQ slot ${c}, backend CID ${d}`);
    case 'SQ_DOORBELL': return row(undefined, `SQ tail ${c} at ${hex(d)}`);
    case 'CQE': return row(undefined, `backend CQ slot ${c}, status ${hex(d >> 1)}, phase ${d & 1}`);
    case 'CQ_DOORBELL': return row(undefined, `CQ head ${c} at ${hex(d)}`);
    case 'RDMA_WRITE': return row('IBV_WR_RDMA_WRITE', `${c} bytes staging -> host, rkey ${hex(d)}`);
    case 'SEND_RESPONSE': return row(d ? 'IBV_WR_SEND_WITH_INV' : 'IBV_WR_SEND', `status ${hex(c)}`);
    case 'DONE': return row(undefined, `status ${hex(c)}`);
    case 'BEFORE_CONNECT': return row(undefined, 'served before the queue\'s Connect (violation)');
    case 'RDMA_ERROR': return row(undefined, `work request failed: wc status ${c}, QP to ERR`);
    case 'BACKEND_TIMEOUT': return row(undefined, 'backend command timed out: nvme_ctrl down');
    case 'BACKEND_PCI_ERR': return row(undefined, 'backend PCI error: nvme_ctrl down');
    case 'UNSUPPORTED_OP': return row(undefined, `opcode ${hex(c)} not in offload_ops ${d}`);
    default: return row(undefined, `c ${c}, d ${d}`);
  }
}

/** From now on every Offload event of the fabric's target device becomes a device row of its command's flow, as the
 *  engine steps (the events stay pending for the console). Events on the SRQ (backend faults) have qid -1. */
export function watchDevice(f: NvmfFabric): void {
  let last = f.x.pendingEvents().at(-1)?.seq ?? -1;
  f.afterStep = () => {
    const evs = f.x.pendingEvents();
    let i = evs.length;
    while (i > 0 && evs[i - 1]!.seq > last) i--;
    for (; i < evs.length; i++) {
      const e = evs[i]!;
      last = e.seq;
      if (e.kind !== 'Offload' || e.device !== f.targetDev) continue;
      const pair = [...f.pairs.values()].find((p) => p.target.qp === e.obj);
      const row = deviceRow(e, pair ? pair.qid : -1);
      f.flow.addAt(e.t, row);
      const key = `${row.qid}:${row.stage}`;
      f.deviceCounts[key] = (f.deviceCounts[key] ?? 0) + 1;
    }
  };
}
