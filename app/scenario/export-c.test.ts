// Every scenario (the library and pending/) exports to C that compiles with -Wall -Werror against
// rdma-core's libibverbs-dev (the same check as scripts/check-export.sh).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseScenarioText } from './load.ts';
import { cComment, cString, exportC } from './export-c.ts';
import { libraryFiles } from './library.ts';
import { listLabs } from './lab.ts';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const files = libraryFiles();
const haveVerbs = fs.existsSync('/usr/include/infiniband/verbs.h');

describe('C export', () => {
  it('escapes strings and comments', () => {
    expect(cString('a"b\\c??/\n\u00e9')).toBe('"a\\"b\\\\c\\?\\?/\\n\\303\\251"');
    expect(cComment('x */ y /* z ??')).toBe('x * / y / * z ? ?');
  });

  it('libibverbs-dev is installed (the compile check cannot be skipped silently)', () => { expect(haveVerbs, '/usr/include/infiniband/verbs.h is missing: apt-get install -y libibverbs-dev').toBe(true); });
  it('every scenario (and every lab, flattened) exports to C that compiles with cc -Wall -Werror -libverbs', async () => {
    expect(files.length).toBeGreaterThan(0);
    const { labs, errors: labErrors } = listLabs();
    expect(labErrors).toEqual([]);
    const items = [
      ...files.map((f) => ({ f, load: () => parseScenarioText(fs.readFileSync(f, 'utf8'), f) })),
      ...labs.map((l) => ({ f: `labs/${l.lab.id}/lab.json`, load: () => ({ ok: true as const, scenario: l.scenario }) })),
    ];
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'verbslab-export-'));
    try {
      const jobs = items.map(({ f, load }) => async () => {
        const loaded = load();
        if (!loaded.ok) return `${f}: ${loaded.error.message}`;
        const c = exportC(loaded.scenario, { source: path.relative(root, f) });
        const out = path.join(tmp, `${f.replace(/[^A-Za-z0-9_]/g, '_')}.c`);
        fs.writeFileSync(out, c);
        try {
          await run(process.env.CC || 'cc', ['-Wall', '-Werror', '-o', '/dev/null', out, '-libverbs']);
          return null;
        } catch (e) {
          return `${f}: ${(e as { stderr?: string }).stderr ?? String(e)}`;
        }
      });
      const errors: string[] = [];
      let i = 0;
      await Promise.all([0, 1].map(async () => { while (i < jobs.length) { const r = await jobs[i++]!(); if (r) errors.push(r); } }));
      expect(errors.join('\n')).toBe('');
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }, 300_000);
});
