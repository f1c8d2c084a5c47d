// The cards of the Queues panel: a CQ (ring, poll, arm for the next or a solicited completion, the completion
// channel's get_event / ack_events, destroy), a QP (state machine, rings, modify to any state, destroy), an SRQ;
// and the post receive form. Every button is one protocol command; the device's refusal shows under the card.
import { QpState, WcOpcode, WcStatus, type QpAttr } from '../../../../app/protocol/index.ts';
import { useConsole, useModel } from '../../store/context.tsx';
import { commandProblem } from '../../store/validate.ts';
import { deviceQuirks, explainWc } from '../../store/explain.ts';
import { fmtHex } from '../../format.ts';
import { useForm } from '../../components/form.ts';
import { ErrorMessage, Field, Pending, parseNum } from '../../components/ui.tsx';
import { RingView as SoftRing } from '../../components/Ring.tsx';
import { QpStateDiagram } from '../../components/QpStateDiagram.tsx';
import { QpOptions, defaultQp, stateName, useLiveObjects, useNames } from './common.tsx';

/** A queue's ring; on a real device the ring is the NIC's own and not visible (docs/real-devices.md). */
function RingView(props: Parameters<typeof SoftRing>[0]) {
  const real = useConsole((s) => s.backend);
  if (!real) return <SoftRing {...props} />;
  return <p className="muted small" data-testid="ring-not-visible">{props.label}: ring not visible on a real device (it lives in the NIC; the console sees what it posted and what ibv_poll_cq returned)</p>;
}

export function PostRecvForm() {
  const { qps } = useLiveObjects();
  useConsole((s) => s.versions.keys);
  const model = useModel();
  const post = useConsole((s) => s.postRecv);
  const postSrq = useConsole((s) => s.postSrqRecv);
  const { srqs } = useLiveObjects();
  const { pdDev } = useNames();
  const mrs = model.keys.rows(false).filter((k) => k.type === 'MR' && k.length > 0);
  const f = useForm('post.recv');
  const [qp, setQp] = f.text('qp', ''); const [len, setLen] = f.text('len', '64'); const [wrId, setWrId] = f.text('wrId', '100');
  // a target "srq:H" posts to a shared receive queue (ibv_post_srq_recv), else to the QP's own RQ
  const srqTarget = qp.startsWith('srq:') ? Number(qp.slice(4)) : 0;
  const q = srqTarget ? undefined : qps.find((x) => x.handle === Number(qp)) ?? defaultQp(qps);
  const m = mrs.find((x) => x.handle === Number(f.get('mr', ''))) ?? mrs.find((x) => q && x.pd === q.pd) ?? mrs[0];
  const wr = { wrId: parseNum(wrId), sgList: m ? [{ addr: m.addr, length: parseNum(len), lkey: m.lkey }] : [] };
  const problem = srqTarget ? commandProblem({ cmd: 'srq.post_recv', args: { srq: srqTarget, wrs: [wr] } })
    : !q ? 'create a QP first' : commandProblem({ cmd: 'post.recv', args: { qp: q.handle, wrs: [wr] } });
  return (
    <form className="form" aria-label="post receive" onSubmit={(e) => { e.preventDefault(); f.submitted(); if (problem) return; if (srqTarget) void postSrq(srqTarget, wr).then((ok) => ok && f.done()); else if (q) void post(q.handle, wr).then((ok) => ok && f.done()); }}>
      <Field label="QP or SRQ"><select data-testid="recv-qp" value={srqTarget ? `srq:${srqTarget}` : q?.handle ?? ''} onChange={(e) => setQp(e.target.value)}><QpOptions qps={qps} />
        {srqs.map((x) => <option key={`srq:${x.handle}`} value={`srq:${x.handle}`}>srq {x.handle} (ibv_post_srq_recv)</option>)}</select></Field>
      <Field label="MR (lkey)"><select data-testid="recv-mr" value={m?.handle ?? ''} onChange={(e) => f.set('mr', e.target.value)}>
        {mrs.map((x) => <option key={x.handle} value={x.handle}>MR {x.handle} on {pdDev(x.pd)} lkey {fmtHex(x.lkey, 8)}</option>)}</select></Field>
      <Field label="length"><input value={len} onChange={(e) => setLen(e.target.value)} size={5} /></Field>
      <Field label="wr_id"><input value={wrId} onChange={(e) => setWrId(e.target.value)} size={4} /></Field>
      <button type="submit" data-testid="post-recv" disabled={!!problem}>Post recv</button><Pending form="post.recv" />
      <ErrorMessage form={srqTarget ? 'srq.post_recv' : 'post.recv'} local={problem} touched={f.touched} />
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
      {poll.wcs.map((wc, i) => {
        const st = wc.status; const op = wc.opcode;
        const kc = st !== 0 ? model.checks.lastFailure() : undefined;
        // a local operation the device refused says why as it started the WQE (the SQ slot's text)
        const local = st !== 0 && (op === WcOpcode.values.IBV_WC_BIND_MW || op === WcOpcode.values.IBV_WC_LOCAL_INV || op === WcOpcode.values.IB_WC_REG_MR || st === WcStatus.values.IBV_WC_MW_BIND_ERR || st === WcStatus.values.IBV_WC_LOC_QP_OP_ERR)
          ? model.queues.sqSlotText(wc.qpNum, Number(wc.wrId)) : undefined;
        return (
          <li key={i} className={st === 0 ? 'wc ok' : 'wc bad'} data-testid="wc">
            <span className="mono" data-testid="wc-status">{WcStatus.name(st)}</span>{' '}
            <span className="mono muted">{WcOpcode.name(op)} wr_id {String(wc.wrId)} byte_len {wc.byteLen} qp_num {fmtHex(wc.qpNum)}</span>
            <div className="wc-explain" data-testid="wc-explanation">{explainWc(st, local ?? kc?.text, quirks, wc.rule)}</div>
          </li>
        );
      })}
    </ul>
  );
}

export function CqCard({ handle }: { handle: number }) {
  const { model } = useLiveObjects();
  const c = model.queues.cqs.get(handle)!;
  const poll = useConsole((s) => s.pollCq);
  const arm = useConsole((s) => s.reqNotify);
  const getEvent = useConsole((s) => s.getCqEvent);
  const ack = useConsole((s) => s.ackCqEvents);
  const destroy = useConsole((s) => s.destroyCq);
  const unacked = useConsole((s) => s.unackedEvents[handle] ?? 0);
  const { dev } = useNames();
  return (
    <div className="qcard" data-testid="cq-card" data-cq={handle}>
      <div className="qcard-head"><strong>CQ {handle}</strong> <span className="muted">on {dev(c.device)} · {c.cqe} CQEs{c.channel ? ' · completion channel' : ''}</span>
        <span className={c.armed ? 'badge on' : 'badge'} data-testid="cq-armed">{c.armed ? `armed${c.solicitedOnly ? ' (solicited only)' : ' (next completion)'}` : 'not armed'}</span>
        {c.pendingEvents ? <span className="badge on" data-testid="cq-pending-events">{c.pendingEvents} event(s) on the channel</span> : null}
        {unacked ? <span className="badge" data-testid="cq-unacked">{unacked} not acknowledged</span> : null}</div>
      <RingView ring={model.queues.rings.get(`cq:${handle}`)} label={`CQ ${handle}`} testid="cq-ring" />
      <div className="form">
        <button type="button" data-testid="poll-cq" onClick={() => void poll(handle, 16)}>Poll CQ</button>
        <button type="button" data-testid="arm-cq" onClick={() => void arm(handle, false)}>Arm: next completion</button>
        <button type="button" data-testid="arm-cq-solicited" onClick={() => void arm(handle, true)}>Arm: solicited only</button>
        {c.channel && <button type="button" data-testid="get-event" onClick={() => void getEvent(c.device)}>get_event</button>}
        {c.channel && <button type="button" data-testid="ack-events" disabled={!unacked} onClick={() => void ack(handle, unacked)}>ack_events ({unacked})</button>}
        <button type="button" className="danger" data-testid="destroy-cq" onClick={() => void destroy(handle)}>Destroy</button>
      </div>
      <ErrorMessage form={`cq.poll:${handle}`} /><ErrorMessage form={`cq.req_notify:${handle}`} />
      <ErrorMessage form={`cq.get_event:${c.device}`} /><ErrorMessage form={`cq.ack_events:${handle}`} /><ErrorMessage form={`cq.destroy:${handle}`} />
      <WcList cq={handle} />
    </div>
  );
}

/** The attributes ibv_modify_qp takes for a move to each state, as rc_pingpong sets them; the mask is the set of
 *  attributes given. Which transitions and masks are allowed is the device's check (qp_state_table). */
function modifyArgs(target: string, type: string, v: Record<string, number>): { attr: QpAttr; mask: string[] } {
  const attr: QpAttr = { qpState: target as QpAttr['qpState'] };
  const mask: string[] = ['IBV_QP_STATE'];
  const add = (m: string, a: Partial<QpAttr>) => { Object.assign(attr, a); mask.push(m); };
  const ud = type === 'IBV_QPT_UD';
  if (target === 'IBV_QPS_INIT') {
    add('IBV_QP_PKEY_INDEX', { pkeyIndex: 0 }); add('IBV_QP_PORT', { portNum: 1 });
    if (ud) add('IBV_QP_QKEY', { qkey: v.qkey });
    else add('IBV_QP_ACCESS_FLAGS', { qpAccessFlags: ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_READ', 'IBV_ACCESS_REMOTE_ATOMIC'] });
  }
  if (target === 'IBV_QPS_RTR' && !ud) {
    add('IBV_QP_AV', { destDevice: v.destDevice }); add('IBV_QP_PATH_MTU', { pathMtu: 'IBV_MTU_1024' });
    add('IBV_QP_DEST_QPN', { destQpNum: v.destQpn }); add('IBV_QP_RQ_PSN', { rqPsn: v.rqPsn });
    if (type === 'IBV_QPT_RC') { add('IBV_QP_MAX_DEST_RD_ATOMIC', { maxDestRdAtomic: 1 }); add('IBV_QP_MIN_RNR_TIMER', { minRnrTimer: 12 }); }
  }
  if (target === 'IBV_QPS_RTS') {
    add('IBV_QP_SQ_PSN', { sqPsn: v.sqPsn });
    if (type === 'IBV_QPT_RC') { add('IBV_QP_TIMEOUT', { timeout: 14 }); add('IBV_QP_RETRY_CNT', { retryCnt: 7 }); add('IBV_QP_RNR_RETRY', { rnrRetry: 7 }); add('IBV_QP_MAX_QP_RD_ATOMIC', { maxRdAtomic: 1 }); }
  }
  return { attr, mask };
}

function ModifyQpForm({ handle }: { handle: number }) {
  const { model, qps } = useLiveObjects();
  const q = model.queues.qps.get(handle)!;
  const devices = useConsole((s) => s.devices);
  const modify = useConsole((s) => s.modifyQp);
  const f = useForm(`qp.modify:${handle}`);
  const [target, setTarget] = f.text('target', q.state === QpState.values.IBV_QPS_ERR ? 'IBV_QPS_RESET' : 'IBV_QPS_INIT');
  const peer = q.peer ? model.queues.qps.get(q.peer) : qps.find((x) => x.handle !== handle && x.type === q.type);
  const [destQpn, setDestQpn] = f.text('destQpn', '');
  const [destDev, setDestDev] = f.text('destDevice', '');
  const [rqPsn, setRqPsn] = f.text('rqPsn', '0'); const [sqPsn, setSqPsn] = f.text('sqPsn', '0'); const [qkey, setQkey] = f.text('qkey', '0x11111111');
  const v = {
    destQpn: destQpn === '' ? peer?.qpn ?? 0 : parseNum(destQpn), destDevice: destDev === '' ? peer?.device ?? q.device : Number(destDev),
    rqPsn: parseNum(rqPsn), sqPsn: parseNum(sqPsn), qkey: parseNum(qkey),
  };
  const { attr, mask } = modifyArgs(target, q.type, v);
  const problem = Object.values(v).some(Number.isNaN) ? 'numbers: decimal or 0x-hex' : commandProblem({ cmd: 'qp.modify', args: { qp: handle, attr, mask } });
  const rtr = target === 'IBV_QPS_RTR' && q.type !== 'IBV_QPT_UD';
  return (
    <form className="form" aria-label={`modify QP ${handle}`} data-testid="modify-qp-form" onSubmit={(e) => { e.preventDefault(); f.submitted(); if (!problem) void modify(handle, attr, mask).then((ok) => ok && f.done()); }}>
      <Field label="to state"><select data-testid="modify-target" value={target} onChange={(e) => setTarget(e.target.value)}>
        {QpState.names.map((n) => <option key={n} value={n}>{n}</option>)}</select></Field>
      {rtr && <>
        <Field label="dest QPN"><input data-testid="modify-dest-qpn" className="mono" value={destQpn === '' ? fmtHex(v.destQpn) : destQpn} onChange={(e) => setDestQpn(e.target.value)} size={8} /></Field>
        <Field label="dest device (AV)"><select value={v.destDevice} onChange={(e) => setDestDev(e.target.value)}>
          {devices.map((d) => <option key={d.handle} value={d.handle}>{d.name}</option>)}</select></Field>
        <Field label="rq_psn"><input value={rqPsn} onChange={(e) => setRqPsn(e.target.value)} size={6} /></Field>
      </>}
      {target === 'IBV_QPS_RTS' && <Field label="sq_psn"><input value={sqPsn} onChange={(e) => setSqPsn(e.target.value)} size={6} /></Field>}
      {target === 'IBV_QPS_INIT' && q.type === 'IBV_QPT_UD' && <Field label="qkey"><input className="mono" value={qkey} onChange={(e) => setQkey(e.target.value)} size={10} /></Field>}
      <span className="hint mono" data-testid="modify-mask">mask {mask.map((m) => m.replace('IBV_QP_', '')).join(' | ')}</span>
      <button type="submit" data-testid="modify-qp" disabled={!!problem}>Modify {stateName(q.state)} → {stateName(QpState.values[target as keyof typeof QpState.values] ?? 0)}</button>
      <Pending form={`qp.modify:${handle}`} />
      <ErrorMessage form={`qp.modify:${handle}`} local={problem} touched={f.touched} />
    </form>
  );
}

export function QpCard({ handle }: { handle: number }) {
  const { model } = useLiveObjects();
  const q = model.queues.qps.get(handle)!;
  const query = useConsole((s) => s.queryQp);
  const destroy = useConsole((s) => s.destroyQp);
  const { dev } = useNames();
  return (
    <div className="qcard" data-testid="qp-card" data-qp={handle} data-state={QpState.name(q.state)}>
      <div className="qcard-head"><strong>QP {handle}</strong> <span className="mono">QPN {q.qpn} ({fmtHex(q.qpn)})</span>
        <span className="muted">{q.type.replace('IBV_QPT_', '')} · on {dev(q.device)} · pd {q.pd} · send cq {q.sendCq} · recv cq {q.recvCq}{q.srq ? ` · srq ${q.srq}` : ''}{q.peer ? ` · peer qp ${q.peer}` : ''}</span>
        <button type="button" className="link" onClick={() => void query(handle)}>query</button>
        <button type="button" className="danger" data-testid="destroy-qp" onClick={() => void destroy(handle)}>Destroy</button></div>
      <QpStateDiagram state={q.state} />
      {q.stateWhy && <p className="small mono" data-testid="qp-state-why">{q.stateWhy}</p>}
      {q.lastAsync && <p className="small" data-testid="qp-async"><span className="badge bad">async event</span> {q.lastAsync}</p>}
      <div className="rings">
        <RingView ring={model.queues.rings.get(`qp:${handle}:sq`)} label="SQ" testid="sq-ring" />
        <RingView ring={model.queues.rings.get(`qp:${handle}:rq`)} label="RQ" testid="rq-ring" />
      </div>
      <ModifyQpForm handle={handle} />
      <ErrorMessage form={`qp.query:${handle}`} /><ErrorMessage form={`qp.destroy:${handle}`} />
    </div>
  );
}

export function SrqCard({ handle }: { handle: number }) {
  const { model } = useLiveObjects();
  const s = model.queues.srqs.get(handle)!;
  const destroy = useConsole((st) => st.destroySrq);
  return (
    <div className="qcard" data-testid="srq-card"><div className="qcard-head"><strong>SRQ {handle}</strong> <span className="muted">max_wr {s.maxWr} · srq_limit {s.limit}</span>
      <button type="button" className="danger" data-testid="destroy-srq" onClick={() => void destroy(handle)}>Destroy</button></div>
      <RingView ring={model.queues.rings.get(`srq:${handle}`)} label={`SRQ ${handle}`} testid="srq-ring" />
      <ErrorMessage form={`srq.destroy:${handle}`} /></div>
  );
}


