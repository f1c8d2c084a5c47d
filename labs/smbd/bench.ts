// Lab 5's figures for `verbslab bench --json` (app/cli/verbslab.mjs merges labs/<id>/bench.ts's bench()):
//   smbd_pool_vs_per_io_registration_1MiB   SMB2 READ/WRITE of 1 MiB through SMB Direct on the device, server
//       buffers from a 64 x 1 MiB pool registered once vs a fast registration + invalidation per I/O; the ratio of
//       their throughputs (pool / per-I/O, wall clock), measured alternately in the same run
//   smbd_batched_vs_single_event_crossing   the same completions taken from the device one per crossing (cq.poll
//       max 1: one call from the host into the device per event) vs many per crossing (max 64, with the count);
//       the ratio of the times (single / batched)
// The warm-up I/Os of each policy are verified (both memories read back); the timed ones are not read back.
import { NativeExecutor } from '../../app/host/executor.ts';
import { SmbdSession } from './session.ts';
import { SmbdIo } from './io.ts';
import type { Policy, PolicyStats } from './io.ts';
import { must } from './peer.ts';

const MiB = 1 << 20;

function policyRig(policy: Policy): { io: SmbdIo; close: () => void } {
  const ex = new NativeExecutor({ seed: 1 });
  const s = new SmbdSession(ex);
  s.setup();
  s.negotiate();
  const io = new SmbdIo(s, policy, MiB, 64);
  io.setup();
  return { io, close: () => ex.close() };
}

export interface RegistrationBench {
  ios: number; pool: PolicyStats; perIo: PolicyStats;
  poolMiBps: number; perIoMiBps: number; ratio: number; poolLatencyUs: number; perIoLatencyUs: number;
}

/** `rounds` alternating rounds of `perRound` 1 MiB I/Os (READ and WRITE, RDMA_V1_INVALIDATE) per policy. */
export function registrationBench(rounds = 4, perRound = 4): RegistrationBench {
  const pool = policyRig('pool'), per = policyRig('per-io');
  try {
    // warm-up and verification (not timed)
    for (const r of [pool, per]) { r.io.io('READ', 'RDMA_V1_INVALIDATE'); r.io.io('WRITE', 'RDMA_V1_INVALIDATE'); }
    const t = { pool: 0, per: 0 };
    for (let round = 0; round < rounds; round++) {
      for (const [name, r] of [['pool', pool], ['per', per]] as const) {
        const t0 = process.hrtime.bigint();
        for (let i = 0; i < perRound; i++) r.io.io(i % 2 ? 'WRITE' : 'READ', 'RDMA_V1_INVALIDATE', MiB, false);
        t[name] += Number(process.hrtime.bigint() - t0);
      }
    }
    const ios = rounds * perRound;
    const poolMiBps = ios / (t.pool / 1e9), perIoMiBps = ios / (t.per / 1e9);
    // wall-clock latency per I/O of the timed rounds (the device's virtual clock does not model link bandwidth)
    const lat = (ns: number) => Number((ns / ios / 1000).toFixed(1));
    return {
      ios, pool: pool.io.stats, perIo: per.io.stats, poolMiBps: Number(poolMiBps.toFixed(1)), perIoMiBps: Number(perIoMiBps.toFixed(1)),
      ratio: Number((poolMiBps / perIoMiBps).toFixed(3)), poolLatencyUs: lat(t.pool), perIoLatencyUs: lat(t.per),
    };
  } finally { pool.close(); per.close(); }
}

export interface CrossingBench { events: number; single: { crossings: number; ns: number }; batched: { crossings: number; ns: number; perCrossing: number }; nsPerCrossing: number; ratio: number }

/** `events` signaled 64-byte RDMA WRITEs completed by the device, then taken from the CQ one per call or 64 per call. */
export function crossingBench(events = 4096): CrossingBench {
  const ex = new NativeExecutor({ seed: 1 });
  try {
    const p = ex;
    const d0 = must(p, 'device.create', { profile: 'rxe', name: 'a' }).device as number;
    const d1 = must(p, 'device.create', { profile: 'rxe', name: 'b' }).device as number;
    const pd0 = must(p, 'pd.alloc', { device: d0 }).pd as number, pd1 = must(p, 'pd.alloc', { device: d1 }).pd as number;
    const b0 = must(p, 'buffer.alloc', { length: 4096 }).addr as number, b1 = must(p, 'buffer.alloc', { length: 4096 }).addr as number;
    const lkey = must(p, 'mr.reg', { pd: pd0, addr: b0, length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE'] }).lkey as number;
    const rkey = must(p, 'mr.reg', { pd: pd1, addr: b1, length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE'] }).rkey as number;
    const cq = must(p, 'cq.create', { device: d0, cqe: events }).cq as number;
    const cq1 = must(p, 'cq.create', { device: d1, cqe: 4 }).cq as number;
    const cap = { maxSendWr: 1024, maxRecvWr: 1, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 };
    const qp = must(p, 'qp.create', { pd: pd0, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC', cap }).qp as number;
    const qp1 = must(p, 'qp.create', { pd: pd1, sendCq: cq1, recvCq: cq1, qpType: 'IBV_QPT_RC', cap }).qp as number;
    must(p, 'qp.connect', { qp, peer: qp1 });
    const fill = () => {
      for (let done = 0; done < events; done += 1024) {
        const wrs = Array.from({ length: Math.min(1024, events - done) }, (_, i) => ({
          wrId: done + i, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: ['IBV_SEND_SIGNALED'], sgList: [{ addr: b0, length: 64, lkey }], remoteAddr: b1, rkey,
        }));
        must(p, 'post.send', { qp, wrs });
        must(p, 'engine.run', {});
      }
    };
    const drain = (max: number) => {
      let got = 0, crossings = 0;
      const t0 = process.hrtime.bigint();
      while (got < events) {
        const n = (must(p, 'cq.poll', { cq, max }).wcs as unknown[]).length;
        crossings++;
        if (n === 0) throw new Error('crossing bench: CQ empty before every completion was taken');
        got += n;
      }
      return { crossings, ns: Number(process.hrtime.bigint() - t0) };
    };
    fill(); drain(64);                 // warm-up
    fill(); const single = drain(1);
    fill(); const batched = drain(64);
    return {
      events, single, batched: { ...batched, perCrossing: events / batched.crossings },
      nsPerCrossing: Math.round(single.ns / single.crossings), ratio: Number((single.ns / batched.ns).toFixed(2)),
    };
  } finally { ex.close(); }
}

/** The figures `verbslab bench --json` adds. */
export function bench(): Record<string, unknown> {
  const reg = registrationBench();
  const cross = crossingBench();
  return {
    smbd_pool_vs_per_io_registration_1MiB: reg.ratio,
    smbd_batched_vs_single_event_crossing: cross.ratio,
    smbd: { registration: reg, crossing: cross },
  };
}
