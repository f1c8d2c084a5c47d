// Lab 1 (scatter lists under one key) in the console: the lab's own panel (labs/sg/panel.tsx) over the host's
// sg.* commands, sent through the store like every other command.
import { useCallback } from 'react';
import { useConsole, useConsoleStore } from '../store/context.tsx';
import { SgPanel, type SgCall } from '../../../labs/sg/panel.tsx';

export function SgLabPanel() {
  const exec = useConsole((s) => s.exec);
  const store = useConsoleStore();
  const call: SgCall = useCallback(async (cmd, args) => {
    const form = `lab.sg:${cmd}`;
    const r = await exec(form, { cmd, args });
    if (r) return { ok: true, result: r.result };
    const e = store.getState().errors[form];
    store.getState().clearError(form);       // the panel shows it next to what failed
    return { ok: false, error: { code: e?.code ?? 'ERROR', message: e?.message ?? 'the host refused the command' } };
  }, [exec, store]);
  return <SgPanel call={call} />;
}
