// Sharded headless runs: every file in exactly one shard, a file's shard independent of the others, and the shards'
// JUnit reports merged equal the report of the whole run (scenarios on the software device).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFiles } from './cli.ts';
import { LABS_DIR, listLabs } from './lab.ts';
import { libraryFiles } from './library.ts';
import { inShard, mergeJunit, parseShard, shardOf } from './shard.ts';
import { executorFactory } from './testlib.ts';

const factory = await executorFactory('shard tests');
const files = libraryFiles();
const cases = (xml: string) => [...xml.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"/g)].map((m) => `${m[1]} ${m[2]}`).sort();

describe('shards', () => {
  it('parses I/N and refuses the rest', () => {
    expect(parseShard('2/3')).toEqual({ index: 2, count: 3 });
    for (const bad of ['0/3', '4/3', '1/0', '1', 'a/b', '1/1001']) expect(() => parseShard(bad), bad).toThrow(/--shard/);
  });

  it('puts every scenario and every lab in exactly one shard, whatever the other files', () => {
    expect(files.length).toBeGreaterThan(10);
    const labFiles = listLabs().labs.map((l) => path.join(LABS_DIR, l.lab.id, 'lab.json'));
    for (const n of [1, 2, 3, 5]) {
      for (const list of [files, labFiles]) {
        const parts = Array.from({ length: n }, (_, i) => inShard(list, { index: i + 1, count: n }, (f) => f));
        expect(parts.flat().sort()).toEqual([...list].sort());
      }
      for (const f of files) expect(shardOf(f, n)).toBe(shardOf(path.relative(process.cwd(), f), n));   // by path, not by list
    }
    // more than one shard gets work (the hash spreads the library)
    expect(new Set(files.map((f) => shardOf(f, 3))).size).toBe(3);
  });

  it('the shards\' JUnit reports merge into the whole run\'s', async () => {
    const some = files.filter((f) => /scenarios\/[^/]*\.json$/.test(f)).slice(0, 6);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-shard-'));
    const quiet = () => {};
    const whole = path.join(dir, 'whole.xml');
    const all = await runFiles(some, { junit: whole, factory, log: quiet });
    const parts: string[] = [];
    for (const index of [1, 2]) {
      const f = path.join(dir, `shard${index}.xml`);
      await runFiles(inShard(some, { index, count: 2 }, (x) => x), { junit: f, factory, log: quiet });
      parts.push(fs.readFileSync(f, 'utf8'));
    }
    const merged = mergeJunit(parts, 'verbslab scenarios');
    expect(cases(merged)).toEqual(cases(fs.readFileSync(whole, 'utf8')));
    expect(merged).toContain(`<testsuites name="verbslab scenarios" tests="${some.length}" failures="${all.failed}">`);
  });
});
