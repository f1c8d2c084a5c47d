// The scenario file format: a named, seeded list of protocol commands with named objects and expectations.
// Built from the same command factory as the live protocol (commands.ts) so the two cannot drift: every
// handle position accepts an object name ("pd0", "qp1") or a raw handle, and every numeric position also
// accepts a reference to a field of an earlier result ("$mrA.rkey", "$bufA.addr+64", "$mrA.rkey^0x01").
//
// Reference syntax (exact):
//   ref    := "$" name "." field [ op int ]
//   name   := [A-Za-z][A-Za-z0-9_]{0,31}        an object named by a device entry or by an earlier step's "as"
//   field  := [A-Za-z][A-Za-z0-9]{0,31}          a field of that object's latest result (see REF_FIELDS)
//   op     := "+" | "-" | "^"                    add, subtract, xor (xor 0x01 flips the low bit of a key byte)
//   int    := decimal digits | "0x" hex digits    at most 2^53-1
// The resolved value is the field value with the operation applied, computed in 64-bit unsigned arithmetic
// (wrapping), and must then fit the target field of the command (checked like a literal).
import { z } from 'zod';
import { BthOpcode, type BthOpcodeName } from './bth.ts';
import { makeCommands, HandleSchema, STEP_COMMANDS, U64, createsOf, networkPhrase } from './commands.ts';
import { handleKindOf, type HandleKind } from './descriptor.ts';
import { KIND_FACTS, OBJECT_KINDS } from './labs.ts';
import { REF_RE } from './ref.ts';

export { REF_RE, parseRef, type Ref } from './ref.ts';
import { EventType, KeyState, QpState, WcFlag, WcOpcode, WcStatus } from './enums.ts';

export const SCENARIO_VERSION = 1;
export const SCENARIO_MAX_BYTES = 4 * 1024 * 1024;
export const SCENARIO_MAX_STEPS = 10_000;

export const NAME_RE = /^[A-Za-z][A-Za-z0-9_]{0,31}$/;
export const DEVICE_NAME_RE = /^[a-z][a-z0-9_]{0,31}$/;

export const ObjectName = z.string().regex(NAME_RE, 'an object name: a letter, then letters, digits or _ (at most 32)');
export const DeviceName = z.string().regex(DEVICE_NAME_RE, 'a device name: lower-case letter, then [a-z0-9_] (at most 32)');
export const RefString = z.string().regex(REF_RE, 'a reference "$name.field" optionally followed by +N, -N or ^N');

/** A handle position in a scenario: an object name (preferred) or a raw numeric handle. */
export const NameOrHandle = z.union([ObjectName, HandleSchema]);

export function isRefString(v: unknown): v is string { return typeof v === 'string' && v.startsWith('$'); }

export type ObjectKind = HandleKind | 'result';
/** The kind of object each creating command makes (from the descriptors' `creates`). */
export const CREATES: Readonly<Record<string, HandleKind>> = Object.fromEntries(
  STEP_COMMANDS.flatMap((c) => { const k = createsOf(c); return k ? [[c, k]] : []; }));
/** Fields a reference may name, per object kind ("result": any field of a named non-creating step's result). */
export const REF_FIELDS: Record<HandleKind, readonly string[]> = Object.fromEntries(OBJECT_KINDS.map((k) => [k, KIND_FACTS[k].refFields])) as Record<HandleKind, readonly string[]>;

/** Steps that need a real network and another host (the descriptors' `network`: device.attachNet/detachNet,
 *  qp.connect to a remote QP, qp.modify with a remote dgid): they are recorded like any step, but a headless
 *  scenario cannot replay them deterministically (the other host is not there, the clock runs in real time), so
 *  runners refuse them with this reason instead of pretending. null for every other step. */
export function networkStepReason(cmd: string, args: unknown): string | null {
  const what = networkPhrase(cmd, args);
  if (!what) return null;
  return `${cmd} ${what}: a headless scenario cannot replay network steps deterministically (the remote host is not `
    + 'part of the scenario and the UDP transport runs the session in real time); run it live in the console with the other host';
}

// ------------------------------------------------------------------ schema transformation
// Walk a command schema and let every numeric position also take a reference string. Handle positions (the
// NameOrHandle instance) are left alone. Checks (min/max on arrays) and strictness are preserved by cloning.
type AnySchema = z.ZodType;
const defOf = (s: AnySchema) => (s as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
const cloneWith = (s: AnySchema, patch: Record<string, unknown>) =>
  (s as unknown as { clone(def: unknown): AnySchema }).clone({ ...defOf(s), ...patch });
const NumOrRefMemo = new WeakMap<AnySchema, AnySchema>();

function acceptsNumber(s: AnySchema): boolean {
  const d = defOf(s);
  if (d.type === 'number') return true;
  if (d.type === 'union') return (d.options as AnySchema[]).some(acceptsNumber);
  return false;
}

export function withRefs(s: AnySchema): AnySchema {
  if (handleKindOf(s)) return s;
  const d = defOf(s);
  switch (d.type) {
    case 'number':
    case 'union': {
      if (!acceptsNumber(s)) return s;
      let r = NumOrRefMemo.get(s);
      if (!r) { r = z.union([s, RefString]); NumOrRefMemo.set(s, r); }
      return r;
    }
    case 'object': {
      const shape = d.shape as Record<string, AnySchema>;
      const next: Record<string, AnySchema> = {};
      for (const [k, v] of Object.entries(shape)) next[k] = withRefs(v);
      return cloneWith(s, { shape: next });
    }
    case 'array': return cloneWith(s, { element: withRefs(d.element as AnySchema) });
    case 'optional':
    case 'default':
    case 'nullable':
      return cloneWith(s, { innerType: withRefs(d.innerType as AnySchema) });
    default: return s;
  }
}

// ------------------------------------------------------------------ expectations
const NumOrRef = z.union([z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), RefString]);
const U64OrRef = z.union([U64, RefString]);
const HexBytes = z.string().regex(/^([0-9a-fA-F]{2})*$/, 'hex bytes, two digits per byte').max(2 * 1024 * 1024);

export { WcFlag };

/** One expected work completion (fields not given are not compared). */
export const WcExpect = z.object({
  status: z.enum(WcStatus.names),
  opcode: z.enum(WcOpcode.names).optional(),
  byteLen: NumOrRef.optional(),
  wrId: U64OrRef.optional(),
  immData: NumOrRef.optional(),
  invalidatedRkey: NumOrRef.optional(),
  wcFlags: z.array(z.enum(WcFlag.names)).max(4).optional(),   // exactly these flags (no others)
  wcFlagsSet: z.array(z.enum(WcFlag.names)).max(4).optional(),    // these bits are set (others not compared)
  wcFlagsClear: z.array(z.enum(WcFlag.names)).max(4).optional(),  // these bits are clear (others not compared)
  qp: ObjectName.optional(),          // the completion's qp_num must be this QP's
}).strict();

export { BthOpcode, type BthOpcodeName };
const bthNames = Object.keys(BthOpcode) as [BthOpcodeName, ...BthOpcodeName[]];
/** AETH syndromes by class (type bits 6:5; NAK codes in bits 4:0). */
export const SyndromeNames = ['ACK', 'RNR_NAK', 'NAK_PSN_SEQ_ERR', 'NAK_INVALID_REQUEST', 'NAK_REMOTE_ACCESS_ERROR', 'NAK_REMOTE_OP_ERROR'] as const;

/** Packets seen on the wire during this step, matching all given fields: exactly `count`, or at least `min` (default 1). */
export const PacketExpect = z.object({
  opcode: z.enum(bthNames),
  syndrome: z.enum(SyndromeNames).optional(),
  count: z.number().int().min(0).max(1_000_000).optional(),   // exactly this many
  min: z.number().int().min(1).max(1_000_000).optional(),     // at least this many (default 1 when count is absent)
  from: ObjectName.optional(),        // sending device
}).strict();

export const Expect = z.object({
  /** The verb fails with this errno name (EINVAL, EOPNOTSUPP, EBUSY, ...). Without it a failing verb fails the step. */
  error: z.string().regex(/^E[A-Z0-9_]{1,31}$/, 'an errno name such as "EINVAL"').optional(),
  /** cq.poll only: exactly these completions, in this order. */
  wc: z.array(WcExpect).max(4096).optional(),
  /** Bytes at an address after the step (read back through memory.read). */
  bytes: z.array(z.object({ addr: NumOrRef, hex: HexBytes.min(2) }).strict()).max(64).optional(),
  /** Async events raised during this step (in any order; others may also occur). */
  asyncEvent: z.array(z.object({ type: z.enum(EventType.names), obj: ObjectName.optional() }).strict()).max(64).optional(),
  /** Async events that must NOT be raised during this step (on `obj`, or on any object when obj is absent). */
  noAsyncEvent: z.array(z.object({ type: z.enum(EventType.names), obj: ObjectName.optional() }).strict()).max(64).optional(),
  /** post.send / post.recv / srq.post_recv refused: the index of the refused work request (ibv_post_send's bad_wr). */
  badWr: z.number().int().min(0).max(1_000_000).optional(),
  /** State of an MR or MW key after the step. */
  keyState: z.array(z.object({ key: ObjectName, state: z.enum(KeyState.names) }).strict()).max(64).optional(),
  /** Packets seen on the wire during this step. */
  packet: z.array(PacketExpect).max(64).optional(),
  /** State of a QP after the step (read back through qp.query). */
  qpState: z.array(z.object({ qp: ObjectName, state: z.enum(QpState.names) }).strict()).max(64).optional(),
  /** Fields of the step's result (deep partial match; numbers may be references). */
  result: z.record(z.string(), z.unknown()).optional(),
}).strict();
export type Expect = z.infer<typeof Expect>;

// ------------------------------------------------------------------ steps and the file
export const ScenarioCommands = makeCommands(() => z.union([ObjectName, HandleSchema]), STEP_COMMANDS);
/** Values captured just before a step runs, under a new name: `"capture": { "as": "old", "fields": { "rkey":
 *  "$mrA.rkey" } }` makes "$old.rkey" the value "$mrA.rkey" had before the step (which may change it). */
export const Capture = z.object({
  as: ObjectName,
  fields: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9]{0,31}$/, 'a field name'), RefString),
}).strict();
const stepExtras = {
  as: ObjectName.optional(),
  capture: Capture.optional(),
  note: z.string().max(2000).optional(),
  expect: Expect.optional(),
};
/** One step schema per command, keyed by command name (args accept names and references). */
export const StepByCmd: Record<string, AnySchema> = Object.fromEntries(
  ScenarioCommands.list.map((c) => {
    const shape = c.shape;
    const name = shape.cmd.value;
    const args = withRefs(shape.args as AnySchema);
    return [name, z.object({ cmd: z.literal(name), args: (args as z.ZodObject).prefault({}), ...stepExtras }).strict()];
  }),
);
export const SCENARIO_COMMANDS = Object.keys(StepByCmd);

/** Which kind of object each handle field of a command names, learned from the schemas' handle positions
 *  (`h('cq')` in the descriptors). A field name names one kind everywhere (checked here). */
export const HANDLE_FIELDS: Readonly<Record<string, HandleKind>> = (() => {
  const out: Record<string, HandleKind> = {};
  const walk = (s: AnySchema, key?: string) => {
    const k = handleKindOf(s);
    if (k && key) {
      if (out[key] && out[key] !== k) throw new Error(`handle field "${key}" names both ${out[key]} and ${k}`);
      out[key] = k;
      return;
    }
    const d = defOf(s);
    if (d.type === 'object') for (const [f, v] of Object.entries(d.shape as Record<string, AnySchema>)) walk(v, f);
    else if (d.type === 'array') walk(d.element as AnySchema, key);
    else if (d.type === 'optional' || d.type === 'default' || d.type === 'nullable' || d.type === 'prefault') walk(d.innerType as AnySchema, key);
    else if (d.type === 'union') for (const o of d.options as AnySchema[]) walk(o, key);
  };
  for (const c of ScenarioCommands.list) walk(c.shape.args as AnySchema);
  return out;
})();
export const Step = z.discriminatedUnion('cmd', Object.values(StepByCmd) as unknown as [z.ZodObject, ...z.ZodObject[]]);
export type Step = { cmd: string; args: Record<string, unknown>; as?: string; capture?: z.infer<typeof Capture>; note?: string; expect?: Expect };

export const DeviceDecl = z.object({
  name: DeviceName,
  profile: z.string().min(1).max(32),
}).strict();

export const ScenarioHeader = z.object({
  verbslab: z.literal('scenario'),
  version: z.literal(SCENARIO_VERSION),
  name: z.string().min(1).max(200),
  description: z.string().max(20_000).default(''),
  seed: z.number().int().min(0).max(2 ** 32 - 1).default(1),
  devices: z.array(DeviceDecl).min(1).max(16),
}).strict();

export const Scenario = ScenarioHeader.extend({ steps: z.array(Step).max(SCENARIO_MAX_STEPS) }).strict();
export type Scenario = Omit<z.infer<typeof ScenarioHeader>, never> & { steps: Step[] };

/** JSON Schema (draft 2020-12) of the scenario file, as published in scenarios/scenario.schema.json. */
export function scenarioJsonSchema(): Record<string, unknown> {
  const js = z.toJSONSchema(Scenario, { io: 'input', unrepresentable: 'any', reused: 'ref' }) as Record<string, unknown>;
  return {
    $schema: js.$schema,
    $id: 'https://verbslab.invalid/scenario.schema.json',
    title: 'Verbs Lab scenario',
    description: 'A named, seeded list of Verbs Lab protocol commands with named objects, references ("$mrA.rkey") and expectations. Generated from app/protocol/scenario.ts.',
    ...Object.fromEntries(Object.entries(js).filter(([k]) => k !== '$schema')),
  };
}
