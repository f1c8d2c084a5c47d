// Issue 21's eleven tasks, done by hand in the console (no scenario file is loaded except the one this spec records
// and saves): device caps; PD + MR keys; two RC QPs, WRITE, bytes, CQE, wire with the ACK; a completion-channel
// event; fast registration then LOCAL_INV; a wrong rkey; recovering a QP from ERR by modify to RESET; loss and
// retransmission on the sequence diagram; a type 2 window bound, used, invalidated and refused after; and the
// session recorded, saved and replayed step by step. A screenshot per task in e2e/screenshots/task-*.png.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { START, allocBuffers, noErrors, panel, shot } from './helpers.ts';

// the first device of the fresh session this spec starts: named by the device as the default one is, so the specs
// that run after this one find the session as they expect it (a first rxe device called vlrxe0)
const DEV = 'vlrxe0';
test.describe.configure({ mode: 'serial' });

/** handles of the rows of a kind whose text names our device */
async function handles(page: Page, testid: string, attr: string): Promise<string[]> {
  return page.getByTestId(testid).filter({ hasText: DEV }).evaluateAll((els, a) => els.map((e) => e.getAttribute(a)!), attr);
}
const keyRow = (page: Page, type: 'MR' | 'MW', h: string) => page.locator(`[data-testid="key-row"][data-type="${type}"][data-handle="${h}"]`);
const qpCard = (page: Page, h: string) => page.locator(`[data-testid="qp-card"][data-qp="${h}"]`);
async function runIdle(page: Page) {
  // (what the run did is checked by the caller's next expectations, which wait for it)
  await page.getByTestId('run-idle').click();
  await expect(page.getByTestId('run-status')).toContainText('run: ');
}
async function post(page: Page, qp: string, opcode: string, fill: (p: Page) => Promise<void> = async () => {}) {
  await panel(page, 'queues');
  await page.getByTestId('send-qp').selectOption(qp);
  await page.getByTestId('send-opcode').selectOption(opcode);
  await fill(page);
  await page.getByTestId('post-send').click();
  await expect(page.getByTestId('post-send-note')).toContainText(`posted ${opcode}`);
  await noErrors(page);
}

test('every verb by hand: the eleven tasks of a new user', async ({ page }) => {
  test.setTimeout(240_000);
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(START);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');
  // a fresh session, so the recording of task 10 is this spec's alone
  await panel(page, 'run');
  await page.getByTestId('reset-seed').fill('21');
  await page.getByTestId('reset-session').click();
  await noErrors(page);

  // ---- 1. device caps
  await panel(page, 'devices');
  await page.getByTestId('device-name').fill('');
  await page.getByTestId('create-device').click();
  const devRow = page.getByTestId('device-row').filter({ hasText: DEV });
  await expect(devRow).toHaveCount(1);
  await devRow.click();
  await expect(page.getByTestId('device-detail')).toContainText('IBV_DEVICE_MEM_MGT_EXTENSIONS');
  await expect(page.getByTestId('device-detail')).toContainText('IBV_DEVICE_MEM_WINDOW');
  await shot(page, 'task-01-device-caps');

  // ---- 2. PD + MR keys
  await devRow.getByTestId('alloc-pd').click();
  await expect(devRow).toContainText('pd ');
  await panel(page, 'memory');
  const [bufA, bufB] = await allocBuffers(page, 2);
  await page.getByTestId('access-IBV_ACCESS_MW_BIND').check();
  for (const buf of [bufA!, bufB!]) {
    const before = await page.getByTestId('key-row').count();
    await page.getByTestId('mr-buffer').selectOption(buf);
    await page.getByTestId('reg-mr').click();
    await expect(page.getByTestId('key-row')).toHaveCount(before + 1);
  }
  const [mrA, mrB] = await page.locator('[data-testid="key-row"][data-type="MR"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-handle')!));
  await expect(keyRow(page, 'MR', mrA!)).toContainText(DEV);   // the key table names the device
  await noErrors(page);
  await shot(page, 'task-02-pd-mr-keys');

  // ---- 3. two RC QPs on one device, RDMA WRITE, the bytes, the CQE, the wire with the ACK
  await panel(page, 'queues');
  await page.getByTestId('cq-channel').check();   // a completion channel, for task 4
  await page.getByTestId('create-cq').click();
  await expect(page.getByTestId('cq-card')).toHaveCount(1);
  for (let i = 0; i < 2; i++) {
    await page.getByTestId('create-qp').click();
    await expect(page.getByTestId('qp-card')).toHaveCount(i + 1);
  }
  const [qpA, qpB] = await handles(page, 'qp-card', 'data-qp');
  await page.getByTestId('connect-a').selectOption(qpA!);
  await page.getByTestId('connect-b').selectOption(qpB!);
  await page.getByTestId('connect-qps').click();
  for (const q of [qpA!, qpB!]) await expect(qpCard(page, q).getByTestId('qp-state-diagram')).toHaveAttribute('data-state', 'IBV_QPS_RTS');
  // the QP pickers say each QP's state
  await expect(page.getByTestId('send-qp').locator(`option[value="${qpA}"]`)).toContainText('RTS');
  await panel(page, 'memory');
  await page.locator(`[data-testid="buffer-row"][data-buffer="${bufA}"]`).click();
  await page.getByTestId('write-data').fill('cafebabe01020304');
  await page.getByTestId('write-bytes').click();
  await post(page, qpA!, 'IBV_WR_RDMA_WRITE', async (p) => {
    await p.getByTestId('send-local-mr').selectOption(mrA!);
    await p.getByTestId('send-length').fill('8');
    await p.getByTestId('send-remote-mr').selectOption(`MR:${mrB}`);
  });
  // the form kept the remote MR chosen (it never falls back to the local one)
  await expect(page.getByTestId('send-remote-mr')).toHaveValue(`MR:${mrB}`);
  await runIdle(page);
  const cq = page.getByTestId('cq-card');
  await expect(cq.getByTestId('ring-entry').first()).toContainText('IBV_WC_SUCCESS');
  await cq.getByTestId('poll-cq').click();
  await expect(cq.getByTestId('wc-status').first()).toHaveText('IBV_WC_SUCCESS');
  await panel(page, 'memory');
  await page.locator(`[data-testid="buffer-row"][data-buffer="${bufB}"]`).click();
  const hexB = page.locator(`[data-testid="hex-view"][data-buffer="${bufB}"]`);
  await expect(hexB.locator('.hb').nth(0)).toHaveText('ca');
  await expect(hexB.locator('.hb').nth(7)).toHaveText('04');
  await panel(page, 'wire');
  await expect(page.getByTestId('ladder-mode')).toHaveAttribute('data-mode', 'newest');
  await expect(page.getByTestId('ladder-lane')).toHaveCount(2);
  await expect(page.getByTestId('ladder-lane').first()).toContainText(`on ${DEV}`);
  const write = page.locator('[data-testid="ladder-arrow"][data-opcode="RDMA Write Only"]').first();
  const ack = page.locator('[data-testid="ladder-arrow"][data-opcode="Acknowledge"]').first();
  await expect(write).toHaveAttribute('data-fate', 'delivered');
  // the ACK goes the other way
  expect([await ack.getAttribute('data-from'), await ack.getAttribute('data-to')]).toEqual([await write.getAttribute('data-to'), await write.getAttribute('data-from')]);
  await shot(page, 'task-03-rc-write-wire');

  // ---- 4. a completion event on the CQ's channel: arm, complete, get_event, ack_events
  await panel(page, 'queues');
  await cq.getByTestId('arm-cq').click();
  await expect(cq.getByTestId('cq-armed')).toContainText('armed (next completion)');
  await post(page, qpA!, 'IBV_WR_RDMA_WRITE');
  await runIdle(page);
  await expect(cq.getByTestId('cq-armed')).toHaveText('not armed');   // the completion disarmed it
  await expect(cq.getByTestId('cq-pending-events')).toContainText('1 event');
  await cq.getByTestId('get-event').click();
  await expect(cq.getByTestId('cq-unacked')).toContainText('1 not acknowledged');
  await cq.getByTestId('ack-events').click();
  await expect(cq.getByTestId('cq-unacked')).toHaveCount(0);
  await cq.getByTestId('poll-cq').click();
  await noErrors(page);
  await shot(page, 'task-04-cq-channel-event');

  // ---- 5. fast registration (mr.alloc, map_sg, IB_WR_REG_MR) then LOCAL_INV
  await panel(page, 'memory');
  await page.getByTestId('alloc-fr-mr').click();
  const fr = page.locator('[data-testid="key-row"][data-type="MR"][data-kind="fast_reg"]');
  await expect(fr).toHaveCount(1);
  await expect(fr).toHaveAttribute('data-state', 'free');
  await page.getByTestId('fr-buffer').selectOption(bufB!);
  await page.getByTestId('add-segment').click();
  await page.getByTestId('map-sg').click();
  await expect(page.getByTestId('add-segment')).toBeEnabled();
  await expect(page.locator('form[aria-label="map SG list"]').getByTestId('validation-message')).toHaveCount(0);   // no red after success
  await post(page, qpB!, 'IB_WR_REG_MR');
  await runIdle(page);
  await panel(page, 'memory');
  await expect(fr).toHaveAttribute('data-state', 'valid');
  const frKey = Number(await fr.getAttribute('data-lkey'));
  await post(page, qpB!, 'IBV_WR_LOCAL_INV', async (p) => {
    await expect(p.getByTestId('send-invalidate-rkey')).toHaveValue(`0x${frKey.toString(16).padStart(8, '0')}`);
  });
  await runIdle(page);
  await panel(page, 'memory');
  await expect(fr).toHaveAttribute('data-state', 'free');
  await shot(page, 'task-05-fastreg-local-inv');

  // ---- 6. a wrong rkey: IBV_WC_REM_ACCESS_ERR explained, the QP in ERR
  await post(page, qpA!, 'IBV_WR_RDMA_WRITE', async (p) => { await p.getByTestId('send-rkey').fill('0xdead01'); });
  await runIdle(page);
  await cq.getByTestId('poll-cq').click();
  await expect(cq.getByTestId('wc-status').last()).toHaveText('IBV_WC_REM_ACCESS_ERR');
  await expect(cq.getByTestId('wc-explanation').last()).toContainText('rkey');
  await expect(qpCard(page, qpA!).getByTestId('qp-state-diagram')).toHaveAttribute('data-state', 'IBV_QPS_ERR');
  await shot(page, 'task-06-wrong-rkey');

  // ---- 7. recover from ERR: modify to RESET (both ends), connect again, WRITE again
  for (const q of [qpA!, qpB!]) {
    const card = qpCard(page, q);
    await card.getByTestId('modify-target').selectOption('IBV_QPS_RESET');
    await card.getByTestId('modify-qp').click();
    await expect(card.getByTestId('qp-state-diagram')).toHaveAttribute('data-state', 'IBV_QPS_RESET');
  }
  await page.getByTestId('connect-a').selectOption(qpA!);
  await page.getByTestId('connect-b').selectOption(qpB!);
  await page.getByTestId('connect-qps').click();
  await expect(qpCard(page, qpA!).getByTestId('qp-state-diagram')).toHaveAttribute('data-state', 'IBV_QPS_RTS');
  await post(page, qpA!, 'IBV_WR_RDMA_WRITE', async (p) => { await p.getByTestId('send-rkey').fill(''); await p.getByTestId('send-remote-mr').selectOption(`MR:${mrB}`); });
  await runIdle(page);
  await cq.getByTestId('poll-cq').click();
  await expect(cq.getByTestId('wc-status').last()).toHaveText('IBV_WC_SUCCESS');
  await shot(page, 'task-07-recover-from-err');

  // ---- 8. loss and retransmission on the sequence diagram
  await panel(page, 'run');
  await page.getByTestId('fault-loss').fill('0.4');
  await page.getByTestId('apply-faults').click();
  await noErrors(page);
  let lost = 0;
  for (let i = 0; i < 6 && !lost; i++) {
    await post(page, qpA!, 'IBV_WR_RDMA_WRITE', async (p) => { await p.getByTestId('send-length').fill('3000'); });
    await runIdle(page);
    await panel(page, 'wire');
    lost = await page.locator('[data-testid="ladder-arrow"][data-fate="lost"]').count();
  }
  expect(lost).toBeGreaterThan(0);
  await expect(page.locator('[data-testid="ladder-arrow"][data-retransmit="true"]').first()).toBeVisible();
  await shot(page, 'task-08-loss-retransmission');
  await panel(page, 'run');
  await page.getByTestId('fault-loss').fill('0');
  await page.getByTestId('apply-faults').click();

  // ---- 9. a type 2 window: bind (BIND_MW on the QP), use, invalidate, refused after
  await panel(page, 'memory');
  await page.getByTestId('mw-type').selectOption('IBV_MW_TYPE_2');
  await page.getByTestId('alloc-mw').click();
  const mw = page.locator('[data-testid="key-row"][data-type="MW"]');
  await expect(mw).toHaveCount(1);
  await expect(mw).toHaveAttribute('data-state', 'free');
  await page.getByTestId('bind-type2').click();   // the Post send form, BIND_MW with this window
  await expect(page.getByTestId('panel-queues')).toBeVisible();
  await expect(page.getByTestId('send-opcode')).toHaveValue('IBV_WR_BIND_MW');
  await page.getByTestId('send-qp').selectOption(qpB!);
  await page.getByTestId('send-bind-mr').selectOption(mrB!);
  await page.getByTestId('post-send').click();
  await noErrors(page);
  await runIdle(page);
  await panel(page, 'memory');
  await expect(mw).toHaveAttribute('data-state', 'valid');
  const mwH = (await mw.getAttribute('data-handle'))!;
  const mwKey = Number(await mw.getAttribute('data-rkey'));
  await post(page, qpA!, 'IBV_WR_RDMA_WRITE', async (p) => { await p.getByTestId('send-length').fill('16'); await p.getByTestId('send-remote-mr').selectOption(`MW:${mwH}`); });
  await runIdle(page);
  await cq.getByTestId('poll-cq').click();
  await expect(cq.getByTestId('wc-status').last()).toHaveText('IBV_WC_SUCCESS');
  await post(page, qpB!, 'IBV_WR_LOCAL_INV', async (p) => { await p.getByTestId('send-invalidate-rkey').fill(`0x${mwKey.toString(16)}`); });
  await runIdle(page);
  await panel(page, 'memory');
  await expect(mw).toHaveAttribute('data-state', 'free');
  await post(page, qpA!, 'IBV_WR_RDMA_WRITE', async (p) => { await p.getByTestId('send-rkey').fill(`0x${mwKey.toString(16)}`); });
  await runIdle(page);
  await cq.getByTestId('poll-cq').click();
  await expect(cq.getByTestId('wc-status').last()).toHaveText('IBV_WC_REM_ACCESS_ERR');
  await shot(page, 'task-09-mw-type2');

  // ---- 10. record, save, replay step by step
  await panel(page, 'scenario');
  await page.getByTestId('scenario-name').fill('every verb by hand');
  await page.getByTestId('scenario-meta-save').click();
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('scenario-save').click()]);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vl-every-')), dl.suggestedFilename());
  await dl.saveAs(file);
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { steps: { cmd: string }[] };
  expect(saved.steps.map((s) => s.cmd)).toContain('cq.get_event');
  expect(saved.steps.map((s) => s.cmd)).toContain('qp.modify');
  await page.getByTestId('scenario-file').setInputFiles(file);
  await expect(page.getByTestId('replay-status')).toHaveAttribute('data-state', 'loaded');
  for (let n = 1; n <= 5; n++) {
    await page.getByTestId('replay-step').click();
    await expect(page.locator(`[data-testid="replay-row"][data-step="${n}"]`)).toHaveAttribute('data-status', 'ok');
  }
  await page.getByTestId('replay-play').click();
  await expect(page.getByTestId('replay-status')).toHaveAttribute('data-state', 'passed', { timeout: 60_000 });
  await shot(page, 'task-10-record-save-replay');

  // ---- 11. after the replay, the console shows what the device holds (the same keys, QPs, states)
  await panel(page, 'memory');
  await expect(page.locator('[data-testid="key-row"][data-type="MR"][data-kind="fast_reg"]')).toHaveAttribute('data-state', 'free');
  await expect(page.locator('[data-testid="key-row"][data-type="MW"]')).toHaveAttribute('data-state', 'free');
  await expect(keyRow(page, 'MR', mrA!).locator('td').first()).not.toHaveText('—');   // its device (the replay names it)
  await panel(page, 'queues');
  await expect(qpCard(page, qpA!)).toHaveAttribute('data-state', 'IBV_QPS_ERR');
  await shot(page, 'task-11-after-replay');
  expect(problems).toEqual([]);
  // leave the session as the specs after this one expect it: fresh, with a first rxe device (vlrxe0)
  await panel(page, 'run');
  await page.getByTestId('reset-session').click();
  await panel(page, 'devices');
  await page.getByTestId('create-device').click();
  await expect(page.getByTestId('device-row').first()).toContainText('vlrxe0');
});
