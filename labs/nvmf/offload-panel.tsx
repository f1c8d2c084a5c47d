// Lab 4's flow view, offload part: what the device's NVMe-oF offload engine holds, drawn only from the nvmf.snapshot
// and nvme.snapshot replies — the staging buffer as a page grid with occupancy, the backend nvme_ctrl with the
// device's shadow SQ tail / CQ head and expected phase, the soft SSD's own rings (head / tail / phase), the namespace
// map with its per-namespace counters, the commands in the device with their step, and the engine's counters. The
// engine's internals are modelled (docs/nvmf-offload.md); the view says so.
import type { ResultOf } from '../../app/protocol/index.ts';

type Snap = ResultOf<'nvmf.snapshot'>;
type Ssd = ResultOf<'nvme.snapshot'>;
const hex = (v: number | string) => `0x${BigInt(v).toString(16)}`;

/** the staging buffer, one cell per page: in use (by a command in the device) or free */
export function StagingGrid({ staging }: { staging: Snap['staging'] }) {
  const used = staging.pages.filter((p) => p !== 0).length;
  return (
    <div data-testid="nvmf-staging">
      <div className="small">staging {hex(staging.addr)} · {staging.pages.length} pages of {staging.pageSize} B · <strong>{used} in use</strong></div>
      <div className="nvmf-grid" role="img" aria-label={`staging buffer: ${used} of ${staging.pages.length} pages in use`}>
        {staging.pages.map((p, i) => <span key={i} className={p ? 'nvmf-page used' : 'nvmf-page'} title={p ? `page ${i}: command ${p}` : `page ${i}: free`} />)}
      </div>
    </div>
  );
}

export function OffloadView({ snap, ssd }: { snap: Snap; ssd: Ssd | null }) {
  return (
    <div className="card" data-testid="nvmf-offload">
      <div className="card-head"><strong>Device offload (modelled)</strong>
        <span className="muted small">SRQ {snap.srq} · offload_ops {snap.offloadOps} · max I/O {snap.maxIoSz} B · IOCCSZ {snap.ioccsz}</span></div>
      <div className="card-body stack">
        <StagingGrid staging={snap.staging} />
        <table className="table mono small" data-testid="nvmf-backend">
          <caption>Backend nvme_ctrl (the device's shadow of the P2P queue pair)</caption>
          <thead><tr><th>ctrl</th><th>alive</th><th className="num">depth</th><th className="num">SQ tail</th><th className="num">CQ head</th><th>phase</th><th className="num">in flight</th><th>SQ doorbell</th><th>CQ doorbell</th></tr></thead>
          <tbody>{snap.ctrls.map((c) => (
            <tr key={c.ctrl} className={c.alive ? undefined : 'error'}><td>{c.ctrl}</td><td>{c.alive ? 'yes' : 'down'}</td><td className="num">{c.depth}</td><td className="num">{c.sqTail}</td><td className="num">{c.cqHead}</td><td>{c.phase ? 1 : 0}</td><td className="num">{c.inflight}</td><td>{hex(c.sqdb)}</td><td>{hex(c.cqdb)}</td></tr>
          ))}</tbody>
        </table>
        {ssd ? (
          <table className="table mono small" data-testid="nvmf-ssd-rings">
            <caption>Soft SSD rings (BAR0 {hex(ssd.bar0)}, CSTS {hex(ssd.csts)})</caption>
            <thead><tr><th className="num">QID</th><th>ring</th><th className="num">size</th><th className="num">head</th><th className="num">tail</th><th>phase</th><th className="num">fetched</th><th className="num">completed</th></tr></thead>
            <tbody>{ssd.queues.map((q) => (
              <tr key={`${q.kind}${q.qid}`}><td className="num">{q.qid}</td><td>{q.kind.toUpperCase()}</td><td className="num">{q.size}</td><td className="num">{q.head}</td><td className="num">{q.tail}</td><td>{q.phase ? 1 : 0}</td><td className="num">{q.fetched}</td><td className="num">{q.completed}</td></tr>
            ))}</tbody>
          </table>
        ) : null}
        <table className="table mono small" data-testid="nvmf-nsmap">
          <caption>Namespace map (fe NSID → backend NSID)</caption>
          <thead><tr><th className="num">fe NSID</th><th>ctrl</th><th className="num">NSID</th><th className="num">LBA data</th><th>counters</th></tr></thead>
          <tbody>{snap.namespaces.map((n) => (
            <tr key={n.feNsid}><td className="num">{n.feNsid}</td><td>{n.ctrl}</td><td className="num">{n.nsid}</td><td className="num">{n.lbaDataSize}</td>
              <td>{Object.entries(n.counters).map(([k, v]) => `${k} ${v}`).join(' · ')}</td></tr>
          ))}</tbody>
        </table>
        <div className="small" data-testid="nvmf-device-inflight">{snap.inflight.length
          ? snap.inflight.map((c) => <span key={c.id} className="badge mono">CID {c.cid} (backend CID {c.beCid}) {c.step}</span>)
          : <span className="muted">no command in the device</span>}</div>
        <div className="chips small" data-testid="nvmf-offload-counters">
          {Object.entries(snap.counters).map(([k, v]) => <span key={k} className="badge mono">device.{k} {v}</span>)}
        </div>
      </div>
    </div>
  );
}
