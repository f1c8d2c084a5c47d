// The commands of lab 4's software agents (the NVMe-oF target and the host driver, labs/nvmf/agent.ts) as protocol
// descriptors. They are device commands answered by the executor (labs/nvmf/agent-handlers.ts) and scenario steps:
// each runs the agents and the engine to the end of its exchange inside the command, so the journal replays them
// deterministically. (The offload verbs of the device are the `nvme` branch's labs/nvmf/commands.ts.) Browser-safe.
import { z } from 'zod';
import { command } from '../../app/protocol/descriptor.ts';

const U16 = z.number().int().min(0).max(0xffff);
const Nqn = z.string().min(1).max(223);

export const FlowRowOut = z.object({
  t: z.number(), qid: z.number(), cid: z.number(), owner: z.enum(['host', 'software', 'device']), stage: z.string(),
  verb: z.string().optional(), detail: z.string().optional(),
});
export const CqeOut = z.object({
  cid: z.number(), sqhd: z.number(), sqid: z.number(), dw0: z.number(), dw1: z.number(), status: z.number(),
  sct: z.number(), sc: z.number(), dnr: z.boolean(), statusName: z.string(),
});
/** One command's end as the host saw it. */
export const CommandOut = z.object({
  qid: z.number(), cid: z.number(), op: z.string(),
  /** false: no response capsule came (the queue's QP went to the error state) */
  responded: z.boolean(),
  cqe: CqeOut.optional(),
  /** READ: every byte compared with what the host wrote (null: no data came back to check) */
  verified: z.boolean().nullable(),
  invalidatedRkey: z.number().optional(),
  flow: z.array(FlowRowOut),
});
const CountersOut = z.record(z.string(), z.number());
export const StateOut = z.object({
  subnqn: z.string(), hostnqn: z.string(),
  controller: z.object({ cntlid: z.number(), cc: z.number(), csts: z.number(), kato: z.number(), ioQueues: z.array(z.number()) }).nullable(),
  cap: z.string(),
  namespace: z.object({ nsid: z.number(), lbaSize: z.number(), blocks: z.number(), backend: z.literal('ts-memory') }),
  queues: z.array(z.object({
    qid: z.number(), connected: z.boolean(), hostQpn: z.number(), targetQpn: z.number(), depth: z.number(), sqsize: z.number(), sqhd: z.number(),
    inFlight: z.number(),
    cm: z.object({ hrqsize: z.number(), hsqsize: z.number(), crqsize: z.number(), state: z.string() }),
  })),
  counters: z.object({ target: CountersOut, host: CountersOut, namespace: CountersOut }),
  /** the device's offload backend (nvmf.offload): handles for nvmf.snapshot / nvme.snapshot, the queues enabled */
  offload: z.object({ srq: z.number(), nvme: z.number(), nvmeCtrl: z.number(), bar0: z.number(), enabledQids: z.array(z.number()) }).nullable(),
  engineSteps: z.number(),
  flow: z.array(FlowRowOut),
});

const Fault = z.object({
  badKey: z.boolean().optional(), sglLength: z.number().int().min(0).max(0xffffff).optional(), inlineOffset: z.number().int().min(0).max(1 << 20).optional(),
}).strict();

export const nvmfAgentCommands = {
  /** the subsystem on the target device (one namespace, the temporary in-memory backend) and the host driver */
  'nvmf.setup': command({
    args: (h) => ({
      targetDevice: h('device'), hostDevice: h('device'),
      lbaSize: z.union([z.literal(512), z.literal(4096)]).default(512), blocks: z.number().int().min(8).max(131072).default(8192),
      queueDepth: z.number().int().min(2).max(128).default(32), inlineSize: z.number().int().min(0).max(16384).multipleOf(16).default(4096),
      maxIo: z.number().int().min(4096).max(1 << 20).default(128 * 1024), maxIoQueues: z.number().int().min(1).max(16).default(4),
      subnqn: Nqn.optional(), hostnqn: Nqn.optional(), allowHosts: z.array(Nqn).max(16).default([]),
    }),
    result: StateOut,
  }),
  /** a queue's QP pair through the RDMA CM exchange (REQ with the NVMe/RDMA private data, REP with CRQSIZE, RTU) */
  'nvmf.queue': command({
    args: () => ({ qid: U16, hrqsize: z.number().int().min(1).max(128).optional(), hsqsize: U16.optional() }),
    result: z.object({
      qid: z.number(), hostQpn: z.number(), targetQpn: z.number(),
      cm: z.object({ accepted: z.boolean(), hrqsize: z.number(), hsqsize: z.number(), crqsize: z.number(), rejectSts: z.number().optional(), messages: z.array(z.string()) }),
    }),
  }),
  /** the Fabrics Connect capsule on a queue (admin: CNTLID 0xFFFF; I/O: the CNTLID the admin Connect returned) */
  'nvmf.connect': command({
    args: () => ({ qid: U16, sqsize: U16.optional(), kato: z.number().int().min(0).max(0xffffffff).default(5000), cntlid: U16.optional(), subnqn: Nqn.optional(), hostnqn: Nqn.optional() }),
    result: CommandOut,
  }),
  /** an admin command on queue 0 (served by the target's software: never offloaded) */
  'nvmf.admin': command({
    args: () => ({
      op: z.enum(['property-get', 'property-set', 'identify', 'keep-alive', 'set-features']),
      offset: z.number().int().min(0).max(0xfff).optional(), size: z.union([z.literal(4), z.literal(8)]).default(4),
      value: z.number().int().min(0).max(0xffffffff).optional(), cns: z.number().int().min(0).max(255).optional(),
      nsid: z.number().int().min(0).max(0xffffffff).default(0), fid: z.number().int().min(0).max(255).optional(), cdw11: z.number().int().min(0).max(0xffffffff).default(0),
    }),
    result: CommandOut.extend({ value: z.string().optional() }),
  }),
  /** I/O on an I/O queue: `count` commands, at most `depth` in flight, data verified byte for byte */
  'nvmf.io': command({
    args: () => ({
      qid: z.number().int().min(1).max(0xffff), op: z.enum(['read', 'write', 'flush']), nsid: z.number().int().min(0).max(0xffffffff).default(1),
      slba: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0), nlb: z.number().int().min(1).max(0x10000).default(8),
      sgl: z.enum(['keyed', 'keyed-inv', 'inline']).default('keyed'), count: z.number().int().min(1).max(100_000).default(1),
      depth: z.number().int().min(1).max(128).default(1), stride: z.number().int().min(0).max(1 << 20).optional(),
      fault: Fault.optional(),
    }),
    result: z.object({
      submitted: z.number(), completed: z.number(), succeeded: z.number(), verified: z.number(), mismatches: z.number(), verifiedBytes: z.number(),
      noResponse: z.number(), statuses: z.record(z.string(), z.number()), engineSteps: z.number(),
      /** commands the device's offload engine completed (a device DONE row), and the completions the target's
       *  software handled during the command (0 when all were offloaded) */
      offloaded: z.number(), softwareSteps: z.number(),
      /** the device's offload steps during the command, by step name (the typed Offload events) */
      deviceStages: z.record(z.string(), z.number()),
      last: CommandOut.nullable(),
    }),
  }),
  /** the target's offload backend (MLNX_OFED nvmet_rdma_offload's setup): the NVMe-oF offload SRQ with its staging
   *  buffer, a soft NVMe function as the backend SSD with a P2P queue pair as nvme_ctrl, namespace map NSID -> NSID;
   *  queues added afterwards receive from the SRQ. Creates the nvme_ctrl (name it for nvmf.map_nsid / unmap_nsid).
   *  Again once a fault took the nvme_ctrl down: a new SSD and nvme_ctrl on the same SRQ (EEXIST while it is up). */
  'nvmf.offload': command({
    args: () => ({ stagingLen: z.number().int().min(16384).max(64 << 20).default(1 << 20) }),
    result: z.object({
      nvmeCtrl: z.number(), srq: z.number(), nvme: z.number(), bar0: z.number(), staging: z.object({ addr: z.number(), len: z.number() }),
      map: z.object({ feNsid: z.number(), nvmeNsid: z.number(), lbaDataSize: z.number() }),
    }),
    creates: 'nvmeCtrl',
  }),
  /** ibv_qp_set_nvmf(ENABLE) on a queue's target QP (after its Connect; before it is the violation the device flags) */
  'nvmf.offload_enable': command({
    args: () => ({ qid: z.number().int().min(1).max(0xffff) }),
    result: z.object({ qid: z.number(), qp: z.number(), connected: z.boolean() }),
  }),
  /** a fault of the backend SSD: a command it fetches and never completes (the device's watchdog fires after the
   *  nvme_ctrl's timeout), or a PCI error (CSTS.CFS) */
  'nvmf.offload_fault': command({
    args: () => ({ fault: z.enum(['timeout', 'pci-error']) }),
    result: z.object({ fault: z.string(), ctrlAlive: z.boolean(), deviceStages: z.record(z.string(), z.number()) }),
  }),
  /** the agents' state: controller registers, queues, counters, the last flow rows */
  'nvmf.state': command({ readOnly: true, args: () => ({ rows: z.number().int().min(0).max(4096).default(512) }), result: StateOut }),
};
