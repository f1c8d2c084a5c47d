// One lab, one manifest: every lab folder (labs/<id>/lab.json) has its manifest (labs/<id>/index.ts), the generated
// indexes are what scripts/gen-labs.ts writes from the manifests today, and what each manifest declares reaches the
// platform: its commands are in the protocol, its device commands have executor handlers (and nothing else does),
// its step commands a C emitter, its host module an attach(core), its object kinds and decoders the tables.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generate, LABS_DIR, loadManifests, stale } from '../scripts/gen-labs.ts';
import { DESCRIPTORS, answeredBy } from '../app/protocol/commands.ts';
import { KIND_FACTS, LABS } from '../app/protocol/labs.ts';
import { registeredDecoders } from '../app/protocol/decoders.ts';
import { LAB_C_EMITTERS } from './c.generated.ts';
import { LAB_HANDLERS } from './handlers.generated.ts';
import { LAB_EXTENSIONS } from './extensions.generated.ts';

const manifests = await loadManifests();

describe('lab manifests', () => {
  it('every lab folder has a manifest and every manifest a lab.json', () => {
    const withLab = fs.readdirSync(LABS_DIR).filter((id) => fs.existsSync(path.join(LABS_DIR, id, 'lab.json'))).sort();
    expect(withLab.length).toBeGreaterThan(0);
    expect(manifests.map((m) => m.id)).toEqual(withLab);
    expect(LABS.map((m) => m.id)).toEqual(withLab);
  });

  it('the generated indexes are fresh (else: npx tsx scripts/gen-labs.ts)', async () => {
    expect(await stale()).toEqual([]);
    expect(Object.keys(generate(manifests)).sort()).toEqual(['c.generated.ts', 'extensions.generated.ts', 'handlers.generated.ts', 'index.generated.ts', 'panels.generated.ts']);
  });

  it('a manifest\'s commands reach the protocol; its device commands, and only those, have an executor handler', () => {
    const labCommands = manifests.flatMap((m) => Object.keys(m.commands ?? {}));
    for (const n of labCommands) expect(Object.keys(DESCRIPTORS), n).toContain(n);
    const device = manifests.flatMap((m) => Object.keys(m.commands ?? {}).filter((n) => answeredBy(n) === 'device'));
    expect(Object.keys(LAB_HANDLERS).sort()).toEqual(device.sort());
    for (const m of manifests) {
      const own = Object.keys(m.commands ?? {}).filter((n) => answeredBy(n) === 'device');
      if (own.length) expect(m.handlers, `${m.id}: device commands without a handlers module`).toBeDefined();
    }
  });

  it('every lab step command has a C emitter, every host module an attach(core)', () => {
    const steps = manifests.flatMap((m) => Object.entries(m.commands ?? {}).filter(([, d]) => d.step !== false).map(([n]) => n));
    expect(Object.keys(LAB_C_EMITTERS).sort()).toEqual(steps.sort());
    expect(LAB_EXTENSIONS.map((x) => x.id)).toEqual(manifests.filter((m) => m.host).map((m) => m.id));
    for (const x of LAB_EXTENSIONS) expect(typeof x.attach, x.id).toBe('function');
  });

  it('object kinds and decoders of the manifests are in the platform\'s tables', () => {
    for (const m of manifests) {
      for (const [k, f] of Object.entries(m.objectKinds ?? {})) expect((KIND_FACTS as Record<string, unknown>)[k], `${m.id}: ${k}`).toEqual(f);
      for (const d of m.decoders ?? []) expect(registeredDecoders(), `${m.id}: ${d.id}`).toContain(d);
      for (const [f, kind] of Object.entries(m.handleFields ?? {})) expect(Object.keys(KIND_FACTS), `${m.id}: ${f}`).toContain(kind);
    }
  });
});
