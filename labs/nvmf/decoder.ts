// NVMe over RDMA capsules (NVMe-oF spec, RDMA transport binding; NVMe base spec for the SQE / CQE layout).
// A command capsule is a 64-byte submission queue entry (SQE), optionally followed by in-capsule data, sent as an
// RDMA SEND; a response capsule is the 16-byte completion queue entry (CQE), sent as SEND or SEND with Invalidate
// (the Linux target invalidates the host's rkey when the command's keyed SGL asked for it, subtype 0xF).
//
// What it claims without being told the connection carries NVMe: the first packet of a SEND whose payload is at
// least 64 bytes, says SGL (PSDT 01b: NVMe-oF requires SGLs), has an SGL1 descriptor the RDMA transport allows
// (keyed data block with subtype address / invalidate key, or data block / last segment with subtype offset) and
// an opcode of the admin, NVM or Fabrics command sets. A CQE is 16 bytes with nothing recognisable in them, so a
// response capsule is decoded only when the caller says the connection is NVMe/RDMA (input.protocol
// 'nvme-rdma'); Wireshark needs the RDMA CM exchange for the same reason. Admin and I/O opcodes share values: the
// protocol 'nvme-rdma/admin' or 'nvme-rdma/io' names the queue; without it an ambiguous opcode is named both ways.
import { startsSend } from '../../app/protocol/bth.ts';
import type { PayloadDecoder, PayloadInput } from '../../app/protocol/payload.ts';

// NVMe base spec, "Opcodes for Admin Commands" / NVM command set "Opcodes for NVM Commands"
const ADMIN: Record<number, string> = {
  0x00: 'Delete I/O Submission Queue', 0x01: 'Create I/O Submission Queue', 0x02: 'Get Log Page',
  0x04: 'Delete I/O Completion Queue', 0x05: 'Create I/O Completion Queue', 0x06: 'Identify', 0x08: 'Abort',
  0x09: 'Set Features', 0x0a: 'Get Features', 0x0c: 'Asynchronous Event Request', 0x0d: 'Namespace Management',
  0x10: 'Firmware Commit', 0x11: 'Firmware Image Download', 0x14: 'Device Self-test', 0x15: 'Namespace Attachment',
  0x18: 'Keep Alive', 0x19: 'Directive Send', 0x1a: 'Directive Receive', 0x80: 'Format NVM', 0x81: 'Security Send',
  0x82: 'Security Receive', 0x84: 'Sanitize',
};
const NVM: Record<number, string> = {
  0x00: 'Flush', 0x01: 'Write', 0x02: 'Read', 0x04: 'Write Uncorrectable', 0x05: 'Compare', 0x08: 'Write Zeroes',
  0x09: 'Dataset Management', 0x0c: 'Verify', 0x0d: 'Reservation Register', 0x0e: 'Reservation Report',
  0x11: 'Reservation Acquire', 0x15: 'Reservation Release', 0x19: 'Copy',
};
// over fabrics, I/O queues are created by Connect: the admin queue-management opcodes are not used there
const NOT_ON_FABRICS = new Set([0x00, 0x01, 0x04, 0x05]);
const FABRICS = 0x7f;
// NVM commands whose CDW10-12 are SLBA and NLB (Read, Write, Write Uncorrectable, Compare, Write Zeroes, Verify)
const LBA_RANGE = new Set([0x01, 0x02, 0x04, 0x05, 0x08, 0x0c]);
// NVMe-oF "Fabrics Command Type"
const FCTYPE: Record<number, string> = {
  0x00: 'Property Set', 0x01: 'Connect', 0x04: 'Property Get', 0x05: 'Authentication Send', 0x06: 'Authentication Receive',
  0x08: 'Disconnect',
};
// SGL descriptor type (byte 15 bits 7:4) and the subtypes the RDMA transport uses (bits 3:0)
const SGL_TYPE: Record<number, string> = {
  0x0: 'Data Block', 0x1: 'Bit Bucket', 0x2: 'Segment', 0x3: 'Last Segment', 0x4: 'Keyed Data Block', 0x5: 'Transport SGL Data Block',
};
const KEYED_SUBTYPE: Record<number, string> = { 0x0: 'Address', 0xf: 'Invalidate Key' };
const UNKEYED_SUBTYPE: Record<number, string> = { 0x0: 'Address', 0x1: 'Offset' };

const hex = (v: number | bigint, w = 0) => `0x${v.toString(16).padStart(w, '0')}`;

function view(b: Uint8Array) { return new DataView(b.buffer, b.byteOffset, b.byteLength); }

/** SGL1 (SQE bytes 24-39) as the RDMA transport uses it; undefined when the RDMA transport does not allow it */
function sgl1(sqe: Uint8Array) {
  const v = view(sqe);
  const id = sqe[39]!;
  const type = id >> 4, subtype = id & 0xf;
  const keyed = type === 0x4;
  if (keyed ? !(subtype in KEYED_SUBTYPE) : !((type === 0x0 || type === 0x3) && subtype === 0x1)) return undefined;
  const out: Record<string, unknown> = {
    identifier: hex(id, 2), type: `${hex(type)} ${SGL_TYPE[type]}`,
    subtype: `${hex(subtype)} ${(keyed ? KEYED_SUBTYPE : UNKEYED_SUBTYPE)[subtype]}`,
    address: hex(v.getBigUint64(24, true), 16),
  };
  if (keyed) {
    out.length = sqe[32]! | (sqe[33]! << 8) | (sqe[34]! << 16);   // 24 bits
    out.key = hex(v.getUint32(35, true), 8);
  } else out.length = v.getUint32(32, true);
  return out;
}

/** the name(s) of a non-Fabrics opcode; undefined when neither command set has it */
function opcodeName(opc: number, queue: 'admin' | 'io' | undefined): string | undefined {
  const admin = NOT_ON_FABRICS.has(opc) ? undefined : ADMIN[opc], nvm = NVM[opc];
  if (queue === 'admin') return admin;
  if (queue === 'io') return nvm;
  if (admin && nvm) return `${nvm} (I/O queue) | ${admin} (admin queue)`;
  return admin ?? nvm;
}

/** A 64-byte SQE as a command capsule's fields; undefined when it is not one the RDMA transport carries. */
export function decodeNvmeSqe(sqe: Uint8Array, queue?: 'admin' | 'io'): { summary: string; fields: Record<string, unknown> } | undefined {
  if (sqe.length < 64) return undefined;
  const v = view(sqe);
  const opc = sqe[0]!, flags = sqe[1]!;
  const psdt = flags >> 6, fuse = flags & 3;
  if (psdt !== 1 || fuse === 3) return undefined;   // NVMe-oF: SGL for data (PSDT 01b); FUSE 11b is reserved
  const sgl = sgl1(sqe);
  if (!sgl) return undefined;
  const cid = v.getUint16(2, true);
  const fields: Record<string, unknown> = { opcode: hex(opc, 2), cid, fuse, psdt };
  if (opc === FABRICS) {
    const fctype = sqe[4]!;
    const name = FCTYPE[fctype];
    if (!name) return undefined;
    Object.assign(fields, { opcodeName: 'Fabrics', fctype: `${hex(fctype, 2)} ${name}`, sgl1: sgl });
    let detail = '';
    if (fctype === 0x01) {   // Connect: RECFMT, QID, SQSIZE (0's based), CATTR, KATO
      const qid = v.getUint16(42, true), sqsize = v.getUint16(44, true);
      Object.assign(fields, { recfmt: v.getUint16(40, true), qid, sqsize, sqEntries: sqsize + 1, cattr: hex(sqe[46]!, 2), katoMs: v.getUint32(48, true) });
      detail = ` QID ${qid}${qid === 0 ? ' (admin)' : ''} SQSIZE ${sqsize + 1}`;
    } else if (fctype === 0x00 || fctype === 0x04) {   // Property Set / Get: ATTRIB (size), OFST (register offset), VALUE
      const size = (sqe[40]! & 7) === 1 ? 8 : 4;
      Object.assign(fields, { attribSize: size, offset: hex(v.getUint32(44, true), 2) });
      if (fctype === 0x00) fields.value = hex(size === 8 ? v.getBigUint64(48, true) : BigInt(v.getUint32(48, true)));
      detail = ` OFST ${fields.offset}`;
    }
    return { summary: `NVMe-oF ${name} CID ${cid}${detail}`, fields };
  }
  const name = opcodeName(opc, queue);
  if (!name) return undefined;
  const nsid = v.getUint32(4, true);
  Object.assign(fields, { opcodeName: name, nsid, sgl1: sgl });
  let detail = '';
  if (queue !== 'admin' && LBA_RANGE.has(opc)) {   // SLBA = CDW10 | CDW11 << 32; CDW12: NLB (0's based) bits 15:0, FUA bit 30, LR bit 31
    const slba = v.getBigUint64(40, true), cdw12 = v.getUint32(48, true);
    const nlb = (cdw12 & 0xffff) + 1;
    const io = { slba: slba <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(slba) : hex(slba), nlb, fua: !!(cdw12 & (1 << 30)), lr: !!(cdw12 >>> 31) };
    // an opcode both command sets use gets its I/O reading as a sub-record, named so
    if (name.includes('|')) fields.ifIo = io;
    else { Object.assign(fields, io); detail = ` SLBA ${io.slba} NLB ${nlb}`; }
  }
  return { summary: `NVMe ${name} CID ${cid} NSID ${nsid}${detail}`, fields };
}

/** A 16-byte CQE as a response capsule's fields. */
export function decodeNvmeCqe(cqe: Uint8Array): { summary: string; fields: Record<string, unknown> } | undefined {
  if (cqe.length !== 16) return undefined;
  const v = view(cqe);
  const cid = v.getUint16(12, true), status = v.getUint16(14, true);
  const sc = (status >> 1) & 0xff, sct = (status >> 9) & 7;
  const fields = {
    dw0: hex(v.getUint32(0, true), 8), dw1: hex(v.getUint32(4, true), 8), sqhd: v.getUint16(8, true), sqid: v.getUint16(10, true),
    cid, status: hex(status, 4), phase: status & 1, sc: hex(sc, 2), sct, crd: (status >> 12) & 3, more: !!(status & (1 << 14)),
    dnr: !!(status & (1 << 15)),
  };
  const verdict = sc === 0 && sct === 0 ? 'success' : `SCT ${sct} SC ${hex(sc, 2)}${fields.dnr ? ' DNR' : ''}`;
  return { summary: `NVMe CQE CID ${cid} SQHD ${fields.sqhd} ${verdict}`, fields };
}

export const nvmeRdmaDecoder: PayloadDecoder = {
  id: 'nvme-rdma',
  title: 'NVMe over RDMA capsules (NVMe-oF RDMA transport: 64-byte SQE command capsules, 16-byte CQE responses)',
  decode(input: PayloadInput) {
    if (!startsSend(input.opcode)) return undefined;
    const told = input.protocol?.startsWith('nvme-rdma') ?? false;
    const queue = input.protocol === 'nvme-rdma/admin' ? 'admin' : input.protocol === 'nvme-rdma/io' ? 'io' : undefined;
    if (input.payload.length >= 64) {
      const r = decodeNvmeSqe(input.payload.subarray(0, 64), queue);
      if (r && input.payload.length > 64) r.fields.inCapsuleBytes = input.payload.length - 64;
      if (r) return r;
    }
    if (told && input.payload.length === 16) return decodeNvmeCqe(input.payload);
    return undefined;
  },
};
