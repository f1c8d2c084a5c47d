// Identify data structures of the software target (NVMe base spec "Identify Controller Data Structure", "Identify
// Namespace Data Structure", "Active Namespace ID list"; NVMe-oF bytes 1792+ of Identify Controller). Values follow
// nvmet's admin-cmd.c (nvmet_execute_identify_ctrl / _ns) where the lab has no reason to differ.
import { IdCtrl, IdNs } from './spec.ts';

const dv = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
const putAscii = (b: Uint8Array, off: number, len: number, s: string) => { b.fill(0x20, off, off + len); b.set(new TextEncoder().encode(s.slice(0, len)), off); };

export interface CtrlIdentity { cntlid: number; subnqn: string; queueDepth: number; inlineSize: number; maxIo: number; nn: number }

/** Identify Controller (CNS 01h), 4096 bytes. */
export function buildIdentifyCtrl(c: CtrlIdentity): Uint8Array {
  const b = new Uint8Array(4096), v = dv(b);
  putAscii(b, IdCtrl.SN, 20, 'VLAB0000000000000001');
  putAscii(b, IdCtrl.MN, 40, 'Verbs Lab NVMe-oF software target');
  putAscii(b, IdCtrl.FR, 8, '1.0');
  // MDTS in units of the minimum page size (4 KiB), as a power of two
  b[IdCtrl.MDTS] = Math.log2(c.maxIo / 4096);
  v.setUint16(IdCtrl.CNTLID, c.cntlid, true);
  v.setUint32(IdCtrl.VER, 0x00010300, true);
  v.setUint16(IdCtrl.KAS, 100, true);          // Keep Alive granularity: 100 ms units (nvmet sets KAS 100)
  b[IdCtrl.SQES] = 0x66; b[IdCtrl.CQES] = 0x44; // required and maximum entry sizes: 64-byte SQE, 16-byte CQE
  v.setUint16(IdCtrl.MAXCMD, c.queueDepth, true);
  v.setUint32(IdCtrl.NN, c.nn, true);
  // SGLS: bit 0 SGLs supported, bit 2 keyed SGL data block (nvmet: NVME_CTRL_SGLS_BYTE_ALIGNED | KSDBDS), bit 20
  // offset addressing for in-capsule data
  v.setUint32(IdCtrl.SGLS, (1 << 0) | (1 << 2) | (1 << 20), true);
  b.set(new TextEncoder().encode(c.subnqn), IdCtrl.SUBNQN);
  v.setUint32(IdCtrl.IOCCSZ, (64 + c.inlineSize) / 16, true);
  v.setUint32(IdCtrl.IORCSZ, 1, true);
  v.setUint16(IdCtrl.ICDOFF, 0, true);
  b[IdCtrl.FCATT] = 0;   // dynamic controller model
  b[IdCtrl.MSDBD] = 1;   // one SGL descriptor per capsule
  return b;
}

/** Identify Namespace (CNS 00h): one LBA format (LBAF0) with no metadata; LBADS is log2 of the LBA size. */
export function buildIdentifyNs(blocks: number, lbaSize: number): Uint8Array {
  const b = new Uint8Array(4096), v = dv(b);
  v.setBigUint64(IdNs.NSZE, BigInt(blocks), true);
  v.setBigUint64(IdNs.NCAP, BigInt(blocks), true);
  v.setBigUint64(IdNs.NUSE, BigInt(blocks), true);
  b[IdNs.NLBAF] = 0; b[IdNs.FLBAS] = 0;
  v.setUint32(IdNs.LBAF0, Math.log2(lbaSize) << 16, true);
  return b;
}

/** Active Namespace ID list (CNS 02h): NSIDs above the command's NSID, ascending, zero-terminated. */
export function buildNsList(nsids: number[]): Uint8Array {
  const b = new Uint8Array(4096), v = dv(b);
  nsids.forEach((n, i) => v.setUint32(i * 4, n, true));
  return b;
}
