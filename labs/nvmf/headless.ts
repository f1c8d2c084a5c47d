// Lab 4 beyond its steps, headless (`verbslab lab run nvmf` calls headless() after the lab's steps): on a fresh
// session, 1024 READs of 4 KiB at queue depth 32 after 128 WRITEs, half with a keyed SGL to the queue's MR and half
// with a fast-registered buffer the target invalidates; the lab passes only if every byte of every READ is the byte
// the host wrote and every invalidating response invalidated the key it was asked to.
import type { LabAgentResult } from '../../app/scenario/lab-cli.ts';
import { BLOCKS, QD, bringUp } from './bench.ts';

export function headless(): LabAgentResult {
  const { x, f } = bringUp(1);
  try {
    const r = f.runMany(1, 1024, QD, (i) => ({ op: 'read', nsid: 1, slba: BigInt(((i * 97) % 128) * BLOCKS), nlb: BLOCKS, sgl: i % 2 ? 'keyed-inv' : 'keyed' }));
    const verified = r.filter((d) => d.verified === true).length;
    const inv = r.filter((d) => d.invalidatedRkey !== undefined).length;
    const result = {
      reads: r.length, verified, mismatches: f.host.counters.mismatches, verifiedBytes: f.host.counters.verifiedBytes,
      invalidated: inv, queueDepth: QD, engineSteps: f.engineSteps, cmMads: f.wire.sent, target: { ...f.target.counters }, namespace: { ...f.ns.counters },
    };
    const passed = r.length === 1024 && verified === 1024 && result.mismatches === 0 && inv === 512;
    return {
      passed, result,
      lines: [
        `${passed ? 'ok  ' : 'FAIL'} 1024 READs of 4 KiB at queue depth ${QD}: ${verified} verified (${result.verifiedBytes} bytes compared), ${result.mismatches} mismatches, ${inv} responses with SEND with Invalidate`,
        `     target software: ${result.target.capsules} capsules, ${result.target.rdmaReads} RDMA READs, ${result.target.rdmaWrites} RDMA WRITEs, ${result.target.softwareSteps} completions handled; ${result.cmMads} CM MADs on QP1`,
      ],
    };
  } finally { x.close(); }
}
