// Every reply the device executor gives while the scenario library runs matches its command's result schema
// (app/protocol/commands/*.ts) exactly: nothing missing, nothing of another type, and no field the schema does not
// name (parsing strips unknown keys, so the parsed value must equal the reply).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Command, CommandName } from '../protocol/index.ts';
import { resultSchema } from '../protocol/index.ts';
import { runScenario } from '../scenario/run.ts';
import type { Executor } from './api.ts';
import { executorFactory } from '../scenario/testlib.ts';
import { libraryFiles } from '../scenario/library.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const files = libraryFiles();

const make = await executorFactory('result schema checks');

const canon = (v: unknown): string => JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x));

describe('command results match their schemas', () => {
  const seen = new Set<string>();
  for (const f of files) {
    it(path.basename(f), () => {
      const ex = make(1);
      const problems: string[] = [];
      const checking: Executor = {
        exec(c: Command) {
          const r = ex.exec(c);
          if (r.ok) {
            seen.add(c.cmd);
            const p = resultSchema(c.cmd as CommandName).safeParse(r.result);
            if (!p.success) problems.push(`${c.cmd}: ${JSON.stringify(p.error.issues[0])}`);
            else if (canon(p.data) !== canon(JSON.parse(JSON.stringify(r.result)))) problems.push(`${c.cmd}: fields the schema does not name: ${canon(r.result).slice(0, 300)}`);
          }
          return r;
        },
        drainEvents: (m) => ex.drainEvents(m), pcap: () => ex.pcap(), close: () => ex.close(),
      };
      try { runScenario(fs.readFileSync(f, 'utf8'), checking, { file: f }); } finally { ex.close(); }
      expect(problems).toEqual([]);
    });
  }
  it('the library exercised most device commands', () => { expect(seen.size).toBeGreaterThan(25); });
});
