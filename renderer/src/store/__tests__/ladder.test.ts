// The sequence diagram's model from a real faulted run: two RC QPs on one device, seeded loss on the wire. One lane
// per QP (named by QPN and device), requests drawn from the requester's lane to the responder's and ACKs back, the
// lost packets drawn as the packets that were lost (their opcode and PSN, from the device's Fault events), and their
// retransmissions marked.
import { describe, expect, it } from 'vitest';
import type { Command, DeviceEvent } from '../../../../app/protocol/index.ts';
import { createConsoleStore } from '../store.ts';
import { ladderOf } from '../ladder.ts';

import { needAddon } from '../../../../app/scenario/testlib.ts';
const mod = await needAddon('sequence diagram tests');

describe('sequence diagram of a faulted two-QP run on one device', () => {
  it('has one lane per QP, arrows in the packet\'s direction, lost packets as themselves, retransmissions marked', () => {
    const ex = new mod.NativeExecutor({ seed: 3 });
    const events: DeviceEvent[] = [];
    const run = <T = Record<string, unknown>>(c: Command): T => {
      const r = ex.exec(c);
      for (const e of ex.drainEvents()) events.push(e);
      if (!r.ok) throw new Error(`${c.cmd}: ${r.error.message}`);
      return r.result as T;
    };
    try {
      const dev = run<{ device: number }>({ cmd: 'device.create', args: { profile: 'rxe' } }).device;
      const pd = run<{ pd: number }>({ cmd: 'pd.alloc', args: { device: dev } }).pd;
      const bufs = [0, 1].map(() => run<{ buffer: number; addr: number }>({ cmd: 'buffer.alloc', args: { length: 16384 } }));
      const access = ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE'] as const;
      const mrs = bufs.map((b) => run<{ lkey: number; rkey: number }>({ cmd: 'mr.reg', args: { pd, addr: b.addr, length: 16384, access: [...access] } }));
      const cq = run<{ cq: number }>({ cmd: 'cq.create', args: { device: dev, cqe: 64, channel: false } }).cq;
      const qps = [0, 1].map(() => run<{ qp: number; qpNum: number }>({ cmd: 'qp.create', args: { pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC', cap: { maxSendWr: 16, maxRecvWr: 16, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 }, sqSigAll: false } }));
      run({ cmd: 'qp.connect', args: { qp: qps[0]!.qp, peer: qps[1]!.qp, pathMtu: 'IBV_MTU_1024', access: [...access] } });
      run({ cmd: 'engine.faults', args: { loss: 0.25, duplicate: 0, reorder: 0, delay: 0, delayNs: 0 } });
      for (let i = 0; i < 4; i++) {
        run({ cmd: 'post.send', args: { qp: qps[0]!.qp, wrs: [{ wrId: i, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: ['IBV_SEND_SIGNALED'],
          sgList: [{ addr: bufs[0]!.addr, length: 3000, lkey: mrs[0]!.lkey }], remoteAddr: bufs[1]!.addr, rkey: mrs[1]!.rkey }] } });
      }
      run({ cmd: 'engine.run', args: { maxSteps: 1_000_000 } });
      const q: (() => void)[] = [];
      const store = createConsoleStore({ schedule: (cb) => { q.push(cb); }, ringCapacity: 1 << 16 });
      store.getState().ingest(events);
      for (const qp of qps) store.getState().model.queues.applyQpInfo(run({ cmd: 'qp.query', args: { qp: qp.qp } }));
      while (q.length) q.shift()!();
      const m = store.getState().model;
      const lost = events.filter((e) => e.kind === 'Fault' && e.a === 0);
      expect(lost.length).toBeGreaterThan(0);                       // the seed loses packets (else this test shows nothing)

      const lad = ladderOf(m.wire.listed, m.fates, m.queues, () => 'vlrxe0', null, 1000);
      const [qa, qb] = qps.map((x) => x.qpNum);
      expect(lad.mode).toBe('newest');
      expect(lad.lanes.map((l) => l.label)).toEqual([`QPN 0x${qa!.toString(16)} on vlrxe0`, `QPN 0x${qb!.toString(16)} on vlrxe0`]);
      // requests from QP A's lane to QP B's, ACKs back: never the same direction
      for (const a of lad.arrows) expect([a.from, a.to]).toEqual(a.ack ? [1, 0] : [0, 1]);
      // every lost packet is an arrow with the opcode and PSN the device lost, marked lost; nothing else is
      const lostArrows = lad.arrows.filter((a) => a.fate === 'lost');
      expect(lostArrows.map((a) => a.psn)).toEqual(lost.map((e) => e.c));
      expect(lostArrows.every((a) => a.why.includes('lost'))).toBe(true);
      // a lost request is sent again: the same opcode and PSN, marked as a retransmission
      const lostReq = lostArrows.find((a) => !a.ack);
      if (lostReq) expect(lad.arrows.some((a) => a.retransmit && a.psn === lostReq.psn && a.opName === lostReq.opName)).toBe(true);
      expect(lad.arrows.filter((a) => a.retransmit).length).toBeGreaterThan(0);
      // each packet once: no receive or drop event drawn as a packet of its own
      expect(lad.arrows.length).toBe(events.filter((e) => e.kind === 'PacketSent').length);
      // every packet not lost arrived; the responder dropped the ones after a gap, saying why (rxe: out of sequence)
      const drops = events.filter((e) => e.kind === 'PacketDropped');
      expect(lad.arrows.filter((a) => a.fate === 'dropped').map((a) => a.why)).toEqual(drops.map((e) => e.text));
      expect(lad.arrows.every((a) => a.fate === 'delivered' || a.fate === 'lost' || a.fate === 'dropped')).toBe(true);
    } finally { ex.close(); }
  });
});
