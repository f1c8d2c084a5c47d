// The network commands' validation (device.attachNet/detachNet, qp.connect to a remote host, qp.modify dgid,
// pcap.get of a device) and the GID parser the renderer and the host share; the scenario runner's refusal.
import { describe, expect, it } from 'vitest';
import { Command, describeZodError, gidIpv4, gidText, isIpLiteral, parseGid } from './index.ts';
import { networkStepReason } from './scenario.ts';
import { ScenarioRun } from '../scenario/run.ts';
import type { Executor } from '../host/api.ts';

/** the field a refused command is refused for */
function refused(c: unknown): string | undefined {
  const r = Command.safeParse(c);
  if (r.success) return undefined;
  return describeZodError(r.error).field;
}

describe('GID text', () => {
  it('parses IPv6 text, IPv4-mapped forms and plain IPv4 addresses into 16 bytes', () => {
    expect(gidText(parseGid('10.0.0.1')!)).toBe('0000:0000:0000:0000:0000:ffff:0a00:0001');
    expect(gidText(parseGid('::ffff:127.0.0.1')!)).toBe('0000:0000:0000:0000:0000:ffff:7f00:0001');
    expect(gidText(parseGid('fe80::1')!)).toBe('fe80:0000:0000:0000:0000:0000:0000:0001');
    expect(gidText(parseGid('fe80:0000:0000:0000:0200:00ff:fe00:0000')!)).toBe('fe80:0000:0000:0000:0200:00ff:fe00:0000');
    expect(gidIpv4(parseGid('0000:0000:0000:0000:0000:ffff:c000:0202')!)).toBe('192.0.2.2');
    expect(gidIpv4(parseGid('fe80::1')!)).toBeNull();
  });
  it('refuses malformed GIDs and the zero GID', () => {
    for (const t of ['', '::', '0.0.0.0.0', '300.1.1.1', '1::2::3', '1:2:3:4:5:6:7:8:9', 'fe80::g', 'host.example', '01.2.3.4'])
      expect(parseGid(t), t).toBeNull();
  });
  it('accepts numeric local addresses only (no host names)', () => {
    expect(isIpLiteral('127.0.0.1')).toBe(true);
    expect(isIpLiteral('fe80::1%eth0')).toBe(true);
    expect(isIpLiteral('localhost')).toBe(false);
    expect(isIpLiteral('127.0.0.1%')).toBe(false);
  });
});

describe('network commands: schema', () => {
  it('device.attachNet: defaults port 4791; names the field of bad input', () => {
    const r = Command.safeParse({ cmd: 'device.attachNet', args: { device: 1, interface: 'lo' } });
    expect(r.success && r.data.cmd === 'device.attachNet' && r.data.args.port).toBe(4791);
    expect(refused({ cmd: 'device.attachNet', args: { device: 1, address: '127.0.0.1', port: 65536 } })).toBe('args.port');
    expect(refused({ cmd: 'device.attachNet', args: { device: 1, address: '127.0.0.1', port: -1 } })).toBe('args.port');
    expect(refused({ cmd: 'device.attachNet', args: { device: 1, address: '127.0.0.1', peerPort: 1.5 } })).toBe('args.peerPort');
    expect(refused({ cmd: 'device.attachNet', args: { device: 1, address: 'localhost' } })).toBe('args.address');
    expect(refused({ cmd: 'device.attachNet', args: { device: 1, interface: 'a very long interface name' } })).toBe('args.interface');
    expect(refused({ cmd: 'device.attachNet', args: { device: 0, interface: 'lo' } })).toBe('args.device');
    expect(refused({ cmd: 'device.attachNet', args: { device: 1, interface: 'lo', mtu: 9000 } })).toBe('args');
    expect(refused({ cmd: 'device.detachNet', args: { device: 1 } })).toBeUndefined();
  });
  it('qp.connect: a remote destination (GID, QPN, PSN, sgid index) alongside the in-session peer', () => {
    expect(refused({ cmd: 'qp.connect', args: { qp: 1, peer: 2 } })).toBeUndefined();
    expect(refused({ cmd: 'qp.connect', args: { qp: 1, remote: { dgid: '10.0.0.2', qpn: 0x11, psn: 0 }, sqPsn: 5 } })).toBeUndefined();
    expect(refused({ cmd: 'qp.connect', args: { qp: 1, remote: { dgid: 'fe80::zz', qpn: 17, psn: 0 } } })).toBe('args.remote.dgid');
    expect(refused({ cmd: 'qp.connect', args: { qp: 1, remote: { dgid: '::', qpn: 17, psn: 0 } } })).toBe('args.remote.dgid');
    expect(refused({ cmd: 'qp.connect', args: { qp: 1, remote: { dgid: '10.0.0.2', qpn: 1 << 24, psn: 0 } } })).toBe('args.remote.qpn');
    expect(refused({ cmd: 'qp.connect', args: { qp: 1, remote: { dgid: '10.0.0.2', qpn: 17, psn: -1 } } })).toBe('args.remote.psn');
    expect(refused({ cmd: 'qp.connect', args: { qp: 1, remote: { dgid: '10.0.0.2', qpn: 17 } } })).toBe('args.remote.psn');
    expect(refused({ cmd: 'qp.connect', args: { qp: 1, remote: { dgid: '10.0.0.2', qpn: 17, psn: 0, sgidIndex: 256 } } })).toBe('args.remote.sgidIndex');
    expect(refused({ cmd: 'qp.modify', args: { qp: 1, attr: { qpState: 'IBV_QPS_RTR', dgid: 'nope' }, mask: ['IBV_QP_STATE'] } })).toBe('args.attr.dgid');
    expect(refused({ cmd: 'pcap.get', args: { device: 3 } })).toBeUndefined();
  });
});

describe('network steps in a headless scenario', () => {
  it('are refused with the reason, before the executor sees them', () => {
    expect(networkStepReason('device.attachNet', { device: 'd' })).toMatch(/cannot replay network steps deterministically/);
    expect(networkStepReason('qp.connect', { qp: 'a', remote: { dgid: '10.0.0.1', qpn: 1, psn: 0 } })).toMatch(/another host/);
    expect(networkStepReason('qp.connect', { qp: 'a', peer: 'b' })).toBeNull();
    expect(networkStepReason('engine.step', {})).toBeNull();
    const seen: string[] = [];
    const ex: Executor = {
      exec(c: { cmd: string }) { seen.push(c.cmd); return c.cmd === 'device.create' ? { ok: true, result: { device: 1, handle: 1 } } : { ok: true, result: {} }; },
      drainEvents: () => [],
      pcap: () => new Uint8Array(),
      close() {},
    } as unknown as Executor;
    const rep = new ScenarioRun({
      name: 'net', description: '', seed: 1, devices: [{ name: 'd', profile: 'rxe' }],
      steps: [{ cmd: 'device.attachNet', args: { device: 'd', address: '127.0.0.1', port: 4791 } }],
    } as never, ex).run();
    expect(rep.passed).toBe(false);
    expect(rep.failure).toMatch(/step 1 \(device.attachNet\).*headless scenario cannot replay/);
    expect(seen).not.toContain('device.attachNet');
  });
});
