// Devices: software device instances and their profiles, capabilities by rdma-core name, limits, GIDs;
// real (libibverbs) devices only when the backend reports some.
import { fmtCount } from '../format.ts';
import { useMemo, useState } from 'react';
import { useConsole } from '../store/context.tsx';
import { commandProblem } from '../store/validate.ts';
import { ErrorMessage, Field, Pending, Section } from '../components/ui.tsx';
import type { DeviceView } from '../store/store.ts';
import { NetworkSection } from './NetworkSection.tsx';

function CreateDeviceForm() {
  const profiles = useConsole((s) => s.profiles);
  const create = useConsole((s) => s.createDevice);
  const [profile, setProfile] = useState('');
  const [name, setName] = useState('');
  const chosen = profile || profiles[0]?.name || '';
  const problem = useMemo(() => (chosen ? commandProblem({ cmd: 'device.create', args: name ? { profile: chosen, name } : { profile: chosen } }) : null), [chosen, name]);
  const desc = profiles.find((p) => p.name === chosen);
  return (
    <form className="form" aria-label="create device" data-testid="create-device-form"
      onSubmit={(e) => { e.preventDefault(); if (!problem && chosen) void create(chosen, name || undefined); }}>
      <Field label="Profile">
        <select data-testid="device-profile" value={chosen} onChange={(e) => setProfile(e.target.value)} disabled={!profiles.length}>
          {profiles.length === 0 && <option value="">(the backend reported no profiles)</option>}
          {profiles.map((p) => <option key={p.name} value={p.name}>{p.name}</option>)}
        </select>
      </Field>
      <Field label="Name (optional)">
        <input data-testid="device-name" value={name} placeholder="auto" onChange={(e) => setName(e.target.value)} aria-invalid={!!problem} />
      </Field>
      <button type="submit" data-testid="create-device" disabled={!!problem || !chosen}>Create device</button>
      <Pending form="device.create" />
      {desc && <p className="muted small">{desc.description} {desc.transport ? `(${desc.transport})` : ''}</p>}
      <ErrorMessage form="device.create" local={problem} />
    </form>
  );
}

function DeviceRows() {
  const devices = useConsole((s) => s.devices);
  const selected = useConsole((s) => s.selectedDevice);
  const select = useConsole((s) => s.selectDevice);
  const destroy = useConsole((s) => s.destroyDevice);
  const allocPd = useConsole((s) => s.allocPd);
  const deallocPd = useConsole((s) => s.deallocPd);
  const pds = useConsole((s) => s.pds);
  if (!devices.length) return <p className="muted" data-testid="no-devices">No software devices yet. Create one below.</p>;
  return (
    <table className="table" aria-label="devices">
      <thead><tr><th>Handle</th><th>Name</th><th>Profile</th><th>PDs</th><th>Network</th><th /></tr></thead>
      <tbody>
        {devices.map((d) => (
          <tr key={d.handle} data-testid="device-row" className={d.handle === selected ? 'selected' : ''} aria-selected={d.handle === selected}
            tabIndex={0} onClick={() => select(d.handle)} onKeyDown={(e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); select(d.handle); } }}>
            <td>{d.handle}</td><td className="mono" data-testid="device-name-cell">{d.name}</td><td data-testid="device-profile-cell">{d.profile}</td>
            <td className="mono">{pds.filter((p) => p.device === d.handle && !p.destroyed).map((p) => (
              <span key={p.handle} className="pd-chip">pd {p.handle}{' '}
                <button type="button" className="link" data-testid="dealloc-pd" aria-label={`deallocate pd ${p.handle}`}
                  onClick={(e) => { e.stopPropagation(); void deallocPd(p.handle); }}>×</button>
                <ErrorMessage form={`pd.dealloc:${p.handle}`} /></span>)) }{pds.some((p) => p.device === d.handle && !p.destroyed) ? null : '—'}</td>
            <td className="mono" data-testid="device-net-cell">{d.net ? `${d.net.interface} :${d.net.port}` : '—'}</td>
            <td className="actions">
              <button type="button" data-testid="alloc-pd" onClick={(e) => { e.stopPropagation(); void allocPd(d.handle); }}>Alloc PD</button>
              <button type="button" className="danger" data-testid="destroy-device" onClick={(e) => { e.stopPropagation(); void destroy(d.handle); }}>Destroy</button>
              <ErrorMessage form={`pd.alloc:${d.handle}`} /><ErrorMessage form={`device.destroy:${d.handle}`} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function DeviceDetail({ d }: { d: DeviceView }) {
  return (
    <div className="detail-grid" data-testid="device-detail">
      <div>
        <h3>Capabilities (device_cap_flags = 0x{d.capFlags.toString(16)})</h3>
        {d.capNames.length ? <ul className="chips" data-testid="device-caps">{d.capNames.map((c) => <li key={c} className="chip mono">{c}</li>)}</ul>
          : <p className="muted">no capability bits reported</p>}
        <h3>Port 1</h3>
        <p className="mono" data-testid="device-port">{d.portStateName} · active_mtu {d.activeMtu}{d.transport ? ` · ${d.transport}` : ''}</p>
        <h3>Atomic capability</h3>
        <p className="mono" data-testid="device-atomic">{d.atomicCap}</p>
        {d.nodeGuid && <><h3>Node GUID</h3><p className="mono">{d.nodeGuid}</p></>}
      </div>
      <div>
        <h3>Limits</h3>
        {d.limits.length ? (
          <table className="table compact" data-testid="device-limits"><tbody>
            {d.limits.map(([k, v]) => <tr key={k}><td className="mono">{k}</td><td className="mono num">{fmtCount(v)}</td></tr>)}
          </tbody></table>
        ) : <p className="muted">no limits reported</p>}
      </div>
      <div>
        <h3>GID table (port 1)</h3>
        {d.gids.length ? (
          <table className="table compact" data-testid="device-gids"><thead><tr><th>#</th><th>GID</th><th>type</th></tr></thead><tbody>
            {d.gids.map((g) => <tr key={g.index}><td>{g.index}</td><td className="mono">{g.gid}</td><td>{g.type}</td></tr>)}
          </tbody></table>
        ) : <p className="muted">no GIDs reported</p>}
      </div>
    </div>
  );
}

export function DevicesPanel() {
  const devices = useConsole((s) => s.devices);
  const selected = useConsole((s) => s.selectedDevice);
  const real = useConsole((s) => s.realDevices);
  const refresh = useConsole((s) => s.refreshDevices);
  const loaded = useConsole((s) => s.devicesLoaded);
  const d = devices.find((x) => x.handle === selected);
  return (
    <div className="stack" data-testid="devices-panel" data-loaded={loaded}>
      <Section title="Software devices" testid="devices-section" actions={<button type="button" onClick={() => void refresh()}>Refresh</button>}>
        <DeviceRows />
        <ErrorMessage form="devices" />
        <CreateDeviceForm />
      </Section>
      {d && <Section title={`Device ${d.name} — ${d.profile}`}><DeviceDetail d={d} /></Section>}
      {d && <Section title={`Network — ${d.name}`} testid="network-section"><NetworkSection d={d} /></Section>}
      <Section title="Real devices (libibverbs)">
        {real.length === 0 ? <p data-testid="real-devices">Real devices (libibverbs): none found</p> : (
          <ul data-testid="real-devices">{real.map((r, i) => <li key={i} className="mono">{String(r.name ?? JSON.stringify(r))}</li>)}</ul>
        )}
      </Section>
    </div>
  );
}
