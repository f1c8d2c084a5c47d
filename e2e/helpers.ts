// Shared by the Playwright specs: the console's URL, screenshots, and the few UI steps every spec takes.
import fs from 'node:fs';
import { expect, type Locator, type Page } from '@playwright/test';

export const TOKEN = process.env.VERBSLAB_TOKEN ?? 'e2e-token';
export const START = process.env.VL_CONSOLE_URL ?? `/?token=${TOKEN}`;
export const SHOTS = 'e2e/screenshots';

/** select the option whose label contains `text` */
export async function selectContaining(sel: Locator, text: string) {
  const value = await sel.evaluate((el, t) => {
    const o = [...(el as HTMLSelectElement).options].find((x) => x.textContent?.includes(t));
    return o ? o.value : null;
  }, text);
  expect(value, `an option containing "${text}"`).not.toBeNull();
  await sel.selectOption(value!);
}

export async function panel(page: Page, id: string) {
  await page.getByTestId(`nav-${id}`).click();
  await expect(page.getByTestId(`panel-${id}`)).toBeVisible();
}

export async function shot(page: Page, name: string) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

/** allocate `n` 4 KiB buffers in the Memory panel (it must be open); returns their handles, in order */
export async function allocBuffers(page: Page, n: number): Promise<string[]> {
  const bufs: string[] = [];
  for (let i = 0; i < n; i++) {
    const before = await page.getByTestId('buffer-row').count();
    await page.getByTestId('buffer-length').fill('4096');
    await page.getByTestId('alloc-buffer').click();
    await expect(page.getByTestId('buffer-row')).toHaveCount(before + 1);
    bufs.push((await page.getByTestId('buffer-row').last().getAttribute('data-buffer'))!);
  }
  return bufs;
}

export async function noErrors(page: Page) {
  await expect(page.getByTestId('error-message')).toHaveCount(0);
}

/** a TCP port free on 127.0.0.1 right now (the same helper the test and bench scripts use) */
export { freePort as freeTcpPort } from '../scripts/browser.mjs';

/** A lab's sections and step ids (labs/<id>/lab.json). */
export interface LabFile { sections: { id: string; steps: { id: string }[] }[] }

/** Opens the console on the Labs panel with lab `id` shown (not started); returns the page errors seen from now on. */
export async function openLab(page: Page, id: string): Promise<string[]> {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(START);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');
  await panel(page, 'labs');
  await page.getByTestId(`lab-open-${id}`).click();
  await expect(page.getByTestId(`lab-${id}`)).toBeVisible();
  return problems;
}

/** "Do it" on every step in order, each turning green; a screenshot of each section (SHOTS/lab-<id>-<section>.png). */
export async function walkLab(page: Page, id: string, lab: LabFile, timeout?: number) {
  fs.mkdirSync(SHOTS, { recursive: true });
  for (const sec of lab.sections) {
    for (const st of sec.steps) {
      const row = page.getByTestId(`lab-step-${st.id}`);
      await expect(row).toHaveAttribute('data-state', 'todo');
      await page.getByTestId(`lab-do-${st.id}`).click();
      await expect(row).toHaveAttribute('data-state', 'holds', timeout ? { timeout } : undefined);
    }
    await page.getByTestId(`lab-section-${sec.id}`).screenshot({ path: `${SHOTS}/lab-${id}-${sec.id}.png` });
  }
}
