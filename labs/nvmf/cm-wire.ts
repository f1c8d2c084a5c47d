// The RDMA CM's MADs on the device's wire: each device's GSI QP (QP1, a UD QP with the well-known Q_Key
// 0x80010000), a UD SEND per MAD to the peer's QP1 (RoCEv2: BTH + DETH + the 256-byte MAD, as the kernel capture in
// fixtures/ shows them), received with the 40-byte GRH in front (IBA 11.4.1.1). The pcap of a lab run therefore
// carries the CM exchange that tells Wireshark the RC QPs after it carry NVMe/RDMA.
import type { NativeSession } from '../../app/host/native.ts';
import { SendFlag, WcStatus, WrOpcode } from '../../app/protocol/enums.ts';
import { CM, MAD_LEN } from './cm.ts';
import { must } from './verbs.ts';

const GRH = 40;
const SLOTS = 8;

interface End { dev: number; qp: number; cq: number; base: number; lkey: number; ah: number; next: number }

export class CmWire {
  private readonly ends: [End, End];
  /** MADs sent (the reply of nvmf.queue lists them) */
  sent = 0;

  constructor(private readonly s: NativeSession, devA: number, pdA: number, devB: number, pdB: number) {
    this.ends = [this.end(devA, pdA, devB), this.end(devB, pdB, devA)];
  }

  private end(dev: number, pd: number, peer: number): End {
    const s = this.s;
    const cq = must(s.create_cq(dev, 2 * SLOTS, false), 'GSI create_cq');
    const qp = must(s.create_qp(pd, { sendCq: cq, recvCq: cq, qpType: 4, sqSigAll: false, gsi: true, cap: { maxSendWr: SLOTS, maxRecvWr: SLOTS, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 } }), 'GSI create_qp');
    // INIT (Q_Key 0x80010000, P_Key index 0, port 1) -> RTR -> RTS: ib_mad's QP1 bring-up
    const M = { STATE: 1, PKEY: 1 << 4, PORT: 1 << 5, QKEY: 1 << 6, SQ_PSN: 1 << 16 };
    for (const [st, mask] of [[1, M.STATE | M.PKEY | M.PORT | M.QKEY], [2, M.STATE], [3, M.STATE | M.SQ_PSN]] as const) {
      const r = s.modify_qp(qp.handle, { qpState: st, qkey: CM.QKEY, pkeyIndex: 0, portNum: 1, sqPsn: 0 }, mask);
      if (r.err) throw new Error(`GSI modify_qp: ${r.msg}`);
    }
    const len = 2 * SLOTS * (GRH + MAD_LEN);
    const buf = must(s.alloc_buffer(len), 'GSI buffer');
    const mr = must(s.reg_mr(pd, buf.addr, len, 1), 'GSI reg_mr');
    const ah = must(s.create_ah(pd, peer, 1), 'GSI create_ah');
    const e: End = { dev, qp: qp.handle, cq, base: Number(buf.addr), lkey: mr.lkey, ah, next: 0 };
    for (let i = 0; i < SLOTS; i++) this.postRecv(e, i);
    return e;
  }

  private postRecv(e: End, slot: number): void {
    const r = this.s.post_recv(e.qp, [{ wrId: slot, sgList: [{ addr: e.base + slot * (GRH + MAD_LEN), length: GRH + MAD_LEN, lkey: e.lkey }] }]);
    if (r.err) throw new Error(`GSI post_recv: ${r.msg}`);
  }

  /** Side 0 or 1 sends a MAD to the other side's QP1 (a signaled UD SEND), and the engine runs until it is received
   *  there; returns the MAD as received (after the GRH). */
  transfer(from: 0 | 1, mad: Uint8Array): Uint8Array {
    const a = this.ends[from], b = this.ends[from ^ 1]!;
    const addr = a.base + (SLOTS + (a.next++ % SLOTS)) * (GRH + MAD_LEN);
    this.s.write_memory(addr, mad);
    const r = this.s.post_send(a.qp, [{ wrId: 0x100, opcode: WrOpcode.values.IBV_WR_SEND, sendFlags: SendFlag.values.IBV_SEND_SIGNALED, sgList: [{ addr, length: mad.length, lkey: a.lkey }], ah: a.ah, remoteQpn: CM.QPN, remoteQkey: CM.QKEY }]);
    if (r.err) throw new Error(`GSI post_send: ${r.msg}`);
    this.sent++;
    let got: Uint8Array | null = null;
    for (let i = 0; i < 100_000 && !got; i++) {
      const moved = this.s.step();
      for (const wc of this.s.poll_cq(a.cq, 4)) if (wc.status !== WcStatus.values.IBV_WC_SUCCESS) throw new Error(`GSI send: ${WcStatus.name(wc.status)}`);
      for (const wc of this.s.poll_cq(b.cq, 4)) {
        if (wc.status !== WcStatus.values.IBV_WC_SUCCESS) throw new Error(`GSI receive: ${WcStatus.name(wc.status)}`);
        const slot = Number(wc.wrId);
        got = this.s.read_memory(b.base + slot * (GRH + MAD_LEN) + GRH, wc.byteLen - GRH).value as Uint8Array;
        this.postRecv(b, slot);
      }
      if (!moved && !got) break;
    }
    for (const wc of this.s.poll_cq(a.cq, 4)) if (wc.status !== WcStatus.values.IBV_WC_SUCCESS) throw new Error(`GSI send: ${WcStatus.name(wc.status)}`);
    if (!got) throw new Error('GSI: the MAD did not arrive at the peer\'s QP1');
    return got;
  }
}
