// The platform's payload decoder for the connection manager's MADs (docs/cm.md): a UD SEND to QP1 whose payload is
// a MAD of management class 0x07 (CM). The common MAD header is IBA 13.4.2 (Table 145 "MAD Common Header"); the CM
// messages' fields are IBA 12.6 Tables 106-120, at the byte / bit (from the most significant bit) / width offsets of
// the kernel's include/rdma/ibta_vol1_c12.h, counted from the start of the CM message (after the 24-byte MAD
// header). The device's C++ codec (native/src/cm/mad.cpp) holds the same table; cm-mad.test.ts proves they agree on
// MADs the device sent and on a Linux kernel capture. The RDMA IP CM service header that begins a REQ's private
// data is IBA Annex A11.6.2 (kernel cma.c struct cma_hdr; native/src/cm/ip_hdr.cpp).
import { CmAttr } from './enums.ts';
import type { PayloadDecoder, PayloadInput } from './payload.ts';

export const CM_MAD = { LEN: 256, HDR_LEN: 24, BASE_VERSION: 1, MGMT_CLASS: 0x07, CLASS_VERSION: 2, METHOD_SEND: 0x03, GSI_QPN: 1 } as const;

/** REJ reasons (IBA 12.6.7.2 Table 112; enum ib_cm_rej_reason, include/rdma/ib_cm.h; vl::CmRejReason) */
export const CM_REJ_REASON: Readonly<Record<number, string>> = {
  1: 'NO_QP', 2: 'NO_EEC', 3: 'NO_RESOURCES', 4: 'TIMEOUT', 5: 'UNSUPPORTED', 6: 'INVALID_COMM_ID',
  7: 'INVALID_COMM_INSTANCE', 8: 'INVALID_SERVICE_ID', 9: 'INVALID_TRANSPORT_TYPE', 10: 'STALE_CONN',
  11: 'RDC_NOT_EXIST', 12: 'INVALID_GID', 13: 'INVALID_LID', 14: 'INVALID_SL', 15: 'INVALID_TRAFFIC_CLASS',
  16: 'INVALID_HOP_LIMIT', 17: 'INVALID_PACKET_RATE', 18: 'INVALID_ALT_GID', 19: 'INVALID_ALT_LID', 20: 'INVALID_ALT_SL',
  21: 'INVALID_ALT_TRAFFIC_CLASS', 22: 'INVALID_ALT_HOP_LIMIT', 23: 'INVALID_ALT_PACKET_RATE', 24: 'PORT_CM_REDIRECT',
  25: 'PORT_REDIRECT', 26: 'INVALID_MTU', 27: 'INSUFFICIENT_RESP_RESOURCES', 28: 'CONSUMER_DEFINED',
  29: 'INVALID_RNR_RETRY', 30: 'DUPLICATE_LOCAL_COMM_ID', 31: 'INVALID_CLASS_VERSION', 32: 'INVALID_FLOW_LABEL',
  33: 'INVALID_ALT_FLOW_LABEL',
};
export const rejReasonText = (r: number): string => `${r} ${CM_REJ_REASON[r] ?? 'unknown reason'}`;

/** [field, byte, bit from the MSB, width in bits] */
type Loc = readonly [string, number, number, number];
/** one CM message's layout: its fields, where its private data is and how long, where the primary path's GIDs are */
interface Layout { fields: readonly Loc[]; pdataOff: number; pdataLen: number; gidOff?: number }

const COMM: readonly Loc[] = [['localCommId', 0, 0, 32], ['remoteCommId', 4, 0, 32]];
// Tables 106-120, the fields the console shows (the REQ's alternate path is not shown: the device has none)
export const CM_LAYOUTS: Readonly<Record<number, Layout>> = {
  [CmAttr.values.REQ]: { pdataOff: 140, pdataLen: 92, gidOff: 56, fields: [
    ['localCommId', 0, 0, 32], ['serviceId', 8, 0, 64], ['localCaGuid', 16, 0, 64], ['localQkey', 28, 0, 32],
    ['localQpn', 32, 0, 24], ['responderResources', 35, 0, 8], ['initiatorDepth', 39, 0, 8],
    ['remoteCmResponseTimeout', 43, 0, 5], ['transportServiceType', 43, 5, 2], ['startingPsn', 44, 0, 24],
    ['localCmResponseTimeout', 47, 0, 5], ['retryCount', 47, 5, 3], ['partitionKey', 48, 0, 16], ['pathMtu', 50, 0, 4],
    ['rnrRetryCount', 50, 5, 3], ['maxCmRetries', 51, 0, 4], ['srq', 51, 4, 1], ['primaryFlowLabel', 88, 0, 20],
    ['primaryTrafficClass', 92, 0, 8], ['primaryHopLimit', 93, 0, 8], ['primarySl', 94, 0, 4],
    ['primaryLocalAckTimeout', 95, 0, 5],
  ] },
  [CmAttr.values.MRA]: { pdataOff: 10, pdataLen: 222, fields: [...COMM, ['messageMraed', 8, 0, 2], ['serviceTimeout', 9, 0, 5]] },
  [CmAttr.values.REJ]: { pdataOff: 84, pdataLen: 148, fields: [...COMM, ['messageRejected', 8, 0, 2], ['rejectedInfoLength', 9, 0, 7], ['reason', 10, 0, 16]] },
  [CmAttr.values.REP]: { pdataOff: 36, pdataLen: 196, fields: [
    ...COMM, ['localQkey', 8, 0, 32], ['localQpn', 12, 0, 24], ['startingPsn', 20, 0, 24], ['responderResources', 24, 0, 8],
    ['initiatorDepth', 25, 0, 8], ['targetAckDelay', 26, 0, 5], ['failoverAccepted', 26, 5, 2], ['rnrRetryCount', 27, 0, 3],
    ['srq', 27, 3, 1], ['localCaGuid', 28, 0, 64],
  ] },
  [CmAttr.values.RTU]: { pdataOff: 8, pdataLen: 224, fields: COMM },
  [CmAttr.values.DREQ]: { pdataOff: 12, pdataLen: 220, fields: [...COMM, ['remoteQpnEecn', 8, 0, 24]] },
  [CmAttr.values.DREP]: { pdataOff: 8, pdataLen: 224, fields: COMM },
  [CmAttr.values.SIDR_REQ]: { pdataOff: 16, pdataLen: 216, fields: [['requestId', 0, 0, 32], ['partitionKey', 4, 0, 16], ['serviceId', 8, 0, 64]] },
  [CmAttr.values.SIDR_REP]: { pdataOff: 96, pdataLen: 136, fields: [
    ['requestId', 0, 0, 32], ['status', 4, 0, 8], ['additionalInfoLength', 5, 0, 8], ['qpn', 8, 0, 24], ['serviceId', 12, 0, 64], ['qkey', 20, 0, 32],
  ] },
};

/** `w` bits at bit `pos` of `b` (bit 0 = the MSB of byte 0), big-endian */
function bits(b: Uint8Array, pos: number, w: number): bigint {
  let v = 0n;
  for (let i = 0; i < w; i++, pos++) v = (v << 1n) | BigInt((b[pos >> 3]! >> (7 - (pos & 7))) & 1);
  return v;
}
const hex = (v: bigint | number, digits = 0) => `0x${v.toString(16).padStart(digits, '0')}`;
const gid = (b: Uint8Array) => Array.from({ length: 8 }, (_, i) => ((b[2 * i]! << 8) | b[2 * i + 1]!).toString(16).padStart(4, '0')).join(':');

/** an IP of the IP CM header: IPv4 in the last 4 of 16 bytes (cma_ip_addr.ip4), else IPv6 */
function ipOf(b: Uint8Array, v4: boolean): string {
  if (v4) return Array.from(b.subarray(12, 16)).join('.');
  return gid(b).replace(/(^|:)0{1,3}/g, '$1');
}

/** The IP CM service header at the start of a REQ's private data (port space of a service ID 0x0000000001PPpppp). */
export function decodeIpCmHeader(pd: Uint8Array): { version: number; ipVersion: number; srcIp: string; srcPort: number; dstIp: string; dstPort?: number } | undefined {
  if (pd.length < 36 || pd[0] !== 0) return undefined;
  const ipVersion = pd[1]! >> 4;
  if (ipVersion !== 4 && ipVersion !== 6) return undefined;
  return { version: pd[0]!, ipVersion, srcPort: (pd[2]! << 8) | pd[3]!, srcIp: ipOf(pd.subarray(4, 20), ipVersion === 4), dstIp: ipOf(pd.subarray(20, 36), ipVersion === 4) };
}

/** an RDMA IP CM service ID (IBA A11.2.1: 0x0000000001 | port space (8 bits) | port (16 bits)), or undefined */
function ipService(sid: bigint): { portSpace: number; port: number } | undefined {
  if (sid >> 24n !== 1n) return undefined;
  return { portSpace: Number((sid >> 16n) & 0xffn), port: Number(sid & 0xffffn) };
}

export interface CmMadDecoded { attr: number; attrName: string; header: Record<string, unknown>; fields: Record<string, unknown>; summary: string }

/** A CM MAD's header and message fields, or undefined when the bytes are not a CM MAD (class 0x07). */
export function decodeCmMad(mad: Uint8Array): CmMadDecoded | undefined {
  if (mad.length < CM_MAD.HDR_LEN || mad[1] !== CM_MAD.MGMT_CLASS) return undefined;
  const dv = new DataView(mad.buffer, mad.byteOffset, mad.byteLength);
  const attr = dv.getUint16(16);
  const attrName = CmAttr.nameOf(attr) ?? `attribute ${hex(attr, 4)}`;
  const header = {
    baseVersion: mad[0], mgmtClass: hex(mad[1]!, 2), classVersion: mad[2], method: hex(mad[3]!, 2), status: hex(dv.getUint16(4), 4),
    tid: hex(dv.getBigUint64(8), 16), attributeId: `${hex(attr, 4)} ${attrName}`, attributeModifier: hex(dv.getUint32(20), 8),
  };
  const l = CM_LAYOUTS[attr];
  if (!l || mad.length < CM_MAD.LEN) return { attr, attrName, header, fields: {}, summary: `CM ${attrName} (${mad.length} bytes)` };
  const m = mad.subarray(CM_MAD.HDR_LEN);
  const raw: Record<string, bigint> = {};
  for (const [n, byte, bit, w] of l.fields) raw[n] = bits(m, byte * 8 + bit, w);
  const fields: Record<string, unknown> = {};
  for (const [n, , , w] of l.fields) {
    const v = raw[n]!;
    fields[n] = w > 32 || /Id$|Guid$|Qkey$|qkey$/.test(n) ? hex(v, w > 32 ? 16 : 8) : /Qpn|Psn|qpn|Eecn/.test(n) ? hex(v, 6) : Number(v);
  }
  if (l.gidOff !== undefined) {
    fields.primaryLocalGid = gid(m.subarray(l.gidOff, l.gidOff + 16));
    fields.primaryRemoteGid = gid(m.subarray(l.gidOff + 16, l.gidOff + 32));
  }
  const pd = m.subarray(l.pdataOff, l.pdataOff + l.pdataLen);
  let used = pd.length;
  while (used > 0 && pd[used - 1] === 0) used--;
  fields.privateDataLength = l.pdataLen;
  fields.privateDataUsed = used;
  let ip = '';
  if (attr === CmAttr.values.REQ) {
    const svc = ipService(raw.serviceId!);
    const h = svc ? decodeIpCmHeader(pd) : undefined;
    if (svc && h) {
      fields.ipCm = { ...h, dstPort: svc.port, portSpace: hex(svc.portSpace, 2) };
      ip = ` ${h.srcIp}:${h.srcPort} -> ${h.dstIp}:${svc.port}`;
    }
  }
  if (attr === CmAttr.values.REJ) fields.reasonName = CM_REJ_REASON[Number(raw.reason)] ?? 'unknown reason';
  const c = (n: string) => hex(raw[n]!);
  let summary: string;
  switch (attr) {
    case CmAttr.values.REQ: summary = `CM REQ comm ${c('localCommId')} service ${hex(raw.serviceId!)} QPN ${c('localQpn')} PSN ${c('startingPsn')}${ip}`; break;
    case CmAttr.values.REP: summary = `CM REP comm ${c('localCommId')} -> ${c('remoteCommId')} QPN ${c('localQpn')} PSN ${c('startingPsn')}`; break;
    case CmAttr.values.REJ: summary = `CM REJ comm ${c('localCommId')} -> ${c('remoteCommId')} reason ${rejReasonText(Number(raw.reason))}`; break;
    case CmAttr.values.SIDR_REQ: case CmAttr.values.SIDR_REP: summary = `CM ${attrName} request ${c('requestId')} service ${hex(raw.serviceId!)}`; break;
    default: summary = `CM ${attrName} comm ${c('localCommId')} -> ${c('remoteCommId')}`;
  }
  return { attr, attrName, header, fields, summary };
}

/** UD SEND opcodes (BTH: UD_SEND_ONLY 0x64, UD_SEND_ONLY_WITH_IMMEDIATE 0x65) */
const UD_SEND = new Set([0x64, 0x65]);

export const cmMadDecoder: PayloadDecoder = {
  id: 'ib-cm',
  title: 'InfiniBand CM MADs on QP1 (IBA 12.6; RDMA IP CM header, Annex A11)',
  decode(input: PayloadInput) {
    if (input.destQp !== CM_MAD.GSI_QPN || !UD_SEND.has(input.opcode)) return undefined;
    const d = decodeCmMad(input.payload);
    if (!d) return undefined;
    return { summary: d.summary, fields: { mad: d.header, [d.attrName]: d.fields } };
  },
};
