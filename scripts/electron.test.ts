// `npm start`'s way to an Electron window: Electron's own install step (node_modules/electron/install.js, the real
// one) pointed at a local stub mirror (ELECTRON_MIRROR) that refuses or never answers, bounded in time, and the
// one-line reason npm start prints before it serves the console in the browser instead. No download leaves the
// machine: the stub is on 127.0.0.1 and the cache is a fresh temporary folder.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fallbackLine, findElectron, installElectron } from './electron.mjs';

const root = path.resolve(__dirname, '..');
const version = JSON.parse(fs.readFileSync(path.join(root, 'node_modules', 'electron', 'package.json'), 'utf8')).version as string;
const requests: string[] = [];
let refusing: http.Server;
let silent: http.Server;
const port = (s: http.Server) => (s.address() as AddressInfo).port;

beforeAll(async () => {
  refusing = http.createServer((req, res) => { requests.push(req.url ?? ''); res.writeHead(404); res.end('no such file'); });
  silent = http.createServer(() => { /* never answers */ });
  await Promise.all([refusing, silent].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
});
afterAll(() => { refusing.closeAllConnections(); silent.closeAllConnections(); refusing.close(); silent.close(); });

/** the environment of a user whose machine has no Electron binary, with the mirror pointed at a stub */
function envFor(mirror: http.Server): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ELECTRON_MIRROR: `http://127.0.0.1:${port(mirror)}/`, electron_config_cache: fs.mkdtempSync(path.join(os.tmpdir(), 'vl-electron-cache-')) };
  for (const k of ['ELECTRON_SKIP_BINARY_DOWNLOAD', 'ELECTRON_PATH', 'ELECTRON_OVERRIDE_DIST_PATH', 'ELECTRON_CUSTOM_DIR', 'ELECTRON_CUSTOM_FILENAME', 'HTTPS_PROXY', 'HTTP_PROXY', 'https_proxy', 'http_proxy']) delete env[k];
  return env;
}
const noBinaryHere = findElectron({}, root) === null;

describe('getting the Electron binary', () => {
  it.skipIf(!noBinaryHere)('a mirror that refuses: the install step fails with the HTTP status, in one line', async () => {
    const r = await installElectron({ env: envFor(refusing), timeoutMs: 60_000, dir: root });
    expect(r.ok).toBe(false);
    const reason = (r as { reason: string }).reason;
    expect(reason).toMatch(/^Electron's install step failed \(exit 1\): .*404/);
    expect(requests.some((u) => u.includes(`electron-v${version}-linux-`) && u.endsWith('.zip'))).toBe(true);   // the real step asked the stub
    const line = fallbackLine(reason);
    expect(line).not.toContain('\n');
    expect(line).toMatch(/^No Electron window: Electron's install step failed .*; serving the console in your browser instead$/);
  }, 90_000);

  it.skipIf(!noBinaryHere)('a mirror that never answers: the step is stopped at its time limit', async () => {
    const t0 = Date.now();
    const r = await installElectron({ env: envFor(silent), timeoutMs: 2000, dir: root });
    expect(r).toEqual({ ok: false, reason: "Electron's install step did not finish within 2 s" });
    expect(Date.now() - t0).toBeLessThan(15_000);
  }, 30_000);

  it('ELECTRON_SKIP_BINARY_DOWNLOAD (CI) is honoured and named', async () => {
    const r = await installElectron({ env: { ...envFor(refusing), ELECTRON_SKIP_BINARY_DOWNLOAD: '1' }, dir: root });
    expect(r).toEqual({ ok: false, reason: 'ELECTRON_SKIP_BINARY_DOWNLOAD is set, so the Electron binary was not downloaded' });
  });

  it('an install step that puts a binary where Electron looks (ELECTRON_OVERRIDE_DIST_PATH) gives that binary', async () => {
    const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-electron-dist-'));
    const stub = path.join(dist, 'install-stub.cjs');
    fs.writeFileSync(stub, "require('fs').writeFileSync(require('path').join(process.env.ELECTRON_OVERRIDE_DIST_PATH, 'electron'), '#!/bin/sh\\n', { mode: 0o755 });\n");
    const r = await installElectron({ env: { ...envFor(refusing), ELECTRON_OVERRIDE_DIST_PATH: dist }, installer: stub, dir: root });
    expect(r).toEqual({ ok: true, binary: path.join(dist, 'electron') });
    const gone = await installElectron({ env: envFor(refusing), installer: path.join(dist, 'missing.cjs'), dir: root });
    expect(gone).toMatchObject({ ok: false, reason: expect.stringContaining('the electron npm package is not installed') });
  });

  it.skipIf(!noBinaryHere)('npm start prints the fallback line with the reason, then serves the console in the browser', async () => {
    const env = { ...envFor(refusing), VERBSLAB_ELECTRON_INSTALL_TIMEOUT_MS: '60000', DISPLAY: ':99' };
    const c = spawn(process.execPath, ['scripts/start.mjs', '--no-open', '--no-build', '--port', '0', '--session-dir', fs.mkdtempSync(path.join(os.tmpdir(), 'vl-start-'))], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d) => { out += d; });
    c.stderr.on('data', (d) => { out += d; });
    try {
      const t0 = Date.now();
      while (!/Verbs Lab console: http/.test(out)) {
        if (c.exitCode !== null || Date.now() - t0 > 80_000) throw new Error(`npm start did not serve the console:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const lines = out.split('\n');
      const fb = lines.find((l) => l.startsWith('No Electron window: '));
      expect(fb, out).toMatch(/^No Electron window: Electron's install step failed \(exit 1\): .*404.*; serving the console in your browser instead$/);
      expect(lines.indexOf(fb!)).toBeLessThan(lines.findIndex((l) => l.startsWith('Verbs Lab console: ')));
    } finally {
      c.kill('SIGINT');
      await new Promise((r) => c.once('exit', r));
    }
  }, 120_000);
});
