// Two hosts on the real wire, in browser mode: two backend servers (two sessions, like two laptops) on
// 127.0.0.1 with different UDP ports. Each page puts its device on the network, each side connects its RC QP
// with the numbers the other page shows (rc_pingpong's "local address"), one side posts an RDMA WRITE, and the
// bytes change in the other page's buffer; both wire views show the real packets, the writer gets its CQE, and
// the saved network pcap decodes in tshark as InfiniBand with every ICRC good (native/tests/tshark/icrc_check.lua, our independent ICRC check).
// The two servers are started here (fresh session directories), not the config's shared web server, so no
// other spec ever sees a session that runs in real time.
import { expect, test, type Page } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { noErrors, panel, selectContaining, shot, startServer, type Server } from './helpers.ts';

const LUA = path.resolve('native/tests/tshark/icrc_check.lua');
const TSHARK = '/usr/bin/tshark';

test.describe.configure({ mode: 'serial' });

/** one laptop: a device with a PD, a 4 KiB buffer + MR (remote write), a CQ and an RC QP, all through the UI */
async function setUp(page: Page, name: string) {
  await panel(page, 'devices');
  await expect(page.getByTestId('devices-panel')).toHaveAttribute('data-loaded', 'true');
  await page.getByTestId('device-name').fill(name);
  await page.getByTestId('create-device').click();
  const row = page.getByTestId('device-row').filter({ hasText: name });
  await expect(row).toHaveCount(1);
  await row.getByTestId('alloc-pd').click();
  await expect(row).toContainText('pd ');
  await panel(page, 'memory');
  await page.getByTestId('buffer-length').fill('4096');
  await page.getByTestId('alloc-buffer').click();
  await expect(page.getByTestId('buffer-row')).toHaveCount(1);
  await page.getByTestId('reg-mr').click();
  await expect(page.getByTestId('key-row')).toHaveCount(1);
  await panel(page, 'queues');
  await page.getByTestId('create-cq').click();
  await expect(page.getByTestId('cq-card')).toHaveCount(1);
  await page.getByTestId('qp-type').selectOption('IBV_QPT_RC');
  await page.getByTestId('create-qp').click();
  await expect(page.getByTestId('qp-card')).toHaveCount(1);
  await noErrors(page);
}

async function putOnNetwork(page: Page, name: string, port: number, peerPort: number) {
  await panel(page, 'devices');
  await page.getByTestId('device-row').filter({ hasText: name }).click();
  const form = page.getByTestId('attach-net-form');
  await form.getByTestId('net-address').fill('127.0.0.1');
  // validation as you type: a port out of range, a host name
  await form.getByTestId('net-port').fill('70000');
  await expect(form.getByTestId('validation-message')).toContainText('port');
  await expect(form.getByTestId('attach-net')).toBeDisabled();
  await form.getByTestId('net-port').fill(String(port));
  await form.getByTestId('net-address').fill('localhost');
  await expect(form.getByTestId('validation-message')).toContainText('address');
  await form.getByTestId('net-address').fill('127.0.0.1');
  await form.getByTestId('net-peer-port').fill(String(peerPort));
  await expect(form.getByTestId('validation-message')).toHaveCount(0);
  await form.getByTestId('attach-net').click();
  await expect(page.getByTestId('net-badge')).toBeVisible();
  await expect(page.getByTestId('net-where')).toContainText(`lo · UDP port ${port}`);
  // the real GID table of lo: the default link-local GID, then 127.0.0.1 as an IPv4-mapped GID
  await expect(page.locator('[data-testid="net-gid"][data-index="1"]')).toHaveAttribute('data-gid', '0000:0000:0000:0000:0000:ffff:7f00:0001');
  await expect(page.getByTestId('run-realtime')).toContainText(`${name} on the network`);
  await expect(page.getByTestId('run-step')).toBeDisabled();
  await expect(page.getByTestId('run-idle')).toBeDisabled();
  await expect(page.getByTestId('run-play')).toBeDisabled();
  await noErrors(page);
}

/** rc_pingpong's "local address" of this page's QP */
async function localAddress(page: Page, psn: string) {
  await panel(page, 'queues');
  await page.getByTestId('local-psn-input').fill(psn);
  const la = page.getByTestId('local-address');
  await expect(la).toBeVisible();
  return { qpn: (await la.getByTestId('local-qpn').textContent())!, psn: (await la.getByTestId('local-psn').textContent())!, gid: (await la.getByTestId('local-gid').textContent())! };
}
async function connectTo(page: Page, remote: { qpn: string; psn: string; gid: string }) {
  const f = page.getByTestId('remote-connect-form');
  await f.getByTestId('remote-gid').fill('not-a-gid');
  await f.getByTestId('remote-qpn').fill(remote.qpn);
  await f.getByTestId('remote-psn').fill(remote.psn);
  await expect(f.getByTestId('validation-message')).toContainText('GID');
  await expect(f.getByTestId('connect-remote')).toBeDisabled();
  await f.getByTestId('remote-gid').fill(remote.gid);
  await expect(f.getByTestId('validation-message')).toHaveCount(0);
  await f.getByTestId('connect-remote').click();
  await noErrors(page);
  await expect(page.getByTestId('qp-card').getByTestId('qp-state-diagram')).toHaveAttribute('data-state', 'IBV_QPS_RTS');
  await expect(f.getByTestId('remote-connected')).toContainText(`QPN ${remote.qpn}`);
}

let A: Server; let B: Server;
test.beforeAll(async () => { [A, B] = await Promise.all([startServer(), startServer()]); });
test.afterAll(async () => {
  for (const s of [A, B]) { if (s?.proc.exitCode === null) s.proc.kill('SIGTERM'); }
});

test('two hosts on 127.0.0.1: RC QP across, RDMA WRITE, bytes, packets, CQE and an ICRC-good pcap', async ({ page, browser }) => {
  test.setTimeout(180_000);
  const errors: string[] = [];
  const pageA = page;
  const pageB = await (await browser.newContext()).newPage();
  for (const p of [pageA, pageB]) p.on('pageerror', (e) => errors.push(String(e)));
  await pageA.goto(A.url); await pageB.goto(B.url);
  await expect(pageA.getByTestId('host-status')).toHaveText('backend up');
  await expect(pageB.getByTestId('host-status')).toHaveText('backend up');
  await setUp(pageA, 'laptop_a');
  await setUp(pageB, 'laptop_b');

  // two hosts on one machine: two UDP ports, each sending to the other's
  const ua = 30000 + Math.floor(Math.random() * 10000); const ub = ua + 1;
  await putOnNetwork(pageA, 'laptop_a', ua, ub);
  await putOnNetwork(pageB, 'laptop_b', ub, ua);
  await shot(pageA, 'net-devices');

  // exchange the numbers on screen, as two people running rc_pingpong would
  const la = await localAddress(pageA, '0x123');
  const lb = await localAddress(pageB, '0x456');
  expect(la.psn).toBe('0x000123');
  expect(la.gid).toBe('0000:0000:0000:0000:0000:ffff:7f00:0001');
  await connectTo(pageA, lb);
  await connectTo(pageB, la);
  await shot(pageA, 'net-connect');

  // B's buffer address and rkey, as page B shows them
  await panel(pageB, 'memory');
  const addrB = (await pageB.getByTestId('buffer-row').first().locator('td').nth(1).textContent())!.trim();
  const rkeyB = (await pageB.getByTestId('key-row').first().getByTestId('key-rkey').textContent())!.trim();
  await pageB.getByTestId('buffer-row').first().click();
  const hexB = pageB.getByTestId('hex-view');
  await expect(hexB.locator('.hb').nth(16)).toHaveText('00');

  // A writes bytes into its buffer, then RDMA WRITEs them to B's buffer + 16
  await panel(pageA, 'memory');
  await pageA.getByTestId('buffer-row').first().click();
  await pageA.getByTestId('write-offset').fill('0');
  await pageA.getByTestId('write-data').fill('c0ffee00d15ea5e5');
  await pageA.getByTestId('write-bytes').click();
  await expect(pageA.getByTestId('hex-view').locator('.hb').nth(0)).toHaveText('c0');
  await panel(pageA, 'queues');
  await pageA.getByTestId('send-opcode').selectOption('IBV_WR_RDMA_WRITE');
  await pageA.getByTestId('send-length').fill('8');
  await pageA.getByTestId('send-remote-addr').fill(`0x${(BigInt(addrB) + 16n).toString(16)}`);
  await pageA.getByTestId('send-rkey').fill(rkeyB);
  await pageA.getByTestId('send-wrid').fill('42');
  await pageA.getByTestId('post-send').click();
  await noErrors(pageA);

  // the CQE on A (the ACK came back over UDP; no run controls were used)
  await expect(async () => {
    await pageA.getByTestId('poll-cq').click();
    await expect(pageA.getByTestId('wc-status').first()).toHaveText('IBV_WC_SUCCESS', { timeout: 500 });
  }).toPass({ timeout: 15_000 });

  // the bytes in B's buffer, on page B
  const want = ['c0', 'ff', 'ee', '00', 'd1', '5e', 'a5', 'e5'];
  for (let i = 0; i < 8; i++) await expect(hexB.locator('.hb').nth(16 + i)).toHaveText(want[i]!);
  await shot(pageB, 'net-memory-b');

  // both wire views: the RDMA WRITE and its ACK (A sent the WRITE; B received it from the remote host)
  await panel(pageA, 'wire');
  await expect(pageA.locator('[data-testid="packet-row"][data-opcode$="RDMA Write Only"]').first()).toBeVisible();
  await expect(pageA.locator('[data-testid="packet-row"][data-opcode$="Acknowledge"]').first()).toBeVisible();
  await expect(pageA.getByTestId('wire-net-note')).toContainText('laptop_a on the network');
  await panel(pageB, 'wire');
  await expect(pageB.locator('[data-testid="packet-row"][data-opcode$="RDMA Write Only"]').first()).toBeVisible();
  await expect(pageB.locator('[data-testid="packet-row"][data-opcode$="Acknowledge"]').first()).toBeVisible();
  await pageB.locator('[data-testid="packet-row"][data-opcode$="RDMA Write Only"]').first().click();
  await expect(pageB.getByTestId('packet-detail')).toContainText('remote host (UDP) → laptop_b');
  await shot(pageB, 'net-wire-b');
  // the same in the dark theme, with B's network section
  await pageB.getByTestId('theme-toggle').click();
  await shot(pageB, 'net-wire-b-dark');
  // the UDP counters on B moved (refreshed once a second)
  await panel(pageB, 'devices');
  await expect(pageB.getByTestId('net-rx')).not.toContainText(/^0 packets/);
  await expect(pageB.getByTestId('net-tx')).not.toContainText(/^0 packets/);
  await shot(pageB, 'net-devices-b-dark');
  await pageB.getByTestId('theme-toggle').click();

  // single-step is refused while on the network, with the reason, even through the keyboard shortcut
  await pageA.keyboard.press('Alt+s');
  await expect(pageA.locator('[data-testid="error-message"][data-form="engine.step"]')).toContainText('real time');
  await pageA.locator('[data-testid="error-message"][data-form="engine.step"]').getByRole('button').click();

  // Save pcap: the network capture of laptop_a (real IP/UDP headers)
  await panel(pageA, 'wire');
  await expect(pageA.getByTestId('pcap-source')).toHaveValue(/\d+/);
  const [dl] = await Promise.all([pageA.waitForEvent('download'), pageA.getByTestId('save-pcap').click()]);
  expect(dl.suggestedFilename()).toBe('verbslab-laptop_a-net.pcap');
  await expect(pageA.getByTestId('pcap-saved')).toContainText('network traffic of laptop_a');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vl-net-pcap-')), 'a.pcap');
  await dl.saveAs(file);
  await shot(pageA, 'net-wire-a');
  const bytes = fs.readFileSync(file);
  expect(bytes.readUInt32LE(0)).toBe(0xa1b2c3d4);
  if (fs.existsSync(TSHARK) && fs.existsSync(LUA)) {
    // the checker looks at datagrams to port 4791; these two hosts listen on ua / ub, so those ports are given
    // as its script arguments, and -d makes tshark dissect them as RoCEv2 (InfiniBand)
    const r = spawnSync(TSHARK, ['-X', `lua_script:${LUA}`, '-X', `lua_script1:${ua}`, '-X', `lua_script1:${ub}`, '-d', `udp.port==${ua},infiniband`, '-d', `udp.port==${ub},infiniband`,
      '-r', file, '-Y', 'infiniband', '-T', 'fields', '-e', 'infiniband.bth.opcode', '-e', 'icrc_check.status'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThanOrEqual(2);                       // the WRITE and its ACK at least
    expect(lines.some((l) => l.startsWith('10\t'))).toBe(true);          // RC RDMA WRITE Only
    expect(lines.some((l) => l.startsWith('17\t'))).toBe(true);          // RC Acknowledge
    for (const l of lines) expect(l.split('\t')[1], l).toBe('good');
  } else {
    test.info().annotations.push({ type: 'skipped-check', description: 'tshark not installed: pcap not decoded' });
  }

  // off the network: run controls come back
  await panel(pageA, 'devices');
  await pageA.getByTestId('detach-net').click();
  await expect(pageA.getByTestId('attach-net-form')).toBeVisible();
  await expect(pageA.getByTestId('run-realtime')).toHaveCount(0);
  await expect(pageA.getByTestId('run-step')).toBeEnabled();
  await shot(pageA, 'net-devices-off');
  expect(errors).toEqual([]);
});
