import { useEffect, useState } from 'react';
import { Orientation } from './components/Orientation.tsx';
import { Header } from './components/Header.tsx';
import { RunBar } from './components/RunBar.tsx';
import { SessionsBar } from './components/Sessions.tsx';
import { useConsole } from './store/context.tsx';
import { panelById, panelOfHash, usePanels } from './panels/registry.ts';

/** the orientation was closed before, or the page was opened on a panel (a link, a bookmark, a reload) */
function firstRunDone(): boolean {
  if (panelOfHash()) return true;
  try { return localStorage.getItem('vl.oriented') === '1'; } catch { return false; }
}

export function App() {
  const theme = useConsole((s) => s.theme);
  const panel = useConsole((s) => s.panel);
  const setPanel = useConsole((s) => s.setPanel);
  // an attached program's device (store/attached.ts): every form says it is read-only (styles.css .read-only form)
  const readOnly = useConsole((s) => s.readOnly);
  usePanels();   // a panel registered later (a lab) re-renders the shell
  // the panel is in the URL (#events): a reload or a bookmark opens it, back/forward move between panels
  // (main.tsx opens the panel of the hash the page was loaded with)
  useEffect(() => {
    const fromHash = () => { const p = panelOfHash(); if (p) setPanel(p); };
    window.addEventListener('hashchange', fromHash);
    return () => window.removeEventListener('hashchange', fromHash);
  }, [setPanel]);
  useEffect(() => {
    if (panelOfHash() !== panel) window.history.pushState(null, '', `#${panel}`);
    try { localStorage.setItem('vl.panel', panel); } catch { /* private mode */ }
  }, [panel]);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    try { localStorage.setItem('vl.theme', theme); } catch { /* private mode */ }
  }, [theme]);
  const Panel = panelById(panel)?.component;
  const [oriented, setOriented] = useState(() => firstRunDone());
  const closeOrientation = () => { setOriented(true); try { localStorage.setItem('vl.oriented', '1'); } catch { /* private mode */ } };
  // going to another panel is starting: the orientation has done its job
  const [firstPanel] = useState(panel);
  useEffect(() => { if (panel !== firstPanel && !oriented) closeOrientation(); }, [panel]);   // eslint-disable-line react-hooks/exhaustive-deps
  return (
    <div className="app">
      <div className="sticky"><Header /><SessionsBar /><RunBar /></div>
      <main id="panel" className={readOnly ? 'panel read-only' : 'panel'} data-read-only={readOnly ?? undefined} role="tabpanel" aria-labelledby={`tab-${panel}`} data-testid={`panel-${panel}`}>
        {!oriented && <Orientation onClose={closeOrientation} />}
        {Panel ? <Panel /> : <p className="muted" data-testid="no-such-panel">No panel "{panel}" is registered.</p>}
      </main>
    </div>
  );
}
