// Always-visible run controls for the deterministic engine (engine.autorun / engine.step / engine.run).
import { fmtCount, rawNs } from '../format.ts';
import { useEffect } from 'react';
import { useConsole, useSampled } from '../store/context.tsx';
import { ErrorMessage } from './ui.tsx';

export function RunBar() {
  const autorun = useConsole((s) => s.autorun);
  const setAutorun = useConsole((s) => s.setAutorun);
  const step = useConsole((s) => s.step);
  const runToIdle = useConsole((s) => s.runToIdle);
  const lastRun = useConsole((s) => s.lastRun);
  const lastRunNs = useConsole((s) => s.lastRunNs);
  const backend = useConsole((s) => s.backend);
  const realTime = useConsole((s) => s.realTime) || backend !== null;
  const onNet = useConsole((s) => s.devices.filter((d) => d.net).map((d) => d.name).join(', '));
  const why = backend ? `unavailable: the session drives the real device ${backend.device}; its engine runs in hardware, in real time (not visible on a real device)`
    : realTime ? `unavailable: ${onNet || 'a device'} on the network, the session runs in real time` : undefined;
  const total = useSampled(useConsole((s) => (s.versions.events, s.model.ring.total)));
  // keyboard: Alt+P play/pause, Alt+S single step, Alt+R run to idle (work from anywhere, also inside forms)
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!e.altKey || e.ctrlKey || e.metaKey) return;
      const k = e.key.toLowerCase();
      if (k === 'p') { e.preventDefault(); void setAutorun(!autorun); }
      else if (k === 's' && !autorun) { e.preventDefault(); void step(1); }
      else if (k === 'r' && !autorun) { e.preventDefault(); void runToIdle(); }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [autorun, setAutorun, step, runToIdle]);
  return (
    <div className="runbar" role="toolbar" aria-label="run controls">
      {realTime && <span className="badge realtime" data-testid="run-realtime" title={why}>● real time — {backend ? `real device ${backend.device}` : `${onNet || 'a device'} on the network`}</span>}
      <button type="button" data-testid="run-play" aria-pressed={autorun} title={why ?? 'Alt+P'} aria-keyshortcuts="Alt+P" onClick={() => void setAutorun(!autorun)} disabled={realTime}>
        {autorun ? '❚❚ Pause' : '▶ Play'}</button>
      <button type="button" data-testid="run-step" title={why ?? 'Alt+S'} aria-keyshortcuts="Alt+S" onClick={() => void step(1)} disabled={autorun || realTime}>Step</button>
      <button type="button" data-testid="run-idle" title={why ?? 'Alt+R'} aria-keyshortcuts="Alt+R" onClick={() => void runToIdle()} disabled={autorun || realTime}>Run to idle</button>
      <span className="muted" data-testid="run-status" title={lastRunNs !== null ? `virtual time ${rawNs(lastRunNs)}` : undefined}>{lastRun}</span>
      <span className="muted grow-right">{fmtCount(total)} events</span>
      <ErrorMessage form="engine.autorun" /><ErrorMessage form="engine.step" /><ErrorMessage form="engine.run" />
    </div>
  );
}
