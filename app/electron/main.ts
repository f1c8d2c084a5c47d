// Electron main process: one window on the same renderer build as browser mode, hardened (contextIsolation,
// sandbox, no Node integration, CSP, navigation and new windows blocked, IPC only from the app's own top
// frame); the backend host runs as a utility process and talks to the renderer over a MessagePort.
// Bundled by app/electron/bundle.mjs to dist/electron/main.cjs (the host to dist/host/main.mjs).
import { BrowserWindow, MessageChannelMain, app, ipcMain, protocol, session, utilityProcess } from 'electron';
import type { IpcMainEvent, MessagePortMain, UtilityProcess, WebContents } from 'electron';
import fs from 'node:fs';
import path from 'node:path';
import { HostSupervisor, describeExit, type HostReady } from '../host/supervisor.ts';

const ROOT = path.resolve(__dirname, '..', '..');
const RENDERER_DIR = path.join(ROOT, 'dist', 'renderer');

const HOST_SCRIPT = path.join(ROOT, 'dist', 'host', 'main.mjs');
const PRELOAD = path.join(ROOT, 'dist', 'electron', 'preload.cjs');
const SCHEME = 'verbslab';
const APP_ORIGIN = `${SCHEME}://app`;

export const CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob:",
  "font-src 'self'", "connect-src 'self'", "worker-src 'self' blob:", "base-uri 'none'", "form-action 'none'",
  "frame-ancestors 'none'", "object-src 'none'",
].join('; ');

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png', '.woff2': 'font/woff2', '.wasm': 'application/wasm',
};

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const sessionDir = path.resolve(argValue('--session-dir') ?? path.join(process.cwd(), '.verbslab'));

protocol.registerSchemesAsPrivileged([{ scheme: SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } }]);

/** Is this IPC message from our own window's top frame, showing our own origin? */
export function trustedSender(e: IpcMainEvent, expected: WebContents | null): boolean {
  const frame = e.senderFrame;
  if (!frame || frame.parent !== null || !expected || e.sender !== expected) return false;
  try { return new URL(frame.url).origin === APP_ORIGIN; } catch { return false; }
}

// ------------------------------------------------------------------ backend host
const controls = new Set<MessagePortMain>();
// the host's life cycle, restarts and replay problems: app/host/supervisor.ts (shared with the browser-mode server)
const sv = new HostSupervisor<UtilityProcess>({
  spawn: () => forkHost(),
  kill: (h) => { h.kill(); },
  publish: (s) => { for (const p of controls) p.postMessage(s); },
  restarted: () => reconnectAll(),
});

function forkHost(): UtilityProcess {
  const h = utilityProcess.fork(HOST_SCRIPT, ['--session-dir', sessionDir], { serviceName: 'Verbs Lab backend host', stdio: 'inherit' });
  h.on('message', (m: { t?: string } & HostReady) => { if (m?.t === 'ready') sv.ready(h, m); });
  h.on('exit', (code) => sv.exited(h, describeExit(code, null)));
  return h;
}

/** A fresh renderer<->host channel; the host end goes to the utility process. */
function hostPort(): MessagePortMain | null {
  const host = sv.child;
  if (!host) return null;
  const { port1, port2 } = new MessageChannelMain();
  host.postMessage({ t: 'port' }, [port1]);
  return port2;
}

function reconnectAll(): void {
  for (const c of controls) {
    const p = hostPort();
    if (p) c.postMessage({ type: 'host-port' }, [p]);
  }
}

function control(action: unknown): void {
  if (action === 'kill-host' || action === 'restart-host') sv.control(action);
}

// ------------------------------------------------------------------ window
let win: BrowserWindow | null = null;

function createWindow(): void {
  win = new BrowserWindow({
    width: 1440, height: 900, title: 'Verbs Lab', show: true,
    webPreferences: {
      preload: PRELOAD, contextIsolation: true, sandbox: true, nodeIntegration: false, nodeIntegrationInWorker: false,
      webSecurity: true, webviewTag: false, spellcheck: false, allowRunningInsecureContent: false,
    },
  });
  const wc = win.webContents;
  wc.setWindowOpenHandler(() => ({ action: 'deny' }));
  wc.on('will-navigate', (e, url) => { if (!url.startsWith(`${APP_ORIGIN}/`)) e.preventDefault(); });
  wc.on('will-redirect', (e, url) => { if (!url.startsWith(`${APP_ORIGIN}/`)) e.preventDefault(); });
  wc.on('will-attach-webview', (e) => e.preventDefault());
  void win.loadURL(`${APP_ORIGIN}/index.html`);
  win.on('closed', () => { win = null; });
}

app.whenReady().then(() => {
  session.defaultSession.setPermissionRequestHandler((_wc, _perm, cb) => cb(false));
  protocol.handle(SCHEME, (req) => {
    const url = new URL(req.url);
    if (url.host !== 'app') return new Response('not found', { status: 404 });
    const rel = path.normalize(decodeURIComponent(url.pathname)).replace(/^([/\\])+/, '') || 'index.html';
    const file = path.join(RENDERER_DIR, rel);
    if (!file.startsWith(RENDERER_DIR + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      return new Response('not found', { status: 404 });
    }
    return new Response(fs.readFileSync(file), {
      headers: { 'content-type': MIME[path.extname(file)] ?? 'application/octet-stream', 'content-security-policy': CSP, 'x-content-type-options': 'nosniff' },
    });
  });

  ipcMain.on('verbslab:connect', (e) => {
    if (!trustedSender(e, win?.webContents ?? null)) return;
    const { port1: ctlMain, port2: ctlRenderer } = new MessageChannelMain();
    const hp = hostPort();
    controls.add(ctlMain);
    ctlMain.on('message', (m) => {
      const d = m.data as { type?: string; action?: unknown };
      if (d?.type === 'control') control(d.action);
    });
    ctlMain.on('close', () => controls.delete(ctlMain));
    ctlMain.start();
    if (hp) e.sender.postMessage('verbslab:ports', null, [hp, ctlRenderer]);
    else {
      // host not running: hand over a dead-end port; the control port carries the status and a later host-port
      const { port1, port2 } = new MessageChannelMain();
      port1.close();
      e.sender.postMessage('verbslab:ports', null, [port2, ctlRenderer]);
    }
    ctlMain.postMessage(sv.status);
  });

  sv.start();
  createWindow();
});

app.on('web-contents-created', (_e, contents) => {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.on('will-attach-webview', (ev) => ev.preventDefault());
});
app.on('before-quit', () => { sv.close(); const h = sv.child; if (h) h.kill(); });
app.on('window-all-closed', () => app.quit());
