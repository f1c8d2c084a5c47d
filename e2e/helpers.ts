// Shared by the Playwright specs: the console's URL, screenshots, and the few UI steps every spec takes.
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
