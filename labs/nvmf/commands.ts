// Lab 4's device commands: the NVMe-oF target-offload verbs of the 2018 RFC (ibv_create_srq_ex with an NVMF type,
// ibv_srq_create_nvme_ctrl, ibv_map_nvmf_nsid, ibv_qp_set_nvmf; native/include/vl/nvmf.h) and the soft NVMe PCIe
// function that is their backend SSD (native/include/vl/nvme.h). Answered by the device executor
// (labs/nvmf/handlers.ts); the state-changing ones are journaled and are scenario steps. The offload verbs never
// reached upstream libibverbs (they shipped as mlx5dv_* in MLNX_OFED only), so the C export says so. Browser-safe.
import { z } from 'zod';
import { command, RHandle, RU64 } from '../../app/protocol/descriptor.ts';
import { Addr, Len } from '../../app/protocol/commands/shared.ts';
import { NvmeOncs, NvmfOffloadOps } from './enums.ts';

/** The offload-op encodings, ONCS bits and front-end block sizes: tables of enums.ts (checked against C++). */
export const NVMF_OFFLOAD_OPS = NvmfOffloadOps.values;
export const NVME_ONCS = NvmeOncs.values;

const U16 = z.number().int().min(0).max(0xffff);
const U32 = z.number().int().min(0).max(0xffffffff);
const Nsid = z.number().int().min(1).max(0xfffffffe);

export const NvmfCapsOut = z.object({
  offloadTypeRc: z.number(), offloadTypeDc: z.number(), maxBackendCtrlsTotal: z.number(), maxSrqBackendCtrls: z.number(),
  maxSrqNamespaces: z.number(), minStagingBufSize: RU64, maxStagingBufSize: RU64, maxIoSz: z.number(),
  maxNvmeQueueDepth: z.number(), minNvmeQueueDepth: z.number(), maxIoccsz: z.number(), minIoccsz: z.number(),
  maxIcdoff: z.number(), lbaDataSizes: z.number(), minCmdTimeoutMs: z.number(), maxCmdTimeoutMs: z.number(),
});
const NsCountersOut = z.object({
  readCmds: z.number(), readBlocks: z.number(), writeCmds: z.number(), writeBlocks: z.number(), writeInlineCmds: z.number(),
  flushCmds: z.number(), errorCmds: z.number(), backendErrorCmds: z.number(),
});
export const NvmfSnapshotOut = z.object({
  srq: RHandle, device: RHandle, offloadOps: z.number(), maxIoSz: z.number(), ioccsz: z.number(), icdoff: z.number(), maxNamespaces: z.number(),
  staging: z.object({ mr: RHandle, addr: RU64, len: RU64, pageSize: z.number(), pages: z.array(z.number()) }),
  ctrls: z.array(z.object({
    ctrl: RHandle, nvme: RHandle, alive: z.boolean(), sqAddr: RU64, cqAddr: RU64, sqdb: RU64, cqdb: RU64, depth: z.number(),
    sqTail: z.number(), cqHead: z.number(), phase: z.boolean(), inflight: z.number(), cmdTimeoutMs: z.number(),
  })),
  namespaces: z.array(z.object({ feNsid: z.number(), ctrl: RHandle, nsid: z.number(), lbaDataSize: z.number(), counters: NsCountersOut })),
  inflight: z.array(z.object({ id: z.number(), qp: RHandle, cid: z.number(), beCid: z.number(), opcode: z.number(), feNsid: z.number(), step: z.string() })),
  enabledQps: z.array(RHandle),
  counters: z.object({
    offloaded: z.number(), toSoftware: z.number(), unknownNamespace: z.number(), errors: z.number(), servedBeforeConnect: z.number(),
    stagingWaits: z.number(),
  }),
});
export const NvmeQueueOut = z.object({
  qid: z.number(), kind: z.enum(['sq', 'cq']), base: RU64, size: z.number(), head: z.number(), tail: z.number(), phase: z.boolean(),
  cqid: z.number(), fetched: z.number(), completed: z.number(),
});
export const NvmeSnapshotOut = z.object({
  nvme: RHandle, bar0: RU64, barSize: z.number(), cc: z.number(), csts: z.number(), dstrd: z.number(),
  queues: z.array(NvmeQueueOut),
  namespaces: z.array(z.object({ nsid: z.number(), lbaData: z.number(), lbaMeta: z.number(), nlba: RU64 })),
  counters: z.object({
    reads: z.number(), writes: z.number(), flushes: z.number(), writeZeroes: z.number(), dsm: z.number(), admin: z.number(),
    errors: z.number(), lost: z.number(),
  }),
});
export const NvmeP2pQueueOut = z.object({
  nvme: RHandle, qid: z.number(), depth: z.number(), sqBuffer: RHandle, cqBuffer: RHandle, sqMr: RHandle, cqMr: RHandle,
  sqAddr: RU64, cqAddr: RU64, sqdb: RU64, cqdb: RU64,
});

const ro = { readOnly: true } as const;
const MrSg = (h: (k: 'mr') => z.ZodType<number>) => z.object({ mr: h('mr'), addr: Addr, len: Len }).strict();

export const nvmfCommands = {
  'nvmf.caps': command({ ...ro, args: (h) => ({ device: h('device') }), result: NvmfCapsOut }),
  'nvmf.srq_create': command({
    args: (h) => ({
      pd: h('pd'), maxWr: z.number().int().min(1).max(1 << 16), maxSge: z.number().int().min(1).max(64).default(1),
      offloadOps: z.enum(Object.keys(NVMF_OFFLOAD_OPS) as [keyof typeof NVMF_OFFLOAD_OPS]).default('READ_WRITE_FLUSH'),
      maxNamespaces: z.number().int().min(1).max(1 << 16).default(1),
      nvmeLogPageSz: z.number().int().min(0).max(16).default(0),
      ioccsz: z.number().int().min(0).max(1 << 16).default(260), icdoff: z.number().int().min(0).max(1 << 16).default(0),
      maxIoSz: U32.default(128 * 1024), nvmeQueueDepth: z.number().int().min(1).max(1 << 16).default(64),
      stagingBuf: MrSg(h), cq: h('cq'),
    }),
    result: z.object({ srq: RHandle }), creates: 'srq',
  }),
  'nvmf.ctrl_create': command({
    args: (h) => ({
      srq: h('srq'), sqBuf: MrSg(h), cqBuf: MrSg(h), sqdb: Addr, cqdb: Addr, sqdbIni: U16.default(0), cqdbIni: U16.default(0),
      cmdTimeoutMs: U32.default(1000),
    }),
    result: z.object({ nvmeCtrl: RHandle, srq: RHandle }), creates: 'nvmeCtrl',
  }),
  'nvmf.ctrl_remove': command({ args: (h) => ({ nvmeCtrl: h('nvmeCtrl') }), result: z.object({ nvmeCtrl: RHandle }) }),
  'nvmf.map_nsid': command({
    args: (h) => ({ nvmeCtrl: h('nvmeCtrl'), feNsid: U32, lbaDataSize: U32, nvmeNsid: U32 }),
    result: z.object({ nvmeCtrl: RHandle, feNsid: z.number() }),
  }),
  'nvmf.unmap_nsid': command({ args: (h) => ({ nvmeCtrl: h('nvmeCtrl'), feNsid: U32 }), result: z.object({ nvmeCtrl: RHandle, feNsid: z.number() }) }),
  'nvmf.qp_enable': command({ args: (h) => ({ qp: h('qp'), flags: U32.default(1) }), result: z.object({ qp: RHandle }) }),
  'nvmf.snapshot': command({ ...ro, args: (h) => ({ srq: h('srq') }), result: NvmfSnapshotOut }),
  'nvme.create': command({
    args: () => ({
      dstrd: z.number().int().min(0).max(15).default(0), mqes: z.number().int().min(1).max(0xffff).default(1023),
      maxIoQueues: z.number().int().min(1).max(64).default(16),
      oncs: z.array(z.enum(Object.keys(NVME_ONCS) as [keyof typeof NVME_ONCS])).max(4).default(['DSM', 'WRITE_ZEROES']),
      mdts: z.number().int().min(0).max(10).default(5),
    }),
    result: z.object({ nvme: RHandle, bar0: RU64 }), creates: 'nvme',
  }),
  'nvme.add_namespace': command({
    args: (h) => ({ nvme: h('nvme'), nsid: Nsid, lbaData: z.union([z.literal(512), z.literal(4096)]).default(512),
      lbaMeta: z.union([z.literal(0), z.literal(8)]).default(0), nlba: z.number().int().min(1).max(1 << 24) }),
    result: z.object({ nvme: RHandle, nsid: z.number() }),
  }),
  'nvme.p2p_queue': command({
    args: (h) => ({ nvme: h('nvme'), pd: h('pd'), depth: z.number().int().min(2).max(0x10000).default(64) }),
    result: NvmeP2pQueueOut,
  }),
  'nvme.set_ready': command({ args: (h) => ({ nvme: h('nvme'), nsid: Nsid, ready: z.boolean() }), result: z.object({ nvme: RHandle, nsid: z.number() }) }),
  'nvme.inject_timeout': command({ args: (h) => ({ nvme: h('nvme'), n: z.number().int().min(1).max(1 << 16).default(1) }), result: z.object({ nvme: RHandle }) }),
  'nvme.pci_error': command({ args: (h) => ({ nvme: h('nvme') }), result: z.object({ nvme: RHandle }) }),
  'nvme.peek': command({
    ...ro, args: (h) => ({ nvme: h('nvme'), nsid: Nsid, slba: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), nlb: z.number().int().min(1).max(256) }),
    result: z.object({ nvme: RHandle, nsid: z.number(), hex: z.string() }),
  }),
  'nvme.snapshot': command({ ...ro, args: (h) => ({ nvme: h('nvme') }), result: NvmeSnapshotOut }),
};
