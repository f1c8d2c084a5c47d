// The key table, the address-space map, and the objects the console has no reply for.
import { fmtKey } from '../../format.ts';
import { useConsole, useModel } from '../../store/context.tsx';
import { accessNames, keyByte, keyIndex, type KeyEntry } from '../../store/models.ts';
import { hex, hexAddr } from '../../store/spec.ts';
import { ErrorMessage } from '../../components/ui.tsx';
import type { BufferView } from '../../store/store.ts';

export function KeyTableView() {
  useConsole((s) => s.versions.keys);
  const model = useModel();
  const dereg = useConsole((s) => s.deregMr);
  const deallocMw = useConsole((s) => s.deallocMw);
  const devices = useConsole((s) => s.devices);
  const devName = (d: number) => devices.find((x) => x.handle === d)?.name ?? (d ? `dev ${d}` : '—');
  const rows = model.keys.rows();
  if (!rows.length) return <p className="muted">No keys yet: register an MR.</p>;
  return (
    <table className="table compact" data-testid="key-table" aria-label="key table">
      <thead><tr><th>device</th><th>index</th><th>key byte</th><th>lkey</th><th>rkey</th><th>state</th><th>type</th><th>PD</th><th>range</th><th>access</th><th>bound QP</th><th /></tr></thead>
      <tbody>
        {rows.map((k) => {
          const key = k.rkey || k.lkey;
          return (
            <tr key={`${k.type}${k.handle}`} data-testid="key-row" data-rkey={k.rkey} data-lkey={k.lkey} data-type={k.type} data-handle={k.handle} data-kind={k.kind} data-state={k.state} className={k.destroyed ? 'destroyed' : ''}>
              <td>{devName(k.device)}</td><td className="mono">{hex(keyIndex(key))}</td><td className="mono">{hex(keyByte(key), 2)}</td>
              <td className="mono" title={fmtKey(k.lkey)}>{hex(k.lkey, 8)}</td><td className="mono" data-testid="key-rkey" title={fmtKey(k.rkey)}>{hex(k.rkey, 8)}</td>
              <td className={`state-${k.state}`}>{k.state}</td><td>{k.type} {k.handle} <span className="muted">{k.kind}</span></td>
              <td>{k.pd || '—'}</td>
              <td className="mono">{k.length ? `${hexAddr(k.addr)} +${k.length}` : '—'}</td>
              <td className="mono small">{accessNames(k.access).join(' ') || '—'}</td>
              <td>{k.boundQp || '—'}</td>
              <td>{k.type === 'MR' && !k.destroyed && <button type="button" className="danger" onClick={() => void dereg(k.handle)}>Dereg</button>}
                {k.type === 'MW' && !k.destroyed && <button type="button" className="danger" data-testid="dealloc-mw" onClick={() => void deallocMw(k.handle)}>Dealloc</button>}
                <ErrorMessage form={`mr.dereg:${k.handle}`} /><ErrorMessage form={`mw.dealloc:${k.handle}`} /></td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22'];

/** which key covers which bytes: buffers laid out left to right (gaps between them collapsed), one lane per key */
export function AddressMap() {
  useConsole((s) => s.versions.keys);
  const buffers = useConsole((s) => s.buffers).filter((b) => !b.destroyed);
  const model = useModel();
  const keys = model.keys.rows(false);
  if (!buffers.length) return <p className="muted">No buffers.</p>;
  const G = 330; const W = 1200; const gap = 16; const laneH = 16; const top = 30;
  const total = buffers.reduce((s, b) => s + b.length, 0);
  const usable = W - G - gap * (buffers.length - 1);
  const layout: { b: BufferView; x: number; w: number }[] = [];
  let x = G;
  for (const b of buffers) { const w = Math.max(40, (usable * b.length) / total); layout.push({ b, x, w }); x += w + gap; }
  const scaleX = 1;
  const toX = (addr: number): number | null => {
    for (const l of layout) if (addr >= l.b.addr && addr <= l.b.addr + l.b.length) return (l.x + ((addr - l.b.addr) / l.b.length) * l.w) * scaleX;
    return null;
  };
  const segsOf = (k: KeyEntry) => (k.sg.length ? k.sg : k.length ? [{ addr: k.addr, length: k.length }] : []);
  const H = top + Math.max(1, keys.length) * (laneH + 4) + 8;
  return (
    <svg className="addr-map" data-testid="address-map" viewBox={`0 0 ${W} ${H}`} width="100%" style={{ maxWidth: W }} role="img" aria-label="address-space map: which key covers which bytes">
      {layout.map(({ b, x: bx, w }) => (
        <g key={b.handle}>
          <rect x={bx * scaleX} y={4} width={w * scaleX} height={18} className="map-buf" />
          <text x={bx * scaleX + 4} y={17} className="map-label">buf {b.handle} {hexAddr(b.addr)} ({b.length} B)</text>
        </g>
      ))}
      {keys.map((k, i) => {
        const y = top + i * (laneH + 4);
        const color = PALETTE[i % PALETTE.length];
        return (
          <g key={`${k.type}${k.handle}`}>
            {segsOf(k).map((s, j) => {
              const x0 = toX(s.addr); const x1 = toX(s.addr + s.length);
              if (x0 === null || x1 === null) return null;
              return <rect key={j} x={x0} y={y} width={Math.max(2, x1 - x0)} height={laneH} fill={color} opacity={k.sg.length ? 0.6 : 0.85} rx={2}>
                <title>{`${k.type} ${k.handle} rkey ${hex(k.rkey, 8)}${k.sg.length ? ` SG segment ${j}` : ''}: ${hexAddr(s.addr)} +${s.length}`}</title></rect>;
            })}
            <text x={4} y={y + laneH - 4} className="map-key" fill={color}>{k.type} {k.handle} · rkey {hex(k.rkey, 8)}{k.sg.length ? ` · ${k.sg.length} SG segments` : ''}</text>
          </g>
        );
      })}
    </svg>
  );
}

export function UnknownObjects() {
  const unknown = useConsole((s) => s.unknownObjects);
  const buffers = useConsole((s) => s.buffers);
  useConsole((s) => s.versions.keys);
  const model = useModel();
  const left = unknown.filter((o) => (o.kind === 'buffer' ? !buffers.some((b) => b.handle === o.handle) : !model.keys.byHandle.has(o.handle)));
  if (!left.length) return null;
  return (
    <p className="notice" role="status" data-testid="unknown-objects">
      This page connected after {left.length} object{left.length > 1 ? 's were' : ' was'} created ({left.map((o) => `${o.kind} ${o.handle}`).join(', ')}).
      The host does not replay past events to a new page, so their addresses, keys and bytes are not known here: they are
      not drawn rather than guessed. Objects created from now on appear as usual.
    </p>
  );
}
