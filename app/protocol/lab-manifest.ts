// What a lab adds to the platform, declared in one place: labs/<id>/index.ts, whose default export is
// defineLab({...}). The platform never imports a lab by name: scripts/gen-labs.ts writes the generated indexes
// (labs/*.generated.ts: the manifests, their C emitters, executor handlers, host extensions and panels), and only the
// composition roots read them (app/protocol/labs.ts, app/scenario/export-c.ts, app/host/commands/index.ts,
// app/host/main.ts, renderer/src/panels/labs.ts; app/imports.test.ts checks no other platform file imports labs/).
// The manifest itself is browser-safe data (the console reads it too); what runs only in Node or only in the
// console is named by module, relative to the lab's folder.
import type { CommandDescriptor, KindFacts } from './descriptor.ts';
import type { PayloadDecoder } from './payload.ts';

/** an enum table as app/protocol/enums.ts `table()` builds it */
export interface EnumTableLike { values: Record<string, number>; names: readonly string[] }

export interface LabManifest {
  /** the lab's folder name (labs/<id>/) and lab.json's id */
  id: string;
  /** the lab's own commands: descriptor tables merged into the protocol (app/protocol/commands.ts) */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  commands?: Record<string, CommandDescriptor<any, any, any>>;
  /** object kinds the lab's commands create (handle kinds), with their facts; declare the names for the type
   *  checker too: `declare module '../../app/protocol/descriptor.ts' { interface LabObjectKinds { nvme: true } }` */
  objectKinds?: Record<string, KindFacts>;
  /** handle fields the lab's commands add (field name -> kind); the scenario format learns them from the schemas,
   *  app/scenario/schema.test.ts checks the two agree */
  handleFields?: Record<string, string>;
  /** enum tables the device also defines, by their C++ name in kEnumTables (native/include/vl/names.h): the
   *  table test (app/protocol/tables.test.ts) compares each entry for entry */
  enums?: Record<string, EnumTableLike>;
  /** payload decoders of the protocols the lab speaks (the registry of app/protocol/decoders.ts) */
  decoders?: readonly PayloadDecoder[];
  /** module exporting `c`: how the lab's step commands are written by `verbslab export-c` */
  c?: string;
  /** module exporting `handlers`: the device executor's handlers of the lab's device commands (Node) */
  handlers?: string;
  /** module exporting `attach(core)`: the lab's host extension (agents, answeredBy 'host' commands; Node) */
  host?: string;
  /** module whose default export is the lab's console panel (a PanelDef of renderer/src/panels/registry.ts) */
  panel?: string;
  /** module exporting `bench()`: the lab's figures for `verbslab bench` */
  bench?: string;
  /** module exporting `headless()`: what `verbslab lab run` computes beyond the steps (counts toward the pass) */
  headless?: string;
  /** the lab's own Playwright spec (a path under e2e/); a lab without one is walked to green in the console by
   *  e2e/lab-walk.spec.ts */
  e2e?: string;
}

/** Identity helper keeping the manifest's literal types (its command tables type the protocol). */
export function defineLab<const M extends LabManifest>(m: M): M { return m; }
