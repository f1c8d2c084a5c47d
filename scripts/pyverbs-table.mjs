#!/usr/bin/env node
// rdma-core's Python tests (Debian python3-pyverbs, /usr/share/doc/rdma-core/tests) on the software device's
// libibverbs.so.1: copies the tests to a temporary directory (some files are gzipped there), runs each module with
// `run_tests.py --dev vlrxe0 --gid 1 -v` under LD_LIBRARY_PATH=build/libibverbs and prints one markdown row per module
// (ran / passed / skipped with the tests' reasons / failed). Not part of npm test; docs/libibverbs.md holds its table.
//   node scripts/pyverbs-table.mjs [MODULE...]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = '/usr/share/doc/rdma-core/tests';
const MODULES = ['test_device', 'test_pd', 'test_cq', 'test_cq_events', 'test_cqex', 'test_qp', 'test_qpex', 'test_mr',
  'test_addr', 'test_atomic', 'test_fork', 'test_relaxed_ordering', 'test_odp', 'test_parent_domain', 'test_shared_pd',
  'test_rdmacm', 'test_flow', 'test_tag_matching', 'test_rss_traffic'];

if (!fs.existsSync(SRC)) { console.error(`${SRC} not found: apt-get install python3-pyverbs`); process.exit(2); }
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'verbslab-pyverbs-'));
const dir = path.join(work, 'tests');
fs.cpSync(SRC, dir, { recursive: true });
spawnSync('sh', ['-c', 'gunzip -f *.gz'], { cwd: dir });
const env = { ...process.env, LD_LIBRARY_PATH: path.join(root, 'build', 'libibverbs') };
console.log('| module | ran | passed | skipped (the tests\' reasons) | failed |\n|---|---|---|---|---|');
let failedAll = 0;
for (const m of process.argv.slice(2).length ? process.argv.slice(2) : MODULES) {
  const r = spawnSync('/usr/bin/python3', ['run_tests.py', '--dev', 'vlrxe0', '--gid', '1', '-v', '-k', `tests.${m}.*`],
    { cwd: dir, env, encoding: 'utf8', timeout: 300_000 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  const ran = Number(/^Ran (\d+) test/m.exec(out)?.[1] ?? 0);
  const passed = (out.match(/\.\.\. ok$/gm) ?? []).length;
  const reasons = new Map();
  for (const s of out.matchAll(/skipped (['"])(.*?)\1$/gm)) reasons.set(s[2], (reasons.get(s[2]) ?? 0) + 1);   // repr quoting
  const skipped = [...reasons.values()].reduce((a, b) => a + b, 0);
  const failed = [...out.matchAll(/^(?:ERROR|FAIL): (\S+)/gm)].map((x) => x[1]);
  failedAll += failed.length + (r.status === null ? 1 : 0);
  const why = [...reasons].map(([k, n]) => `${n}× ${k}`).join('; ');
  console.log(`| ${m} | ${ran} | ${passed} | ${skipped}${why ? ` (${why})` : ''} | ${failed.length ? `**${failed.length}**: ${failed.join(', ')}` : 0}${r.status === null ? ' (timed out)' : ''} |`);
}
fs.rmSync(work, { recursive: true, force: true });
process.exitCode = failedAll ? 1 : 0;
