// Electron shell, when an Electron binary exists (ELECTRON_PATH, ELECTRON_OVERRIDE_DIST_PATH or the one Electron's
// install step put in node_modules/electron/dist; scripts/electron.mjs finds it): the hardened window shows the
// console over the MessagePort transport, the preload exposes only connect(), new windows are denied, and a killed
// backend host is reported and restarted with its journal. On Linux without a display it starts its own Xvfb.
// Skipped, with that reason, where no binary exists (the project's build machines cannot download one).
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { _electron as electron, expect, test } from '@playwright/test';
import { findElectron } from '../scripts/electron.mjs';

const ELECTRON = findElectron();
test.skip(!ELECTRON, 'no Electron binary: set ELECTRON_PATH or ELECTRON_OVERRIDE_DIST_PATH, or let `npm start` run Electron\'s install step');

/** a display for the window: $DISPLAY, else a private Xvfb (Debian's xvfb) */
async function display(): Promise<{ env: Record<string, string>; xvfb: ChildProcess | null }> {
  if (process.platform !== 'linux' || process.env.DISPLAY || process.env.WAYLAND_DISPLAY) return { env: {}, xvfb: null };
  if (spawnSync('sh', ['-c', 'command -v Xvfb'], { stdio: 'ignore' }).status !== 0) throw new Error('no display and no Xvfb: apt-get install xvfb');
  const n = 90 + (process.pid % 100);
  const xvfb = spawn('Xvfb', [`:${n}`, '-screen', '0', '1440x900x24', '-nolisten', 'tcp'], { stdio: 'ignore' });
  for (let i = 0; i < 50 && !fs.existsSync(`/tmp/.X11-unix/X${n}`); i++) await new Promise((r) => setTimeout(r, 100));
  return { env: { DISPLAY: `:${n}` }, xvfb };
}

test('Electron: hardened window, console over the MessagePort, host killed and restarted', async () => {
  test.setTimeout(120_000);
  const root = path.resolve(__dirname, '..');
  const { bundleElectron } = await import('../app/electron/bundle.mjs');
  await bundleElectron();
  const sessionDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verbslab-electron-'));
  const { env, xvfb } = await display();
  // Chromium refuses to run as root with its sandbox on (the window keeps its own sandboxed renderer)
  const root0 = process.getuid?.() === 0 ? ['--no-sandbox'] : [];
  const app = await electron.launch({ executablePath: ELECTRON!, args: [...root0, path.join(root, 'dist/electron/main.cjs'), '--session-dir', sessionDir], cwd: root, env: { ...process.env, ...env } as Record<string, string> });
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
    xvfb?.kill();
  }
});
