// The ui + host slice: the backend host's state (restart / kill), theme, the open panel, the errors and pending
// flags filed per form, the choices each form holds (kept when the user switches panels), and `exec`, the one way
// a command reaches the host: validated with the shared zod schema, sent, any error filed under the form.
import { Command, describeZodError, type CommandArgsIn, type CommandName, type ErrorInfo, type Reply, type ResultOf } from '../../../../app/protocol/index.ts';
import type { Slice } from '../slice.ts';

/** a form field's value: text, a switch, or a small JSON value (a list of flags, an SG list) */
export type FormValue = string | boolean | number | readonly unknown[] | Record<string, unknown>;

export interface UiSlice {
  host: { state: 'connecting' | 'starting' | 'up' | 'down'; reason?: string; restarts?: number; pid?: number };
  /** set when the console only watches a device another program owns (an attached session: store/attached.ts):
   *  who owns it, e.g. "ibv_rc_pingpong (pid 42)"; the forms say so and their commands are refused */
  readOnly: string | null;
  hasTransport: boolean;
  restartHost(): void;
  /** the "crash the backend" demo: kill the host process (the console then shows it down, with the reason) */
  killHost(): void;
  theme: 'light' | 'dark';
  /** the open panel: an id of the panel registry (renderer/src/panels/registry.ts) */
  panel: string;
  errors: Record<string, ErrorInfo | undefined>; pending: Record<string, boolean>;
  setTheme(t: 'light' | 'dark'): void; setPanel(p: string): void; clearError(form: string): void;
  exec(form: string, command: unknown): Promise<{ result: unknown } | null>;
  /** `exec` with the command's typed result (ResultOf<N>, the protocol's result schema), or null (error filed) */
  run<N extends CommandName>(form: string, cmd: N, args: CommandArgsIn<N>): Promise<ResultOf<N> | null>;
  /** the choices of every form, by form id then field: what the user set stays when panels switch; a field never
   *  set is absent (the form shows its derived default, which may follow the objects that exist) */
  forms: Record<string, Record<string, FormValue> | undefined>;
  setFormField(form: string, field: string, value: FormValue | undefined): void;
  /** forget what the user set in a form (after a reset of the session the objects it named are gone) */
  clearForm(form: string): void;
}

const NO_TRANSPORT = 'no transport to the backend host (not built yet)';

export const createUiSlice: Slice<UiSlice> = (set, get, ctx) => {
  const setError = (form: string, err: ErrorInfo | undefined) => set((s) => ({ errors: { ...s.errors, [form]: err } }));
  const { transport } = ctx;
  return {
    host: transport ? { state: 'connecting' } : { state: 'down', reason: NO_TRANSPORT },
    hasTransport: !!transport,
    readOnly: null,
    restartHost() { if (transport) transport.control('restart-host'); else setError('host', { code: 'HOST_DOWN', message: NO_TRANSPORT }); },
    killHost() { if (transport) transport.control('kill-host'); else setError('host', { code: 'HOST_DOWN', message: NO_TRANSPORT }); },

    theme: 'light', panel: 'devices', errors: {}, pending: {},
    setTheme: (theme) => set({ theme }),
    setPanel: (panel) => set({ panel }),
    clearError: (form) => setError(form, undefined),

    async exec(form, command) {
      const parsed = Command.safeParse(command);
      if (!parsed.success) { setError(form, describeZodError(parsed.error)); return null; }
      if (!transport) { setError(form, { code: 'HOST_DOWN', message: NO_TRANSPORT }); return null; }
      set((s) => ({ pending: { ...s.pending, [form]: true } }));
      let reply: Reply;
      try { reply = await transport.call(parsed.data); } catch (e) {
        reply = { type: 'reply', id: null, ok: false, error: { code: 'HOST_DOWN', message: (e as Error)?.message ?? String(e) } };
      }
      set((s) => ({ pending: { ...s.pending, [form]: false } }));
      if (!reply.ok) { setError(form, reply.error ?? { code: 'ERROR', message: 'the host refused the command without a reason' }); return null; }
      if (get().errors[form]) setError(form, undefined);
      if (get().host.state === 'connecting') set({ host: { state: 'up' } });
      return { result: reply.result };
    },

    async run(form, cmd, args) {
      const r = await get().exec(form, { cmd, args });
      return r ? r.result as ResultOf<typeof cmd> : null;
    },

    forms: {},
    setFormField(form, field, value) {
      set((s) => {
        const f = { ...(s.forms[form] ?? {}) };
        if (value === undefined) delete f[field]; else f[field] = value;
        return { forms: { ...s.forms, [form]: f } };
      });
    },
    clearForm(form) { set((s) => ({ forms: { ...s.forms, [form]: undefined } })); },
  };
};
