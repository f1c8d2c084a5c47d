// ibv_rereg_mr (IBV_REREG_MR_CHANGE_ACCESS): new access flags for a registered MR. The device gives it a new key
// byte (rxe: the key changes on re-registration) and the key table follows its event.
import { Access } from '../../../app/protocol/index.ts';
import { useConsole, useModel } from '../store/context.tsx';
import { commandProblem } from '../store/validate.ts';
import { useForm } from '../components/form.ts';
import { ErrorMessage, Field, Pending } from '../components/ui.tsx';
import { fmtHex } from '../format.ts';

export function ReregForm() {
  useConsole((s) => s.versions.keys);
  const model = useModel();
  const exec = useConsole((s) => s.exec);
  const f = useForm('mr.rereg');
  const mrs = model.keys.rows(false).filter((k) => k.type === 'MR' && k.kind === 'user');
  const m = mrs.find((x) => x.handle === Number(f.get('mr', ''))) ?? mrs[0];
  const access = f.get<readonly string[]>('access', ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_READ']);
  const args = { mr: m?.handle ?? 0, access: [...access] };
  const problem = !m ? 'register an MR first' : commandProblem({ cmd: 'mr.rereg', args });
  const toggle = (n: string) => f.set('access', access.includes(n) ? access.filter((x) => x !== n) : [...access, n]);
  return (
    <form className="form" aria-label="re-register MR" data-testid="rereg-form"
      onSubmit={(e) => { e.preventDefault(); f.submitted(); if (!problem) void exec('mr.rereg', { cmd: 'mr.rereg', args }).then((r) => r && f.done()); }}>
      <Field label="MR"><select data-testid="rereg-mr" value={m?.handle ?? ''} onChange={(e) => f.set('mr', e.target.value)}>
        {mrs.map((x) => <option key={x.handle} value={x.handle}>MR {x.handle} lkey {fmtHex(x.lkey, 8)}</option>)}</select></Field>
      <fieldset className="checks" aria-label="new access flags">
        {Access.names.filter((n) => n !== 'IBV_ACCESS_ZERO_BASED').map((n) => (
          <label key={n}><input type="checkbox" checked={access.includes(n)} onChange={() => toggle(n)} />{n.replace('IBV_ACCESS_', '')}</label>))}
      </fieldset>
      <button type="submit" data-testid="rereg" disabled={!!problem}>Re-register (mr.rereg)</button><Pending form="mr.rereg" />
      <ErrorMessage form="mr.rereg" local={problem} touched={f.touched} />
    </form>
  );
}
