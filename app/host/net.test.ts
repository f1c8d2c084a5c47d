// Two backend hosts (two sessions, like two laptops) on 127.0.0.1, each with a device on the network: an RC QP
// connected across with the numbers each side shows, an RDMA WRITE from one, the bytes in the other's memory,
// the CQE, and the network pcap. The hosts' own poll timers move the packets (no manual stepping).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HostCore } from './core.ts';
import { NativeExecutor } from './executor.ts';
import type { Command } from '../protocol/index.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'vl-net-'));
type R = Record<string, any>;   // eslint-disable-line @typescript-eslint/no-explicit-any
const cores: HostCore[] = [];
function host(): HostCore {
  const c = new HostCore(new NativeExecutor({ seed: 1 }), { sessionDir: tmp(), defaultDevice: null });
  c.start();
  cores.push(c);
  return c;
}
/** commands as a client sends them (defaults filled in by the schema) */
function run(c: HostCore, cmd: unknown): R {
  const r = c.execute(cmd as Command);
  if (!r.ok) throw new Error(`${(cmd as Command).cmd}: ${r.error.code} ${r.error.message}`);
  return r.result as R;
}
async function until<T>(f: () => T | undefined | null | false, ms = 5000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}
afterEach(() => { while (cores.length) cores.pop()!.close(); });

/** device, PD, 4 KiB buffer + MR, CQ, RC QP on one host */
function side(c: HostCore, name: string) {
  const dev = run(c, { cmd: 'device.create', args: { profile: 'rxe', name } }).device as number;
  const pd = run(c, { cmd: 'pd.alloc', args: { device: dev } }).pd as number;
  const buf = run(c, { cmd: 'buffer.alloc', args: { length: 4096 } });
  const mr = run(c, { cmd: 'mr.reg', args: { pd, addr: buf.addr, length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_READ'] } });
  const cq = run(c, { cmd: 'cq.create', args: { device: dev, cqe: 16 } }).cq as number;
  const qp = run(c, { cmd: 'qp.create', args: { pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC' } });
  return { dev, pd, addr: buf.addr as number, mr, cq, qp: qp.handle as number, qpn: qp.qpNum as number };
}

describe('two hosts on the real wire (UDP on 127.0.0.1)', () => {
  it('connects an RC QP across two sessions and moves an RDMA WRITE; run controls refuse while on the network', async () => {
    const A = host(); const B = host();
    const a = side(A, 'left'); const b = side(B, 'right');
    // ephemeral local ports, each side sending to the other's port
    const na = run(A, { cmd: 'device.attachNet', args: { device: a.dev, address: '127.0.0.1', port: 0 } });
    const nb = run(B, { cmd: 'device.attachNet', args: { device: b.dev, address: '127.0.0.1', port: 0, peerPort: na.port } });
    run(A, { cmd: 'device.detachNet', args: { device: a.dev } });
    const na2 = run(A, { cmd: 'device.attachNet', args: { device: a.dev, address: '127.0.0.1', port: na.port, peerPort: nb.port } });
    expect(na2.port).toBe(na.port);
    expect(na2.gids.map((g: R) => g.gid)).toContain('0000:0000:0000:0000:0000:ffff:7f00:0001');
    // the device list shows the real GID table and the transport
    const listed = (run(A, { cmd: 'device.list', args: {} }).devices as R[]).find((d) => d.handle === a.dev)!;
    expect(listed.net.interface).toBe('lo');
    expect(listed.gids[1].gid).toBe('0000:0000:0000:0000:0000:ffff:7f00:0001');

    // real time: deterministic run controls are refused with the reason
    for (const cmd of [{ cmd: 'engine.step', args: { count: 1 } }, { cmd: 'engine.run', args: {} }, { cmd: 'engine.autorun', args: { on: true } }] as Command[]) {
      const r = A.execute(cmd);
      expect(r.ok).toBe(false);
      if (!r.ok) { expect(r.error.code).toBe('EBUSY'); expect(r.error.message).toMatch(/on the network.*real time/); }
    }

    // connect each side with the other's numbers (GID as an IPv4 address on one side, as GID text on the other)
    const ca = run(A, { cmd: 'qp.connect', args: { qp: a.qp, remote: { dgid: '127.0.0.1', qpn: b.qpn, psn: 0x123 }, sqPsn: 0x456 } });
    expect(ca.sgidIndex).toBe(1);
    run(B, { cmd: 'qp.connect', args: { qp: b.qp, remote: { dgid: '::ffff:127.0.0.1', qpn: a.qpn, psn: 0x456 }, sqPsn: 0x123 } });
    expect(run(A, { cmd: 'qp.query', args: { qp: a.qp } }).attr.qpStateName).toBe('IBV_QPS_RTS');

    run(A, { cmd: 'memory.write', args: { addr: a.addr, data: 'c0ffee0011223344' } });
    run(A, { cmd: 'post.send', args: { qp: a.qp, wrs: [{ wrId: 7, opcode: 'IBV_WR_RDMA_WRITE', sgList: [{ addr: a.addr, length: 8, lkey: a.mr.lkey }], remoteAddr: b.addr + 16, rkey: b.mr.rkey }] } });
    // the hosts' poll timers carry it: bytes land in B, the ACK completes the WR in A
    await until(() => run(B, { cmd: 'memory.read', args: { addr: b.addr + 16, length: 8 } }).hex === 'c0ffee0011223344');
    const wcs = await until(() => { const w = run(A, { cmd: 'cq.poll', args: { cq: a.cq } }).wcs as R[]; return w.length ? w : null; });
    expect(wcs[0]).toMatchObject({ wrId: 7, statusName: 'IBV_WC_SUCCESS', opcodeName: 'IBV_WC_RDMA_WRITE' });
    expect(A.netPolls.work).toBeGreaterThan(0);
    expect(B.netPolls.work).toBeGreaterThan(0);

    const stats = (run(B, { cmd: 'device.list', args: {} }).devices as R[]).find((d) => d.handle === b.dev)!.net.stats;
    expect(stats.rxPackets).toBeGreaterThanOrEqual(1);
    expect(stats.txPackets).toBeGreaterThanOrEqual(1);   // the ACK
    // network pcap: Ethernet + IPv4 + UDP to port nb.port carrying the RDMA WRITE ONLY (opcode 0x0a)
    const pc = run(A, { cmd: 'pcap.get', args: { device: a.dev } });
    const bytes = Buffer.from(pc.base64, 'base64');
    expect(bytes.readUInt32LE(0)).toBe(0xa1b2c3d4);
    const frame = bytes.subarray(24 + 16);
    expect(frame.readUInt16BE(12)).toBe(0x0800);
    expect(frame.readUInt16BE(14 + 20 + 2)).toBe(nb.port);
    expect(frame[14 + 20 + 8]).toBe(0x0a);
    // wire events carry the packets in both sessions
    const kinds = (c: HostCore) => c.journal.read().entries.map((e) => e.command.cmd);
    expect(kinds(A)).toContain('device.attachNet');
    // off the network: run controls work again
    run(A, { cmd: 'device.detachNet', args: { device: a.dev } });
    expect(A.execute({ cmd: 'engine.step', args: { count: 1 } }).ok).toBe(true);
  });

  it('refuses bad network input naming the field', () => {
    const A = host();
    const dev = run(A, { cmd: 'device.create', args: { profile: 'rxe' } }).device as number;
    const bad = (args: Record<string, unknown>, field: string, code?: string) => {
      const r = A.execute({ cmd: 'device.attachNet', args } as Command);
      expect(r.ok).toBe(false);
      if (!r.ok) { expect(r.error.field).toBe(field); if (code) expect(r.error.code).toBe(code); }
    };
    bad({ device: dev, interface: 'nosuch0' }, 'args.interface', 'ENODEV');
    bad({ device: dev }, 'args.interface', 'EINVAL');
    bad({ device: dev, interface: 'lo', address: '127.0.0.1' }, 'args.interface', 'EINVAL');
    bad({ device: dev, address: '192.0.2.250', port: 0 }, 'args.address');     // not an address of this host
    const qp = (() => {
      const pd = run(A, { cmd: 'pd.alloc', args: { device: dev } }).pd;
      const cq = run(A, { cmd: 'cq.create', args: { device: dev, cqe: 4 } }).cq;
      return run(A, { cmd: 'qp.create', args: { pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC' } }).handle as number;
    })();
    const r = A.execute({ cmd: 'qp.connect', args: { qp, remote: { dgid: '127.0.0.1', qpn: 17, psn: 0 } } } as Command);
    expect(r).toMatchObject({ ok: false, error: { code: 'ENETDOWN', field: 'args.remote' } });
    const r2 = A.execute({ cmd: 'qp.connect', args: { qp } } as Command);
    expect(r2).toMatchObject({ ok: false, error: { field: 'args.peer' } });
    expect(A.execute({ cmd: 'pcap.get', args: { device: dev } })).toMatchObject({ ok: false, error: { code: 'ENOENT', field: 'args.device' } });
  });
});

describe('network steps in the scenario recorder', () => {
  it('records attach/connect-remote with object names; the saved file is refused headless with the reason', async () => {
    const { ScenarioHostCore } = await import('./recorder.ts');
    const { runScenario } = await import('../scenario/run.ts');
    const core = new ScenarioHostCore(new NativeExecutor({ seed: 1 }), { sessionDir: tmp(), defaultDevice: null });
    core.start();
    cores.push(core);
    const s = side(core, 'laptop');
    run(core, { cmd: 'device.attachNet', args: { device: s.dev, address: '127.0.0.1', port: 0 } });
    run(core, { cmd: 'qp.connect', args: { qp: s.qp, remote: { dgid: '127.0.0.1', qpn: 0x11, psn: 0 } } });
    run(core, { cmd: 'device.detachNet', args: { device: s.dev } });
    const saved = run(core, { cmd: 'scenario.save', args: {} });
    const sc = JSON.parse(saved.json as string) as { steps: { cmd: string; args: Record<string, unknown> }[] };
    const attach = sc.steps.find((x) => x.cmd === 'device.attachNet')!;
    const conn = sc.steps.find((x) => x.cmd === 'qp.connect')!;
    expect(typeof attach.args.device).toBe('string');            // named, like every handle in a recording
    expect(typeof conn.args.qp).toBe('string');
    expect(conn.args.remote).toMatchObject({ dgid: '127.0.0.1', qpn: 0x11, psn: 0 });
    expect(sc.steps.some((x) => x.cmd === 'device.detachNet')).toBe(true);
    const fresh = new NativeExecutor({ seed: 1 });
    const rep = runScenario(saved.json as string, fresh);
    fresh.close();
    expect(rep.passed).toBe(false);
    expect(rep.failure).toMatch(/device\.attachNet.*headless scenario cannot replay network steps deterministically/);
  });
});
