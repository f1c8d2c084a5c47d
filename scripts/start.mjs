#!/usr/bin/env node
// npm start: install what is missing, build (incrementally) the native addon and the renderer, then open the
// console: an Electron window when an Electron binary exists or Electron's install step gets one, else browser mode
// on 127.0.0.1 with the reason in one line.
//   npm start -- [--no-open] [--port N] [--session-dir DIR] [--browser] [--no-build]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const opt = { open: true, port: undefined, sessionDir: undefined, browser: false, build: true };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const val = () => { const v = argv[++i]; if (v === undefined) { console.error(`${a} needs a value`); process.exit(2); } return v; };
  if (a === '--no-open') opt.open = false;
  else if (a === '--port') opt.port = val();
  else if (a === '--session-dir') opt.sessionDir = path.resolve(val());
  else if (a === '--browser') opt.browser = true;
  else if (a === '--no-build') opt.build = false;
  else if (a === '-h' || a === '--help') {
    console.log('usage: npm start -- [--no-open] [--port N (0 = any)] [--session-dir DIR] [--browser (skip Electron)] [--no-build (use what is built)]');
    process.exit(0);
  } else { console.error(`unknown option ${a} (try --help)`); process.exit(2); }
}

function have(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

// ------------------------------------------------------------------ 1. dependencies
if (!fs.existsSync(path.join(root, 'node_modules', 'vite')) || !fs.existsSync(path.join(root, 'node_modules', 'tsx'))) {
  console.log('node_modules missing: running `npm install` (the Electron binary comes after, from its own install step)');
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

if (opt.build) try {
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
// An Electron window when a binary is there or Electron's own install step gets one (bounded in time); else the
// browser, with the actual reason in one line.
const { fallbackLine, findElectron, installElectron } = await import('./electron.mjs');

const children = new Set();
function stopAll(code = 0) {
  for (const c of children) { try { c.kill('SIGINT'); } catch { /* gone */ } }
  setTimeout(() => process.exit(code), 200).unref();
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

let electron = null;
let why = null;
if (!opt.browser) {
  electron = findElectron();
  if (!electron) {
    const r = await installElectron({ log: (l) => console.log(l) });
    if (r.ok) { electron = r.binary; console.log(`Electron installed: ${electron}`); } else why = r.reason;
  }
  if (electron && process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    electron = null;
    why = 'no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset)';
  }
}
if (electron) startElectron(electron).catch((e) => { console.log(fallbackLine(`Electron could not start: ${e.message}`)); startBrowser(); });
else {
  if (why) console.log(fallbackLine(why));
  startBrowser();
}

/** The window; if Electron fails in its first seconds (missing system libraries...), the browser instead. */
async function startElectron(bin) {
  const { bundleElectron } = await import('../app/electron/bundle.mjs');
  await bundleElectron();
  console.log(`starting Electron (${bin})`);
  const args = [path.join(root, 'dist', 'electron', 'main.cjs')];
  // Chromium refuses to run as root with its sandbox on; the window keeps its own settings (sandboxed renderer)
  if (process.getuid?.() === 0) args.unshift('--no-sandbox');
  if (opt.sessionDir) args.push('--session-dir', opt.sessionDir);
  const c = spawn(bin, args, { cwd: root, stdio: ['ignore', 'inherit', 'pipe'] });
  children.add(c);
  let tail = '';
  c.stderr.on('data', (d) => { process.stderr.write(d); tail = (tail + d).slice(-4000); });
  const t0 = Date.now();
  c.on('error', (e) => { children.delete(c); console.log(fallbackLine(`Electron could not start: ${e.message}`)); startBrowser(); });
  c.on('exit', (code, signal) => {
    children.delete(c);
    if (code && Date.now() - t0 < 20_000) {
      const last = tail.split('\n').map((l) => l.trim()).filter(Boolean).pop() ?? '';
      console.log(fallbackLine(`Electron exited with code ${code}${last ? ` (${last.slice(0, 200)})` : ''}`));
      startBrowser();
      return;
    }
    process.exit(code ?? (signal ? 1 : 0));
  });
}

function startBrowser() {
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
