// React access to the console store (a vanilla zustand store held in context, Lichtblick style).
import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from 'react';
import { useStore } from 'zustand';
import type { ConsoleState, ConsoleStore } from './store.ts';

const Ctx = createContext<ConsoleStore | null>(null);
/** the console's main store (its own device, the list of attached sessions) while the panels show an attached one */
const RootCtx = createContext<ConsoleStore | null>(null);

export function RootProvider({ store, children }: { store: ConsoleStore; children: ReactNode }) {
  return <RootCtx.Provider value={store}>{children}</RootCtx.Provider>;
}
/** the main store's state (the store of the panels when no RootProvider is above) */
export function useRootConsole<T>(selector: (s: ConsoleState) => T): T {
  const root = useContext(RootCtx);
  const s = useContext(Ctx);
  if (!root && !s) throw new Error('ConsoleProvider missing');
  return useStore((root ?? s)!, selector);
}

export function ConsoleProvider({ store, children }: { store: ConsoleStore; children: ReactNode }) {
  return <Ctx.Provider value={store}>{children}</Ctx.Provider>;
}

export function useConsoleStore(): ConsoleStore {
  const s = useContext(Ctx);
  if (!s) throw new Error('ConsoleProvider missing');
  return s;
}

export function useConsole<T>(selector: (s: ConsoleState) => T): T {
  return useStore(useConsoleStore(), selector);
}

/** the mutable models (read inside a component that subscribed to the matching version number) */
export function useModel() { return useConsoleStore().getState().model; }

/** `value`, shown at most every `ms` (the latest one always arrives): for counters that change every frame under a
 *  stream. Unreadable at 60 changes a second anyway, and each change repaints the region between it and the log. */
export function useSampled<T>(value: T, ms = 250): T {
  const [shown, setShown] = useState(value);
  const last = useRef(-Infinity);
  const latest = useRef(value);
  latest.current = value;
  useEffect(() => {
    if (Object.is(value, shown)) return;
    const wait = last.current + ms - performance.now();
    const show = () => { last.current = performance.now(); setShown(latest.current); };
    if (wait <= 0) { show(); return; }
    const t = setTimeout(show, wait);
    return () => clearTimeout(t);
  }, [value, shown, ms]);
  return shown;
}
