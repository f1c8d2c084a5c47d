// The console store's network state: device.list's "net" becomes the device's NetView and puts the run bar in
// real time; the "Put on network" and "connect to a remote host" actions send the commands the host expects;
// form validation names the field.
import { describe, expect, it } from 'vitest';
import type { Command, Reply } from '../../../../app/protocol/index.ts';
import { createConsoleStore, localGid, netView, type ConsoleTransport } from '../store.ts';
import { commandProblem } from '../validate.ts';
import { deviceList, deviceOut, qpOut } from './replies.ts';

function fakeHost(answer: (c: Command) => unknown) {
  const sent: Command[] = [];
  const transport: ConsoleTransport = {
    async call(c) { sent.push(c); return { type: 'reply', id: sent.length, ok: true, result: answer(c) } as Reply; },
    onEvents() {}, onHost() {}, control() {},
  };
  return { sent, transport };
}
const NET = {
  interface: 'lo', port: 4791,
  gids: [{ index: 0, gid: 'fe80:0000:0000:0000:0200:00ff:fe00:0000', type: 'RoCE v2', ip: 'fe80::200:ff:fe00:0' },
    { index: 1, gid: '0000:0000:0000:0000:0000:ffff:7f00:0001', type: 'RoCE v2', ip: '127.0.0.1' }],
  stats: { txPackets: 3, txBytes: 120, rxPackets: 2, rxBytes: 80, rxDropped: 0, txDropped: 0 },
};

describe('network state in the console store', () => {
  it('reads the device transport from device.list and switches the run bar to real time', async () => {
    let onNet = false;
    const h = fakeHost((c) => (c.cmd === 'device.list'
      ? deviceList({ devices: [deviceOut({ handle: 1, name: 'a', net: onNet ? NET : null })], interfaces: [{ name: 'lo', index: 1, up: true, loopback: true, mtu: 65536, addrs: ['127.0.0.1'] }] })
      : {}));
    const store = createConsoleStore({ transport: h.transport, schedule: () => {} });
    await store.getState().refreshDevices();
    expect(store.getState().realTime).toBe(false);
    expect(store.getState().interfaces.map((i) => i.name)).toEqual(['lo']);
    onNet = true;
    await store.getState().attachNet(1, { address: '127.0.0.1', port: 4791, peerPort: 4792 });
    expect(h.sent.find((c) => c.cmd === 'device.attachNet')).toEqual({ cmd: 'device.attachNet', args: { device: 1, address: '127.0.0.1', port: 4791, peerPort: 4792 } });
    expect(store.getState().realTime).toBe(true);
    expect(store.getState().devices[0]!.net!.stats.rxPackets).toBe(2);
    expect(localGid(store.getState().devices[0]!.net)).toMatchObject({ index: 1, ip: '127.0.0.1' });
    onNet = false;
    await store.getState().detachNet(1);
    expect(h.sent.at(-2)).toEqual({ cmd: 'device.detachNet', args: { device: 1 } });
    expect(store.getState().realTime).toBe(false);
  });

  it('connects to a remote host with the numbers typed in, and saves the network pcap of a device', async () => {
    const h = fakeHost((c) => (c.cmd === 'pcap.get' ? { format: 'pcap', linktype: 'LINKTYPE_ETHERNET', length: 3, base64: 'AQID' } : c.cmd === 'qp.query' ? qpOut({ handle: 5, qpNum: 17 }) : {}));
    const store = createConsoleStore({ transport: h.transport, schedule: () => {} });
    expect(await store.getState().connectRemote(5, { dgid: '10.0.0.2', qpn: 0x11, psn: 0x456 }, 0x123)).toBe(true);
    expect(h.sent[0]).toMatchObject({ cmd: 'qp.connect', args: { qp: 5, remote: { dgid: '10.0.0.2', qpn: 0x11, psn: 0x456 }, sqPsn: 0x123 } });
    expect(Array.from((await store.getState().savePcap(1))!)).toEqual([1, 2, 3]);
    expect(h.sent.at(-1)).toEqual({ cmd: 'pcap.get', args: { device: 1 } });
  });

  it('validates the forms as you type, naming the field', () => {
    expect(commandProblem({ cmd: 'device.attachNet', args: { device: 1, address: '127.0.0.1', port: 99999 } })).toMatch(/^port: /);
    expect(commandProblem({ cmd: 'device.attachNet', args: { device: 1, address: 'my-laptop', port: 4791 } })).toMatch(/^address: .*numeric/);
    expect(commandProblem({ cmd: 'qp.connect', args: { qp: 1, remote: { dgid: '10.0.0', qpn: 1, psn: 0 }, sqPsn: 0 } })).toMatch(/^remote\.dgid: a GID/);
    expect(commandProblem({ cmd: 'qp.connect', args: { qp: 1, remote: { dgid: '10.0.0.2', qpn: 1, psn: 0 }, sqPsn: 0 } })).toBeNull();
  });

  it('netView tolerates a missing transport', () => {
    expect(netView(null)).toBeNull();
    expect(netView({ ...NET, interface: 'eth0' })).toMatchObject({ interface: 'eth0', gids: [{ index: 0 }, { index: 1, ip: '127.0.0.1' }], stats: { txPackets: 3 } });
  });
});
