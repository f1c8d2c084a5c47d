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

test('a step done by hand in the other panels turns green', async ({ page }) => {
  test.setTimeout(90_000);
  const problems = await openLab(page, 'bmme');
  await page.getByTestId('lab-start').click();
  await expect(page.getByTestId('lab-step-alloc')).toHaveAttribute('data-state', 'todo');
  // by hand, not "Do it": a PD on dev0 (Devices panel), then a fast-registration MR in it (Memory panel): its key
  // starts FREE, the outcome lab step "alloc" expects
  await panel(page, 'devices');
  const dev0 = page.getByTestId('device-row').filter({ hasText: 'dev0' });
  await dev0.getByTestId('alloc-pd').click();
  await expect(dev0).toContainText('pd ');
  await panel(page, 'memory');
  const free = page.locator('[data-testid="key-row"][data-type="MR"][data-kind="fast_reg"][data-state="free"]');
  const before = await free.count();
  await page.getByTestId('alloc-fr-mr').click();
  await expect(free).toHaveCount(before + 1);
  await panel(page, 'labs');
  await expect(page.getByTestId('lab-step-alloc')).toHaveAttribute('data-state', 'holds');
  await expect(page.getByTestId('lab-by-hand-alloc')).toBeVisible();
  await expect(page.getByTestId('lab-step-pair')).toHaveAttribute('data-state', 'todo');       // setup: nothing to see
  await expect(page.getByTestId('lab-step-register')).toHaveAttribute('data-state', 'todo');   // not done yet
  await page.getByTestId('lab-section-fastreg').screenshot({ path: 'e2e/screenshots/lab-bmme-by-hand.png' });
  expect(problems).toEqual([]);
});
