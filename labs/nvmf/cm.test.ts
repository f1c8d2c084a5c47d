// The CM codecs against the Linux kernel's own MADs (fixtures/linux-nvme-rdma-cm.pcap): every CM MAD of the capture
// decodes to the values the kernel sent and re-encodes to the same 256 bytes.
import { describe, expect, it } from 'vitest';
import { CM, decodeCmMad, decodeCmaHdr, decodeNvmeCmRep, decodeNvmeCmReq, encodeCmMad, encodeNvmeCmRep, encodeNvmeCmReq, serviceIdOf, CMA_HDR_LEN } from './cm.ts';
import { payloadOf, roceFrames } from './fixture.ts';

const frames = roceFrames();
const mads = frames.filter((f) => f.roce[0] === 0x64).map((f) => ({ ...f, mad: payloadOf(f.roce) }));

describe('CM MADs of a Linux NVMe/RDMA connect (UD SEND to QP1)', () => {
  it('the fixture has the 8 CM MADs its note lists, each a UD SEND ONLY to QP1 with the GSI Q_Key', () => {
    expect(mads.map((m) => decodeCmMad(m.mad)?.kind)).toEqual(['REQ', 'REP', 'RTU', 'REQ', 'REP', 'RTU', 'DREQ', 'DREP']);
    for (const m of mads) {
      expect((m.roce[5]! << 16) | (m.roce[6]! << 8) | m.roce[7]!).toBe(CM.QPN);                 // BTH DestQP
      expect(new DataView(m.roce.buffer, m.roce.byteOffset).getUint32(12)).toBe(CM.QKEY);        // DETH Q_Key
      expect(m.mad.length).toBe(256);
    }
  });

  it('every MAD re-encodes byte for byte', () => {
    for (const m of mads) expect(Buffer.from(encodeCmMad(decodeCmMad(m.mad)!)).equals(Buffer.from(m.mad))).toBe(true);
  });

  it('REQ: RDMA_PS_TCP service ID of port 4420, RC, the cma header and the NVMe/RDMA private data', () => {
    const req = decodeCmMad(mads[0]!.mad)!;
    expect(req.fields).toMatchObject({ serviceId: serviceIdOf(4420), localQpn: 0x11, transportServiceType: 0, responderResources: 128, initiatorDepth: 0, pathMtu: 3, retryCount: 7, rnrRetryCount: 7 });
    const pd = req.fields.privateData as Uint8Array;
    expect(decodeCmaHdr(pd)).toMatchObject({ version: 0, ipVersion: 4, src: '192.168.77.2', dst: '192.168.77.1' });
    expect(decodeNvmeCmReq(pd.subarray(CMA_HDR_LEN))).toEqual({ recfmt: 0, qid: 0, hrqsize: 32, hsqsize: 31, cntlid: 0 });
    expect(Buffer.from(encodeNvmeCmReq({ recfmt: 0, qid: 0, hrqsize: 32, hsqsize: 31, cntlid: 0 })).equals(Buffer.from(pd.subarray(CMA_HDR_LEN, CMA_HDR_LEN + 32)))).toBe(true);
    const io = decodeCmMad(mads[3]!.mad)!;
    expect(decodeNvmeCmReq((io.fields.privateData as Uint8Array).subarray(CMA_HDR_LEN))).toEqual({ recfmt: 0, qid: 1, hrqsize: 128, hsqsize: 127, cntlid: 0 });
  });

  it('REP: the target accepts with responder resources 0 (the host never reads target memory) and CRQSIZE', () => {
    const req = decodeCmMad(mads[0]!.mad)!, rep = decodeCmMad(mads[1]!.mad)!;
    expect(rep.transactionId).toBe(req.transactionId);
    expect(rep.fields).toMatchObject({ remoteCommId: req.fields.localCommId, localQpn: 0x11, responderResources: 0, initiatorDepth: 128 });
    const pd = rep.fields.privateData as Uint8Array;
    expect(decodeNvmeCmRep(pd)).toEqual({ recfmt: 0, crqsize: 32 });
    expect(Buffer.from(encodeNvmeCmRep(32)).equals(Buffer.from(pd.subarray(0, 32)))).toBe(true);
  });

  it('RTU, DREQ, DREP carry both communication IDs', () => {
    const [req, rep, rtu] = mads.slice(0, 3).map((m) => decodeCmMad(m.mad)!);
    expect(rtu!.fields).toMatchObject({ localCommId: req!.fields.localCommId, remoteCommId: rep!.fields.localCommId });
    const [dreq, drep] = mads.slice(6).map((m) => decodeCmMad(m.mad)!);
    expect(dreq!.fields.remoteQpn).toBe(0x12);
    expect(drep!.fields.remoteCommId).toBe(dreq!.fields.localCommId);
  });

  it('a field that does not fit, or a field the message does not have, is refused', () => {
    expect(() => encodeCmMad({ kind: 'RTU', transactionId: 1n, fields: { localQpn: 1 } })).toThrow(/no field/);
    expect(() => encodeCmMad({ kind: 'REQ', transactionId: 1n, fields: { localQpn: 1 << 24 } })).toThrow(/24 bits/);
    expect(decodeCmMad(new Uint8Array(256))).toBeUndefined();
  });
});
