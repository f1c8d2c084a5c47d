// The one command protocol: every request from the UI, a scenario file or the CLI is one of these.
// Each command is one descriptor (app/protocol/descriptor.ts) in a per-domain table (app/protocol/commands/*.ts):
// its argument shape, its result schema and its facts. The zod schemas are built here by a factory over the
// handle type, so that the live protocol (numeric handles) and the scenario format (handles or object names such
// as "qp1") come from the same source.
import { z } from 'zod';
import { handleFactory, type AnsweredBy, type CommandDescriptor, type HandleFactory, type HandleKind } from './descriptor.ts';
import { makeShared, type Shared } from './commands/shared.ts';
import { sessionCommands } from './commands/session.ts';
import { deviceCommands } from './commands/device.ts';
import { memoryCommands } from './commands/memory.ts';
import { queueCommands } from './commands/queues.ts';
import { engineCommands } from './commands/engine.ts';
import { scenarioConsoleCommands } from './commands/scenario.ts';
import { labCommands } from './commands/lab.ts';
import { attachCommands } from './commands/attach.ts';
import { LAB_COMMANDS } from './labs.ts';   // the commands of the labs (their manifests, labs/<id>/index.ts)

export { U64 } from './commands/shared.ts';

/** Every command's descriptor, by name. */
export const DESCRIPTORS = {
  ...sessionCommands, ...deviceCommands, ...memoryCommands, ...queueCommands, ...engineCommands,
  ...scenarioConsoleCommands, ...labCommands, ...attachCommands, ...LAB_COMMANDS,
};
type Table = typeof DESCRIPTORS;
export type CommandName = keyof Table;
const NAMES = Object.keys(DESCRIPTORS) as CommandName[];
const desc = (n: string): CommandDescriptor<z.ZodRawShape, z.ZodType, Shared> | undefined =>
  (DESCRIPTORS as Record<string, CommandDescriptor<z.ZodRawShape, z.ZodType, Shared>>)[n];

type ArgsShape<N extends CommandName> = ReturnType<Table[N]['args']>;
/** A validated command (defaults filled in), as the host executes it. */
export type Command = { [N in CommandName]: { cmd: N; args: z.output<z.ZodObject<ArgsShape<N>, z.core.$strict>> } }[CommandName];
/** A command as a client may send it (defaults may be left out). */
export type CommandInput = { [N in CommandName]: { cmd: N; args: z.input<z.ZodObject<ArgsShape<N>, z.core.$strict>> } }[CommandName];
export type CommandArgs<N extends CommandName> = Extract<Command, { cmd: N }>['args'];
/** A command's arguments as a client may send them (defaults may be left out); stays generic in N. */
export type CommandArgsIn<N extends CommandName> = z.input<z.ZodObject<ArgsShape<N>, z.core.$strict>>;
/** The result of a successful command (typed end to end: the host's handler returns exactly this). */
export type ResultOf<N extends CommandName> = z.output<Table[N]['result']>;
/** The result schema of a command (to check a reply at run time). */
export function resultSchema<N extends CommandName>(n: N): Table[N]['result'] { return DESCRIPTORS[n].result; }

// ---- facts, read by every stage (journal, recorder, scenario loader/runner, C export, executor)
/** Commands of the scenario format (scenario.* and lab.* are console commands of host extensions). */
export type StepCommandName = { [N in CommandName]: Table[N] extends { step: false } ? never : N }[CommandName];
export const STEP_COMMANDS = NAMES.filter((n) => desc(n)!.step !== false) as StepCommandName[];
/** Commands the scenario format accepts (device commands), in table order. */
export const COMMAND_NAMES = STEP_COMMANDS;
/** Only reads state: not journaled (replaying it changes nothing). */
export function isReadOnly(cmd: string): boolean { return !!desc(cmd)?.readOnly; }
/** Never a scenario step (observation, session control, console commands). */
export function isRecorded(cmd: string): boolean { return desc(cmd)?.recorded !== false; }
/** Where the command is answered. */
export function answeredBy(cmd: string): AnsweredBy { return desc(cmd)?.answeredBy ?? 'device'; }
/** The kind of object each creating command makes (the kind a name has after `"as"`). */
export function createsOf(cmd: string): HandleKind | undefined { return desc(cmd)?.creates; }
/** What a network step does ("puts a device on a real network"), or null when the step is not one. */
export function networkPhrase(cmd: string, args: unknown): string | null {
  return desc(cmd)?.network?.((args ?? {}) as Record<string, unknown>) ?? null;
}

/** The zod schemas of every command over a handle schema (live: integers; scenario: names or integers). */
export function makeCommands(H: () => z.ZodType, names: readonly CommandName[] = NAMES) {
  const h: HandleFactory = handleFactory(H);
  const shared = makeShared(h);
  const list = names.map((name) => z.object({ cmd: z.literal(name), args: z.object(desc(name)!.args(h, shared)).strict() }).strict());
  return { ...shared, h, list, Command: z.discriminatedUnion('cmd', list as unknown as [z.ZodObject, ...z.ZodObject[]]) };
}

/** Live protocol: handles are positive integers issued by the backend host. */
export const HandleSchema = z.number().int().min(1).max(0xffffffff);
export const Live = makeCommands(() => HandleSchema.clone());
export const Command = Live.Command as unknown as z.ZodType<Command, CommandInput>;
export type SendWr = z.infer<typeof Live.SendWr>;
export type RecvWr = z.infer<typeof Live.RecvWr>;
export type QpAttr = z.infer<typeof Live.QpAttr>;
