// The payload decoder registry exists once per language (app/protocol/decoders.ts for the console, the device's
// native/include/vl/decoders.h for its event text): on the same packets both must claim the same payloads with the
// same decoder and give the same summary and fields. Packets: the capsules of a real Linux NVMe-oF session
// (fixtures/nvme-rdma-capsules.pcap) and capsules built here (Read / Write with LBA ranges, an admin Identify, an
// ambiguous opcode, Property Set, a CQE with an error status, payloads no decoder claims), each decoded without a
// protocol, as 'nvme-rdma', 'nvme-rdma/admin' and 'nvme-rdma/io'.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BthOpcode } from './bth.ts';
import { decodePayload, payloadOfPacket } from './decoders.ts';
import { loadAddon } from '../host/native.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const addon = loadAddon();   // throws when the addon is not built: this suite fails, it does not skip

function udpPayloads(file: string): Uint8Array[] {
  const b = fs.readFileSync(file);
  const out: Uint8Array[] = [];
  for (let at = 24; at + 16 <= b.length;) {
    const incl = b.readUInt32LE(at + 8);
    const f = b.subarray(at + 16, at + 16 + incl);
    at += 16 + incl;
    const ihl = (f[14]! & 0xf) * 4;
    out.push(new Uint8Array(f.subarray(14 + ihl + 8)));
  }
  return out;
}

/** a RoCEv2 UDP payload: BTH (opcode, dest QP 0x11) + payload (padded) + a zero ICRC (not checked by decoding) */
function packet(opcode: number, payload: Uint8Array): Uint8Array {
  const pad = (4 - (payload.length % 4)) % 4;
  const b = new Uint8Array(12 + payload.length + pad + 4);
  b[0] = opcode; b[1] = pad << 4; b[2] = 0xff; b[3] = 0xff; b[7] = 0x11; b[8] = 0x80;
  b.set(payload, 12);
  return b;
}
function sqe(opc: number, f: (v: DataView, b: Uint8Array) => void, len = 64): Uint8Array {
  const b = new Uint8Array(len); const v = new DataView(b.buffer);
  b[0] = opc; b[1] = 0x40; v.setUint16(2, 7, true); v.setUint32(4, 1, true);
  v.setBigUint64(24, 0x7f0000001000n, true); b[32] = 0x00; b[33] = 0x10; b[34] = 0; v.setUint32(35, 0x1234, true); b[39] = 0x40;   // keyed, 4096 bytes
  f(v, b);
  return b;
}
const built: [string, Uint8Array][] = [
  ['Read SLBA 8 NLB 16', packet(BthOpcode.RC_SEND_ONLY, sqe(0x02, (v) => { v.setBigUint64(40, 8n, true); v.setUint32(48, 15, true); }))],
  ['Write FUA, huge SLBA, in-capsule data', packet(BthOpcode.RC_SEND_ONLY, sqe(0x01, (v, b) => { v.setBigUint64(40, 1n << 60n, true); v.setUint32(48, (1 << 30) | 7, true); b[39] = 0x01; }, 96))],
  ['Identify', packet(BthOpcode.RC_SEND_ONLY, sqe(0x06, () => {}))],
  ['Verify (LBA) with invalidate-key SGL', packet(BthOpcode.RC_SEND_FIRST, sqe(0x0c, (v, b) => { b[39] = 0x4f; v.setUint32(48, 0, true); }))],
  ['Property Set 8 bytes', packet(BthOpcode.RC_SEND_ONLY, sqe(0x7f, (v, b) => { b[4] = 0x00; b[40] = 1; v.setUint32(44, 0x14, true); v.setBigUint64(48, 0x460001n, true); }))],
  ['Disconnect', packet(BthOpcode.RC_SEND_ONLY, sqe(0x7f, (_v, b) => { b[4] = 0x08; }))],
  ['CQE error DNR', packet(BthOpcode.RC_SEND_ONLY, (() => { const c = new Uint8Array(16); const v = new DataView(c.buffer); v.setUint16(8, 3, true); v.setUint16(12, 7, true); v.setUint16(14, (1 << 15) | (0x02 << 9) | (0x81 << 1) | 1, true); return c; })())],
  ['PRP (not NVMe-oF)', packet(BthOpcode.RC_SEND_ONLY, sqe(0x02, (_v, b) => { b[1] = 0x00; }))],
  ['unknown Fabrics type', packet(BthOpcode.RC_SEND_ONLY, sqe(0x7f, (_v, b) => { b[4] = 0x33; }))],
  ['a WRITE payload', packet(BthOpcode.RC_RDMA_WRITE_MIDDLE, sqe(0x02, () => {}))],
  ['UD SEND', packet(BthOpcode.UD_SEND_ONLY, new Uint8Array(8))],
];

/** the TypeScript decode as the C++ one reports it: nested records flattened to dotted names, values as strings */
function flat(o: Record<string, unknown>, pre = '', out: Record<string, string> = {}): Record<string, string> {
  for (const [k, v] of Object.entries(o)) {
    if (v && typeof v === 'object') flat(v as Record<string, unknown>, `${pre}${k}.`, out);
    else out[`${pre}${k}`] = String(v);
  }
  return out;
}
function record(udp: Uint8Array): Record<string, unknown> {
  const opcode = udp[0]!, pad = (udp[1]! >> 4) & 3;
  const ext = opcode === BthOpcode.RC_SEND_ONLY_WITH_INVALIDATE ? 4 : (opcode === BthOpcode.UD_SEND_ONLY ? 8 : 0);
  return { hex: Buffer.from(udp).toString('hex'), opcode, destQp: (udp[5]! << 16) | (udp[6]! << 8) | udp[7]!, pad, payloadLen: udp.length - 12 - ext - pad - 4 };
}

const cases: [string, Uint8Array][] = [
  ...udpPayloads(path.join(here, 'fixtures/nvme-rdma-capsules.pcap')).map((u, i) => [`fixture frame ${i + 1}`, u] as [string, Uint8Array]),
  ...built,
];

/** both decoders on one packet: the same claim, summary and fields; returns the summary (or null) */
function agree(udp: Uint8Array, protocol?: string): string | null {
  const input = payloadOfPacket(record(udp));
  const ts = input ? decodePayload({ ...input, ...(protocol ? { protocol } : {}) }) : undefined;
  const cc = addon.decodePayloadNative(udp, protocol);
  if (!ts) { expect(cc).toBeNull(); return null; }
  expect(cc).not.toBeNull();
  expect(cc!.protocol).toBe(ts.protocol);
  expect(cc!.summary).toBe(ts.summary);
  expect(cc!.fields).toEqual(flat(ts.fields));
  return ts.summary;
}

describe('C++ and TypeScript payload decoders agree', () => {
  for (const protocol of [undefined, 'nvme-rdma', 'nvme-rdma/admin', 'nvme-rdma/io']) {
    it.each(cases)(`%s (protocol ${protocol ?? 'unknown'})`, (_what, udp) => { agree(udp, protocol); });
  }
  it('every opcode on an admin and an I/O queue, and every Fabrics command type: both opcode tables name it alike', () => {
    const named = new Set<string>();
    for (const protocol of ['nvme-rdma/admin', 'nvme-rdma/io', undefined]) {
      for (let opc = 0; opc < 256; opc++) {
        const s = agree(packet(BthOpcode.RC_SEND_ONLY, sqe(opc, () => {})), protocol);
        if (s) named.add(s.split(' CID')[0]!);
      }
    }
    for (let t = 0; t < 256; t++) agree(packet(BthOpcode.RC_SEND_ONLY, sqe(0x7f, (_v, b) => { b[4] = t; })), 'nvme-rdma/admin');
    expect(named.size).toBeGreaterThan(30);   // the admin and NVM tables (22 + 13 names) were reached
    for (const n of ['NVMe Sanitize', 'NVMe Keep Alive', 'NVMe Copy', 'NVMe Dataset Management']) expect(named).toContain(n);
  });
  it('the cases exercise both claimed and unclaimed payloads, commands and responses', () => {
    const got = cases.map(([, u]) => addon.decodePayloadNative(u, 'nvme-rdma')?.summary ?? null);
    expect(got.filter((s) => s === null).length).toBeGreaterThanOrEqual(3);
    expect(got.some((s) => s?.startsWith('NVMe CQE'))).toBe(true);
    expect(got.some((s) => s?.includes('SLBA'))).toBe(true);
    expect(got.some((s) => s?.startsWith('NVMe-oF Connect'))).toBe(true);
  });
});
