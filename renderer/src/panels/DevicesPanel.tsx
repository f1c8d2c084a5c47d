// Devices: software device instances and their profiles, capabilities by rdma-core name, limits, GIDs; the real
// (libibverbs) devices the backend lists, each of which the session can drive instead (docs/real-devices.md).
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
  const real = useConsole((s) => s.backend) !== null;
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
              {!real && <button type="button" className="danger" data-testid="destroy-device" onClick={(e) => { e.stopPropagation(); void destroy(d.handle); }}>Destroy</button>}
              <ErrorMessage form={`pd.alloc:${d.handle}`} /><ErrorMessage form={`device.destroy:${d.handle}`} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** struct ibv_device_attr has no such field (ibv_query_device_ex's): a real device's profile leaves it unreported */
const NOT_IN_DEVICE_ATTR = new Set(['max_fast_reg_page_list_len', 'max_inline_data']);

function DeviceDetail({ d }: { d: DeviceView }) {
  const real = useConsole((s) => s.backend) !== null;
  const limits = real ? d.limits.filter(([k]) => !NOT_IN_DEVICE_ATTR.has(k)) : d.limits;
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
        {limits.length ? (
          <table className="table compact" data-testid="device-limits"><tbody>
            {limits.map(([k, v]) => <tr key={k}><td className="mono">{k}</td><td className="mono num">{fmtCount(v)}</td></tr>)}
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

/** The real devices libibverbs lists, each with Open (session.reset { backend: 'ibverbs', device }). */
function RealDevices() {
  const real = useConsole((s) => s.realDevices);
  const backend = useConsole((s) => s.backend);
  const reset = useConsole((s) => s.resetSession);
  if (real.length === 0) return <p data-testid="real-devices">Real devices (libibverbs): none found</p>;
  return (
    <table className="table" aria-label="real devices" data-testid="real-devices">
      <thead><tr><th>Name</th><th>GUID</th><th>Note</th><th /></tr></thead>
      <tbody>
        {real.map((r, i) => {
          const name = String(r.name ?? '');
          const open = backend?.device === name;
          return (
            <tr key={i} data-testid="real-device-row">
              <td className="mono">{name}{r.software ? ' (software)' : ''}</td>
              <td className="mono">{String(r.guid ?? r.nodeGuid ?? '—')}</td>
              <td className="small">{String(r.note ?? '')}</td>
              <td className="actions">
                {open ? <span className="chip" data-testid="real-device-open">open</span>
                  : <button type="button" data-testid="open-real-device" disabled={r.usable !== true} aria-label={`open ${name} (session.reset with backend ibverbs)`}
                    onClick={() => void reset(undefined, name)}>Open</button>}
                <ErrorMessage form={`session.reset:${name}`} />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The session drives a real device: what that means, and the way back. */
function RealBanner() {
  const backend = useConsole((s) => s.backend);
  const reset = useConsole((s) => s.resetSession);
  if (!backend) return null;
  return (
    <div className="note" role="status" data-testid="real-banner">
      <p>
        This session drives the real device <span className="mono">{backend.device}</span> through <span className="mono">{backend.library}</span>
        {backend.software ? ' (Verbs Lab\'s own libibverbs.so.1: the software device behind the real libibverbs ABI)' : ''}.
        Objects, keys, completions (as polled), completion-channel and asynchronous events are the device's own. Its rings,
        packets, key tables and engine are not visible on a real device: those views say so.
      </p>
      <button type="button" data-testid="back-to-software" onClick={() => void reset()}>Back to the software devices (session.reset)</button>
      <ErrorMessage form="session.reset" />
    </div>
  );
}

export function DevicesPanel() {
  const devices = useConsole((s) => s.devices);
  const selected = useConsole((s) => s.selectedDevice);
  const refresh = useConsole((s) => s.refreshDevices);
  const loaded = useConsole((s) => s.devicesLoaded);
  const backend = useConsole((s) => s.backend);
  const d = devices.find((x) => x.handle === selected);
  return (
    <div className="stack" data-testid="devices-panel" data-loaded={loaded} data-backend={backend ? 'ibverbs' : 'embedded'}>
      <RealBanner />
      <Section title={backend ? `Real device (${backend.device})` : 'Software devices'} testid="devices-section" actions={<button type="button" onClick={() => void refresh()}>Refresh</button>}>
        <DeviceRows />
        <ErrorMessage form="devices" />
        {backend ? <p className="muted small" data-testid="create-device-real">Software devices cannot be created in this session (device.create): it drives {backend.device} only.</p> : <CreateDeviceForm />}
      </Section>
      {d && <Section title={`Device ${d.name} — ${d.profile}`}><DeviceDetail d={d} /></Section>}
      {d && !backend && <Section title={`Network — ${d.name}`} testid="network-section"><NetworkSection d={d} /></Section>}
      <Section title="Real devices (libibverbs)" testid="real-devices-section">
        <RealDevices />
      </Section>
    </div>
  );
}
