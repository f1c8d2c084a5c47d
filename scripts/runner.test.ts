// npm test's runner (scripts/test.mjs) cannot turn a suite into silent skips: without the native addon a suite that
// needs it fails the run, and a test skipped outside scripts/skips.mjs counts as a failure. The summary line counts
// skips. Each case runs the real runner on one vitest file, with its results in a temporary folder.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALLOWED_SKIPS, judgeSkips } from './skips.mjs';

const root = path.resolve(__dirname, '..');

function runner(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, ['scripts/test.mjs', '--only', 'vitest', '--', ...args], {
    cwd: root, encoding: 'utf8', timeout: 600_000,
    env: { ...process.env, VL_TEST_RESULTS: fs.mkdtempSync(path.join(os.tmpdir(), 'vl-runner-')), ...env },
  });
  const lines = r.stdout.trim().split('\n');
  return { code: r.status, out: r.stdout + r.stderr, last: lines[lines.length - 1] };
}

describe('npm test runner', () => {
  it('fails a suite that needs the native addon when the addon is missing (no silent skip)', () => {
    const r = runner(['app/host/results.test.ts'], { VERBSLAB_ADDON: path.join(os.tmpdir(), 'vl-no-such-addon', 'verbslab.node') });
    expect(r.last).toMatch(/^0 passed, [1-9]\d* failed, 0 skipped$/);
    expect(r.out).toContain('need the native addon');
    expect(r.code).toBe(1);
  });

  it('counts skips in the summary line and fails on a skip no reason allows', () => {
    const r = runner(['--config', 'scripts/fixtures/runner/vitest.config.ts']);
    expect(r.last).toBe('1 passed, 1 failed, 1 skipped');
    expect(r.out).toContain('skipped without an allowed reason (scripts/skips.mjs): scripts/fixtures/runner/skip.fixture.ts is skipped with no reason');
    expect(r.code).toBe(1);
  });

  it('an allowed skip names its reason; the same title elsewhere is not allowed', () => {
    for (const a of ALLOWED_SKIPS) expect(a.reason.length).toBeGreaterThan(20);
    const j = judgeSkips('vitest', ['scripts/electron.test.ts a mirror that refuses', 'app/host/results.test.ts a mirror that refuses']);
    expect(j.allowed.map((a) => a.id)).toEqual(['scripts/electron.test.ts a mirror that refuses']);
    expect(j.unexpected).toEqual(['app/host/results.test.ts a mirror that refuses']);
    expect(judgeSkips('e2e', ['scripts/electron.test.ts x']).unexpected).toHaveLength(1);
  });
});
