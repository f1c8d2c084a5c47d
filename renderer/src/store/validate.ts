// Validation as you type: the same zod schemas the host uses, plus the verbs rules rdma-core enforces at
// call time that a schema cannot express (ibv_reg_mr: REMOTE_WRITE / REMOTE_ATOMIC need LOCAL_WRITE).
import { Command, describeZodError } from '../../../app/protocol/index.ts';

export function accessProblem(access: readonly string[]): string | null {
  const needsLocal = access.filter((a) => a === 'IBV_ACCESS_REMOTE_WRITE' || a === 'IBV_ACCESS_REMOTE_ATOMIC');
  if (needsLocal.length && !access.includes('IBV_ACCESS_LOCAL_WRITE'))
    return `${needsLocal.join(' and ')} need${needsLocal.length === 1 ? 's' : ''} IBV_ACCESS_LOCAL_WRITE (ibv_reg_mr would fail with EINVAL)`;
  return null;
}

/** null when the command is valid; else one sentence naming the field */
export function commandProblem(command: { cmd: string; args: unknown }): string | null {
  const r = Command.safeParse(command);
  if (!r.success) return describeZodError(r.error).message.replace(/^args\./, '');
  // (a window's access is not an MR's: ibv_bind_mw checks the MR it binds to — MW_BIND, LOCAL_WRITE for a writable
  // window — and the device says so in the bind's completion, so no rule of ibv_reg_mr applies to mw.bind here)
  if (command.cmd === 'mr.reg' || command.cmd === 'mr.rereg') {
    const acc = (command.args as { access?: string[] }).access ?? [];
    return accessProblem(acc);
  }
  return null;
}
