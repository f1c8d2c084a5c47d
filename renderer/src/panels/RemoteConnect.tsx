// Connect a QP to a QP on another host (qp.connect with remote), the way rc_pingpong does it: each side shows
// its "local address" (QPN, PSN, GID) and types in the other side's. Only this side's QP moves to RTS.
import { useState } from 'react';
import { useConsole } from '../store/context.tsx';
import { commandProblem } from '../store/validate.ts';
import { localGid } from '../store/store.ts';
import { hex } from '../store/spec.ts';
import type { QpView } from '../store/models.ts';
import { ErrorMessage, Field, Pending, parseNum } from '../components/ui.tsx';

const hex6 = (n: number) => `0x${n.toString(16).padStart(6, '0')}`;

/** rc_pingpong's line: "local address:  LID 0x0000, QPN 0x000011, PSN 0x000000, GID ::ffff:127.0.0.1" */
function LocalAddress({ q, psn }: { q: QpView; psn: number }) {
  const d = useConsole((s) => s.devices.find((x) => x.handle === q.device));
  const real = useConsole((s) => s.backend) !== null;   // a real device is on its own network: its GID table
  const g = localGid(d?.net ?? (real && d ? { gids: d.gids.filter((x) => /v2/i.test(x.type)) } : null));
  if (!d?.net && !real) return <p className="notice small" data-testid="local-address-offline">Device {d?.name ?? q.device} is not on the network: put it on the network in the Devices panel first.</p>;
  return (
    <p className="local-address small" data-testid="local-address" data-qpn={q.qpn} data-psn={psn} data-gid={g?.gid ?? ''}>
      local address: LID 0x0000, QPN <span className="mono" data-testid="local-qpn">{hex6(q.qpn)}</span>, PSN{' '}
      <span className="mono" data-testid="local-psn">{hex6(psn)}</span>, GID <span className="mono" data-testid="local-gid">{g?.gid ?? '?'}</span>
      {g?.ip ? <span className="muted"> ({g.ip}, GID index {g.index})</span> : null}
    </p>
  );
}

export function RemoteConnectForm({ qps, dev }: { qps: QpView[]; dev: (h: number) => string }) {
  const connect = useConsole((s) => s.connectRemote);
  const rc = qps.filter((q) => q.type === 'IBV_QPT_RC' || q.type === 'IBV_QPT_UC');
  const [qp, setQp] = useState('');
  const [gid, setGid] = useState('');
  const [qpn, setQpn] = useState('');
  const [psn, setPsn] = useState('');
  const [myPsn, setMyPsn] = useState('0');
  const [sgid, setSgid] = useState('');
  const q = rc.find((x) => x.handle === Number(qp)) ?? rc[0];
  const nums = { qpn: parseNum(qpn), psn: parseNum(psn), my: parseNum(myPsn), sgid: sgid.trim() === '' ? undefined : parseNum(sgid) };
  const remote = { dgid: gid.trim(), qpn: nums.qpn, psn: nums.psn, ...(nums.sgid !== undefined ? { sgidIndex: nums.sgid } : {}) };
  const problem = !q ? 'create an RC QP first'
    : gid.trim() === '' ? 'remote GID: type the GID (or IPv4 address) the other side shows'
    : Number.isNaN(nums.qpn) ? 'remote QPN: decimal or 0x-hex' : Number.isNaN(nums.psn) ? 'remote PSN: decimal or 0x-hex'
    : Number.isNaN(nums.my) ? 'local PSN: decimal or 0x-hex' : nums.sgid !== undefined && Number.isNaN(nums.sgid) ? 'sgid index: a number'
    : commandProblem({ cmd: 'qp.connect', args: { qp: q.handle, remote, sqPsn: nums.my } });
  return (
    <form className="form" aria-label="connect a QP to a remote host" data-testid="remote-connect-form"
      onSubmit={(e) => { e.preventDefault(); if (!problem && q) void connect(q.handle, remote, nums.my); }}>
      <Field label="QP"><select data-testid="remote-qp" value={q?.handle ?? ''} onChange={(e) => setQp(e.target.value)}>
        {rc.map((x) => <option key={x.handle} value={x.handle}>qp {x.handle} (QPN {x.qpn}) on {dev(x.device)}</option>)}</select></Field>
      <Field label="local PSN" hint="give it to the other side"><input data-testid="local-psn-input" className="mono" value={myPsn} size={8} onChange={(e) => setMyPsn(e.target.value)} /></Field>
      {q && <LocalAddress q={q} psn={Number.isNaN(nums.my) ? 0 : nums.my} />}
      <Field label="remote GID or IPv4"><input data-testid="remote-gid" className="mono" value={gid} size={40} placeholder="::ffff:10.0.0.2 or 10.0.0.2" onChange={(e) => setGid(e.target.value)} aria-invalid={!!problem && /GID/.test(problem)} /></Field>
      <Field label="remote QPN"><input data-testid="remote-qpn" className="mono" value={qpn} size={9} placeholder="0x000011" onChange={(e) => setQpn(e.target.value)} /></Field>
      <Field label="remote PSN"><input data-testid="remote-psn" className="mono" value={psn} size={9} placeholder="0x000000" onChange={(e) => setPsn(e.target.value)} /></Field>
      <Field label="sgid index" hint="empty = a local GID of the same family"><input data-testid="remote-sgid" value={sgid} size={3} onChange={(e) => setSgid(e.target.value)} /></Field>
      <button type="submit" data-testid="connect-remote" disabled={!!problem}>Connect (RESET→INIT→RTR→RTS this side)</button><Pending form="qp.connect:remote" />
      {q && q.destQpn ? <p className="muted small" data-testid="remote-connected">qp {q.handle} sends to QPN {hex(q.destQpn, 6)}</p> : null}
      <ErrorMessage form="qp.connect:remote" local={problem} touched={[gid, qpn, psn].some((x) => x.trim() !== '')} />
    </form>
  );
}
