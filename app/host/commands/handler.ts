// The typed handler table of the device commands: one handler per device command descriptor
// (app/protocol/commands/*.ts), in per-domain files keyed by the descriptor table of the same domain, so a command
// without a handler, or a handler returning something other than the command's result schema, is a compile error.
// Handlers run against the NativeExecutor (its session and its state: network devices, autorun, the load generator).
import type { CommandArgs, CommandName, DESCRIPTORS, ResultOf } from '../../protocol/index.ts';
import type { NativeExecutor } from '../executor.ts';
import type { NPost } from '../native.ts';
import { errnoName, fail, ok, type Outcome } from './outcome.ts';

export { errnoName, fail, ok, res, st, u64n, type Outcome } from './outcome.ts';

/** Commands the device executor answers (the others are answered by host extensions: journal, recorder, labs). */
export type DeviceCommandName = {
  [N in CommandName]: (typeof DESCRIPTORS)[N] extends { answeredBy: 'host' } ? never : N
}[CommandName];

export type Handler<N extends DeviceCommandName> = (x: NativeExecutor, a: CommandArgs<N>) => Outcome<ResultOf<N>>;
/** The handlers of one domain's descriptor table. */
export type Handlers<T> = { [N in keyof T & DeviceCommandName]: Handler<N> };

/** a post verb: bad_wr names the work request at fault */
export function post(r: NPost, n: number): Outcome<{ posted: number }> {
  if (!r.err) return ok({ posted: n });
  const at = r.badWr < n ? r.badWr : undefined;
  const f = fail(errnoName(r.err), `${at !== undefined ? `args.wrs.${at}: ` : ''}${r.msg || errnoName(r.err)}`, at !== undefined ? `args.wrs.${at}` : undefined);
  if (at !== undefined) f.error.badWr = at;
  return f;
}
