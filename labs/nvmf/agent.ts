// Lab 4's agents per device session: the nvmf.* commands (agent-commands.ts) run here, against the fabric of the
// executor's current native session (a session.reset starts a new one, so the agents start over with it).
import type { ResultOf } from '../../app/protocol/index.ts';
import type { LabContext } from '../../app/host/lab-context.ts';
import { DEFAULT_FABRIC, FabricError, NvmfFabric } from './fabric.ts';
import { attachOffload, enableOffload, offloadFault, OffloadError, watchDevice } from './offload.ts';
import type { Done, HostCommand } from './initiator.ts';
import { CNTLID_DYNAMIC, statusName } from './spec.ts';

/** the agents' state in the executor's current session (LabContext.labState: no module-level state) */
const slot = (x: LabContext) => x.labState('nvmf', () => ({ fabric: undefined as NvmfFabric | undefined }));

export type Out<T> = { ok: true; result: T } | { ok: false; error: { code: string; message: string; field?: string } };
const fail = (code: string, message: string, field?: string): Out<never> => ({ ok: false, error: { code, message, ...(field ? { field } : {}) } });

/** the session's fabric, for the bench and headless runs */
export function fabricOf(x: LabContext): NvmfFabric | undefined { return slot(x).fabric; }

function guard<T>(fn: () => Out<T>): Out<T> {
  try { return fn(); } catch (e) {
    if (e instanceof FabricError || e instanceof OffloadError) return fail(e.code, `nvmf: ${e.message}`);
    return fail('EIO', `nvmf: ${(e as Error).message}`);
  }
}

function need(x: LabContext): NvmfFabric {
  const f = slot(x).fabric;
  if (!f) throw new FabricError('ENOENT', 'no NVMe-oF setup in this session (run nvmf.setup first)');
  return f;
}

type CmdOut = ResultOf<'nvmf.connect'>;
function commandOut(f: NvmfFabric, qid: number, cid: number, op: string, done: Done | null, flowFrom: number): CmdOut {
  return {
    qid, cid, op, responded: !!done,
    ...(done ? { cqe: { cid: done.cqe.cid, sqhd: done.cqe.sqhd, sqid: done.cqe.sqid, dw0: done.cqe.dw0, dw1: done.cqe.dw1, status: done.cqe.status, sct: done.cqe.sct, sc: done.cqe.sc, dnr: done.cqe.dnr, statusName: statusName(done.cqe.sct, done.cqe.sc) } } : {}),
    verified: done?.verified ?? null,
    ...(done?.invalidatedRkey !== undefined ? { invalidatedRkey: done.invalidatedRkey } : {}),
    flow: f.flow.since(flowFrom).filter((r) => r.qid === qid && r.cid === cid),
  };
}

export function state(f: NvmfFabric, rows = 512): ResultOf<'nvmf.state'> {
  const c = f.target.ctrl;
  return {
    subnqn: f.cfg.subnqn, hostnqn: f.cfg.hostnqn,
    controller: c ? { cntlid: c.cntlid, cc: c.cc, csts: c.csts, kato: c.kato, ioQueues: [...c.ioQueues] } : null,
    cap: `0x${f.target.cap.toString(16).padStart(16, '0')}`,
    namespace: f.ns.info,
    queues: [...f.pairs.values()].map((p) => ({
      qid: p.qid, connected: p.target.qid !== null, hostQpn: p.host.qpNum, targetQpn: p.target.qpNum, depth: p.host.depth,
      sqsize: p.target.sqsize, sqhd: p.target.sqhd, inFlight: p.host.depth - f.host.free(p.host),
      cm: { hrqsize: p.cm.active.nvme.hrqsize, hsqsize: p.cm.active.nvme.hsqsize, crqsize: p.cm.passive.crqsize, state: p.cm.passive.state },
    })),
    counters: { target: { ...f.target.counters }, host: { ...f.host.counters }, namespace: { ...f.ns.counters } },
    offload: f.offload ? { srq: f.offload.srq, nvme: f.offload.nvme, nvmeCtrl: f.offload.nvmeCtrl, bar0: f.offload.bar0, enabledQids: [...f.offload.enabledQids] } : null,
    engineSteps: f.engineSteps,
    flow: rows ? f.flow.rows.slice(-rows) : [],
  };
}

/** the device's steps between two readings of the fabric's deviceCounts, by step name (all queues) */
function stagesSince(now: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(now)) {
    const d = n - (before[k] ?? 0), stage = k.slice(k.indexOf(':') + 1);
    if (d) out[stage] = (out[stage] ?? 0) + d;
  }
  return out;
}

export const nvmfAgent = {
  setup(x: LabContext, a: import('../../app/protocol/index.ts').CommandArgs<'nvmf.setup'>): Out<ResultOf<'nvmf.setup'>> {
    return guard(() => {
      if (slot(x).fabric) return fail('EEXIST', 'nvmf: this session already has an NVMe-oF setup (session.reset for a new one)');
      if (a.targetDevice === a.hostDevice) return fail('EINVAL', 'nvmf.setup: the target and the host are two devices', 'args.hostDevice');
      for (const [k, d] of [['targetDevice', a.targetDevice], ['hostDevice', a.hostDevice]] as const) if (!x.deviceInfo(d)) return fail('ENOENT', `nvmf.setup: no device ${d}`, `args.${k}`);
      if (a.maxIo % a.lbaSize) return fail('EINVAL', 'nvmf.setup: maxIo is a multiple of lbaSize', 'args.maxIo');
      const f = new NvmfFabric(x, a.targetDevice, a.hostDevice, {
        ...DEFAULT_FABRIC, lbaSize: a.lbaSize, blocks: a.blocks, queueDepth: a.queueDepth, inlineSize: a.inlineSize, maxIo: a.maxIo,
        maxIoQueues: a.maxIoQueues, subnqn: a.subnqn ?? DEFAULT_FABRIC.subnqn, hostnqn: a.hostnqn ?? DEFAULT_FABRIC.hostnqn, allowHosts: a.allowHosts,
      });
      slot(x).fabric = f;
      return { ok: true, result: state(f, 0) };
    });
  },

  queue(x: LabContext, a: import('../../app/protocol/index.ts').CommandArgs<'nvmf.queue'>): Out<ResultOf<'nvmf.queue'>> {
    return guard(() => {
      const f = need(x);
      const depth = a.hrqsize ?? (a.qid === 0 ? 32 : f.cfg.queueDepth);
      const r = f.addQueue(a.qid, depth, a.hsqsize ?? depth - 1);
      type R = ResultOf<'nvmf.queue'>;
      if (!('host' in r)) return { ok: true, result: { qid: a.qid, hostQpn: 0, targetQpn: 0, cm: { accepted: false, hrqsize: depth, hsqsize: a.hsqsize ?? depth - 1, crqsize: 0, rejectSts: r.rejected, messages: r.messages } } as R };
      return { ok: true, result: { qid: a.qid, hostQpn: r.host.qpNum, targetQpn: r.target.qpNum, cm: { accepted: true, hrqsize: r.cm.active.nvme.hrqsize, hsqsize: r.cm.active.nvme.hsqsize, crqsize: r.cm.passive.crqsize, messages: r.cm.messages } } as R };
    });
  },

  connect(x: LabContext, a: import('../../app/protocol/index.ts').CommandArgs<'nvmf.connect'>): Out<ResultOf<'nvmf.connect'>> {
    return guard(() => {
      const f = need(x);
      const p = f.pairs.get(a.qid);
      if (!p) return fail('ENOENT', `nvmf.connect: no queue ${a.qid} (nvmf.queue first)`, 'args.qid');
      const cntlid = a.cntlid ?? (a.qid === 0 ? CNTLID_DYNAMIC : f.target.ctrl?.cntlid ?? CNTLID_DYNAMIC);
      const cmd: HostCommand = { op: 'connect', qid: a.qid, sqsize: a.sqsize ?? p.host.depth - 1, kato: a.qid === 0 ? a.kato : 0, cntlid, subnqn: a.subnqn ?? f.cfg.subnqn, hostnqn: a.hostnqn ?? f.cfg.hostnqn };
      const r = f.run(a.qid, cmd);
      return { ok: true, result: commandOut(f, a.qid, r.cid, 'connect', r.done, r.flowFrom) };
    });
  },

  admin(x: LabContext, a: import('../../app/protocol/index.ts').CommandArgs<'nvmf.admin'>): Out<ResultOf<'nvmf.admin'>> {
    return guard(() => {
      const f = need(x);
      if (!f.pairs.has(0)) return fail('ENOENT', 'nvmf.admin: no admin queue (nvmf.queue qid 0, then nvmf.connect)', 'args.op');
      let cmd: HostCommand;
      switch (a.op) {
        case 'property-get': if (a.offset === undefined) return fail('EINVAL', 'property-get needs offset', 'args.offset'); cmd = { op: a.op, offset: a.offset, size: a.size }; break;
        case 'property-set': if (a.offset === undefined || a.value === undefined) return fail('EINVAL', 'property-set needs offset and value', 'args.value'); cmd = { op: a.op, offset: a.offset, value: BigInt(a.value) }; break;
        case 'identify': if (a.cns === undefined) return fail('EINVAL', 'identify needs cns', 'args.cns'); cmd = { op: a.op, cns: a.cns, nsid: a.nsid }; break;
        case 'set-features': if (a.fid === undefined) return fail('EINVAL', 'set-features needs fid', 'args.fid'); cmd = { op: a.op, fid: a.fid, cdw11: a.cdw11 }; break;
        default: cmd = { op: 'keep-alive' };
      }
      const r = f.run(0, cmd);
      const out = commandOut(f, 0, r.cid, a.op, r.done, r.flowFrom);
      const value = a.op === 'property-get' && r.done ? `0x${((BigInt(r.done.cqe.dw1) << 32n) | BigInt(r.done.cqe.dw0)).toString(16)}` : undefined;
      return { ok: true, result: { ...out, ...(value ? { value } : {}) } };
    });
  },

  io(x: LabContext, a: import('../../app/protocol/index.ts').CommandArgs<'nvmf.io'>): Out<ResultOf<'nvmf.io'>> {
    return guard(() => {
      const f = need(x);
      const p = f.pairs.get(a.qid);
      if (!p) return fail('ENOENT', `nvmf.io: no queue ${a.qid} (nvmf.queue, then nvmf.connect)`, 'args.qid');
      const stride = a.stride ?? a.nlb;
      const make = (i: number): HostCommand => a.op === 'flush' ? { op: 'flush', nsid: a.nsid } : { op: a.op, nsid: a.nsid, slba: BigInt(a.slba + i * stride), nlb: a.nlb, sgl: a.sgl };
      const steps0 = f.engineSteps, flow0 = f.flow.length, sw0 = f.target.counters.softwareSteps, dev0 = { ...f.deviceCounts };
      let done: Done[];
      let last: ResultOf<'nvmf.io'>['last'] = null;
      if (a.count === 1 || a.fault) {
        done = [];
        for (let i = 0; i < a.count; i++) {
          const r = f.run(a.qid, make(i), a.fault);
          if (r.done) done.push(r.done);
          last = commandOut(f, a.qid, r.cid, a.op, r.done, r.flowFrom);
        }
      } else {
        done = f.runMany(a.qid, a.count, Math.min(a.depth, p.host.depth), make);
        const d = done.at(-1);
        if (d) last = commandOut(f, a.qid, d.cid, a.op, d, flow0);
      }
      f.pump();   // the engine to rest: the device retires a command (DONE) after the host already has its response
      const statuses: Record<string, number> = {};
      for (const d of done) { const n = statusName(d.cqe.sct, d.cqe.sc); statuses[n] = (statuses[n] ?? 0) + 1; }
      const verified = done.filter((d) => d.verified === true).length;
      return {
        ok: true, result: {
          submitted: a.count, completed: done.length, succeeded: done.filter((d) => d.cqe.status === 0).length, verified,
          mismatches: done.filter((d) => d.verified === false).length, verifiedBytes: a.op === 'read' ? verified * a.nlb * f.cfg.lbaSize : 0,
          noResponse: a.count - done.length, statuses, engineSteps: f.engineSteps - steps0, last,
          offloaded: (f.deviceCounts[`${a.qid}:DONE`] ?? 0) - (dev0[`${a.qid}:DONE`] ?? 0),
          softwareSteps: f.target.counters.softwareSteps - sw0,
          deviceStages: stagesSince(f.deviceCounts, dev0),
        },
      };
    });
  },

  offload(x: LabContext, a: import('../../app/protocol/index.ts').CommandArgs<'nvmf.offload'>): Out<ResultOf<'nvmf.offload'>> {
    return guard(() => {
      const f = need(x);
      const again = !!f.offload;
      const b = attachOffload(f, a.stagingLen);
      if (!again) watchDevice(f);
      return { ok: true, result: { nvmeCtrl: b.nvmeCtrl, srq: b.srq, nvme: b.nvme, bar0: b.bar0, staging: { addr: b.stagingAddr, len: b.stagingLen }, map: { feNsid: f.cfg.nsid, nvmeNsid: f.cfg.nsid, lbaDataSize: f.cfg.lbaSize } } };
    });
  },

  offloadEnable(x: LabContext, a: { qid: number }): Out<ResultOf<'nvmf.offload_enable'>> {
    return guard(() => {
      const f = need(x);
      const p = f.pairs.get(a.qid);
      if (!p) return fail('ENOENT', `nvmf.offload_enable: no queue ${a.qid} (nvmf.queue first)`, 'args.qid');
      if (!f.offload) return fail('ENOENT', 'nvmf.offload_enable: no offload backend (nvmf.offload first)', 'args.qid');
      if (p.target.srq === null) return fail('EINVAL', `nvmf.offload_enable: queue ${a.qid} was created before nvmf.offload: its QP does not receive from the offload SRQ`, 'args.qid');
      enableOffload(f, a.qid);
      return { ok: true, result: { qid: a.qid, qp: p.target.qp, connected: p.target.qid !== null } };
    });
  },

  offloadFault(x: LabContext, a: { fault: 'timeout' | 'pci-error' }): Out<ResultOf<'nvmf.offload_fault'>> {
    return guard(() => {
      const f = need(x);
      if (!f.offload) return fail('ENOENT', 'nvmf.offload_fault: no offload backend (nvmf.offload first)', 'args.fault');
      const dev0 = { ...f.deviceCounts };
      const ctrlAlive = offloadFault(f, a.fault);
      return { ok: true, result: { fault: a.fault, ctrlAlive, deviceStages: stagesSince(f.deviceCounts, dev0) } };
    });
  },

  state(x: LabContext, a: { rows: number }): Out<ResultOf<'nvmf.state'>> {
    return guard(() => ({ ok: true, result: state(need(x), a.rows) }));
  },
};
