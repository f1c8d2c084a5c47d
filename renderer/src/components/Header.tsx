// Header: host status with restart, navigation between panels (arrow keys move between tabs), theme toggle.
import { useRef, type KeyboardEvent } from 'react';
import { useConsole } from '../store/context.tsx';
import { usePanels } from '../panels/registry.ts';
import { ErrorMessage } from './ui.tsx';

export function HostStatus() {
  const host = useConsole((s) => s.host);
  const restart = useConsole((s) => s.restartHost);
  const hasTransport = useConsole((s) => s.hasTransport);
  const text = host.state === 'up' ? 'backend up'
    : host.state === 'down' ? `backend down: ${host.reason ?? 'no reason given'}`
    : host.state === 'starting' ? 'backend starting…' : 'connecting to backend…';
  return (
    <div className={`host host-${host.state}`}>
      <span className="dot" aria-hidden="true" />
      <span data-testid="host-status" role="status">{text}</span>
      {host.restarts ? <span className="muted"> (restarts: {host.restarts})</span> : null}
      {host.state === 'down' && (
        <button type="button" data-testid="restart-host" onClick={restart} disabled={!hasTransport}
          title={hasTransport ? 'restart the backend host process' : 'no transport'}>Restart host</button>
      )}
      <ErrorMessage form="host" />
    </div>
  );
}

export function Header() {
  const panel = useConsole((s) => s.panel);
  const setPanel = useConsole((s) => s.setPanel);
  const theme = useConsole((s) => s.theme);
  const setTheme = useConsole((s) => s.setTheme);
  const PANELS = usePanels();
  const refs = useRef<(HTMLButtonElement | null)[]>([]);
  const onKey = (e: KeyboardEvent, i: number) => {
    const n = e.key === 'ArrowRight' ? i + 1 : e.key === 'ArrowLeft' ? i - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? PANELS.length - 1 : null;
    if (n === null) return;
    e.preventDefault();
    const j = (n + PANELS.length) % PANELS.length;
    setPanel(PANELS[j].id); refs.current[j]?.focus();
  };
  return (
    <header className="top">
      <div className="brand">Verbs Lab</div>
      <nav role="tablist" aria-label="panels" className="tabs">
        {PANELS.map((p, i) => (
          <button key={p.id} id={`tab-${p.id}`} role="tab" type="button" aria-selected={panel === p.id} aria-controls="panel"
            tabIndex={panel === p.id ? 0 : -1} ref={(el) => { refs.current[i] = el; }}
            data-testid={`nav-${p.id}`} className={panel === p.id ? 'tab active' : 'tab'}
            onClick={() => setPanel(p.id)} onKeyDown={(e) => onKey(e, i)}>{p.icon ? <span aria-hidden="true">{p.icon} </span> : null}{p.title}</button>
        ))}
      </nav>
      <HostStatus />
      <button type="button" className="theme" data-testid="theme-toggle" aria-label={`switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}
        onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')}>{theme === 'dark' ? '☀ Light' : '☾ Dark'}</button>
    </header>
  );
}
