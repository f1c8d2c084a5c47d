// Run controls for the deterministic engine and the fault knobs (engine.autorun / step / run / faults).
import { useState } from 'react';
import { useConsole } from '../store/context.tsx';
import { commandProblem } from '../store/validate.ts';
import { ErrorMessage, Field, Section, parseNum } from '../components/ui.tsx';
import { LiveRate } from '../components/LiveRate.tsx';
import type { Faults } from '../store/store.ts';

function SpeedForm() {
  const autorun = useConsole((s) => s.autorun);
  const sps = useConsole((s) => s.stepsPerSecond);
  const setAutorun = useConsole((s) => s.setAutorun);
  const freeRun = useConsole((s) => s.freeRun);
  const step = useConsole((s) => s.step);
  const [speed, setSpeed] = useState(String(sps));
  const [count, setCount] = useState('10');
  const n = parseNum(speed); const c = parseNum(count);
  const speedProblem = Number.isNaN(n) ? 'steps per second: a number' : commandProblem({ cmd: 'engine.autorun', args: { on: true, stepsPerSecond: n } });
  const stepProblem = Number.isNaN(c) ? 'count: a number' : commandProblem({ cmd: 'engine.step', args: { count: c } });
  return (
    <div className="stack">
      <form className="form" aria-label="speed" onSubmit={(e) => { e.preventDefault(); if (!speedProblem) void setAutorun(autorun, n); }}>
        <Field label="Speed (engine steps per second)"><input data-testid="run-speed" value={speed} onChange={(e) => setSpeed(e.target.value)} size={10} aria-invalid={!!speedProblem} /></Field>
        <button type="submit" disabled={!!speedProblem}>{autorun ? 'Apply speed' : 'Set speed'}</button>
        <button type="button" data-testid="run-play-2" aria-pressed={autorun} disabled={!!speedProblem} onClick={() => void setAutorun(!autorun, n)}>{autorun ? '❚❚ Pause' : '▶ Play at this speed'}</button>
        <label className="small" title="The engine runs on its own thread at this speed whatever the console draws: the console is shown a sample of the events (every state change, the newest of the rest) and the rings as the device holds them. Off: autorun waits for the console, which sees every event.">
          <input type="checkbox" data-testid="run-free" checked={freeRun} onChange={(e) => void setAutorun(autorun, Number.isNaN(n) ? undefined : n, e.target.checked)} disabled={!!speedProblem && autorun} />
          free running (engine thread; the console samples)
        </label>
        <ErrorMessage form="engine.autorun" local={speedProblem} />
      </form>
      <form className="form" aria-label="step" onSubmit={(e) => { e.preventDefault(); if (!stepProblem) void step(c); }}>
        <Field label="Steps"><input data-testid="step-count" value={count} onChange={(e) => setCount(e.target.value)} size={8} /></Field>
        <button type="submit" disabled={!!stepProblem || autorun}>Step ×{Number.isNaN(c) ? '?' : c}</button>
        <ErrorMessage form="engine.step" local={stepProblem} />
      </form>
    </div>
  );
}

const KNOBS: { k: keyof Faults; label: string; hint: string }[] = [
  { k: 'loss', label: 'loss', hint: 'probability a packet is dropped' },
  { k: 'duplicate', label: 'duplicate', hint: 'probability a packet is delivered twice' },
  { k: 'reorder', label: 'reorder', hint: 'probability a packet overtakes the previous one' },
  { k: 'delay', label: 'delay', hint: 'probability a packet is delayed by delayNs' },
];

function FaultsForm() {
  const faults = useConsole((s) => s.faults);
  const apply = useConsole((s) => s.setFaults);
  const [f, setF] = useState<Faults>(faults);
  const problem = commandProblem({ cmd: 'engine.faults', args: f });
  return (
    <form className="form faults" aria-label="fault injection" onSubmit={(e) => { e.preventDefault(); if (!problem) void apply(f); }}>
      {KNOBS.map(({ k, label, hint }) => (
        <Field key={k} label={`${label}: ${(f[k] * 100).toFixed(0)} %`} hint={hint}>
          <input type="range" min={0} max={1} step={0.01} value={f[k]} data-testid={`fault-${k}`} aria-label={label}
            onChange={(e) => setF({ ...f, [k]: Number(e.target.value) })} />
        </Field>
      ))}
      <Field label="delayNs"><input value={f.delayNs} size={10} onChange={(e) => setF({ ...f, delayNs: Number(e.target.value) })} aria-invalid={!!problem} /></Field>
      <button type="submit" data-testid="apply-faults" disabled={!!problem}>Apply faults</button>
      <span className="muted small">applied: loss {faults.loss}, dup {faults.duplicate}, reorder {faults.reorder}, delay {faults.delay} ({faults.delayNs} ns)</span>
      <ErrorMessage form="engine.faults" local={problem} />
    </form>
  );
}

function ResetForm() {
  const reset = useConsole((s) => s.resetSession);
  const [seed, setSeed] = useState('');
  const n = seed === '' ? undefined : parseNum(seed);
  const problem = n !== undefined && Number.isNaN(n) ? 'seed: a number' : commandProblem({ cmd: 'session.reset', args: n === undefined ? {} : { seed: n } });
  return (
    <form className="form" aria-label="reset session" onSubmit={(e) => { e.preventDefault(); if (!problem) void reset(n); }}>
      <Field label="Seed (optional)"><input data-testid="reset-seed" value={seed} onChange={(e) => setSeed(e.target.value)} size={8} /></Field>
      <button type="submit" className="danger" data-testid="reset-session" disabled={!!problem}>Reset session (session.reset)</button>
      <span className="muted small">Drops every device and object; the same seed replays the same keys and packets.</span>
      <ErrorMessage form="session.reset" local={problem} />
    </form>
  );
}

/** The host's load generator (engine.traffic): repeat the last WR posted on a QP while the engine runs. */
function LoadForm() {
  const lastPosted = useConsole((s) => s.lastPosted);
  const traffic = useConsole((s) => s.traffic);
  const setTraffic = useConsole((s) => s.setTraffic);
  const qps = Object.keys(lastPosted).map(Number);
  const [qp, setQp] = useState<number | ''>('');
  const chosen = qp === '' ? qps[0] : qp;
  const wr = chosen !== undefined ? lastPosted[chosen] : undefined;
  const on = traffic?.on === true;
  return (
    <form className="form" aria-label="load generator" onSubmit={(e) => { e.preventDefault(); void setTraffic(!on, chosen); }}>
      <Field label="QP" hint="the last work request posted from Queues on this QP is posted again and again">
        <select data-testid="traffic-qp" value={chosen ?? ''} onChange={(e) => setQp(Number(e.target.value))} disabled={on || !qps.length}>
          {qps.length ? qps.map((h) => <option key={h} value={h}>QP {h}: {lastPosted[h]!.opcode}</option>) : <option value="">post a WR from Queues first</option>}
        </select>
      </Field>
      <button type="submit" data-testid="traffic-toggle" aria-pressed={on} disabled={!on && !wr}>{on ? 'Stop load' : 'Start load'}</button>
      <span className="muted small" data-testid="traffic-status">
        {traffic ? `${on ? 'running' : 'stopped'}${traffic.qp !== undefined ? ` on QP ${traffic.qp}` : ''}: ${traffic.posted ?? 0} posted, ${traffic.completed ?? 0} completions polled${traffic.stopped ? ` — stopped by ${traffic.stopped}` : ''}` : 'off'}
        {on ? ' (it runs while the engine runs: Play or Step)' : ''}
      </span>
      <ErrorMessage form="engine.traffic" />
    </form>
  );
}

function HostControl() {
  const kill = useConsole((s) => s.killHost);
  const restart = useConsole((s) => s.restartHost);
  const host = useConsole((s) => s.host);
  return (
    <div className="form">
      <button type="button" className="danger" data-testid="kill-host" disabled={host.state !== 'up'} onClick={kill}>Crash the backend host</button>
      <button type="button" onClick={restart} disabled={host.state === 'up'}>Restart it</button>
      <span className="muted small">The host replays its journal on restart; the console redraws from the replayed events.</span>
      <ErrorMessage form="host" />
    </div>
  );
}

export function RunPanel() {
  const real = useConsole((s) => s.backend);
  if (real) {
    return (
      <div className="stack">
        <Section title="Engine" testid="engine-real">
          <p className="note" data-testid="engine-not-visible">
            The engine is not visible on a real device: {real.device} runs its queues in hardware, in real time, so there is nothing to
            step, run to idle or autorun, no fault injection on its wire and no load generator. Completions appear when a CQ is polled
            (Queues); asynchronous events arrive by themselves (Events).
          </p>
        </Section>
        <Section title="Session"><ResetForm /></Section>
        <Section title="Backend host"><HostControl /></Section>
      </div>
    );
  }
  return (
    <div className="stack">
      <div className="row">
        <Section title="Engine (deterministic mode)"><SpeedForm /></Section>
        <Section title="Fault injection (engine.faults)" testid="faults-section"><FaultsForm /></Section>
      </div>
      <Section title="Load generator (engine.traffic)" testid="traffic-section"><LoadForm /></Section>
      <Section title="Live rates"><LiveRate /></Section>
      <Section title="Session"><ResetForm /></Section>
      <Section title="Backend host"><HostControl /></Section>
    </div>
  );
}
