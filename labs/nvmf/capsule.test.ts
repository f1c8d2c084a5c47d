// The capsule encoders against the Linux host's and target's capsules (fixtures/linux-nvme-rdma-cm.pcap): built
// from the values the kernel used, each capsule is byte for byte the one on the wire.
import { describe, expect, it } from 'vitest';
import {
  connectData, connectSqe, encodeCqe, parseConnectData, parseConnectSqe, parseCqe, parseProperty, parseSqe, propertyGetSqe,
  propertySetSqe, rwSqe,
} from './capsule.ts';
import { payloadOf, roceFrames } from './fixture.ts';
import { decodeNvmeSqe } from './decoder.ts';
import { Prop } from './spec.ts';

const f = roceFrames();
const at = (n: number) => payloadOf(f[n - 1]!.roce);   // frame numbers as tshark shows them (fixtures/README.md)
const same = (a: Uint8Array, b: Uint8Array) => expect(Buffer.from(a).toString('hex')).toBe(Buffer.from(b).toString('hex'));

describe('command capsules', () => {
  it('Fabrics Connect (admin queue): SQE and the 1024-byte Connect data', () => {
    const wire = at(4);
    expect(wire.length).toBe(64);
    const p = parseSqe(wire), c = parseConnectSqe(wire);
    expect(c).toEqual({ recfmt: 0, qid: 0, sqsize: 31, cattr: 0, kato: 5000 });
    expect(p.sgl).toMatchObject({ kind: 'keyed', length: 1024, invalidate: true });
    same(connectSqe({ cid: p.cid, qid: 0, sqsize: 31, kato: 5000, sgl: p.sgl! }), wire);
    const data = at(7);   // the target's RDMA READ response: the Connect data itself
    expect(data.length).toBe(1024);
    const d = parseConnectData(data);
    expect(d).toMatchObject({ cntlid: 0xffff, subnqn: 'vlab' });
    expect(d.hostnqn).toMatch(/^nqn\.2014-08\.org\.nvmexpress:uuid:/);
    same(connectData(d), data);
  });

  it('Property Get CAP (8 bytes), Property Set CC, Property Get CSTS', () => {
    for (const [n, off, size] of [[10, Prop.CAP, 8], [15, Prop.CSTS, 4]] as const) {
      const wire = at(n), p = parseSqe(wire);
      expect(parseProperty(wire)).toMatchObject({ offset: off, size });
      same(propertyGetSqe({ cid: p.cid, offset: off, size }), wire);
    }
    const set = at(13), ps = parseProperty(set);
    expect(ps).toMatchObject({ offset: Prop.CC, size: 4 });
    expect(Number(ps.value) & 1).toBe(0);   // the host first writes CC with EN clear (nvme_disable_ctrl), then enables
    same(propertySetSqe({ cid: parseSqe(set).cid, offset: Prop.CC, size: 4, value: ps.value }), set);
  });

  it('an I/O Read built by rwSqe decodes as the registry\'s decoder reads it', () => {
    const b = rwSqe({ opc: 0x02, cid: 9, nsid: 1, slba: 0x1_0000_0002n, nlb: 8, sgl: { kind: 'keyed', addr: 0x1000n, length: 4096, key: 0x1234, invalidate: true } });
    expect(decodeNvmeSqe(b, 'io')!.fields).toMatchObject({ opcodeName: 'Read', cid: 9, nsid: 1, nlb: 8, slba: 0x1_0000_0002, sgl1: { identifier: '0x4f', length: 4096, key: '0x00001234' } });
    const inl = rwSqe({ opc: 0x01, cid: 3, nsid: 1, slba: 0n, nlb: 1, sgl: { kind: 'inline', offset: 0, length: 512 } });
    expect(parseSqe(inl).sgl).toEqual({ kind: 'inline', offset: 0, length: 512 });
    expect(() => rwSqe({ opc: 1, cid: 1, nsid: 1, slba: 0n, nlb: 0, sgl: { kind: 'inline', offset: 0, length: 0 } })).toThrow(/NLB/);
  });
});

describe('response capsules', () => {
  it('the Connect response (SEND with Invalidate) and the CAP response re-encode byte for byte', () => {
    for (const n of [8, 12, 14, 16]) {
      const wire = at(n);
      expect(wire.length).toBe(16);
      same(encodeCqe(parseCqe(wire)), wire);
    }
    const con = parseCqe(at(8));
    expect(con).toMatchObject({ status: 0, sqid: 0 });
    expect(con.dw0 & 0xffff).toBe(1);   // the CNTLID of the dynamic controller
    const cap = parseCqe(at(12));
    expect((BigInt(cap.dw1) << 32n) | BigInt(cap.dw0)).toBe(0x000008200f00007fn);   // what Wireshark shows for this CAP
  });
});
