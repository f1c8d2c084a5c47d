// Lab 1 (scatter lists under one key) in the console: build a gapped list, see where the page rule breaks and why,
// run the five strategies and compare them; screenshots of the builder and of the comparison.
import fs from 'node:fs';
import { expect, test } from '@playwright/test';
import { START, noErrors, openLab, panel, shot, walkLab, type LabFile } from './helpers.ts';

const lab = JSON.parse(fs.readFileSync('labs/sg/lab.json', 'utf8')) as LabFile;

test('lab 1 walks to green in the Labs panel, section by section', async ({ page }) => {
  test.setTimeout(180_000);
  const problems = await openLab(page, 'sg');
  await page.getByTestId('lab-start').click();
  await page.getByTestId('lab-why-build').click();
  await expect(page.getByTestId('lab-why-text-build')).toContainText('ib_sg_to_pages');
  await expect(page.getByTestId('lab-modelled-pool512')).toContainText('page_size_cap');
  await walkLab(page, 'sg', lab, 60_000);
  expect(problems).toEqual([]);
});

test('the SG lab: the builder marks the gap, the five strategies run side by side', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto(START);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');
  await panel(page, 'sg');

  // a list of whole pages with one element one byte off: fast registration maps the first four
  const gen = page.getByRole('form', { name: 'generate a scatter list' });
  await gen.getByRole('combobox').first().selectOption('one_byte_off');
  await gen.getByRole('spinbutton').nth(0).fill('8');
  await gen.getByRole('spinbutton').nth(1).fill('32768');
  await page.getByTestId('sg-generate').click();
  await expect(page.getByTestId('sg-verdict')).toContainText('maps 4 of 8 elements: element 4 starts inside a 4096-byte page');
  await expect(page.getByTestId('sg-el-4')).toHaveAttribute('data-reason', 'start');
  await expect(page.getByTestId('sg-el-4')).toHaveClass(/sg-stop/);
  await expect(page.getByTestId('sg-el-5')).toHaveAttribute('data-reason', 'not_reached');
  await expect(page.getByTestId('sg-el-3')).toHaveAttribute('data-reason', 'ok');
  await shot(page, 'sg-builder');

  // at 512-byte pages the same element still breaks the rule (it is one byte off, not one sector)
  await gen.getByRole('combobox').nth(1).selectOption('512');
  await expect(page.getByTestId('sg-el-4')).toHaveAttribute('data-reason', 'start');

  await page.getByTestId('sg-compare').click();
  await expect(page.getByTestId('sg-comparison')).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('sg-row-fast_reg')).toHaveAttribute('data-outcome', 'refused');
  await expect(page.getByTestId('sg-row-fast_reg')).toContainText('ib_map_mr_sg mapped 4 of 8');
  for (const s of ['bounce', 'multi_mr', 'indirect']) {
    await expect(page.getByTestId(`sg-row-${s}`)).toHaveAttribute('data-outcome', 'ok');
    await expect(page.getByTestId(`sg-row-${s}`)).toContainText('ok, verified');
  }
  await expect(page.getByTestId('sg-row-pool512')).toHaveAttribute('data-outcome', 'refused');
  await expect(page.getByTestId('sg-chart').locator('canvas')).toHaveCount(1);
  await shot(page, 'sg-comparison');
  await noErrors(page);
});
