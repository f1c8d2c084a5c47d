// SMB2 READ / WRITE over SMB Direct with RDMA data movement ([MS-SMB2] 3.2.4.6/3.2.4.7 client, 3.3.5.12/3.3.5.13
// server; [MS-SMBD] 3.1.4.3 register, 3.1.4.4 deregister): the client fast-registers its buffer for each I/O
// (IB_WR_REG_MR with a new key byte) and sends the buffer descriptor (offset, token = rkey, length) in the request;
// the server, always the RDMA initiator, RDMA WRITEs into it (READ) or RDMA READs from it (WRITE) from a buffer of
// its own, then answers; with SMB2_CHANNEL_RDMA_V1_INVALIDATE it answers with IBV_WR_SEND_WITH_INV of the token,
// with RDMA_V1 the client invalidates the key itself (IBV_WR_LOCAL_INV). Data verified by reading both memories.
//
// The server's buffers follow one of two policies (the 2013 Samba kernel-driver design against per-I/O practice):
//   pool    64 x 1 MiB registered once (one lkey, local access only), a buffer checked out per request and returned
//           on the completion event of its RDMA operation
//   per-io  a fast-registration MR per I/O: IB_WR_REG_MR before the RDMA operation, IBV_WR_LOCAL_INV after
import { resultSchema } from '../../app/protocol/commands.ts';
import { must, wrId, wrKind, WR } from './peer.ts';
import type { SmbdPeer, Wc } from './peer.ts';
import { SMB2_CHANNEL, toHex } from './pdu.ts';
import type { BufferDescriptorV1 } from './pdu.ts';
import { SMB2_READ, SMB2_WRITE, decodeIoRequest, decodeIoResponse, encodeIoRequest, encodeIoResponse } from './smb2.ts';
import type { SmbdSession } from './session.ts';

export type Policy = 'pool' | 'per-io';
export type IoOp = 'READ' | 'WRITE';
const MiB = 1 << 20;
const PAGE = 4096;

export interface IoRecord {
  op: IoOp; channel: 'RDMA_V1' | 'RDMA_V1_INVALIDATE'; length: number;
  descriptor: { offset: string; token: number; length: number };
  requestHex: string; serverOp: 'IBV_WR_RDMA_WRITE' | 'IBV_WR_RDMA_READ'; serverStatus: string;
  responseOpcode: 'IBV_WR_SEND' | 'IBV_WR_SEND_WITH_INV'; invalidatedBy: 'remote' | 'local';
  clientMrState: string; verified: boolean; latencyNs: number;
}

export interface PolicyStats {
  policy: Policy; ios: number; bytes: number;
  serverRegistrations: number; serverInvalidations: number; serverKeys: number; serverPinnedBytes: number;
  clientRegistrations: number; clientInvalidations: number; virtualNs: number; wallNs: number; verified: number;
}

export class IoError extends Error {}

/** Steps the engine until `done()` (two idle steps in a row without it: an error). */
function until(s: SmbdSession, done: () => boolean, what: string): void {
  let idle = 0;
  while (!done()) {
    if (s.step()) idle = 0;
    else if (++idle > 2) throw new IoError(`${what}: nothing more happens`);
  }
}

/** Waits for the completion `id` on `peer`; a failed one is an error. */
function await_(s: SmbdSession, peer: SmbdPeer, id: number, what: string): Wc {
  until(s, () => peer.other.some((w) => w.wrId === id), what);
  const wc = peer.other.splice(peer.other.findIndex((w) => w.wrId === id), 1)[0]!;
  if (wc.status !== 0) throw new IoError(`${what}: ${wc.statusName}`);
  return wc;
}

export class SmbdIo {
  private seq = 0;
  private keyByte = { client: 0, server: 0 };
  // client: its I/O buffer (local MR for the pages), one fast-registration MR
  private cBuf = 0; private cLkey = 0; private cMr = 0;
  // server: the pool (one registration) or a staging buffer with a fast-registration MR
  private sBuf = 0; private sLkey = 0; private sMr = 0; private free: number[] = [];
  stats: PolicyStats;
  readonly keys = new Set<number>();

  constructor(readonly s: SmbdSession, readonly policy: Policy, readonly ioSize = MiB, readonly poolSlots = 64) {
    this.stats = {
      policy, ios: 0, bytes: 0, serverRegistrations: 0, serverInvalidations: 0, serverKeys: 0, serverPinnedBytes: 0,
      clientRegistrations: 0, clientInvalidations: 0, virtualNs: 0, wallNs: 0, verified: 0,
    };
  }

  setup(): void {
    const p = this.s.port, c = this.s.client, sv = this.s.server;
    this.cBuf = must(p, 'buffer.alloc', { length: this.ioSize }).addr as number;
    this.cLkey = must(p, 'mr.reg', { pd: c.pd, addr: this.cBuf, length: this.ioSize, access: ['IBV_ACCESS_LOCAL_WRITE'] }).lkey as number;
    this.cMr = must(p, 'mr.alloc', { pd: c.pd, maxNumSg: this.ioSize / PAGE }).mr as number;
    if (this.policy === 'pool') {
      const len = this.poolSlots * this.ioSize;
      this.sBuf = must(p, 'buffer.alloc', { length: len }).addr as number;
      const mr = must(p, 'mr.reg', { pd: sv.pd, addr: this.sBuf, length: len, access: ['IBV_ACCESS_LOCAL_WRITE'] });
      this.sLkey = mr.lkey as number;
      this.keys.add(this.sLkey);
      this.stats.serverRegistrations++;
      this.stats.serverPinnedBytes = len;
      this.free = Array.from({ length: this.poolSlots }, (_, i) => i);
    } else {
      this.sBuf = must(p, 'buffer.alloc', { length: this.ioSize }).addr as number;
      this.sLkey = must(p, 'mr.reg', { pd: sv.pd, addr: this.sBuf, length: this.ioSize, access: ['IBV_ACCESS_LOCAL_WRITE'] }).lkey as number;
      this.sMr = must(p, 'mr.alloc', { pd: sv.pd, maxNumSg: this.ioSize / PAGE }).mr as number;
      this.free = [0];
    }
  }

  /** fast registration of `mr` over [addr, addr+len) by `peer`: IB_WR_REG_MR, its completion, the MR's keys */
  private fastReg(peer: SmbdPeer, mr: number, addr: number, len: number, lkey: number, access: string[], who: 'client' | 'server'): { rkey: number; lkey: number; iova: number } {
    const p = this.s.port;
    must(p, 'mr.map_sg', { mr, sgList: [{ addr, length: len, lkey }], pageSize: PAGE });
    this.keyByte[who] = (this.keyByte[who] + 1) & 0xff;
    const id = wrId(WR.REG, ++this.seq);
    must(p, 'post.send', { qp: peer.qp, wrs: [{ wrId: id, opcode: 'IB_WR_REG_MR', regMr: mr, regKey: this.keyByte[who], regAccess: access, sendFlags: ['IBV_SEND_SIGNALED'] }] });
    await_(this.s, peer, id, `${who} IB_WR_REG_MR`);
    const q = must(p, 'mr.query', { mr });
    return { rkey: q.rkey as number, lkey: q.lkey as number, iova: Number(q.iova) };
  }

  private localInv(peer: SmbdPeer, key: number, who: string): void {
    const id = wrId(WR.INV, ++this.seq);
    must(this.s.port, 'post.send', { qp: peer.qp, wrs: [{ wrId: id, opcode: 'IBV_WR_LOCAL_INV', invalidateRkey: key, sendFlags: ['IBV_SEND_SIGNALED'] }] });
    await_(this.s, peer, id, `${who} IBV_WR_LOCAL_INV`);
  }

  /** One SMB2 READ or WRITE of `length` bytes at file offset 0 through the client's buffer. */
  io(op: IoOp, channel: 'RDMA_V1' | 'RDMA_V1_INVALIDATE', length = this.ioSize, verify = true): IoRecord {
    const s = this.s, p = s.port, c = s.client, sv = s.server;
    if (!c.conn || !sv.conn) throw new IoError('negotiate first');
    const wall0 = process.hrtime.bigint(), t0 = s.nowNs;
    const pattern = (this.stats.ios * 7 + 1) & 0xff;
    // client: the data to WRITE, or a cleared buffer to READ into; then the buffer exposed for this I/O only
    must(p, 'memory.write', { addr: this.cBuf, fill: { byte: op === 'WRITE' ? pattern : 0, length } });
    const access = op === 'READ' ? ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE'] : ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_READ'];
    const reg = this.fastReg(c, this.cMr, this.cBuf, length, this.cLkey, access, 'client');
    this.stats.clientRegistrations++;
    const desc: BufferDescriptorV1 = { offset: BigInt(reg.iova), token: reg.rkey, length };
    const req = encodeIoRequest({
      command: op === 'READ' ? SMB2_READ : SMB2_WRITE, messageId: BigInt(this.stats.ios + 10), sessionId: 0x1000000000001n, treeId: 1,
      fileOffset: 0n, length, channel: SMB2_CHANNEL[channel], descriptor: desc,
    });
    const before = sv.delivered.length;
    c.apply(c.conn.send(req));
    until(s, () => sv.delivered.length > before, 'SMB2 request');
    // server: the request as it arrived, a buffer of its own, the RDMA operation against the client's token
    const got = decodeIoRequest(sv.delivered[sv.delivered.length - 1]!.message);
    const slot = this.free.shift();
    if (slot === undefined) throw new IoError('server: no buffer free');
    const sAddr = this.sBuf + (this.policy === 'pool' ? slot * this.ioSize : 0);
    let sKey = this.sLkey;
    if (this.policy === 'per-io') {
      sKey = this.fastReg(sv, this.sMr, sAddr, got.length, this.sLkey, ['IBV_ACCESS_LOCAL_WRITE'], 'server').lkey;
      this.stats.serverRegistrations++;
      this.stats.serverPinnedBytes = Math.max(this.stats.serverPinnedBytes, got.length);
    }
    this.keys.add(sKey);
    if (op === 'READ') must(p, 'memory.write', { addr: sAddr, fill: { byte: pattern, length: got.length } });   // the file's data
    const rid = wrId(WR.RDMA, ++this.seq);
    const serverOp = op === 'READ' ? 'IBV_WR_RDMA_WRITE' : 'IBV_WR_RDMA_READ';
    must(p, 'post.send', { qp: sv.qp, wrs: [{
      wrId: rid, opcode: serverOp, sendFlags: ['IBV_SEND_SIGNALED'], sgList: [{ addr: sAddr, length: got.length, lkey: sKey }],
      remoteAddr: Number(got.descriptor.offset), rkey: got.descriptor.token,
    }] });
    const rwc = await_(s, sv, rid, `server ${serverOp}`);
    // the completion event returns the buffer (per-io: after invalidating its key)
    let serverOk = true;
    if (op === 'WRITE' && verify) serverOk = sameByte(p, sAddr, got.length, pattern);
    if (this.policy === 'per-io') { this.localInv(sv, sKey, 'server'); this.stats.serverInvalidations++; }
    this.free.push(slot);
    const inv = got.channel === SMB2_CHANNEL.RDMA_V1_INVALIDATE ? got.descriptor.token : undefined;
    const cBefore = c.delivered.length;
    sv.apply(sv.conn.send(encodeIoResponse({ command: got.command, messageId: got.messageId, status: 0, count: got.length }, got.sessionId, got.treeId), inv));
    until(s, () => c.delivered.length > cBefore, 'SMB2 response');
    const resp = decodeIoResponse(c.delivered[c.delivered.length - 1]!.message);
    // client: the key must be gone before the buffer is reused ([MS-SMBD] 3.1.4.4)
    const withInv = c.other.findIndex((w) => wrKind(w.wrId) === WR.RECV && w.invalidatedRkey === reg.rkey);
    let invalidatedBy: 'remote' | 'local';
    if (withInv >= 0) { c.other.splice(withInv, 1); invalidatedBy = 'remote'; }
    else { this.localInv(c, reg.rkey, 'client'); invalidatedBy = 'local'; this.stats.clientInvalidations++; }
    const mrState = resultSchema('mr.query').parse(must(p, 'mr.query', { mr: this.cMr })).state;   // a KeyState name
    const dataOk = op === 'READ' ? (verify ? sameByte(p, this.cBuf, length, pattern) : true) : serverOk;
    const ok = resp.status === 0 && resp.count === length && dataOk && mrState === 'free';
    this.stats.ios++;
    this.stats.bytes += length;
    if (ok && verify) this.stats.verified++;
    this.stats.serverKeys = this.keys.size;
    const latencyNs = s.nowNs - t0;
    this.stats.virtualNs += latencyNs;
    this.stats.wallNs += Number(process.hrtime.bigint() - wall0);
    return {
      op, channel, length, descriptor: { offset: `0x${desc.offset.toString(16)}`, token: desc.token, length }, requestHex: toHex(req),
      serverOp, serverStatus: rwc.statusName, responseOpcode: inv !== undefined ? 'IBV_WR_SEND_WITH_INV' : 'IBV_WR_SEND', invalidatedBy,
      clientMrState: mrState, verified: ok && verify, latencyNs,
    };
  }
}

/** every byte of [addr, addr+len) is `byte` (read back through memory.read, 1 MiB at a time) */
function sameByte(p: SmbdSession['port'], addr: number, len: number, byte: number): boolean {
  const want = byte.toString(16).padStart(2, '0');
  for (let off = 0; off < len; off += MiB) {
    const hex = must(p, 'memory.read', { addr: addr + off, length: Math.min(MiB, len - off) }).hex as string;
    for (let i = 0; i < hex.length; i += 2) if (hex[i] !== want[0] || hex[i + 1] !== want[1]) return false;
  }
  return true;
}
