// React access to the console store (a vanilla zustand store held in context, Lichtblick style).
import { createContext, useContext, type ReactNode } from 'react';
import { useStore } from 'zustand';
import type { ConsoleState, ConsoleStore } from './store.ts';

const Ctx = createContext<ConsoleStore | null>(null);

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
