// The payload decoder registry and its NVMe/RDMA decoder, over capsules of a real Linux NVMe-oF session
// (fixtures/nvme-rdma-capsules.pcap; how it was captured: fixtures/README.md). Expected values: Wireshark's.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BthOpcode } from './bth.ts';
import { decodePayload, payloadOfPacket, registerDecoder, registeredDecoders, type PayloadDecoder } from './decoders.ts';
import { decodeNvmeCqe, decodeNvmeSqe } from '../../labs/nvmf/decoder.ts';
import type { DeviceEvent } from './messages.ts';
import { parseScenarioText } from '../scenario/load.ts';
import { ScenarioRun } from '../scenario/run.ts';
import { needAddon } from '../scenario/testlib.ts';
import { LAB_DECODERS } from './labs.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

/** the UDP payloads (BTH..ICRC) of a classic little-endian pcap of Ethernet / IPv4 / UDP frames */
function udpPayloads(file: string): Uint8Array[] {
  const b = fs.readFileSync(file);
  expect(b.readUInt32LE(0)).toBe(0xa1b2c3d4);
  const out: Uint8Array[] = [];
  for (let at = 24; at + 16 <= b.length;) {
    const incl = b.readUInt32LE(at + 8);
    const f = b.subarray(at + 16, at + 16 + incl);
    at += 16 + incl;
    expect(f.readUInt16BE(12)).toBe(0x0800);                 // IPv4
    const ihl = (f[14]! & 0xf) * 4;
    expect(f[14 + 9]).toBe(17);                              // UDP
    expect(f.readUInt16BE(14 + ihl + 2)).toBe(4791);         // RoCEv2
    out.push(new Uint8Array(f.subarray(14 + ihl + 8)));
  }
  return out;
}

/** a packet record as events carry it (the transport headers decoded; here for the two opcodes in the fixture) */
function record(udp: Uint8Array): Record<string, unknown> {
  const opcode = udp[0]!, pad = (udp[1]! >> 4) & 3;
  const ext = opcode === BthOpcode.RC_SEND_ONLY_WITH_INVALIDATE ? 4 : 0;   // IETH
  expect([BthOpcode.RC_SEND_ONLY, BthOpcode.RC_SEND_ONLY_WITH_INVALIDATE]).toContain(opcode);
  const hex = Buffer.from(udp).toString('hex');
  return { hex, opcode, destQp: (udp[5]! << 16) | (udp[6]! << 8) | udp[7]!, pad, payloadLen: udp.length - 12 - ext - pad - 4 };
}

const frames = udpPayloads(path.join(here, 'fixtures/nvme-rdma-capsules.pcap'));
const input = (i: number, protocol?: string) => ({ ...payloadOfPacket(record(frames[i]!))!, ...(protocol ? { protocol } : {}) });

describe('NVMe/RDMA command capsules (claimed without being told)', () => {
  it('the fixture is what its note says', () => {
    expect(frames).toHaveLength(8);
    expect(frames.map((f) => input(frames.indexOf(f)).payload.length)).toEqual([64, 16, 64, 16, 64, 16, 64, 16]);
  });

  it('Fabrics Connect: QID, SQSIZE (0\'s based), KATO, keyed SGL with invalidate', () => {
    const d = decodePayload(input(0))!;
    expect(d.protocol).toBe('nvme-rdma');
    expect(d.summary).toBe('NVMe-oF Connect CID 0 QID 0 (admin) SQSIZE 32');
    expect(d.fields).toMatchObject({ opcode: '0x7f', cid: 0, psdt: 1, fctype: '0x01 Connect', recfmt: 0, qid: 0, sqsize: 31, sqEntries: 32, katoMs: 5000 });
    expect(d.fields.sgl1).toEqual({ identifier: '0x4f', type: '0x4 Keyed Data Block', subtype: '0xf Invalidate Key', address: '0xffff88acc2300c00', length: 1024, key: '0x00000310' });
  });

  it('Fabrics Property Get of CAP (8 bytes at offset 0)', () => {
    const d = decodePayload(input(2))!;
    expect(d.summary).toBe('NVMe-oF Property Get CID 1 OFST 0x00');
    expect(d.fields).toMatchObject({ fctype: '0x04 Property Get', attribSize: 8, offset: '0x00' });
  });

  it('NVMe Write and Read on the I/O queue: NSID, SLBA, NLB, the host buffer\'s address, length and rkey', () => {
    const w = decodePayload(input(6, 'nvme-rdma/io'))!;
    expect(w.summary).toBe('NVMe Write CID 4 NSID 1 SLBA 0 NLB 128');
    expect(w.fields).toMatchObject({ opcode: '0x01', opcodeName: 'Write', nsid: 1, slba: 0, nlb: 128, fua: false });
    expect(w.fields.sgl1).toMatchObject({ address: '0xffff88acef738000', length: 65536, key: '0x000023f7' });
    // Write has one meaning over fabrics (Create I/O SQ is not used there): the same without the queue
    expect(decodePayload(input(6))!.summary).toBe(w.summary);
    const r = decodePayload(input(4, 'nvme-rdma/io'))!;
    expect(r.summary).toBe('NVMe Read CID 1 NSID 1 SLBA 0 NLB 8');
    expect(r.fields.sgl1).toMatchObject({ subtype: '0xf Invalidate Key', address: '0xffff88acd5ca6000', length: 4096, key: '0x000023f4' });
  });

  it('an opcode both command sets use is named both ways when the queue is not known', () => {
    const r = decodePayload(input(4))!;
    expect(r.fields.opcodeName).toBe('Read (I/O queue) | Get Log Page (admin queue)');
    expect(r.fields.ifIo).toMatchObject({ slba: 0, nlb: 8 });
    expect(decodePayload(input(4, 'nvme-rdma/admin'))!.fields.opcodeName).toBe('Get Log Page');
  });
});

describe('NVMe/RDMA response capsules (only when told the connection is NVMe/RDMA)', () => {
  it('a 16-byte SEND is nobody\'s without context', () => {
    for (const i of [1, 3, 5, 7]) expect(decodePayload(input(i))).toBeUndefined();
  });
  it('CQEs: SQHD, SQID, CID, status; Property Get returns CAP in DW0/DW1', () => {
    expect(decodePayload(input(7, 'nvme-rdma'))!.fields).toMatchObject({ sqhd: 5, sqid: 1, cid: 4, status: '0x0000', sct: 0, sc: '0x00', dnr: false });
    expect(decodePayload(input(7, 'nvme-rdma'))!.summary).toBe('NVMe CQE CID 4 SQHD 5 success');
    expect(decodePayload(input(1, 'nvme-rdma'))!.fields).toMatchObject({ sqhd: 1, sqid: 0, cid: 0 });
    expect(decodePayload(input(5, 'nvme-rdma'))!.fields).toMatchObject({ sqhd: 2, sqid: 1, cid: 1 });
    expect(decodePayload(input(3, 'nvme-rdma'))!.fields).toMatchObject({ dw0: '0x0f00007f', dw1: '0x00000820', sqhd: 2, cid: 1 });
  });
  it('status fields: SC, SCT and DNR from bits 8:1, 11:9 and 15', () => {
    const cqe = new Uint8Array(16);
    new DataView(cqe.buffer).setUint16(14, (1 << 15) | (0 << 9) | (0x0b << 1), true);   // invalid namespace, DNR
    expect(decodeNvmeCqe(cqe)!.summary).toBe('NVMe CQE CID 0 SQHD 0 SCT 0 SC 0x0b DNR');
  });
});

describe('what is not a command capsule', () => {
  it('PRP instead of SGL, a reserved FUSE, an SGL type the RDMA transport does not use, an unknown opcode', () => {
    const base = input(6).payload;
    const tweak = (at: number, v: number) => { const c = base.slice(); c[at] = v; return c; };
    expect(decodeNvmeSqe(base)).toBeDefined();
    expect(decodeNvmeSqe(tweak(1, 0x00))).toBeUndefined();        // PSDT 00b: PRP
    expect(decodeNvmeSqe(tweak(1, 0x43))).toBeUndefined();        // FUSE 11b
    expect(decodeNvmeSqe(tweak(39, 0x10))).toBeUndefined();       // bit bucket
    expect(decodeNvmeSqe(tweak(39, 0x45))).toBeUndefined();       // keyed, subtype 5
    expect(decodeNvmeSqe(tweak(0, 0x55))).toBeUndefined();        // no such opcode
    expect(decodeNvmeSqe(base.subarray(0, 63))).toBeUndefined();
  });
  it('only the start of a SEND is looked at: the same bytes as RDMA WRITE payload are not a capsule', () => {
    expect(decodePayload({ ...input(6), opcode: BthOpcode.RC_RDMA_WRITE_ONLY })).toBeUndefined();
    expect(decodePayload({ ...input(6), opcode: BthOpcode.RC_SEND_MIDDLE })).toBeUndefined();
  });
  it('packet records without a readable payload give no input', () => {
    expect(payloadOfPacket({ hex: 'zz', opcode: 4, payloadLen: 1 })).toBeUndefined();
    expect(payloadOfPacket({ hex: '00'.repeat(16), opcode: 0x11, payloadLen: 0 })).toBeUndefined();
    expect(payloadOfPacket({ hex: '00'.repeat(16), opcode: 4, payloadLen: 40 })).toBeUndefined();   // longer than the packet
  });
});

describe('the registry', () => {
  it('tries decoders in order, replaces by id, unregisters, and survives a decoder that throws', () => {
    expect(registeredDecoders().map((d) => d.id)).toContain('nvme-rdma');
    const smb: PayloadDecoder = { id: 'test-smbd', title: 'test', decode: (p) => (p.payload[0] === 0x42 ? { summary: 'B', fields: {} } : undefined) };
    const off = registerDecoder(smb);
    const b = { opcode: BthOpcode.RC_SEND_ONLY, destQp: 1, payload: new Uint8Array([0x42]) };
    expect(decodePayload(b)).toEqual({ protocol: 'test-smbd', summary: 'B', fields: {} });
    const offBad = registerDecoder({ id: 'test-smbd', title: 'test', decode: () => { throw new Error('bad header'); } });
    expect(decodePayload(b)).toEqual({ protocol: 'test-smbd', summary: 'test-smbd: decoder error', fields: { error: 'bad header' } });
    offBad();
    off();
    expect(decodePayload(b)).toBeUndefined();
    expect(registeredDecoders().map((d) => d.id)).toEqual(['ib-cm', ...LAB_DECODERS.map((d) => d.id)]);   // the platform's, then the manifests' in lab order
    expect(LAB_DECODERS.map((d) => d.id)).toEqual(expect.arrayContaining(['nvme-rdma', 'smb-direct']));
  });
});

const mod = await needAddon('decoder over device packets');

describe('the registry over the software device\'s own packets', () => {
  it('a capsule SENT through the device is read back from the PacketSent event\'s record', () => {
    const sqe = Buffer.from(input(6).payload).toString('hex');
    const steps = [
      { cmd: 'pd.alloc', args: { device: 'dev0' }, as: 'pdA' }, { cmd: 'pd.alloc', args: { device: 'dev1' }, as: 'pdB' },
      { cmd: 'buffer.alloc', args: { length: 4096 }, as: 'bufA' }, { cmd: 'buffer.alloc', args: { length: 4096 }, as: 'bufB' },
      { cmd: 'mr.reg', args: { pd: 'pdA', addr: '$bufA.addr', length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE'] }, as: 'mrA' },
      { cmd: 'mr.reg', args: { pd: 'pdB', addr: '$bufB.addr', length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE'] }, as: 'mrB' },
      { cmd: 'cq.create', args: { device: 'dev0', cqe: 16 }, as: 'cqA' }, { cmd: 'cq.create', args: { device: 'dev1', cqe: 16 }, as: 'cqB' },
      { cmd: 'qp.create', args: { pd: 'pdA', sendCq: 'cqA', recvCq: 'cqA', qpType: 'IBV_QPT_RC' }, as: 'qpA' },
      { cmd: 'qp.create', args: { pd: 'pdB', sendCq: 'cqB', recvCq: 'cqB', qpType: 'IBV_QPT_RC' }, as: 'qpB' },
      { cmd: 'qp.connect', args: { qp: 'qpA', peer: 'qpB' } },
      { cmd: 'post.recv', args: { qp: 'qpB', wrs: [{ wrId: 100, sgList: [{ addr: '$bufB.addr', length: 256, lkey: '$mrB.lkey' }] }] } },
      { cmd: 'memory.write', args: { addr: '$bufA.addr', data: sqe } },
      { cmd: 'post.send', args: { qp: 'qpA', wrs: [{ wrId: 1, opcode: 'IBV_WR_SEND', sgList: [{ addr: '$bufA.addr', length: 64, lkey: '$mrA.lkey' }] }] } },
      { cmd: 'engine.run', args: {} },
    ];
    const text = JSON.stringify({ verbslab: 'scenario', version: 1, name: 'capsule', seed: 1,
      devices: [{ name: 'dev0', profile: 'rxe' }, { name: 'dev1', profile: 'rxe' }], steps });
    const loaded = parseScenarioText(text, 'capsule.json');
    if (!loaded.ok) throw new Error(loaded.error.message);
    const ex = new mod.NativeExecutor({ seed: 1 });
    const seen: DeviceEvent[] = [];
    try {
      const rep = new ScenarioRun(loaded.scenario, { exec: (c) => ex.exec(c), drainEvents: (m) => { const e = ex.drainEvents(m); for (const item of e) seen.push(item); return e; },
        pcap: () => ex.pcap(), close: () => ex.close() }, { seed: 1 }).run();
      expect(rep.passed, JSON.stringify(rep.failure)).toBe(true);
    } finally { ex.close(); }
    const sent = seen.filter((e) => e.kind === 'PacketSent' && e.pkt && e.pkt.opcode === BthOpcode.RC_SEND_ONLY);
    expect(sent).toHaveLength(1);
    const got = payloadOfPacket(sent[0]!.pkt!)!;
    expect(Buffer.from(got.payload).toString('hex')).toBe(sqe);
    expect(decodePayload(got)!.summary).toBe('NVMe Write CID 4 NSID 1 SLBA 0 NLB 128');
    // the ACK coming back carries no payload: nothing to decode
    const acks = seen.filter((e) => e.kind === 'PacketSent' && e.pkt && e.pkt.opcode === BthOpcode.RC_ACKNOWLEDGE);
    expect(acks.length).toBeGreaterThan(0);
    expect(payloadOfPacket(acks[0]!.pkt!)).toBeUndefined();
  });
});
