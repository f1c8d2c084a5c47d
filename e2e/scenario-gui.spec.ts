// Scenarios in the GUI (issue 5): a short session done by hand in the console is recorded by the backend host,
// expectations are added from what is on screen, the scenario is saved (a real download), replayed headless by
// the CLI and passes; a library scenario is loaded into the Scenario tab and replayed step by step on the real
// device with every expectation holding; a broken expectation stops the replay and says expected vs got; a
// malformed file is refused with the loader's step/field message.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { START, allocBuffers, noErrors, panel, selectContaining } from './helpers.ts';
const LIBRARY = 'scenarios/rc_rdma_write.json';

test.describe.configure({ mode: 'serial' });

async function open(page: Page) {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(START);
  await expect(page.getByTestId('host-status')).toHaveText('backend up');
  return problems;
}

test('a session recorded in the GUI is saved, and the saved file passes headless', async ({ page }) => {
  test.setTimeout(120_000);
  const problems = await open(page);

  // a fresh session: the recording starts here
  await panel(page, 'run');
  await page.getByTestId('reset-seed').fill('1');
  await page.getByTestId('reset-session').click();
  await panel(page, 'scenario');
  await expect(page.getByTestId('rec-summary')).toHaveAttribute('data-steps', '0');

  await panel(page, 'devices');
  await expect(page.getByTestId('devices-panel')).toHaveAttribute('data-loaded', 'true');
  for (const name of ['left', 'right']) {
    await page.getByTestId('device-name').fill(name);
    await page.getByTestId('create-device').click();
    await expect(page.getByTestId('device-row').filter({ hasText: name })).toHaveCount(1);
    const row = page.getByTestId('device-row').filter({ hasText: name });
    await row.getByTestId('alloc-pd').click();
    await expect(row).toContainText('pd ');
  }

  await panel(page, 'memory');
  const [bufA, bufB] = await allocBuffers(page, 2);
  for (const [dev, buf] of [['left', bufA], ['right', bufB]] as const) {
    const before = await page.getByTestId('key-row').count();
    await selectContaining(page.getByTestId('mr-pd'), `(${dev})`);
    await page.getByTestId('mr-buffer').selectOption(buf!);
    await page.getByTestId('reg-mr').click();
    await expect(page.getByTestId('key-row')).toHaveCount(before + 1);
  }
  await page.locator(`[data-testid="buffer-row"][data-buffer="${bufA}"]`).click();
  await page.getByTestId('write-offset').fill('0');
  await page.getByTestId('write-data').fill('cafebabe01020304');
  await page.getByTestId('write-bytes').click();
  await noErrors(page);

  await panel(page, 'queues');
  for (const dev of ['left', 'right']) {
    const before = await page.getByTestId('cq-card').count();
    await selectContaining(page.getByTestId('cq-device'), dev);
    await page.getByTestId('create-cq').click();
    await expect(page.getByTestId('cq-card')).toHaveCount(before + 1);
  }
  for (const dev of ['left', 'right']) {
    const before = await page.getByTestId('qp-card').count();
    await selectContaining(page.getByTestId('qp-pd'), `(${dev})`);
    await page.getByTestId('qp-type').selectOption('IBV_QPT_RC');
    await page.getByTestId('create-qp').click();
    await expect(page.getByTestId('qp-card')).toHaveCount(before + 1);
  }
  await selectContaining(page.getByTestId('connect-a'), 'on left');
  await selectContaining(page.getByTestId('connect-b'), 'on right');
  await page.getByTestId('connect-qps').click();
  await expect(page.getByTestId('qp-card').filter({ hasText: 'on left' }).getByTestId('qp-state-diagram')).toHaveAttribute('data-state', 'IBV_QPS_RTS');
  await selectContaining(page.getByTestId('send-qp'), 'on left');
  await page.getByTestId('send-opcode').selectOption('IBV_WR_RDMA_WRITE');
  await selectContaining(page.getByTestId('send-local-mr'), 'on left');
  await page.getByTestId('send-length').fill('8');
  await selectContaining(page.getByTestId('send-remote-mr'), 'on right');
  await page.getByTestId('send-wrid').fill('1');
  await page.getByTestId('post-send').click();
  await noErrors(page);
  await page.getByTestId('run-idle').click();
  const cqLeft = page.getByTestId('cq-card').filter({ hasText: 'on left' });
  await expect(cqLeft.getByTestId('ring-entry').first()).toContainText('IBV_WC_SUCCESS');
  await cqLeft.getByTestId('poll-cq').click();
  await expect(cqLeft.getByTestId('wc-status').first()).toHaveText('IBV_WC_SUCCESS');

  // an extra step can be removed from the recording (the device keeps the buffer)
  await panel(page, 'memory');
  await page.getByTestId('buffer-length').fill('1');
  const beforeMistake = await page.getByTestId('buffer-row').count();
  await page.getByTestId('alloc-buffer').click();
  await expect(page.getByTestId('buffer-row')).toHaveCount(beforeMistake + 1);
  await panel(page, 'scenario');
  const extra = page.locator('[data-testid="rec-step"][data-cmd="buffer.alloc"]').last();
  await expect(extra).toContainText('buf2');
  await extra.click();
  await page.getByTestId('remove-step').click();
  await expect(page.locator('[data-testid="rec-step"][data-cmd="buffer.alloc"]')).toHaveCount(2);

  // ---- the Scenario tab shows what was done, as named steps
  await panel(page, 'scenario');
  for (const [cmd, n] of [['pd.alloc', 2], ['buffer.alloc', 2], ['mr.reg', 2], ['memory.write', 1], ['cq.create', 2], ['qp.create', 2], ['post.send', 1], ['engine.run', 1], ['cq.poll', 1]] as const) {
    await expect(page.locator(`[data-testid="rec-step"][data-cmd="${cmd}"]`), cmd).toHaveCount(n);
  }
  await expect(page.getByTestId('rec-summary')).toContainText('left (rxe), right (rxe)');
  // the post.send names the remote key and address by reference, not by number
  await page.locator('[data-testid="rec-step"][data-cmd="post.send"]').click();
  await expect(page.getByTestId('rec-step-json')).toContainText('"rkey": "$mr1.rkey"');
  await expect(page.getByTestId('rec-step-json')).toContainText('"remoteAddr": "$buf1.addr"');

  // rename an object everywhere
  await page.getByTestId('rename-from').selectOption('mr1');
  await page.getByTestId('rename-to').fill('mrRemote');
  await page.getByTestId('rename-submit').click();
  await expect(page.getByTestId('rec-step-json')).toContainText('"rkey": "$mrRemote.rkey"');
  // a name already taken is refused, in words, next to the form
  await page.getByTestId('rename-from').selectOption('mr0');
  await page.getByTestId('rename-to').fill('mrRemote');
  await page.getByTestId('rename-submit').click();
  await expect(page.getByTestId('rename-form').getByTestId('error-message')).toContainText('already used');
  await page.getByTestId('rename-form').getByRole('button', { name: 'dismiss error' }).click();

  // "expect these packets" on the step that ran the engine (the wire carried the write and its ACK)
  await page.locator('[data-testid="rec-step"][data-cmd="engine.run"]').click();
  await expect(page.getByTestId('rec-packets')).toContainText('RC_RDMA_WRITE_ONLY ×1 from left; RC_ACKNOWLEDGE ACK ×1 from right');
  await page.getByTestId('expect-packets').click();
  await expect(page.getByTestId('rec-step-json')).toContainText('"opcode": "RC_RDMA_WRITE_ONLY"');

  // "expect this CQE" on the poll, and "expect these bytes" in the remote buffer
  await page.locator('[data-testid="rec-step"][data-cmd="cq.poll"]').last().click();
  await expect(page.getByTestId('rec-wc').first()).toContainText('IBV_WC_SUCCESS IBV_WC_RDMA_WRITE');
  await page.getByTestId('expect-cqe').first().click();
  await expect(page.getByTestId('rec-step-json')).toContainText('"status": "IBV_WC_SUCCESS"');
  await page.getByTestId('expect-bytes-buffer').selectOption(bufB!);
  await page.getByTestId('expect-bytes-offset').fill('0');
  await page.getByTestId('expect-bytes-length').fill('8');
  await page.getByTestId('expect-bytes').click();
  await expect(page.getByTestId('rec-step-json')).toContainText('"hex": "cafebabe01020304"');
  await selectContaining(page.getByTestId('expect-qp'), 'on left');
  await page.getByTestId('expect-qp-state').click();
  await expect(page.getByTestId('rec-step-json')).toContainText('"state": "IBV_QPS_RTS"');
  await page.getByTestId('step-note').fill('the CQE of the RDMA WRITE');
  await page.getByTestId('step-note-save').click();
  await expect(page.locator('[data-testid="rec-step"][data-cmd="cq.poll"]').last()).toContainText('the CQE of the RDMA WRITE');
  await noErrors(page);

  await page.getByTestId('scenario-name').fill('GUI RDMA write lab');
  await page.getByTestId('scenario-description').fill('recorded by hand in the console');
  await page.getByTestId('scenario-meta-save').click();
  await expect(page.getByTestId('scenario-meta-save')).toBeDisabled();
  // ---- save: a real download of the scenario file
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('scenario-save').click()]);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vl-rec-')), dl.suggestedFilename());
  await dl.saveAs(file);
  const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
  expect(dl.suggestedFilename()).toBe('GUI_RDMA_write_lab.json');
  expect(saved).toMatchObject({ verbslab: 'scenario', version: 1, name: 'GUI RDMA write lab', description: 'recorded by hand in the console', devices: [{ name: 'left', profile: 'rxe' }, { name: 'right', profile: 'rxe' }] });
  const poll = saved.steps.filter((s: { cmd: string }) => s.cmd === 'cq.poll').pop();
  expect(poll.expect.wc).toEqual([{ status: 'IBV_WC_SUCCESS', opcode: 'IBV_WC_RDMA_WRITE', wrId: 1 }]);
  expect(poll.expect.bytes).toEqual([{ addr: '$buf1.addr', hex: 'cafebabe01020304' }]);
  expect(poll.expect.qpState).toEqual([{ qp: 'qp0', state: 'IBV_QPS_RTS' }]);
  expect(poll.note).toBe('the CQE of the RDMA WRITE');
  expect(saved.steps.find((s: { cmd: string }) => s.cmd === 'engine.run').expect.packet).toEqual([
    { opcode: 'RC_RDMA_WRITE_ONLY', count: 1, from: 'left' }, { opcode: 'RC_ACKNOWLEDGE', syndrome: 'ACK', count: 1, from: 'right' }]);

  // ---- headless replay of the saved file: passes (exit code 0 only if every expectation held)
  const out = execFileSync(process.execPath, ['app/cli/verbslab.mjs', 'run', file, '--json'], { encoding: 'utf8' });
  const rep = JSON.parse(out);
  expect(rep.failed).toBe(0);
  expect(rep.scenarios[0]).toMatchObject({ passed: true, stepsRun: saved.steps.length, stepsTotal: saved.steps.length });
  // and the same file with a wrong byte fails headless (the expectation is real)
  poll.expect.bytes[0].hex = 'cafebabe01020305';
  const broken = `${file}.broken.json`;
  fs.writeFileSync(broken, JSON.stringify(saved));
  let code = 0; let brokenOut = '';
  try { execFileSync(process.execPath, ['app/cli/verbslab.mjs', 'run', broken, '--json'], { encoding: 'utf8' }); } catch (e) {
    code = (e as { status: number }).status; brokenOut = String((e as { stdout: string }).stdout);
  }
  expect(code).not.toBe(0);
  expect(JSON.parse(brokenOut).scenarios[0].failure).toContain('expected cafebabe01020305, got cafebabe01020304');
  expect(problems).toEqual([]);
});

test('a library scenario replays step by step in the GUI, on the device, and every expectation holds', async ({ page }) => {
  test.setTimeout(120_000);
  const problems = await open(page);
  await panel(page, 'scenario');
  const text = fs.readFileSync(LIBRARY, 'utf8');
  const sc = JSON.parse(text);
  const total = sc.steps.length as number;
  await page.getByTestId('scenario-file').setInputFiles(LIBRARY);
  await expect(page.getByTestId('replay-name')).toHaveText(sc.name);
  await expect(page.getByTestId('replay-status')).toHaveAttribute('data-state', 'loaded');
  await expect(page.getByTestId('replay-row')).not.toHaveCount(0);
  for (let n = 1; n <= total; n++) {
    await page.getByTestId('replay-step').click();
    await expect(page.locator(`[data-testid="replay-row"][data-step="${n}"]`)).toHaveAttribute('data-status', 'ok');
    await expect(page.getByTestId('replay-status')).toHaveAttribute('data-position', String(n));
  }
  await expect(page.getByTestId('replay-status')).toHaveAttribute('data-state', 'passed');
  await expect(page.getByTestId('replay-failure')).toHaveCount(0);
  // the steps with expectations were checked (badge) and held
  const withExpect = sc.steps.map((s: { expect?: object }, i: number) => (s.expect ? i + 1 : 0)).filter(Boolean) as number[];
  expect(withExpect.length).toBeGreaterThan(2);
  await expect(page.locator('[data-testid="replay-row"][data-status="failed"]')).toHaveCount(0);
  // the same digest as the headless runner: the replay ran the same commands on the same device
  const head = JSON.parse(execFileSync(process.execPath, ['app/cli/verbslab.mjs', 'run', LIBRARY, '--json'], { encoding: 'utf8' }));
  await expect(page.getByTestId('replay-digest')).toContainText(head.scenarios[0].digest);
  // it ran on the backend: the console drew the replayed objects and the packets
  await panel(page, 'wire');
  await expect(page.getByTestId('packet-row').filter({ hasText: 'RDMA Write' }).first()).toBeVisible();
  // and it is now the recording, under the scenario's names
  await panel(page, 'scenario');
  await expect(page.locator('[data-testid="rec-step"][data-cmd="qp.create"]').first()).toContainText('qpA');
  await noErrors(page);
  expect(problems).toEqual([]);
});

test('a failed expectation stops the replay at that step and shows expected vs got', async ({ page }) => {
  const problems = await open(page);
  await panel(page, 'scenario');
  const sc = JSON.parse(fs.readFileSync(LIBRARY, 'utf8'));
  const i = sc.steps.findIndex((s: { cmd: string }) => s.cmd === 'cq.poll');
  sc.steps[i].expect.wc[0].status = 'IBV_WC_REM_ACCESS_ERR';
  await page.getByTestId('scenario-file').setInputFiles({ name: 'wrong_status.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(sc)) });
  await expect(page.getByTestId('replay')).toHaveAttribute('data-file', 'wrong_status.json');
  // run to a step: it stops there, everything before it passed
  await page.getByTestId('replay-run-to-n').fill('5');
  await page.getByTestId('replay-run-to').click();
  await expect(page.getByTestId('replay-status')).toHaveAttribute('data-position', '5');
  await expect(page.getByTestId('replay-status')).toHaveAttribute('data-state', 'paused');
  await expect(page.locator('[data-testid="replay-row"][data-status="ok"]')).toHaveCount(5);
  await expect(page.locator('[data-testid="replay-row"][data-step="6"]')).toHaveAttribute('data-status', 'next');
  // play on: it stops at the broken expectation
  await page.getByTestId('replay-play').click();
  await expect(page.getByTestId('replay-status')).toHaveAttribute('data-state', 'failed');
  await expect(page.getByTestId('replay-failure')).toHaveAttribute('data-step', String(i + 1));
  await expect(page.getByTestId('replay-failure')).toContainText('expect.wc.0.status: expected IBV_WC_REM_ACCESS_ERR (10), got IBV_WC_SUCCESS (0)');
  await expect(page.locator(`[data-testid="replay-row"][data-step="${i + 1}"]`)).toHaveAttribute('data-status', 'failed');
  await expect(page.locator(`[data-testid="replay-row"][data-step="${i + 2}"]`)).toHaveAttribute('data-status', 'pending');
  await expect(page.getByTestId('replay-step')).toBeDisabled();
  expect(problems).toEqual([]);
});

test('a malformed scenario file is refused with the step and field', async ({ page }) => {
  const problems = await open(page);
  await panel(page, 'scenario');
  const sc = JSON.parse(fs.readFileSync(LIBRARY, 'utf8'));
  sc.steps[3].args.length = 'lots';
  await page.getByTestId('scenario-file').setInputFiles({ name: 'bad_field.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(sc)) });
  const err = page.getByTestId('error-message').filter({ hasText: 'BAD_SCENARIO' });
  await expect(err).toHaveAttribute('data-form', 'scenario.load');
  await expect(err).toContainText('step 4 (buffer.alloc) args.length');
  await page.getByTestId('scenario-file').setInputFiles({ name: 'not_json.json', mimeType: 'application/json', buffer: Buffer.from('{"verbslab": "scenario", "steps": [') });
  await expect(page.getByTestId('error-message').filter({ hasText: 'not_json.json' })).toBeVisible();
  sc.steps[3] = { cmd: 'buffer.explode', args: {} };
  await page.getByTestId('scenario-file').setInputFiles({ name: 'bad_cmd.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(sc)) });
  await expect(page.getByTestId('error-message').filter({ hasText: 'step 4' })).toContainText('buffer.explode');
  expect(problems).toEqual([]);
});

test('a long scenario: the step list is virtualized and keeps the next step in view', async ({ page }) => {
  const problems = await open(page);
  await panel(page, 'scenario');
  const steps = [{ cmd: 'buffer.alloc', args: { length: 4096 }, as: 'buf' },
    ...Array.from({ length: 400 }, (_, i) => ({ cmd: 'memory.write', args: { addr: `$buf.addr+${i}`, data: (i & 0xff).toString(16).padStart(2, '0') } }))];
  steps[steps.length - 1] = { ...steps[steps.length - 1]!, expect: { bytes: [{ addr: '$buf.addr+398', hex: '8e8f' }] } } as never;
  const sc = { verbslab: 'scenario', version: 1, name: 'long', seed: 3, devices: [{ name: 'dev0', profile: 'rxe' }], steps };
  await page.getByTestId('scenario-file').setInputFiles({ name: 'long.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(sc)) });
  await expect(page.getByTestId('replay')).toHaveAttribute('data-file', 'long.json');
  const rendered = await page.getByTestId('replay-row').count();
  expect(rendered).toBeGreaterThan(0);
  expect(rendered).toBeLessThan(200);
  await page.getByTestId('replay-run-to-n').fill('300');
  await page.getByTestId('replay-run-to').click();
  await expect(page.getByTestId('replay-status')).toHaveAttribute('data-position', '300');
  await expect(page.locator('[data-testid="replay-row"][data-step="301"]')).toHaveAttribute('data-status', 'next');
  await expect(page.locator('[data-testid="replay-row"][data-step="301"]')).toBeInViewport();
  await page.getByTestId('replay-all').click();
  await expect(page.getByTestId('replay-status')).toHaveAttribute('data-state', 'passed');
  expect(problems).toEqual([]);
});
