// SMB2 READ / WRITE through buffer descriptors on the device: the server's RDMA WRITE / READ against the client's
// fast-registered token, SEND_WITH_INV for RDMA_V1_INVALIDATE (the client's key invalidated by the response),
// LOCAL_INV by the client for RDMA_V1, data verified in both memories; both server buffer policies counted.
import { afterEach, describe, expect, it } from 'vitest';
import { NativeExecutor } from '../../app/host/executor.ts';
import { SmbdSession } from './session.ts';
import { SmbdIo } from './io.ts';
import type { Policy } from './io.ts';
import { decodeIoRequest, encodeIoRequest, SMB2_READ, SMB2_WRITE } from './smb2.ts';
import { fromHex } from './pdu.ts';

const exs: NativeExecutor[] = [];
afterEach(() => { for (const e of exs.splice(0)) e.close(); });
function rig(policy: Policy, ioSize = 64 * 1024, slots = 4): SmbdIo {
  const ex = new NativeExecutor({ seed: 5 });
  exs.push(ex);
  const s = new SmbdSession(ex);
  s.setup();
  s.negotiate();
  const io = new SmbdIo(s, policy, ioSize, slots);
  io.setup();
  return io;
}

describe('SMB2 READ/WRITE request bytes', () => {
  it('READ: StructureSize 49, Channel and ReadChannelInfoOffset/Length 0x70/16, the descriptor at 0x70', () => {
    const b = encodeIoRequest({ command: SMB2_READ, messageId: 7n, sessionId: 1n, treeId: 1, fileOffset: 0n, length: 65536, channel: 2, descriptor: { offset: 0x7f00n, token: 0x1234a5, length: 65536 } });
    expect(b.length).toBe(128);
    const v = new DataView(b.buffer);
    expect([v.getUint16(64, true), v.getUint32(68, true), v.getUint32(100, true), v.getUint16(108, true), v.getUint16(110, true)]).toEqual([49, 65536, 2, 0x70, 16]);
    expect(decodeIoRequest(b)).toMatchObject({ command: SMB2_READ, length: 65536, channel: 2, descriptor: { token: 0x1234a5, length: 65536 } });
  });
  it('WRITE: Length 0, RemainingBytes the length, WriteChannelInfoOffset/Length 0x70/16', () => {
    const b = encodeIoRequest({ command: SMB2_WRITE, messageId: 7n, sessionId: 1n, treeId: 1, fileOffset: 0n, length: 4096, channel: 1, descriptor: { offset: 0n, token: 9, length: 4096 } });
    const v = new DataView(b.buffer);
    expect([v.getUint32(68, true), v.getUint32(96, true), v.getUint32(100, true), v.getUint16(104, true), v.getUint16(106, true)]).toEqual([0, 1, 4096, 0x70, 16]);
  });
  it('a channel info outside the message is refused (ksmbd validates ChannelInfoOffset/Length)', () => {
    const b = encodeIoRequest({ command: SMB2_READ, messageId: 7n, sessionId: 1n, treeId: 1, fileOffset: 0n, length: 1, channel: 1, descriptor: { offset: 0n, token: 9, length: 1 } });
    new DataView(b.buffer).setUint16(108, 0x78, true);
    expect(() => decodeIoRequest(b)).toThrow(/channel info/);
    expect(() => decodeIoRequest(fromHex('00'))).toThrow();
  });
});

describe('RDMA data movement', () => {
  it('READ with RDMA_V1_INVALIDATE: server RDMA WRITE, response by SEND_WITH_INV, the client key FREE, data verified', () => {
    const io = rig('pool');
    const r = io.io('READ', 'RDMA_V1_INVALIDATE');
    expect(r).toMatchObject({ serverOp: 'IBV_WR_RDMA_WRITE', serverStatus: 'IBV_WC_SUCCESS', responseOpcode: 'IBV_WR_SEND_WITH_INV', invalidatedBy: 'remote', verified: true });
    expect(r.clientMrState.toLowerCase()).toContain('free');
  });
  it('WRITE with RDMA_V1: server RDMA READ, plain SEND, the client invalidates its key with LOCAL_INV', () => {
    const io = rig('pool');
    const r = io.io('WRITE', 'RDMA_V1');
    expect(r).toMatchObject({ serverOp: 'IBV_WR_RDMA_READ', responseOpcode: 'IBV_WR_SEND', invalidatedBy: 'local', verified: true });
    expect(io.stats.clientInvalidations).toBe(1);
  });
  it('every I/O uses a new client key (key byte incremented); the pool registers once, per-io once per I/O', () => {
    const pool = rig('pool'), per = rig('per-io');
    const tokens = [];
    for (let i = 0; i < 4; i++) {
      tokens.push(pool.io(i % 2 ? 'WRITE' : 'READ', 'RDMA_V1_INVALIDATE').descriptor.token);
      per.io(i % 2 ? 'WRITE' : 'READ', 'RDMA_V1_INVALIDATE');
    }
    expect(new Set(tokens).size).toBe(4);
    expect(pool.stats).toMatchObject({ ios: 4, verified: 4, serverRegistrations: 1, serverInvalidations: 0, serverKeys: 1, serverPinnedBytes: 4 * 64 * 1024 });
    expect(per.stats).toMatchObject({ ios: 4, verified: 4, serverRegistrations: 4, serverInvalidations: 4, serverKeys: 4, serverPinnedBytes: 64 * 1024 });
  });
});
