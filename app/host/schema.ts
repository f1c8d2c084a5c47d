// JSON Schema of the wire protocol, generated from the zod schemas in app/protocol (the one source of the
// TypeScript types too). `npx tsx app/host/schema.ts --write` regenerates app/protocol/schema.json;
// app/host/schema.test.ts fails when the file is stale.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { Command, FromHost, PROTOCOL_VERSION, ToHost } from '../protocol/index.ts';

export const SCHEMA_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'protocol', 'schema.json');

export function protocolJsonSchema(): Record<string, unknown> {
  const opts = { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' } as const;
  const one = (s: z.ZodType) => { const j = z.toJSONSchema(s, opts) as Record<string, unknown>; delete j.$schema; return j; };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://verbslab.local/protocol/schema.json',
    title: 'Verbs Lab protocol',
    description: `Messages between the console (renderer, CLI, tests) and the backend host, protocol version ${PROTOCOL_VERSION}. ` +
      'Generated from app/protocol (zod) by app/host/schema.ts; do not edit by hand.',
    anyOf: [{ $ref: '#/$defs/ToHost' }, { $ref: '#/$defs/FromHost' }],
    $defs: { ToHost: one(ToHost), FromHost: one(FromHost), Command: one(Command) },
  };
}

export function schemaText(): string { return JSON.stringify(protocolJsonSchema(), null, 2) + '\n'; }

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) { fs.writeFileSync(SCHEMA_FILE, schemaText()); console.log(`wrote ${SCHEMA_FILE}`); }
  else process.stdout.write(schemaText());
}
