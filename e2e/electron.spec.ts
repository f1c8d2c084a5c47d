// Electron shell (runs only with ELECTRON_PATH pointing at an Electron binary; on Linux under xvfb-run):
// the hardened window shows the console over the MessagePort transport, the preload exposes only connect(),
// new windows are denied, and a killed backend host is reported and restarted with its journal.
// No Electron binary can be obtained on the project's build machines, so this spec has not been run there.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { _electron as electron, expect, test } from '@playwright/test';

const ELECTRON = process.env.ELECTRON_PATH;
test.skip(!ELECTRON, 'needs an Electron binary: set ELECTRON_PATH (and run under xvfb-run on Linux)');

test('Electron: hardened window, console over the MessagePort, host killed and restarted', async () => {
  test.setTimeout(120_000);
  const root = path.resolve(__dirname, '..');
  const { bundleElectron } = await import('../app/electron/bundle.mjs');
  await bundleElectron();
  const sessionDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verbslab-electron-'));
  const app = await electron.launch({ executablePath: ELECTRON!, args: [path.join(root, 'dist/electron/main.cjs'), '--session-dir', sessionDir], cwd: root });
  try {
    const page = await app.firstWindow();
    await expect(page.getByTestId('host-status')).toContainText('backend up');
    await page.getByTestId('nav-devices').click();   // a fresh console opens on the Labs panel (first run)
    await expect(page.getByTestId('device-row').first()).toContainText('vlrxe0');

    // the window's settings (contextIsolation, sandbox, nodeIntegration off) show as: no Node in the page, and
    // the only bridge is connect()
    const globals = await page.evaluate(() => ({
      require: typeof (globalThis as { require?: unknown }).require,
      process: typeof (globalThis as { process?: unknown }).process,
      bridge: Object.keys((globalThis as unknown as { verbslab: object }).verbslab),
      origin: location.origin,
    }));
    expect(globals).toEqual({ require: 'undefined', process: 'undefined', bridge: ['connect'], origin: 'verbslab://app' });

    const windows = app.windows().length;
    await page.evaluate(() => { window.open('https://example.com/'); });
    expect(app.windows().length).toBe(windows);

    // a second connection's control port kills the host
    await page.evaluate(() => new Promise<void>((resolve) => {
      const onMsg = (e: MessageEvent) => {
        if ((e.data as { type?: string })?.type !== 'verbslab:ports' || e.ports.length !== 2) return;
        window.removeEventListener('message', onMsg);
        e.ports[1]!.postMessage({ type: 'control', action: 'kill-host' });
        resolve();
      };
      window.addEventListener('message', onMsg);
      (globalThis as unknown as { verbslab: { connect(): void } }).verbslab.connect();
    }));
    await expect(page.getByTestId('host-status')).toContainText('down');
    await page.getByTestId('restart-host').click();
    await expect(page.getByTestId('host-status')).toContainText('backend up');
    await page.getByTestId('nav-devices').click();   // a fresh console opens on the Labs panel (first run)
    await expect(page.getByTestId('device-row').first()).toContainText('vlrxe0');
  } finally {
    await app.close();
  }
});
