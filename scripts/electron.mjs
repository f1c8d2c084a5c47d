// Where the Electron binary is, and getting it the normal way when it is missing: Electron's own install step
// (node_modules/electron/install.js, what npm would run as the package's postinstall; package.json's allowScripts
// keeps npm from running it, so `npm install` never hangs on a 100 MB download). Used by `npm start`
// (scripts/start.mjs) and the Electron e2e spec.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const exeName = process.platform === 'darwin' ? 'Electron.app/Contents/MacOS/Electron' : process.platform === 'win32' ? 'electron.exe' : 'electron';

/** ELECTRON_PATH (a binary), else ELECTRON_OVERRIDE_DIST_PATH or node_modules/electron/dist (a folder); null if none. */
export function findElectron(env = process.env, dir = root) {
  if (env.ELECTRON_PATH) return fs.existsSync(env.ELECTRON_PATH) ? env.ELECTRON_PATH : null;
  for (const d of [env.ELECTRON_OVERRIDE_DIST_PATH, path.join(dir, 'node_modules', 'electron', 'dist')].filter(Boolean)) {
    const bin = path.join(d, exeName);
    if (fs.existsSync(bin)) return bin;
  }
  return null;
}

/** The last line of a failed install step's output that says something (the error, not the stack). */
function lastReason(text) {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean).filter((l) => !/^at\s/.test(l) && !/^\^+$/.test(l) && !/^node:/.test(l));
  const err = lines.find((l) => /(Error|error):/.test(l));
  return (err ?? lines[lines.length - 1] ?? '').slice(0, 300);
}

/**
 * Run Electron's install step, bounded in time. Resolves { ok: true, binary } when a binary is there afterwards,
 * else { ok: false, reason } with the actual reason in one line. Options:
 *   timeoutMs   default VERBSLAB_ELECTRON_INSTALL_TIMEOUT_MS or 180 000 (the download is ~100 MB)
 *   installer   the install script (default node_modules/electron/install.js)
 *   env         the environment it runs with (ELECTRON_MIRROR, electron_config_cache... reach it from there)
 */
export function installElectron({ timeoutMs, installer, env = process.env, dir = root, log = () => {} } = {}) {
  const limit = timeoutMs ?? (Number(env.VERBSLAB_ELECTRON_INSTALL_TIMEOUT_MS) || 180_000);
  const script = installer ?? path.join(dir, 'node_modules', 'electron', 'install.js');
  if (env.ELECTRON_SKIP_BINARY_DOWNLOAD && env.ELECTRON_SKIP_BINARY_DOWNLOAD !== '0') {
    return Promise.resolve({ ok: false, reason: 'ELECTRON_SKIP_BINARY_DOWNLOAD is set, so the Electron binary was not downloaded' });
  }
  if (!fs.existsSync(script)) return Promise.resolve({ ok: false, reason: `the electron npm package is not installed (${path.relative(dir, script)} missing)` });
  return new Promise((resolve) => {
    log(`Electron binary missing: running Electron's install step (${path.relative(dir, script)}, at most ${Math.round(limit / 1000)} s)…`);
    const c = spawn(process.execPath, [script], { cwd: path.dirname(script), env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d) => { out += d; });
    c.stderr.on('data', (d) => { out += d; });
    let timedOut = false;
    const t = setTimeout(() => { timedOut = true; c.kill('SIGKILL'); }, limit);
    c.on('error', (e) => { clearTimeout(t); resolve({ ok: false, reason: `Electron's install step could not start: ${e.message}` }); });
    c.on('close', (code, signal) => {
      clearTimeout(t);
      if (timedOut) { resolve({ ok: false, reason: `Electron's install step did not finish within ${Math.round(limit / 1000)} s` }); return; }
      const binary = findElectron(env, dir);
      if (code === 0 && binary) { resolve({ ok: true, binary }); return; }
      const why = lastReason(out);
      resolve({ ok: false, reason: code === 0 ? `Electron's install step ended but no binary is there${why ? ` (${why})` : ''}`
        : `Electron's install step failed (${signal ?? `exit ${code}`})${why ? `: ${why}` : ''}` });
    });
  });
}

/** The one line `npm start` prints when it serves the console in the browser instead of a window. */
export function fallbackLine(reason) {
  return `No Electron window: ${reason}; serving the console in your browser instead`;
}
