// Lab 4's offload commands end to end through the device executor: caps, an NVMF SRQ with its staging buffer, a soft
// NVMe function with a P2P queue pair as the backend nvme_ctrl, the namespace map (and its EEXIST / ENOENT /
// ENOTSUP), the enable after the Connect capsule, then one offloaded 4 KiB WRITE and one 4 KiB READ issued by a host
// QP as NVMe/RDMA capsules with keyed SGLs: every byte compared on the medium and back in host memory, the device's
// typed steps checked in order, and software never seeing the I/O.
import { afterEach, describe, expect, it } from 'vitest';
import { NativeExecutor } from '../../app/host/executor.ts';
import { resultSchema, type Command, type CommandName, type DeviceEvent } from '../../app/protocol/index.ts';
import { NvmfStep } from './enums.ts';

const canon = (v: unknown): string => JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x));
const open: NativeExecutor[] = [];
afterEach(() => { for (const x of open.splice(0)) x.close(); });

function rig() {
  const ex = new NativeExecutor({ seed: 4 });
  open.push(ex);
  const run = <T = Record<string, unknown>>(cmd: string, args: Record<string, unknown> = {}): T => {
    const r = ex.exec({ cmd, args } as unknown as Command);
    if (!r.ok) throw new Error(`${cmd}: ${r.error.code} ${r.error.message}`);
    // the reply matches the command's result schema exactly (parsing strips unknown keys: the parsed value must equal it)
    const parsed = resultSchema(cmd as CommandName).parse(r.result);
    expect(canon(parsed), cmd).toBe(canon(JSON.parse(JSON.stringify(r.result))));
    return r.result as T;
  };
  const err = (cmd: string, args: Record<string, unknown>): string => {
    const r = ex.exec({ cmd, args } as unknown as Command);
    return r.ok ? 'ok' : r.error.code;
  };
  return { ex, run, err };
}

/** A 64-byte NVMe SQE (NVMe base spec 4.2) with a keyed SGL data block (type 4, subtype 0: identifier 0x40). */
function sqe(o: { opc: number; cid: number; nsid?: number; slba?: number; nlb?: number; addr?: number; len?: number; rkey?: number; fctype?: number }): string {
  const b = Buffer.alloc(64);
  b[0] = o.opc; b[1] = 0x40; b.writeUInt16LE(o.cid, 2); b.writeUInt32LE(o.nsid ?? 0, 4);
  if (o.fctype !== undefined) b[4] = o.fctype;
  if (o.addr !== undefined) {
    b.writeBigUInt64LE(BigInt(o.addr), 24);
    b.writeUIntLE(o.len ?? 0, 32, 3); b.writeUInt32LE(o.rkey ?? 0, 35); b[39] = 0x40;
  }
  if (o.nlb) { b.writeUInt32LE(o.slba ?? 0, 40); b.writeUInt16LE(o.nlb - 1, 48); }   // CDW10 SLBA, CDW12 NLB 0's based
  return b.toString('hex');
}

const pattern = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 29 + seed * 7 + (i >> 8)) & 0xff));

describe('NVMe-oF target offload commands', () => {
  it('setup errors, then an offloaded 4 KiB WRITE and READ with every byte verified', () => {
    const { ex, run, err } = rig();
    const hdev = run<{ handle: number }>('device.create', { profile: 'cx' }).handle;
    const tdev = run<{ handle: number }>('device.create', { profile: 'cx' }).handle;
    const rxe = run<{ handle: number }>('device.create', { profile: 'rxe' }).handle;
    expect(run<{ offloadTypeRc: number; maxIoSz: number }>('nvmf.caps', { device: tdev })).toMatchObject({ offloadTypeRc: 7, maxIoSz: 131072 });
    expect(run<{ offloadTypeRc: number }>('nvmf.caps', { device: rxe }).offloadTypeRc).toBe(0);
    const hpd = run<{ pd: number }>('pd.alloc', { device: hdev }).pd;
    const tpd = run<{ pd: number }>('pd.alloc', { device: tdev }).pd;
    const rpd = run<{ pd: number }>('pd.alloc', { device: rxe }).pd;
    const hcq = run<{ cq: number }>('cq.create', { device: hdev, cqe: 256 }).cq;
    const tcq = run<{ cq: number }>('cq.create', { device: tdev, cqe: 256 }).cq;
    const hbuf = run<{ buffer: number; addr: number }>('buffer.alloc', { length: 1 << 20 });
    const hmr = run<{ handle: number; lkey: number; rkey: number }>('mr.reg', { pd: hpd, addr: hbuf.addr, length: 1 << 20, access: ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_READ', 'IBV_ACCESS_REMOTE_WRITE'] });
    const stg = run<{ addr: number }>('buffer.alloc', { length: 1 << 20 });
    const smr = run<{ handle: number }>('mr.reg', { pd: tpd, addr: stg.addr, length: 1 << 20, access: ['IBV_ACCESS_LOCAL_WRITE'] });
    const rbuf = run<{ addr: number }>('buffer.alloc', { length: 16 * 8192 });
    const rmr = run<{ handle: number; lkey: number }>('mr.reg', { pd: tpd, addr: rbuf.addr, length: 16 * 8192, access: ['IBV_ACCESS_LOCAL_WRITE'] });
    const stagingBuf = { mr: smr.handle, addr: stg.addr, len: 1 << 20 };
    // the caps gate: a device without offload refuses the SRQ type; attributes outside the caps are refused
    expect(err('nvmf.srq_create', { pd: rpd, maxWr: 16, stagingBuf, cq: tcq })).toBe('EOPNOTSUPP');
    expect(err('nvmf.srq_create', { pd: tpd, maxWr: 16, stagingBuf, cq: tcq, maxIoSz: 1 << 20 })).toBe('EINVAL');
    const srq = run<{ srq: number }>('nvmf.srq_create', { pd: tpd, maxWr: 64, stagingBuf, cq: tcq }).srq;
    run('srq.post_recv', { srq, wrs: Array.from({ length: 16 }, (_, i) => ({ wrId: 100 + i, sgList: [{ addr: rbuf.addr + i * 8192, length: 8192, lkey: rmr.lkey }] })) });
    // the backend: a soft NVMe SSD, one namespace of 512-byte blocks, a P2P queue pair handed to the device
    const nvme = run<{ nvme: number; bar0: number }>('nvme.create', {});
    run('nvme.add_namespace', { nvme: nvme.nvme, nsid: 1, nlba: 4096 });
    const q = run<{ sqMr: number; cqMr: number; sqAddr: number; cqAddr: number; sqdb: number; cqdb: number; qid: number }>('nvme.p2p_queue', { nvme: nvme.nvme, pd: tpd, depth: 32 });
    expect(q.sqdb).toBe(nvme.bar0 + 0x1000 + 2 * q.qid * 4);
    expect(q.cqdb).toBe(nvme.bar0 + 0x1000 + (2 * q.qid + 1) * 4);
    const ctrl = run<{ nvmeCtrl: number }>('nvmf.ctrl_create', {
      srq, sqBuf: { mr: q.sqMr, addr: q.sqAddr, len: 32 * 64 }, cqBuf: { mr: q.cqMr, addr: q.cqAddr, len: 32 * 16 }, sqdb: q.sqdb, cqdb: q.cqdb,
    }).nvmeCtrl;
    // ENOTSUP as the RFC names it; on Linux ENOTSUP == EOPNOTSUPP (95) and the protocol spells it as rdma-core does
    expect(err('nvmf.map_nsid', { nvmeCtrl: ctrl, feNsid: 1, lbaDataSize: 4104, nvmeNsid: 1 })).toBe('EOPNOTSUPP');
    run('nvmf.map_nsid', { nvmeCtrl: ctrl, feNsid: 1, lbaDataSize: 512, nvmeNsid: 1 });
    expect(err('nvmf.map_nsid', { nvmeCtrl: ctrl, feNsid: 1, lbaDataSize: 512, nvmeNsid: 1 })).toBe('EEXIST');
    expect(err('nvmf.unmap_nsid', { nvmeCtrl: ctrl, feNsid: 9 })).toBe('ENOENT');
    // the connection: host QP <-> target QP receiving from the offload SRQ
    const hqp = run<{ handle: number }>('qp.create', { pd: hpd, sendCq: hcq, recvCq: hcq, qpType: 'IBV_QPT_RC', cap: { maxSendWr: 64, maxRecvWr: 64 } }).handle;
    const tqp = run<{ handle: number }>('qp.create', { pd: tpd, sendCq: tcq, recvCq: tcq, srq, qpType: 'IBV_QPT_RC', cap: { maxSendWr: 64, maxRecvWr: 1 } }).handle;
    expect(err('nvmf.qp_enable', { qp: tqp })).toBe('EINVAL');   // not connected yet
    run('qp.connect', { qp: hqp, peer: tqp });
    const RESP = 0x80000, DATA = 0x10000, BACK = 0x20000;
    run('post.recv', { qp: hqp, wrs: Array.from({ length: 8 }, (_, i) => ({ wrId: 500 + i, sgList: [{ addr: hbuf.addr + RESP + i * 16, length: 16, lkey: hmr.lkey }] })) });
    const send = (cid: number, hex: string) => {
      const at = hbuf.addr + cid * 64;
      run('memory.write', { addr: at, data: hex });
      run('post.send', { qp: hqp, wrs: [{ wrId: cid, opcode: 'IBV_WR_SEND', sendFlags: [], sgList: [{ addr: at, length: 64, lkey: hmr.lkey }] }] });
      run('engine.run', {});
    };
    // the I/O queue's Connect capsule goes to software; then the target enables offload on the QP
    send(1, sqe({ opc: 0x7f, cid: 1, fctype: 0x01 }));
    const sw = run<{ wcs: { opcodeName: string }[] }>('cq.poll', { cq: tcq, max: 8 }).wcs;
    expect(sw.map((w) => w.opcodeName)).toEqual(['IBV_WC_RECV']);
    run('nvmf.qp_enable', { qp: tqp });
    ex.drainEvents();

    const data = pattern(4096, 3);
    run('memory.write', { addr: hbuf.addr + DATA, data: data.toString('hex') });
    send(2, sqe({ opc: 0x01, cid: 2, nsid: 1, slba: 16, nlb: 8, addr: hbuf.addr + DATA, len: 4096, rkey: hmr.rkey }));
    const stepsOf = (evs: DeviceEvent[], cid: number) => evs.filter((e) => e.kind === 'Offload' && e.b === cid).map((e) => NvmfStep.names[NvmfStep.names.findIndex((n) => NvmfStep.values[n] === e.a)]);
    expect(stepsOf(ex.drainEvents(), 2)).toEqual(['RECV', 'PARSE', 'STAGING_ALLOC', 'RDMA_READ', 'RDMA_READ_DONE', 'SQE_WRITE', 'SQ_DOORBELL', 'CQE', 'CQ_DOORBELL', 'SEND_RESPONSE', 'DONE']);
    const medium = run<{ hex: string }>('nvme.peek', { nvme: nvme.nvme, nsid: 1, slba: 16, nlb: 8 }).hex;
    expect(medium).toBe(data.toString('hex'));

    send(3, sqe({ opc: 0x02, cid: 3, nsid: 1, slba: 16, nlb: 8, addr: hbuf.addr + BACK, len: 4096, rkey: hmr.rkey }));
    expect(stepsOf(ex.drainEvents(), 3)).toEqual(['RECV', 'PARSE', 'STAGING_ALLOC', 'SQE_WRITE', 'SQ_DOORBELL', 'CQE', 'CQ_DOORBELL', 'RDMA_WRITE', 'SEND_RESPONSE', 'DONE']);
    expect(run<{ hex: string }>('memory.read', { addr: hbuf.addr + BACK, length: 4096 }).hex).toBe(data.toString('hex'));

    // two response capsules (NVMe CQEs): CIDs 2 and 3, status SUCCESS
    const wcs = run<{ wcs: { statusName: string; opcodeName: string; byteLen: number }[] }>('cq.poll', { cq: hcq, max: 8 }).wcs;
    expect(wcs.map((w) => [w.opcodeName, w.statusName, w.byteLen])).toEqual([['IBV_WC_RECV', 'IBV_WC_SUCCESS', 16], ['IBV_WC_RECV', 'IBV_WC_SUCCESS', 16]]);
    const cqes = Buffer.from(run<{ hex: string }>('memory.read', { addr: hbuf.addr + RESP, length: 32 }).hex, 'hex');
    expect([cqes.readUInt16LE(12), cqes.readUInt16LE(14)]).toEqual([2, 0]);
    expect([cqes.readUInt16LE(16 + 12), cqes.readUInt16LE(16 + 14)]).toEqual([3, 0]);
    // software saw no I/O; the counters say so
    expect(run<{ wcs: unknown[] }>('cq.poll', { cq: tcq, max: 8 }).wcs).toEqual([]);
    const snap = run<{ counters: { offloaded: number; toSoftware: number }; namespaces: { counters: { readCmds: number; writeCmds: number; writeBlocks: number } }[]; staging: { pages: number[] } }>('nvmf.snapshot', { srq });
    expect(snap.counters).toMatchObject({ offloaded: 2, toSoftware: 1 });
    expect(snap.namespaces[0]!.counters).toMatchObject({ readCmds: 1, writeCmds: 1, writeBlocks: 8 });
    expect(snap.staging.pages.every((p) => p === 0)).toBe(true);
    const nv = run<{ csts: number; counters: { reads: number; writes: number }; queues: unknown[] }>('nvme.snapshot', { nvme: nvme.nvme });
    expect(nv.counters).toMatchObject({ reads: 1, writes: 1 });
    expect(nv.csts & 1).toBe(1);
    expect(nv.queues.length).toBe(4);   // admin SQ / CQ and the P2P pair

    // faults: a lost backend command times out (1 s of virtual time), the ctrl is torn down, the QP fails
    run('nvme.inject_timeout', { nvme: nvme.nvme, n: 1 });
    send(4, sqe({ opc: 0x02, cid: 4, nsid: 1, slba: 0, nlb: 1, addr: hbuf.addr + BACK, len: 512, rkey: hmr.rkey }));
    const evs = ex.drainEvents();
    expect(evs.some((e) => e.kind === 'Offload' && e.a === NvmfStep.values.BACKEND_TIMEOUT && e.b === 4)).toBe(true);
    expect(evs.some((e) => e.kind === 'AsyncEvent' && e.obj === tqp)).toBe(true);
    const after = run<{ ctrls: { alive: boolean }[]; inflight: unknown[] }>('nvmf.snapshot', { srq });
    expect(after.ctrls[0]!.alive).toBe(false);
    expect(after.inflight).toEqual([]);
    run('nvme.pci_error', { nvme: nvme.nvme });
    expect(run<{ csts: number; queues: unknown[] }>('nvme.snapshot', { nvme: nvme.nvme })).toMatchObject({ csts: 2, queues: [] });
    run('nvme.set_ready', { nvme: nvme.nvme, nsid: 1, ready: false });
    run('nvmf.unmap_nsid', { nvmeCtrl: ctrl, feNsid: 1 });
    run('nvmf.ctrl_remove', { nvmeCtrl: ctrl });
  });
});
