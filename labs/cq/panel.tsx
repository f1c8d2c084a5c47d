// Lab 2's panel: one seeded run of the explorer, step by step. At the chosen step it shows the CQ (entries, armed or
// not, events pending on the channel — the timeline fold of timeline.ts, from the device's events and replies), the
// mode, the depth, whether interrupts are off, where the interrupt-context handler and each worker are, and every
// out-of-order delivery (which completion, by which context). Props only: the data comes from the lab agent's replies
// (SeededRun's TraceStep rows and RunResult), so the panel draws what the device did and nothing else.
// The default export registers the lab's tab (renderer/src/panels/labs.ts): explore a variant (lab.cq.explore), then
// replay a seed in the console's own session (lab.cq.start / lab.cq.step: the Queues panel shows the CQ and the QPs
// at every step, the Events panel the device's events).
import { useState } from 'react';
import type { ResultOf } from '../../app/protocol/index.ts';
import { ErrorMessage } from '../../renderer/src/components/ui.tsx';
import type { PanelDef } from '../../renderer/src/panels/registry.ts';
import { useConsole } from '../../renderer/src/store/context.tsx';
import type { RunResult, TraceStep } from './explorer.ts';

export interface CqRunPanelProps {
  run: RunResult;                 // with trace
  at: number;                     // 1-based step shown (0: before the first step)
  onStep?: (at: number) => void;  // step buttons (absent: read-only)
  more?: boolean;                 // the run goes on past its last step drawn (a live replay): stepping asks for it
  window?: number;                // how many timeline rows around `at`
}

const ENTRY_SCALE = 12;           // entries drawn as a bar of at most this many cells

function Consumers({ t }: { t: TraceStep }) {
  return (
    <ul className="chips" data-testid="cq-consumers">
      <li className={t.handler === 'idle' ? 'chip muted' : 'chip'} data-testid="cq-consumer-irq">irq: {t.handler}</li>
      {t.workers.map((w, i) => <li key={i} className={w === 'acquire' ? 'chip muted' : 'chip'} data-testid="cq-consumer-worker">w{i}: {w}</li>)}
    </ul>
  );
}

function CqState({ t }: { t: TraceStep }) {
  const bar = Math.min(t.cq.entries, ENTRY_SCALE);
  return (
    <div className="qcard-head" data-testid="cq-state">
      <span className="mono" data-testid="cq-entries" title="CQEs queued, not yet polled">
        entries {t.cq.entries} <span className="heat">{Array.from({ length: bar }, (_, i) => <span key={i} className="heat-cell" />)}</span>
      </span>
      <span className={t.cq.armed ? 'badge on' : 'badge'} data-testid="cq-armed">{t.cq.armed ? 'armed' : 'not armed'}</span>
      <span className="badge" data-testid="cq-pending">{t.cq.pendingEvents} event(s) pending</span>
      <span className="badge" data-testid="cq-mode">{t.mode === 'irq' ? 'interrupt context' : 'thread context'}</span>
      <span className="badge">depth {t.depth}</span>
      {t.irqOff ? <span className="badge on" data-testid="cq-irq-off">interrupts off</span> : null}
    </div>
  );
}

export function CqRunPanel({ run, at, onStep, more = false, window = 12 }: CqRunPanelProps) {
  const trace = run.trace ?? [];
  const n = trace.length;
  const cur = Math.max(0, Math.min(at, n));
  const t = cur > 0 ? trace[cur - 1] : undefined;
  const from = Math.max(0, cur - window), to = Math.min(n, cur + 2);
  const late = new Map(run.violations.map((v) => [v.step, v]));
  const seen = run.violations.filter((v) => v.step <= cur);
  return (
    <div className="card" data-testid="lab-cq-panel">
      <div className="card-head">
        <strong>{run.variant} · seed {run.seed}</strong>
        <span className="muted">step {cur} of {n} · {run.verdict}</span>
        {onStep ? (
          <span className="actions">
            <button type="button" disabled={cur === 0} onClick={() => onStep(0)}>to step 0</button>
            <button type="button" disabled={cur === 0} onClick={() => onStep(cur - 1)} data-testid="cq-step-back">◀ step</button>
            <button type="button" disabled={cur >= n && !more} onClick={() => onStep(cur + 1)} data-testid="cq-step">step ▶</button>
            {run.violations[0] ? <button type="button" onClick={() => onStep(run.violations[0]!.step)} data-testid="cq-goto-violation">first violation</button> : null}
          </span>
        ) : null}
      </div>
      <div className="card-body stack">
        {t ? <><CqState t={t} /><Consumers t={t} /></> : <span className="muted">before the first step: the CQ is armed, interrupt context</span>}
        <table className="table mono small" data-testid="cq-timeline">
          <thead><tr><th className="num">step</th><th>who</th><th>action</th><th className="num">entries</th><th>armed</th><th className="num">events</th><th>mode</th></tr></thead>
          <tbody>
            {trace.slice(from, to).map((r) => (
              <tr key={r.step} className={r.step === cur ? 'selected' : late.has(r.step) ? 'error' : undefined} data-step={r.step}>
                <td className="num">{r.step}</td><td>{r.actor}</td><td>{r.action}</td><td className="num">{r.cq.entries}</td>
                <td>{r.cq.armed ? 'armed' : ''}</td><td className="num">{r.cq.pendingEvents || ''}</td><td>{r.mode}{r.irqOff ? ' · irq off' : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <div data-testid="cq-violations">
          {seen.length
            ? seen.map((v) => <div key={v.step} className="error">step {v.step}: wr_id {v.wrId} delivered by {v.by} while wr_id {v.expected} was still due</div>)
            : <span className="muted">no completion out of order so far</span>}
        </div>
      </div>
    </div>
  );
}

type Explored = ResultOf<'lab.cq.explore'>;
const VARIANT_NAMES = ['report-missed', 'never-reports', 'irq-lock', 'no-repoll'] as const;
type VariantName = (typeof VARIANT_NAMES)[number];

/** The lab's tab: explore, then replay step by step in the console's session. */
export function CqLabPanel() {
  const cmd = useConsole((s) => s.run);   // typed by the command's result schema (ResultOf<N>)
  const [variant, setVariant] = useState<VariantName>('report-missed');
  const [seed, setSeed] = useState(1);
  const [explored, setExplored] = useState<Explored | null>(null);
  const [run, setRun] = useState<RunResult | null>(null);
  const [at, setAt] = useState(0);
  const [finished, setFinished] = useState(false);

  const explore = async () => setExplored(await cmd('lab.cq.explore', 'lab.cq.explore', { variant, seeds: 200, from: 1 }));
  const start = async (s = seed) => {
    const r = await cmd('lab.cq.start', 'lab.cq.start', { variant, seed: s });
    if (r) { setRun({ ...r.result, trace: [] }); setAt(0); setSeed(s); setFinished(r.finished); }
  };
  /** shows step `n`, asking the agent for the steps not yet taken (a step taken is never redone: the device moved) */
  const goto = async (n: number) => {
    if (!run) return;
    const have = run.trace!.length;
    if (n > have && !finished) {
      const r = await cmd('lab.cq.step', 'lab.cq.step', { count: n - have });
      if (!r) return;
      const next: RunResult = { ...r.result, trace: [...run.trace!, ...r.steps] };
      setRun(next);
      setFinished(r.finished);
      setAt(Math.min(n, next.trace!.length));
      return;
    }
    setAt(Math.max(0, Math.min(n, have)));
  };

  return (
    <div className="panel-body stack" data-testid="lab-cq-tab">
      <div className="card"><div className="card-body">
        <div className="form">
          <label className="field"><span className="field-label">variant</span>
            <select value={variant} onChange={(e) => setVariant(e.target.value as VariantName)} data-testid="lab-cq-variant">
              {VARIANT_NAMES.map((v) => <option key={v} value={v}>{v}</option>)}
            </select></label>
          <button type="button" onClick={() => void explore()} data-testid="lab-cq-explore">Explore 200 seeds</button>
          <label className="field"><span className="field-label">seed</span>
            <input type="number" min={0} value={seed} onChange={(e) => setSeed(Number(e.target.value))} data-testid="lab-cq-seed" /></label>
          <button type="button" onClick={() => void start()} data-testid="lab-cq-start">Replay this seed in the console</button>
        </div>
        <ErrorMessage form="lab.cq.explore" /><ErrorMessage form="lab.cq.start" /><ErrorMessage form="lab.cq.step" />
        {explored ? (
          <p className="mono small" data-testid="lab-cq-explored">
            {explored.variant}: {explored.verdict} — {explored.tried} seeds, {explored.violating} broke order ({explored.violations} out-of-order deliveries), {explored.stalled} stalled
            {explored.firstFailingSeed !== null ? <> · first failing seed {explored.firstFailingSeed}{' '}
              <button type="button" onClick={() => void start(explored.firstFailingSeed!)} data-testid="lab-cq-replay-first">replay it</button></> : null}
            {explored.maskedSteps ? ` · interrupts off ${explored.maskedSteps} of ${explored.steps} steps` : ''}
          </p>
        ) : <p className="muted small">{'The explorer runs each seed in a session of its own; a replay runs in this console\'s session (session.reset with the seed).'}</p>}
      </div></div>
      {run && explored?.firstViolation && explored.firstFailingSeed === run.seed && explored.variant === run.variant ? (
        <button type="button" onClick={() => void goto(explored.firstViolation!.step)} data-testid="lab-cq-to-violation">
          run to step {explored.firstViolation.step} (the first out-of-order delivery)</button>
      ) : null}
      {run ? <CqRunPanel run={run} at={at} more={!finished} onStep={(n) => void goto(n)} /> : null}
    </div>
  );
}

const panel: PanelDef = {
  id: 'lab-cq', title: 'Lab 2: CQ', order: 85, component: CqLabPanel,
  summary: 'lab 2: the interleaving explorer over the notify variants, and a seed replayed step by step with the CQ and both consumers',
};
export default panel;
