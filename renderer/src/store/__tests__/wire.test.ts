import { describe, expect, it } from 'vitest';
import type { DeviceEvent } from '../../../../app/protocol/index.ts';
import { MemoryMarks, WireLog, packetFields } from '../models.ts';
import { bytesFrom, deviceView } from '../store.ts';
import { syndromeText } from '../spec.ts';

const base = { seq: 1, t: 1000, device: 2, obj: 0, objKind: 'packet', a: 0, b: 0, c: 0, d: 3 };

describe('wire log derivation', () => {
  it('reads a PacketSent event as the addon decodes it (BTH fields, RETH, length)', () => {
    const w = new WireLog();
    const pkt = { len: 40, hex: '0a00ffff', opcode: 10, opcodeName: 'RC RDMA Write Only', destQp: 17, ackReq: true, psn: 5,
      reth: { va: 0x7f0000002000, rkey: 0x14e, dmaLen: 8 }, payloadLen: 8, icrc: 1 };
    w.applyEvent({ ...base, kind: 'PacketSent', a: 10, b: 17, c: 5, pkt } as DeviceEvent);
    const r = w.rows[0];
    expect(r).toMatchObject({ event: 'sent', device: 2, peer: 3, opName: 'RC RDMA Write Only', dstQpn: 17, psn: 5, ackReq: true, length: 40, syndrome: null, nak: false });
    expect(packetFields(r)).toContainEqual(['reth.rkey', '334 (0x14e)']);
    expect(packetFields(r).some(([k]) => k === 'hex')).toBe(false);
  });

  it('shows an upper-layer payload as its registered decoder reads it (an NVMe Write capsule of a real Linux session)', () => {
    // RC SEND Only to QP 0x12: BTH + the 64-byte SQE + ICRC, frame 7 of app/protocol/fixtures/nvme-rdma-capsules.pcap
    const hex = '0400ffff0000001280bc2a15014004000100000000000000000000000000000000000000008073efac88ffff000001f72300004f'
      + '00000000000000007f0000000000000000000000000000004ca75c60';
    const w = new WireLog();
    w.applyEvent({ ...base, kind: 'PacketSent', pkt: { len: hex.length / 2, hex, opcode: 4, opcodeName: 'RC Send Only', destQp: 0x12, psn: 0xbc2a15, pad: 0, payloadLen: 64, icrc: 0 } } as DeviceEvent);
    const r = w.rows[0]!;
    expect(r.payload?.summary).toBe('NVMe Write CID 4 NSID 1 SLBA 0 NLB 128');
    expect(packetFields(r)).toContainEqual(['nvme-rdma', 'NVMe Write CID 4 NSID 1 SLBA 0 NLB 128']);
    expect(packetFields(r)).toContainEqual(['nvme-rdma.sgl1.key', '0x000023f7']);
    // a packet no decoder claims shows its transport headers only
    w.applyEvent({ ...base, kind: 'PacketSent', pkt: { len: 20, hex: '04000000'.repeat(5), opcode: 4, destQp: 1, psn: 1, pad: 0, payloadLen: 4 } } as DeviceEvent);
    expect(w.rows[1]!.payload).toBeUndefined();
    expect(packetFields(w.rows[1]!).some(([k]) => k.startsWith('nvme-rdma'))).toBe(false);
  });

  it('marks a NAK from its AETH syndrome', () => {
    const w = new WireLog();
    w.applyEvent({ ...base, kind: 'PacketSent', pkt: { len: 20, opcode: 0x11, destQp: 18, psn: 1, aeth: { syndrome: 0x62, text: 'NAK Remote Access Error', msn: 0 } } } as DeviceEvent);
    expect(w.rows[0]).toMatchObject({ opName: 'RC Acknowledge', syndrome: 0x62, nak: true, synText: 'NAK Remote Access Error' });
    expect(syndromeText(0x62)).toBe('NAK Remote Access Error');
    expect(syndromeText(0x1f)).toBe('ACK credits=invalid');
  });

  it('keeps a bounded number of packets and counts the ones trimmed', () => {
    const w = new WireLog(100);
    for (let i = 0; i < 1000; i++) w.applyEvent({ ...base, seq: i, kind: 'PacketSent', pkt: { opcode: 4, destQp: 1, psn: i } } as DeviceEvent);
    expect(w.rows.length).toBeLessThanOrEqual(100 + 100 / 8);
    expect(w.rows[w.rows.length - 1]).toMatchObject({ id: 999, psn: 999 });
    expect(w.base + w.rows.length).toBe(1000);
  });

  it('keeps the default list (each packet once, plus what came from a remote host) as packets arrive, also across trims', () => {
    const w = new WireLog(100);
    for (let i = 0; i < 1000; i++) {
      const kind = i % 3 === 0 ? 'PacketSent' : i % 3 === 1 ? 'PacketReceived' : 'PacketDropped';
      // every 30th receive comes from a remote host (d = 0): listed too
      w.applyEvent({ ...base, seq: i, kind, d: kind === 'PacketReceived' && i % 30 === 1 ? 0 : 3, pkt: { opcode: 4, destQp: 1, psn: i } } as DeviceEvent);
    }
    const expected = w.rows.filter((p) => p.event !== 'received' || p.peer === 0).map((p) => p.id);
    const listed = Array.from({ length: w.listed.length }, (_, i) => w.listed.at(i).id);
    expect(listed).toEqual(expected);
    expect(w.all.length).toBe(w.rows.length);
    const some = expected[Math.floor(expected.length / 2)]!;
    expect(w.listed.at(w.listed.indexOfId(some)).id).toBe(some);
    const recv = w.rows.find((p) => p.event === 'received' && p.peer !== 0)!;
    expect(w.listed.indexOfId(recv.id)).toBe(-1);                               // not listed ...
    expect(w.listed.at(w.listed.indexAtOrBefore(recv.id)).id).toBe(recv.id - 1);   // ... its neighbour is
    expect(w.all.at(w.all.indexOfId(recv.id))).toBe(recv);
    w.clear();
    expect(w.listed.length).toBe(0);
  });
});

describe('memory marks', () => {
  it('highlights the bytes MemWrite events touched and counts writes per byte', () => {
    const m = new MemoryMarks();
    m.applyEvent({ ...base, kind: 'MemWrite', objKind: 'buffer', obj: 7, seq: 10, a: 0x1000, b: 4 } as DeviceEvent);
    m.applyEvent({ ...base, kind: 'MemWrite', objKind: 'buffer', obj: 7, seq: 11, a: 0x1002, b: 4 } as DeviceEvent);
    expect([...m.heat(7, 0x1000, 8)]).toEqual([1, 1, 2, 2, 1, 1, 0, 0]);
    expect([...m.lastWrite(7, 0x1000, 8)]).toEqual([10, 10, 11, 11, 11, 11, 0, 0]);
    expect(m.heat(8, 0x1000, 2)[0]).toBe(0);
  });
});

describe('reply readers', () => {
  it('reads memory.read hex and a device.list entry', () => {
    expect([...bytesFrom('cafe01')]).toEqual([0xca, 0xfe, 0x01]);
    // (the reply's profile carries every limit; this one lists those the view reads)
    const d = deviceView({ handle: 2, device: 2, name: 'left', portState: 4, nodeGuid: '00564cfffe000002',
      gids: [{ index: 1, gid: '0000:0000:0000:0000:0000:ffff:0a00:0002', type: 'RoCE v2' }],
      profile: { name: 'rxe', deviceCapFlags: 0x1223c76, atomicCap: 1, maxQp: 65536, maxCqe: 32767, activeMtu: 3, activeMtuName: 'IBV_MTU_1024', transport: 'RoCEv2', atomicCapName: 'IBV_ATOMIC_HCA' }, portStateName: 'IBV_PORT_ACTIVE', net: null } as unknown as Parameters<typeof deviceView>[0]);
    expect(d).toMatchObject({ handle: 2, name: 'left', profile: 'rxe', atomicCap: 'IBV_ATOMIC_HCA', portStateName: 'IBV_PORT_ACTIVE', activeMtu: 'IBV_MTU_1024' });
    expect(d.capNames).toContain('IBV_DEVICE_MEM_WINDOW');
    expect(d.limits).toContainEqual(['max_qp', 65536]);
    expect(d.gids[0]).toEqual({ index: 1, gid: '0000:0000:0000:0000:0000:ffff:0a00:0002', type: 'RoCE v2' });
  });
});
