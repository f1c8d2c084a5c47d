// A handler's outcome and the helpers every handler table uses (the platform's, app/host/commands/*.ts, and the
// labs', labs/<id>/handlers.ts): a result or an error named by its errno and the field at fault. Imports nothing
// of the executor, so a lab's handlers depend on this file, not on the platform's handler table.
import os from 'node:os';
import type { ErrorInfo } from '../../protocol/messages.ts';
import type { NResult, NStatus } from '../native.ts';

export type Outcome<T> = { ok: true; result: T } | { ok: false; error: ErrorInfo };

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
export function u64n(v: number | string): number { return typeof v === 'number' ? v : Number(BigInt(v)); }
