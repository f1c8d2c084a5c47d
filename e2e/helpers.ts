// Shared by the Playwright specs: the console's URL, screenshots, and the few UI steps every spec takes.
import AxeBuilder from '@axe-core/playwright';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, type Locator, type Page } from '@playwright/test';
import { freePort } from '../scripts/browser.mjs';

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
export { freePort as freeTcpPort };

/** axe-core's WCAG 2 A/AA violations on the page as it is, one line each */
export async function violations(page: Page): Promise<string[]> {
  const r = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

/** every registered panel (the tabs) in the light and the dark theme: the violations found, "theme panel: ..." */
export async function axeEveryPanel(page: Page): Promise<string[]> {
  const ids = await page.locator('[role="tab"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')!.replace(/^nav-/, '')));
  expect(ids.length).toBeGreaterThanOrEqual(7);
  const found: string[] = [];
  for (const theme of ['light', 'dark'] as const) {
    if ((await page.locator('html').getAttribute('data-theme')) !== theme) await page.getByTestId('theme-toggle').click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
    for (const id of ids) {
      await panel(page, id);
      await page.waitForTimeout(150);   // the panel's first frame of data
      for (const v of await violations(page)) found.push(`${theme} ${id}: ${v}`);
    }
  }
  return found;
}

/** A backend server of a spec's own (fresh session directory, no default device), not the config's shared one. */
export interface Server { proc: ChildProcess; url: string; dir: string }
export async function startServer(env: Record<string, string> = {}): Promise<Server> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verbslab-e2e-own-'));
  const proc = spawn(process.execPath, ['--import', 'tsx', 'app/server/main.ts', '--port', String(port), '--session-dir', dir, '--default-device', 'none'],
    { env: { ...process.env, VERBSLAB_TOKEN: TOKEN, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout!.on('data', (d) => { log += d; });
  proc.stderr!.on('data', (d) => { log += d; });
  const t0 = Date.now();
  for (;;) {
    try { if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break; } catch { /* not up yet */ }
    if (proc.exitCode !== null || Date.now() - t0 > 60_000) throw new Error(`server on ${port} did not start: ${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { proc, url: `http://127.0.0.1:${port}/?token=${TOKEN}`, dir };
}

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

/** "Do it" on every step in order, each turning green; a screenshot of each section (SHOTS/lab-<id>-<section>.png)
 *  unless `shots` is false. */
export async function walkLab(page: Page, id: string, lab: LabFile, timeout?: number, shots = true) {
  fs.mkdirSync(SHOTS, { recursive: true });
  for (const sec of lab.sections) {
    for (const st of sec.steps) {
      const row = page.getByTestId(`lab-step-${st.id}`);
      await expect(row).toHaveAttribute('data-state', 'todo');
      await page.getByTestId(`lab-do-${st.id}`).click();
      await expect(row).toHaveAttribute('data-state', 'holds', timeout ? { timeout } : undefined);
    }
    if (shots) await page.getByTestId(`lab-section-${sec.id}`).screenshot({ path: `${SHOTS}/lab-${id}-${sec.id}.png` });
  }
}
