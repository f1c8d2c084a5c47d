// Create CQ (with or without a completion channel), create QP (optionally on an SRQ), create SRQ, connect two RC
// QPs. Each form keeps its choices in the store (useForm) and shows problems as errors only once touched.
import { QpType } from '../../../../app/protocol/index.ts';
import { useConsole } from '../../store/context.tsx';
import { commandProblem } from '../../store/validate.ts';
import { useForm } from '../../components/form.ts';
import { ErrorMessage, Field, Pending, parseNum } from '../../components/ui.tsx';
import { QpOptions, defaultQp, useLiveObjects, useNames } from './common.tsx';

export function CreateCqForm() {
  const devices = useConsole((s) => s.devices);
  const create = useConsole((s) => s.createCq);
  const f = useForm('cq.create');
  const [dev, setDev] = f.text('device', '');
  const [cqe, setCqe] = f.text('cqe', '16');
  const channel = f.get('channel', false);
  const d = Number(dev || devices[0]?.handle || 0);
  const n = parseNum(cqe);
  const problem = !devices.length ? 'create a device first' : Number.isNaN(n) ? 'cqe: a number' : commandProblem({ cmd: 'cq.create', args: { device: d, cqe: n, channel } });
  return (
    <form className="form" aria-label="create CQ" onSubmit={(e) => { e.preventDefault(); f.submitted(); if (!problem) void create(d, n, channel).then((ok) => ok && f.done()); }}>
      <Field label="Device"><select data-testid="cq-device" value={d || ''} onChange={(e) => setDev(e.target.value)}>
        {devices.map((x) => <option key={x.handle} value={x.handle}>{x.name}</option>)}</select></Field>
      <Field label="CQEs"><input data-testid="cq-cqe" value={cqe} onChange={(e) => setCqe(e.target.value)} size={5} /></Field>
      <label className="small"><input type="checkbox" data-testid="cq-channel" checked={channel} onChange={(e) => f.set('channel', e.target.checked)} /> completion channel (ibv_create_comp_channel)</label>
      <button type="submit" data-testid="create-cq" disabled={!!problem}>Create CQ</button><Pending form="cq.create" />
      <ErrorMessage form="cq.create" local={problem} touched={f.touched} />
    </form>
  );
}

export function CreateQpForm() {
  const pds = useConsole((s) => s.pds).filter((p) => !p.destroyed);
  const devices = useConsole((s) => s.devices);
  const create = useConsole((s) => s.createQp);
  const { cqs, srqs } = useLiveObjects();
  const f = useForm('qp.create');
  const [pd, setPd] = f.text('pd', '');
  const [scq, setScq] = f.text('sendCq', '');
  const [rcq, setRcq] = f.text('recvCq', '');
  const [type, setType] = f.text('type', 'IBV_QPT_RC');
  const [sw, setSw] = f.text('maxSendWr', '16');
  const [rw, setRw] = f.text('maxRecvWr', '16');
  const [srq, setSrq] = f.text('srq', '');
  const pdH = Number(pd || pds[0]?.handle || 0);
  const dev = pds.find((p) => p.handle === pdH)?.device;
  const cqsOfDev = cqs.filter((c) => !dev || !c.device || c.device === dev);
  const s = Number(scq || cqsOfDev[0]?.handle || 0); const r = Number(rcq || cqsOfDev[0]?.handle || 0);
  const srqH = Number(srq || 0);
  const args = { pd: pdH, sendCq: s, recvCq: r, qpType: type, maxSendWr: parseNum(sw), maxRecvWr: parseNum(rw), ...(srqH ? { srq: srqH } : {}) };
  const problem = !pds.length ? 'allocate a PD first' : !cqsOfDev.length ? 'create a CQ on this PD\'s device first'
    : commandProblem({ cmd: 'qp.create', args: { pd: pdH, sendCq: s, recvCq: r, qpType: type, ...(srqH ? { srq: srqH } : {}), cap: { maxSendWr: args.maxSendWr, maxRecvWr: args.maxRecvWr } } });
  const devName = (h: number) => devices.find((x) => x.handle === h)?.name ?? `dev ${h}`;
  return (
    <form className="form" aria-label="create QP" onSubmit={(e) => { e.preventDefault(); f.submitted(); if (!problem) void create(args).then((ok) => ok && f.done()); }}>
      <Field label="PD"><select data-testid="qp-pd" value={pdH || ''} onChange={(e) => { setPd(e.target.value); f.set('sendCq', undefined); f.set('recvCq', undefined); }}>
        {pds.map((p) => <option key={p.handle} value={p.handle}>pd {p.handle} ({devName(p.device)})</option>)}</select></Field>
      <Field label="Send CQ"><select data-testid="qp-send-cq" value={s || ''} onChange={(e) => setScq(e.target.value)}>
        {cqsOfDev.map((c) => <option key={c.handle} value={c.handle}>cq {c.handle} on {devName(c.device)}</option>)}</select></Field>
      <Field label="Recv CQ"><select data-testid="qp-recv-cq" value={r || ''} onChange={(e) => setRcq(e.target.value)}>
        {cqsOfDev.map((c) => <option key={c.handle} value={c.handle}>cq {c.handle} on {devName(c.device)}</option>)}</select></Field>
      <Field label="Type"><select data-testid="qp-type" value={type} onChange={(e) => setType(e.target.value)}>
        {QpType.names.map((n) => <option key={n} value={n}>{n}</option>)}</select></Field>
      <Field label="SRQ"><select data-testid="qp-srq" value={srqH || ''} onChange={(e) => setSrq(e.target.value)}>
        <option value="">none (own receive queue)</option>
        {srqs.map((x) => <option key={x.handle} value={x.handle}>srq {x.handle}</option>)}</select></Field>
      <Field label="max_send_wr"><input value={sw} onChange={(e) => setSw(e.target.value)} size={4} /></Field>
      <Field label="max_recv_wr"><input value={rw} onChange={(e) => setRw(e.target.value)} size={4} /></Field>
      <button type="submit" data-testid="create-qp" disabled={!!problem}>Create QP</button><Pending form="qp.create" />
      <ErrorMessage form="qp.create" local={problem} touched={f.touched} />
    </form>
  );
}

export function CreateSrqForm() {
  const pds = useConsole((s) => s.pds).filter((p) => !p.destroyed);
  const create = useConsole((s) => s.createSrq);
  const { pdDev } = useNames();
  const f = useForm('srq.create');
  const [pd, setPd] = f.text('pd', ''); const [maxWr, setMaxWr] = f.text('maxWr', '16'); const [limit, setLimit] = f.text('limit', '0');
  const pdH = Number(pd || pds[0]?.handle || 0);
  const w = parseNum(maxWr); const l = parseNum(limit);
  const problem = !pds.length ? 'allocate a PD first' : Number.isNaN(w) || Number.isNaN(l) ? 'numbers, please' : commandProblem({ cmd: 'srq.create', args: { pd: pdH, maxWr: w, srqLimit: l } });
  return (
    <form className="form" aria-label="create SRQ" onSubmit={(e) => { e.preventDefault(); f.submitted(); if (!problem) void create(pdH, w, l).then((ok) => ok && f.done()); }}>
      <Field label="PD"><select value={pdH || ''} onChange={(e) => setPd(e.target.value)}>
        {pds.map((p) => <option key={p.handle} value={p.handle}>pd {p.handle} ({pdDev(p.handle)})</option>)}</select></Field>
      <Field label="max_wr"><input value={maxWr} onChange={(e) => setMaxWr(e.target.value)} size={5} /></Field>
      <Field label="srq_limit"><input value={limit} onChange={(e) => setLimit(e.target.value)} size={5} /></Field>
      <button type="submit" disabled={!!problem}>Create SRQ</button>
      <ErrorMessage form="srq.create" local={problem} touched={f.touched} />
    </form>
  );
}

export function ConnectForm() {
  const { qps } = useLiveObjects();
  const connect = useConsole((s) => s.connectQps);
  const rc = qps.filter((q) => q.type === 'IBV_QPT_RC');
  const f = useForm('qp.connect');
  const [a, setA] = f.text('qp', ''); const [b, setB] = f.text('peer', '');
  const fresh = (q: { state: number }) => q.state === 0;   // RESET: what qp.connect starts from
  const qa = Number(a || defaultQp(rc, fresh)?.handle || 0);
  const qb = Number(b || defaultQp(rc.filter((q) => q.handle !== qa), fresh)?.handle || 0);
  const problem = rc.length < 2 ? 'create two RC QPs first' : qa === qb ? 'pick two different QPs' : commandProblem({ cmd: 'qp.connect', args: { qp: qa, peer: qb } });
  return (
    <form className="form" aria-label="connect two RC QPs" onSubmit={(e) => { e.preventDefault(); f.submitted(); if (!problem) void connect(qa, qb).then((ok) => ok && f.done()); }}>
      <Field label="QP"><select data-testid="connect-a" value={qa || ''} onChange={(e) => setA(e.target.value)}><QpOptions qps={rc} /></select></Field>
      <Field label="Peer"><select data-testid="connect-b" value={qb || ''} onChange={(e) => setB(e.target.value)}><QpOptions qps={rc} /></select></Field>
      <button type="submit" data-testid="connect-qps" disabled={!!problem}>Connect (RESET→INIT→RTR→RTS both ends)</button><Pending form="qp.connect" />
      <p className="hint">qp.connect starts from RESET: a QP in ERR goes back with Modify → RESET first.</p>
      <ErrorMessage form="qp.connect" local={problem} touched={f.touched} />
    </form>
  );
}
