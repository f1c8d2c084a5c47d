// Schemas several commands share: numeric ranges, work requests, QP attributes (argument side, built over the
// handle factory), and the device objects a reply carries (result side: mrOut, qpOut, … in app/host/commands).
import { z } from 'zod';
import { Access, KeyState, Mtu, QpState, SendFlag, WrOpcode } from '../enums.ts';
import { GidText } from '../net.ts';
import { RHandle, RU64, type HandleFactory } from '../descriptor.ts';

export const U32 = z.number().int().min(0).max(0xffffffff);
export const U24 = z.number().int().min(0).max(0xffffff);
/** 64-bit values: a safe integer, or a decimal/0x-hex string for values above 2^53. */
export const U64 = z.union([
  z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  z.string().regex(/^(0x[0-9a-fA-F]{1,16}|[0-9]{1,20})$/, 'a 64-bit number as decimal or 0x-hex'),
]);
export const Addr = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const Len = z.number().int().min(0).max(2 ** 32);
export const Hex = z.string().regex(/^([0-9a-fA-F]{2})*$/, 'hex bytes, two digits per byte').max(2 * 1024 * 1024);
export const accessList = z.array(z.enum(Access.names)).max(8);
export const sendFlags = z.array(z.enum(SendFlag.names)).max(4);

/** The work-request and attribute schemas, over a handle factory (live: numbers; scenario: names too). */
export function makeShared(h: HandleFactory) {
  const Sge = z.object({ addr: Addr, length: Len, lkey: U32 }).strict();
  const SendWr = z.object({
    wrId: U64.default(0),
    opcode: z.enum(WrOpcode.names),
    sendFlags: sendFlags.default(['IBV_SEND_SIGNALED']),
    sgList: z.array(Sge).max(64).default([]),
    inlineData: Hex.optional(),
    immData: U32.optional(),
    invalidateRkey: U32.optional(),
    remoteAddr: Addr.optional(),
    rkey: U32.optional(),
    compareAdd: U64.optional(),
    swap: U64.optional(),
    ah: h('ah').optional(),
    remoteQpn: U24.optional(),
    remoteQkey: U32.optional(),
    mw: h('mw').optional(),
    bindRkey: U32.optional(),
    bindMr: h('mr').optional(),
    bindAddr: Addr.optional(),
    bindLength: Len.optional(),
    bindAccess: accessList.optional(),
    regMr: h('mr').optional(),
    regKey: z.number().int().min(0).max(255).optional(),
    regAccess: accessList.optional(),
  }).strict();
  const RecvWr = z.object({ wrId: U64.default(0), sgList: z.array(Sge).max(64).default([]) }).strict();
  const QpAttr = z.object({
    qpState: z.enum(QpState.names).optional(),
    pathMtu: z.enum(Mtu.names).optional(),
    qpAccessFlags: accessList.optional(),
    qkey: U32.optional(),
    rqPsn: U24.optional(),
    sqPsn: U24.optional(),
    destQpNum: U24.optional(),
    destDevice: h('device').optional(),
    sgidIndex: z.number().int().min(0).max(255).optional(),
    pkeyIndex: z.number().int().min(0).max(0xffff).optional(),
    portNum: z.number().int().min(1).max(255).optional(),
    maxRdAtomic: z.number().int().min(0).max(255).optional(),
    maxDestRdAtomic: z.number().int().min(0).max(255).optional(),
    minRnrTimer: z.number().int().min(0).max(31).optional(),
    timeout: z.number().int().min(0).max(31).optional(),
    retryCnt: z.number().int().min(0).max(7).optional(),
    rnrRetry: z.number().int().min(0).max(7).optional(),
    // a remote host's GID (the device must be on the network, device.attachNet); else destDevice names the peer
    dgid: GidText.optional(),
  }).strict();
  /** The other side of an RC/UC connection on another host: what it shows as "local address" (rc_pingpong). */
  const RemoteDest = z.object({
    dgid: GidText,                                            // its GID, or its IPv4 address
    qpn: U24,                                                 // its QP number
    psn: U24,                                                 // its send PSN = our rq_psn
    sgidIndex: z.number().int().min(0).max(255).optional(),   // our GID to send from (default: same family as dgid)
  }).strict();
  return { Sge, SendWr, RecvWr, QpAttr, RemoteDest };
}
export type Shared = ReturnType<typeof makeShared>;

// ---- result objects (the executor's profileOut / deviceOut / mrOut / mwOut / qpOut / wcOut)
export const ProfileOut = z.object({
  name: z.string(), description: z.string(), transport: z.string(), deviceCapFlags: RU64, atomicCap: z.number(),
  maxQp: z.number(), maxQpWr: z.number(), maxSge: z.number(), maxCq: z.number(), maxCqe: z.number(), maxMr: z.number(),
  maxPd: z.number(), maxMw: z.number(), maxSrq: z.number(), maxSrqWr: z.number(), maxSrqSge: z.number(),
  maxQpRdAtom: z.number(), maxQpInitRdAtom: z.number(), maxFastRegPageListLen: z.number(), maxInlineData: z.number(),
  activeMtu: z.number(), maxMrSize: RU64, pageSizeCap: RU64, indirectReg: z.boolean(), zeroBasedMr: z.boolean(),
  readWithInv: z.boolean(), lkeyEqRkey: z.boolean(), keyBytePolicy: z.string(),
  /** where the profile behaves as Linux rxe rather than the IBA / ConnectX (app/protocol/quirks.ts) */
  quirks: z.record(z.string(), z.union([z.boolean(), z.number()])),
  /** ib_req_notify_cq(IB_CQ_REPORT_MISSED_EVENTS) may return > 0 (rxe) or never does (mlx5): docs/lab-cq.md */
  notifyReportsMissed: z.boolean(),
  deviceCapNames: z.array(z.string()), atomicCapName: z.string(), activeMtuName: z.string(),
});
/** the session drives a real device through libibverbs (session.reset { backend: 'ibverbs' }); absent: the software devices */
export const BackendOut = z.object({
  kind: z.literal('ibverbs'), device: z.string(), library: z.string(),
  /** the library is Verbs Lab's own libibverbs.so.1 (its device is the software device behind the libibverbs ABI) */
  software: z.boolean(),
});
export const GidOut = z.object({ index: z.number(), gid: z.string(), type: z.string() });
export const DeviceOut = z.object({
  handle: RHandle, device: RHandle, name: z.string(), profile: ProfileOut, nodeGuid: z.string(), gids: z.array(GidOut),
  portState: z.number(), portStateName: z.string(),
});
export const SgeOut = z.object({ addr: RU64, length: z.number(), lkey: z.number() });
export const MrOut = z.object({
  handle: RHandle, mr: RHandle, pd: RHandle, lkey: z.number(), rkey: z.number(), addr: RU64, length: RU64, iova: RU64,
  access: z.number(), accessNames: z.array(z.string()), kind: z.string(), state: z.enum(KeyState.names), sg: z.array(SgeOut),
});
export const MwOut = z.object({
  handle: RHandle, mw: RHandle, pd: RHandle, rkey: z.number(), type: z.number(), typeName: z.string(), state: z.enum(KeyState.names),
  mr: z.number(), qp: z.number(), addr: RU64, length: RU64, access: z.number(), accessNames: z.array(z.string()),
});
const QpCapOut = z.object({ maxSendWr: z.number(), maxRecvWr: z.number(), maxSendSge: z.number(), maxRecvSge: z.number(), maxInlineData: z.number() });
export const QpOut = z.object({
  handle: RHandle, qp: RHandle, qpNum: z.number(), device: RHandle,
  init: z.object({
    sendCq: z.number(), recvCq: z.number(), srq: z.number(), pd: z.number(), qpType: z.number(), qpTypeName: z.string(),
    sqSigAll: z.boolean(), cap: QpCapOut,
  }),
  attr: z.object({
    qpState: z.number(), qpStateName: z.string(), curQpState: z.number(), curQpStateName: z.string(),
    pathMtu: z.number(), pathMtuName: z.string(), qpAccessFlags: z.number(), qpAccessFlagsNames: z.array(z.string()),
    qkey: z.number(), rqPsn: z.number(), sqPsn: z.number(), destQpNum: z.number(), pkeyIndex: z.number(), portNum: z.number(),
    maxRdAtomic: z.number(), maxDestRdAtomic: z.number(), minRnrTimer: z.number(), timeout: z.number(), retryCnt: z.number(),
    rnrRetry: z.number(), sgidIndex: z.number(), destDevice: z.number(), dgid: z.string(),
  }),
});
export const WcOut = z.object({
  wrId: RU64, status: z.number(), statusName: z.string(), opcode: z.number(), opcodeName: z.string(), vendorErr: z.number(),
  byteLen: z.number(), immData: z.number(), invalidatedRkey: z.number(), qpNum: z.number(), srcQp: z.number(),
  wcFlags: z.number(), wcFlagsNames: z.array(z.string()),
  /** the profile rule (app/protocol/quirks.ts) that decided this completion, where rxe and the IBA / ConnectX differ */
  rule: z.string().optional(), pkeyIndex: z.number(), slid: z.number(), sl: z.number(),
  dlidPathBits: z.number(),
});
export const NetGidOut = z.object({ index: z.number(), gid: z.string(), type: z.string(), ip: z.string().optional() });
export const NetOut = z.object({
  interface: z.string(), port: z.number(), gids: z.array(NetGidOut),
  stats: z.object({ txPackets: RU64, txBytes: RU64, rxPackets: RU64, rxBytes: RU64, rxDropped: RU64, txDropped: RU64 }),
});
export const InterfaceOut = z.object({ name: z.string(), index: z.number(), mtu: z.number(), up: z.boolean(), loopback: z.boolean(), addrs: z.array(z.string()) });
export const PcapOut = z.object({
  format: z.literal('pcap'), linktype: z.literal('LINKTYPE_ETHERNET'), length: z.number(), base64: z.string(),
  device: RHandle.optional(), network: z.boolean().optional(),
});
