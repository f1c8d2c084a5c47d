// Lab 3 (BMME / iWARP) guided in the console: the Labs panel lists it, Start opens a fresh session with its devices,
// "Do it" on every step runs it through the backend host and the step turns green; "Why" shows the rule and its
// source; a screenshot of the lab panel per section (e2e/screenshots/lab-bmme-<section>.png).
import fs from 'node:fs';
import { expect, test } from '@playwright/test';
import { openLab, panel, walkLab, type LabFile } from './helpers.ts';

const lab = JSON.parse(fs.readFileSync('labs/bmme/lab.json', 'utf8')) as LabFile;

test('lab 3 walks to green, section by section', async ({ page }) => {
  test.setTimeout(180_000);
  const problems = await openLab(page, 'bmme');
  await expect(page.getByTestId('lab-do-pair')).toBeDisabled();   // not started yet
  await page.getByTestId('lab-start').click();
  await expect(page.getByTestId('lab-do-pair')).toBeEnabled();

  await page.getByTestId('lab-why-pair').click();
  await expect(page.getByTestId('lab-why-text-pair')).toContainText('IBTA');
  await expect(page.getByTestId('lab-modelled-unfenced')).toContainText('Modelled');

  await walkLab(page, 'bmme', lab);
  await expect(page.locator('[data-testid^="lab-step-"][data-state="holds"]')).toHaveCount(lab.sections.reduce((n, s) => n + s.steps.length, 0));
  // the lab's commands went through the host like any other: the Memory panel's key table shows the lab's keys
  await panel(page, 'memory');
  await expect(page.getByTestId('key-row').first()).toBeVisible();
  expect(problems).toEqual([]);
});
