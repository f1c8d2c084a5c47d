// Wire: a Wireshark-like packet list (virtualized), the decoded headers of the selected packet, a ladder
// diagram of the two ends of the connection, and "Save pcap" (pcap.get). Rows come from Packet* events.
import { memo, useCallback, useState } from 'react';
import { useConsole, useModel, useSampled } from '../store/context.tsx';
import { packetFields, type PacketList as Packets, type PacketRow, type QueueModel } from '../store/models.ts';
import { hex } from '../store/spec.ts';
import { ErrorMessage, Section } from '../components/ui.tsx';
import { VirtualRows } from '../components/VirtualRows.tsx';
import { SampledBanner } from '../components/SampledBanner.tsx';
import { ladderOf } from '../store/ladder.ts';
import { fmtNs } from '../format.ts';
import { textCols } from '../components/textCols.ts';

const fmtT = fmtNs;
/** columns: #, time, src QPN, dst QPN, opcode, PSN, A, AETH (the length takes the rest) */
const WIDTHS = [7, 15, 8, 8, 30, 9, 2, 28];
const HEAD = textCols(['#', 'time', 'src QPN', 'dst QPN', 'opcode', 'PSN', 'A', 'AETH', 'len'], WIDTHS);
/** device 0 on a packet is the remote host: the device was on the network (UDP transport) */
const REMOTE = 'remote host (UDP)';
/** what the device's wire model is for an iwarp-profile device: said wherever its packets are shown */
const IWARP_MODELLED = 'iWARP in modelled RoCEv2 framing: a real iWARP NIC sends RDMAP over DDP over MPA over TCP (RFC 5040/5041/5044); '
  + 'an RDMA READ with invalidate is an ordinary Read Request on that wire too (the requester invalidates its sink itself)';
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
        const f = model.fates.fate(p.id);
        const mark = p.event === 'dropped' ? (f?.of !== undefined ? ` (drop of #${f.of})` : ' (dropped)') : f?.lost ? ' (lost)' : f?.dropped ? ' (dropped at receiver)' : '';
        // a drop the device reported without the packet (the responder's): shown as the packet it dropped
        const of = p.event === 'dropped' && f?.of !== undefined ? rows.at(Math.max(0, rows.indexOfId(f.of))) : undefined;
        const shownP = of && of.id === f?.of ? of : p;
        const line = textCols([String(p.id), fmtT(p.t), s === null ? '?' : String(s), String(shownP.dstQpn), `${f?.retransmitOf !== undefined && p.syndrome === null ? '↻ ' : ''}${shownP.opName}${mark}`,
          String(shownP.psn), p.ackReq ? '1' : '0', p.synText, String(p.length)], WIDTHS);
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
  const iwarp = [e.from, e.to].some((d) => devices.find((x) => x.handle === d)?.transport === 'iWARP');
  return (
    <div data-testid="packet-detail">
      {iwarp && <p className="small muted" data-testid="packet-iwarp-modelled">{IWARP_MODELLED}.</p>}
      <p><strong>{p.opName}</strong> <span className="muted">{e.from || p.peer === 0 ? name(e.from) : '?'} → {e.to || p.peer === 0 ? name(e.to) : '?'}, {p.event} at {fmtT(p.t)} (event #{p.seq})</span></p>
      {p.text && p.text !== p.opName && <p>{p.text}</p>}
      <table className="table compact mono"><tbody>
        {packetFields(p).map(([k, v]) => <tr key={k}><td>{k}</td><td>{v}</td></tr>)}
      </tbody></table>
      {p.hex && <pre className="mono small hexdump">{p.hex.match(/.{1,32}/g)?.map((l) => l.match(/../g)?.join(' ')).join('\n')}</pre>}
    </div>
  );
}

/** The sequence diagram (hand-drawn SVG: xyflow does not fit a time ladder): one lane per QP, named by QPN and
 *  device; each packet an arrow from the lane of the QP that sent it to the lane of the QP it was for. A packet lost
 *  on the wire stops half-way with ✕, one the receiver dropped reaches its lane with ✕ and the reason; a retransmission
 *  is marked ↻, a packet the wire duplicated ×2. `follow`: the newest packets; otherwise the ones around the selected
 *  packet (the header says which). Redrawn when `tick` or the focus changes: under a flood the panel passes a tick that
 *  moves at most 15 times a second. */
const Ladder = memo(function Ladder({ focus, follow, onPick }: { focus: number | null; follow: boolean; onPick: (id: number) => void; tick: number }) {
  const devices = useConsole((s) => s.devices);
  const model = useModel();
  const rows = model.wire.listed;
  if (!rows.length) return <p className="muted">No packets on the wire yet.</p>;
  const devName = (d: number) => devices.find((x) => x.handle === d)?.name ?? `device ${d}`;
  const lad = ladderOf(rows, model.fates, model.queues, devName, follow ? null : focus, 30);
  const laneW = 190; const pad = 110;
  const W = Math.max(620, pad * 2 + laneW * Math.max(1, lad.lanes.length - 1));
  const x = (i: number) => (lad.lanes.length === 1 ? W / 2 : pad + (i * (W - 2 * pad)) / (lad.lanes.length - 1));
  const dy = 26; const top = 44;
  const H = top + lad.arrows.length * dy + 20;
  return (
    <div>
      <p className="small muted" data-testid="ladder-mode" data-mode={lad.mode}>
        {lad.mode === 'newest' ? `The newest ${lad.arrows.length} packets (follow newest).` : `${lad.arrows.length} packets around packet #${focus} (select "follow newest" to see the latest).`}
      </p>
      <svg className="ladder" data-testid="ladder" viewBox={`0 0 ${W} ${H}`} width="100%" style={{ maxWidth: W }} role="img"
        aria-label={`sequence diagram of ${lad.lanes.map((l) => l.label).join(', ')}`}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" className="arrowhead" /></marker>
        </defs>
        {lad.lanes.map((l, i) => (
          <g key={l.key} data-testid="ladder-lane" data-lane={i} data-device={l.device} data-qpn={l.qpn ?? ''}>
            <text x={x(i)} y={18} textAnchor="middle" className="lad-end">{l.label}</text>
            <line x1={x(i)} y1={top - 18} x2={x(i)} y2={H - 6} className="lad-life" />
          </g>
        ))}
        {lad.arrows.map((a, i) => {
          const y = top + i * dy;
          const x0 = x(a.from); const xEnd = x(a.to);
          const x1 = a.fate === 'lost' ? (x0 + xEnd) / 2 : xEnd;
          const cls = `lad-pkt ${a.nak ? 'nak' : a.ack ? 'ack' : 'req'} ${a.fate} ${a.id === focus ? 'focus' : ''}`;
          const marks = `${a.retransmit ? '↻ ' : ''}${a.opName} PSN ${a.psn}${a.synText ? ` · ${a.synText}` : ''}${a.duplicated ? ' ×2' : ''}`;
          const fate = a.fate === 'lost' ? ' · lost' : a.fate === 'dropped' ? ` · dropped: ${a.why}` : a.fate === 'in flight' ? ' · in flight' : '';
          const right = a.to >= a.from;
          return (
            // keyed by position: as the window moves under a stream React updates the same arrows in place
            <g key={i} className={cls} data-testid="ladder-arrow" data-from={a.from} data-to={a.to} data-fate={a.fate} data-psn={a.psn}
              data-opcode={a.opName} data-retransmit={a.retransmit} data-ack={a.ack} onClick={() => onPick(a.id)} style={{ cursor: 'pointer' }}>
              <title>{`#${a.id} ${marks}${fate} (${fmtNs(a.t)})`}</title>
              <line x1={x0} y1={y} x2={x1} y2={y + dy * 0.6} markerEnd={a.fate === 'delivered' || a.fate === 'in flight' ? 'url(#arrow)' : undefined} />
              {a.fate !== 'delivered' && a.fate !== 'in flight' && <text x={x1} y={y + dy * 0.6 + 4} textAnchor="middle" className="lad-x">✕</text>}
              <text x={(x0 + xEnd) / 2} y={y + dy * 0.3 - 5} textAnchor="middle" className="lad-label">{marks}{fate}</text>
              <text x={right ? x0 - 8 : x0 + 8} y={y + 4} textAnchor={right ? 'end' : 'start'} className="lad-t">{fmtNs(a.t)}</text>
            </g>
          );
        })}
      </svg>
    </div>
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
  const backend = useConsole((s) => s.backend);
  const onNet = devices.filter((d) => d.net);
  const [capture, setCapture] = useState('');
  // on the network: "Save pcap" saves that device's real traffic (real IP/UDP headers) unless "session" is chosen
  const netDev = capture === 'session' ? undefined : onNet.find((d) => String(d.handle) === capture) ?? onNet[0];
  const [follow, setFollow] = useState(true);
  const [ladderFollow, setLadderFollow] = useState(true);
  const [showRecv, setShowRecv] = useState(false);
  const [saved, setSaved] = useState('');
  const rows = showRecv ? model.wire.all : model.wire.listed;
  const selIdx = selectedId === null ? null : rows.indexOfId(selectedId);
  const selAll = selectedId === null ? -1 : model.wire.all.indexOfId(selectedId);
  const sel = selIdx !== null && selIdx >= 0 ? rows.at(selIdx) : selAll >= 0 ? model.wire.all.at(selAll) : undefined;
  const pick = useCallback((id: number) => { setFollow(false); setLadderFollow(false); select(id); }, [select]);
  const onSave = async () => {
    const bytes = await savePcap(netDev?.handle);
    if (!bytes) return;
    const file = netDev ? `verbslab-${netDev.name}-net.pcap` : 'verbslab.pcap';
    const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type: 'application/vnd.tcpdump.pcap' }));
    const a = document.createElement('a'); a.href = url; a.download = file; document.body.appendChild(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    setSaved(`saved ${file} (${bytes.length} bytes${netDev ? `, network traffic of ${netDev.name}` : ''})`);
  };
  if (backend) {
    return (
      <div className="stack">
        <Section title="Packets" testid="wire-section">
          <p className="note" data-testid="wire-not-visible">
            Packets: not visible on a real device. {backend.device} sends and receives them itself; the console sees the verbs and their
            completions only. Capture them on the wire instead (tcpdump on the RoCE network interface, or a port mirror).
          </p>
        </Section>
      </div>
    );
  }
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
        {devices.some((d) => d.transport === 'iWARP') && <p className="muted small" data-testid="wire-iwarp-note">
          {devices.filter((d) => d.transport === 'iWARP').map((d) => d.name).join(', ')}: {IWARP_MODELLED}. tshark decodes these packets as InfiniBand.</p>}
        {onNet.length > 0 && <p className="muted small" data-testid="wire-net-note">{onNet.map((d) => d.name).join(', ')} on the network: packets to and from the remote host are the real datagrams (device 0 = {REMOTE}).</p>}
        {rows.length === 0 ? <p className="muted" data-testid="no-packets">No packets yet: post a send and run the engine.</p>
          : <PacketList rows={rows} selected={selIdx !== null && selIdx >= 0 ? selIdx : null} onSelect={(i) => { setFollow(false); setLadderFollow(false); select(i < rows.length ? rows.at(i).id : null); }} follow={follow} onUnfollow={() => setFollow(false)} />}
      </Section>
      <div className="row">
        <Section title="Decoded headers"><Decoded p={sel} /></Section>
        <Section title="Sequence diagram" testid="ladder-section" actions={
          <label className="small"><input type="checkbox" data-testid="ladder-follow" checked={ladderFollow} onChange={(e) => setLadderFollow(e.target.checked)} /> follow newest</label>}>
          <Ladder focus={sel?.id ?? null} follow={ladderFollow} tick={ladderTick} onPick={pick} /></Section>
      </div>
    </div>
  );
}
