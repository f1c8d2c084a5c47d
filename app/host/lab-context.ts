// What a lab's executor handlers (labs/<id>/handlers.ts, declared in its manifest) may use of the device executor,
// and the type of their table over the lab's own descriptor table. A lab depends on this file and on
// commands/outcome.ts, never on the executor or on the platform's handler table, so the composed handler table
// (commands/index.ts, through labs/handlers.generated.ts) forms no import circle with the labs.
import type { z } from 'zod';
import type { Command } from '../protocol/commands.ts';
import type { DeviceEvent } from '../protocol/messages.ts';
import type { ExecResult } from './api.ts';
import type { NDevice, NativeAddon, NativeSession } from './native.ts';
import type { Outcome } from './commands/outcome.ts';

/** The executor as a lab handler sees it (NativeExecutor implements it). */
export interface LabContext {
  readonly addon: NativeAddon;
  /** the device session */
  readonly s: NativeSession;
  /** run another command on the same executor (journaled as part of the lab command) */
  exec(command: Command): ExecResult;
  deviceInfo(h: number): NDevice | undefined;
  /** the device's events not yet sent to the console (a lab agent reads its engine's steps here) */
  pendingEvents(): readonly DeviceEvent[];
  /** the lab's agent state for the current session, made on first use (a session.reset starts it over) */
  labState<T>(lab: string, make: () => T): T;
}

/** A lab command's parsed arguments, from the lab's own descriptor table. */
export type LabArgs<T, N extends keyof T> =
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  T[N] extends { args: (...a: any[]) => infer S extends z.ZodRawShape } ? z.output<z.ZodObject<S, z.core.$strict>> : never;
/** A lab command's result, from the lab's own descriptor table. */
export type LabResult<T, N extends keyof T> = T[N] extends { result: infer R extends z.ZodType } ? z.output<R> : never;
/** The handlers of a lab's descriptor table: one per command, typed by its arguments and result. */
export type LabHandlers<T> = { [N in keyof T]: (x: LabContext, a: LabArgs<T, N>) => Outcome<LabResult<T, N>> };
