// Lab 4's benchmark keys for `verbslab bench --json`: 4 KiB READs at queue depth 32 through the software target, every
// byte verified by the host driver, for at least `minSecs` of wall-clock time (the device, the wire and both agents in
// this process). The offload keys need the device's offload engine (the `nvme` branch); until it is merged they are
// null with the reason, never a made-up figure.
//   npx tsx labs/nvmf/bench.ts [--secs S]
import { pathToFileURL } from 'node:url';
import { createExecutor } from '../../app/host/executor.ts';
import { DEFAULT_FABRIC, NvmfFabric } from './fabric.ts';
import { CC, Prop } from './spec.ts';

export interface NvmfBench {
  nvmf_software_target_4k_read_iops: number;
  /** target software interventions (work completions it handles) per software-served I/O */
  nvmf_software_target_steps_per_io: number;
  nvmf_offload_4k_read_iops: number | null;
  nvmf_offload_vs_software_target_iops: number | null;
  nvmf_offload_software_steps_per_io: number | null;
  nvmf: { queueDepth: number; ios: number; verifiedBytes: number; seconds: number; engineStepsPerIo: number; offload?: string };
}

export const QD = 32, BLOCKS = 8;   // 8 x 512-byte LBAs = 4 KiB

/** A fresh session with the target and the host, the admin queue connected and enabled, I/O queue 1 connected, and
 *  128 x 4 KiB written (the data READs are checked against). The caller closes `x`. */
export function bringUp(seed = 1): { x: ReturnType<typeof createExecutor>; f: NvmfFabric } {
  const x = createExecutor({ seed });
  const dev = (name: string) => { const r = x.exec({ cmd: 'device.create', args: { profile: 'rxe', name } }); if (!r.ok) throw new Error(r.error.message); return (r.result as { device: number }).device; };
  const f = new NvmfFabric(x, dev('target'), dev('host'), { ...DEFAULT_FABRIC, queueDepth: QD, blocks: 8192 });
  const up = (qid: number, depth: number) => { const q = f.addQueue(qid, depth); if (!('host' in q)) throw new Error(`queue ${qid} rejected`); };
  up(0, 32);
  const ok = (what: string, d: { done: { cqe: { status: number } } | null }) => { if (d.done?.cqe.status !== 0) throw new Error(`${what} failed`); };
  ok('admin Connect', f.run(0, { op: 'connect', qid: 0, sqsize: 31, kato: 5000, subnqn: f.cfg.subnqn, hostnqn: f.cfg.hostnqn }));
  ok('CC.EN', f.run(0, { op: 'property-set', offset: Prop.CC, value: BigInt(CC.EN | (6 << CC.IOSQES_SHIFT) | (4 << CC.IOCQES_SHIFT)) }));
  up(1, QD);
  ok('I/O Connect', f.run(1, { op: 'connect', qid: 1, sqsize: QD - 1, kato: 0, cntlid: f.target.ctrl!.cntlid, subnqn: f.cfg.subnqn, hostnqn: f.cfg.hostnqn }));
  const w = f.runMany(1, 128, QD, (i) => ({ op: 'write', nsid: 1, slba: BigInt(i * BLOCKS), nlb: BLOCKS, sgl: 'keyed' }));
  if (w.length !== 128 || w.some((d) => d.cqe.status !== 0)) throw new Error('bench: a WRITE failed');
  return { x, f };
}

export function nvmfBench(minSecs = 1): NvmfBench {
  const { x, f } = bringUp();
  try {
    const sw0 = f.target.counters.softwareSteps, eng0 = f.engineSteps, bytes0 = f.host.counters.verifiedBytes;
    let ios = 0;
    const t0 = process.hrtime.bigint();
    let secs = 0;
    while (secs < minSecs) {
      const r = f.runMany(1, 1024, QD, (i) => ({ op: 'read', nsid: 1, slba: BigInt(((i * 97) % 128) * BLOCKS), nlb: BLOCKS, sgl: 'keyed' }));
      if (r.length !== 1024 || r.some((d) => d.verified !== true)) throw new Error('bench: a READ was not verified');
      ios += r.length;
      secs = Number(process.hrtime.bigint() - t0) / 1e9;
    }
    return {
      nvmf_software_target_4k_read_iops: Math.round(ios / secs),
      nvmf_software_target_steps_per_io: Number(((f.target.counters.softwareSteps - sw0) / ios).toFixed(2)),
      nvmf_offload_4k_read_iops: null, nvmf_offload_vs_software_target_iops: null, nvmf_offload_software_steps_per_io: null,
      nvmf: {
        queueDepth: QD, ios, verifiedBytes: f.host.counters.verifiedBytes - bytes0, seconds: Number(secs.toFixed(2)),
        engineStepsPerIo: Number(((f.engineSteps - eng0) / ios).toFixed(1)),
        offload: 'not measured: the device\'s NVMe-oF offload engine (branch nvme) is not merged into this build',
      },
    };
  } finally { x.close(); }
}

/** `verbslab bench` (labBenches in app/cli/verbslab.mjs) merges what this returns into its JSON. */
export function bench(): Record<string, unknown> { return { ...nvmfBench(1) }; }

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const i = process.argv.indexOf('--secs');
  console.log(JSON.stringify(nvmfBench(i > 0 ? Number(process.argv[i + 1]) : 1), null, 2));
}
