// Every lab's own commands reach the protocol: each descriptor table a labs/<id>/commands.ts exports is in
// LAB_COMMANDS (labs/commands.ts), and each handler table of a labs/<id>/handlers.ts in LAB_HANDLERS.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LAB_COMMANDS } from './commands.ts';
import { LAB_HANDLERS } from './handlers.ts';
import { DESCRIPTORS } from '../app/protocol/commands.ts';

const dir = path.dirname(fileURLToPath(import.meta.url));
const labFiles = (name: string) => fs.readdirSync(dir).filter((id) => fs.existsSync(path.join(dir, id, name))).map((id) => path.join(dir, id, name));
const isDescriptorTable = (v: unknown) => !!v && typeof v === 'object' && Object.values(v).length > 0
  && Object.values(v).every((d) => !!d && typeof d === 'object' && typeof (d as { args?: unknown }).args === 'function' && 'result' in (d as object));

describe('lab command registry', () => {
  it('lists every descriptor of every labs/<id>/commands.ts, and the protocol has them', async () => {
    const files = labFiles('commands.ts');
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const tables = Object.values(await import(f)).filter(isDescriptorTable) as Record<string, unknown>[];
      expect(tables.length, f).toBeGreaterThan(0);
      for (const t of tables) for (const name of Object.keys(t)) {
        expect(Object.keys(LAB_COMMANDS), `${path.relative(dir, f)}: ${name}`).toContain(name);
        expect(Object.keys(DESCRIPTORS), name).toContain(name);
      }
    }
  });
  it('lists every handler of every labs/<id>/handlers.ts', async () => {
    for (const f of labFiles('handlers.ts')) {
      const tables = Object.values(await import(f)).filter((v) => v && typeof v === 'object' && Object.values(v).every((h) => typeof h === 'function')) as Record<string, unknown>[];
      expect(tables.length, f).toBeGreaterThan(0);
      for (const t of tables) for (const name of Object.keys(t)) expect(Object.keys(LAB_HANDLERS), name).toContain(name);
    }
  });
});
