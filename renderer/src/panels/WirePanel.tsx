// Wire: a Wireshark-like packet list (virtualized), the decoded headers of the selected packet, a ladder
// diagram of the two ends of the connection, and "Save pcap" (pcap.get). Rows come from Packet* events.
import { memo, useCallback, useState } from 'react';
import { useConsole, useModel, useSampled } from '../store/context.tsx';
import { packetFields, type PacketList as Packets, type PacketRow, type QueueModel } from '../store/models.ts';
import { hex } from '../store/spec.ts';
import { ErrorMessage, Section } from '../components/ui.tsx';
import { VirtualRows } from '../components/VirtualRows.tsx';
import { SampledBanner } from '../components/SampledBanner.tsx';
import { textCols } from '../components/textCols.ts';

const fmtT = (t: number) => `${(t / 1000).toFixed(3)} µs`;
/** columns: #, time, src QPN, dst QPN, opcode, PSN, A, AETH (the length takes the rest) */
const WIDTHS = [7, 15, 8, 8, 30, 9, 2, 28];
const HEAD = textCols(['#', 'time', 'src QPN', 'dst QPN', 'opcode', 'PSN', 'A', 'AETH', 'len'], WIDTHS);
/** device 0 on a packet is the remote host: the device was on the network (UDP transport) */
const REMOTE = 'remote host (UDP)';
/** received from a remote host: this session's only record of that packet, so it is listed like a sent one */
const fromRemote = (p: PacketRow) => p.event === 'received' && p.peer === 0;

/** sending and receiving device of a packet row (PacketSent: device -> d; PacketDropped: ? -> device) */
function ends(p: PacketRow): { from: number; to: number } {
  if (p.event === 'sent') return { from: p.device, to: p.peer };
  return { from: p.peer, to: p.device };
}
/** source QPN: BTH has none, so it is the QP on the sending device whose destination QPN is the packet's */
function srcQpn(queues: QueueModel, p: PacketRow): number | null {
  if (p.srcQpn) return p.srcQpn;
  // from the remote host: the receiving QP (dstQpn, on this device) knows whom it is connected to
  if (fromRemote(p)) { for (const q of queues.qps.values()) if (q.device === p.device && q.qpn === p.dstQpn && q.destQpn) return q.destQpn; return null; }
  const { from } = ends(p);
  for (const q of queues.qps.values()) if (q.device === from && q.destQpn === p.dstQpn && q.destQpn) return q.qpn;
  return null;
}

function PacketList({ rows, selected, onSelect, follow, onUnfollow }: { rows: Packets; selected: number | null; onSelect: (i: number) => void; follow: boolean; onUnfollow: () => void }) {
  const model = useModel();
  return (
    <VirtualRows count={rows.length} follow={follow} onUnfollow={onUnfollow} selected={selected} onSelect={onSelect} testid="packet-list" label="packets" height={300}
      header={<div className="vrow head ev-line">{HEAD}</div>}
      render={(i) => {
        const p = rows.at(i);
        const s = srcQpn(model.queues, p);
        const line = textCols([String(p.id), fmtT(p.t), s === null ? '?' : String(s), String(p.dstQpn), `${p.opName}${p.event === 'dropped' ? ' (dropped)' : ''}`,
          String(p.psn), p.ackReq ? '1' : '0', p.synText, String(p.length)], WIDTHS);
        return (
          <div className={`ev-line ${p.event === 'dropped' ? 'pkt-dropped' : ''} ${p.nak ? 'pkt-nak' : ''}`} data-testid="packet-row" data-opcode={p.opName}>{line}</div>
        );
      }} />
  );
}

function Decoded({ p }: { p: PacketRow | undefined }) {
  const devices = useConsole((s) => s.devices);
  if (!p) return <p className="muted">Select a packet.</p>;
  const name = (d: number) => (d === 0 && p.peer === 0 ? REMOTE : devices.find((x) => x.handle === d)?.name ?? `device ${d}`);
  const e = ends(p);
  return (
    <div data-testid="packet-detail">
      <p><strong>{p.opName}</strong> <span className="muted">{e.from || p.peer === 0 ? name(e.from) : '?'} → {e.to || p.peer === 0 ? name(e.to) : '?'}, {p.event} at {fmtT(p.t)} (event #{p.seq})</span></p>
      {p.text && p.text !== p.opName && <p>{p.text}</p>}
      <table className="table compact mono"><tbody>
        {packetFields(p).map(([k, v]) => <tr key={k}><td>{k}</td><td>{v}</td></tr>)}
      </tbody></table>
      {p.hex && <pre className="mono small hexdump">{p.hex.match(/.{1,32}/g)?.map((l) => l.match(/../g)?.join(' ')).join('\n')}</pre>}
    </div>
  );
}

/** time-ordered ladder of the two ends of one connection (hand-drawn SVG: xyflow does not fit a time ladder).
 *  Redrawn when `tick` or the focus changes: under a flood the panel passes a tick that moves at most 15 times a
 *  second (laying out 90 SVG texts every frame cost more than the rest of the page; the packet list above stays at
 *  the frame rate). */
const Ladder = memo(function Ladder({ rows, focus, onPick }: { rows: Packets; focus: PacketRow | undefined; onPick: (id: number) => void; tick: number }) {
  const devices = useConsole((s) => s.devices);
  if (!rows.length) return <p className="muted">No packets on the wire yet.</p>;
  const anchor = focus ?? rows.at(rows.length - 1);
  const ae = ends(anchor);
  // a packet to or from the remote host: the ladder is this device and the remote host
  const remote = anchor.peer === 0 && anchor.event !== 'dropped';
  const a = remote ? anchor.device : ae.from || devices.find((d) => d.handle !== ae.to)?.handle || 0;
  const b = remote ? 0 : ae.to || devices.find((d) => d.handle !== a)?.handle || 0;
  const between = (p: PacketRow) => {
    if (remote) return p.device === a && p.peer === 0 && p.event !== 'dropped';
    const e = ends(p); return (e.from === a && e.to === b) || (e.from === b && e.to === a) || (!e.from && (e.to === a || e.to === b));
  };
  // up to 30 packets of the pair around the anchor (15 after it at most), found by scanning out from it (a bounded
  // number of rows: the list holds up to 200 k packets and this runs every frame under a flood)
  const inPair = (p: PacketRow) => (p.event !== 'received' || remote) && between(p);
  const at = Math.max(0, rows.indexAtOrBefore(anchor.id));
  const after: PacketRow[] = [];
  for (let i = at + 1, n = 0; i < rows.length && after.length < 15 && n < 20_000; i++, n++) { const p = rows.at(i); if (inPair(p)) after.push(p); }
  const before: PacketRow[] = [];
  for (let i = at, n = 0; i >= 0 && before.length < 30 - after.length && n < 20_000; i--, n++) { const p = rows.at(i); if (inPair(p)) before.push(p); }
  const win = [...before.reverse(), ...after];
  const W = 620; const xa = 120; const xb = W - 120; const dy = 26; const top = 40;
  const H = top + win.length * dy + 20;
  const name = (d: number) => (remote && d === 0 ? REMOTE : devices.find((x) => x.handle === d)?.name ?? `device ${d || '?'}`);
  return (
    <svg className="ladder" data-testid="ladder" viewBox={`0 0 ${W} ${H}`} width="100%" style={{ maxWidth: W }} role="img" aria-label={`sequence diagram ${name(a)} and ${name(b)}`}>
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" className="arrowhead" /></marker>
      </defs>
      <text x={xa} y={18} textAnchor="middle" className="lad-end">{name(a)}</text>
      <text x={xb} y={18} textAnchor="middle" className="lad-end">{name(b)}</text>
      <line x1={xa} y1={top - 14} x2={xa} y2={H - 6} className="lad-life" />
      <line x1={xb} y1={top - 14} x2={xb} y2={H - 6} className="lad-life" />
      {win.map((p, i) => {
        const y = top + i * dy;
        const e = ends(p); const fromA = e.from ? e.from === a : e.to !== a;
        const x0 = fromA ? xa : xb; const x1full = fromA ? xb : xa;
        const x1 = p.event === 'dropped' ? (x0 + x1full) / 2 : x1full;
        const cls = `lad-pkt ${p.nak ? 'nak' : p.syndrome !== null ? 'ack' : 'req'} ${p === anchor ? 'focus' : ''}`;
        const label = `${p.opName.replace(/^(RC|UC|UD) /, '')} PSN ${p.psn}${p.synText ? ` · ${p.synText}` : ''}`;
        return (
          // keyed by position: as the window moves under a stream React updates the same arrows in place
          <g key={i} className={cls} data-testid="ladder-arrow" onClick={() => onPick(p.id)} style={{ cursor: 'pointer' }}>
            <line x1={x0} y1={y} x2={x1} y2={y + dy * 0.6} markerEnd={p.event === 'dropped' ? undefined : 'url(#arrow)'} />
            {p.event === 'dropped' && <text x={x1} y={y + dy * 0.6 + 4} textAnchor="middle" className="lad-x">✕</text>}
            <text x={(xa + xb) / 2} y={y + dy * 0.3 - 5} textAnchor="middle" className="lad-label">{label}</text>
            <text x={fromA ? xa - 8 : xb + 8} y={y + 4} textAnchor={fromA ? 'end' : 'start'} className="lad-t">{fmtT(p.t)}</text>
          </g>
        );
      })}
    </svg>
  );
});

export function WirePanel() {
  const wireVersion = useConsole((s) => s.versions.wire);
  const queuesVersion = useConsole((s) => s.versions.queues);
  const ladderTick = useSampled(wireVersion * 65536 + queuesVersion, 66);
  const model = useModel();
  const selectedId = useConsole((s) => s.selectedPacket);
  const select = useConsole((s) => s.selectPacket);
  const savePcap = useConsole((s) => s.savePcap);
  const devices = useConsole((s) => s.devices);
  const onNet = devices.filter((d) => d.net);
  const [capture, setCapture] = useState('');
  // on the network: "Save pcap" saves that device's real traffic (real IP/UDP headers) unless "session" is chosen
  const netDev = capture === 'session' ? undefined : onNet.find((d) => String(d.handle) === capture) ?? onNet[0];
  const [follow, setFollow] = useState(true);
  const [showRecv, setShowRecv] = useState(false);
  const [saved, setSaved] = useState('');
  const rows = showRecv ? model.wire.all : model.wire.listed;
  const selIdx = selectedId === null ? null : rows.indexOfId(selectedId);
  const selAll = selectedId === null ? -1 : model.wire.all.indexOfId(selectedId);
  const sel = selIdx !== null && selIdx >= 0 ? rows.at(selIdx) : selAll >= 0 ? model.wire.all.at(selAll) : undefined;
  const pick = useCallback((id: number) => { setFollow(false); select(id); }, [select]);
  const onSave = async () => {
    const bytes = await savePcap(netDev?.handle);
    if (!bytes) return;
    const file = netDev ? `verbslab-${netDev.name}-net.pcap` : 'verbslab.pcap';
    const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type: 'application/vnd.tcpdump.pcap' }));
    const a = document.createElement('a'); a.href = url; a.download = file; document.body.appendChild(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    setSaved(`saved ${file} (${bytes.length} bytes${netDev ? `, network traffic of ${netDev.name}` : ''})`);
  };
  return (
    <div className="stack">
      <SampledBanner what="The packet list and the sequence diagram show the sampled packets only: gaps between them are not losses." />
      <Section title={`Packets (${rows.length.toLocaleString()})`} testid="wire-section" actions={<>
        <label className="small"><input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> follow</label>
        <label className="small"><input type="checkbox" checked={showRecv} onChange={(e) => setShowRecv(e.target.checked)} /> show receive events</label>
        {onNet.length > 0 && (
          <select data-testid="pcap-source" aria-label="capture to save" value={netDev ? String(netDev.handle) : 'session'} onChange={(e) => setCapture(e.target.value)}>
            {onNet.map((d) => <option key={d.handle} value={d.handle}>network: {d.name} ({d.net!.interface}:{d.net!.port})</option>)}
            <option value="session">session (in-process devices)</option>
          </select>
        )}
        <button type="button" data-testid="save-pcap" onClick={() => void onSave()}>Save pcap</button>
        <span className="muted small" data-testid="pcap-saved">{saved}</span>
      </>}>
        <ErrorMessage form="pcap.get" />
        {onNet.length > 0 && <p className="muted small" data-testid="wire-net-note">{onNet.map((d) => d.name).join(', ')} on the network: packets to and from the remote host are the real datagrams (device 0 = {REMOTE}).</p>}
        {rows.length === 0 ? <p className="muted" data-testid="no-packets">No packets yet: post a send and run the engine.</p>
          : <PacketList rows={rows} selected={selIdx !== null && selIdx >= 0 ? selIdx : null} onSelect={(i) => { setFollow(false); select(i < rows.length ? rows.at(i).id : null); }} follow={follow} onUnfollow={() => setFollow(false)} />}
      </Section>
      <div className="row">
        <Section title="Decoded headers"><Decoded p={sel} /></Section>
        <Section title="Sequence diagram" testid="ladder-section"><Ladder rows={model.wire.listed} focus={sel} tick={ladderTick} onPick={pick} /></Section>
      </div>
    </div>
  );
}
