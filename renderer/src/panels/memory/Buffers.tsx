// Buffers: allocate, list, write; the hex view (bytes changed by MemWrite events highlighted) and the heat strip.
import { fmtBytes, rawBytes } from '../../format.ts';
import { useMemo, useState, type ReactElement } from 'react';
import { useConsole, useModel } from '../../store/context.tsx';
import { commandProblem } from '../../store/validate.ts';
import { hex, hexAddr } from '../../store/spec.ts';
import { ErrorMessage, Field, Pending, parseNum } from '../../components/ui.tsx';
import type { BufferView } from '../../store/store.ts';

export function AllocBufferForm() {
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

export function BufferList() {
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

export function WriteForm({ buffer }: { buffer: BufferView }) {
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
export function HexView({ buffer }: { buffer: BufferView }) {
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
export function HeatView({ buffer }: { buffer: BufferView }) {
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
