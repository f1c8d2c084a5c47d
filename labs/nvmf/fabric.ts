// Lab 4's fabric: the software target on one device, the host driver on another, and the pump that runs the engine
// one step at a time and lets both agents poll their CQ and act between steps (deterministic: same seed, same
// commands, same packets). A queue is an RC QP pair; the RDMA CM exchange that sets it up is computed by cm.ts
// (the private data both sides would carry) while the QPs are connected by the device's qp.connect.
import type { LabContext } from '../../app/host/lab-context.ts';
import { CmActive, CmPassive, type CmPath } from './cm-agent.ts';
import { CmWire } from './cm-wire.ts';
import { FlowLog } from './flow.ts';
import { HostDriver, type Done, type HostCommand, type HostFault, type HostQueue } from './initiator.ts';
import { MemNamespace } from './namespace.ts';
import { DEFAULT_TARGET, SoftTarget, type TargetConfig, type TargetQueue } from './target.ts';
import type { OffloadBackend } from './offload.ts';
import { must } from './verbs.ts';

export interface FabricConfig extends TargetConfig { lbaSize: number; blocks: number; nsid: number; hostnqn: string }
export const DEFAULT_FABRIC: FabricConfig = { ...DEFAULT_TARGET, lbaSize: 512, blocks: 8192, nsid: 1, hostnqn: 'nqn.2014-08.org.nvmexpress:uuid:0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0' };

export interface QueuePair { qid: number; host: HostQueue; target: TargetQueue; cm: { active: CmActive; passive: CmPassive; messages: string[] } }

/** a device's CM identity: node GUID, the IPv4 address of its IPv4-mapped RoCEv2 GID */
function pathOf(x: LabContext, dev: number, qpn: number, port: number): CmPath {
  const d = x.deviceInfo(dev)!;
  const g = d.gids.find((y) => y.gid.startsWith('0000:0000:0000:0000:0000:ffff:'))?.gid.slice(30).replace(':', '') ?? '00000000';
  const ip = [0, 2, 4, 6].map((i) => parseInt(g.slice(i, i + 2), 16)).join('.');
  return { guid: BigInt(`0x${d.nodeGuid}`), qpn, psn: 0, ip, port };
}

export class NvmfFabric {
  readonly flow: FlowLog;
  readonly target: SoftTarget;
  readonly host: HostDriver;
  readonly ns: MemNamespace;
  readonly pairs = new Map<number, QueuePair>();
  engineSteps = 0;
  /** the device's offload backend once attached (labs/nvmf/offload.ts) */
  offload: OffloadBackend | null = null;
  /** called after every engine step (lab commands: the device's offload steps become flow rows as they happen) */
  afterStep: (() => void) | null = null;
  /** the device's offload steps seen so far (watchDevice), by "qid:STEP" (qid -1: events on the SRQ) */
  readonly deviceCounts: Record<string, number> = {};

  constructor(readonly x: LabContext, readonly targetDev: number, readonly hostDev: number, readonly cfg: FabricConfig) {
    const s = x.s;
    this.flow = new FlowLog(() => Number(s.now_ns()));
    this.ns = new MemNamespace(cfg.nsid, cfg.lbaSize, cfg.blocks);
    const tpd = must(s.alloc_pd(targetDev), 'target alloc_pd'), hpd = must(s.alloc_pd(hostDev), 'host alloc_pd');
    const tcq = must(s.create_cq(targetDev, 4 * cfg.queueDepth * (cfg.maxIoQueues + 1), false), 'target create_cq');
    const hcq = must(s.create_cq(hostDev, 4 * cfg.queueDepth * (cfg.maxIoQueues + 1), false), 'host create_cq');
    this.target = new SoftTarget(s, targetDev, tpd, tcq, this.ns, cfg, this.flow);
    this.host = new HostDriver(s, hostDev, hpd, hcq, cfg.lbaSize, cfg.blocks, cfg.maxIo, cfg.inlineSize, this.flow);
    this.wire = new CmWire(s, hostDev, hpd, targetDev, tpd);
  }
  /** the CM MADs' path: each device's QP1 */
  readonly wire: CmWire;

  /** A queue through the RDMA CM exchange (rdma_connect / rdma_accept): the host's REQ with the NVMe/RDMA private
   *  data (HRQSIZE, HSQSIZE), the target's REP (CRQSIZE) or REJ, the RTU; on accept the RC QPs go to RTS and both
   *  sides post their receives. The MADs are built and parsed by cm.ts and travel between the devices' QP1s as UD
   *  SENDs (cm-wire.ts). Simplified: both RC QPs are moved to RTS by qp.connect once the REP is in (rdma_cm moves
   *  the target's to RTR on REQ and to RTS on RTU). */
  addQueue(qid: number, depth: number, hsqsize = depth - 1): QueuePair | { rejected: number; messages: string[] } {
    if (this.pairs.has(qid)) throw new FabricError('EEXIST', `queue ${qid} exists`);
    const seq = this.pairs.size + this.rejects + 1;
    const h = this.host.addQueue(qid, depth), t = this.target.addQueue();
    const active = new CmActive(seq, pathOf(this.x, this.hostDev, h.qpNum, 0xa800 + seq), pathOf(this.x, this.targetDev, t.qpNum, 4420).ip, { recfmt: 0, qid, hrqsize: depth, hsqsize, cntlid: 0 });
    const passive = new CmPassive(pathOf(this.x, this.targetDev, t.qpNum, 4420), this.cfg.queueDepth);
    const messages = ['REQ'];
    const ans = passive.onReq(this.wire.transfer(0, active.req()), seq);
    messages.push(ans.accepted ? 'REP' : 'REJ');
    const back = active.onReply(this.wire.transfer(1, ans.reply));
    if (!ans.accepted || !back.rtu) { this.rejects++; return { rejected: back.rejectSts ?? ans.rejectSts ?? 0, messages }; }
    t.cmQid = passive.nvme!.qid;
    const r = this.x.exec({ cmd: 'qp.connect', args: { qp: h.qp, peer: t.qp, pathMtu: 'IBV_MTU_1024', access: ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_READ'] } });
    if (!r.ok) throw new Error(`qp.connect: ${r.error.code} ${r.error.message}`);
    if (!passive.onRtu(this.wire.transfer(0, back.rtu))) throw new Error('CM: the target did not take the RTU');
    messages.push('RTU');
    this.host.postReceives(h);
    this.target.postReceives(t);
    const p = { qid, host: h, target: t, cm: { active, passive, messages } };
    this.pairs.set(qid, p);
    return p;
  }
  private rejects = 0;

  /** Run the engine until nothing moves: after every step both agents poll and act. */
  pump(maxSteps = 1_000_000): number {
    const s = this.x.s;
    let n = 0;
    for (;;) {
      const moved = s.step();
      if (moved) { n++; this.engineSteps++; this.afterStep?.(); }
      const polled = this.target.poll() + this.host.poll();
      if (!moved && !polled) return n;
      if (n >= maxSteps) return n;
    }
  }

  /** One command on a queue, to its end (or until the engine has nothing left to do). */
  run(qid: number, cmd: HostCommand, fault?: HostFault): { cid: number; done: Done | null; flowFrom: number } {
    const p = this.pairs.get(qid);
    if (!p) throw new FabricError('ENOENT', `no queue ${qid} (create it with nvmf.queue)`);
    const flowFrom = this.flow.length, before = this.host.done.length;
    const cid = this.host.submit(p.host, cmd, fault);
    if (cid === null) throw new FabricError('EAGAIN', `queue ${qid} is full`);
    this.pump();
    const done = this.host.done.slice(before).find((d) => d.cid === cid && d.qid === qid) ?? null;
    return { cid, done, flowFrom };
  }

  /** `count` commands made by `make(i)`, at most `depth` in flight, each new one submitted as soon as a slot frees
   *  (the pump runs one engine step at a time so the agents interleave with the wire). */
  runMany(qid: number, count: number, depth: number, make: (i: number) => HostCommand): Done[] {
    const p = this.pairs.get(qid);
    if (!p) throw new FabricError('ENOENT', `no queue ${qid} (create it with nvmf.queue)`);
    const before = this.host.done.length, s = this.x.s;
    let issued = 0, inflight = 0, idleRounds = 0;
    while (this.host.done.length - before < count) {
      inflight = issued - (this.host.done.length - before);
      while (issued < count && inflight < depth && this.host.free(p.host) > 0) {
        this.host.submit(p.host, make(issued));
        issued++; inflight++;
      }
      const moved = s.step();
      if (moved) { this.engineSteps++; this.afterStep?.(); }
      const polled = this.target.poll() + this.host.poll();
      if (!moved && !polled) { if (++idleRounds > 2) break; } else idleRounds = 0;
    }
    return this.host.done.slice(before);
  }
}

export class FabricError extends Error { constructor(readonly code: string, message: string) { super(message); } }
