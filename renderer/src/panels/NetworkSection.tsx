// A device on a real network (device.attachNet): the "Put on network" form, and once attached, the device's
// real GID table (from the host interface's addresses) and its UDP counters. Counters come from device.list,
// refreshed once a second while the device is on the network.
import { useEffect, useMemo, useState } from 'react';
import { useConsole } from '../store/context.tsx';
import { commandProblem } from '../store/validate.ts';
import { ErrorMessage, Field, Pending } from '../components/ui.tsx';
import type { DeviceView, NetView } from '../store/store.ts';

function AttachForm({ d }: { d: DeviceView }) {
  const interfaces = useConsole((s) => s.interfaces);
  const attach = useConsole((s) => s.attachNet);
  const up = interfaces.filter((i) => i.up && i.addrs.length);
  const [mode, setMode] = useState<'interface' | 'address'>('address');
  const [ifname, setIfname] = useState('');
  const [address, setAddress] = useState('127.0.0.1');
  const [port, setPort] = useState('4791');
  const [peerPort, setPeerPort] = useState('');
  const chosenIf = ifname || up[0]?.name || '';
  const portN = port.trim() === '' ? NaN : Number(port);
  const peerN = peerPort.trim() === '' ? undefined : Number(peerPort);
  const args = useMemo(() => ({
    device: d.handle, port: portN, ...(peerN !== undefined ? { peerPort: peerN } : {}),
    ...(mode === 'interface' ? { interface: chosenIf } : { address: address.trim() }),
  }), [d.handle, portN, peerN, mode, chosenIf, address]);
  const problem = Number.isNaN(portN) ? 'port: a UDP port 0..65535'
    : mode === 'interface' && !chosenIf ? 'interface: this host reports no interface that is up with an address'
    : commandProblem({ cmd: 'device.attachNet', args });
  const form = `device.attachNet:${d.handle}`;
  return (
    <form className="form" aria-label="put device on network" data-testid="attach-net-form"
      onSubmit={(e) => { e.preventDefault(); if (!problem) void attach(d.handle, args as never); }}>
      <Field label="Bind to">
        <select data-testid="net-mode" value={mode} onChange={(e) => setMode(e.target.value as 'interface' | 'address')}>
          <option value="address">one local address</option>
          <option value="interface">a host interface (all its addresses)</option>
        </select>
      </Field>
      {mode === 'interface' ? (
        <Field label="Interface">
          <select data-testid="net-interface" value={chosenIf} onChange={(e) => setIfname(e.target.value)}>
            {up.map((i) => <option key={i.name} value={i.name}>{i.name} ({i.addrs.join(', ')})</option>)}
          </select>
        </Field>
      ) : (
        <Field label="Local address">
          <input data-testid="net-address" className="mono" list={`addrs-${d.handle}`} value={address} size={18}
            onChange={(e) => setAddress(e.target.value)} aria-invalid={!!problem} />
          <datalist id={`addrs-${d.handle}`}>{up.flatMap((i) => i.addrs).map((a) => <option key={a} value={a} />)}</datalist>
        </Field>
      )}
      <Field label="UDP port" hint="4791 on a real network">
        <input data-testid="net-port" value={port} size={6} onChange={(e) => setPort(e.target.value)} aria-invalid={!!problem} />
      </Field>
      <Field label="Remote hosts' port" hint="empty = same; two hosts on one machine need two ports">
        <input data-testid="net-peer-port" value={peerPort} size={6} onChange={(e) => setPeerPort(e.target.value)} />
      </Field>
      <button type="submit" data-testid="attach-net" disabled={!!problem}>Put on network</button><Pending form={form} />
      <ErrorMessage form={form} local={problem} />
    </form>
  );
}

function NetStatus({ d, net }: { d: DeviceView; net: NetView }) {
  const detach = useConsole((s) => s.detachNet);
  const refresh = useConsole((s) => s.refreshDevices);
  useEffect(() => {
    void refresh();
    const t = setInterval(() => void refresh(), 1000);
    return () => clearInterval(t);
  }, [refresh]);
  const s = net.stats;
  return (
    <div className="net-status" data-testid="net-status">
      <p>
        <span className="badge on" data-testid="net-badge">on the network</span>{' '}
        <span className="mono" data-testid="net-where">{net.interface} · UDP port {net.port}</span>{' '}
        <button type="button" data-testid="detach-net" onClick={() => void detach(d.handle)}>Take off network</button>
        <Pending form={`device.detachNet:${d.handle}`} />
      </p>
      <ErrorMessage form={`device.detachNet:${d.handle}`} />
      <div className="detail-grid">
        <div>
          <h3>GID table (from {net.interface})</h3>
          <table className="table compact" data-testid="net-gids"><thead><tr><th>#</th><th>GID</th><th>address</th><th>type</th></tr></thead><tbody>
            {net.gids.map((g) => <tr key={g.index} data-testid="net-gid" data-index={g.index} data-gid={g.gid}>
              <td>{g.index}</td><td className="mono">{g.gid}</td><td className="mono">{g.ip ?? ''}</td><td>{g.type}</td></tr>)}
          </tbody></table>
        </div>
        <div>
          <h3>UDP counters</h3>
          <table className="table compact" data-testid="net-stats"><tbody>
            <tr><td>sent</td><td className="mono num" data-testid="net-tx">{s.txPackets.toLocaleString()} packets · {s.txBytes.toLocaleString()} B</td></tr>
            <tr><td>received</td><td className="mono num" data-testid="net-rx">{s.rxPackets.toLocaleString()} packets · {s.rxBytes.toLocaleString()} B</td></tr>
            <tr><td>dropped in</td><td className="mono num">{s.rxDropped.toLocaleString()} (bad ICRC, unknown QP, malformed)</td></tr>
            <tr><td>not sent</td><td className="mono num">{s.txDropped.toLocaleString()} (no socket for the GID, bad dgid, send error)</td></tr>
          </tbody></table>
        </div>
      </div>
      <p className="muted small">While a device is on the network the session runs in real time: the UDP transport drives the clock, the
        backend polls it every millisecond, and single-step, run to idle and autorun are unavailable.</p>
    </div>
  );
}

export function NetworkSection({ d }: { d: DeviceView }) {
  return d.net ? <NetStatus d={d} net={d.net} /> : <AttachForm d={d} />;
}
