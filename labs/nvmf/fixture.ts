// Reads the lab's fixture capture (fixtures/linux-nvme-rdma-cm.pcap, a classic pcap of Ethernet / IPv4 / UDP
// RoCEv2 frames): per frame the IPv4 addresses and the bytes after the UDP header (BTH .. ICRC). Tests only.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/linux-nvme-rdma-cm.pcap');

export interface RoceFrame { src: string; dst: string; roce: Uint8Array }

export function roceFrames(file = FIXTURE): RoceFrame[] {
  const b = fs.readFileSync(file);
  if (b.readUInt32LE(0) !== 0xa1b2c3d4) throw new Error(`${file}: not a classic little-endian pcap`);
  const out: RoceFrame[] = [];
  for (let at = 24; at + 16 <= b.length;) {
    const incl = b.readUInt32LE(at + 8);
    const f = b.subarray(at + 16, at + 16 + incl);
    at += 16 + incl;
    const ihl = (f[14]! & 0xf) * 4;
    if (f.readUInt16BE(12) !== 0x0800 || f[23] !== 17 || f.readUInt16BE(14 + ihl + 2) !== 4791) throw new Error('not a RoCEv2 frame');
    out.push({ src: Array.from(f.subarray(26, 30)).join('.'), dst: Array.from(f.subarray(30, 34)).join('.'), roce: new Uint8Array(f.subarray(14 + ihl + 8)) });
  }
  return out;
}

/** the payload of a RoCEv2 packet: after BTH (12) and the extension headers of its opcode, before pad and ICRC */
export function payloadOf(roce: Uint8Array): Uint8Array {
  const op = roce[0]!, pad = (roce[1]! >> 4) & 3;
  const ext = op === 0x64 ? 8 /* DETH */ : op === 0x17 ? 4 /* IETH */ : op === 0x0c ? 16 /* RETH */ : op === 0x10 ? 4 /* AETH */ : 0;
  return roce.subarray(12 + ext, roce.length - pad - 4);
}
