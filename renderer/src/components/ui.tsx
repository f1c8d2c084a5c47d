// Small shared pieces: the error box that sits next to the form that caused it, sections, labelled fields.
import type { ReactNode } from 'react';
import { useConsole } from '../store/context.tsx';

/** Shows the error filed under `form` (the message text of the host's reply, or of the schema check). */
export function ErrorMessage({ form, local }: { form: string; local?: string | null }) {
  const err = useConsole((s) => s.errors[form]);
  const clear = useConsole((s) => s.clearError);
  if (local) return <div className="error local" role="status" data-testid="validation-message">{local}</div>;
  if (!err) return null;
  return (
    <div className="error" role="alert" data-testid="error-message" data-form={form}>
      <span className="error-code">{err.code}</span> <span className="error-text">{err.message}</span>
      <button type="button" className="link" aria-label="dismiss error" onClick={() => clear(form)}>×</button>
    </div>
  );
}

export function Section({ title, children, actions, testid }: { title: string; children: ReactNode; actions?: ReactNode; testid?: string }) {
  return (
    <section className="card" data-testid={testid} aria-label={title}>
      <header className="card-head"><h2>{title}</h2>{actions ? <div className="card-actions">{actions}</div> : null}</header>
      <div className="card-body">{children}</div>
    </section>
  );
}

export function Field({ label, children, hint }: { label: string; children: ReactNode; hint?: string }) {
  return (
    <label className="field"><span className="field-label">{label}</span>{children}{hint ? <span className="hint">{hint}</span> : null}</label>
  );
}

export function NotBuilt({ what }: { what: string }) {
  return <p className="muted not-built">{what}: not built yet</p>;
}

export function Pending({ form }: { form: string }) {
  const p = useConsole((s) => s.pending[form]);
  return p ? <span className="pending" aria-live="polite">…</span> : null;
}

/** parse "0x.." or decimal; NaN if neither */
export function parseNum(s: string): number {
  const t = s.trim();
  if (/^0x[0-9a-f]+$/i.test(t)) return parseInt(t, 16);
  if (/^\d+$/.test(t)) return Number(t);
  return NaN;
}
