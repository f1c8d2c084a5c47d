// Entry: connect to the backend host through renderer/src/transport (written by the foundation), build the
// store, render the console. If the transport module is not there yet the console says so instead of pretending.
import { useRef } from 'react';
import { createRoot } from 'react-dom/client';
import { useStore } from 'zustand';
import { App } from './App.tsx';
import { attachedStore } from './store/attached.ts';
import { hasPanel, panelOfHash } from './panels/registry.ts';
import './panels/builtin.ts';
import './panels/labs.ts';
import { ConsoleProvider, RootProvider } from './store/context.tsx';
import { createConsoleStore, type ConsoleStore, type ConsoleTransport } from './store/store.ts';
import './styles.css';

type TransportModule = { connectTransport?: () => ConsoleTransport | Promise<ConsoleTransport> };
const loaders = import.meta.glob<TransportModule>('./transport/index.ts');

/** The panels show the console's own device or an attached program's (the sessions switcher); the open panel and
 *  the theme go along when the view changes. */
function Root({ store, transport }: { store: ConsoleStore; transport: ConsoleTransport | null }) {
  const viewing = useStore(store, (s) => s.viewing);
  const attached = useStore(store, (s) => s.attached);
  const session = viewing === null ? undefined : attached.find((x) => x.session === viewing);
  const active = session && transport ? attachedStore(transport, session) : store;
  const prev = useRef(active);
  if (prev.current !== active) {
    const { panel, theme } = prev.current.getState();
    active.setState({ panel, theme });
    prev.current = active;
  }
  return (
    <RootProvider store={store}>
      <ConsoleProvider store={active}><App key={viewing ?? 0} /></ConsoleProvider>
    </RootProvider>
  );
}

async function boot() {
  let transport: ConsoleTransport | null = null;
  let problem: string | undefined;
  const load = loaders['./transport/index.ts'];
  if (!load) problem = 'no transport to the backend host (renderer transport not built yet)';
  else {
    try {
      const mod = await load();
      if (typeof mod.connectTransport !== 'function') problem = 'renderer transport has no connectTransport()';
      else transport = await mod.connectTransport();
    } catch (e) {
      problem = `could not connect to the backend host: ${(e as Error)?.message ?? String(e)}`;
    }
  }
  const store = createConsoleStore({ transport, transportProblem: problem, pollSessions: true });
  // the panel of the URL; else where this user left (returning users land where they were); else the Labs panel
  // when a lab platform registered one; else the first panel
  let last: string | null = null;
  try { last = localStorage.getItem('vl.panel'); } catch { /* private mode */ }
  const panel = panelOfHash() ?? (last && hasPanel(last) ? last : null) ?? (hasPanel('labs') ? 'labs' : null);
  if (panel) store.getState().setPanel(panel);
  const saved = typeof localStorage !== 'undefined' ? localStorage.getItem('vl.theme') : null;
  if (saved === 'dark' || saved === 'light') store.getState().setTheme(saved);
  else if (typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches) store.getState().setTheme('dark');
  Object.assign(globalThis, { __vlStore: store });   // for debugging from devtools
  createRoot(document.getElementById('root')!).render(
    <Root store={store} transport={transport} />,
  );
  if (transport) void store.getState().syncObjects();
}
void boot();
