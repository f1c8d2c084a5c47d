// The two ends of the RDMA CM exchange of an NVMe/RDMA queue (IBA 12.9 communication state machines, the subset a
// connect and a disconnect pass through), over the MAD codecs of cm.ts. The host is the active side (rdma_connect:
// REQ, then RTU on REP), the target the passive side (rdma_accept: REP or REJ on REQ, established on RTU; DREP on
// DREQ). The target's checks of the NVMe/RDMA private data are Linux nvmet_rdma_parse_cm_connect_req's; its REP
// carries CRQSIZE = HSQSIZE + 1 and responder resources 0 (the kernel capture's values).
import {
  CMA_HDR_LEN, REJ_CONSUMER, decodeCmMad, decodeNvmeCmRep, decodeNvmeCmReq, encodeCmMad, encodeCmaHdr, encodeNvmeCmRej,
  encodeNvmeCmRep, encodeNvmeCmReq, serviceIdOf, type CmMad, type NvmeCmReq,
} from './cm.ts';
import { NVMF_PORT, RdmaCm } from './spec.ts';

/** NVME_AQ_DEPTH: the admin queue's most entries (include/linux/nvme.h) */
export const NVME_AQ_DEPTH = 32;

export type CmState = 'IDLE' | 'REQ_SENT' | 'REQ_RCVD' | 'REP_SENT' | 'REP_RCVD' | 'ESTABLISHED' | 'REJECTED' | 'DREQ_SENT' | 'TIMEWAIT';

export interface CmPath { guid: bigint; qpn: number; psn: number; ip: string; port: number }

/** an IPv4 address as its IPv4-mapped GID (::ffff:a.b.c.d), as RoCEv2 puts it in the CM REQ's path */
export function gidOfIp(ip: string): Uint8Array { const g = new Uint8Array(16); g[10] = 0xff; g[11] = 0xff; ip.split('.').forEach((o, i) => { g[12 + i] = Number(o); }); return g; }

const concat = (...p: Uint8Array[]) => { const o = new Uint8Array(p.reduce((n, x) => n + x.length, 0)); let at = 0; for (const x of p) { o.set(x, at); at += x.length; } return o; };

export class CmActive {
  state: CmState = 'IDLE';
  readonly commId: number;
  remoteCommId = 0;
  readonly tid: bigint;
  rep?: { crqsize: number; qpn: number; psn: number };
  constructor(seq: number, readonly me: CmPath, readonly peerIp: string, readonly nvme: NvmeCmReq) {
    this.commId = (0x29a50000 + seq * 0x10001) >>> 0;
    this.tid = BigInt(0x24aee0000 + seq);
  }

  /** rdma_connect: the REQ (RC, the RDMA_PS_TCP service of port 4420, the cma header, the NVMe/RDMA REQ data) */
  req(): Uint8Array {
    this.state = 'REQ_SENT';
    const pd = concat(encodeCmaHdr({ srcPort: this.me.port, src: this.me.ip, dst: this.peerIp }), encodeNvmeCmReq(this.nvme));
    return encodeCmMad({
      kind: 'REQ', transactionId: this.tid, fields: {
        localCommId: this.commId, serviceId: serviceIdOf(NVMF_PORT), localCaGuid: this.me.guid, localQpn: this.me.qpn,
        // nvme-rdma: responder_resources = max_qp_rd_atom, no initiator depth, flow control, retry counts 7
        responderResources: 128, initiatorDepth: 0, remoteCmResponseTimeout: 20, transportServiceType: 0, endToEndFlowControl: 1,
        startingPsn: this.me.psn, localCmResponseTimeout: 20, retryCount: 7, partitionKey: 0xffff, pathMtu: 3, rnrRetryCount: 7,
        maxCmRetries: 15, primaryLocalLid: 0xffff, primaryRemoteLid: 0xffff, primaryLocalGid: gidOfIp(this.me.ip), primaryRemoteGid: gidOfIp(this.peerIp),
        primaryHopLimit: 64, primaryLocalAckTimeout: 19,
        privateData: pd,
      },
    });
  }

  /** REP -> RTU (undefined when the message is not this connection's REP; REJ moves to REJECTED) */
  onReply(mad: Uint8Array): { rtu?: Uint8Array; rejectSts?: number } {
    const m = decodeCmMad(mad);
    if (!m || m.fields.remoteCommId !== this.commId) return {};
    if (m.kind === 'REJ') {
      this.state = 'REJECTED';
      const pd = m.fields.privateData as Uint8Array;
      return { rejectSts: pd[2]! | (pd[3]! << 8) };
    }
    if (m.kind !== 'REP' || this.state !== 'REQ_SENT') return {};
    this.remoteCommId = m.fields.localCommId as number;
    this.rep = { crqsize: decodeNvmeCmRep(m.fields.privateData as Uint8Array).crqsize, qpn: m.fields.localQpn as number, psn: m.fields.startingPsn as number };
    this.state = 'ESTABLISHED';
    return { rtu: encodeCmMad({ kind: 'RTU', transactionId: this.tid, fields: { localCommId: this.commId, remoteCommId: this.remoteCommId } }) };
  }
}

export class CmPassive {
  state: CmState = 'IDLE';
  commId = 0;
  remoteCommId = 0;
  nvme?: NvmeCmReq;
  crqsize = 0;
  constructor(readonly me: CmPath, readonly maxQueueSize: number) {}

  /** REQ -> REP (accept) or REJ with the NVMe/RDMA status (rdma_reject, reason 28 consumer defined) */
  onReq(mad: Uint8Array, seq: number): { reply: Uint8Array; accepted: boolean; rejectSts?: number; req?: CmMad } {
    const m = decodeCmMad(mad);
    if (!m || m.kind !== 'REQ') throw new Error('not a CM REQ');
    this.state = 'REQ_RCVD';
    this.remoteCommId = m.fields.localCommId as number;
    this.commId = (0xa2a00000 + seq * 0x10001) >>> 0;
    const pd = (m.fields.privateData as Uint8Array).subarray(CMA_HDR_LEN);
    const sts = this.check(pd);
    if (sts) {
      this.state = 'REJECTED';
      return {
        accepted: false, rejectSts: sts, req: m,
        reply: encodeCmMad({ kind: 'REJ', transactionId: m.transactionId, fields: { localCommId: this.commId, remoteCommId: this.remoteCommId, messageRejected: 0, reason: REJ_CONSUMER, privateData: encodeNvmeCmRej(sts) } }),
      };
    }
    this.state = 'REP_SENT';
    return {
      accepted: true, req: m,
      reply: encodeCmMad({
        kind: 'REP', transactionId: m.transactionId, fields: {
          localCommId: this.commId, remoteCommId: this.remoteCommId, localQpn: this.me.qpn, startingPsn: this.me.psn,
          responderResources: 0, initiatorDepth: Math.min(128, m.fields.responderResources as number), targetAckDelay: 15,
          endToEndFlowControl: 1, rnrRetryCount: 7, localCaGuid: this.me.guid, privateData: encodeNvmeCmRep(this.crqsize),
        },
      }),
    };
  }

  /** nvmet_rdma_parse_cm_connect_req: 0 or the REJECT status */
  private check(pd: Uint8Array): number {
    if (pd.length < RdmaCm.REQ_LEN) return RdmaCm.STS.INVALID_LEN;
    const r = decodeNvmeCmReq(pd);
    this.nvme = r;
    if (r.recfmt !== 0) return RdmaCm.STS.INVALID_RECFMT;
    const recvQueueSize = r.hsqsize + 1;
    if (r.qid === 0 && recvQueueSize > NVME_AQ_DEPTH) return RdmaCm.STS.INVALID_HSQSIZE;
    if (recvQueueSize > this.maxQueueSize) return RdmaCm.STS.INVALID_HSQSIZE;
    if (r.hrqsize < 1 || r.hrqsize > this.maxQueueSize) return RdmaCm.STS.INVALID_HRQSIZE;
    this.crqsize = recvQueueSize;
    return 0;
  }

  onRtu(mad: Uint8Array): boolean {
    const m = decodeCmMad(mad);
    if (!m || m.kind !== 'RTU' || m.fields.remoteCommId !== this.commId || this.state !== 'REP_SENT') return false;
    this.state = 'ESTABLISHED';
    return true;
  }
}
