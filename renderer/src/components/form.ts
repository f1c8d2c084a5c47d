// Form state that outlives the panel: each field the user sets is kept in the store (ui slice `forms`) under the
// form's id, so switching panels and back shows the same choices. A field the user never set shows its derived
// default (which may follow the objects that exist); once set it stays as set. `touched` says whether the user has
// changed anything since the form last succeeded: problems are shown as errors only then (see ErrorMessage).
import { useConsole } from '../store/context.tsx';
import type { FormValue } from '../store/slices/ui.ts';

export interface FormState {
  /** a field's value: what the user set, else `def` */
  get<T extends FormValue>(name: string, def: T): T;
  /** whether the user set this field */
  isSet(name: string): boolean;
  set(name: string, v: FormValue | undefined): void;
  /** [value, setter] for a text input */
  text(name: string, def: string): [string, (v: string) => void];
  touched: boolean;
  /** the form's command succeeded: keep the choices, but its next problem is not an error until the user acts */
  done(): void;
  /** the user pressed submit (problems show as errors from now on) */
  submitted(): void;
}

const TOUCHED = '__touched';

export function useForm(id: string): FormState {
  const values = useConsole((s) => s.forms[id]);
  const setField = useConsole((s) => s.setFormField);
  const set = (name: string, v: FormValue | undefined) => { setField(id, name, v); setField(id, TOUCHED, true); };
  return {
    get: <T extends FormValue>(name: string, def: T) => (values && name in values ? values[name] as T : def),
    isSet: (name) => !!values && name in values,
    set,
    text: (name, def) => [values && typeof values[name] === 'string' ? values[name] as string : def, (v: string) => set(name, v)],
    touched: values?.[TOUCHED] === true,
    done: () => setField(id, TOUCHED, false),
    submitted: () => setField(id, TOUCHED, true),
  };
}
