// Small shared pieces: the error box that sits next to the form that caused it, sections, labelled fields.
import type { ReactNode } from 'react';
import { useConsole } from '../store/context.tsx';

/** Shows the error filed under `form` (the message text of the host's reply, or of the schema check). */
/** `local`: the form's own problem as you type; shown as an error once the user `touched` the form, before that as
 *  a plain hint (what is still missing) so a form never touched is not red */
export function ErrorMessage({ form, local, touched = true }: { form: string; local?: string | null; touched?: boolean }) {
  const err = useConsole((s) => s.errors[form]);
  const clear = useConsole((s) => s.clearError);
  if (local && touched) return <div className="error local" role="status" data-testid="validation-message">{local}</div>;
  if (local && !err) return <div className="hint todo" data-testid="form-hint">{local}</div>;
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
