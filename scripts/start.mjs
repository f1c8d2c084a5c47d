#!/usr/bin/env node
// npm start: install what is missing, build (incrementally) the native addon and the renderer, then open the
// console: an Electron window when an Electron binary exists, else browser mode on 127.0.0.1.
//   npm start -- [--no-open] [--port N] [--session-dir DIR] [--browser]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const opt = { open: true, port: undefined, sessionDir: undefined, browser: false };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const val = () => { const v = argv[++i]; if (v === undefined) { console.error(`${a} needs a value`); process.exit(2); } return v; };
  if (a === '--no-open') opt.open = false;
  else if (a === '--port') opt.port = val();
  else if (a === '--session-dir') opt.sessionDir = path.resolve(val());
  else if (a === '--browser') opt.browser = true;
  else if (a === '-h' || a === '--help') {
    console.log('usage: npm start -- [--no-open] [--port N (0 = any)] [--session-dir DIR] [--browser (skip Electron)]');
    process.exit(0);
  } else { console.error(`unknown option ${a} (try --help)`); process.exit(2); }
}

function have(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

// ------------------------------------------------------------------ 1. dependencies
if (!fs.existsSync(path.join(root, 'node_modules', 'vite')) || !fs.existsSync(path.join(root, 'node_modules', 'tsx'))) {
  console.log('node_modules missing: running `npm install` (ELECTRON_SKIP_BINARY_DOWNLOAD=1: the Electron binary is not downloaded)');
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund'], {
    cwd: root, stdio: 'inherit', env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1', PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
  });
  if (r.status !== 0) { console.error('npm install failed'); process.exit(1); }
}

// ------------------------------------------------------------------ 2. builds (incremental)
const { buildAddon, buildRenderer } = await import('./build.mjs');

function newestMtime(paths) {
  let t = 0;
  const visit = (p) => {
    let st;
    try { st = fs.statSync(p); } catch { return; }
    if (st.isDirectory()) { for (const e of fs.readdirSync(p)) if (e !== 'node_modules') visit(path.join(p, e)); }
    else t = Math.max(t, st.mtimeMs);
  };
  paths.forEach(visit);
  return t;
}

try {
  console.log('building the native addon (incremental)…');
  await buildAddon();
  const index = path.join(root, 'dist', 'renderer', 'index.html');
  const srcT = newestMtime(['renderer', 'app/protocol', 'vite.config.ts', 'package.json'].map((p) => path.join(root, p)));
  if (!fs.existsSync(index) || fs.statSync(index).mtimeMs < srcT) {
    console.log('building the renderer (vite build)…');
    await buildRenderer();
  } else {
    console.log('renderer is up to date');
  }
} catch (e) {
  console.error(`build failed: ${e.message}`);
  process.exit(1);
}

// ------------------------------------------------------------------ 3. Electron or browser
function electronBinary() {
  const dirs = [process.env.ELECTRON_OVERRIDE_DIST_PATH, path.join(root, 'node_modules', 'electron', 'dist')].filter(Boolean);
  for (const d of dirs) {
    const bin = path.join(d, process.platform === 'darwin' ? 'Electron.app/Contents/MacOS/Electron' : 'electron');
    if (fs.existsSync(bin)) return bin;
  }
  return null;
}

const children = new Set();
function stopAll(code = 0) {
  for (const c of children) { try { c.kill('SIGINT'); } catch { /* gone */ } }
  setTimeout(() => process.exit(code), 200).unref();
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

const electron = opt.browser ? null : electronBinary();
if (electron) {
  const { bundleElectron } = await import('../app/electron/bundle.mjs');
  await bundleElectron();
  console.log(`starting Electron (${electron})`);
  const args = [path.join(root, 'dist', 'electron', 'main.cjs')];
  if (opt.sessionDir) args.push('--session-dir', opt.sessionDir);
  const c = spawn(electron, args, { cwd: root, stdio: 'inherit' });
  children.add(c);
  c.on('exit', (code) => { children.delete(c); process.exit(code ?? 0); });
} else {
  if (!opt.browser) console.log('Electron binary not installed (downloads are blocked here); serving the console in your browser instead');
  const args = ['--import', 'tsx', path.join(root, 'app', 'server', 'main.ts')];
  if (opt.port !== undefined) args.push('--port', String(opt.port));
  if (opt.sessionDir) args.push('--session-dir', opt.sessionDir);
  const c = spawn(process.execPath, args, { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(c);
  let buf = '';
  let opened = false;
  c.stdout.on('data', (d) => {
    process.stdout.write(d);
    buf += d.toString();
    const m = /Verbs Lab console: (http:\/\/\S+)/.exec(buf);
    if (m && !opened) {
      opened = true;
      if (opt.open) openBrowser(m[1]);
      console.log('press Ctrl-C to stop');
    }
  });
  c.on('exit', (code) => { children.delete(c); process.exit(code ?? 0); });
}

function openBrowser(url) {
  const candidates = [];
  if (process.env.BROWSER) candidates.push([process.env.BROWSER, [url]]);
  if (have('xdg-open') && (process.env.DISPLAY || process.env.WAYLAND_DISPLAY)) candidates.push(['xdg-open', [url]]);
  for (const b of ['chromium', 'chromium-browser', 'google-chrome', 'firefox']) {
    if (have(b) && (process.env.DISPLAY || process.env.WAYLAND_DISPLAY)) {
      const extra = /chrom/.test(b) && process.getuid?.() === 0 ? ['--no-sandbox'] : [];
      candidates.push([b, [...extra, url]]);
    }
  }
  if (!candidates.length) {
    console.log('no browser or display found: open the URL above in a browser');
    return;
  }
  const [cmd, args] = candidates[0];
  console.log(`opening ${cmd}`);
  const b = spawn(cmd, args, { stdio: 'ignore', detached: true });
  b.on('error', () => console.log(`could not start ${cmd}: open the URL above yourself`));
  b.unref();
}
