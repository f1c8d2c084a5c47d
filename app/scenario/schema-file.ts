// Writes (or checks) scenarios/scenario.schema.json, the published JSON Schema of the scenario format,
// generated from the zod schema in app/protocol/scenario.ts.
//   npx tsx app/scenario/schema-file.ts          regenerate
//   npx tsx app/scenario/schema-file.ts --check  exit 1 if the file is out of date
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { scenarioJsonSchema } from '../protocol/scenario.ts';

export const SCHEMA_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scenarios/scenario.schema.json');
export const schemaText = () => `${JSON.stringify(scenarioJsonSchema(), null, 1)}\n`;

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = schemaText();
  if (process.argv.includes('--check')) {
    const cur = fs.existsSync(SCHEMA_FILE) ? fs.readFileSync(SCHEMA_FILE, 'utf8') : '';
    if (cur !== text) { console.error(`${SCHEMA_FILE} is out of date: run npx tsx app/scenario/schema-file.ts`); process.exit(1); }
    console.log('scenario.schema.json is up to date');
  } else {
    fs.writeFileSync(SCHEMA_FILE, text);
    console.log(`wrote ${SCHEMA_FILE} (${text.length} bytes)`);
  }
}
