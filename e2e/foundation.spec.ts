// Foundation, end to end in headless Chromium against the real backend host and native device:
// (i) the console lists the software device and its profile; (ii) a malformed command gets a readable error
// naming the field and the session goes on; (iii) killing the backend host shows "backend down" with the reason
// and a Restart button, and after restart the objects are back (journal replayed).
import { expect, test } from '@playwright/test';
import { openConsole, rawCommand, rawControl, rawSend } from './fixtures/console.ts';

test.describe.configure({ mode: 'serial' });

test('(i) lists the software device and its profile; a new device can be created from the UI', async ({ page }) => {
  await openConsole(page);
  const rows = page.getByTestId('device-row');
  await expect(rows.first()).toContainText('vlrxe0');
  await expect(rows.first().getByTestId('device-profile-cell')).toHaveText('rxe');

  await page.getByTestId('device-profile').selectOption('cx');
  await page.getByTestId('device-name').fill('lab2');
  await page.getByTestId('create-device').click();
  const lab2 = rows.filter({ hasText: 'lab2' });
  await expect(lab2).toHaveCount(1);
  await expect(lab2.getByTestId('device-profile-cell')).toHaveText('cx');
});

test('(ii) a malformed command gets an error naming the field, and the session continues', async ({ page }) => {
  await openConsole(page);
  const bad = await rawCommand(page, 7, { cmd: 'mr.reg', args: { pd: 1, addr: 0, length: 'four kilobytes', access: ['IBV_ACCESS_LOCAL_WRITE'] } });
  expect(bad).toMatchObject({ id: 7, ok: false, error: { code: 'BAD_REQUEST', field: 'command.args.length' } });
  expect(bad!.error!.message).toContain('command.args.length');

  const notJson = await rawSend(page, '{"type":"request","id":8,');
  expect(notJson).toMatchObject({ id: null, ok: false, error: { code: 'BAD_JSON' } });

  const unknown = await rawCommand(page, 9, { cmd: 'qp.teleport', args: {} });
  expect(unknown).toMatchObject({ id: 9, ok: false, error: { field: 'command.cmd' } });

  // the next valid command works, over the raw socket and from the UI
  const ok = await rawCommand(page, 10, { cmd: 'device.list', args: {} });
  expect(ok).toMatchObject({ id: 10, ok: true });
  const first = page.getByTestId('device-row').first();
  await first.getByTestId('alloc-pd').click();
  await expect(first).toContainText(/pd \d+/);
  // an error from the device itself (not the schema) is shown in the UI next to what caused it
  await first.getByTestId('destroy-device').click();
  const err = first.getByTestId('error-message');
  await expect(err).toContainText('EBUSY');
  await expect(err).toContainText('still has objects');
  await expect(page.getByTestId('device-row').first()).toContainText('vlrxe0');
  await expect(page.getByTestId('host-status')).toContainText('backend up');
});

test('(iii) killing the backend host shows the reason and Restart; after restart the journal is replayed', async ({ page }) => {
  await openConsole(page);
  const before = await rawCommand(page, 20, { cmd: 'pd.alloc', args: { device: 1 } });
  expect(before?.ok).toBe(true);
  const pd = (before!.result as { pd: number }).pd;

  await rawControl(page, 'kill-host');
  const status = page.getByTestId('host-status');
  await expect(status).toContainText('down');
  await expect(status).toContainText('SIGKILL');
  const restart = page.getByTestId('restart-host');
  await expect(restart).toBeVisible();

  await restart.click();
  await expect(status).toContainText('backend up');

  // the new host replayed the journal: the PD (same handle) and the device created in (i) are back
  const info = await rawCommand(page, 21, { cmd: 'session.info', args: {} });
  expect(info?.ok).toBe(true);
  expect((info!.result as { objects: { handle: number; kind: string }[] }).objects).toContainEqual(expect.objectContaining({ handle: pd, kind: 'pd' }));
  await page.reload();
  await expect(status).toContainText('backend up');
  await expect(page.getByTestId('device-row').filter({ hasText: 'lab2' })).toHaveCount(1);
  await expect(page.getByTestId('device-row').first()).toContainText('vlrxe0');
});
