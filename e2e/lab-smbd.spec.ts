// Lab 5 (SMB Direct) in the console: its guided steps walked to green in the Labs panel (a screenshot per section),
// then the lab's own tab: two peers negotiate (the inspector shows the bytes and every rule), a burst with the
// last-credit bug profile is stepped (a screenshot of the credit board mid-transfer) and runs into the deadlock
// (both sides at 0 send credits, a screenshot), the spec profile delivers the same burst, a ksmbd server refuses
// 128 KiB, the keepalive times out against a hung server, and an SMB2 READ goes by RDMA with SEND_WITH_INV.
import fs from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { openLab, panel, walkLab, type LabFile } from './helpers.ts';

const lab = JSON.parse(fs.readFileSync('labs/smbd/lab.json', 'utf8')) as LabFile;
const SHOTS = 'e2e/screenshots';

test('lab 5 walks to green; the credit board mid-transfer and in the deadlock', async ({ page }) => {
  test.setTimeout(240_000);
  const problems = await openLab(page, 'smbd');
  await page.getByTestId('lab-start').click();
  await walkLab(page, 'smbd', lab);
  await expect(page.locator('[data-testid^="lab-step-"][data-state="holds"]')).toHaveCount(lab.sections.reduce((n, s) => n + s.steps.length, 0));

  await panel(page, 'lab-smbd');
  // the deadlock: both peers with the bug, 8 credits
  await page.getByTestId('smbd-client-profile').selectOption('last-credit-bug');
  await page.getByTestId('smbd-server-profile').selectOption('last-credit-bug');
  await page.getByTestId('smbd-credits').selectOption('lab');
  await page.getByTestId('smbd-start').click();
  await expect(page.getByTestId('smbd-negotiation')).toContainText('server: accept');
  await expect(page.getByTestId('smbd-server-rules')).not.toContainText('FAIL');
  await page.getByTestId('smbd-burst').click();
  await page.getByTestId('smbd-step').click();
  await expect(page.getByTestId('smbd-client-send')).not.toHaveText('0');      // the send queue is full
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.getByTestId('smbd-board').screenshot({ path: `${SHOTS}/lab-smbd-credit-board-mid-transfer.png` });
  await page.getByTestId('smbd-run').click();
  await expect(page.getByTestId('smbd-stalled')).toBeVisible();
  await expect(page.getByTestId('smbd-client-SendCredits')).toHaveText('0');
  await expect(page.getByTestId('smbd-server-SendCredits')).toHaveText('0');
  await page.getByTestId('smbd-board').screenshot({ path: `${SHOTS}/lab-smbd-deadlock.png` });

  // the same burst with the spec's rule: no stall
  await page.getByTestId('smbd-client-profile').selectOption('spec');
  await page.getByTestId('smbd-server-profile').selectOption('spec');
  await page.getByTestId('smbd-start').click();
  await page.getByTestId('smbd-burst').click();
  await page.getByTestId('smbd-run').click();
  await expect(page.getByTestId('smbd-client-delivered')).toHaveText('24');
  await expect(page.getByTestId('smbd-stalled')).toHaveCount(0);

  // keepalive against a hung server
  await page.getByTestId('smbd-credits').selectOption('linux');
  await page.getByTestId('smbd-start').click();
  await page.getByTestId('smbd-idle').click();
  await expect(page.getByTestId('smbd-client-keepalive')).toHaveText('keepalive NONE');
  await page.getByTestId('smbd-hang').click();
  await expect(page.getByTestId('smbd-client-keepalive')).toHaveText('keepalive SENT');
  await page.getByTestId('smbd-wait5').click();
  await expect(page.getByTestId('smbd-client-disconnect')).toContainText('keepalive.timeout');

  // SMB2 READ over RDMA with the token invalidated by the response
  await page.getByTestId('smbd-start').click();
  await page.getByTestId('smbd-read-inv').click();
  await expect(page.getByTestId('smbd-io')).toContainText('data verified');
  await expect(page.getByTestId('smbd-io')).toContainText('IBV_WR_SEND_WITH_INV');
  await page.getByTestId('smbd-measure-run').click();
  await expect(page.getByTestId('smbd-measure')).toContainText('throughput ratio', { timeout: 60_000 });
  await expect(page.getByTestId('smbd-crossings')).toContainText('64 per crossing 16 crossings');
  await page.getByTestId('lab-smbd-tab').screenshot({ path: `${SHOTS}/lab-smbd-io.png` });

  // the tab with everything on it (board, negotiation, fragments, I/O) passes axe in both themes
  for (const theme of ['light', 'dark'] as const) {
    if ((await page.locator('html').getAttribute('data-theme')) !== theme) await page.getByTestId('theme-toggle').click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
    const r = await new AxeBuilder({ page }).include('[data-testid="lab-smbd-tab"]').withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    expect(r.violations.map((v) => `${theme} ${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`)).toEqual([]);
  }

  // ksmbd refuses the MS-SMBD 4.1 example's request (MaxFragmentedSize exactly 128 KiB); the spec server accepts it
  await page.getByTestId('smbd-server-profile').selectOption('ksmbd');
  await page.getByTestId('smbd-request').selectOption('example');
  await page.getByTestId('smbd-start').click();
  await expect(page.getByTestId('smbd-negotiation')).toContainText('server: terminate');
  await expect(page.locator('[data-rule="req.max-fragmented-size"]')).toContainText('FAIL');
  await page.getByTestId('smbd-negotiation').screenshot({ path: `${SHOTS}/lab-smbd-ksmbd-refuses-4.1.png` });
  await page.getByTestId('smbd-server-profile').selectOption('spec');
  await page.getByTestId('smbd-start').click();
  await expect(page.getByTestId('smbd-negotiation')).toContainText('server: accept');
  await expect(page.getByTestId('smbd-request-hex')).toHaveText('00 01 00 01 00 00 0a 00 00 04 00 00 00 04 00 00 00 00 02 00');
  expect(problems).toEqual([]);
});
