// Lab 3 (BMME / iWARP) guided in the console: the Labs panel lists it, Start opens a fresh session with its devices,
// "Do it" on every step runs it through the backend host and the step turns green; "Why" shows the rule and its
// source; a screenshot of the lab panel per section (e2e/screenshots/lab-bmme-<section>.png).
import fs from 'node:fs';
import { expect, test } from '@playwright/test';
import { START, panel } from './helpers.ts';

const lab = JSON.parse(fs.readFileSync('labs/bmme/lab.json', 'utf8')) as { sections: { id: string; steps: { id: string }[] }[] };

test('lab 3 walks to green, section by section', async ({ page }) => {
  test.setTimeout(180_000);
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(START);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');
  await panel(page, 'labs');
  await page.getByTestId('lab-open-bmme').click();
  await expect(page.getByTestId('lab-bmme')).toBeVisible();
  await expect(page.getByTestId('lab-do-pair')).toBeDisabled();   // not started yet
  await page.getByTestId('lab-start').click();
  await expect(page.getByTestId('lab-do-pair')).toBeEnabled();

  await page.getByTestId('lab-why-pair').click();
  await expect(page.getByTestId('lab-why-text-pair')).toContainText('IBTA');
  await expect(page.getByTestId('lab-modelled-unfenced')).toContainText('Modelled');

  fs.mkdirSync('e2e/screenshots', { recursive: true });
  for (const sec of lab.sections) {
    for (const st of sec.steps) {
      const row = page.getByTestId(`lab-step-${st.id}`);
      await expect(row).toHaveAttribute('data-state', 'todo');
      await page.getByTestId(`lab-do-${st.id}`).click();
      await expect(row).toHaveAttribute('data-state', 'holds');
    }
    await page.getByTestId(`lab-section-${sec.id}`).screenshot({ path: `e2e/screenshots/lab-bmme-${sec.id}.png` });
  }
  await expect(page.locator('[data-testid^="lab-step-"][data-state="holds"]')).toHaveCount(lab.sections.reduce((n, s) => n + s.steps.length, 0));
  // the lab's commands went through the host like any other: the Memory panel's key table shows the lab's keys
  await panel(page, 'memory');
  await expect(page.getByTestId('key-row').first()).toBeVisible();
  expect(problems).toEqual([]);
});
