// Playwright: browser mode against the real backend host, in Debian's Chromium (no browser download).
// The web server is app/server on a free port (VERBSLAB_E2E_PORT, chosen by scripts/test.mjs) with a known
// token (VERBSLAB_E2E_TOKEN) and a fresh session directory, so the tests can open the console URL.
// Values are put into process.env here so that worker processes (which inherit it) see the same ones.
import { defineConfig } from '@playwright/test';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

process.env.VERBSLAB_E2E_PORT ??= String(20000 + (process.pid % 20000));
process.env.VERBSLAB_E2E_TOKEN ??= process.env.VERBSLAB_TOKEN || crypto.randomBytes(16).toString('hex');
process.env.VERBSLAB_TOKEN = process.env.VERBSLAB_E2E_TOKEN;   // specs may read either name
process.env.VERBSLAB_E2E_SESSION ??= fs.mkdtempSync(path.join(os.tmpdir(), 'verbslab-e2e-'));
const port = Number(process.env.VERBSLAB_E2E_PORT);
const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export default defineConfig({
  testDir: 'e2e',
  testMatch: /.*\.spec\.ts$/,
  workers: 1,
  fullyParallel: false,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: chromium,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--no-first-run', '--disable-quic'],
    },
  },
  projects: [
    { name: 'web', use: { browserName: 'chromium' }, testIgnore: /electron\.spec\.ts$/ },
    // the Electron shell: the spec skips itself, naming the reason, when no Electron binary exists
    { name: 'electron', testMatch: /electron\.spec\.ts$/ },
  ],
  webServer: {
    command: `node --import tsx app/server/main.ts --port ${port} --session-dir ${process.env.VERBSLAB_E2E_SESSION}`,
    url: `http://127.0.0.1:${port}/healthz`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'pipe',
    stderr: 'pipe',
    env: { VERBSLAB_TOKEN: process.env.VERBSLAB_E2E_TOKEN },
  },
});
