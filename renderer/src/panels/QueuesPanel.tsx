// Queues: CQs, QPs and SRQs as rings (slots from Wqe*/Cqe events), the QP state machine with the current
// state lit, CQ armed state; create/connect/post/poll forms. Every action is a protocol command.
import { useState } from 'react';
import { QpType, WcOpcode, WcStatus, WrOpcode, type SendWr } from '../../../app/protocol/index.ts';
import { useConsole, useModel } from '../store/context.tsx';
import { commandProblem } from '../store/validate.ts';
import { deviceQuirks, explainWc } from '../store/explain.ts';
import { hex, hexAddr, num, type Rec } from '../store/spec.ts';
import { ErrorMessage, Field, Pending, Section, parseNum } from '../components/ui.tsx';
import { RingView } from '../components/Ring.tsx';
import { QpStateDiagram } from '../components/QpStateDiagram.tsx';
import { RemoteConnectForm } from './RemoteConnect.tsx';

/** "left" for an object on device left: MR via its PD, QP via its device */
function useNames() {
  const pds = useConsole((s) => s.pds);
  const devices = useConsole((s) => s.devices);
  const dev = (h: number) => devices.find((d) => d.handle === h)?.name ?? (h ? `dev ${h}` : '?');
  const pdDev = (pd: number) => dev(pds.find((p) => p.handle === pd)?.device ?? 0);
  return { dev, pdDev };
}

function useLiveObjects() {
  useConsole((s) => s.versions.queues);
  const model = useModel();
  const qps = [...model.queues.qps.values()].filter((q) => !q.destroyed);
  const cqs = [...model.queues.cqs.values()].filter((c) => !c.destroyed);
  const srqs = [...model.queues.srqs.values()].filter((s) => !s.destroyed);
  return { model, qps, cqs, srqs };
}

function CreateCqForm() {
  const devices = useConsole((s) => s.devices);
  const create = useConsole((s) => s.createCq);
  const [dev, setDev] = useState('');
  const [cqe, setCqe] = useState('16');
  const d = Number(dev || devices[0]?.handle || 0);
  const n = parseNum(cqe);
  const problem = !devices.length ? 'create a device first' : Number.isNaN(n) ? 'cqe: a number' : commandProblem({ cmd: 'cq.create', args: { device: d, cqe: n } });
  return (
    <form className="form" aria-label="create CQ" onSubmit={(e) => { e.preventDefault(); if (!problem) void create(d, n); }}>
      <Field label="Device"><select data-testid="cq-device" value={d || ''} onChange={(e) => setDev(e.target.value)}>
        {devices.map((x) => <option key={x.handle} value={x.handle}>{x.name}</option>)}</select></Field>
      <Field label="CQEs"><input data-testid="cq-cqe" value={cqe} onChange={(e) => setCqe(e.target.value)} size={5} /></Field>
      <button type="submit" data-testid="create-cq" disabled={!!problem}>Create CQ</button><Pending form="cq.create" />
      <ErrorMessage form="cq.create" local={problem} />
    </form>
  );
}

function CreateQpForm() {
  const pds = useConsole((s) => s.pds).filter((p) => !p.destroyed);
  const devices = useConsole((s) => s.devices);
  const create = useConsole((s) => s.createQp);
  const { cqs } = useLiveObjects();
  const [pd, setPd] = useState('');
  const [scq, setScq] = useState('');
  const [rcq, setRcq] = useState('');
  const [type, setType] = useState('IBV_QPT_RC');
  const [sw, setSw] = useState('16');
  const [rw, setRw] = useState('16');
  const pdH = Number(pd || pds[0]?.handle || 0);
  const dev = pds.find((p) => p.handle === pdH)?.device;
  const cqsOfDev = cqs.filter((c) => !dev || !c.device || c.device === dev);
  const s = Number(scq || cqsOfDev[0]?.handle || 0); const r = Number(rcq || cqsOfDev[0]?.handle || 0);
  const args = { pd: pdH, sendCq: s, recvCq: r, qpType: type, maxSendWr: parseNum(sw), maxRecvWr: parseNum(rw) };
  const problem = !pds.length ? 'allocate a PD first' : !cqsOfDev.length ? 'create a CQ on this PD\'s device first'
    : commandProblem({ cmd: 'qp.create', args: { pd: pdH, sendCq: s, recvCq: r, qpType: type, cap: { maxSendWr: args.maxSendWr, maxRecvWr: args.maxRecvWr } } });
  const devName = (h: number) => devices.find((x) => x.handle === h)?.name ?? `dev ${h}`;
  return (
    <form className="form" aria-label="create QP" onSubmit={(e) => { e.preventDefault(); if (!problem) void create(args); }}>
      <Field label="PD"><select data-testid="qp-pd" value={pdH || ''} onChange={(e) => { setPd(e.target.value); setScq(''); setRcq(''); }}>
        {pds.map((p) => <option key={p.handle} value={p.handle}>pd {p.handle} ({devName(p.device)})</option>)}</select></Field>
      <Field label="Send CQ"><select data-testid="qp-send-cq" value={s || ''} onChange={(e) => setScq(e.target.value)}>
        {cqsOfDev.map((c) => <option key={c.handle} value={c.handle}>cq {c.handle} on {devName(c.device)}</option>)}</select></Field>
      <Field label="Recv CQ"><select data-testid="qp-recv-cq" value={r || ''} onChange={(e) => setRcq(e.target.value)}>
        {cqsOfDev.map((c) => <option key={c.handle} value={c.handle}>cq {c.handle} on {devName(c.device)}</option>)}</select></Field>
      <Field label="Type"><select data-testid="qp-type" value={type} onChange={(e) => setType(e.target.value)}>
        {QpType.names.map((n) => <option key={n} value={n}>{n}</option>)}</select></Field>
      <Field label="max_send_wr"><input value={sw} onChange={(e) => setSw(e.target.value)} size={4} /></Field>
      <Field label="max_recv_wr"><input value={rw} onChange={(e) => setRw(e.target.value)} size={4} /></Field>
      <button type="submit" data-testid="create-qp" disabled={!!problem}>Create QP</button><Pending form="qp.create" />
      <ErrorMessage form="qp.create" local={problem} />
    </form>
  );
}

function CreateSrqForm() {
  const pds = useConsole((s) => s.pds).filter((p) => !p.destroyed);
  const create = useConsole((s) => s.createSrq);
  const { pdDev } = useNames();
  const [pd, setPd] = useState(''); const [maxWr, setMaxWr] = useState('16'); const [limit, setLimit] = useState('0');
  const pdH = Number(pd || pds[0]?.handle || 0);
  const w = parseNum(maxWr); const l = parseNum(limit);
  const problem = !pds.length ? 'allocate a PD first' : Number.isNaN(w) || Number.isNaN(l) ? 'numbers, please' : commandProblem({ cmd: 'srq.create', args: { pd: pdH, maxWr: w, srqLimit: l } });
  return (
    <form className="form" aria-label="create SRQ" onSubmit={(e) => { e.preventDefault(); if (!problem) void create(pdH, w, l); }}>
      <Field label="PD"><select value={pdH || ''} onChange={(e) => setPd(e.target.value)}>
        {pds.map((p) => <option key={p.handle} value={p.handle}>pd {p.handle} ({pdDev(p.handle)})</option>)}</select></Field>
      <Field label="max_wr"><input value={maxWr} onChange={(e) => setMaxWr(e.target.value)} size={5} /></Field>
      <Field label="srq_limit"><input value={limit} onChange={(e) => setLimit(e.target.value)} size={5} /></Field>
      <button type="submit" disabled={!!problem}>Create SRQ</button>
      <ErrorMessage form="srq.create" local={problem} />
    </form>
  );
}

function ConnectForm() {
  const { qps } = useLiveObjects();
  const connect = useConsole((s) => s.connectQps);
  const { dev } = useNames();
  const rc = qps.filter((q) => q.type === 'IBV_QPT_RC');
  const [a, setA] = useState(''); const [b, setB] = useState('');
  const qa = Number(a || rc[0]?.handle || 0); const qb = Number(b || rc.find((q) => q.handle !== qa)?.handle || 0);
  const problem = rc.length < 2 ? 'create two RC QPs first' : qa === qb ? 'pick two different QPs' : commandProblem({ cmd: 'qp.connect', args: { qp: qa, peer: qb } });
  return (
    <form className="form" aria-label="connect two RC QPs" onSubmit={(e) => { e.preventDefault(); if (!problem) void connect(qa, qb); }}>
      <Field label="QP"><select data-testid="connect-a" value={qa || ''} onChange={(e) => setA(e.target.value)}>
        {rc.map((q) => <option key={q.handle} value={q.handle}>qp {q.handle} (QPN {q.qpn}) on {dev(q.device)}</option>)}</select></Field>
      <Field label="Peer"><select data-testid="connect-b" value={qb || ''} onChange={(e) => setB(e.target.value)}>
        {rc.map((q) => <option key={q.handle} value={q.handle}>qp {q.handle} (QPN {q.qpn}) on {dev(q.device)}</option>)}</select></Field>
      <button type="submit" data-testid="connect-qps" disabled={!!problem}>Connect (RESET→INIT→RTR→RTS both ends)</button><Pending form="qp.connect" />
      <ErrorMessage form="qp.connect" local={problem} />
    </form>
  );
}

function PostSendForm() {
  const { qps } = useLiveObjects();
  useConsole((s) => s.versions.keys);
  const model = useModel();
  const post = useConsole((s) => s.postSend);
  const { dev, pdDev } = useNames();
  const mrs = model.keys.rows(false).filter((k) => k.type === 'MR' && k.length > 0);
  const [qp, setQp] = useState('');
  const [opcode, setOpcode] = useState('IBV_WR_RDMA_WRITE');
  const [lmr, setLmr] = useState('');
  const [loff, setLoff] = useState('0');
  const [len, setLen] = useState('16');
  const [rmr, setRmr] = useState('');
  const [raddr, setRaddr] = useState('');
  const [rkey, setRkey] = useState('');
  const [wrId, setWrId] = useState('1');
  const [signaled, setSignaled] = useState(true);
  const [regMr, setRegMr] = useState(''); const [regKey, setRegKey] = useState('0xa5');
  const q = qps.find((x) => x.handle === Number(qp || qps[0]?.handle));
  const local = mrs.find((m) => m.handle === Number(lmr)) ?? mrs.find((m) => !q || m.pd === q.pd) ?? mrs[0];
  const remote = mrs.find((m) => m.handle === Number(rmr)) ?? mrs.find((m) => m !== local && (!q?.peer || m.pd !== q.pd)) ?? mrs[0];
  const needsRemote = /RDMA|ATOMIC/.test(opcode);
  const ra = raddr === '' ? remote?.addr ?? 0 : parseNum(raddr);
  const rk = rkey === '' ? remote?.rkey ?? 0 : parseNum(rkey);
  const lo = parseNum(loff); const ln = parseNum(len);
  const wr: Record<string, unknown> = {
    wrId: parseNum(wrId), opcode, sendFlags: signaled ? ['IBV_SEND_SIGNALED'] : [],
    sgList: local && ln > 0 ? [{ addr: local.addr + (Number.isNaN(lo) ? 0 : lo), length: ln, lkey: local.lkey }] : [],
  };
  if (needsRemote) { wr.remoteAddr = ra; wr.rkey = rk; }
  const isReg = opcode === 'IB_WR_REG_MR';
  const frs = model.keys.rows(false).filter((k) => k.type === 'MR' && k.kind !== 'user');
  const rm = frs.find((x) => x.handle === Number(regMr)) ?? frs[frs.length - 1];
  if (isReg) {
    wr.sgList = [];
    wr.regMr = rm?.handle; wr.regKey = parseNum(regKey);
    wr.regAccess = ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_READ'];
  }
  const problem = !q ? 'create a QP first' : [lo, ln, ra, rk, wr.wrId as number].some(Number.isNaN) ? 'numbers: decimal or 0x-hex'
    : commandProblem({ cmd: 'post.send', args: { qp: q.handle, wrs: [wr] } });
  return (
    <form className="form" aria-label="post send" data-testid="post-send-form" onSubmit={(e) => { e.preventDefault(); if (!problem && q) void post(q.handle, wr as unknown as SendWr); }}>
      <Field label="QP"><select data-testid="send-qp" value={q?.handle ?? ''} onChange={(e) => setQp(e.target.value)}>
        {qps.map((x) => <option key={x.handle} value={x.handle}>qp {x.handle} (QPN {x.qpn}) on {dev(x.device)}</option>)}</select></Field>
      <Field label="Opcode"><select data-testid="send-opcode" value={opcode} onChange={(e) => setOpcode(e.target.value)}>
        {WrOpcode.names.map((n) => <option key={n} value={n}>{n}</option>)}</select></Field>
      <Field label="Local SGE: MR (lkey)"><select data-testid="send-local-mr" value={local?.handle ?? ''} onChange={(e) => setLmr(e.target.value)}>
        {mrs.map((m) => <option key={m.handle} value={m.handle}>MR {m.handle} on {pdDev(m.pd)} lkey {hex(m.lkey, 8)} @ {hexAddr(m.addr)}</option>)}</select></Field>
      <Field label="offset"><input data-testid="send-local-offset" value={loff} onChange={(e) => setLoff(e.target.value)} size={5} /></Field>
      <Field label="length"><input data-testid="send-length" value={len} onChange={(e) => setLen(e.target.value)} size={5} /></Field>
      {isReg && <>
        <Field label="MR to register"><select value={rm?.handle ?? ''} onChange={(e) => setRegMr(e.target.value)}>
          {frs.map((m) => <option key={m.handle} value={m.handle}>MR {m.handle} ({m.kind}, {m.state})</option>)}</select></Field>
        <Field label="key byte" hint="LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ"><input className="mono" value={regKey} onChange={(e) => setRegKey(e.target.value)} size={5} /></Field>
      </>}
      {needsRemote && <>
        <Field label="Remote MR (fills addr/rkey)"><select data-testid="send-remote-mr" value={remote?.handle ?? ''} onChange={(e) => { setRmr(e.target.value); setRaddr(''); setRkey(''); }}>
          {mrs.map((m) => <option key={m.handle} value={m.handle}>MR {m.handle} on {pdDev(m.pd)} rkey {hex(m.rkey, 8)}</option>)}</select></Field>
        <Field label="remote addr"><input data-testid="send-remote-addr" className="mono" value={raddr === '' ? hexAddr(ra) : raddr} onChange={(e) => setRaddr(e.target.value)} size={16} /></Field>
        <Field label="rkey"><input data-testid="send-rkey" className="mono" value={rkey === '' ? hex(rk, 8) : rkey} onChange={(e) => setRkey(e.target.value)} size={10} /></Field>
      </>}
      <Field label="wr_id"><input data-testid="send-wrid" value={wrId} onChange={(e) => setWrId(e.target.value)} size={4} /></Field>
      <label className="small"><input type="checkbox" checked={signaled} onChange={(e) => setSignaled(e.target.checked)} /> IBV_SEND_SIGNALED</label>
      <button type="submit" data-testid="post-send" disabled={!!problem}>Post send</button><Pending form="post.send" />
      <ErrorMessage form="post.send" local={problem} />
    </form>
  );
}

function PostRecvForm() {
  const { qps } = useLiveObjects();
  useConsole((s) => s.versions.keys);
  const model = useModel();
  const post = useConsole((s) => s.postRecv);
  const { dev, pdDev } = useNames();
  const mrs = model.keys.rows(false).filter((k) => k.type === 'MR' && k.length > 0);
  const [qp, setQp] = useState(''); const [mr, setMr] = useState(''); const [len, setLen] = useState('64'); const [wrId, setWrId] = useState('100');
  const q = qps.find((x) => x.handle === Number(qp || qps[0]?.handle));
  const m = mrs.find((x) => x.handle === Number(mr)) ?? mrs.find((x) => q && x.pd === q.pd) ?? mrs[0];
  const wr = { wrId: parseNum(wrId), sgList: m ? [{ addr: m.addr, length: parseNum(len), lkey: m.lkey }] : [] };
  const problem = !q ? 'create a QP first' : commandProblem({ cmd: 'post.recv', args: { qp: q.handle, wrs: [wr] } });
  return (
    <form className="form" aria-label="post receive" onSubmit={(e) => { e.preventDefault(); if (!problem && q) void post(q.handle, wr); }}>
      <Field label="QP"><select value={q?.handle ?? ''} onChange={(e) => setQp(e.target.value)}>
        {qps.map((x) => <option key={x.handle} value={x.handle}>qp {x.handle} on {dev(x.device)}</option>)}</select></Field>
      <Field label="MR (lkey)"><select value={m?.handle ?? ''} onChange={(e) => setMr(e.target.value)}>
        {mrs.map((x) => <option key={x.handle} value={x.handle}>MR {x.handle} on {pdDev(x.pd)} lkey {hex(x.lkey, 8)}</option>)}</select></Field>
      <Field label="length"><input value={len} onChange={(e) => setLen(e.target.value)} size={5} /></Field>
      <Field label="wr_id"><input value={wrId} onChange={(e) => setWrId(e.target.value)} size={4} /></Field>
      <button type="submit" data-testid="post-recv" disabled={!!problem}>Post recv</button><Pending form="post.recv" />
      <ErrorMessage form="post.recv" local={problem} />
    </form>
  );
}

function WcList({ cq }: { cq: number }) {
  const poll = useConsole((s) => s.lastPoll[cq]);
  const model = useModel();
  const devices = useConsole((s) => s.devices);
  const quirks = deviceQuirks(devices.find((d) => d.handle === model.queues.cqs.get(cq)?.device)?.raw);
  if (!poll) return null;
  if (!poll.wcs.length) return <p className="muted small" data-testid="poll-empty">cq.poll returned no completions.</p>;
  return (
    <ul className="wcs" data-testid="wc-list">
      {poll.wcs.map((wc: Rec, i) => {
        const st = num(wc, 'status') ?? 0; const op = num(wc, 'opcode');
        const kc = st !== 0 ? model.checks.lastFailure() : undefined;
        return (
          <li key={i} className={st === 0 ? 'wc ok' : 'wc bad'} data-testid="wc">
            <span className="mono" data-testid="wc-status">{WcStatus.name(st)}</span>{' '}
            <span className="mono muted">{op !== undefined ? WcOpcode.name(op) : ''} wr_id {String(wc.wrId ?? '?')} byte_len {String(wc.byteLen ?? '?')} qp_num {String(wc.qpNum ?? '?')}</span>
            <div className="wc-explain" data-testid="wc-explanation">{explainWc(st, kc?.text, quirks, typeof wc.rule === 'string' ? wc.rule : undefined)}</div>
          </li>
        );
      })}
    </ul>
  );
}

function CqCard({ handle }: { handle: number }) {
  const { model } = useLiveObjects();
  const c = model.queues.cqs.get(handle)!;
  const poll = useConsole((s) => s.pollCq);
  const { dev } = useNames();
  const arm = useConsole((s) => s.reqNotify);
  return (
    <div className="qcard" data-testid="cq-card" data-cq={handle}>
      <div className="qcard-head"><strong>CQ {handle}</strong> <span className="muted">on {dev(c.device)} · {c.cqe} CQEs</span>
        <span className={c.armed ? 'badge on' : 'badge'} data-testid="cq-armed">{c.armed ? `armed${c.solicitedOnly ? ' (solicited)' : ''}` : 'not armed'}</span>
        {c.pendingEvents ? <span className="badge">{c.pendingEvents} comp event(s)</span> : null}</div>
      <RingView ring={model.queues.rings.get(`cq:${handle}`)} label={`CQ ${handle}`} testid="cq-ring" />
      <div className="form">
        <button type="button" data-testid="poll-cq" onClick={() => void poll(handle, 16)}>Poll CQ</button>
        <button type="button" onClick={() => void arm(handle)}>Arm (req_notify)</button>
      </div>
      <ErrorMessage form={`cq.poll:${handle}`} /><ErrorMessage form={`cq.req_notify:${handle}`} />
      <WcList cq={handle} />
    </div>
  );
}

function QpCard({ handle }: { handle: number }) {
  const { model } = useLiveObjects();
  const q = model.queues.qps.get(handle)!;
  const query = useConsole((s) => s.queryQp);
  const { dev } = useNames();
  return (
    <div className="qcard" data-testid="qp-card" data-qp={handle}>
      <div className="qcard-head"><strong>QP {handle}</strong> <span className="mono">QPN {q.qpn} ({hex(q.qpn)})</span>
        <span className="muted">{q.type.replace('IBV_QPT_', '')} · on {dev(q.device)} · pd {q.pd} · send cq {q.sendCq} · recv cq {q.recvCq}{q.peer ? ` · peer qp ${q.peer}` : ''}</span>
        <button type="button" className="link" onClick={() => void query(handle)}>query</button></div>
      <QpStateDiagram state={q.state} />
      {q.stateWhy && <p className="small mono" data-testid="qp-state-why">{q.stateWhy}</p>}
      {q.lastAsync && <p className="small" data-testid="qp-async"><span className="badge bad">async event</span> {q.lastAsync}</p>}
      <div className="rings">
        <RingView ring={model.queues.rings.get(`qp:${handle}:sq`)} label="SQ" testid="sq-ring" />
        <RingView ring={model.queues.rings.get(`qp:${handle}:rq`)} label="RQ" testid="rq-ring" />
      </div>
      <ErrorMessage form={`qp.query:${handle}`} />
    </div>
  );
}

/** Free running: says where the rings come from when the events reach us sampled (QueueModel.snapshotSeq). */
function SampledNote() {
  const { model } = useLiveObjects();
  const free = useConsole((s) => s.autorun && s.freeRun);
  const q = model.queues;
  if (q.snapshotSeq === null || (!free && !q.stale)) return null;
  return (
    <p className="note" role="status" data-testid="rings-sampled">
      The engine is free running faster than the console draws, so the event stream reaches it sampled.
      {q.stale ? ' Events were dropped since the last snapshot: the rings below are as the device held them ' : ' The rings below are as the device held them '}
      after event #{q.snapshotSeq.toLocaleString()} (its own snapshot of each queue, a few times a second), not rebuilt from the events.
    </p>
  );
}

export function QueuesPanel() {
  const { qps, cqs, srqs, model } = useLiveObjects();
  const { dev } = useNames();
  return (
    <div className="stack">
      <SampledNote />
      <div className="row">
        <Section title="Create CQ"><CreateCqForm /></Section>
        <Section title="Create QP"><CreateQpForm /></Section>
      </div>
      <div className="row">
        <Section title="Connect two RC QPs (qp.connect)"><ConnectForm /></Section>
        <Section title="Connect a QP to a remote host (qp.connect remote)" testid="remote-connect-section"><RemoteConnectForm qps={qps} dev={dev} /></Section>
      </div>
      <div className="row">
        <Section title="Create SRQ"><CreateSrqForm /></Section>
      </div>
      <div className="row">
        <Section title="Post send" testid="post-send-section"><PostSendForm /></Section>
        <Section title="Post receive"><PostRecvForm /></Section>
      </div>
      <Section title="Completion queues" testid="cqs-section">
        {cqs.length ? <div className="qgrid">{cqs.map((c) => <CqCard key={c.handle} handle={c.handle} />)}</div> : <p className="muted">No CQs.</p>}
      </Section>
      <Section title="Queue pairs" testid="qps-section">
        {qps.length ? <div className="qgrid">{qps.map((q) => <QpCard key={q.handle} handle={q.handle} />)}</div> : <p className="muted">No QPs.</p>}
      </Section>
      {srqs.length > 0 && (
        <Section title="Shared receive queues">
          <div className="qgrid">{srqs.map((s) => (
            <div className="qcard" key={s.handle}><div className="qcard-head"><strong>SRQ {s.handle}</strong> <span className="muted">max_wr {s.maxWr} · srq_limit {s.limit}</span></div>
              <RingView ring={model.queues.rings.get(`srq:${s.handle}`)} label={`SRQ ${s.handle}`} testid="srq-ring" /></div>))}</div>
        </Section>
      )}
    </div>
  );
}
