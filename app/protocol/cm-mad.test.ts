// The platform's CM MAD decoder (cm-mad.ts) over (1) the Linux kernel capture the C++ codec is judged by
// (native/tests/fixtures/cm/, expected values: Wireshark 4's InfiniBand dissector on that file), and (2) the MADs the
// software device's own CM sends in a session, compared with what the device reports of its CM IDs (cm_id_info):
// the TypeScript and C++ field tables (native/src/cm/mad.cpp) must read the same bytes the same way.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CM_REJ_REASON, decodeCmMad } from './cm-mad.ts';
import { decodePayload, payloadOfPacket } from './decoders.ts';
import { CmAttr, CmMadDir, QpType } from './enums.ts';
import { cmEventText } from './cm-event-text.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

/** the UDP payloads (BTH..ICRC) of a little-endian pcap of Ethernet / IPv4 / UDP frames */
function udpPayloads(file: string): Uint8Array[] {
  const b = fs.readFileSync(file);
  expect(b.readUInt32LE(0)).toBe(0xa1b2c3d4);
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

/** a packet record as events carry it, for a UD SEND (BTH 12 + DETH 8) */
function udRecord(udp: Uint8Array): Record<string, unknown> {
  const pad = (udp[1]! >> 4) & 3;
  return { hex: Buffer.from(udp).toString('hex'), opcode: udp[0], destQp: (udp[5]! << 16) | (udp[6]! << 8) | udp[7]!, pad, payloadLen: udp.length - 12 - 8 - pad - 4 };
}

const frames = udpPayloads(path.join(root, 'native/tests/fixtures/cm/linux-nvme-rdma-cm.pcap'));
const decoded = frames.map((f) => decodePayload(payloadOfPacket(udRecord(f))!)!);

describe('CM MADs of a Linux NVMe/RDMA connection (kernel capture)', () => {
  it('every frame is claimed by the platform decoder, in the order of the exchange', () => {
    expect(decoded.map((d) => d.protocol)).toEqual(Array(10).fill('ib-cm'));
    expect(decoded.map((d) => Object.keys(d.fields)[1])).toEqual(['REQ', 'REP', 'RTU', 'REQ', 'REP', 'RTU', 'DREQ', 'DREP', 'DREQ', 'DREP']);
  });

  it('MAD header: base version 1, class 0x07, class version 2, method SEND, attribute ID', () => {
    expect(decoded[0]!.fields.mad).toMatchObject({ baseVersion: 1, mgmtClass: '0x07', classVersion: 2, method: '0x03', status: '0x0000', attributeId: '0x0010 REQ' });
    expect(decoded[1]!.fields.mad).toMatchObject({ attributeId: '0x0013 REP' });
  });

  it('REQ / REP / RTU / DREQ fields agree with Wireshark', () => {
    const req = decoded[0]!.fields.REQ as Record<string, unknown>;
    expect(req).toMatchObject({ serviceId: '0x0000000001061144', localQpn: '0x000011', startingPsn: '0xe60b1b', transportServiceType: 0, privateDataLength: 92 });
    // the RDMA IP CM header: host 192.168.77.2 -> target 192.168.77.1, port 4420 (0x1144) of the TCP port space (0x06)
    expect(req.ipCm).toMatchObject({ ipVersion: 4, srcIp: '192.168.77.2', dstIp: '192.168.77.1', dstPort: 4420, portSpace: '0x06' });
    expect(decoded[0]!.summary).toMatch(/^CM REQ comm 0x[0-9a-f]+ service 0x1061144 QPN 0x11 PSN 0xe60b1b 192\.168\.77\.2:\d+ -> 192\.168\.77\.1:4420$/);
    expect(decoded[1]!.fields.REP).toMatchObject({ remoteCommId: '0x29a5ee4a', localQpn: '0x000011', startingPsn: '0xa0d631' });
    expect((decoded[1]!.fields.REP as Record<string, unknown>).remoteCommId).toBe(req.localCommId);   // the REP answers the REQ
    expect(decoded[2]!.fields.RTU).toMatchObject({ localCommId: '0x29a5ee4a' });
    expect(decoded[4]!.fields.REP).toMatchObject({ remoteCommId: '0x28a5ee4a', localQpn: '0x000012', startingPsn: '0xbc2a10' });
    expect(decoded[6]!.fields.DREQ).toMatchObject({ localCommId: '0x28a5ee4a', remoteQpnEecn: '0x000012' });
    expect(decoded[8]!.fields.DREQ).toMatchObject({ localCommId: '0x29a5ee4a', remoteQpnEecn: '0x000011' });
  });

  it('a REJ: reason by its IBA name; a MAD of another class or not on QP1 is not claimed', () => {
    const mad = new Uint8Array(256);
    mad.set([1, 7, 2, 3]);
    mad[17] = CmAttr.values.REJ;
    mad.set([0, 0, 0, 5, 0, 0, 0, 9], 24);
    mad[24 + 10] = 0; mad[24 + 11] = 8;   // reason 8 at byte 10 of the message
    const d = decodePayload({ opcode: 0x64, destQp: 1, payload: mad })!;
    expect(d.summary).toBe('CM REJ comm 0x5 -> 0x9 reason 8 INVALID_SERVICE_ID');
    expect(d.fields.REJ).toMatchObject({ reason: 8, reasonName: 'INVALID_SERVICE_ID' });
    expect(decodePayload({ opcode: 0x64, destQp: 2, payload: mad })?.protocol).not.toBe('ib-cm');
    const sa = mad.slice(); sa[1] = 0x03;   // Subnet Administration
    expect(decodeCmMad(sa)).toBeUndefined();
  });

  it('the REJ reason names are the device\'s (native/include/vl/cm.h enum CmRejReason)', () => {
    const h = fs.readFileSync(path.join(root, 'native/include/vl/cm.h'), 'utf8');
    const cpp = Object.fromEntries([...h.matchAll(/CM_REJ_([A-Z_]+) = (\d+)/g)].map((m) => [Number(m[2]), m[1]]));
    expect(Object.keys(cpp).length).toBeGreaterThan(30);
    expect(CM_REJ_REASON).toEqual(cpp);
  });
});

let addon: typeof import('../host/native.ts') extends { loadAddon: () => infer A } ? A : never;
try { addon = (await import('../host/native.ts')).loadAddon(); } catch { addon = undefined as never; }

describe.skipIf(!addon)('the MADs the software device\'s CM sends', () => {
  it('decode to the comm IDs, QPNs, PSNs, service ID and addresses the device reports of its CM IDs', () => {
    const s = new addon.Session(3);
    const mk = () => {
      const dev = s.create_device('rxe').value!;
      const pd = s.alloc_pd(dev).value!;
      const cq = s.create_cq(dev, 64, false).value!;
      const qp = s.create_qp(pd, { sendCq: cq, recvCq: cq, qpType: QpType.values.IBV_QPT_RC, sqSigAll: false, cap: { maxSendWr: 4, maxRecvWr: 4, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 } });
      return { dev, qp: qp.value!.handle };
    };
    /** steps the session until the device's next rdma_cm event, which it returns */
    const next = (dev: number) => {
      for (let i = 0; i < 10000; i++) { const [e] = s.cm_get_events(dev, 1); if (e) return e; if (!s.step()) break; }
      throw new Error('no CM event');
    };
    const a = mk(), b = mk();
    const l = s.cm_create_id(b.dev, 0x0106).value!;
    expect(s.cm_bind_addr(l, { ip: '10.0.0.2', port: 4420 }).err).toBe(0);
    expect(s.cm_listen(l, 4).err).toBe(0);
    const c = s.cm_create_id(a.dev, 0x0106).value!;
    expect(s.cm_resolve_addr(c, { ip: '10.0.0.2', port: 4420 }).err).toBe(0);
    expect(next(a.dev).eventName).toBe('RDMA_CM_EVENT_ADDR_RESOLVED');
    expect(s.cm_resolve_route(c).err).toBe(0);
    expect(next(a.dev).eventName).toBe('RDMA_CM_EVENT_ROUTE_RESOLVED');
    expect(s.cm_set_qp(c, a.qp).err).toBe(0);
    expect(s.cm_connect(c, {}).err).toBe(0);
    const req = next(b.dev);
    expect(req.eventName).toBe('RDMA_CM_EVENT_CONNECT_REQUEST');
    expect(s.cm_set_qp(req.id, b.qp).err).toBe(0);
    expect(s.cm_accept(req.id).err).toBe(0);
    expect(next(a.dev).eventName).toBe('RDMA_CM_EVENT_ESTABLISHED');
    expect(next(b.dev).eventName).toBe('RDMA_CM_EVENT_ESTABLISHED');
    const ci = s.cm_id_info(c)!, si = s.cm_id_info(req.id)!;
    expect(ci.stateName).toBe('IB_CM_ESTABLISHED');
    const mads = s.drain_events().filter((e) => e.kind === 'PacketSent' && e.pkt)
      .map((e) => payloadOfPacket(e.pkt as unknown as Record<string, unknown>))
      .map((p) => (p ? decodePayload(p) : undefined)).filter((d) => d?.protocol === 'ib-cm');
    expect(mads.map((d) => Object.keys(d!.fields)[1])).toEqual(['REQ', 'REP', 'RTU']);
    const h = (n: number | bigint, w: number) => `0x${n.toString(16).padStart(w, '0')}`;
    // cm_id_info's startingPsn is the PSN the peer's message carried (the ID's send PSN: cm_req_handler / cm_rep_handler)
    expect(mads[0]!.fields.REQ).toMatchObject({
      localCommId: h(ci.localCommId, 8), localQpn: h(ci.localQpn, 6), startingPsn: h(si.startingPsn, 6),
      serviceId: h(BigInt(ci.serviceId), 16), pathMtu: ci.pathMtu,
      ipCm: { srcIp: ci.src.ip, srcPort: ci.src.port, dstIp: '10.0.0.2', dstPort: 4420, portSpace: '0x06' },
    });
    expect(mads[1]!.fields.REP).toMatchObject({
      localCommId: h(si.localCommId, 8), remoteCommId: h(ci.localCommId, 8), localQpn: h(si.localQpn, 6), startingPsn: h(ci.startingPsn, 6),
    });
    expect(ci.remoteQpn).toBe(si.localQpn);
    expect(mads[2]!.fields.RTU).toMatchObject({ localCommId: h(ci.localCommId, 8), remoteCommId: h(si.localCommId, 8) });
    s.close();
  });

  it('a REQ to a port nobody listens on: the REJ on the wire and its CmMad event both say reason 8 INVALID_SERVICE_ID', () => {
    const s = new addon.Session(4);
    const a = s.create_device('rxe').value!, b = s.create_device('rxe').value!;
    const next = (dev: number) => {
      for (let i = 0; i < 10000; i++) { const [e] = s.cm_get_events(dev, 1); if (e) return e; if (!s.step()) break; }
      throw new Error('no CM event');
    };
    const l = s.cm_create_id(b, 0x0106).value!;
    expect(s.cm_bind_addr(l, { ip: '10.0.0.2', port: 4420 }).err).toBe(0);
    expect(s.cm_listen(l, 4).err).toBe(0);
    const c = s.cm_create_id(a, 0x0106).value!;
    expect(s.cm_resolve_addr(c, { ip: '10.0.0.2', port: 4421 }).err).toBe(0);
    expect(next(a).eventName).toBe('RDMA_CM_EVENT_ADDR_RESOLVED');
    expect(s.cm_resolve_route(c).err).toBe(0);
    expect(next(a).eventName).toBe('RDMA_CM_EVENT_ROUTE_RESOLVED');
    expect(s.cm_connect(c, {}).err).toBe(0);
    const rej = next(a);
    expect(rej.eventName).toBe('RDMA_CM_EVENT_REJECTED');
    expect(rej.status).toBe(8);
    const evs = s.drain_events();
    const wire = evs.filter((e) => e.kind === 'PacketSent' && e.pkt).map((e) => payloadOfPacket(e.pkt as unknown as Record<string, unknown>))
      .map((p) => (p ? decodePayload(p) : undefined)).filter((d) => d?.protocol === 'ib-cm');
    expect(wire.map((d) => d!.summary)).toEqual([expect.stringMatching(/^CM REQ .* -> 10\.0\.0\.2:4421$/), expect.stringMatching(/^CM REJ comm 0x[0-9a-f]+ -> 0x[0-9a-f]+ reason 8 INVALID_SERVICE_ID$/)]);
    const got = evs.find((e) => e.kind === 'CmMad' && Number(e.b) === CmMadDir.values.RECEIVED && (Number(e.a) & 0xffff) === CmAttr.values.REJ)!;
    expect(cmEventText({ kind: got.kind, a: Number(got.a), b: Number(got.b), c: Number(got.c), d: Number(got.d) }))
      .toMatch(/^REJ received: reason 8 INVALID_SERVICE_ID comm 0x[0-9a-f]+ → 0x[0-9a-f]+$/);
    s.close();
  });
});
