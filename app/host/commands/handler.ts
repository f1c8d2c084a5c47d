// The typed handler table of the device commands: one handler per device command descriptor
// (app/protocol/commands/*.ts), in per-domain files keyed by the descriptor table of the same domain, so a command
// without a handler, or a handler returning something other than the command's result schema, is a compile error.
// Handlers run against the NativeExecutor (its session and its state: network devices, autorun, the load generator).
import os from 'node:os';
import type { CommandArgs, CommandName, DESCRIPTORS, ErrorInfo, ResultOf } from '../../protocol/index.ts';
import type { NativeExecutor } from '../executor.ts';
import type { NPost, NResult, NStatus } from '../native.ts';

/** Commands the device executor answers (the others are answered by host extensions: journal, recorder, labs). */
export type DeviceCommandName = {
  [N in CommandName]: (typeof DESCRIPTORS)[N] extends { answeredBy: 'host' } ? never : N
}[CommandName];

export type Outcome<T> = { ok: true; result: T } | { ok: false; error: ErrorInfo };
export type Handler<N extends DeviceCommandName> = (x: NativeExecutor, a: CommandArgs<N>) => Outcome<ResultOf<N>>;
/** The handlers of one domain's descriptor table. */
export type Handlers<T> = { [N in keyof T & DeviceCommandName]: Handler<N> };

const ERRNO_NAMES = new Map<number, string>();
for (const [name, value] of Object.entries(os.constants.errno)) {
  // Linux has EOPNOTSUPP == ENOTSUP (95) and EWOULDBLOCK == EAGAIN; prefer the names rdma-core uses.
  if (!ERRNO_NAMES.has(value) || name === 'EOPNOTSUPP' || name === 'EAGAIN') ERRNO_NAMES.set(value, name);
}
export function errnoName(err: number): string {
  return ERRNO_NAMES.get(Math.abs(err)) ?? `E${Math.abs(err)}`;
}

export const ok = <T>(result: T): Outcome<T> => ({ ok: true, result });
export const fail = (code: string, message: string, field?: string): { ok: false; error: ErrorInfo } =>
  ({ ok: false, error: { code, message, ...(field ? { field } : {}) } });
/** a native status: the error (errno name + the core's message) or `result` */
export function st<T>(s: NStatus, result: T, field?: string): Outcome<T> {
  return s.err ? fail(errnoName(s.err), s.msg || `${errnoName(s.err)}`, field) : ok(result);
}
/** a native result mapped to the command's result */
export function res<V, T>(r: NResult<V>, map: (v: V) => T, field?: string): Outcome<T> {
  return r.err ? fail(errnoName(r.err), r.msg || `${errnoName(r.err)}`, field) : ok(map(r.value as V));
}
/** a post verb: bad_wr names the work request at fault */
export function post(r: NPost, n: number): Outcome<{ posted: number }> {
  if (!r.err) return ok({ posted: n });
  const at = r.badWr < n ? r.badWr : undefined;
  const f = fail(errnoName(r.err), `${at !== undefined ? `args.wrs.${at}: ` : ''}${r.msg || errnoName(r.err)}`, at !== undefined ? `args.wrs.${at}` : undefined);
  if (at !== undefined) f.error.badWr = at;
  return f;
}
export function u64n(v: number | string): number { return typeof v === 'number' ? v : Number(BigInt(v)); }
