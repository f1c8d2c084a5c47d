import { useEffect } from 'react';
import { Header } from './components/Header.tsx';
import { RunBar } from './components/RunBar.tsx';
import { useConsole } from './store/context.tsx';
import { DevicesPanel } from './panels/DevicesPanel.tsx';
import { MemoryPanel } from './panels/MemoryPanel.tsx';
import { QueuesPanel } from './panels/QueuesPanel.tsx';
import { WirePanel } from './panels/WirePanel.tsx';
import { EventsPanel } from './panels/EventsPanel.tsx';
import { RunPanel } from './panels/RunPanel.tsx';
import { ScenarioPanel } from './panels/ScenarioPanel.tsx';

export function App() {
  const theme = useConsole((s) => s.theme);
  const panel = useConsole((s) => s.panel);
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
      </main>
    </div>
  );
}
