// The software target and the host driver over the device: Connect, properties, Identify, I/O with every byte
// verified, and the error statuses of the Linux target for each bad capsule.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createExecutor, type NativeExecutor } from '../../app/host/executor.ts';
import { DEFAULT_FABRIC, NvmfFabric } from './fabric.ts';
import { CC, Cns, CSTS, Prop, Sc, Sct } from './spec.ts';

let x: NativeExecutor;
let f: NvmfFabric;
const cfg = { ...DEFAULT_FABRIC, queueDepth: 32, blocks: 2048 };
const dev = (name: string) => { const r = x.exec({ cmd: 'device.create', args: { profile: 'rxe', name } }); if (!r.ok) throw new Error(r.error.message); return (r.result as { device: number }).device; };
const CC_ENABLE = BigInt(CC.EN | (6 << CC.IOSQES_SHIFT) | (4 << CC.IOCQES_SHIFT));

function q(qid: number, depth: number) { const r = f.addQueue(qid, depth); if (!('host' in r)) throw new Error('rejected'); return r; }
function connectAdmin() {
  q(0, 32);
  return f.run(0, { op: 'connect', qid: 0, sqsize: 31, kato: 5000, subnqn: cfg.subnqn, hostnqn: cfg.hostnqn }).done!;
}
function enable() {
  expect(f.run(0, { op: 'property-set', offset: Prop.CC, value: CC_ENABLE }).done!.cqe.status).toBe(0);
}

beforeEach(() => { x = createExecutor({ seed: 7 }); f = new NvmfFabric(x, dev('target'), dev('host'), cfg); });
afterEach(() => x.close());

describe('admin queue', () => {
  it('Connect returns a dynamic controller ID; CC.EN=1 makes CSTS.RDY; CAP and VS read back', () => {
    const c = connectAdmin();
    expect(c.cqe.status).toBe(0);
    expect(c.cqe.dw0 & 0xffff).toBe(1);
    expect(f.target.ctrl!.hostnqn).toBe(cfg.hostnqn);
    expect(f.run(0, { op: 'property-get', offset: Prop.CSTS, size: 4 }).done!.cqe.dw0).toBe(0);
    enable();
    expect(f.run(0, { op: 'property-get', offset: Prop.CSTS, size: 4 }).done!.cqe.dw0 & CSTS.RDY).toBe(1);
    const cap = f.run(0, { op: 'property-get', offset: Prop.CAP, size: 8 }).done!.cqe;
    expect(cap.dw0).toBe(0x0f00001f);   // TO 15, MQES 31
    expect(cap.dw1).toBe(0x00000820);   // CSS bits 37 and 43
    expect(f.run(0, { op: 'property-get', offset: Prop.VS, size: 4 }).done!.cqe.dw0).toBe(0x00010300);
  });

  it('Identify Controller comes back by RDMA WRITE with the NVMe-oF fields (IOCCSZ, IORCSZ)', () => {
    connectAdmin(); enable();
    const d = f.run(0, { op: 'identify', cns: Cns.CONTROLLER, nsid: 0 }).done!;
    expect(d.cqe.status).toBe(0);
    const v = new DataView(d.data!.buffer, d.data!.byteOffset);
    expect(v.getUint16(78, true)).toBe(1);                          // CNTLID
    expect(v.getUint32(1792, true)).toBe((64 + cfg.inlineSize) / 16); // IOCCSZ
    expect(v.getUint32(1796, true)).toBe(1);                         // IORCSZ
    const ns = f.run(0, { op: 'identify', cns: Cns.NAMESPACE, nsid: 1 }).done!;
    expect(new DataView(ns.data!.buffer, ns.data!.byteOffset).getBigUint64(0, true)).toBe(2048n);
  });

  it('an admin command before CC.EN is a Command Sequence Error; a bad SUBNQN is refused with IPO/IATTR', () => {
    connectAdmin();
    const ka = f.run(0, { op: 'keep-alive' }).done!;
    expect([ka.cqe.sct, ka.cqe.sc, ka.cqe.dnr]).toEqual([Sct.GENERIC, Sc.CMD_SEQ_ERROR, true]);
    q(1, 8);
    const bad = f.run(1, { op: 'connect', qid: 1, sqsize: 7, kato: 0, cntlid: 1, subnqn: 'nqn.wrong', hostnqn: cfg.hostnqn }).done!;
    expect([bad.cqe.sct, bad.cqe.sc, bad.cqe.dnr, bad.cqe.dw0]).toEqual([Sct.COMMAND_SPECIFIC, Sc.CONNECT_INVALID_PARAM, true, 0x10100]);
  });
});

describe('I/O queue', () => {
  function ioQueue() {
    connectAdmin(); enable();
    q(1, 32);
    const c = f.run(1, { op: 'connect', qid: 1, sqsize: 31, kato: 0, cntlid: 1, subnqn: cfg.subnqn, hostnqn: cfg.hostnqn }).done!;
    expect(c.cqe.status).toBe(0);
  }

  it('WRITE (keyed, in-capsule, fast-registered) then READ: every byte verified; the invalidating key is invalidated', () => {
    ioQueue();
    expect(f.run(1, { op: 'write', nsid: 1, slba: 0n, nlb: 8, sgl: 'keyed' }).done!.cqe.status).toBe(0);
    expect(f.run(1, { op: 'write', nsid: 1, slba: 8n, nlb: 2, sgl: 'inline' }).done!.cqe.status).toBe(0);
    const w = f.run(1, { op: 'write', nsid: 1, slba: 16n, nlb: 16, sgl: 'keyed-inv' }).done!;
    expect(w.cqe.status).toBe(0);
    expect(w.invalidatedRkey).toBeDefined();
    const r = f.run(1, { op: 'read', nsid: 1, slba: 0n, nlb: 40, sgl: 'keyed-inv' }).done!;
    expect(r.cqe.status).toBe(0);
    expect(r.verified).toBe(true);
    expect(f.host.counters.verifiedBytes).toBe(40 * 512);
    expect(f.ns.counters).toMatchObject({ writeCmds: 3, writeBlocks: 26, writeInlineCmds: 1, readCmds: 1, readBlocks: 40 });
  });

  it('queue depth 32: 256 reads after writes, all verified', () => {
    ioQueue();
    const w = f.runMany(1, 64, 32, (i) => ({ op: 'write', nsid: 1, slba: BigInt(i * 8), nlb: 8, sgl: 'keyed' }));
    expect(w.every((d) => d.cqe.status === 0)).toBe(true);
    const r = f.runMany(1, 256, 32, (i) => ({ op: 'read', nsid: 1, slba: BigInt((i * 37 % 64) * 8), nlb: 8, sgl: 'keyed' }));
    expect(r.length).toBe(256);
    expect(r.every((d) => d.cqe.status === 0 && d.verified === true)).toBe(true);
  });

  it('the errors of a bad capsule: SGL too long, bad in-capsule offset, unknown NSID, LBA out of range', () => {
    ioQueue();
    const st = (d: ReturnType<NvmfFabric['run']>) => [d.done!.cqe.sct, d.done!.cqe.sc, d.done!.cqe.dnr];
    expect(st(f.run(1, { op: 'write', nsid: 1, slba: 0n, nlb: 1, sgl: 'keyed' }, { sglLength: 1024 * 1024 }))).toEqual([0, Sc.SGL_INVALID_DATA, true]);
    expect(st(f.run(1, { op: 'write', nsid: 1, slba: 0n, nlb: 1, sgl: 'inline' }, { inlineOffset: 4096 }))).toEqual([0, Sc.SGL_INVALID_OFFSET, true]);
    expect(st(f.run(1, { op: 'read', nsid: 9, slba: 0n, nlb: 1, sgl: 'keyed' }))).toEqual([0, Sc.INVALID_NS, true]);
    expect(st(f.run(1, { op: 'read', nsid: 1, slba: 2047n, nlb: 2, sgl: 'keyed' }))).toEqual([0, Sc.LBA_RANGE, true]);
  });

  it('an I/O capsule on a queue before its Connect: Invalid Opcode, DNR', () => {
    connectAdmin(); enable();
    q(1, 8);
    const d = f.run(1, { op: 'read', nsid: 1, slba: 0n, nlb: 1, sgl: 'keyed' }).done!;
    expect([d.cqe.sct, d.cqe.sc, d.cqe.dnr]).toEqual([0, Sc.INVALID_OPCODE, true]);
  });

  it('a stale rkey: the target\'s RDMA READ fails with a remote access error and no response comes', () => {
    ioQueue();
    const d = f.run(1, { op: 'write', nsid: 1, slba: 0n, nlb: 1, sgl: 'keyed' }, { badKey: true });
    expect(d.done).toBeNull();
    expect(f.flow.since(d.flowFrom).some((r) => r.owner === 'software' && r.stage === 'ERROR' && r.detail === 'IBV_WC_REM_ACCESS_ERR')).toBe(true);
  });
});

describe('verification can fail', () => {
  it('a byte changed behind the host\'s back in the namespace makes the READ a mismatch', () => {
    connectAdmin(); enable();
    q(1, 8);
    f.run(1, { op: 'connect', qid: 1, sqsize: 7, kato: 0, cntlid: 1, subnqn: cfg.subnqn, hostnqn: cfg.hostnqn });
    f.run(1, { op: 'write', nsid: 1, slba: 4n, nlb: 1, sgl: 'keyed' });
    const b = f.ns.read(4n, 1); b[100] ^= 1; f.ns.write(4n, b);
    const r = f.run(1, { op: 'read', nsid: 1, slba: 4n, nlb: 1, sgl: 'keyed' }).done!;
    expect(r.cqe.status).toBe(0);
    expect(r.verified).toBe(false);
    expect(f.host.counters.mismatches).toBe(1);
  });
});

describe('RDMA CM private data', () => {
  it('an admin queue asking for more than NVME_AQ_DEPTH entries is rejected with INVALID_HSQSIZE; a good one gets CRQSIZE', () => {
    const bad = f.addQueue(0, 64);
    expect(bad).toEqual({ rejected: 4, messages: ['REQ', 'REJ'] });
    const good = f.addQueue(0, 32);
    expect('host' in good && good.cm.messages).toEqual(['REQ', 'REP', 'RTU']);
    expect('host' in good && good.cm.active.rep?.crqsize).toBe(32);
    expect('host' in good && good.cm.passive.state).toBe('ESTABLISHED');
  });
});
