import { useEffect } from 'react';
import { Header } from './components/Header.tsx';
import { RunBar } from './components/RunBar.tsx';
import { useConsole } from './store/context.tsx';
import type { PanelId } from './store/store.ts';
import { DevicesPanel } from './panels/DevicesPanel.tsx';
import { MemoryPanel } from './panels/MemoryPanel.tsx';
import { QueuesPanel } from './panels/QueuesPanel.tsx';
import { WirePanel } from './panels/WirePanel.tsx';
import { EventsPanel } from './panels/EventsPanel.tsx';
import { RunPanel } from './panels/RunPanel.tsx';
import { ScenarioPanel } from './panels/ScenarioPanel.tsx';
import { SgLabPanel } from './panels/SgLabPanel.tsx';

const PANELS: readonly PanelId[] = ['devices', 'memory', 'queues', 'wire', 'events', 'run', 'scenario', 'sg'];
/** the panel named in the URL's hash (#events), if any */
export const panelOfHash = (): PanelId | null => { const h = window.location.hash.slice(1); return (PANELS as readonly string[]).includes(h) ? h as PanelId : null; };

export function App() {
  const theme = useConsole((s) => s.theme);
  const panel = useConsole((s) => s.panel);
  const setPanel = useConsole((s) => s.setPanel);
  // the panel is in the URL (#events): a reload or a bookmark opens it, back/forward move between panels
  // (main.tsx opens the panel of the hash the page was loaded with)
  useEffect(() => {
    const fromHash = () => { const p = panelOfHash(); if (p) setPanel(p); };
    window.addEventListener('hashchange', fromHash);
    return () => window.removeEventListener('hashchange', fromHash);
  }, [setPanel]);
  useEffect(() => { if (panelOfHash() !== panel) window.history.pushState(null, '', `#${panel}`); }, [panel]);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    try { localStorage.setItem('vl.theme', theme); } catch { /* private mode */ }
  }, [theme]);
  return (
    <div className="app">
      <div className="sticky"><Header /><RunBar /></div>
      <main id="panel" className="panel" role="tabpanel" aria-labelledby={`tab-${panel}`} data-testid={`panel-${panel}`}>
        {panel === 'devices' && <DevicesPanel />}
        {panel === 'memory' && <MemoryPanel />}
        {panel === 'queues' && <QueuesPanel />}
        {panel === 'wire' && <WirePanel />}
        {panel === 'events' && <EventsPanel />}
        {panel === 'run' && <RunPanel />}
        {panel === 'scenario' && <ScenarioPanel />}
        {panel === 'sg' && <SgLabPanel />}
      </main>
    </div>
  );
}
