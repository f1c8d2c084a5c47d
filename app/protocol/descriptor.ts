// One descriptor per command (the model is rdma-core's verbs ops tables and rxe's rxe_wr_opcode_info: the facts
// of an operation in one table, read by every stage). A descriptor names the command's argument shape, its
// result schema, the kind of object it creates, whether it only reads state (not journaled), whether a scenario
// records it as a step, and why a headless run refuses it (network steps). The journal, the scenario recorder,
// loader and runner, the C export, schema generation and the executor read these descriptors; none keeps its own
// list. Handlers (app/host/commands/*.ts) and C emitters are keyed by the same names, so a command without one is
// a compile error. This file and app/protocol/commands/* import nothing from Node: the renderer imports them.
import { z } from 'zod';

/** The kinds of object a handle names: rdma-core's ibv_* objects plus the lab's buffers and devices. A lab adds its
 *  own (lab 4's soft NVMe function and nvme_ctrl) in its manifest (labs/<id>/index.ts `objectKinds`); the composed
 *  list is OBJECT_KINDS of app/protocol/labs.ts. */
export const PLATFORM_KINDS = ['device', 'pd', 'buffer', 'mr', 'mw', 'cq', 'srq', 'qp', 'ah'] as const;
export type PlatformKind = (typeof PLATFORM_KINDS)[number];
/** Names of the object kinds labs add, declared by each lab's manifest (module augmentation) for the type checker. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface LabObjectKinds {}
export type HandleKind = PlatformKind | (keyof LabObjectKinds & string);

/** Facts per object kind: the prefix of a recorded name ("mr0") and the fields of its latest result a scenario
 *  reference may name ("$mrA.rkey"). */
export interface KindFacts { prefix: string; refFields: readonly string[] }
export const PLATFORM_KIND_FACTS: Record<PlatformKind, KindFacts> = {
  device: { prefix: 'dev', refFields: ['handle'] },
  pd: { prefix: 'pd', refFields: ['handle'] },
  buffer: { prefix: 'buf', refFields: ['handle', 'addr', 'length'] },
  mr: { prefix: 'mr', refFields: ['handle', 'lkey', 'rkey', 'addr', 'length', 'iova'] },
  mw: { prefix: 'mw', refFields: ['handle', 'rkey'] },
  cq: { prefix: 'cq', refFields: ['handle', 'cqe'] },
  srq: { prefix: 'srq', refFields: ['handle'] },
  qp: { prefix: 'qp', refFields: ['handle', 'qpNum'] },
  ah: { prefix: 'ah', refFields: ['handle'] },
};

// ---- handle positions. A command's argument shape asks for `h('pd')`, `h('cq')`, …: the live protocol gets a
// positive integer, the scenario format a name or an integer; both remember which kind the position names, so the
// scenario loader/recorder/runner learn the handle fields from the schemas instead of a list.
const handleKinds = new WeakMap<z.ZodType, HandleKind>();
/** The kind of object a schema position names, if it is a handle position. */
export function handleKindOf(s: z.ZodType): HandleKind | undefined { return handleKinds.get(s); }

/** Live handle schemas are typed as numbers; the scenario's (names or numbers) reuse the shapes at run time. */
export type HandleFactory = (kind: HandleKind) => z.ZodType<number>;
export function handleFactory(base: () => z.ZodType): HandleFactory {
  const memo = new Map<HandleKind, z.ZodType>();
  return (kind) => {
    let s = memo.get(kind);
    if (!s) { s = base(); handleKinds.set(s, kind); memo.set(kind, s); }
    return s as z.ZodType<number>;
  };
}

/** Where a command is answered: the device executor (journaled when it changes state) or the backend host
 *  (an extension registered with HostCore.register: the scenario recorder, labs). */
export type AnsweredBy = 'device' | 'host';

export interface CommandDescriptor<S extends z.ZodRawShape = z.ZodRawShape, R extends z.ZodType = z.ZodType, X = unknown> {
  /** the argument shape; `h` gives handle positions, `x` the shared work-request/attribute schemas */
  args: (h: HandleFactory, x: X) => S;
  /** the reply's result (what the handler returns on success) */
  result: R;
  /** the kind of object the command creates (the kind an "as" name has in a scenario) */
  creates?: HandleKind;
  /** only reads state: not journaled, not replayed (the host recorder does not make it a step) */
  readOnly?: boolean;
  /** false: never a scenario step (observation or session control), even when recorded live */
  recorded?: boolean;
  /** default 'device' */
  answeredBy?: AnsweredBy;
  /** false: not part of the scenario format at all (console commands of a host extension: scenario.*, lab.*) */
  step?: boolean;
  /** non-null: the step needs a real network and another host; the phrase says what it does ("puts a device on a
   *  real network"); a headless run refuses it (networkStepReason) */
  network?: (args: Record<string, unknown>) => string | null;
}

/** Identity helper that keeps each descriptor's literal types (its shape, its result, answeredBy). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function command<D extends CommandDescriptor<z.ZodRawShape, z.ZodType, any>>(d: D): D { return d; }

// ---- pieces of result schemas shared by several commands (results are produced by the host: numbers for handles)
export const RHandle = z.number().int();
/** 64-bit values in results: a number up to 2^53-1, a "0x…" string above */
export const RU64 = z.union([z.number(), z.string()]);
