// Live in the console (docs/libibverbs.md): an unmodified ibv_rc_pingpong pair (Debian's ibverbs-utils) runs under
// `verbslab exec --console` on loopback and streams its devices to the running console. The console lists both
// programs as attached sessions; viewed, each shows its QP (RTS), its MR with keys and range, its CQ ring and its
// packets live in the ordinary panels, and "Save pcap" gives its real datagrams. The forms refuse commands with the
// reason (the program owns its device). A program stopped as a debugger stops it shows "stalled"; Ctrl-C (SIGINT)
// ends it as "ended (... killed ...)" and what it sent stays readable. Screenshot: e2e/screenshots/live-attach.png.
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { SHOTS, freeTcpPort, panel, startServer, type Server } from './helpers.ts';

test.describe.configure({ mode: 'serial' });

// its own backend server and session directory: what the specs before it left in the shared session (devices on the
// network, lab sessions) does not meet the programs, and a failure here leaves nothing attached for the specs after it
let own: Server | undefined;
test.beforeAll(async () => { own = await startServer(); });
test.afterAll(() => {
  own?.proc.kill('SIGTERM');
  if (own) fs.rmSync(own.dir, { recursive: true, force: true });
});
const PINGPONG = '/usr/bin/ibv_rc_pingpong';

function exec(args: string[], log: string[]): ChildProcess {
  // many iterations: the pair is still running while the test looks at it (it is stopped with SIGINT at the end)
  const p = spawn(process.execPath, ['app/cli/verbslab.mjs', 'exec', '--no-build', `--console=${own!.dir}`, '--', PINGPONG, ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  p.stdout!.on('data', (d) => log.push(String(d)));
  p.stderr!.on('data', (d) => log.push(String(d)));
  return p;
}

/** the pid of PROGRAM started by `verbslab exec` (its child) */
function programPid(execPid: number): number {
  const r = spawnSync('pgrep', ['-P', String(execPid), '-f', PINGPONG], { encoding: 'utf8' });
  return Number(r.stdout.trim().split('\n')[0]);
}

test('an ibv_rc_pingpong pair under verbslab exec --console is shown live, read-only, and stays readable after Ctrl-C', async ({ page }) => {
  test.skip(!fs.existsSync(PINGPONG), 'ibverbs-utils is not installed');
  test.skip(!fs.existsSync('build/libibverbs/libibverbs.so.1'), 'the library is not built (node scripts/build.mjs libibverbs)');
  test.setTimeout(240_000);   // a loaded 2-core machine: two programs spinning plus the console
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(own!.url);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');

  const port = String(await freeTcpPort());
  const log: string[] = [];
  const server = exec(['-g', '1', '-p', port, '-n', '100000000'], log);
  const procs = [server];
  try {
    await expect(page.getByTestId('sessions')).toBeVisible({ timeout: 30_000 });
    const client = exec(['-g', '1', '-p', port, '-n', '100000000', '127.0.0.1'], log);
    procs.push(client);
    const live = page.locator('[data-testid^="session-state-"]', { hasText: 'live' });
    await expect(live).toHaveCount(2, { timeout: 30_000 });

    // the server's session: QP in RTS with its peer, its MR's keys and range, its CQ ring, its packets
    const first = page.locator('[data-testid^="session-"][aria-pressed]').nth(1);
    await first.click();
    await expect(page.getByTestId('attached-banner')).toContainText('ibv_rc_pingpong');
    await expect(page.getByTestId('attached-banner')).toContainText('live');
    await panel(page, 'queues');
    await expect(page.getByTestId('qp-card')).toHaveCount(1);
    await expect(page.getByTestId('qp-card')).toHaveAttribute('data-state', 'IBV_QPS_RTS', { timeout: 15_000 });
    await expect(page.getByTestId('cq-card')).toHaveCount(1);
    await expect(page.getByTestId('cq-ring').first()).toBeVisible();
    fs.mkdirSync(SHOTS, { recursive: true });
    // the README's picture: the sessions, the banner, the program's CQ and QP with their rings
    await page.evaluate(() => { document.querySelector('[data-testid="cqs-section"]')?.scrollIntoView(); window.scrollBy(0, -200); });
    await page.screenshot({ path: `${SHOTS}/live-attach.png`, fullPage: false });
    // the sessions bar, the banner and the read-only forms pass axe as every panel does (e2e/a11y.spec.ts)
    const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    expect(axe.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`)).toEqual([]);
    // a form of the program's device: refused with the reason
    await page.getByTestId('destroy-qp').click();
    await expect(page.getByTestId('error-message').first()).toContainText('owns this device');
    await expect(page.getByTestId('qp-card')).toHaveCount(1);

    await panel(page, 'memory');
    const mr = page.locator('[data-testid="key-row"][data-type="MR"]');
    await expect(mr.first()).toBeVisible();
    expect(Number(await mr.first().getAttribute('data-lkey'))).toBeGreaterThan(0);

    await panel(page, 'wire');
    await expect(page.getByTestId('packet-row').first()).toBeVisible();
    await expect(page.locator('[data-testid="packet-row"][data-opcode^="RC Send"]').first()).toBeVisible();
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}/live-attach-wire.png`, fullPage: false });

    // "Save pcap": the program's real datagrams (Ethernet / IPv4 / UDP 4791)
    const download = page.waitForEvent('download');
    await page.getByTestId('save-pcap').click();
    const file = await (await download).path();
    const bytes = fs.readFileSync(file!);
    expect(bytes.readUInt32LE(0)).toBe(0xa1b2c3d4);
    expect(bytes.length).toBeGreaterThan(24 + 16 + 14 + 20 + 8 + 12);
    expect(bytes.readUInt16BE(24 + 16 + 14 + 20 + 2)).toBe(4791);   // first record's UDP destination port

    // under a debugger (SIGSTOP stops the process as a breakpoint does): "stalled", the console stays usable
    const pids = procs.map((p) => programPid(p.pid!));
    expect(pids.every((p) => p > 0)).toBe(true);
    for (const p of pids) process.kill(p, 'SIGSTOP');
    await expect(page.locator('[data-testid^="session-state-"]', { hasText: 'stalled' })).toHaveCount(2, { timeout: 15_000 });
    for (const p of pids) process.kill(p, 'SIGCONT');

    // Ctrl-C: both end, the reason says so, the session's data stays readable
    for (const p of pids) process.kill(p, 'SIGINT');
    await expect(page.locator('[data-testid^="session-state-"]', { hasText: 'ended' })).toHaveCount(2, { timeout: 15_000 });
    await expect(page.getByTestId('attached-state')).toContainText('killed');
    await expect(page.getByTestId('packet-row').first()).toBeVisible();
    await panel(page, 'queues');
    await expect(page.getByTestId('qp-card')).toHaveCount(1);

    // back to the console's own device: its panels are its own again
    await page.getByTestId('session-embedded').click();
    await expect(page.getByTestId('attached-banner')).toHaveCount(0);
    await expect(page.getByTestId('host-status')).toHaveText('backend up');
    expect(problems).toEqual([]);

    // attached sessions live in the backend host's memory (not in its journal): a restarted host has none, and the
    // specs after this one see the console as before
    await panel(page, 'run');
    await page.getByTestId('kill-host').click();
    await expect(page.getByTestId('host-status')).toContainText('down');
    await page.getByTestId('restart-host').click();
    await expect(page.getByTestId('host-status')).toHaveText('backend up', { timeout: 60_000 });
    await expect(page.getByTestId('sessions')).toHaveCount(0, { timeout: 5_000 });
  } finally {
    // the programs first: once `verbslab exec` is gone they are re-parented and pgrep -P no longer finds them (a
    // failed run left both spinning, starving the specs after this one)
    const programs = procs.map((p) => (p.pid ? programPid(p.pid) : 0));
    for (const pid of programs) if (pid > 0) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
  }
});
