// Lab 4 (NVMe-oF) in the console: its guided steps walked to green in the Labs panel (a screenshot per section:
// lab-nvmf-admin.png is the setup view: CM, Connect, CC.EN, Identify), then the lab's own tab: the flow view of the
// console's session, an offloaded READ's timeline (host driver and device rows) stopped mid-command by the step slider
// (lab-nvmf-flow-mid-command.png), the device's offload card: staging grid, backend rings, namespace map, counters
// (lab-nvmf-offload-card.png; the section "offload" walked: lab-nvmf-offload.png), and the controller and queues (lab-nvmf-setup.png).
import fs from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { openLab, panel, walkLab, type LabFile } from './helpers.ts';

const lab = JSON.parse(fs.readFileSync('labs/nvmf/lab.json', 'utf8')) as LabFile;

test('lab 4 walks to green; the flow view shows a READ mid-command', async ({ page }) => {
  test.setTimeout(300_000);
  const problems = await openLab(page, 'nvmf');
  await page.getByTestId('lab-start').click();
  await walkLab(page, 'nvmf', lab, 60_000);
  await expect(page.locator('[data-testid^="lab-step-"][data-state="holds"]')).toHaveCount(lab.sections.reduce((n, s) => n + s.steps.length, 0));

  await panel(page, 'lab-nvmf');
  await page.getByTestId('nvmf-refresh').click();
  await expect(page.getByTestId('nvmf-controller')).toContainText('CNTLID 1');
  await expect(page.getByTestId('nvmf-queues')).toContainText('ESTABLISHED');
  await page.getByTestId('nvmf-controller').screenshot({ path: 'e2e/screenshots/lab-nvmf-setup.png' });
  // the section offload: the device's card, then one of the last offloaded READs (host driver and device rows)
  await expect(page.getByTestId('nvmf-offload')).toContainText('Device offload (modelled)');
  await expect(page.getByTestId('nvmf-nsmap')).toContainText('512');
  await expect(page.getByTestId('nvmf-backend')).toContainText('down');   // the backend timeout step tore it down
  await page.getByTestId('nvmf-offload').screenshot({ path: 'e2e/screenshots/lab-nvmf-offload-card.png' });
  await page.getByTestId('nvmf-lines').locator('li', { hasText: 'RDMA_WRITE' }).last().getByRole('button').click();
  await expect(page.getByTestId('nvmf-timeline')).toContainText('device (modelled)');
  await expect(page.getByTestId('nvmf-timeline')).toContainText('SQ_DOORBELL');
  await expect(page.getByTestId('nvmf-timeline')).toContainText('IBV_WR_RDMA_WRITE');
  await expect(page.getByTestId('nvmf-timeline')).not.toContainText('target software');
  const total = Number((await page.getByTestId('nvmf-step').getAttribute('max')) ?? '0');
  expect(total).toBeGreaterThan(1);
  await page.getByTestId('nvmf-step').fill(String(Math.floor(total / 2)));
  await expect(page.getByTestId('nvmf-timeline')).toContainText(`${Math.floor(total / 2)} of ${total} steps`);
  await page.getByTestId('nvmf-flow-view').screenshot({ path: 'e2e/screenshots/lab-nvmf-flow-mid-command.png' });
  // the flow view with data on screen passes axe (WCAG 2 A/AA), in both themes
  for (const theme of ['light', 'dark'] as const) {
    if ((await page.locator('html').getAttribute('data-theme')) !== theme) await page.getByTestId('theme-toggle').click();
    const r = await new AxeBuilder({ page }).include('[data-testid="lab-nvmf-tab"]').withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    expect(r.violations.map((v) => `${theme} ${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`)).toEqual([]);
  }
  expect(problems).toEqual([]);
});
