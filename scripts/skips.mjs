// The skips npm test accepts (scripts/test.mjs), each with the reason it is not a hole in the run. Any other skipped
// test counts as a failure: a suite that needs the native addon or a tool fails when it is missing (the addon is
// built, the Debian packages installed, by npm test itself), it never turns into skips.
import path from 'node:path';

/** suite: 'cpp' (both gtest runs), 'vitest' or 'e2e'; test: matched against "file title" (gtest: "Suite.Test") */
export const ALLOWED_SKIPS = [
  { suite: 'cpp', test: /^WireCrc32\.AllKernelsAgreeWithBitwiseOnRandomSpans$/, reason: 'the CPU lacks PCLMULQDQ / VPCLMULQDQ: that CRC kernel cannot run here (the others are checked)' },
  { suite: 'vitest', test: /^scripts\/electron\.test\.ts /, reason: 'an Electron binary is installed: these tests check the fallback when there is none' },
  { suite: 'e2e', test: /^electron\.spec\.ts /, reason: 'no Electron binary (ELECTRON_SKIP_BINARY_DOWNLOAD, no network): the browser mode runs the console' },
  { suite: 'e2e', test: /^console-perf\.spec\.ts /, reason: 'the UI benchmark is opt-in (VL_UI_BENCH=1)' },
];

/** Split a suite's skipped tests into the allowed ones (with their reason) and the rest. */
export function judgeSkips(suite, ids) {
  const allowed = [], unexpected = [];
  for (const id of ids) {
    const a = ALLOWED_SKIPS.find((s) => s.suite === suite && s.test.test(id));
    if (a) allowed.push({ id, reason: a.reason }); else unexpected.push(id);
  }
  return { allowed, unexpected };
}

const SKIPPED = new Set(['skipped', 'pending', 'todo', 'disabled']);

/** "file title" of every skipped test in a vitest JSON report (files relative to root) */
export function vitestSkipped(report, root) {
  return (report.testResults ?? []).flatMap((f) => (f.assertionResults ?? []).filter((a) => SKIPPED.has(a.status))
    .map((a) => `${path.relative(root, f.name)} ${a.fullName ?? a.title}`));
}

/** "file title" of every skipped test in a Playwright JSON report (files relative to its testDir) */
export function playwrightSkipped(report) {
  const out = [];
  const walk = (s) => {
    for (const spec of s.specs ?? []) for (const t of spec.tests ?? []) if (t.status === 'skipped') out.push(`${spec.file} ${spec.title}`);
    for (const c of s.suites ?? []) walk(c);
  };
  for (const s of report.suites ?? []) walk(s);
  return out;
}

/** "Suite.Test" of every skipped test in a gtest JSON report */
export function gtestSkipped(data) {
  return (data.testsuites ?? []).flatMap((s) => (s.testsuite ?? []).filter((t) => !t.failures?.length && (t.result === 'SKIPPED' || t.status === 'NOTRUN'))
    .map((t) => `${s.name}.${t.name}`));
}
