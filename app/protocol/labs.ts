// The protocol's composition root for the labs: every lab manifest (labs/<id>/index.ts, found by
// scripts/gen-labs.ts and imported by the generated labs/index.generated.ts) merged into the tables the platform
// reads: the lab commands (app/protocol/commands.ts), the object kinds and their facts (scenario names and
// references), the payload decoders (app/protocol/decoders.ts), the enum tables the table test compares with C++.
// No other file of app/protocol imports labs/ (app/imports.test.ts).
import { LAB_COMMANDS, LAB_MANIFESTS } from '../../labs/index.generated.ts';
import { PLATFORM_KIND_FACTS, type HandleKind, type KindFacts } from './descriptor.ts';
import type { EnumTableLike, LabManifest } from './lab-manifest.ts';
import type { PayloadDecoder } from './payload.ts';

/** Every lab's manifest, by id order. */
export const LABS: readonly LabManifest[] = LAB_MANIFESTS;
export { LAB_COMMANDS };

/** Merge one record field of every manifest; a key two labs (or a lab and `base`) declare is an error. */
function merged<T>(field: 'objectKinds' | 'handleFields' | 'enums', base: Record<string, T> = {}): Record<string, T> {
  const out: Record<string, T> = { ...base };
  for (const m of LABS) {
    for (const [k, v] of Object.entries((m[field] ?? {}) as Record<string, T>)) {
      if (k in out) throw new Error(`lab ${m.id}: ${field} "${k}" is declared twice`);
      out[k] = v;
    }
  }
  return out;
}

/** Facts of every object kind: the platform's and the labs'. */
export const KIND_FACTS = merged<KindFacts>('objectKinds', PLATFORM_KIND_FACTS) as Record<HandleKind, KindFacts>;
/** Every object kind a handle may name. */
export const OBJECT_KINDS = Object.keys(KIND_FACTS) as HandleKind[];
/** The handle fields the labs' commands add (field -> kind), as their manifests declare them. */
export const LAB_HANDLE_FIELDS = merged<string>('handleFields');
/** The labs' enum tables, by their C++ name in kEnumTables. */
export const LAB_ENUMS = merged<EnumTableLike>('enums');
/** The labs' payload decoders, in lab order. */
export const LAB_DECODERS: readonly PayloadDecoder[] = LABS.flatMap((m) => m.decoders ?? []);
