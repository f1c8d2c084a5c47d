// The sessions slice: the programs attached to this console (`verbslab exec --console`, app/host/attach.ts), from
// attach.list, and which one the panels show (null: this console's own device). Each attached session is drawn by a
// store of its own (store/attached.ts); this slice lives in the console's main store.
import type { AttachedSession } from '../../../../app/protocol/index.ts';
import type { Slice } from '../slice.ts';

/** how often the list is asked for while the host is up (a new program, a program that ended) */
export const SESSIONS_POLL_MS = 1000;

export interface SessionsSlice {
  attached: AttachedSession[];
  /** the socket programs attach to (null: they cannot; attachError says why) */
  attachSocket: string | null; attachError: string | null;
  /** the attached session the panels show; null: this console's own device */
  viewing: number | null;
  refreshSessions(): Promise<void>;
  viewSession(id: number | null): void;
}

export const createSessionsSlice: Slice<SessionsSlice> = (set, get) => ({
  attached: [], attachSocket: null, attachError: null, viewing: null,
  async refreshSessions() {
    const r = await get().run('sessions', 'attach.list', {});
    if (!r) return;
    set({ attached: r.sessions, attachSocket: r.socket, attachError: r.error ?? null });
  },
  viewSession(id) {
    if (id !== null && !get().attached.some((s) => s.session === id)) return;
    set({ viewing: id });
  },
});
