// Always-visible run controls for the deterministic engine (engine.autorun / engine.step / engine.run).
import { useConsole } from '../store/context.tsx';
import { ErrorMessage } from './ui.tsx';

export function RunBar() {
  const autorun = useConsole((s) => s.autorun);
  const setAutorun = useConsole((s) => s.setAutorun);
  const step = useConsole((s) => s.step);
  const runToIdle = useConsole((s) => s.runToIdle);
  const lastRun = useConsole((s) => s.lastRun);
  const total = useConsole((s) => (s.versions.events, s.model.ring.total));
  return (
    <div className="runbar" role="toolbar" aria-label="run controls">
      <button type="button" data-testid="run-play" aria-pressed={autorun} onClick={() => void setAutorun(!autorun)}>
        {autorun ? '❚❚ Pause' : '▶ Play'}</button>
      <button type="button" data-testid="run-step" onClick={() => void step(1)} disabled={autorun}>Step</button>
      <button type="button" data-testid="run-idle" onClick={() => void runToIdle()} disabled={autorun}>Run to idle</button>
      <span className="muted" data-testid="run-status">{lastRun}</span>
      <span className="muted grow-right">{total.toLocaleString()} events</span>
      <ErrorMessage form="engine.autorun" /><ErrorMessage form="engine.step" /><ErrorMessage form="engine.run" />
    </div>
  );
}
