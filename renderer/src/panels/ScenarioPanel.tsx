// The Scenario tab: the recording of this session (every command the backend host executed, as named steps
// with references, from app/host/recorder.ts) with rename / note / "expect this" / save, and the replay of a
// loaded scenario file, step by step on the real device through the host, stopping at the first failed
// expectation with the runner's own "expected ..., got ..." sentence.
import { useEffect, useMemo, useRef, useState, useSyncExternalStore, type ChangeEvent } from 'react';
import { useConsole, useConsoleStore, useModel } from '../store/context.tsx';
import { scenarioStoreFor, watchScenario, type OutcomeView, type ReplayStep, type ScenarioState, type StepView } from '../store/scenario.ts';
import { ErrorMessage, Field, Pending, Section, parseNum } from '../components/ui.tsx';
import { VirtualRows } from '../components/VirtualRows.tsx';

function useScenarioStore() {
  const c = useConsoleStore();
  return useMemo(() => scenarioStoreFor(c), [c]);
}
function useScenario<T>(sel: (s: ScenarioState) => T): T {
  const s = useScenarioStore();
  return useSyncExternalStore(s.subscribe, () => sel(s.getState()));
}

const short = (v: unknown, max = 140) => { const t = JSON.stringify(v) ?? ''; return t.length > max ? `${t.slice(0, max - 1)}…` : t; };
const expectKinds = (st: StepView) => Object.keys(st.expect ?? {});

function outcomeText(o: OutcomeView | null | undefined): string {
  if (!o) return '';
  if (!o.ok) return `${o.error?.code}: ${o.error?.message}`;
  if (o.wcs) return o.wcs.length ? o.wcs.map((w) => `${w.status}${w.opcode ? ` ${w.opcode}` : ''}`).join('; ') : 'no completion';
  return 'ok';
}

// ------------------------------------------------------------------ recording
function StepDetail({ index }: { index: number }) {
  const store = useScenarioStore();
  const st = useScenario((s) => s.recording?.steps[index]);
  const out = useScenario((s) => s.recording?.outcomes[index]);
  const [note, setNote] = useState(st?.note ?? '');
  useEffect(() => setNote(st?.note ?? ''), [index, st?.note]);
  if (!st) return null;
  const n = index + 1;
  const canExpect = !out?.ok || st.cmd === 'cq.poll' || st.cmd === 'cq.req_notify' || st.cmd === 'cq.get_event' || st.cmd === 'qp.modify';
  return (
    <div className="stack" data-testid="rec-step-detail" data-step={n}>
      <div className="mono small">step {n}: {st.cmd}{st.as ? ` → ${st.as}` : ''}</div>
      <pre className="mono small" data-testid="rec-step-json">{JSON.stringify(st, null, 1)}</pre>
      <div className="small" data-testid="rec-step-outcome">what the device did: {outcomeText(out) || '—'}</div>
      {out?.wcs?.map((w, k) => (
        <div key={k} className="form" data-testid="rec-wc">
          <span className="mono small">completion {k}: {w.status}{w.opcode ? ` ${w.opcode}` : ''}{w.byteLen !== undefined ? ` byte_len ${String(w.byteLen)}` : ''} wr_id {String(w.wrId)}</span>
          <button type="button" data-testid="expect-cqe" onClick={() => void store.getState().expect({ step: n, only: k })}>Expect this CQE</button>
        </div>
      ))}
      {out?.packet?.length ? (
        <div className="form" data-testid="rec-packets">
          <span className="mono small">packets sent during the step: {out.packet.map((p) => `${p.opcode}${p.syndrome ? ` ${p.syndrome}` : ''} ×${p.count}${p.from ? ` from ${p.from}` : ''}`).join('; ')}</span>
          <button type="button" data-testid="expect-packets" onClick={() => void store.getState().expect({ step: n, packets: true })}>Expect these packets</button>
        </div>
      ) : null}
      {out?.asyncEvent?.length ? (
        <div className="form" data-testid="rec-async">
          <span className="mono small">async events during the step: {out.asyncEvent.map((a) => `${a.type}${a.obj ? ` on ${a.obj}` : ''}`).join('; ')}</span>
          <button type="button" data-testid="expect-async" onClick={() => void store.getState().expect({ step: n, asyncEvents: true })}>Expect these async events</button>
        </div>
      ) : null}
      <div className="form">
        {canExpect && (
          <button type="button" data-testid="expect-outcome" onClick={() => void store.getState().expect({ step: n })}>
            {out?.ok === false ? 'Expect this error' : st.cmd === 'cq.poll' ? 'Expect exactly these completions' : 'Expect this result'}
          </button>
        )}
        <Pending form={`scenario.expect:${n}`} />
      </div>
      <ErrorMessage form={`scenario.expect:${n}`} />
      <form className="form" aria-label="step note" onSubmit={(e) => { e.preventDefault(); void store.getState().note(n, note); }}>
        <Field label="Step label (note)"><input data-testid="step-note" value={note} onChange={(e) => setNote(e.target.value)} size={40} maxLength={2000} /></Field>
        <button type="submit" data-testid="step-note-save">Save label</button>
        <button type="button" className="danger" data-testid="remove-step" onClick={() => void store.getState().remove(n)}
          title="drop this step from the recording (the device keeps what it did; a later step using its name makes saving say so)">Remove step {n}</button>
      </form>
      <ErrorMessage form={`scenario.note:${n}`} />
      <ErrorMessage form="scenario.remove" />
    </div>
  );
}

function MetaForm() {
  const store = useScenarioStore();
  const name = useScenario((s) => s.recording?.name ?? '');
  const description = useScenario((s) => s.recording?.description ?? '');
  const [n, setN] = useState(name);
  const [d, setD] = useState(description);
  useEffect(() => setN(name), [name]);
  useEffect(() => setD(description), [description]);
  const problem = n.trim() ? null : 'name: at least one character';
  return (
    <form className="form" aria-label="scenario name" data-testid="meta-form" onSubmit={(e) => { e.preventDefault(); if (!problem) void store.getState().meta(n.trim(), d); }}>
      <Field label="Scenario name"><input data-testid="scenario-name" value={n} onChange={(e) => setN(e.target.value)} size={28} maxLength={200} aria-invalid={!!problem} /></Field>
      <Field label="Description"><input data-testid="scenario-description" value={d} onChange={(e) => setD(e.target.value)} size={48} maxLength={20000} /></Field>
      <button type="submit" data-testid="scenario-meta-save" disabled={!!problem || (n.trim() === name && d === description)}>Set</button>
      <ErrorMessage form="scenario.meta" local={problem} />
    </form>
  );
}

function RenameForm() {
  const store = useScenarioStore();
  const rec = useScenario((s) => s.recording);
  const names = useMemo(() => [...(rec?.devices.map((d) => d.name) ?? []), ...(rec?.steps.map((s) => s.as).filter((x): x is string => !!x) ?? [])], [rec]);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const cur = names.includes(from) ? from : names[0] ?? '';
  const problem = !to ? null : /^[A-Za-z][A-Za-z0-9_]{0,31}$/.test(to) ? null : 'a name: a letter, then letters, digits or _ (at most 32)';
  return (
    <form className="form" aria-label="rename object" data-testid="rename-form"
      onSubmit={(e) => { e.preventDefault(); if (cur && to && !problem) void store.getState().rename(cur, to).then((ok) => { if (ok) setTo(''); }); }}>
      <Field label="Object">
        <select data-testid="rename-from" value={cur} onChange={(e) => setFrom(e.target.value)}>
          {names.map((n) => <option key={n} value={n}>{n}</option>)}
        </select>
      </Field>
      <Field label="New name"><input data-testid="rename-to" value={to} onChange={(e) => setTo(e.target.value)} size={14} aria-invalid={!!problem} /></Field>
      <button type="submit" data-testid="rename-submit" disabled={!cur || !to || !!problem}>Rename</button>
      <ErrorMessage form="scenario.rename" local={problem} />
    </form>
  );
}

function BytesForm() {
  const store = useScenarioStore();
  const buffers = useConsole((s) => s.buffers);
  const steps = useScenario((s) => s.recording?.steps.length ?? 0);
  const live = buffers.filter((b) => !b.destroyed);
  const [buf, setBuf] = useState<number | null>(null);
  const [offset, setOffset] = useState('0');
  const [length, setLength] = useState('16');
  const b = live.find((x) => x.handle === buf) ?? live[live.length - 1];
  const off = parseNum(offset), len = parseNum(length);
  const problem = !b ? null : Number.isNaN(off) || Number.isNaN(len) ? 'offset and length: numbers'
    : len < 1 || len > 4096 ? 'length: 1 to 4096 bytes' : off + len > b.length ? `the buffer has ${b.length} bytes` : !steps ? 'nothing recorded yet' : null;
  return (
    <form className="form" aria-label="expect these bytes" data-testid="expect-bytes-form"
      onSubmit={(e) => { e.preventDefault(); if (b && !problem) void store.getState().expect({ step: steps, bytes: { addr: b.addr + off, length: len } }); }}>
      <Field label="Buffer">
        <select data-testid="expect-bytes-buffer" value={b?.handle ?? ''} onChange={(e) => setBuf(Number(e.target.value))}>
          {live.map((x) => <option key={x.handle} value={x.handle}>buffer {x.handle} @0x{x.addr.toString(16)} ({x.length} B)</option>)}
        </select>
      </Field>
      <Field label="Offset"><input data-testid="expect-bytes-offset" value={offset} onChange={(e) => setOffset(e.target.value)} size={6} /></Field>
      <Field label="Length"><input data-testid="expect-bytes-length" value={length} onChange={(e) => setLength(e.target.value)} size={6} /></Field>
      <button type="submit" data-testid="expect-bytes" disabled={!b || !!problem}>Expect these bytes after step {steps || '—'}</button>
      <ErrorMessage form="scenario.expect" local={problem} />
    </form>
  );
}

function QpStateForm() {
  const store = useScenarioStore();
  useConsole((s) => s.versions.queues);
  const model = useModel();
  const devices = useConsole((s) => s.devices);
  const steps = useScenario((s) => s.recording?.steps.length ?? 0);
  const qps = [...model.queues.qps.values()].filter((q) => !q.destroyed);
  const [qp, setQp] = useState<number | null>(null);
  const q = qps.find((x) => x.handle === qp) ?? qps[0];
  const devName = (h: number) => devices.find((d) => d.handle === h)?.name ?? `device ${h}`;
  return (
    <form className="form" aria-label="expect this QP state" data-testid="expect-qp-form"
      onSubmit={(e) => { e.preventDefault(); if (q && steps) void store.getState().expect({ step: steps, qp: q.handle }); }}>
      <Field label="QP">
        <select data-testid="expect-qp" value={q?.handle ?? ''} onChange={(e) => setQp(Number(e.target.value))}>
          {qps.map((x) => <option key={x.handle} value={x.handle}>QP {x.handle} (qp_num {x.qpn}) on {devName(x.device)}</option>)}
        </select>
      </Field>
      <button type="submit" data-testid="expect-qp-state" disabled={!q || !steps}>Expect its state (queried now) after step {steps || '—'}</button>
      <ErrorMessage form="scenario.expect:qp" />
    </form>
  );
}

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url; a.download = `${name.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^_+|_+$/g, '') || 'scenario'}.json`;
  document.body.appendChild(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

function Recording() {
  const store = useScenarioStore();
  const rec = useScenario((s) => s.recording);
  const [sel, setSel] = useState<number | null>(null);
  const count = rec?.steps.length ?? 0;
  const selected = sel !== null && sel < count ? sel : count ? count - 1 : null;
  const save = async () => { const r = await store.getState().save(); if (r) download(r.name, r.json); };
  return (
    <Section title="Recording (this session)" testid="scenario-recording"
      actions={<><button type="button" data-testid="scenario-save" disabled={!count} onClick={() => void save()}>Save scenario (JSON)</button><Pending form="scenario.save" /></>}>
      <ErrorMessage form="scenario.save" />
      <ErrorMessage form="scenario.get" />
      {!rec ? <p className="muted">asking the backend host…</p> : (
        <div className="stack">
          <div className="small muted" data-testid="rec-summary" data-steps={count}>
            {count} step{count === 1 ? '' : 's'} · devices: {rec.devices.map((d) => `${d.name} (${d.profile})`).join(', ') || 'none'} · seed {rec.seed}
            {' '}· everything done in the console since the last session reset; reads (memory, QP queries) are not steps
          </div>
          <MetaForm />
          <RenameForm />
          <BytesForm />
          <QpStateForm />
          <VirtualRows count={count} rowHeight={24} height={Math.min(360, 24 * Math.max(count, 3) + 4)} follow={sel === null} selected={selected}
            onSelect={setSel} testid="rec-steps" label="recorded steps"
            render={(i) => {
              const st = rec.steps[i]!;
              const out = rec.outcomes[i];
              const ex = expectKinds(st);
              return (
                <span data-testid="rec-step" data-step={i + 1} data-cmd={st.cmd}>
                  {String(i + 1).padStart(3, ' ')} {st.cmd}{st.as ? ` → ${st.as}` : ''}{st.note ? ` “${st.note}”` : ''}
                  {ex.length ? <span className="badge on"> expect: {ex.join(', ')}</span> : null}
                  {out && !out.ok ? <span className="badge bad"> {out.error?.code}</span> : null}
                  <span className="muted"> {short(st.args)}</span>
                </span>
              );
            }} />
          {selected !== null && <StepDetail index={selected} />}
        </div>
      )}
    </Section>
  );
}

// ------------------------------------------------------------------ replay
function replayStatus(rp: NonNullable<ScenarioState['replay']>, playing: boolean): { state: string; text: string } {
  if (rp.failedStep !== undefined) return { state: 'failed', text: rp.failedStep === 0 ? `setup failed: ${rp.failure}` : `failed at step ${rp.failedStep}` };
  if (rp.done && rp.passed) return { state: 'passed', text: `passed: all ${rp.total} steps, every expectation held` };
  if (playing) return { state: 'playing', text: `playing: step ${rp.position + 1} of ${rp.total}` };
  return { state: rp.started ? 'paused' : 'loaded', text: rp.started ? `paused before step ${rp.position + 1} of ${rp.total}` : `loaded: ${rp.total} steps; the first step resets the session (seed ${rp.seed})` };
}

function ReplayRow({ i, st, rep, next }: { i: number; st: StepView; rep?: ReplayStep; next: boolean }) {
  const status = rep ? (rep.ok ? 'ok' : 'failed') : next ? 'next' : 'pending';
  const ex = expectKinds(st);
  return (
    <span data-testid="replay-row" data-step={i + 1} data-status={status}>
      {rep ? (rep.ok ? '✔' : '✖') : next ? '▶' : '·'} {String(i + 1).padStart(3, ' ')} {st.cmd}{st.as ? ` → ${st.as}` : ''}
      {ex.length ? <span className={`badge ${rep ? (rep.ok ? 'on' : 'bad') : ''}`}> expect: {ex.join(', ')}</span> : null}
      {rep && !rep.ok ? <span className="error-text"> {rep.failures.join('; ')}</span> : <span className="muted"> {st.note ?? short(st.args, 100)}</span>}
    </span>
  );
}

function ReplaySection() {
  const store = useScenarioStore();
  const rp = useScenario((s) => s.replay);
  const playing = useScenario((s) => s.playing);
  const busy = useConsole((s) => !!s.pending['scenario.replay']);
  const [to, setTo] = useState('');
  const [sel, setSel] = useState<number | null>(null);
  // keep the step about to run in view while stepping or playing through a long scenario
  const listBox = useRef<HTMLDivElement>(null);
  const position = rp?.position ?? 0;
  useEffect(() => {
    const el = listBox.current?.querySelector<HTMLElement>('[data-testid="replay-steps"]');
    if (!el) return;
    const top = position * 24;
    if (top < el.scrollTop || top + 24 > el.scrollTop + el.clientHeight) el.scrollTop = Math.max(0, top - el.clientHeight / 2);
  }, [position]);
  const onFile = async (e: ChangeEvent<HTMLInputElement>) => {
    const f = e.target.files?.[0];
    e.target.value = '';
    if (!f) return;
    setSel(null);
    await store.getState().load(await f.text(), f.name);
  };
  const n = parseNum(to);
  const toProblem = !to ? null : !rp ? null : Number.isNaN(n) || n < 1 || n > rp.total ? `a step from 1 to ${rp.total}` : null;
  const st = rp ? replayStatus(rp, playing) : null;
  const failedRep = rp?.reports.find((r) => !r.ok);
  return (
    <Section title="Replay a scenario" testid="scenario-replay">
      <div className="form">
        <Field label="Scenario file (.json)" hint="validated by the backend host; a malformed file is refused with the step and field">
          <input type="file" accept=".json,application/json" data-testid="scenario-file" onChange={(e) => void onFile(e)} />
        </Field>
        <Pending form="scenario.load" />
      </div>
      <ErrorMessage form="scenario.load" />
      {rp && st && (
        <div className="stack" data-testid="replay" data-file={rp.file}>
          <div><strong data-testid="replay-name">{rp.name}</strong> <span className="muted small">({rp.file}; devices {rp.devices.map((d) => `${d.name} (${d.profile})`).join(', ')}; seed {rp.seed})</span></div>
          {rp.description ? <p className="small muted">{rp.description}</p> : null}
          <div className="form" role="toolbar" aria-label="replay controls">
            <button type="button" data-testid="replay-step" disabled={rp.done || playing || busy} onClick={() => void store.getState().step()}>Step</button>
            {playing
              ? <button type="button" data-testid="replay-pause" onClick={() => store.getState().pause()}>❚❚ Pause</button>
              : <button type="button" data-testid="replay-play" disabled={rp.done || busy} onClick={() => void store.getState().play()}>▶ Play</button>}
            <form className="form" aria-label="run to a step" onSubmit={(e) => { e.preventDefault(); if (to && !toProblem) void store.getState().runTo(n); }}>
              <Field label="Run to step"><input data-testid="replay-run-to-n" value={to} onChange={(e) => setTo(e.target.value)} size={5} aria-invalid={!!toProblem} /></Field>
              <button type="submit" data-testid="replay-run-to" disabled={!to || !!toProblem || rp.done || playing || busy}>Run to</button>
            </form>
            <button type="button" data-testid="replay-all" disabled={rp.done || playing || busy} onClick={() => void store.getState().runTo(rp.total)}>Run to the end</button>
            <button type="button" data-testid="replay-close" disabled={playing} onClick={() => void store.getState().close()}>Close</button>
            <Pending form="scenario.replay" />
          </div>
          {toProblem ? <div className="error local" data-testid="validation-message">{toProblem}</div> : null}
          <div role="status" data-testid="replay-status" data-state={st.state} data-position={rp.position} className={st.state === 'failed' ? 'error-text' : ''}>{st.text}</div>
          {rp.failure && (
            <div className="error" role="alert" data-testid="replay-failure" data-step={rp.failedStep}>
              <strong>step {rp.failedStep}{failedRep ? ` (${failedRep.cmd})` : ''} failed:</strong> {failedRep ? failedRep.failures.join('; ') : rp.failure}
            </div>
          )}
          {rp.digest ? <div className="small muted" data-testid="replay-digest">event-log digest {rp.digest}</div> : null}
          <ErrorMessage form="scenario.replay" />
          <div ref={listBox}>
          <VirtualRows count={rp.total} rowHeight={24} height={Math.min(420, 24 * Math.max(rp.total, 3) + 4)} follow={false} selected={sel ?? rp.position}
            onSelect={setSel} testid="replay-steps" label="scenario steps"
            render={(i) => <ReplayRow i={i} st={rp.steps[i]!} rep={rp.reports[i]} next={!rp.done && i === rp.position} />} />
          </div>
        </div>
      )}
    </Section>
  );
}

export function ScenarioPanel() {
  const store = useScenarioStore();
  useEffect(() => watchScenario(store), [store]);
  return (
    <div className="stack" data-testid="scenario-panel">
      <ReplaySection />
      <Recording />
    </div>
  );
}
