// Lab 5's panel: two SMB Direct peers in the console's session (labs/smbd/host.ts). Props-only views, drawn from
// the agent's typed replies (commands.ts), nothing invented:
//   CreditBoard        both sides' SendCredits / target, ReceiveCredits / target / max, credits owed, posted
//                      receives (from the verbs), send queue, why it is blocked, keepalive state and its timers
//   NegotiationView    the request and response bytes and every 3.1.5.6 / 3.1.5.7 rule with pass / fail, the sizes
//   FragmentView       the messages each side sent (CreditsGranted, RemainingDataLength counting down) and the
//                      upper-layer messages delivered with their fragment counts and RFC1002 lengths
//   IoView             one SMB2 READ / WRITE: descriptor, the server's RDMA operation, how the key was invalidated,
//                      and the server buffer policy's counters
// The default export registers the lab's tab (renderer/src/panels/labs.ts).
import { useState } from 'react';
import type { z } from 'zod';
import { ErrorMessage } from '../../renderer/src/components/ui.tsx';
import type { PanelDef } from '../../renderer/src/panels/registry.ts';
import { useConsole } from '../../renderer/src/store/context.tsx';
import type { Board, IoResult, MeasureResult, Negotiation } from './commands.ts';

type BoardT = z.infer<typeof Board>;
type NegotiationT = z.infer<typeof Negotiation>;
type IoT = z.infer<typeof IoResult>;
type Side = NonNullable<BoardT['client']>;
type Note = BoardT['notes']['client'][number];

const S = 1e9;
const secs = (ns: number) => `${(ns / S).toFixed(3)} s`;

function SideCard({ name, profile, s, now }: { name: string; profile: string; s: Side | null; now: number }) {
  if (!s) return <div className="card" data-testid={`smbd-side-${name}`}><div className="card-body"><strong>{name}</strong> <span className="muted">not connected</span></div></div>;
  const rows: [string, string | number, string?][] = [
    ['SendCredits', s.sendCredits, 'credits the peer granted, not yet spent'], ['SendCreditTarget', s.sendCreditTarget, 'what this side asks for (CreditsRequested)'],
    ['ReceiveCredits', s.receiveCredits, 'receives posted and counted as granted'], ['ReceiveCreditTarget', s.receiveCreditTarget, 'what the peer last asked for'],
    ['ReceiveCreditMax', s.receiveCreditMax], ['credits owed to the peer', s.pendingGrant, 'posted, not yet carried in a message'],
    ['posted receives (verbs)', s.postedRecvs], ['send queue', s.sendQueue], ['sends in flight', s.sendsInFlight],
    ['sent / received', `${s.sent} / ${s.received}`], ['credits granted sent / received', `${s.creditsGrantedSent} / ${s.creditsGrantedReceived}`],
    ['last credit held (3.1.5.1 step 3)', s.lastCreditHolds], ['delivered', s.delivered],
  ];
  return (
    <div className="card" data-testid={`smbd-side-${name}`}>
      <div className="card-head">
        <strong>{name}</strong><span className="muted">{profile}</span>
        <span className={s.state === 'established' ? 'badge' : 'badge on'} data-testid={`smbd-${name}-state`}>{s.state}</span>
        {s.blocked ? <span className="badge on" data-testid={`smbd-${name}-blocked`}>{s.blocked === 'last-credit-rule' ? 'holding the last credit (must grant)' : 'no send credits'}</span> : null}
        <span className="badge" data-testid={`smbd-${name}-keepalive`}>keepalive {s.keepalive}</span>
      </div>
      <div className="card-body">
        <table className="table mono small">
          <tbody>{rows.map(([k, v, t]) => <tr key={k} title={t}><th scope="row">{k}</th><td className="num" data-testid={`smbd-${name}-${k.split(' ')[0]}`}>{v}</td></tr>)}</tbody>
        </table>
        <p className="small muted">
          idle timer at {secs(s.idleDeadlineNs)} (now {secs(now)}){s.keepaliveDeadlineNs !== null ? ` · answer due by ${secs(s.keepaliveDeadlineNs)}` : ''}
          {s.reassemblyRemaining ? ` · reassembling: ${s.reassemblyBytes} bytes in, ${s.reassemblyRemaining} to come` : ''}
        </p>
        {s.disconnect ? <p className="error" data-testid={`smbd-${name}-disconnect`}>disconnected: {s.disconnect.rule} ({s.disconnect.reason})</p> : null}
      </div>
    </div>
  );
}

export function CreditBoard({ board }: { board: BoardT }) {
  return (
    <div className="stack" data-testid="smbd-board">
      {board.stalled ? <p className="error" data-testid="smbd-stalled">stalled: messages are queued and nothing moves — both sides are at 0 send credits, and each spent its last credit on a message that granted none, so neither can send the message that would grant credits back</p> : null}
      <div className="row">
        <SideCard name="client" profile={board.profiles.client} s={board.client} now={board.nowNs} />
        <SideCard name="server" profile={board.profiles.server} s={board.server} now={board.nowNs} />
      </div>
    </div>
  );
}

function Rules({ rules, testid }: { rules: NegotiationT['serverRules']; testid: string }) {
  return (
    <table className="table mono small" data-testid={testid}>
      <thead><tr><th>rule</th><th className="num">value</th><th>result</th><th>source</th></tr></thead>
      <tbody>{rules.map((r) => <tr key={r.id} className={r.pass ? undefined : 'error'} data-rule={r.id}><td>{r.rule}</td><td className="num">{r.value}</td><td>{r.pass ? 'pass' : 'FAIL'}</td><td>{r.section}</td></tr>)}</tbody>
    </table>
  );
}
const spaced = (hex: string | null) => (hex ?? '').replace(/(..)/g, '$1 ').trim();

export function NegotiationView({ n }: { n: NegotiationT }) {
  return (
    <div className="card" data-testid="smbd-negotiation">
      <div className="card-head"><strong>Negotiation</strong><span className="badge">server: {n.serverOutcome}</span><span className="badge">client: {n.clientOutcome ?? '—'}</span></div>
      <div className="card-body stack">
        <div><span className="field-label">request ({n.requestHex.length / 2} bytes, as received)</span><pre className="mono small" data-testid="smbd-request-hex">{spaced(n.requestHex)}</pre></div>
        <Rules rules={n.serverRules} testid="smbd-server-rules" />
        {n.responseHex ? <div><span className="field-label">response ({n.responseHex.length / 2} bytes, as received)</span><pre className="mono small" data-testid="smbd-response-hex">{spaced(n.responseHex)}</pre></div> : <p className="muted">no response (the server closed the connection)</p>}
        {n.clientRules.length ? <Rules rules={n.clientRules} testid="smbd-client-rules" /> : null}
        {n.client && n.server ? (
          <table className="table mono small" data-testid="smbd-sizes">
            <thead><tr><th>side</th><th className="num">MaxSendSize</th><th className="num">MaxReceiveSize</th><th className="num">MaxFragmentedSend</th><th className="num">MaxFragmentedRecv</th><th className="num">MaxReadWrite</th></tr></thead>
            <tbody>{(['client', 'server'] as const).map((k) => { const z = n[k]!; return <tr key={k}><th scope="row">{k}</th><td className="num">{z.maxSendSize}</td><td className="num">{z.maxReceiveSize}</td><td className="num">{z.maxFragmentedSendSize}</td><td className="num">{z.maxFragmentedRecvSize}</td><td className="num">{z.maxReadWriteSize}</td></tr>; })}</tbody>
          </table>
        ) : null}
      </div>
    </div>
  );
}

export function FragmentView({ notes, delivered }: { notes: { side: 'client' | 'server'; note: Note }[]; delivered: BoardT['delivered'] }) {
  const tx = notes.filter((x) => x.note.dir === 'tx').slice(-40);
  return (
    <div className="card" data-testid="smbd-fragments">
      <div className="card-head"><strong>Messages sent (last 40)</strong><span className="muted">payload per message = MaxSendSize − 24</span></div>
      <div className="card-body">
        <table className="table mono small">
          <thead><tr><th>from</th><th className="num">bytes</th><th className="num">DataLength</th><th className="num">RemainingDataLength</th><th className="num">CreditsGranted</th><th className="num">CreditsRequested</th><th>flags</th></tr></thead>
          <tbody>{tx.map((x, i) => <tr key={i}><td>{x.side}</td><td className="num">{x.note.bytes}</td><td className="num">{x.note.dataLength}</td><td className="num">{x.note.remainingDataLength}</td><td className="num">{x.note.creditsGranted}</td><td className="num">{x.note.creditsRequested}</td><td>{x.note.flags & 1 ? 'RESPONSE_REQUESTED' : ''}{x.note.invalidate !== undefined ? ` SEND_WITH_INV 0x${x.note.invalidate.toString(16)}` : ''}</td></tr>)}</tbody>
        </table>
        <p className="small" data-testid="smbd-delivered">{delivered.length ? delivered.slice(-8).map((d) => `${d.to}: ${d.bytes} bytes in ${d.fragments} fragment(s), RFC1002 length ${d.rfc1002Length}`).join(' · ') : 'no upper-layer message delivered yet'}</p>
      </div>
    </div>
  );
}

export function IoView({ r }: { r: IoT }) {
  const st = r.stats;
  return (
    <div className="card" data-testid="smbd-io">
      <div className="card-head"><strong>SMB2 {r.io.op} · {r.io.channel}</strong><span className={r.io.verified ? 'badge' : 'badge on'}>{r.io.verified ? 'data verified' : 'NOT verified'}</span></div>
      <div className="card-body small mono">
        <p>buffer descriptor V1: offset {r.io.descriptor.offset}, token 0x{r.io.descriptor.token.toString(16)}, length {r.io.descriptor.length}</p>
        <p>server {r.io.serverOp} against the token: {r.io.serverStatus}; response by {r.io.responseOpcode}; client key invalidated {r.io.invalidatedBy === 'remote' ? 'by the response (IBV_WC_WITH_INV)' : 'by its own IBV_WR_LOCAL_INV'}: {r.io.clientMrState}</p>
        <p data-testid="smbd-policy">server buffers ({st.policy}): {st.ios} I/O, {st.serverRegistrations} registration(s), {st.serverInvalidations} invalidation(s), {st.serverKeys} key(s), {st.serverPinnedBytes >> 20} MiB pinned; client: {st.clientRegistrations} fast registrations, {st.clientInvalidations} LOCAL_INV</p>
      </div>
    </div>
  );
}

type MeasureT = z.infer<typeof MeasureResult>;

export function MeasureView({ m }: { m: MeasureT }) {
  const r = m.registration, c = m.crossing;
  const row = (name: string, st: MeasureT['registration']['pool'], mibps: number, us: number) => (
    <tr key={name}><th scope="row">{name}</th><td className="num">{st.ios}</td><td className="num">{st.serverRegistrations}</td><td className="num">{st.serverInvalidations}</td>
      <td className="num">{st.serverKeys}</td><td className="num">{st.serverPinnedBytes >> 20}</td><td className="num">{mibps}</td><td className="num">{(us / 1000).toFixed(1)}</td></tr>
  );
  return (
    <div className="card" data-testid="smbd-measure">
      <div className="card-head"><strong>Server buffers: pool vs per-I/O registration (1 MiB, same run)</strong><span className="badge">throughput ratio {r.ratio}</span></div>
      <div className="card-body">
        <table className="table mono small">
          <thead><tr><th>policy</th><th className="num">I/Os</th><th className="num">registrations</th><th className="num">invalidations</th><th className="num">keys</th><th className="num">pinned MiB</th><th className="num">MiB/s</th><th className="num">ms per I/O</th></tr></thead>
          <tbody>{row('pool (64 x 1 MiB, once)', r.pool, r.poolMiBps, r.poolLatencyUs)}{row('per-I/O fast registration', r.perIo, r.perIoMiBps, r.perIoLatencyUs)}</tbody>
        </table>
        <p className="small mono" data-testid="smbd-crossings">
          {c.events} completions: one per crossing {c.single.crossings} crossings in {(c.single.ns / 1e6).toFixed(1)} ms; {c.batched.perCrossing} per crossing {c.batched.crossings} crossings in {(c.batched.ns / 1e6).toFixed(1)} ms; time ratio {c.ratio} ({(c.nsPerCrossing / 1000).toFixed(1)} µs per crossing)
        </p>
        <p className="small muted">Wall-clock figures of this machine, measured now in sessions of their own; the counts are the policies' difference.</p>
      </div>
    </div>
  );
}

const PROFILES = ['spec', 'ksmbd', 'last-credit-bug'] as const;

/** The lab's tab: start two peers, then drive them; every reply redraws the board. */
export function SmbdLabPanel() {
  const run = useConsole((s) => s.run);   // typed by the command's result schema (ResultOf<N>)
  const [client, setClient] = useState<(typeof PROFILES)[number]>('spec');
  const [server, setServer] = useState<(typeof PROFILES)[number]>('spec');
  const [credits, setCredits] = useState<'linux' | 'lab'>('linux');
  const [example, setExample] = useState(false);
  const [bytes, setBytes] = useState(4000);
  const [negotiation, setNegotiation] = useState<NegotiationT | null>(null);
  const [board, setBoard] = useState<BoardT | null>(null);
  const [notes, setNotes] = useState<{ side: 'client' | 'server'; note: Note }[]>([]);
  const [delivered, setDelivered] = useState<BoardT['delivered']>([]);
  const [io, setIo] = useState<IoT | null>(null);
  const [measured, setMeasured] = useState<MeasureT | null>(null);
  const measure = async () => setMeasured(await run('lab.smbd.measure', 'lab.smbd.measure', { rounds: 2, events: 1024 }));

  const take = (b: BoardT | null, reset = false) => {
    if (!b) return;
    setBoard(b);
    const add = [...b.notes.client.map((note) => ({ side: 'client' as const, note })), ...b.notes.server.map((note) => ({ side: 'server' as const, note }))];
    setNotes((n) => [...(reset ? [] : n), ...add].slice(-400));
    setDelivered((d) => [...(reset ? [] : d), ...b.delivered].slice(-100));
  };
  const start = async () => {
    // the MS-SMBD 4.1 example's request: 10 credits, 1 KiB sends and receives, 128 KiB reassembly
    const request = example ? { creditsRequested: 10, preferredSendSize: 1024, maxReceiveSize: 1024, maxFragmentedSize: 131072 } : {};
    const r = await run('lab.smbd.start', 'lab.smbd.start', { client, server, credits, request });
    if (r) { setNegotiation(r.negotiation); take(r.board, true); setIo(null); }
  };
  const act = async (reply: Promise<BoardT | null>) => take(await reply);
  const doIo = async (op: 'READ' | 'WRITE', channel: 'RDMA_V1' | 'RDMA_V1_INVALIDATE', policy: 'pool' | 'per-io') => {
    const r = await run('lab.smbd.io', 'lab.smbd.io', { op, channel, policy });
    if (r) { setIo(r); take(r.board); }
  };
  const on = board !== null;

  return (
    <div className="panel-body stack" data-testid="lab-smbd-tab">
      <div className="card"><div className="card-body">
        <div className="form">
          <label className="field"><span className="field-label">client profile</span>
            <select value={client} onChange={(e) => setClient(e.target.value as typeof client)} data-testid="smbd-client-profile">{PROFILES.map((p) => <option key={p}>{p}</option>)}</select></label>
          <label className="field"><span className="field-label">server profile</span>
            <select value={server} onChange={(e) => setServer(e.target.value as typeof server)} data-testid="smbd-server-profile">{PROFILES.map((p) => <option key={p}>{p}</option>)}</select></label>
          <label className="field"><span className="field-label">credits</span>
            <select value={credits} onChange={(e) => setCredits(e.target.value as typeof credits)} data-testid="smbd-credits">
              <option value="linux">255 (ksmbd / cifs)</option><option value="lab">8, lazy reposting (deadlock setting)</option></select></label>
          <label className="field"><span className="field-label">client request</span>
            <select value={example ? 'example' : 'own'} onChange={(e) => setExample(e.target.value === 'example')} data-testid="smbd-request">
              <option value="own">its own sizes</option><option value="example">MS-SMBD 4.1 example (128 KiB)</option></select></label>
          <button type="button" onClick={() => void start()} data-testid="smbd-start">Start and negotiate</button>
        </div>
        <div className="form">
          <label className="field"><span className="field-label">message bytes</span>
            <input type="number" min={0} max={1048576} value={bytes} onChange={(e) => setBytes(Number(e.target.value))} data-testid="smbd-bytes" /></label>
          <button type="button" disabled={!on} onClick={() => void act(run('lab.smbd.send', 'lab.smbd.send', { from: 'client', bytes }))} data-testid="smbd-send">Client sends</button>
          <button type="button" disabled={!on} onClick={() => void act(run('lab.smbd.burst', 'lab.smbd.burst', { seed: 1, perSide: 24, run: false }))} data-testid="smbd-burst">Burst (seed 1, 24 each way)</button>
          <button type="button" disabled={!on} onClick={() => void act(run('lab.smbd.step', 'lab.smbd.step', { count: 10 }))} data-testid="smbd-step">10 engine steps</button>
          <button type="button" disabled={!on} onClick={() => void act(run('lab.smbd.step', 'lab.smbd.step', { count: 5000 }))} data-testid="smbd-run">Run on</button>
          <button type="button" disabled={!on} onClick={() => void act(run('lab.smbd.advance', 'lab.smbd.advance', { seconds: 120 }))} data-testid="smbd-idle">Idle 120 s</button>
          <button type="button" disabled={!on} onClick={() => void act(run('lab.smbd.advance', 'lab.smbd.advance', { seconds: 120, answer: false }))} data-testid="smbd-hang">Server hangs, 120 s</button>
          <button type="button" disabled={!on} onClick={() => void act(run('lab.smbd.advance', 'lab.smbd.advance', { seconds: 5, answer: false }))} data-testid="smbd-wait5">5 s more</button>
        </div>
        <div className="form">
          <button type="button" disabled={!on} onClick={() => void doIo('READ', 'RDMA_V1_INVALIDATE', 'pool')} data-testid="smbd-read-inv">READ, RDMA_V1_INVALIDATE, pool</button>
          <button type="button" disabled={!on} onClick={() => void doIo('WRITE', 'RDMA_V1', 'pool')} data-testid="smbd-write-v1">WRITE, RDMA_V1, pool</button>
          <button type="button" disabled={!on} onClick={() => void doIo('READ', 'RDMA_V1_INVALIDATE', 'per-io')} data-testid="smbd-read-perio">READ, per-I/O registration</button>
          <button type="button" onClick={() => void measure()} data-testid="smbd-measure-run">Compare buffer policies and event crossings</button>
        </div>
        {['lab.smbd.start', 'lab.smbd.send', 'lab.smbd.burst', 'lab.smbd.step', 'lab.smbd.advance', 'lab.smbd.io', 'lab.smbd.measure'].map((f) => <ErrorMessage key={f} form={f} />)}
        <p className="small muted">Two SMB Direct peers on two devices of this session; every message is a real SEND between their QPs (Queues and Wire panels). Idle time is skipped in virtual time: the keepalive timers fire as if it had passed.</p>
      </div></div>
      {board ? <CreditBoard board={board} /> : null}
      {negotiation ? <NegotiationView n={negotiation} /> : null}
      {board ? <FragmentView notes={notes} delivered={delivered} /> : null}
      {io ? <IoView r={io} /> : null}
      {measured ? <MeasureView m={measured} /> : null}
    </div>
  );
}

const panel: PanelDef = {
  id: 'lab-smbd', title: 'Lab 5: SMB Direct', order: 87, component: SmbdLabPanel,
  summary: 'lab 5: two SMB Direct peers — negotiation rules, the credit board, fragments, keepalive, SMB2 READ/WRITE over RDMA',
};
export default panel;
