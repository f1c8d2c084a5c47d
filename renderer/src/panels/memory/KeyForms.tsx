// The MR registration form (access flags by rdma-core name, validated as you type), memory windows, fast registration.
import { useState } from 'react';
import { Access } from '../../../../app/protocol/index.ts';
import { useConsole, useModel } from '../../store/context.tsx';
import { commandProblem } from '../../store/validate.ts';
import { hex, hexAddr } from '../../store/spec.ts';
import { ErrorMessage, Field, Pending, parseNum } from '../../components/ui.tsx';

export function RegMrForm() {
  const pds = useConsole((s) => s.pds);
  const buffers = useConsole((s) => s.buffers);
  const devices = useConsole((s) => s.devices);
  const sel = useConsole((s) => s.selectedBuffer);
  const reg = useConsole((s) => s.regMr);
  const [pd, setPd] = useState('');
  const [buf, setBuf] = useState('');
  const [offset, setOffset] = useState('0');
  const [length, setLength] = useState('');
  const [access, setAccess] = useState<string[]>(['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_READ']);
  const livePds = pds.filter((p) => !p.destroyed);
  const liveBufs = buffers.filter((b) => !b.destroyed);
  const pdH = Number(pd || livePds[0]?.handle || 0);
  const b = liveBufs.find((x) => x.handle === Number(buf || sel || liveBufs[0]?.handle));
  const off = parseNum(offset);
  const len = length === '' ? (b ? b.length - (Number.isNaN(off) ? 0 : off) : 0) : parseNum(length);
  const args = { pd: pdH, addr: (b?.addr ?? 0) + (Number.isNaN(off) ? 0 : off), length: len, access };
  const problem = !livePds.length ? 'allocate a PD first (Devices panel, "Alloc PD")' : !b ? 'allocate a buffer first'
    : Number.isNaN(off) || Number.isNaN(len) ? 'offset/length: numbers (decimal or 0x-hex)' : commandProblem({ cmd: 'mr.reg', args });
  const devName = (d: number) => devices.find((x) => x.handle === d)?.name ?? `dev ${d}`;
  const toggle = (n: string) => setAccess((a) => (a.includes(n) ? a.filter((x) => x !== n) : [...a, n]));
  return (
    <form className="form" aria-label="register MR" data-testid="reg-mr-form" onSubmit={(e) => { e.preventDefault(); if (!problem) void reg(args); }}>
      <Field label="PD">
        <select data-testid="mr-pd" value={pdH || ''} onChange={(e) => setPd(e.target.value)}>
          {livePds.map((p) => <option key={p.handle} value={p.handle}>pd {p.handle} ({devName(p.device)})</option>)}
        </select>
      </Field>
      <Field label="Buffer">
        <select data-testid="mr-buffer" value={b?.handle ?? ''} onChange={(e) => setBuf(e.target.value)}>
          {liveBufs.map((x) => <option key={x.handle} value={x.handle}>buf {x.handle} @ {hexAddr(x.addr)}</option>)}
        </select>
      </Field>
      <Field label="Offset"><input data-testid="mr-offset" value={offset} onChange={(e) => setOffset(e.target.value)} size={6} /></Field>
      <Field label="Length" hint="empty = to the end"><input data-testid="mr-length" value={length} onChange={(e) => setLength(e.target.value)} size={8} /></Field>
      <fieldset className="checks" aria-label="access flags">
        {Access.names.map((n) => (
          <label key={n}><input type="checkbox" data-testid={`access-${n}`} checked={access.includes(n)} onChange={() => toggle(n)} />{n}</label>
        ))}
      </fieldset>
      <button type="submit" data-testid="reg-mr" disabled={!!problem}>Register MR (mr.reg)</button>
      <Pending form="mr.reg" />
      <ErrorMessage form="mr.reg" local={problem} />
    </form>
  );
}

export function MwForms() {
  const pds = useConsole((s) => s.pds).filter((p) => !p.destroyed);
  const devices = useConsole((s) => s.devices);
  const alloc = useConsole((s) => s.allocMw);
  const bind = useConsole((s) => s.bindMw);
  useConsole((s) => s.versions.keys);
  useConsole((s) => s.versions.queues);
  const model = useModel();
  const [pd, setPd] = useState('');
  const [type, setType] = useState<'IBV_MW_TYPE_1' | 'IBV_MW_TYPE_2'>('IBV_MW_TYPE_1');
  const [mw, setMw] = useState(''); const [mr, setMr] = useState(''); const [qp, setQp] = useState('');
  const [off, setOff] = useState('0'); const [len, setLen] = useState('64');
  const [access, setAccess] = useState<string[]>(['IBV_ACCESS_REMOTE_READ']);
  const pdH = Number(pd || pds[0]?.handle || 0);
  const devName = (d: number) => devices.find((x) => x.handle === d)?.name ?? `dev ${d}`;
  const mws = model.keys.rows(false).filter((k) => k.type === 'MW');
  const mrs = model.keys.rows(false).filter((k) => k.type === 'MR' && k.length > 0);
  const qps = [...model.queues.qps.values()].filter((q) => !q.destroyed);
  // ibv_bind_mw binds type 1 windows; a type 2 window is bound by a BIND_MW work request (Queues → Post send)
  const type1 = mws.filter((x) => x.kind === 'type 1');
  const type2 = mws.filter((x) => x.kind !== 'type 1');
  const setForm = useConsole((s) => s.setFormField);
  const setPanel = useConsole((s) => s.setPanel);
  const bindByWr = (h: number) => { setForm('post.send', 'opcode', 'IBV_WR_BIND_MW'); setForm('post.send', 'mw', String(h)); setPanel('queues'); };
  const w = type1.find((x) => x.handle === Number(mw)) ?? type1[0];
  const m = mrs.find((x) => x.handle === Number(mr)) ?? mrs.find((x) => w && x.pd === w.pd) ?? mrs[0];
  const q = qps.find((x) => x.handle === Number(qp)) ?? qps.find((x) => m && x.pd === m.pd) ?? qps[0];
  const o = parseNum(off); const l = parseNum(len);
  const bindArgs = { qp: q?.handle ?? 0, mw: w?.handle ?? 0, mr: m?.handle ?? 0, addr: (m?.addr ?? 0) + (Number.isNaN(o) ? 0 : o), length: l, access };
  const allocProblem = !pds.length ? 'allocate a PD first' : commandProblem({ cmd: 'mw.alloc', args: { pd: pdH, type } });
  const bindProblem = !w ? 'allocate a type 1 memory window first' : !m ? 'register an MR first' : !q ? 'create a QP first (binds are posted on a QP)'
    : Number.isNaN(o) || Number.isNaN(l) ? 'offset/length: numbers' : commandProblem({ cmd: 'mw.bind', args: bindArgs });
  // ibv_mw_type has one IBV_MW_TYPE_2: whether it is the IBA's 2A or 2B is the device's (device_cap_flags)
  const pdDev = devices.find((x) => x.handle === pds.find((p) => p.handle === pdH)?.device);
  const flavour = pdDev?.capNames.includes('IBV_DEVICE_MEM_WINDOW_TYPE_2B') ? '2B' : pdDev?.capNames.includes('IBV_DEVICE_MEM_WINDOW_TYPE_2A') ? '2A' : null;
  const toggle = (n: string) => setAccess((a) => (a.includes(n) ? a.filter((x) => x !== n) : [...a, n]));
  return (
    <div className="stack">
      <form className="form" aria-label="allocate memory window" onSubmit={(e) => { e.preventDefault(); if (!allocProblem) void alloc(pdH, type); }}>
        <Field label="PD"><select data-testid="mw-pd" value={pdH || ''} onChange={(e) => setPd(e.target.value)}>
          {pds.map((p) => <option key={p.handle} value={p.handle}>pd {p.handle} ({devName(p.device)})</option>)}</select></Field>
        <Field label="Type"><select data-testid="mw-type" value={type} onChange={(e) => setType(e.target.value as typeof type)}>
          <option value="IBV_MW_TYPE_1">IBV_MW_TYPE_1</option><option value="IBV_MW_TYPE_2">IBV_MW_TYPE_2</option></select></Field>
        <button type="submit" data-testid="alloc-mw" disabled={!!allocProblem}>Allocate MW (mw.alloc)</button>
        {pdDev && type === 'IBV_MW_TYPE_2' && <p className="muted small" data-testid="mw-type2-flavour">{flavour === '2B'
          ? `${pdDev.name} gives type 2B windows (IBV_DEVICE_MEM_WINDOW_TYPE_2B): associated with the binding QP and the window's PD; the QP that binds it must be of that PD (C10-72).`
          : flavour === '2A' ? `${pdDev.name} gives type 2A windows (IBV_DEVICE_MEM_WINDOW_TYPE_2A, modelled profile): associated with the binding QP's number only; a QP of another PD may bind it.`
          : `${pdDev.name} advertises no type 2 windows.`}</p>}
        <ErrorMessage form="mw.alloc" local={allocProblem} touched={false} />
      </form>
      <form className="form" aria-label="bind memory window" onSubmit={(e) => { e.preventDefault(); if (!bindProblem) void bind(bindArgs); }}>
        <Field label="MW (type 1)"><select value={w?.handle ?? ''} onChange={(e) => setMw(e.target.value)}>
          {type1.map((x) => <option key={x.handle} value={x.handle}>MW {x.handle} ({x.kind}) rkey {hex(x.rkey, 8)}</option>)}</select></Field>
        <Field label="MR"><select value={m?.handle ?? ''} onChange={(e) => setMr(e.target.value)}>
          {mrs.map((x) => <option key={x.handle} value={x.handle}>MR {x.handle} @ {hexAddr(x.addr)}</option>)}</select></Field>
        <Field label="QP"><select value={q?.handle ?? ''} onChange={(e) => setQp(e.target.value)}>
          {qps.map((x) => <option key={x.handle} value={x.handle}>qp {x.handle}</option>)}</select></Field>
        <Field label="Offset"><input value={off} onChange={(e) => setOff(e.target.value)} size={5} /></Field>
        <Field label="Length"><input value={len} onChange={(e) => setLen(e.target.value)} size={6} /></Field>
        <fieldset className="checks" aria-label="window access flags">
          {['IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_READ', 'IBV_ACCESS_REMOTE_ATOMIC'].map((n) => (
            <label key={n}><input type="checkbox" checked={access.includes(n)} onChange={() => toggle(n)} />{n}</label>))}
        </fieldset>
        <button type="submit" disabled={!!bindProblem}>Bind MW (mw.bind)</button>
        <ErrorMessage form="mw.bind" local={bindProblem} touched={false} />
      </form>
      <p className="muted small">A type 1 bind (ibv_bind_mw) is posted on the QP's send queue: run the engine, then the new rkey appears in the key table from the device's event.</p>
      {type2.length > 0 && (
        <p className="small" data-testid="mw-type2-hint">Type 2 windows are bound with an IBV_WR_BIND_MW work request on a QP of their PD (the QP owns the binding, C10-72):{' '}
          {type2.map((x) => <button key={x.handle} type="button" className="link" data-testid="bind-type2" onClick={() => bindByWr(x.handle)}>bind MW {x.handle} in Post send</button>)}</p>
      )}
    </div>
  );
}

/** fast-registration MRs: mr.alloc (no memory, key FREE), then mr.map_sg with an SG list; IB_WR_REG_MR (Queues,
 *  Post send) makes the key valid. The address map draws each SG segment. */
export function FastRegForms() {
  const pds = useConsole((s) => s.pds).filter((p) => !p.destroyed);
  const buffers = useConsole((s) => s.buffers).filter((b) => !b.destroyed);
  const devices = useConsole((s) => s.devices);
  const alloc = useConsole((s) => s.allocMr);
  const map = useConsole((s) => s.mapMrSg);
  useConsole((s) => s.versions.keys);
  const model = useModel();
  const [pd, setPd] = useState(''); const [maxSg, setMaxSg] = useState('4'); const [indirect, setIndirect] = useState(false);
  const [mr, setMr] = useState(''); const [buf, setBuf] = useState(''); const [off, setOff] = useState('0'); const [len, setLen] = useState('4096');
  const [pageSize, setPageSize] = useState('4096');
  const [sg, setSg] = useState<{ addr: number; length: number; lkey: number }[]>([]);
  const pdH = Number(pd || pds[0]?.handle || 0);
  const devName = (d: number) => devices.find((x) => x.handle === d)?.name ?? `dev ${d}`;
  const fr = model.keys.rows(false).filter((k) => k.type === 'MR' && k.kind !== 'user');
  const m = fr.find((x) => x.handle === Number(mr)) ?? fr[fr.length - 1];
  const b = buffers.find((x) => x.handle === Number(buf)) ?? buffers[0];
  const o = parseNum(off); const l = parseNum(len); const ps = parseNum(pageSize);
  const allocProblem = !pds.length ? 'allocate a PD first' : commandProblem({ cmd: 'mr.alloc', args: { pd: pdH, maxNumSg: parseNum(maxSg), indirect } });
  const segProblem = !b ? 'allocate a buffer first' : Number.isNaN(o) || Number.isNaN(l) ? 'offset/length: numbers' : o + l > b.length ? 'the segment runs past the end of the buffer' : null;
  const mapProblem = !m ? 'allocate a fast-registration MR first' : !sg.length ? 'add at least one segment' : Number.isNaN(ps) ? 'page size: a number'
    : commandProblem({ cmd: 'mr.map_sg', args: { mr: m.handle, sgList: sg, pageSize: ps } });
  return (
    <div className="stack">
      <form className="form" aria-label="allocate fast-registration MR" onSubmit={(e) => { e.preventDefault(); if (!allocProblem) void alloc(pdH, parseNum(maxSg), indirect); }}>
        <Field label="PD"><select data-testid="fr-pd" value={pdH || ''} onChange={(e) => setPd(e.target.value)}>
          {pds.map((p) => <option key={p.handle} value={p.handle}>pd {p.handle} ({devName(p.device)})</option>)}</select></Field>
        <Field label="max_num_sg"><input value={maxSg} onChange={(e) => setMaxSg(e.target.value)} size={4} /></Field>
        <label className="small"><input type="checkbox" checked={indirect} onChange={(e) => setIndirect(e.target.checked)} /> indirect (byte-aligned SG, if the profile has it)</label>
        <button type="submit" data-testid="alloc-fr-mr" disabled={!!allocProblem}>Allocate MR (mr.alloc)</button>
        <ErrorMessage form="mr.alloc" local={allocProblem} touched={false} />
      </form>
      <form className="form" aria-label="map SG list" onSubmit={(e) => { e.preventDefault(); if (!mapProblem && m) void map(m.handle, sg, ps).then((ok) => { if (ok) setSg([]); }); }}>
        <Field label="MR"><select data-testid="fr-mr" value={m?.handle ?? ''} onChange={(e) => setMr(e.target.value)}>
          {fr.map((x) => <option key={x.handle} value={x.handle}>MR {x.handle} ({x.kind}, {x.state})</option>)}</select></Field>
        <Field label="Buffer"><select data-testid="fr-buffer" value={b?.handle ?? ''} onChange={(e) => setBuf(e.target.value)}>
          {buffers.map((x) => <option key={x.handle} value={x.handle}>buf {x.handle}</option>)}</select></Field>
        <Field label="Offset"><input value={off} onChange={(e) => setOff(e.target.value)} size={5} /></Field>
        <Field label="Length"><input value={len} onChange={(e) => setLen(e.target.value)} size={5} /></Field>
        <button type="button" data-testid="add-segment" disabled={!!segProblem} onClick={() => b && setSg((x) => [...x, { addr: b.addr + o, length: l, lkey: 0 }])}>Add segment</button>
        <Field label="Page size"><input value={pageSize} onChange={(e) => setPageSize(e.target.value)} size={6} /></Field>
        <button type="submit" data-testid="map-sg" disabled={!!mapProblem}>Map (mr.map_sg)</button>
        {sg.length > 0 && <span className="mono small">{sg.map((x) => `${hexAddr(x.addr)}+${x.length}`).join(', ')} <button type="button" className="link" onClick={() => setSg([])}>clear</button></span>}
        {/* an error only while segments are being built: after a successful map the empty list is a hint, not an error */}
        <ErrorMessage form="mr.map_sg" local={segProblem ?? mapProblem} touched={sg.length > 0} />
      </form>
      <p className="muted small">Then post IB_WR_REG_MR (Queues → Post send) to give the MR a key byte and access: the key table follows the device's events.</p>
    </div>
  );
}
