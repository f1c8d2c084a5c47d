// NVMe/RDMA capsules byte for byte (NVMe base spec "Submission Queue Entry" / "Completion Queue Entry"; NVMe-oF 1.1
// "Capsules", the Fabrics commands and the RDMA transport binding; Linux include/linux/nvme.h structs). The
// initiator builds command capsules and reads response capsules here; the target parses command capsules and
// builds responses here. Naming for people is the payload decoder's job (labs/nvmf/decoder.ts).
import { ConnectData, ConnectSqe, FABRICS_OPC, Fctype, PSDT_SGL, SglId } from './spec.ts';

export const SQE_LEN = 64;
export const CQE_LEN = 16;

const dv = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);

/** SGL1 as the RDMA transport carries it (SQE bytes 24-39). */
export type Sgl =
  | { kind: 'keyed'; addr: bigint; length: number; key: number; invalidate: boolean }
  | { kind: 'inline'; offset: number; length: number };

export interface SqeFields {
  opc: number; cid: number; nsid?: number; sgl?: Sgl;
  /** CDW10..CDW15 (SQE bytes 40-63) */
  cdw?: Partial<Record<10 | 11 | 12 | 13 | 14 | 15, number>>;
  /** Fabrics: FCTYPE (byte 4 overlays NSID's first byte) */
  fctype?: number;
}

function putSgl(b: Uint8Array, s: Sgl): void {
  const v = dv(b);
  if (s.kind === 'keyed') {
    // Keyed Data Block: address 24-31, length 32-34 (24 bits), key 35-38, identifier 39
    if (s.length < 0 || s.length > 0xffffff) throw new RangeError(`keyed SGL length ${s.length}: 24 bits`);
    v.setBigUint64(24, s.addr, true);
    b[32] = s.length & 0xff; b[33] = (s.length >> 8) & 0xff; b[34] = (s.length >> 16) & 0xff;
    v.setUint32(35, s.key >>> 0, true);
    b[39] = s.invalidate ? SglId.KEYED_INV : SglId.KEYED_ADDR;
  } else {
    // Data Block, subtype Offset: offset into the in-capsule data 24-31, length 32-35, identifier 39
    v.setBigUint64(24, BigInt(s.offset), true);
    v.setUint32(32, s.length >>> 0, true);
    b[39] = SglId.DATA_OFFSET;
  }
}

/** A 64-byte SQE: PSDT 01b (SGL), FUSE 0. */
export function encodeSqe(f: SqeFields): Uint8Array {
  const b = new Uint8Array(SQE_LEN), v = dv(b);
  b[0] = f.opc; b[1] = PSDT_SGL;
  v.setUint16(2, f.cid, true);
  if (f.fctype !== undefined) b[4] = f.fctype;
  else v.setUint32(4, f.nsid ?? 0, true);
  if (f.sgl) putSgl(b, f.sgl);
  for (const [k, val] of Object.entries(f.cdw ?? {})) v.setUint32(40 + (Number(k) - 10) * 4, (val as number) >>> 0, true);
  return b;
}

/** What a target reads of a command capsule. */
export interface ParsedSqe {
  opc: number; psdt: number; fuse: number; cid: number; nsid: number; fctype: number;
  /** undefined: SGL1's identifier is not one the RDMA transport allows (the target answers SC 0x11) */
  sgl?: Sgl; sglId: number;
  cdw10: number; cdw11: number; cdw12: number; cdw13: number; cdw14: number; cdw15: number;
}

export function parseSqe(b: Uint8Array): ParsedSqe {
  if (b.length < SQE_LEN) throw new RangeError(`an SQE is 64 bytes, got ${b.length}`);
  const v = dv(b), id = b[39]!;
  let sgl: Sgl | undefined;
  if (id === SglId.KEYED_ADDR || id === SglId.KEYED_INV) {
    sgl = { kind: 'keyed', addr: v.getBigUint64(24, true), length: b[32]! | (b[33]! << 8) | (b[34]! << 16), key: v.getUint32(35, true), invalidate: id === SglId.KEYED_INV };
  } else if (id === SglId.DATA_OFFSET) {
    const off = v.getBigUint64(24, true);
    sgl = { kind: 'inline', offset: off > 0xffffffffn ? 0xffffffff : Number(off), length: v.getUint32(32, true) };
  }
  return {
    opc: b[0]!, psdt: b[1]! >> 6, fuse: b[1]! & 3, cid: v.getUint16(2, true), nsid: v.getUint32(4, true), fctype: b[4]!,
    sgl, sglId: id,
    cdw10: v.getUint32(40, true), cdw11: v.getUint32(44, true), cdw12: v.getUint32(48, true),
    cdw13: v.getUint32(52, true), cdw14: v.getUint32(56, true), cdw15: v.getUint32(60, true),
  };
}

// ---- Fabrics command capsules (NVMe-oF "Fabrics Command"; nvme.h nvmf_connect_command, nvmf_property_*_command)

/** Connect: RECFMT 0, QID, SQSIZE (0's based), CATTR, KATO (ms); SGL1 points at the 1024-byte Connect data. */
export function connectSqe(a: { cid: number; qid: number; sqsize: number; kato: number; cattr?: number; sgl: Sgl }): Uint8Array {
  const b = encodeSqe({ opc: FABRICS_OPC, cid: a.cid, fctype: Fctype.CONNECT, sgl: a.sgl }), v = dv(b);
  v.setUint16(ConnectSqe.RECFMT, 0, true);
  v.setUint16(ConnectSqe.QID, a.qid, true);
  v.setUint16(ConnectSqe.SQSIZE, a.sqsize, true);
  b[ConnectSqe.CATTR] = a.cattr ?? 0;
  v.setUint32(ConnectSqe.KATO, a.kato >>> 0, true);
  return b;
}

export interface ConnectFields { recfmt: number; qid: number; sqsize: number; cattr: number; kato: number }
export function parseConnectSqe(b: Uint8Array): ConnectFields {
  const v = dv(b);
  return { recfmt: v.getUint16(ConnectSqe.RECFMT, true), qid: v.getUint16(ConnectSqe.QID, true), sqsize: v.getUint16(ConnectSqe.SQSIZE, true), cattr: b[ConnectSqe.CATTR]!, kato: v.getUint32(ConnectSqe.KATO, true) };
}

const ascii = new TextEncoder(), unascii = new TextDecoder();
/** The 1024-byte Connect data: HOSTID (16 bytes), CNTLID, SUBNQN and HOSTNQN (NUL-padded 256-byte strings). */
export function connectData(a: { hostid: Uint8Array; cntlid: number; subnqn: string; hostnqn: string }): Uint8Array {
  const b = new Uint8Array(ConnectData.SIZE);
  if (a.hostid.length !== 16) throw new RangeError('HOSTID is 16 bytes');
  b.set(a.hostid, ConnectData.HOSTID);
  dv(b).setUint16(ConnectData.CNTLID, a.cntlid, true);
  for (const [off, s] of [[ConnectData.SUBNQN, a.subnqn], [ConnectData.HOSTNQN, a.hostnqn]] as const) {
    const e = ascii.encode(s);
    if (e.length >= ConnectData.NQN_LEN) throw new RangeError(`an NQN is at most 255 bytes (${s.length})`);
    b.set(e, off);
  }
  return b;
}
const nqnAt = (b: Uint8Array, off: number) => { const s = b.subarray(off, off + ConnectData.NQN_LEN); const z = s.indexOf(0); return unascii.decode(z < 0 ? s : s.subarray(0, z)); };
export function parseConnectData(b: Uint8Array): { hostid: Uint8Array; cntlid: number; subnqn: string; hostnqn: string } {
  return { hostid: b.slice(0, 16), cntlid: dv(b).getUint16(ConnectData.CNTLID, true), subnqn: nqnAt(b, ConnectData.SUBNQN), hostnqn: nqnAt(b, ConnectData.HOSTNQN) };
}

/** Property Get: ATTRIB byte 40 (0: 4 bytes, 1: 8 bytes), OFST bytes 44-47. The Linux host sends SGL1 as a keyed
 *  descriptor of length 0 (a capsule with no data). */
export function propertyGetSqe(a: { cid: number; offset: number; size: 4 | 8 }): Uint8Array {
  const b = encodeSqe({ opc: FABRICS_OPC, cid: a.cid, fctype: Fctype.PROPERTY_GET, sgl: { kind: 'keyed', addr: 0n, length: 0, key: 0, invalidate: false } });
  b[40] = a.size === 8 ? 1 : 0;
  dv(b).setUint32(44, a.offset, true);
  return b;
}
/** Property Set: ATTRIB, OFST, VALUE bytes 48-55. */
export function propertySetSqe(a: { cid: number; offset: number; size: 4 | 8; value: bigint }): Uint8Array {
  const b = encodeSqe({ opc: FABRICS_OPC, cid: a.cid, fctype: Fctype.PROPERTY_SET, sgl: { kind: 'keyed', addr: 0n, length: 0, key: 0, invalidate: false } });
  b[40] = a.size === 8 ? 1 : 0;
  const v = dv(b);
  v.setUint32(44, a.offset, true);
  v.setBigUint64(48, a.value, true);
  return b;
}
export function parseProperty(b: Uint8Array): { size: 4 | 8; offset: number; value: bigint } {
  const v = dv(b);
  return { size: (b[40]! & 7) === 1 ? 8 : 4, offset: v.getUint32(44, true), value: v.getBigUint64(48, true) };
}

// ---- I/O commands (NVM command set): SLBA = CDW10 | CDW11 << 32; CDW12 NLB bits 15:0, 0's based

export function rwSqe(a: { opc: number; cid: number; nsid: number; slba: bigint; nlb: number; sgl: Sgl }): Uint8Array {
  if (a.nlb < 1 || a.nlb > 0x10000) throw new RangeError(`NLB ${a.nlb}: 1..65536 blocks`);
  return encodeSqe({ opc: a.opc, cid: a.cid, nsid: a.nsid, sgl: a.sgl, cdw: { 10: Number(a.slba & 0xffffffffn), 11: Number(a.slba >> 32n), 12: a.nlb - 1 } });
}
export const slbaOf = (p: ParsedSqe): bigint => BigInt(p.cdw10 >>> 0) | (BigInt(p.cdw11 >>> 0) << 32n);
export const nlbOf = (p: ParsedSqe): number => (p.cdw12 & 0xffff) + 1;

// ---- response capsule

export interface Cqe { dw0: number; dw1: number; sqhd: number; sqid: number; cid: number; status: number }
export function encodeCqe(c: Cqe): Uint8Array {
  const b = new Uint8Array(CQE_LEN), v = dv(b);
  v.setUint32(0, c.dw0 >>> 0, true); v.setUint32(4, c.dw1 >>> 0, true);
  v.setUint16(8, c.sqhd, true); v.setUint16(10, c.sqid, true); v.setUint16(12, c.cid, true); v.setUint16(14, c.status, true);
  return b;
}
export function parseCqe(b: Uint8Array): Cqe & { sc: number; sct: number; dnr: boolean } {
  if (b.length < CQE_LEN) throw new RangeError(`a CQE is 16 bytes, got ${b.length}`);
  const v = dv(b), status = v.getUint16(14, true);
  return {
    dw0: v.getUint32(0, true), dw1: v.getUint32(4, true), sqhd: v.getUint16(8, true), sqid: v.getUint16(10, true),
    cid: v.getUint16(12, true), status, sc: (status >> 1) & 0xff, sct: (status >> 9) & 7, dnr: !!(status & 0x8000),
  };
}
