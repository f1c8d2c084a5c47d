// app/protocol/schema.json must be what the zod schemas generate (regenerate: npx tsx app/host/schema.ts --write).
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA_FILE, protocolJsonSchema, schemaText } from './schema.ts';

describe('protocol JSON Schema', () => {
  it('is up to date with app/protocol', () => {
    expect(fs.readFileSync(SCHEMA_FILE, 'utf8')).toBe(schemaText());
  });
  it('describes every command', () => {
    const s = protocolJsonSchema() as { $defs: { Command: { oneOf: { properties: { cmd: { const: string } } }[] } } };
    const names = s.$defs.Command.oneOf.map((c) => c.properties.cmd.const);
    expect(names).toContain('mr.reg');
    expect(names).toContain('qp.connect');
    expect(names.length).toBeGreaterThan(40);
  });
});
