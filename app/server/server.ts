// Browser mode: an HTTP server on 127.0.0.1 that serves the built renderer with a strict CSP and relays a
// token-protected WebSocket (/rpc) to the backend host, which runs as a forked child process.
// If the host dies the clients get {type:'host', state:'down', reason}; a 'restart-host' control forks a new
// host, which replays the session journal.
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { Control, addDropped } from '../protocol/index.ts';
import type { EventBatch, FromHost, HostStatus, Reply } from '../protocol/index.ts';
import { HostSupervisor, describeExit } from '../host/supervisor.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

/** the largest WebSocket message the server reads (the protocol's own limit, 8 MiB, plus room for the envelope) */
export const WS_MAX_PAYLOAD = 9 * 1024 * 1024;
/** the close reason sent with code 1009 (RFC 6455 7.4.1: a message too big to process); at most 123 bytes */
export const TOO_BIG_REASON = `message over ${WS_MAX_PAYLOAD / 1024 / 1024} MiB refused; reconnect and send less`;
/** requests of one socket that may wait for the host's replies */
export const MAX_IN_FLIGHT = 4096;
/** the replies one socket may have coming, in bytes (estimated per request: replyEstimate), and the bytes the server
 *  may hold for a socket that does not read them (ws bufferedAmount): past either, requests are answered BUSY and the
 *  socket is not read until its replies drain below BUFFER_LOW (TCP then holds the client back) */
export const MAX_REPLY_BYTES = 64 * 1024 * 1024;
export const MAX_BUFFERED = 16 * 1024 * 1024;
export const BUFFER_LOW = 1024 * 1024;
/** a socket that lets this many bytes of its own replies pile up (it never reads) is closed (1008) */
export const MAX_BUFFERED_HARD = 256 * 1024 * 1024;
/** acknowledgements (EventsAck) reach the host at most once per ACK_MS per socket, the newest one */
export const ACK_MS = 20;
/** messages sent to the host whose IPC write has not completed: past this many bytes, requests are answered BUSY */
export const MAX_IPC_BYTES = 64 * 1024 * 1024;

/** The bytes a request's reply may take, known before it runs: memory.read's hex is twice its length; the journal
 *  up to a protocol message; anything else a few KiB. */
export function replyEstimate(msg: unknown): number {
  const c = (msg as { command?: { cmd?: unknown; args?: { length?: unknown } } })?.command;
  if (c?.cmd === 'memory.read' && typeof c.args?.length === 'number') return 2 * Math.max(0, c.args.length) + 512;
  if (c?.cmd === 'journal.get' || c?.cmd === 'events.recent' || c?.cmd === 'scenario.export') return 8 * 1024 * 1024;
  return 4096;
}
export const repoRoot = path.resolve(here, '..', '..');

export interface ServerOptions {
  port?: number;                 // 0 = any free port
  token?: string;                // default: random per launch
  staticDir?: string;            // default: dist/renderer
  sessionDir?: string;           // default: ./.verbslab
  seed?: number;
  defaultDevice?: string | null;
  hostScript?: string;           // default: app/host/main.ts (run through tsx)
  devOrigins?: string[];         // extra allowed origins (a Vite dev server); default from VERBSLAB_DEV_ORIGINS
  maxInFlight?: number;          // requests of one socket that may wait for the host (default MAX_IN_FLIGHT)
  log?: (line: string) => void;
}

export interface RunningServer {
  url: string;                   // http://127.0.0.1:PORT/?token=...
  port: number;
  token: string;
  status(): HostStatus;
  /** Make the host crash inside native code (std::abort in the addon): proves a native crash is survived. */
  crashHostNatively(): void;
  close(): Promise<void>;
}

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png',
  '.ico': 'image/x-icon', '.woff2': 'font/woff2', '.woff': 'font/woff', '.map': 'application/json', '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
};

/** The Content-Security-Policy of every page (scripts only from the server itself; no eval, no inline script). */
export function csp(port: number): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    // stylesheets from the server only: React sets element styles through the CSSOM, which CSP does not block, and no
    // library injects <style> elements (console.spec.ts fails on any CSP violation the page reports)
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src 'self' ws://127.0.0.1:${port} ws://localhost:${port}`,
    "worker-src 'self' blob:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}


export async function startServer(opts: ServerOptions = {}): Promise<RunningServer> {
  const log = opts.log ?? ((l: string) => console.log(l));
  const token = opts.token ?? crypto.randomBytes(24).toString('base64url');
  const staticDir = path.resolve(opts.staticDir ?? path.join(repoRoot, 'dist', 'renderer'));
  const sessionDir = path.resolve(opts.sessionDir ?? path.join(process.cwd(), '.verbslab'));
  const hostScript = opts.hostScript ?? path.join(repoRoot, 'app', 'host', 'main.ts');
  const maxInFlight = opts.maxInFlight ?? MAX_IN_FLIGHT;
  let port = 0;

  // ------------------------------------------------------------------ backend host child
  // the host's life cycle, restarts and replay problems: app/host/supervisor.ts (shared with Electron)
  const sv = new HostSupervisor<ChildProcess>({
    spawn: () => forkHost(),
    kill: (c) => c.kill('SIGKILL'),
    publish: (s) => { for (const c of clients.values()) sendTo(c.ws, s); },
    log,
  });
  /** per socket: the requests waiting for the host, in order (their ids, for HOST_DOWN, and reply estimates) */
  interface Client { ws: WebSocket; dropped: number; inFlight: { id: number | null; bytes: number }[]; replyBytes: number; ack: string | null; ackAt: number; ackTimer: NodeJS.Timeout | null; paused: boolean }
  const clients = new Map<number, Client>();
  let ipcBytes = 0;   // written to the host's IPC channel, not yet flushed (child.send's callback)
  let nextConn = 1;

  const sendText = (ws: WebSocket, text: string) => { if (ws.readyState === ws.OPEN) ws.send(text); };
  const sendTo = (ws: WebSocket, msg: FromHost) => sendText(ws, JSON.stringify(msg));
  /** A message to the host, its bytes counted until its IPC write completes (back-pressure: MAX_IPC_BYTES). */
  const toHost = (c: ChildProcess, m: { t: 'msg'; conn: number; data: string }): boolean => {
    const n = m.data.length;
    ipcBytes += n;
    try { c.send(m, undefined, {}, () => { ipcBytes = Math.max(0, ipcBytes - n); }); } catch { ipcBytes -= n; return false; }
    return true;
  };
  /** A socket with more than MAX_BUFFERED bytes waiting to go out is not read until they drain below BUFFER_LOW
   *  (TCP holds the client back); past MAX_BUFFERED_HARD it is closed: it does not read what it asked for. */
  const watchBuffer = (conn: number, cl: Client) => {
    const ws = cl.ws;
    if (ws.bufferedAmount > MAX_BUFFERED_HARD) {
      log(`websocket ${conn}: ${(ws.bufferedAmount / 1024 / 1024).toFixed(0)} MiB of replies unread; connection closed`);
      ws.terminate();
      return;
    }
    if (cl.paused || ws.bufferedAmount <= MAX_BUFFERED) return;
    cl.paused = true;
    ws.pause();
    const t = setInterval(() => {
      if (ws.readyState !== ws.OPEN) { clearInterval(t); return; }
      if (ws.bufferedAmount > BUFFER_LOW) return;
      clearInterval(t);
      cl.paused = false;
      ws.resume();
    }, 20);
  };
  const forkHost = (): ChildProcess => {
    const args = ['--session-dir', sessionDir];
    if (opts.seed !== undefined) args.push('--seed', String(opts.seed));
    if (opts.defaultDevice !== undefined) args.push('--default-device', opts.defaultDevice ?? 'none');
    const stderrTail: string[] = [];
    const c = fork(hostScript, args, {
      // VERBSLAB_HOST_NODE_ARGS: extra node flags for the host (e.g. --cpu-prof --cpu-prof-dir=DIR to profile it)
      execArgv: [...(hostScript.endsWith('.ts') ? ['--import', 'tsx'] : []), ...(process.env.VERBSLAB_HOST_NODE_ARGS ?? '').split(' ').filter(Boolean)],
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
      serialization: 'advanced',   // structured clone: the host's JSON text crosses without re-encoding
      cwd: repoRoot,
    });
    c.stderr?.on('data', (d: Buffer) => {
      process.stderr.write(d);
      for (const line of d.toString().split('\n')) stderrTail.push(line);
      if (stderrTail.length > 50) stderrTail.splice(0, stderrTail.length - 50);
    });
    c.on('message', (m: { t?: string; conn?: number | null; type?: string; count?: number; text?: string; bin?: Uint8Array; pid?: number; journalEntries?: number; replay?: { failed: unknown[]; skipped: unknown[] } }) => {
      if (!sv.isCurrent(c)) return;
      if (m.t === 'ready') sv.ready(c, m);
      else if (m.t === 'out' && m.bin instanceof Uint8Array) {
        // binary event frames: a binary message, as is (a client's dropped count goes into the first frame)
        const bin = m.bin;
        const targets = m.conn === null || m.conn === undefined ? [...clients.values()] : [clients.get(m.conn)].filter((c) => !!c);
        for (const cl of targets) {
          if (cl.ws.readyState !== cl.ws.OPEN) continue;
          if (cl.ws.bufferedAmount > 4 * 1024 * 1024) { cl.dropped += m.count ?? 0; continue; }
          if (cl.dropped) { cl.ws.send(addDropped(bin, cl.dropped)); cl.dropped = 0; } else cl.ws.send(bin);
        }
      } else if (m.t === 'out' && typeof m.text === 'string') {
        // the host serialised the message once; it goes to the sockets as is
        const text = m.text;
        if (m.conn === null || m.conn === undefined) {
          for (const cl of clients.values()) {
            if (m.type === 'events') {
              // a client that has not read the last few MB gets no more events until it has (they are counted as
              // dropped): a live view stays near the present instead of falling seconds behind
              if (cl.ws.bufferedAmount > 4 * 1024 * 1024) { cl.dropped += m.count ?? 0; continue; }
              if (cl.dropped) {
                const batch = JSON.parse(text) as EventBatch;
                batch.dropped += cl.dropped;
                cl.dropped = 0;
                sendTo(cl.ws, batch);
                continue;
              }
            }
            sendText(cl.ws, text);
          }
        } else {
          const cl = clients.get(m.conn);
          if (cl) {
            if (m.type === 'reply') { const w = cl.inFlight.shift(); if (w) cl.replyBytes -= w.bytes; }
            sendText(cl.ws, text);
            watchBuffer(m.conn, cl);
          }
        }
      }
    });
    c.on('exit', (code, signal) => {
      const why = describeExit(code, signal, stderrTail);
      if (sv.isCurrent(c)) {
        // the dead host answers nothing more: every request it had is answered here, so no console waits forever
        ipcBytes = 0;
        for (const cl of clients.values()) {
          for (const w of cl.inFlight) sendTo(cl.ws, { type: 'reply', id: w.id, ok: false, error: { code: 'HOST_DOWN', message: `backend host ended before it answered: ${why}` } });
          cl.inFlight = []; cl.replyBytes = 0;
        }
      }
      sv.exited(c, why);
    });
    c.on('error', (e) => log(`backend host error: ${e.message}`));
    return c;
  };

  const control = (action: Control['action']) => sv.control(action);

  // ------------------------------------------------------------------ HTTP
  // VERBSLAB_DEV_ORIGINS (comma list, e.g. http://127.0.0.1:5173) admits a Vite dev server proxying /rpc.
  const dev = (opts.devOrigins ?? (process.env.VERBSLAB_DEV_ORIGINS ?? '').split(',')).map((o) => o.trim()).filter(Boolean);
  const allowedHosts = () => new Set([`127.0.0.1:${port}`, `localhost:${port}`, ...dev.map((o) => o.replace(/^https?:\/\//, ''))]);
  const allowedOrigins = () => new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`, ...dev]);

  const server = http.createServer((req, res) => {
    const headers: Record<string, string> = {
      'Content-Security-Policy': csp(port),
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cache-Control': 'no-store',
    };
    if (!allowedHosts().has(req.headers.host ?? '')) {
      res.writeHead(421, { ...headers, 'Content-Type': 'text/plain' });
      res.end('wrong Host header');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...headers, 'Content-Type': 'text/plain', Allow: 'GET, HEAD' });
      res.end('method not allowed');
      return;
    }
    let pathname: string;
    try { pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname); } catch { res.writeHead(400, headers); res.end(); return; }
    if (pathname === '/healthz') {
      res.writeHead(200, { ...headers, 'Content-Type': 'text/plain' });
      res.end(sv.status.state);
      return;
    }
    let file = path.join(staticDir, path.normalize(pathname).replace(/^([/\\])+/, ''));
    if (file !== staticDir && !file.startsWith(staticDir + path.sep)) { res.writeHead(403, headers); res.end(); return; }
    if (pathname.endsWith('/') || !path.extname(pathname)) file = path.join(staticDir, 'index.html');
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) {
        if (!fs.existsSync(path.join(staticDir, 'index.html'))) {
          res.writeHead(503, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' });
          res.end(`The renderer is not built: ${staticDir}/index.html is missing. Run: node scripts/build.mjs renderer\n`);
          return;
        }
        res.writeHead(404, { ...headers, 'Content-Type': 'text/plain' });
        res.end('not found');
        return;
      }
      res.writeHead(200, { ...headers, 'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream', 'Content-Length': st.size });
      if (req.method === 'HEAD') { res.end(); return; }
      fs.createReadStream(file).pipe(res);
    });
  });

  // ------------------------------------------------------------------ WebSocket /rpc
  // Limits (docs/hardening.md): a message over WS_MAX_PAYLOAD closes that one socket with 1009 and the reason as
  // its text (ws would close with the bare code); up to it, the host answers a message over the protocol's 8 MiB
  // with TOO_LARGE and the session goes on. At most MAX_IN_FLIGHT requests of one socket wait for the host; more
  // are answered BUSY at once (a client that never reads its replies cannot grow the server's queue).
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: WS_MAX_PAYLOAD,
  });
  server.on('upgrade', (req, socket, head) => {
    const refuse = (code: number, why: string) => {
      log(`websocket refused: ${why}`);
      socket.end(`HTTP/1.1 ${code} ${why}\r\nConnection: close\r\n\r\n`);
    };
    let url: URL;
    try { url = new URL(req.url ?? '/', 'http://x'); } catch { refuse(400, 'Bad Request'); return; }
    if (url.pathname !== '/rpc') { refuse(404, 'Not Found'); return; }
    if (!allowedHosts().has(req.headers.host ?? '')) { refuse(421, 'Misdirected Request'); return; }
    const origin = req.headers.origin;
    // Browsers always send Origin on WebSockets: only our own page may connect. Non-browser tools (no
    // Origin) still need the token.
    if (origin !== undefined && !allowedOrigins().has(origin)) { refuse(403, 'Forbidden origin'); return; }
    const given = url.searchParams.get('token') ?? '';
    if (!sameToken(given, token)) { refuse(401, 'Unauthorized'); return; }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

  wss.on('connection', (ws: WebSocket) => {
    const conn = nextConn++;
    const client: Client = { ws, dropped: 0, inFlight: [], replyBytes: 0, ack: null, ackAt: -Infinity, ackTimer: null, paused: false };
    clients.set(conn, client);
    sendTo(ws, sv.status);
    // ws closes a socket whose message is over maxPayload itself, with close code 1009 and no text: give it one
    const close = ws.close.bind(ws);
    ws.close = (code?: number, reason?: string | Buffer) => close(code, reason ?? (code === 1009 ? TOO_BIG_REASON : undefined));
    // a protocol error on one socket (oversize, bad framing, invalid UTF-8) closes that socket only
    ws.on('error', (e) => log(`websocket ${conn}: ${e.message}; connection closed`));
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        sendTo(ws, { type: 'reply', id: null, ok: false, error: { code: 'BAD_REQUEST', message: 'binary WebSocket message: the protocol is JSON text' } });
        return;
      }
      const text = data.toString();
      // control messages (restart/kill the host) are the shell's business
      let parsed: unknown;
      try { parsed = JSON.parse(text); } catch { parsed = undefined; }
      if ((parsed as { type?: unknown })?.type === 'control') {
        const c = Control.safeParse(parsed);
        if (!c.success) {
          const issue = c.error.issues[0];
          const field = issue?.path.join('.') || 'message';
          const reply: Reply = { type: 'reply', id: null, ok: false, error: { code: 'BAD_REQUEST', field, message: `${field}: ${issue?.message}` } };
          sendTo(ws, reply);
          return;
        }
        control(c.data.action);
        return;
      }
      const child = sv.child;
      if (!child || sv.status.state !== 'up') {
        if ((parsed as { type?: unknown })?.type === 'ack') return;   // nothing to acknowledge to
        const id = typeof (parsed as { id?: unknown })?.id === 'number' ? (parsed as { id: number }).id : null;
        sendTo(ws, { type: 'reply', id, ok: false, error: { code: 'HOST_DOWN', message: `backend host is ${sv.status.state}${sv.status.reason ? `: ${sv.status.reason}` : ''}` } });
        return;
      }
      if ((parsed as { type?: unknown })?.type === 'ack') {
        // an acknowledgement gets no reply and only the newest counts: at most one per ACK_MS reaches the host (the
        // first at once, so a console that acknowledges at its frame rate is not slowed; a flood keeps the newest)
        const flush = () => {
          client.ackTimer = null;
          const a = client.ack;
          client.ack = null;
          if (a === null) return;
          client.ackAt = performance.now();
          if (sv.child?.connected && sv.status.state === 'up') toHost(sv.child, { t: 'msg', conn, data: a });
        };
        client.ack = text;
        if (client.ackTimer) return;
        const wait = client.ackAt + ACK_MS - performance.now();
        if (wait <= 0) flush();
        else client.ackTimer = setTimeout(flush, wait);
        return;
      }
      const id = typeof (parsed as { id?: unknown })?.id === 'number' ? (parsed as { id: number }).id : null;
      const bytes = replyEstimate(parsed);
      const busy = client.inFlight.length >= maxInFlight ? `more than ${maxInFlight} requests wait for the backend host: wait for their replies`
        : client.replyBytes + bytes > MAX_REPLY_BYTES ? `the replies coming to this console would pass ${MAX_REPLY_BYTES / 1024 / 1024} MiB: read them first`
        : ws.bufferedAmount > MAX_BUFFERED ? `${(ws.bufferedAmount / 1024 / 1024).toFixed(0)} MiB of replies wait for this console to read them`
        : ipcBytes > MAX_IPC_BYTES ? 'the backend host is behind on its requests: try again' : null;
      if (busy) {
        sendTo(ws, { type: 'reply', id, ok: false, error: { code: 'BUSY', message: busy } });
        watchBuffer(conn, client);
        return;
      }
      if (!toHost(child, { t: 'msg', conn, data: text })) {
        sendTo(ws, { type: 'reply', id, ok: false, error: { code: 'HOST_DOWN', message: 'backend host unreachable' } });
        return;
      }
      client.inFlight.push({ id, bytes });
      client.replyBytes += bytes;
    });
    ws.on('close', () => {
      clients.delete(conn);
      if (client.ackTimer) clearTimeout(client.ackTimer);
      if (sv.child?.connected) sv.child.send({ t: 'bye', conn });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 5199, '127.0.0.1', () => { server.off('error', reject); resolve(); });
  });
  port = (server.address() as AddressInfo).port;
  sv.start();

  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    status: () => sv.status,
    crashHostNatively: () => { if (sv.child?.connected) sv.child.send({ t: 'abort' }); },
    close: async () => {
      sv.close();
      for (const c of clients.values()) c.ws.close(1001, 'server shutting down');
      const c = sv.child;
      if (c) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(() => { c.kill('SIGKILL'); }, 3000);
          c.once('exit', () => { clearTimeout(t); resolve(); });
          c.disconnect?.();
          c.kill('SIGTERM');
        });
      }
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
