// Lab 2 (completion notification) in the console: its guided steps walked to green in the Labs panel (a screenshot
// per section), then the lab's own tab: the explorer finds an in-order violation for "notify may return > 0", the
// first failing seed replays in the console's session step by step up to the out-of-order delivery (which completion,
// by which context), with the CQ state and every consumer at that step; the Queues panel shows the replayed CQ.
import fs from 'node:fs';
import { expect, test } from '@playwright/test';
import { START, panel } from './helpers.ts';

const lab = JSON.parse(fs.readFileSync('labs/cq/lab.json', 'utf8')) as { sections: { id: string; steps: { id: string }[] }[] };

test('lab 2 walks to green, then the explorer\'s failing seed replays step by step', async ({ page }) => {
  test.setTimeout(240_000);
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(START);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');
  await panel(page, 'labs');
  await page.getByTestId('lab-open-cq').click();
  await expect(page.getByTestId('lab-cq')).toBeVisible();
  await page.getByTestId('lab-start').click();
  fs.mkdirSync('e2e/screenshots', { recursive: true });
  for (const sec of lab.sections) {
    for (const st of sec.steps) {
      const row = page.getByTestId(`lab-step-${st.id}`);
      await page.getByTestId(`lab-do-${st.id}`).click();
      await expect(row).toHaveAttribute('data-state', 'holds');
    }
    await page.getByTestId(`lab-section-${sec.id}`).screenshot({ path: `e2e/screenshots/lab-cq-${sec.id}.png` });
  }
  await page.getByTestId('lab-why-lost-wakeup').click();
  await expect(page.getByTestId('lab-why-text-lost-wakeup')).toContainText('rxe_req_notify_cq');

  // the explorer and the replay (the lab's own tab)
  await panel(page, 'lab-cq');
  await page.getByTestId('lab-cq-variant').selectOption('report-missed');
  await page.getByTestId('lab-cq-explore').click();
  await expect(page.getByTestId('lab-cq-explored')).toContainText('report-missed: violation', { timeout: 60_000 });
  await page.getByTestId('lab-cq-replay-first').click();
  await expect(page.getByTestId('lab-cq-panel')).toContainText('step 0 of 0');
  await page.getByTestId('cq-step').click();
  await expect(page.getByTestId('lab-cq-panel')).toContainText('step 1 of 1');
  await expect(page.getByTestId('cq-consumers')).toContainText('irq: idle');
  await page.getByTestId('lab-cq-to-violation').click();
  await expect(page.getByTestId('cq-violations')).toContainText('delivered by', { timeout: 60_000 });
  await expect(page.getByTestId('cq-state')).toBeVisible();
  await expect(page.getByTestId('cq-consumer-worker')).toHaveCount(3);
  await page.getByTestId('lab-cq-panel').screenshot({ path: 'e2e/screenshots/lab-cq-violation.png' });
  // the replay ran in the console's session: the Queues panel has the run's CQ
  await panel(page, 'queues');
  await expect(page.getByTestId('cq-card').first()).toBeVisible();
  expect(problems).toEqual([]);
});
