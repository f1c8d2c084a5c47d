// The device executor's handlers of lab 4's offload commands (labs/nvmf/commands.ts), over the addon's
// session.nvmf_* / session.nvme_* methods (native/addon/nvmf.cpp).
import { ok, res, st } from '../../app/host/commands/outcome.ts';
import type { LabContext, LabHandlers } from '../../app/host/lab-context.ts';
import { nvmfAgentHandlers } from './agent-handlers.ts';
import type { NResult, NStatus } from '../../app/host/native.ts';
import { NVME_ONCS, NVMF_OFFLOAD_OPS, type nvmfCommands } from './commands.ts';

type U64 = number | string;
interface MrSg { mr: number; addr: U64; len: U64 }
/** The addon's NVMe-oF offload methods (native/addon/nvmf.cpp); results as the command schemas name them. Merged
 *  into the session's interface (app/host/native-interface.test.ts checks it against the built addon). */
export interface NvmfNative {
  nvmf_query_caps(dev: number): NResult<never>;
  nvmf_create_srq(pd: number, maxWr: number, maxSge: number, attr: Record<string, unknown>): NResult<number>;
  nvmf_create_ctrl(srq: number, attr: { sqBuf: MrSg; cqBuf: MrSg; sqdb: U64; cqdb: U64; sqdbIni: number; cqdbIni: number; cmdTimeoutMs: number }): NResult<number>;
  nvmf_remove_ctrl(ctrl: number): NStatus;
  nvmf_map_nsid(ctrl: number, feNsid: number, lbaDataSize: number, nvmeNsid: number): NStatus;
  nvmf_unmap_nsid(ctrl: number, feNsid: number): NStatus;
  nvmf_qp_set(qp: number, flags: number): NStatus;
  nvmf_snapshot(srq: number): NResult<never>;
  nvme_create(cfg: { dstrd: number; mqes: number; maxIoQueues: number; oncs: number; mdts: number }): NResult<number>;
  nvme_add_namespace(nvme: number, ns: { nsid: number; lbaData: number; lbaMeta: number; nlba: number }): NStatus;
  nvme_p2p_queue(nvme: number, pd: number, depth: number): NResult<Record<string, U64>>;
  nvme_peek(nvme: number, nsid: number, slba: number, nlb: number): NResult<Uint8Array>;
  nvme_inject_timeout(nvme: number, n: number): NStatus;
  nvme_pci_error(nvme: number): NStatus;
  nvme_set_namespace_ready(nvme: number, nsid: number, ready: boolean): NStatus;
  nvme_snapshot(nvme: number): NResult<never>;
}
// optional: a real device's session (app/host/realdev.ts) has none of them
declare module '../../app/host/native.ts' {
  interface NativeSession extends Partial<NvmfNative> {}
}
function nv(x: LabContext): NvmfNative {
  if (typeof x.s.nvmf_query_caps !== 'function') throw new Error('the NVMe-oF offload verbs exist on the software device only (this session has none)');
  return x.s as NvmfNative;
}

const nvmfHandlers: LabHandlers<typeof nvmfCommands> = {
  'nvmf.caps': (x, a) => res(nv(x).nvmf_query_caps(a.device), (v) => v),
  'nvmf.srq_create': (x, a) => res(nv(x).nvmf_create_srq(a.pd, a.maxWr, a.maxSge, {
    offloadOps: NVMF_OFFLOAD_OPS[a.offloadOps], maxNamespaces: a.maxNamespaces, nvmeLogPageSz: a.nvmeLogPageSz, ioccsz: a.ioccsz,
    icdoff: a.icdoff, maxIoSz: a.maxIoSz, nvmeQueueDepth: a.nvmeQueueDepth, stagingBuf: a.stagingBuf, cq: a.cq,
  }), (srq) => ({ srq })),
  'nvmf.ctrl_create': (x, a) => res(nv(x).nvmf_create_ctrl(a.srq, {
    sqBuf: a.sqBuf, cqBuf: a.cqBuf, sqdb: a.sqdb, cqdb: a.cqdb, sqdbIni: a.sqdbIni, cqdbIni: a.cqdbIni, cmdTimeoutMs: a.cmdTimeoutMs,
  }), (nvmeCtrl) => ({ nvmeCtrl, srq: a.srq })),
  'nvmf.ctrl_remove': (x, a) => st(nv(x).nvmf_remove_ctrl(a.nvmeCtrl), { nvmeCtrl: a.nvmeCtrl }),
  'nvmf.map_nsid': (x, a) => st(nv(x).nvmf_map_nsid(a.nvmeCtrl, a.feNsid, a.lbaDataSize, a.nvmeNsid), { nvmeCtrl: a.nvmeCtrl, feNsid: a.feNsid }),
  'nvmf.unmap_nsid': (x, a) => st(nv(x).nvmf_unmap_nsid(a.nvmeCtrl, a.feNsid), { nvmeCtrl: a.nvmeCtrl, feNsid: a.feNsid }),
  'nvmf.qp_enable': (x, a) => st(nv(x).nvmf_qp_set(a.qp, a.flags), { qp: a.qp }),
  'nvmf.snapshot': (x, a) => res(nv(x).nvmf_snapshot(a.srq), (v) => v),
  'nvme.create': (x, a) => {
    const r = nv(x).nvme_create({ dstrd: a.dstrd, mqes: a.mqes, maxIoQueues: a.maxIoQueues, mdts: a.mdts, oncs: a.oncs.reduce((m, n) => m | NVME_ONCS[n], 0) });
    if (r.err) return res(r, () => ({ nvme: 0, bar0: 0 }));
    const snap = nv(x).nvme_snapshot(r.value as number) as NResult<{ bar0: U64 }>;
    return ok({ nvme: r.value as number, bar0: snap.value?.bar0 ?? 0 });
  },
  'nvme.add_namespace': (x, a) => st(nv(x).nvme_add_namespace(a.nvme, { nsid: a.nsid, lbaData: a.lbaData, lbaMeta: a.lbaMeta, nlba: a.nlba }), { nvme: a.nvme, nsid: a.nsid }),
  'nvme.p2p_queue': (x, a) => res(nv(x).nvme_p2p_queue(a.nvme, a.pd, a.depth), (q) => ({
    nvme: a.nvme, qid: q.qid as number, depth: q.depth as number, sqBuffer: q.sqBuffer as number, cqBuffer: q.cqBuffer as number,
    sqMr: q.sqMr as number, cqMr: q.cqMr as number, sqAddr: q.sqAddr!, cqAddr: q.cqAddr!, sqdb: q.sqdb!, cqdb: q.cqdb!,
  })),
  'nvme.set_ready': (x, a) => st(nv(x).nvme_set_namespace_ready(a.nvme, a.nsid, a.ready), { nvme: a.nvme, nsid: a.nsid }),
  'nvme.inject_timeout': (x, a) => st(nv(x).nvme_inject_timeout(a.nvme, a.n), { nvme: a.nvme }),
  'nvme.pci_error': (x, a) => st(nv(x).nvme_pci_error(a.nvme), { nvme: a.nvme }),
  'nvme.peek': (x, a) => {
    const r = nv(x).nvme_peek(a.nvme, a.nsid, a.slba, a.nlb);
    if (r.err || !r.value) return res(r, () => ({ nvme: a.nvme, nsid: a.nsid, hex: '' }));
    return ok({ nvme: a.nvme, nsid: a.nsid, hex: Buffer.from(r.value).toString('hex') });
  },
  'nvme.snapshot': (x, a) => res(nv(x).nvme_snapshot(a.nvme), (v) => v),
};

/** The manifest's `handlers` (index.ts): the offload verbs here, the agents' commands in agent-handlers.ts. */
export const handlers = { ...nvmfHandlers, ...nvmfAgentHandlers };
