// Memory and keys: buffers with a hex view (bytes changed by MemWrite events highlighted) and a heat strip,
// the MR registration form (access flags by rdma-core name, validated as you type), the key table and the
// address-space map. Everything drawn comes from replies (memory.read, mr.reg) and events.
import { ReregForm } from './ReregForm.tsx';
import { fmtBytes, fmtKey, rawBytes } from '../format.ts';
import { useMemo, useState, type ReactElement } from 'react';
import { Access } from '../../../app/protocol/index.ts';
import { useConsole, useModel } from '../store/context.tsx';
import { accessNames, keyByte, keyIndex, type KeyEntry } from '../store/models.ts';
import { commandProblem } from '../store/validate.ts';
import { hex, hexAddr } from '../store/spec.ts';
import { ErrorMessage, Field, Pending, Section, parseNum } from '../components/ui.tsx';
import type { BufferView } from '../store/store.ts';

function AllocBufferForm() {
  const alloc = useConsole((s) => s.allocBuffer);
  const [len, setLen] = useState('4096');
  const n = parseNum(len);
  const problem = Number.isNaN(n) ? 'length: a number (decimal or 0x-hex)' : commandProblem({ cmd: 'buffer.alloc', args: { length: n } });
  return (
    <form className="form" aria-label="allocate buffer" onSubmit={(e) => { e.preventDefault(); if (!problem) void alloc(n); }}>
      <Field label="Length (bytes)"><input data-testid="buffer-length" value={len} onChange={(e) => setLen(e.target.value)} aria-invalid={!!problem} size={10} /></Field>
      <button type="submit" data-testid="alloc-buffer" disabled={!!problem}>Allocate buffer</button>
      <Pending form="buffer.alloc" />
      <ErrorMessage form="buffer.alloc" local={problem} />
    </form>
  );
}

function BufferList() {
  const buffers = useConsole((s) => s.buffers);
  const selected = useConsole((s) => s.selectedBuffer);
  const select = useConsole((s) => s.selectBuffer);
  const free = useConsole((s) => s.freeBuffer);
  if (!buffers.length) return <p className="muted">No buffers yet.</p>;
  return (
    <table className="table compact" aria-label="buffers">
      <thead><tr><th>Buffer</th><th>Address</th><th>Length</th><th /></tr></thead>
      <tbody>
        {buffers.map((b) => (
          <tr key={b.handle} data-testid="buffer-row" data-buffer={b.handle} className={`${b.handle === selected ? 'selected' : ''} ${b.destroyed ? 'destroyed' : ''}`}
            tabIndex={0} onClick={() => select(b.handle)} onKeyDown={(e) => { if (e.key === 'Enter') select(b.handle); }}>
            <td>buf {b.handle}</td><td className="mono">{hexAddr(b.addr)}</td><td className="mono" title={rawBytes(b.length)}>{fmtBytes(b.length)}</td>
            <td>{!b.destroyed && <button type="button" className="danger" onClick={(e) => { e.stopPropagation(); void free(b.handle); }}>Free</button>}
              <ErrorMessage form={`buffer.free:${b.handle}`} /></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function WriteForm({ buffer }: { buffer: BufferView }) {
  const write = useConsole((s) => s.writeMemory);
  const [offset, setOffset] = useState('0');
  const [data, setData] = useState('deadbeef');
  const off = parseNum(offset);
  const clean = data.replace(/\s+/g, '');
  const problem = Number.isNaN(off) ? 'offset: a number' : off + clean.length / 2 > buffer.length ? 'the bytes would run past the end of the buffer'
    : commandProblem({ cmd: 'memory.write', args: { addr: buffer.addr + off, data: clean } });
  return (
    <form className="form" aria-label="write bytes" onSubmit={(e) => { e.preventDefault(); if (!problem) void write('memory.write', buffer.addr + off, clean); }}>
      <Field label="Offset"><input data-testid="write-offset" value={offset} onChange={(e) => setOffset(e.target.value)} size={6} /></Field>
      <Field label="Bytes (hex)"><input data-testid="write-data" className="mono" value={data} onChange={(e) => setData(e.target.value)} size={32} aria-invalid={!!problem} /></Field>
      <button type="submit" data-testid="write-bytes" disabled={!!problem}>Write (memory.write)</button>
      <ErrorMessage form="memory.write" local={problem} />
    </form>
  );
}

/** hex dump of the bytes the last memory.read returned; bytes touched by MemWrite events are highlighted */
function HexView({ buffer }: { buffer: BufferView }) {
  const snap = useConsole((s) => s.hex[buffer.handle]);
  useConsole((s) => s.versions.memory);
  const model = useModel();
  const read = useConsole((s) => s.readBuffer);
  const [showAll, setShowAll] = useState(false);
  const len = snap ? snap.bytes.length : 0;
  const last = useMemo(() => model.marks.lastWrite(buffer.handle, snap ? snap.addr : buffer.addr, len), [model, buffer, len, snap]);
  const offset = useConsole((s) => s.hexOffset[buffer.handle] ?? 0);
  const setOffset = useConsole((s) => s.setHexOffset);
  const writes = model.marks.writes.get(buffer.handle) ?? [];
  const newest = writes.length ? writes[writes.length - 1].seq : -1;
  if (!snap) return <p className="muted">Not read yet. <button type="button" onClick={() => void read(buffer.handle)}>Read</button></p>;
  const rows = Math.ceil(len / 16);
  // show rows with content or changes first; collapse long runs of untouched zero rows
  const lines: ReactElement[] = [];
  let skipped = 0;
  for (let r = 0; r < rows; r++) {
    const o = r * 16;
    let interesting = r < 4 || showAll;
    for (let i = o; i < Math.min(len, o + 16) && !interesting; i++) if (snap.bytes[i] !== 0 || last[i] > 0) interesting = true;
    if (!interesting) { skipped++; continue; }
    if (skipped) { lines.push(<div key={`s${r}`} className="hex-skip muted">… {skipped} row{skipped > 1 ? 's' : ''} of zero bytes …</div>); skipped = 0; }
    const cells: ReactElement[] = []; let ascii = '';
    for (let i = o; i < o + 16; i++) {
      if (i >= len) { cells.push(<span key={i} className="hb" />); continue; }
      const v = snap.bytes[i];
      const cls = last[i] === 0 ? 'hb' : last[i] === newest ? 'hb changed newest' : 'hb changed';
      cells.push(<span key={i} className={cls} data-off={i}>{v.toString(16).padStart(2, '0')}</span>);
      ascii += v >= 32 && v < 127 ? String.fromCharCode(v) : '.';
    }
    lines.push(<div key={r} className="hex-line"><span className="hex-addr">{hexAddr(snap.addr + o)}</span><span className="hex-bytes">{cells}</span><span className="hex-ascii">{ascii}</span></div>);
  }
  if (skipped) lines.push(<div key="tail" className="hex-skip muted">… {skipped} row{skipped > 1 ? 's' : ''} of zero bytes …</div>);
  return (
    <div>
      <div className="hex" data-testid="hex-view" data-buffer={buffer.handle} aria-label={`hex view of buffer ${buffer.handle}`}>{lines}</div>
      <div className="form">
        <button type="button" onClick={() => void read(buffer.handle)}>Re-read</button>
        {buffer.length > 4096 && <>
          <button type="button" aria-label="previous 4 KiB" disabled={offset === 0} onClick={() => setOffset(buffer.handle, Math.max(0, offset - 4096))}>◀ 4 KiB</button>
          <span className="mono small">bytes {offset}..{Math.min(buffer.length, offset + 4096) - 1}</span>
          <button type="button" aria-label="next 4 KiB" disabled={offset + 4096 >= buffer.length} onClick={() => setOffset(buffer.handle, offset + 4096)}>4 KiB ▶</button>
        </>}
        <label className="small"><input type="checkbox" checked={showAll} onChange={(e) => setShowAll(e.target.checked)} /> show zero rows</label>
        <span className="muted small">{len < buffer.length ? `${len} of ${buffer.length} bytes` : `${len} bytes`}; highlighted = written by the device (MemWrite), brightest = latest write</span>
      </div>
      <ErrorMessage form={`memory.read:${buffer.handle}`} />
    </div>
  );
}

/** compact heat strip: one cell per 16 bytes, darker = more MemWrite events touched it */
function HeatView({ buffer }: { buffer: BufferView }) {
  useConsole((s) => s.versions.memory);
  const model = useModel();
  const len = Math.min(buffer.length, 64 * 1024);
  const per = Math.max(16, Math.ceil(len / 512));
  const heat = model.marks.heat(buffer.handle, buffer.addr, len);
  const cells: number[] = [];
  for (let o = 0; o < len; o += per) { let m = 0; for (let i = o; i < Math.min(len, o + per); i++) m = Math.max(m, heat[i]); cells.push(m); }
  const max = Math.max(1, ...cells);
  return (
    <div className="heat" data-testid="heat-view" aria-label={`write heat of buffer ${buffer.handle}, ${per} bytes per cell`}>
      {cells.map((c, i) => <span key={i} className="heat-cell" title={`${hexAddr(buffer.addr + i * per)}: ${c} write${c === 1 ? '' : 's'}`}
        style={{ opacity: c ? 0.25 + 0.75 * (c / max) : 0.06 }} />)}
      <span className="muted small">{per} bytes per cell</span>
    </div>
  );
}

function RegMrForm() {
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

function MwForms() {
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
function FastRegForms() {
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

function KeyTableView() {
  useConsole((s) => s.versions.keys);
  const model = useModel();
  const dereg = useConsole((s) => s.deregMr);
  const deallocMw = useConsole((s) => s.deallocMw);
  const devices = useConsole((s) => s.devices);
  const devName = (d: number) => devices.find((x) => x.handle === d)?.name ?? (d ? `dev ${d}` : '—');
  const rows = model.keys.rows();
  if (!rows.length) return <p className="muted">No keys yet: register an MR.</p>;
  return (
    <table className="table compact" data-testid="key-table" aria-label="key table">
      <thead><tr><th>device</th><th>index</th><th>key byte</th><th>lkey</th><th>rkey</th><th>state</th><th>type</th><th>PD</th><th>range</th><th>access</th><th>bound QP</th><th /></tr></thead>
      <tbody>
        {rows.map((k) => {
          const key = k.rkey || k.lkey;
          return (
            <tr key={`${k.type}${k.handle}`} data-testid="key-row" data-rkey={k.rkey} data-lkey={k.lkey} data-type={k.type} data-handle={k.handle} data-kind={k.kind} data-state={k.state} className={k.destroyed ? 'destroyed' : ''}>
              <td>{devName(k.device)}</td><td className="mono">{hex(keyIndex(key))}</td><td className="mono">{hex(keyByte(key), 2)}</td>
              <td className="mono" title={fmtKey(k.lkey)}>{hex(k.lkey, 8)}</td><td className="mono" data-testid="key-rkey" title={fmtKey(k.rkey)}>{hex(k.rkey, 8)}</td>
              <td className={`state-${k.state}`}>{k.state}</td><td>{k.type} {k.handle} <span className="muted">{k.kind}</span></td>
              <td>{k.pd || '—'}</td>
              <td className="mono">{k.length ? `${hexAddr(k.addr)} +${k.length}` : '—'}</td>
              <td className="mono small">{accessNames(k.access).join(' ') || '—'}</td>
              <td>{k.boundQp || '—'}</td>
              <td>{k.type === 'MR' && !k.destroyed && <button type="button" className="danger" onClick={() => void dereg(k.handle)}>Dereg</button>}
                {k.type === 'MW' && !k.destroyed && <button type="button" className="danger" data-testid="dealloc-mw" onClick={() => void deallocMw(k.handle)}>Dealloc</button>}
                <ErrorMessage form={`mr.dereg:${k.handle}`} /><ErrorMessage form={`mw.dealloc:${k.handle}`} /></td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22'];

/** which key covers which bytes: buffers laid out left to right (gaps between them collapsed), one lane per key */
function AddressMap() {
  useConsole((s) => s.versions.keys);
  const buffers = useConsole((s) => s.buffers).filter((b) => !b.destroyed);
  const model = useModel();
  const keys = model.keys.rows(false);
  if (!buffers.length) return <p className="muted">No buffers.</p>;
  const G = 330; const W = 1200; const gap = 16; const laneH = 16; const top = 30;
  const total = buffers.reduce((s, b) => s + b.length, 0);
  const usable = W - G - gap * (buffers.length - 1);
  const layout: { b: BufferView; x: number; w: number }[] = [];
  let x = G;
  for (const b of buffers) { const w = Math.max(40, (usable * b.length) / total); layout.push({ b, x, w }); x += w + gap; }
  const scaleX = 1;
  const toX = (addr: number): number | null => {
    for (const l of layout) if (addr >= l.b.addr && addr <= l.b.addr + l.b.length) return (l.x + ((addr - l.b.addr) / l.b.length) * l.w) * scaleX;
    return null;
  };
  const segsOf = (k: KeyEntry) => (k.sg.length ? k.sg : k.length ? [{ addr: k.addr, length: k.length }] : []);
  const H = top + Math.max(1, keys.length) * (laneH + 4) + 8;
  return (
    <svg className="addr-map" data-testid="address-map" viewBox={`0 0 ${W} ${H}`} width="100%" style={{ maxWidth: W }} role="img" aria-label="address-space map: which key covers which bytes">
      {layout.map(({ b, x: bx, w }) => (
        <g key={b.handle}>
          <rect x={bx * scaleX} y={4} width={w * scaleX} height={18} className="map-buf" />
          <text x={bx * scaleX + 4} y={17} className="map-label">buf {b.handle} {hexAddr(b.addr)} ({b.length} B)</text>
        </g>
      ))}
      {keys.map((k, i) => {
        const y = top + i * (laneH + 4);
        const color = PALETTE[i % PALETTE.length];
        return (
          <g key={`${k.type}${k.handle}`}>
            {segsOf(k).map((s, j) => {
              const x0 = toX(s.addr); const x1 = toX(s.addr + s.length);
              if (x0 === null || x1 === null) return null;
              return <rect key={j} x={x0} y={y} width={Math.max(2, x1 - x0)} height={laneH} fill={color} opacity={k.sg.length ? 0.6 : 0.85} rx={2}>
                <title>{`${k.type} ${k.handle} rkey ${hex(k.rkey, 8)}${k.sg.length ? ` SG segment ${j}` : ''}: ${hexAddr(s.addr)} +${s.length}`}</title></rect>;
            })}
            <text x={4} y={y + laneH - 4} className="map-key" fill={color}>{k.type} {k.handle} · rkey {hex(k.rkey, 8)}{k.sg.length ? ` · ${k.sg.length} SG segments` : ''}</text>
          </g>
        );
      })}
    </svg>
  );
}

function UnknownObjects() {
  const unknown = useConsole((s) => s.unknownObjects);
  const buffers = useConsole((s) => s.buffers);
  useConsole((s) => s.versions.keys);
  const model = useModel();
  const left = unknown.filter((o) => (o.kind === 'buffer' ? !buffers.some((b) => b.handle === o.handle) : !model.keys.byHandle.has(o.handle)));
  if (!left.length) return null;
  return (
    <p className="notice" role="status" data-testid="unknown-objects">
      This page connected after {left.length} object{left.length > 1 ? 's were' : ' was'} created ({left.map((o) => `${o.kind} ${o.handle}`).join(', ')}).
      The host does not replay past events to a new page, so their addresses, keys and bytes are not known here: they are
      not drawn rather than guessed. Objects created from now on appear as usual.
    </p>
  );
}

export function MemoryPanel() {
  const buffers = useConsole((s) => s.buffers);
  const sel = useConsole((s) => s.selectedBuffer);
  const b = buffers.find((x) => x.handle === sel && !x.destroyed);
  const real = useConsole((s) => s.backend);
  return (
    <div className="stack">
      <UnknownObjects />
      <div className="row">
        <Section title="Buffers" testid="buffers-section"><BufferList /><AllocBufferForm /></Section>
        <Section title="Register memory region" testid="mr-section"><RegMrForm /><ReregForm /></Section>
      </div>
      {b && (
        <Section title={`Buffer ${b.handle} — ${hexAddr(b.addr)}, ${b.length} bytes`} testid="buffer-detail">
          <HeatView buffer={b} />
          <HexView buffer={b} />
          <WriteForm buffer={b} />
        </Section>
      )}
      <Section title="Keys (lkey / rkey = index << 8 | key byte)" testid="keys-section">
        {real && <p className="muted small" data-testid="keys-real-note">The keys {real.device} returned for this session&apos;s MRs and windows. Its key table itself (other entries, free slots, key states) is not visible on a real device.</p>}
        <KeyTableView />
      </Section>
      <Section title="Memory windows"><MwForms /></Section>
      <Section title="Fast-registration MRs (SG lists)">{real
        ? <p className="muted small" data-testid="fastreg-real-note">Not available on a real device from user space: ib_alloc_mr, ib_map_mr_sg and IB_WR_REG_MR are kernel verbs with no libibverbs form.</p>
        : <FastRegForms />}</Section>
      <Section title="Address-space map"><AddressMap /></Section>
    </div>
  );
}
