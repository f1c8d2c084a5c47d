// Post send: every work-request opcode the device takes, with the fields of struct ibv_send_wr that opcode uses
// (store/wr.ts WR_FIELDS): SGEs, remote address + rkey, immediate data, invalidate rkey, atomic operands, the
// bind_mw fields (window, MR, range, access, new rkey: type 2A/2B windows are bound through the send queue), the
// kernel's REG_MR (MR, key byte, access), and a UD destination (AH, remote QPN, Q_Key). The device checks what is
// posted (ibv_post_send's rules) and its refusal is shown next to the form.
import { SendFlag, WrOpcode, type SendWr } from '../../../../app/protocol/index.ts';
import { useConsole, useModel } from '../../store/context.tsx';
import { commandProblem } from '../../store/validate.ts';
import { hasField, incRkey, UD_OPCODES } from '../../store/wr.ts';
import type { KeyEntry } from '../../store/models.ts';
import { fmtAddr, fmtHex } from '../../format.ts';
import { useForm } from '../../components/form.ts';
import { ErrorMessage, Field, Pending, parseNum } from '../../components/ui.tsx';
import { QpOptions, defaultQp, useLiveObjects, useNames } from './common.tsx';

const BIND_ACCESS = ['IBV_ACCESS_REMOTE_READ', 'IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_ATOMIC', 'IBV_ACCESS_ZERO_BASED'] as const;
const REG_ACCESS = ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_READ', 'IBV_ACCESS_REMOTE_ATOMIC', 'IBV_ACCESS_MW_BIND', 'IBV_ACCESS_ZERO_BASED'] as const;
const short = (a: string) => a.replace('IBV_ACCESS_', '').replace('IBV_SEND_', '');

function Flags({ names, value, onChange, testid }: { names: readonly string[]; value: readonly string[]; onChange: (v: string[]) => void; testid: string }) {
  return (
    <span className="checks" data-testid={testid}>
      {names.map((n) => (
        <label key={n}><input type="checkbox" checked={value.includes(n)} data-flag={n}
          onChange={(e) => onChange(e.target.checked ? [...value, n] : value.filter((x) => x !== n))} /> {short(n)}</label>
      ))}
    </span>
  );
}

const keyLabel = (k: KeyEntry, pdDev: (pd: number) => string) =>
  `${k.type} ${k.handle}${k.type === 'MW' ? ` (${k.kind})` : ''} on ${pdDev(k.pd)} rkey ${fmtHex(k.rkey, 8)} · ${k.state}`;

export function PostSendForm() {
  const { qps } = useLiveObjects();
  useConsole((s) => s.versions.keys);
  const model = useModel();
  const post = useConsole((s) => s.postSend);
  const ahs = useConsole((s) => s.ahs);
  const autorun = useConsole((s) => s.autorun);
  const { pdDev, dev } = useNames();
  const f = useForm('post.send');
  const keys = model.keys.rows(false);
  const mrs = keys.filter((k) => k.type === 'MR' && k.length > 0);
  const [qp, setQp] = f.text('qp', '');
  const [opcode, setOpcode] = f.text('opcode', 'IBV_WR_RDMA_WRITE');
  const q = qps.find((x) => x.handle === Number(qp)) ?? defaultQp(qps);
  const has = (x: Parameters<typeof hasField>[1]) => hasField(opcode, x);
  const atomic = has('atomic');
  // local SGE: an MR on this QP's PD unless chosen
  const local = mrs.find((m) => m.handle === Number(f.get('lmr', ''))) ?? mrs.find((m) => !q || m.pd === q.pd) ?? mrs[0];
  const [loff, setLoff] = f.text('loff', '0');
  const [len, setLen] = f.text('len', atomic ? '8' : '16');
  // remote key: an MR or MW with an rkey, by default one on the peer QP's PD (never silently this QP's own MR)
  const peer = q?.peer ? model.queues.qps.get(q.peer) : undefined;
  const remotes = keys.filter((k) => k.rkey && (k.type === 'MW' || k.length > 0));
  const remote = remotes.find((m) => `${m.type}:${m.handle}` === f.get('rkeyOf', ''))
    ?? remotes.find((m) => peer && m.pd === peer.pd) ?? remotes.find((m) => q && m.pd !== q.pd) ?? remotes[0];
  const [raddr, setRaddr] = f.text('raddr', '');
  const [rkey, setRkey] = f.text('rkey', '');
  const ra = raddr === '' ? remote?.addr ?? 0 : parseNum(raddr);
  const rk = rkey === '' ? remote?.rkey ?? 0 : parseNum(rkey);
  const [imm, setImm] = f.text('imm', '0x12345678');
  const [inv, setInv] = f.text('inv', '');
  const [cmp, setCmp] = f.text('compareAdd', '1');
  const [swap, setSwap] = f.text('swap', '0');
  const [wrId, setWrId] = f.text('wrId', '1');
  const flags = f.get<readonly string[]>('sendFlags', ['IBV_SEND_SIGNALED']);
  // bind_mw
  const mws = keys.filter((k) => k.type === 'MW');
  const mw = mws.find((k) => k.handle === Number(f.get('mw', ''))) ?? mws.find((k) => k.kind !== 'type 1') ?? mws[0];
  const bindMrs = mrs.filter((m) => !mw || m.pd === mw.pd);
  const bmr = bindMrs.find((m) => m.handle === Number(f.get('bindMr', ''))) ?? bindMrs[0];
  const [boff, setBoff] = f.text('bindOff', '0');
  const [blen, setBlen] = f.text('bindLen', '64');
  const bindAccess = f.get<readonly string[]>('bindAccess', ['IBV_ACCESS_REMOTE_READ', 'IBV_ACCESS_REMOTE_WRITE']);
  const [brkey, setBrkey] = f.text('bindRkey', '');
  const newRkey = brkey === '' ? (mw ? incRkey(mw.rkey) : 0) : parseNum(brkey);
  // REG_MR: a fast-registration MR (mr.alloc), its new key byte and access
  const frs = keys.filter((k) => k.type === 'MR' && k.kind !== 'user');
  const rm = frs.find((x) => x.handle === Number(f.get('regMr', ''))) ?? frs[frs.length - 1];
  const [regKey, setRegKey] = f.text('regKey', '');
  const regKeyByte = regKey === '' ? (rm ? incRkey(rm.lkey) & 0xff : 0) : parseNum(regKey);
  const regAccess = f.get<readonly string[]>('regAccess', ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_READ']);
  // invalidate: LOCAL_INV defaults to the newest fast-reg MR's key, SEND_WITH_INV to the remote window's rkey
  const invDefault = opcode === 'IBV_WR_LOCAL_INV' ? (rm?.lkey ?? 0) : remote?.rkey ?? 0;
  const invKey = inv === '' ? invDefault : parseNum(inv);
  // UD destination
  const ud = q?.type === 'IBV_QPT_UD' && UD_OPCODES.includes(opcode as SendWr['opcode']);
  const ahsOfPd = ahs.filter((a) => !q || a.pd === q.pd);
  const ah = ahsOfPd.find((a) => a.handle === Number(f.get('ah', ''))) ?? ahsOfPd[ahsOfPd.length - 1];
  const [rqpn, setRqpn] = f.text('remoteQpn', '');
  const [rqkey, setRqkey] = f.text('remoteQkey', '0x11111111');

  const lo = parseNum(loff); const ln = parseNum(len);
  const wr: Record<string, unknown> = { wrId: parseNum(wrId), opcode, sendFlags: [...flags], sgList: [] };
  if (has('sg') && local && ln > 0) wr.sgList = [{ addr: local.addr + (Number.isNaN(lo) ? 0 : lo), length: ln, lkey: local.lkey }];
  if (has('remote')) { wr.remoteAddr = ra; wr.rkey = rk; }
  if (has('imm')) wr.immData = parseNum(imm);
  if (has('invalidate')) wr.invalidateRkey = invKey;
  if (has('atomic')) wr.compareAdd = parseNum(cmp);
  if (has('swap')) wr.swap = parseNum(swap);
  if (has('bind') && mw) {
    const bo = parseNum(boff);
    Object.assign(wr, { mw: mw.handle, bindRkey: newRkey, bindLength: parseNum(blen), bindAccess: [...bindAccess] });
    if (bmr) Object.assign(wr, { bindMr: bmr.handle, bindAddr: bmr.addr + (Number.isNaN(bo) ? 0 : bo) });
  }
  if (has('reg') && rm) Object.assign(wr, { regMr: rm.handle, regKey: regKeyByte, regAccess: [...regAccess] });
  if (ud) Object.assign(wr, { ...(ah ? { ah: ah.handle } : {}), remoteQpn: parseNum(rqpn), remoteQkey: parseNum(rqkey) });
  const numeric = Object.values(wr).filter((v) => typeof v === 'number');
  const problem = !q ? 'create a QP first'
    : has('bind') && !mw ? 'allocate a memory window first (Memory & keys)'
    : has('reg') && !rm ? 'allocate a fast-registration MR first (Memory & keys: mr.alloc)'
    : ud && !ah ? 'create an address handle for this QP\'s PD first (below)'
    : numeric.some(Number.isNaN) || [lo, ln].some(Number.isNaN) ? 'numbers: decimal or 0x-hex'
    : commandProblem({ cmd: 'post.send', args: { qp: q.handle, wrs: [wr] } });
  // what was posted last (kept with the form's choices, without counting as a change of the user's)
  const setField = useConsole((s) => s.setFormField);
  const real = useConsole((s) => s.backend);
  const [posted, setPosted] = [f.get('posted', ''), (v: string) => setField('post.send', 'posted', v)];
  const submit = async () => {
    f.submitted();
    if (problem || !q) return;
    if (await post(q.handle, wr as unknown as SendWr)) {
      f.done();
      setPosted(real ? `posted ${opcode} on qp ${q.handle} to ${real.device}: it runs in real time; poll the CQ for its completion`
        : `posted ${opcode} on qp ${q.handle}: the WQE waits in the send queue until the engine runs (${autorun ? 'autorun is on' : 'Step or Run to idle in the run bar'})`);
    }
  };
  return (
    <form className="form" aria-label="post send" data-testid="post-send-form" onSubmit={(e) => { e.preventDefault(); void submit(); }}>
      <Field label="QP"><select data-testid="send-qp" value={q?.handle ?? ''} onChange={(e) => setQp(e.target.value)}><QpOptions qps={qps} /></select></Field>
      <Field label="Opcode"><select data-testid="send-opcode" value={opcode} onChange={(e) => setOpcode(e.target.value)}>
        {WrOpcode.names.map((n) => <option key={n} value={n}>{n}</option>)}</select></Field>
      {has('sg') && <>
        <Field label="Local SGE: MR (lkey)"><select data-testid="send-local-mr" value={local?.handle ?? ''} onChange={(e) => f.set('lmr', e.target.value)}>
          {mrs.map((m) => <option key={m.handle} value={m.handle}>MR {m.handle} on {pdDev(m.pd)} lkey {fmtHex(m.lkey, 8)} @ {fmtAddr(m.addr)}</option>)}</select></Field>
        <Field label="offset"><input data-testid="send-local-offset" value={loff} onChange={(e) => setLoff(e.target.value)} size={5} /></Field>
        <Field label="length"><input data-testid="send-length" value={len} onChange={(e) => setLen(e.target.value)} size={5} /></Field>
      </>}
      {has('remote') && <>
        <Field label="Remote key (fills addr/rkey)"><select data-testid="send-remote-mr" value={remote ? `${remote.type}:${remote.handle}` : ''} onChange={(e) => { f.set('rkeyOf', e.target.value); f.set('raddr', undefined); f.set('rkey', undefined); }}>
          {remotes.map((m) => <option key={`${m.type}:${m.handle}`} value={`${m.type}:${m.handle}`}>{keyLabel(m, pdDev)}</option>)}</select></Field>
        <Field label="remote addr"><input data-testid="send-remote-addr" className="mono" value={raddr === '' ? fmtAddr(ra) : raddr} onChange={(e) => setRaddr(e.target.value)} size={16} /></Field>
        <Field label="rkey"><input data-testid="send-rkey" className="mono" value={rkey === '' ? fmtHex(rk, 8) : rkey} onChange={(e) => setRkey(e.target.value)} size={10} /></Field>
      </>}
      {has('imm') && <Field label="imm_data"><input data-testid="send-imm" className="mono" value={imm} onChange={(e) => setImm(e.target.value)} size={10} /></Field>}
      {has('invalidate') && <Field label="invalidate_rkey" hint={opcode === 'IBV_WR_LOCAL_INV' ? 'the local key to invalidate' : 'the remote key the responder invalidates'}>
        <input data-testid="send-invalidate-rkey" className="mono" value={inv === '' ? fmtHex(invKey, 8) : inv} onChange={(e) => setInv(e.target.value)} size={10} /></Field>}
      {has('atomic') && <Field label={has('swap') ? 'compare' : 'add'}><input data-testid="send-compare-add" className="mono" value={cmp} onChange={(e) => setCmp(e.target.value)} size={10} /></Field>}
      {has('swap') && <Field label="swap"><input data-testid="send-swap" className="mono" value={swap} onChange={(e) => setSwap(e.target.value)} size={10} /></Field>}
      {has('bind') && <>
        <Field label="MW"><select data-testid="send-bind-mw" value={mw?.handle ?? ''} onChange={(e) => { f.set('mw', e.target.value); f.set('bindRkey', undefined); }}>
          {mws.map((m) => <option key={m.handle} value={m.handle}>MW {m.handle} ({m.kind}) rkey {fmtHex(m.rkey, 8)} · {m.state}</option>)}</select></Field>
        <Field label="MR (bind_info.mr)"><select data-testid="send-bind-mr" value={bmr?.handle ?? ''} onChange={(e) => f.set('bindMr', e.target.value)}>
          {bindMrs.map((m) => <option key={m.handle} value={m.handle}>MR {m.handle} @ {fmtAddr(m.addr)} · {m.length} B</option>)}</select></Field>
        <Field label="offset"><input data-testid="send-bind-offset" value={boff} onChange={(e) => setBoff(e.target.value)} size={5} /></Field>
        <Field label="length"><input data-testid="send-bind-length" value={blen} onChange={(e) => setBlen(e.target.value)} size={5} /></Field>
        <Field label="mw_access_flags"><Flags names={BIND_ACCESS} value={bindAccess} onChange={(v) => f.set('bindAccess', v)} testid="send-bind-access" /></Field>
        <Field label="new rkey" hint="ibv_inc_rkey(mw->rkey) unless typed"><input data-testid="send-bind-rkey" className="mono" value={brkey === '' ? fmtHex(newRkey, 8) : brkey} onChange={(e) => setBrkey(e.target.value)} size={10} /></Field>
      </>}
      {has('reg') && <>
        <Field label="MR to register"><select data-testid="send-reg-mr" value={rm?.handle ?? ''} onChange={(e) => { f.set('regMr', e.target.value); f.set('regKey', undefined); }}>
          {frs.map((m) => <option key={m.handle} value={m.handle}>MR {m.handle} ({m.kind}, {m.state}) key {fmtHex(m.lkey, 8)}</option>)}</select></Field>
        <Field label="key byte" hint="the low 8 bits of the new lkey/rkey"><input data-testid="send-reg-key" className="mono" value={regKey === '' ? fmtHex(regKeyByte, 2) : regKey} onChange={(e) => setRegKey(e.target.value)} size={5} /></Field>
        <Field label="access"><Flags names={REG_ACCESS} value={regAccess} onChange={(v) => f.set('regAccess', v)} testid="send-reg-access" /></Field>
      </>}
      {ud && <>
        <Field label="AH"><select data-testid="send-ah" value={ah?.handle ?? ''} onChange={(e) => f.set('ah', e.target.value)}>
          {ahsOfPd.map((a) => <option key={a.handle} value={a.handle}>ah {a.handle} → {dev(a.destDevice)}</option>)}</select></Field>
        <Field label="remote QPN"><input data-testid="send-remote-qpn" className="mono" value={rqpn} onChange={(e) => setRqpn(e.target.value)} size={8} /></Field>
        <Field label="remote Q_Key"><input data-testid="send-remote-qkey" className="mono" value={rqkey} onChange={(e) => setRqkey(e.target.value)} size={10} /></Field>
      </>}
      <Field label="wr_id"><input data-testid="send-wrid" value={wrId} onChange={(e) => setWrId(e.target.value)} size={4} /></Field>
      <Field label="send_flags"><Flags names={SendFlag.names.filter((n) => n !== 'IBV_SEND_INLINE')} value={flags} onChange={(v) => f.set('sendFlags', v)} testid="send-flags" /></Field>
      <button type="submit" data-testid="post-send" disabled={!!problem}>Post send</button><Pending form="post.send" />
      {posted && !f.touched ? <p className="hint" role="status" data-testid="post-send-note">{posted}</p> : null}
      <ErrorMessage form="post.send" local={problem} touched={f.touched} />
    </form>
  );
}

/** ah.create: an address handle to a device of this session, for UD sends */
export function CreateAhForm() {
  const pds = useConsole((s) => s.pds).filter((p) => !p.destroyed);
  const devices = useConsole((s) => s.devices);
  const create = useConsole((s) => s.createAh);
  const f = useForm('ah.create');
  const [pd, setPd] = f.text('pd', ''); const [dest, setDest] = f.text('dest', ''); const [sgid, setSgid] = f.text('sgid', '1');
  const pdH = Number(pd || pds[0]?.handle || 0);
  const d = Number(dest || devices[devices.length - 1]?.handle || 0);
  const problem = !pds.length ? 'allocate a PD first' : commandProblem({ cmd: 'ah.create', args: { pd: pdH, destDevice: d, sgidIndex: parseNum(sgid) } });
  return (
    <form className="form" aria-label="create address handle" onSubmit={(e) => { e.preventDefault(); f.submitted(); if (!problem) void create(pdH, d, parseNum(sgid)).then((h) => h && f.done()); }}>
      <Field label="PD"><select data-testid="ah-pd" value={pdH || ''} onChange={(e) => setPd(e.target.value)}>
        {pds.map((p) => <option key={p.handle} value={p.handle}>pd {p.handle}</option>)}</select></Field>
      <Field label="destination device"><select data-testid="ah-dest" value={d || ''} onChange={(e) => setDest(e.target.value)}>
        {devices.map((x) => <option key={x.handle} value={x.handle}>{x.name}</option>)}</select></Field>
      <Field label="sgid index"><input value={sgid} onChange={(e) => setSgid(e.target.value)} size={3} /></Field>
      <button type="submit" data-testid="create-ah" disabled={!!problem}>Create AH</button><Pending form="ah.create" />
      <ErrorMessage form="ah.create" local={problem} touched={f.touched} />
    </form>
  );
}

