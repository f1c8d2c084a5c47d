// Shared by npm test (scripts/test.mjs) and `verbslab bench` (the UI benchmark): where Chromium is, and a free
// TCP port on 127.0.0.1 for the browser-mode server.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

function playwrightCacheChromium() {
  const base = process.env.PLAYWRIGHT_BROWSERS_PATH || path.join(os.homedir(), '.cache', 'ms-playwright');
  let dirs = [];
  try { dirs = fs.readdirSync(base).sort().reverse(); } catch { return null; }
  for (const d of dirs) {
    for (const rel of ['chrome-linux/chrome', 'chrome-linux64/chrome', 'chrome-linux/headless_shell', 'chrome-headless-shell-linux64/chrome-headless-shell']) {
      const p = path.join(base, d, rel);
      if (/^chromium/.test(d) && fs.existsSync(p)) return p;
    }
  }
  return null;
}

/** CHROMIUM_PATH, else chromium / chromium-browser on PATH, else Playwright's cache; null if none. */
export function findChromium() {
  if (process.env.CHROMIUM_PATH) return fs.existsSync(process.env.CHROMIUM_PATH) ? process.env.CHROMIUM_PATH : null;
  for (const c of ['chromium', 'chromium-browser']) {
    const r = spawnSync('sh', ['-c', `command -v ${c}`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  return playwrightCacheChromium();
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}
