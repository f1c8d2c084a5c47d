// A real device from the console, in browser mode: a backend server whose libibverbs.so.1 is Verbs Lab's own
// (VERBSLAB_LIBIBVERBS=build/libibverbs/libibverbs.so.1: the real libibverbs ABI through dlopen, end to end). The
// Devices panel lists its device next to the software ones; Open drives it: a PD, buffers and MRs with the keys the
// device returned, a CQ, two QPs connected, an RDMA WRITE whose completion a poll returns and whose bytes land; the
// rings, packets and engine say they are not visible on a real device; every panel passes axe; back to the software
// devices. The server is started here (its own session directory), so no other spec sees a real-device session.
import { expect, test } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { allocBuffers, axeEveryPanel, noErrors, panel, shot, startServer, type Server } from './helpers.ts';

const LIB = path.resolve('build/libibverbs/libibverbs.so.1');

test.describe.configure({ mode: 'serial' });

let server: Server | null = null;

test.beforeAll(async () => {
  test.setTimeout(300_000);
  if (!fs.existsSync(LIB)) {
    const b = spawnSync(process.execPath, ['scripts/build.mjs', 'libibverbs'], { stdio: 'inherit' });
    if (b.status !== 0) throw new Error('node scripts/build.mjs libibverbs failed');
  }
  server = await startServer({ VERBSLAB_LIBIBVERBS: LIB });
});

test.afterAll(() => {
  server?.proc.kill('SIGTERM');
  if (server) fs.rmSync(server.dir, { recursive: true, force: true });
});

test('the console drives a device of a dlopen\'ed libibverbs.so.1; what a real device hides is said so; axe-clean', async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto(server!.url);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');
  await panel(page, 'devices');
  const realRow = page.getByTestId('real-device-row').filter({ hasText: 'vlrxe0' });
  await expect(realRow).toHaveCount(1);
  await expect(realRow).toContainText('software device behind the libibverbs ABI');
  await realRow.getByTestId('open-real-device').click();
  await expect(page.getByTestId('real-banner')).toContainText('vlrxe0');
  await expect(page.getByTestId('devices-panel')).toHaveAttribute('data-backend', 'ibverbs');
  await expect(realRow.getByTestId('real-device-open')).toBeVisible();
  const row = page.getByTestId('device-row').first();
  await expect(row).toContainText('vlrxe0');
  await expect(row).toContainText('ibverbs');
  await expect(page.getByTestId('create-device-real')).toBeVisible();
  await expect(page.getByTestId('device-gids')).toContainText('0000:0000:0000:0000:0000:ffff:7f00:');
  await row.getByTestId('alloc-pd').click();
  await expect(row).toContainText('pd ');

  await panel(page, 'memory');
  const [a, b] = await allocBuffers(page, 2);
  for (const buf of [a!, b!]) { await page.getByTestId('mr-buffer').selectOption(buf); await page.getByTestId('reg-mr').click(); }
  await expect(page.getByTestId('key-row')).toHaveCount(2);
  await expect(page.getByTestId('keys-real-note')).toContainText('not visible on a real device');
  await expect(page.getByTestId('fastreg-real-note')).toContainText('kernel verbs');

  await panel(page, 'queues');
  await page.getByTestId('create-cq').click();
  await expect(page.getByTestId('cq-card')).toHaveCount(1);
  await page.getByTestId('create-qp').click();
  await page.getByTestId('create-qp').click();
  await expect(page.getByTestId('qp-card')).toHaveCount(2);
  await page.getByTestId('connect-qps').click();
  await expect(page.getByTestId('qp-card').first()).toContainText('RTS');
  await page.getByTestId('post-send').click();
  await noErrors(page);
  // the device completes in real time: poll until ibv_poll_cq returns the completion
  const cq = page.getByTestId('cq-card').first();
  await expect(async () => {
    await cq.getByTestId('poll-cq').click();
    await expect(cq.getByTestId('wc-status').first()).toHaveText('IBV_WC_SUCCESS', { timeout: 500 });
  }).toPass({ timeout: 20_000 });
  await expect(page.getByTestId('ring-not-visible').first()).toContainText('not visible on a real device');
  // a real device is on its own network: the remote-connect form shows its local address (rc_pingpong's line)
  await expect(page.getByTestId('local-gid')).toContainText('0000:0000:0000:0000:0000:ffff:7f00:');
  await shot(page, 'real-device-queues');

  await panel(page, 'wire');
  await expect(page.getByTestId('wire-not-visible')).toContainText('not visible on a real device');
  await panel(page, 'run');
  await expect(page.getByTestId('engine-not-visible')).toContainText('not visible on a real device');

  // every registered panel, light and dark, 0 violations with the real-device views on screen
  const found = await axeEveryPanel(page);
  expect(found).toEqual([]);

  await panel(page, 'devices');
  await shot(page, 'real-device');
  await page.getByTestId('back-to-software').click();
  await expect(page.getByTestId('real-banner')).toHaveCount(0);
  await expect(page.getByTestId('devices-panel')).toHaveAttribute('data-backend', 'embedded');
  await noErrors(page);
});
