// The panel registry: a panel registers itself (id, title, order, component) and the header's tabs, the URL hash
// (#events) and the panel area all read this one list. Built-in panels register in panels/builtin.ts; a lab adds
// its own from labs/<id>/panel.tsx (default export: a PanelDef), loaded by panels/labs.ts. A panel registered after
// the console started (a lab loaded later) shows up at once: the registry is an external store React subscribes to.
import { useSyncExternalStore, type ComponentType } from 'react';

export interface PanelDef {
  /** the panel's id: the URL hash (#id), the tab's test id (nav-id) and the panel's (panel-id) */
  id: string;
  /** the tab's label */
  title: string;
  /** tabs are sorted by order (built-ins use 10, 20, … so a lab can slot in between) */
  order: number;
  /** a short glyph shown before the title (decorative: hidden from screen readers) */
  icon?: string;
  /** one line for the first-run orientation: what this panel shows */
  summary?: string;
  component: ComponentType;
}

const ID = /^[a-z][a-z0-9-]{0,31}$/;
const byId = new Map<string, PanelDef>();
let list: readonly PanelDef[] = [];
const listeners = new Set<() => void>();

/** Add (or replace, by id) a panel. Throws on an id that cannot be a URL hash. Returns a function removing it. */
export function registerPanel(def: PanelDef): () => void {
  if (!ID.test(def.id)) throw new Error(`panel id "${def.id}": lower-case letters, digits and "-", starting with a letter`);
  byId.set(def.id, def);
  publish();
  return () => { if (byId.get(def.id) === def) { byId.delete(def.id); publish(); } };
}

function publish() {
  list = [...byId.values()].sort((a, b) => a.order - b.order || a.id.localeCompare(b.id));
  for (const l of listeners) l();
}

/** the registered panels, in tab order */
export function panels(): readonly PanelDef[] { return list; }
export function panelById(id: string): PanelDef | undefined { return byId.get(id); }
export function hasPanel(id: string): boolean { return byId.has(id); }

function subscribe(cb: () => void) { listeners.add(cb); return () => { listeners.delete(cb); }; }
/** the registered panels, re-rendering when one is added or removed */
export function usePanels(): readonly PanelDef[] { return useSyncExternalStore(subscribe, panels, panels); }

/** the panel named in the URL's hash (#events), if it is registered */
export function panelOfHash(): string | null {
  const h = typeof window === 'undefined' ? '' : window.location.hash.slice(1);
  return byId.has(h) ? h : null;
}
