// The Queues panel's Connections (RDMA CM) table: with no CM ID in the session it says how connections are made, and
// cm.list answers over the live protocol with its schema's shape.
import { expect, test } from '@playwright/test';
import { openConsole, rawCommand } from './fixtures/console.ts';
import { panel } from './helpers.ts';

test('Connections (RDMA CM): the empty state, and cm.list over the protocol', async ({ page }) => {
  await openConsole(page);
  await panel(page, 'queues');
  const section = page.getByTestId('cm-section');
  await expect(section).toBeVisible();
  await expect(section.getByTestId('cm-none')).toContainText('verbslab exec --console');
  const r = await rawCommand(page, 5, { cmd: 'cm.list', args: {} });
  expect(r).toMatchObject({ ok: true, result: { ids: [], supported: true } });
});
