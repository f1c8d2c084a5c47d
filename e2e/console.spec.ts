// A new user's path through the live console, in browser mode, against the real backend host and the
// software device: two devices, two buffers, an MR on each, CQs and RC QPs, connect, write bytes into A,
// RDMA WRITE A -> B, run the engine, and see the bytes in B's hex view, the packets on the wire and the CQE
// in the ring; then a wrong rkey and IBV_WC_REM_ACCESS_ERR explained on screen. Screenshots of every panel.
import { expect, test } from '@playwright/test';
import { SHOTS, START, allocBuffers, noErrors, panel, selectContaining, shot } from './helpers.ts';
// unique per run, so the spec also passes against a session that already holds devices
const RUN = Math.random().toString(36).slice(2, 7);
const LEFT = `left_${RUN}`;
const RIGHT = `right_${RUN}`;

// one backend for the whole file: the last test kills and restarts it
test.describe.configure({ mode: 'serial' });

/** full-page screenshot from the top (the header is sticky: a scrolled page would draw it mid-image) */
test('a new user writes bytes with RDMA WRITE, then sees a remote access error explained', async ({ page }) => {
  test.setTimeout(120_000);
  const consoleErrors: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`${m.text()} ${m.location().url}`); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.goto(START);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');

  // ---- devices
  await panel(page, 'devices');
  await expect(page.getByTestId('devices-panel')).toHaveAttribute('data-loaded', 'true');
  const rowsBefore = await page.getByTestId('device-row').count();
  for (const name of [LEFT, RIGHT]) {
    await page.getByTestId('device-name').fill(name);
    await page.getByTestId('create-device').click();
    await expect(page.getByTestId('device-row').filter({ hasText: name })).toHaveCount(1);
  }
  await expect(page.getByTestId('device-row')).toHaveCount(rowsBefore + 2);
  await noErrors(page);
  for (const name of [LEFT, RIGHT]) {
    const row = page.getByTestId('device-row').filter({ hasText: name });
    await row.getByTestId('alloc-pd').click();
    await expect(row).toContainText('pd ');
  }
  await page.getByTestId('device-row').filter({ hasText: LEFT }).click();
  await expect(page.getByTestId('device-detail')).toContainText('IBV_DEVICE_');
  await expect(page.getByTestId('real-devices')).toContainText('none found');
  await shot(page, 'devices');

  // ---- memory: two buffers, an MR on each
  await panel(page, 'memory');
  const [bufA, bufB] = await allocBuffers(page, 2);
  // validation as you type: REMOTE_WRITE without LOCAL_WRITE
  await page.getByTestId('access-IBV_ACCESS_LOCAL_WRITE').uncheck();
  await expect(page.getByTestId('reg-mr-form').getByTestId('validation-message')).toContainText('need');
  await expect(page.getByTestId('reg-mr')).toBeDisabled();
  await page.getByTestId('access-IBV_ACCESS_LOCAL_WRITE').check();
  for (const [dev, buf] of [[LEFT, bufA], [RIGHT, bufB]] as const) {
    const before = await page.getByTestId('key-row').count();
    await selectContaining(page.getByTestId('mr-pd'), `(${dev})`);
    await page.getByTestId('mr-buffer').selectOption(buf);
    await page.getByTestId('reg-mr').click();
    await expect(page.getByTestId('key-row')).toHaveCount(before + 1);
  }
  await noErrors(page);

  // ---- queues: a CQ and an RC QP per device, connected
  await panel(page, 'queues');
  for (const dev of [LEFT, RIGHT]) {
    const before = await page.getByTestId('cq-card').count();
    await selectContaining(page.getByTestId('cq-device'), dev);
    await page.getByTestId('create-cq').click();
    await expect(page.getByTestId('cq-card')).toHaveCount(before + 1);
  }
  for (const dev of [LEFT, RIGHT]) {
    const before = await page.getByTestId('qp-card').count();
    await selectContaining(page.getByTestId('qp-pd'), `(${dev})`);
    await page.getByTestId('qp-type').selectOption('IBV_QPT_RC');
    await page.getByTestId('create-qp').click();
    await expect(page.getByTestId('qp-card')).toHaveCount(before + 1);
  }
  await noErrors(page);
  await selectContaining(page.getByTestId('connect-a'), `on ${LEFT}`);
  await selectContaining(page.getByTestId('connect-b'), `on ${RIGHT}`);
  await page.getByTestId('connect-qps').click();
  await noErrors(page);
  await expect(page.getByTestId('qp-card').filter({ hasText: `on ${LEFT}` }).getByTestId('qp-state-diagram')).toHaveAttribute('data-state', 'IBV_QPS_RTS');

  // ---- write bytes into buffer A
  await panel(page, 'memory');
  await page.locator(`[data-testid="buffer-row"][data-buffer="${bufA}"]`).click();
  await page.getByTestId('write-offset').fill('0');
  await page.getByTestId('write-data').fill('cafebabe01020304');
  await page.getByTestId('write-bytes').click();
  const hexA = page.locator(`[data-testid="hex-view"][data-buffer="${bufA}"]`);
  await expect(hexA.locator('.hb').nth(0)).toHaveText('ca');
  await expect(hexA.locator('.hb').nth(7)).toHaveText('04');

  // ---- RDMA WRITE A -> B
  await panel(page, 'queues');
  await selectContaining(page.getByTestId('send-qp'), `on ${LEFT}`);
  await page.getByTestId('send-opcode').selectOption('IBV_WR_RDMA_WRITE');
  await selectContaining(page.getByTestId('send-local-mr'), `on ${LEFT}`);
  await page.getByTestId('send-length').fill('8');
  await selectContaining(page.getByTestId('send-remote-mr'), `on ${RIGHT}`);
  await page.getByTestId('send-wrid').fill('1');
  await page.getByTestId('post-send').click();
  await noErrors(page);
  await page.getByTestId('run-idle').click();
  await expect(page.getByTestId('run-status')).toContainText('run');
  const cqLeft = page.getByTestId('cq-card').filter({ hasText: `on ${LEFT}` });
  await expect(cqLeft.getByTestId('ring-entry').first()).toContainText('IBV_WC_SUCCESS');
  await cqLeft.getByTestId('poll-cq').click();
  await expect(cqLeft.getByTestId('wc-status').first()).toHaveText('IBV_WC_SUCCESS');
  await shot(page, 'queues');

  // ---- B's hex view shows the bytes, highlighted as written by the device
  await panel(page, 'memory');
  await page.locator(`[data-testid="buffer-row"][data-buffer="${bufB}"]`).click();
  const hexB = page.locator(`[data-testid="hex-view"][data-buffer="${bufB}"]`);
  await expect(hexB.locator('.hb').nth(0)).toHaveText('ca');
  await expect(hexB.locator('.hb').nth(3)).toHaveText('be');
  await expect(hexB.locator('.hb').nth(7)).toHaveText('04');
  await expect(hexB.locator('.hb.changed').first()).toBeVisible();
  await shot(page, 'memory');

  // ---- packets on the wire
  await panel(page, 'wire');
  await expect(page.getByTestId('packet-row').filter({ hasText: 'RDMA Write' }).first()).toBeVisible();
  await expect(page.getByTestId('packet-row').filter({ hasText: 'Acknowledge' }).first()).toBeVisible();
  await page.getByTestId('packet-row').filter({ hasText: 'RDMA Write' }).first().click();
  await expect(page.getByTestId('packet-detail')).toContainText('reth');
  await expect(page.getByTestId('ladder-arrow').first()).toBeVisible();
  await shot(page, 'wire');

  // ---- the load generator repeats that WRITE while the engine steps, then stops
  await panel(page, 'run');
  await expect(page.getByTestId('traffic-qp')).toContainText('IBV_WR_RDMA_WRITE');
  await page.getByTestId('traffic-toggle').click();
  await expect(page.getByTestId('traffic-status')).toContainText('running');
  await page.getByTestId('step-count').fill('3000');
  await page.getByRole('button', { name: /Step ×3000/ }).click();
  await expect(page.getByTestId('run-status')).toContainText('3000 steps');
  await expect(page.getByTestId('traffic-status')).toContainText(/running on QP \d+: [1-9]\d* posted/);   // from engine.step's reply
  // on autorun the counts move by themselves (the console reads them twice a second), then Pause
  const postedNow = async () => Number(/(\d+) posted/.exec(await page.getByTestId('traffic-status').innerText())?.[1] ?? 0);
  const before = await postedNow();
  await page.getByTestId('run-play').click();
  await expect.poll(postedNow, { timeout: 10_000 }).toBeGreaterThan(before);
  await page.getByTestId('run-play').click();
  await expect(page.getByTestId('run-play')).toHaveAttribute('aria-pressed', 'false');
  // ---- the same load free running: the engine on its own thread, the console shown a sample and the device's rings
  await page.getByTestId('run-speed').fill('200000');
  await page.getByRole('button', { name: 'Set speed' }).click();
  await page.getByTestId('run-free').click();   // checked once the host confirmed it
  await expect(page.getByTestId('run-free')).toBeChecked();
  await page.getByTestId('run-play').click();
  await expect(page.getByTestId('run-step')).toBeDisabled();
  await panel(page, 'queues');
  await expect(page.getByTestId('rings-sampled')).toContainText(/as the device held them\s+after event #[\d,]+/, { timeout: 15_000 });
  await expect(page.getByTestId('sq-ring').first()).toBeVisible();
  await shot(page, 'queues-free-run');
  await panel(page, 'events');
  await expect(page.getByText(/not sent by the host \(sampled or dropped\)/)).toBeVisible();
  await expect(page.getByTestId('sampled-banner')).toContainText(/shown a sample .* [\d,]+ events were not sent/);
  await panel(page, 'wire');
  await expect(page.getByTestId('sampled-banner')).toContainText('gaps between them are not losses');
  await panel(page, 'run');
  await page.getByTestId('run-play').click();
  await expect(page.getByTestId('run-play')).toHaveAttribute('aria-pressed', 'false');
  await page.getByTestId('run-free').click();
  await expect(page.getByTestId('run-free')).not.toBeChecked();
  await panel(page, 'queues');
  await expect(page.getByTestId('rings-sampled')).toHaveCount(0);   // whole events again
  await panel(page, 'run');
  await page.getByTestId('traffic-toggle').click();
  await expect(page.getByTestId('traffic-status')).toContainText('stopped');
  const status = await page.getByTestId('traffic-status').innerText();
  expect(Number(/(\d+) posted/.exec(status)?.[1] ?? 0)).toBeGreaterThan(50);
  expect(Number(/(\d+) completions polled/.exec(status)?.[1] ?? 0)).toBeGreaterThan(50);
  await page.getByTestId('run-idle').click();
  await noErrors(page);

  // ---- wrong rkey: the responder refuses it
  await panel(page, 'queues');
  await selectContaining(page.getByTestId('send-qp'), `on ${LEFT}`);
  await selectContaining(page.getByTestId('send-local-mr'), `on ${LEFT}`);
  await selectContaining(page.getByTestId('send-remote-mr'), `on ${RIGHT}`);
  const good = (await page.getByTestId('send-rkey').inputValue()).trim();
  const wrong = `0x${((parseInt(good, 16) ^ 0xff) >>> 0).toString(16).padStart(8, '0')}`;
  await page.getByTestId('send-rkey').fill(wrong);
  await page.getByTestId('send-wrid').fill('2');
  await page.getByTestId('post-send').click();
  await noErrors(page);
  await page.keyboard.press('Alt+r');   // run to idle from the keyboard
  await cqLeft.getByTestId('poll-cq').click();
  const bad = cqLeft.getByTestId('wc').filter({ hasText: 'IBV_WC_REM_ACCESS_ERR' });
  await expect(bad).toHaveCount(1);
  await expect(bad.getByTestId('wc-explanation')).toContainText('the responder refused the rkey');
  await expect(cqLeft.getByTestId('ring-entry').filter({ hasText: 'IBV_WC_REM_ACCESS_ERR' })).toHaveCount(1);
  await shot(page, 'queues-rem-access-err');

  // ---- the NAK on the wire, the event log, run controls
  await panel(page, 'wire');
  await expect(page.getByTestId('packet-row').filter({ hasText: 'NAK' }).first()).toBeVisible();
  await panel(page, 'events');
  await page.getByTestId('filter-kind').selectOption('KeyCheck');
  await expect(page.getByTestId('event-row').first()).toBeVisible();
  await shot(page, 'events');
  await panel(page, 'run');
  await shot(page, 'run');
  await page.getByTestId('theme-toggle').click();
  await panel(page, 'queues');
  await shot(page, 'queues-dark');
  await panel(page, 'memory');
  await shot(page, 'memory-dark');
  // no script errors and no CSP violations along the way
  expect(consoleErrors).toEqual([]);
});

test('an unbuilt or refused command shows its error next to the form that sent it', async ({ page }) => {
  await page.goto(START);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');
  await panel(page, 'devices');
  await page.getByTestId('device-name').fill('Bad Name');
  await expect(page.getByTestId('create-device-form').getByTestId('validation-message')).toBeVisible();
  await expect(page.getByTestId('create-device')).toBeDisabled();
});

test('the backend host dies, the header says why, and restart brings the session back', async ({ page }) => {
  await page.goto(START);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');
  await panel(page, 'devices');
  await expect(page.getByTestId('devices-panel')).toHaveAttribute('data-loaded', 'true');
  const devices = await page.getByTestId('device-row').count();
  await panel(page, 'run');
  await page.getByTestId('kill-host').click();
  await expect(page.getByTestId('host-status')).toContainText('down');
  await page.screenshot({ path: `${SHOTS}/host-down.png` });
  await page.getByTestId('restart-host').click();
  // the new host replays the whole journal first (long if a benchmark ran in this session)
  await expect(page.getByTestId('host-status')).toHaveText('backend up', { timeout: 60_000 });
  await panel(page, 'devices');
  await expect(page.getByTestId('device-row')).toHaveCount(devices);
});

test('a console opened later draws what happened before it connected (events.recent)', async ({ browser }) => {
  const first = await browser.newPage();
  await first.goto(START);
  await expect(first.getByTestId('host-status')).toHaveText('backend up');
  const name = `late_${RUN}`;
  await panel(first, 'devices');
  await first.getByTestId('device-name').fill(name);
  await first.getByTestId('create-device').click();
  await expect(first.getByTestId('device-row').filter({ hasText: name })).toHaveCount(1);

  const later = await browser.newPage();
  const errors: string[] = [];
  later.on('pageerror', (e) => errors.push(String(e)));
  await later.goto(START);
  await expect(later.getByTestId('host-status')).toHaveText('backend up');
  await panel(later, 'events');
  await later.getByTestId('filter-text').fill(name);
  await expect(later.getByTestId('event-row').filter({ hasText: name }).first()).toBeVisible();
  // the device's creation happened before this page existed; it is in the log, once
  await expect.poll(() => later.evaluate((n) => {
    const ring = (globalThis as unknown as { __vlStore: { getState(): { model: { ring: { total: number; row(i: number): { kind: string; text: string } | null } } } } }).__vlStore.getState().model.ring;
    let hits = 0;
    for (let i = 0; i < ring.total; i++) { const r = ring.row(i); if (r && r.kind === 'ObjectCreated' && r.text.includes(n)) hits++; }
    return hits;
  }, name)).toBe(1);
  // following, the log shows its tail without scrolling; the wheel up leaves follow and scrolls the whole log
  const log = later.getByTestId('event-log');
  await later.getByTestId('filter-text').fill('');
  await expect(log).toHaveAttribute('data-follow', 'true');
  await log.hover();
  await later.mouse.wheel(0, -300);
  await expect(log).toHaveAttribute('data-follow', 'false');
  await expect(later.getByRole('checkbox', { name: 'follow' })).not.toBeChecked();
  expect(errors).toEqual([]);
  await first.close(); await later.close();
});
