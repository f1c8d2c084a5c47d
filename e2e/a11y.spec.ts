// Accessibility as a test: axe-core (WCAG 2 A/AA rules) over every registered panel, in the light and the dark theme,
// with objects on screen (a device, a PD, buffers, MRs, a CQ, connected QPs, a WRITE and its packets), 0 violations.
// Also: a fresh console opens on the orientation, which says where the labs are; the tabs are reachable by keyboard.
import { expect, test } from '@playwright/test';
import { START, allocBuffers, axeEveryPanel, panel, shot, violations } from './helpers.ts';

test.describe.configure({ mode: 'serial' });

test('a fresh console opens on the orientation, which says where to start and where the labs are', async ({ page }) => {
  await page.goto(START);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');
  const o = page.getByTestId('orientation');
  await expect(o).toBeVisible();
  await expect(o).toContainText('software RDMA device');
  await expect(page.getByTestId('orientation-labs')).toContainText(/Labs/);
  // the Labs panel when a lab platform registered one, else the orientation says where labs will be
  const labsTab = await page.getByTestId('nav-labs').count();
  if (labsTab) await expect(page.getByTestId('orientation-open-labs')).toBeVisible();
  else await expect(page.getByTestId('orientation-labs')).toContainText('not in this console yet');
  await shot(page, 'first-run');
  expect(await violations(page)).toEqual([]);
  // every panel is listed and one click away
  await page.getByTestId('orientation-go-queues').click();
  await expect(page.getByTestId('panel-queues')).toBeVisible();
  await expect(o).toHaveCount(0);
  // a returning user lands where they left, without the orientation
  await page.goto(START);
  await expect(page.getByTestId('panel-queues')).toBeVisible();
  await expect(page.getByTestId('orientation')).toHaveCount(0);
});

test('every panel passes axe (WCAG 2 A/AA) in the light and the dark theme', async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto(START);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');
  // something on every panel: a device with a PD, buffers and MRs, a CQ, two connected QPs, a WRITE run to idle
  await panel(page, 'devices');
  if (!(await page.getByTestId('device-row').count())) await page.getByTestId('create-device').click();
  const row = page.getByTestId('device-row').first();   // the forms default to the first device's objects
  await row.getByTestId('alloc-pd').click();
  await expect(row).toContainText('pd ');
  await panel(page, 'memory');
  const [a, b] = await allocBuffers(page, 2);
  for (const buf of [a!, b!]) { await page.getByTestId('mr-buffer').selectOption(buf); await page.getByTestId('reg-mr').click(); }
  await panel(page, 'queues');
  await page.getByTestId('create-cq').click();
  await page.getByTestId('create-qp').click();
  await page.getByTestId('create-qp').click();
  await page.getByTestId('connect-qps').click();
  await page.getByTestId('post-send').click();
  await page.getByTestId('run-idle').click();
  const found = await axeEveryPanel(page);
  expect(found).toEqual([]);
});

test('the tabs are reachable and operable by keyboard, with a visible focus', async ({ page }) => {
  await page.goto(`${START}#devices`);
  await page.getByTestId('nav-devices').focus();
  await page.keyboard.press('ArrowRight');
  await expect(page.getByTestId('panel-memory')).toBeVisible();
  await expect(page.getByTestId('nav-memory')).toBeFocused();
  const outline = await page.getByTestId('nav-memory').evaluate((el) => getComputedStyle(el).outlineStyle);
  expect(outline).not.toBe('none');
});
