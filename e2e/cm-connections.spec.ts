// The Queues panel's Connections (RDMA CM) table: with no CM ID in the session it says how connections are made;
// after two devices connect through the CM (the cm.* commands over the live protocol), it lists the listener and
// both ends with ESTABLISHED lit, and the Events panel writes the CM's events in words.
import { expect, test } from '@playwright/test';
import { openConsole, rawCommand } from './fixtures/console.ts';
import { panel, shot } from './helpers.ts';

test('Connections (RDMA CM): the empty state, then a connection made by cm.* commands', async ({ page }) => {
  await openConsole(page);
  await panel(page, 'queues');
  const section = page.getByTestId('cm-section');
  await expect(section).toBeVisible();
  await expect(section.getByTestId('cm-none')).toContainText('verbslab exec --console');
  let id = 10;
  const run = async (cmd: string, args: Record<string, unknown>) => {
    const r = await rawCommand(page, id++, { cmd, args });
    expect(r?.ok, `${cmd}: ${JSON.stringify(r?.error)}`).toBe(true);
    return r!.result as Record<string, number>;
  };
  expect(await run('cm.list', {})).toEqual({ ids: [], supported: true });
  const mk = async () => {
    const dev = (await run('device.create', { profile: 'rxe' })).device!;
    const pd = (await run('pd.alloc', { device: dev })).pd!;
    const cq = (await run('cq.create', { device: dev, cqe: 16 })).cq!;
    return { dev, qp: (await run('qp.create', { pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC' })).qp! };
  };
  const a = await mk(), b = await mk();
  // dev b's IPv4 address: its IPv4-mapped GID (::ffff:a.b.c.d, RoCEv2); the console's session may hold other devices
  const list = (await run('device.list', {})) as unknown as { devices: { handle: number; gids: { gid: string }[] }[] };
  const g = list.devices.find((d) => d.handle === b.dev)!.gids.map((x) => x.gid.replace(/:/g, '')).find((x) => /^0{20}ffff/.test(x))!;
  const ip = [0, 1, 2, 3].map((i) => parseInt(g.slice(24 + 2 * i, 26 + 2 * i), 16)).join('.');
  const l = (await run('cm.createId', { device: b.dev })).id!;
  await run('cm.bind', { id: l, ip, port: 4420 });
  await run('cm.listen', { id: l });
  const c = (await run('cm.createId', { device: a.dev })).id!;
  await run('cm.connect', { id: c, qp: a.qp, ip, port: 4420 });
  await run('cm.accept', { listenId: l, qp: b.qp });
  await run('engine.run', {});
  const rows = section.getByTestId('cm-row');
  await expect(rows).toHaveCount(3);
  await expect(section.locator('[data-testid="cm-row"][data-state="IB_CM_ESTABLISHED"]')).toHaveCount(2);
  await expect(section.locator('[data-testid="cm-row"][data-state="IB_CM_LISTEN"]')).toHaveCount(1);
  await expect(section.locator('.cm-state.current').first()).toBeVisible();
  await shot(page, 'cm-connections');
  await panel(page, 'events');
  await page.getByTestId('filter-kind').selectOption('CmState');
  await expect(page.getByTestId('event-log')).toContainText('IB_CM_MRA_REP_SENT → IB_CM_ESTABLISHED comm 0x');
});
