// Lab 4 beyond its steps, headless (`verbslab lab run nvmf` calls headless() after the lab's steps): on a fresh
// session, 1024 READs of 4 KiB at queue depth 32 after 128 WRITEs, half with a keyed SGL to the queue's MR and half
// with a fast-registered buffer the target invalidates; the lab passes only if every byte of every READ is the byte
// the host wrote and every invalidating response invalidated the key it was asked to. Then the same 1024 READs on a
// second fresh session whose I/O queue is offloaded to the device (labs/nvmf/offload.ts): every byte verified again,
// and the target's software handles no completion for them.
import type { LabAgentResult } from '../../app/scenario/lab-cli.ts';
import { BLOCKS, QD, bringUp } from './bench.ts';

const readsOf = (i: number) => ({ op: 'read' as const, nsid: 1, slba: BigInt(((i * 97) % 128) * BLOCKS), nlb: BLOCKS, sgl: i % 2 ? 'keyed-inv' as const : 'keyed' as const });

function offloaded(): { passed: boolean; result: Record<string, unknown>; line: string } {
  const { x, f } = bringUp(1, true);
  try {
    const sw0 = f.target.counters.softwareSteps;
    const r = f.runMany(1, 1024, QD, readsOf);
    const verified = r.filter((d) => d.verified === true).length, inv = r.filter((d) => d.invalidatedRkey !== undefined).length;
    const softwareSteps = f.target.counters.softwareSteps - sw0;
    const snap = f.x.exec({ cmd: 'nvmf.snapshot', args: { srq: f.offload!.srq } });
    const counters = snap.ok ? (snap.result as { counters: Record<string, number> }).counters : {};
    const passed = r.length === 1024 && verified === 1024 && f.host.counters.mismatches === 0 && inv === 512 && softwareSteps === 0;
    return {
      passed, result: { reads: r.length, verified, invalidated: inv, softwareSteps, device: counters },
      line: `${passed ? 'ok  ' : 'FAIL'} the same 1024 READs offloaded to the device: ${verified} verified, ${inv} with SEND with Invalidate, ${softwareSteps} target software steps; device: ${counters.offloaded} offloaded (after the 128 WRITEs), ${counters.toSoftware} to software`,
    };
  } finally { x.close(); }
}

export function headless(): LabAgentResult {
  const off = offloaded();
  const { x, f } = bringUp(1);
  try {
    const r = f.runMany(1, 1024, QD, readsOf);
    const verified = r.filter((d) => d.verified === true).length;
    const inv = r.filter((d) => d.invalidatedRkey !== undefined).length;
    const result = {
      reads: r.length, verified, mismatches: f.host.counters.mismatches, verifiedBytes: f.host.counters.verifiedBytes,
      invalidated: inv, queueDepth: QD, engineSteps: f.engineSteps, cmMads: f.wire.sent, target: { ...f.target.counters }, namespace: { ...f.ns.counters },
      offload: off.result,
    };
    const passed = r.length === 1024 && verified === 1024 && result.mismatches === 0 && inv === 512 && off.passed;
    return {
      passed, result,
      lines: [
        `${passed ? 'ok  ' : 'FAIL'} 1024 READs of 4 KiB at queue depth ${QD}: ${verified} verified (${result.verifiedBytes} bytes compared), ${result.mismatches} mismatches, ${inv} responses with SEND with Invalidate`,
        `     target software: ${result.target.capsules} capsules, ${result.target.rdmaReads} RDMA READs, ${result.target.rdmaWrites} RDMA WRITEs, ${result.target.softwareSteps} completions handled; ${result.cmMads} CM MADs on QP1`,
        off.line,
      ],
    };
  } finally { x.close(); }
}
