// Lab 4's benchmark keys for `verbslab bench --json`: 4 KiB READs at queue depth 32, every byte verified by the host
// driver, through the software target and through the device's offload engine (the same target with its queues on
// the NVMe-oF offload SRQ, enabled after Connect; backend: the device's soft NVMe function). Both in the same run on
// the same device profile (cx, the one with offload caps), in alternating rounds of 1024 READs so both see the same
// machine load, for at least `minSecs` of wall-clock time each (the device, the wire and both agents in this process).
//   npx tsx labs/nvmf/bench.ts [--secs S]
import { pathToFileURL } from 'node:url';
import { createExecutor } from '../../app/host/executor.ts';
import { DEFAULT_FABRIC, NvmfFabric } from './fabric.ts';
import { attachOffload, enableOffload } from './offload.ts';
import { CC, Prop } from './spec.ts';

export interface NvmfBench {
  nvmf_software_target_4k_read_iops: number;
  /** target software interventions (work completions it handles) per software-served I/O */
  nvmf_software_target_steps_per_io: number;
  nvmf_offload_4k_read_iops: number;
  nvmf_offload_vs_software_target_iops: number;
  /** target software interventions per offloaded I/O (0 is the point of offload) */
  nvmf_offload_software_steps_per_io: number;
  nvmf: { queueDepth: number; profile: string; software: RunFigures; offload: RunFigures };
}
interface RunFigures { ios: number; verifiedBytes: number; seconds: number; engineStepsPerIo: number }

export const QD = 32, BLOCKS = 8;   // 8 x 512-byte LBAs = 4 KiB
export const PROFILE = 'cx';

/** A fresh session with the target and the host (on `PROFILE` devices), the admin queue connected and enabled, I/O
 *  queue 1 connected (and offloaded when asked: the SRQ and backend before the queues, the enable after the I/O
 *  Connect), and 128 x 4 KiB written (the data READs are checked against). The caller closes `x`. */
export function bringUp(seed = 1, offload = false): { x: ReturnType<typeof createExecutor>; f: NvmfFabric } {
  const x = createExecutor({ seed });
  const dev = (name: string) => { const r = x.exec({ cmd: 'device.create', args: { profile: PROFILE, name } }); if (!r.ok) throw new Error(r.error.message); return (r.result as { device: number }).device; };
  const f = new NvmfFabric(x, dev('target'), dev('host'), { ...DEFAULT_FABRIC, queueDepth: QD, blocks: 8192 });
  if (offload) attachOffload(f);
  const up = (qid: number, depth: number) => { const q = f.addQueue(qid, depth); if (!('host' in q)) throw new Error(`queue ${qid} rejected`); };
  up(0, 32);
  const ok = (what: string, d: { done: { cqe: { status: number } } | null }) => { if (d.done?.cqe.status !== 0) throw new Error(`${what} failed`); };
  ok('admin Connect', f.run(0, { op: 'connect', qid: 0, sqsize: 31, kato: 5000, subnqn: f.cfg.subnqn, hostnqn: f.cfg.hostnqn }));
  ok('CC.EN', f.run(0, { op: 'property-set', offset: Prop.CC, value: BigInt(CC.EN | (6 << CC.IOSQES_SHIFT) | (4 << CC.IOCQES_SHIFT)) }));
  up(1, QD);
  ok('I/O Connect', f.run(1, { op: 'connect', qid: 1, sqsize: QD - 1, kato: 0, cntlid: f.target.ctrl!.cntlid, subnqn: f.cfg.subnqn, hostnqn: f.cfg.hostnqn }));
  if (offload) enableOffload(f, 1);
  const w = f.runMany(1, 128, QD, (i) => ({ op: 'write', nsid: 1, slba: BigInt(i * BLOCKS), nlb: BLOCKS, sgl: 'keyed' }));
  if (w.length !== 128 || w.some((d) => d.cqe.status !== 0)) throw new Error('bench: a WRITE failed');
  return { x, f };
}

/** One side's counters, and a round of 1024 READs (every byte verified) timed on the wall clock. */
class Side {
  readonly sw0: number; readonly eng0: number; readonly bytes0: number;
  ios = 0; ns = 0n;
  constructor(readonly f: NvmfFabric) { this.sw0 = f.target.counters.softwareSteps; this.eng0 = f.engineSteps; this.bytes0 = f.host.counters.verifiedBytes; }
  round(): void {
    const t0 = process.hrtime.bigint();
    const r = this.f.runMany(1, 1024, QD, (i) => ({ op: 'read', nsid: 1, slba: BigInt(((i * 97) % 128) * BLOCKS), nlb: BLOCKS, sgl: 'keyed' }));
    this.ns += process.hrtime.bigint() - t0;
    if (r.length !== 1024 || r.some((d) => d.cqe.status !== 0 || d.verified !== true)) throw new Error('bench: a READ was not verified');
    this.ios += r.length;
  }
  get secs(): number { return Number(this.ns) / 1e9; }
  get iops(): number { return Math.round(this.ios / this.secs); }
  get swPerIo(): number { return Number(((this.f.target.counters.softwareSteps - this.sw0) / this.ios).toFixed(2)); }
  figures(): RunFigures {
    return { ios: this.ios, verifiedBytes: this.f.host.counters.verifiedBytes - this.bytes0, seconds: Number(this.secs.toFixed(2)), engineStepsPerIo: Number(((this.f.engineSteps - this.eng0) / this.ios).toFixed(1)) };
  }
}

export function nvmfBench(minSecs = 1): NvmfBench {
  const a = bringUp(1, false), b = bringUp(1, true);
  try {
    const sw = new Side(a.f), off = new Side(b.f);
    while (sw.secs < minSecs || off.secs < minSecs) { sw.round(); off.round(); }
    return {
      nvmf_software_target_4k_read_iops: sw.iops,
      nvmf_software_target_steps_per_io: sw.swPerIo,
      nvmf_offload_4k_read_iops: off.iops,
      nvmf_offload_vs_software_target_iops: Number((off.iops / sw.iops).toFixed(2)),
      nvmf_offload_software_steps_per_io: off.swPerIo,
      nvmf: { queueDepth: QD, profile: PROFILE, software: sw.figures(), offload: off.figures() },
    };
  } finally { a.x.close(); b.x.close(); }
}

/** `verbslab bench` (labBenches in app/cli/verbslab.mjs) merges what this returns into its JSON. */
export function bench(): Record<string, unknown> { return { ...nvmfBench(1) }; }

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const i = process.argv.indexOf('--secs');
  console.log(JSON.stringify(nvmfBench(i > 0 ? Number(process.argv[i + 1]) : 1), null, 2));
}
