// Lab 2's panel: one seeded run of the explorer, step by step. At the chosen step it shows the CQ (entries, armed or
// not, events pending on the channel — the timeline fold of timeline.ts, from the device's events and replies), the
// mode, the depth, whether interrupts are off, where the interrupt-context handler and each worker are, and every
// out-of-order delivery (which completion, by which context). Props only: the data comes from the lab agent's replies
// (SeededRun's TraceStep rows and RunResult), so the panel draws what the device did and nothing else.
import type { RunResult, TraceStep } from './explorer.ts';

export interface CqRunPanelProps {
  run: RunResult;                 // with trace
  at: number;                     // 1-based step shown (0: before the first step)
  onStep?: (at: number) => void;  // step buttons (absent: read-only)
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
    <div className="row" data-testid="cq-state">
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

export function CqRunPanel({ run, at, onStep, window = 12 }: CqRunPanelProps) {
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
            <button type="button" disabled={cur === 0} onClick={() => onStep(0)}>⏮</button>
            <button type="button" disabled={cur === 0} onClick={() => onStep(cur - 1)} data-testid="cq-step-back">◀ step</button>
            <button type="button" disabled={cur >= n} onClick={() => onStep(cur + 1)} data-testid="cq-step">step ▶</button>
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
