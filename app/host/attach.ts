// Host extension: programs run under `verbslab exec --console` (native/libibverbs/console.cpp) attach to this
// console over a Unix socket in the session directory and stream their device; the console lists them as attached
// sessions (attach.list) and its panels read them (attach.call; app/host/attach-session.ts answers).
//
// Access: the socket and a token file next to it (console.token), both mode 0600 in the session directory, so only
// the user who runs the console can connect (the browser mode's rule: a random token per launch, compared in constant
// time; docs/hardening.md). A connection must say hello with the token within ATTACH_HELLO_MS.
//
// Bad input from a connection (not JSON, not a known message, a line over ATTACH_MAX_LINE, a wrong token) gets one
// line {"t":"error"|"refused","message":...} naming the problem and that connection is closed; the host and every
// other session go on. A connection that closes without {"t":"bye"} ends its session as "killed or crashed"; what it
// sent stays readable until ATTACH_MAX_SESSIONS newer ones push it out.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { ErrorInfo, FromHost } from '../protocol/index.ts';
import {
  ATTACH_HELLO_MS, ATTACH_MAX_LINE, ATTACH_MAX_SESSIONS, ATTACH_PROTOCOL_VERSION, AttachHello, AttachMessage, describeZodError,
} from '../protocol/index.ts';
import type { HostCore } from './core.ts';
import type { NativeExecutor } from './executor.ts';
import { AttachSession, type ProfileSource } from './attach-session.ts';
import { privateDir, writePrivate } from './sessiondir.ts';

export const SOCKET_FILE = 'console.sock';
export const TOKEN_FILE = 'console.token';

export interface AttachOptions {
  dir: string;
  /** default: a random one per start */
  token?: string;
  lib: ProfileSource;
  /** to every console (HostCore.broadcast) */
  send: (msg: FromHost) => void;
  log?: (line: string) => void;
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

export class AttachServer {
  readonly socketPath: string;
  readonly token: string;
  readonly sessions = new Map<number, AttachSession>();
  error: string | undefined;
  private server: net.Server | null = null;
  private nextId = 1;
  private readonly log: (line: string) => void;

  constructor(private readonly o: AttachOptions) {
    this.socketPath = path.join(o.dir, SOCKET_FILE);
    this.token = o.token ?? crypto.randomBytes(24).toString('base64url');
    this.log = o.log ?? ((l) => console.error(l));
  }

  /** listen; resolves with null, or the reason programs cannot attach (the console works without it) */
  async start(): Promise<string | null> {
    try {
      const bad = privateDir(this.o.dir);   // 0700, ours, not writable by others (sessiondir.ts)
      if (bad) throw new Error(bad);
      // the host holds the session directory's lock (journal.ts): a socket file left here is a dead host's
      fs.rmSync(this.socketPath, { force: true });
      // a fresh 0600 file (O_EXCL | O_NOFOLLOW): a symlink planted here is removed, never written through
      writePrivate(path.join(this.o.dir, TOKEN_FILE), `${this.token}\n`);
      const server = net.createServer((sock) => this.accept(sock));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        // 0600 from the start: no moment at which another user could connect
        const old = process.umask(0o177);
        try { server.listen(this.socketPath, () => { server.off('error', reject); resolve(); }); } finally { process.umask(old); }
      });
      server.on('error', (e) => this.log(`verbslab host: attach socket: ${e.message}`));
      this.server = server;
      return null;
    } catch (e) {
      this.error = `programs cannot attach: ${this.socketPath}: ${(e as Error).message}`;
      this.log(`verbslab host: ${this.error}`);
      return this.error;
    }
  }

  close(): void {
    this.server?.close();
    this.server = null;
    try { fs.rmSync(this.socketPath, { force: true }); } catch { /* gone */ }
  }

  list() { return [...this.sessions.values()].map((s) => s.view()); }

  private accept(sock: net.Socket): void {
    let buf: Buffer = Buffer.alloc(0);
    let session: AttachSession | null = null;
    let closed = false;
    const hello = setTimeout(() => refuse(`no hello within ${ATTACH_HELLO_MS / 1000} s`), ATTACH_HELLO_MS);
    const finish = (line: object) => {
      if (closed) return;
      closed = true;
      clearTimeout(hello);
      sock.end(`${JSON.stringify(line)}\n`);
      sock.destroySoon?.();
      setTimeout(() => sock.destroy(), 1000).unref();
    };
    const refuse = (message: string) => { this.log(`verbslab host: attach refused: ${message}`); finish({ t: 'refused', message }); };
    const bad = (message: string) => {
      // a session that sent garbage ends with the reason; what it sent before stays readable
      session?.end(`protocol error: ${message}`);
      this.log(`verbslab host: attached session ${session?.id ?? '-'}: ${message}; connection closed`);
      finish({ t: 'error', message });
    };
    const line = (text: string) => {
      let j: unknown;
      try { j = JSON.parse(text); } catch (e) { return bad(`a line is not JSON (${(e as Error).message})`); }
      if (!session) {
        const h = AttachHello.safeParse(j);
        if (!h.success) return refuse(`the first line must be a hello: ${describeZodError(h.error, 'hello').message}`);
        if (!sameToken(h.data.token, this.token)) return refuse('wrong token');
        if (h.data.v !== ATTACH_PROTOCOL_VERSION) return refuse(`protocol version ${h.data.v}; this console speaks ${ATTACH_PROTOCOL_VERSION}`);
        clearTimeout(hello);
        session = this.add(h.data);
        sock.write(`${JSON.stringify({ t: 'welcome', session: session.id })}\n`);
        return;
      }
      const m = AttachMessage.safeParse(j);
      if (!m.success) return bad(describeZodError(m.error, 'message').message);
      session.apply(m.data);
    };
    sock.on('data', (chunk: Buffer) => {
      if (closed) return;
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      let at: number;
      while (!closed && (at = buf.indexOf(10)) >= 0) {
        if (at > ATTACH_MAX_LINE) return bad(`a line of ${at} bytes is over the ${ATTACH_MAX_LINE} byte limit`);
        const text = buf.subarray(0, at).toString('utf8');
        buf = buf.subarray(at + 1);
        if (text.trim()) line(text);
      }
      if (!closed && buf.length > ATTACH_MAX_LINE) bad(`a line of more than ${ATTACH_MAX_LINE} bytes`);
    });
    const gone = () => {
      clearTimeout(hello);
      closed = true;
      session?.end(buf.length
        ? 'the connection closed in the middle of a message (the program was killed or crashed)'
        : 'the connection closed without a goodbye: the program was killed (Ctrl-C, SIGKILL) or crashed');
    };
    sock.on('end', gone);
    sock.on('close', gone);
    sock.on('error', (e) => { this.log(`verbslab host: attached session ${session?.id ?? '-'}: ${e.message}`); gone(); });
  }

  private add(h: AttachHello): AttachSession {
    const s = new AttachSession(this.nextId++, h.pid, h.program, h.argv, this.o.send, this.o.lib);
    this.sessions.set(s.id, s);
    // at most ATTACH_MAX_SESSIONS: the oldest ended ones make room (live ones stay)
    for (const old of this.sessions.values()) {
      if (this.sessions.size <= ATTACH_MAX_SESSIONS) break;
      if (old.ended) this.sessions.delete(old.id);
    }
    return s;
  }
}

const fail = (code: string, message: string, field?: string): { ok: false; error: ErrorInfo } =>
  ({ ok: false, error: { code, message, ...(field ? { field } : {}) } });

/** The extension: listen in the session directory and answer attach.list / attach.call. */
export function attach(core: HostCore): AttachServer {
  const x = core.executor as Partial<NativeExecutor>;
  const lib: ProfileSource = {
    profiles: () => x.addon?.Session.profiles() ?? [],
    napiVersion: x.addon?.napiVersion ?? 0,
  };
  const srv = new AttachServer({ dir: core.journal.dir, lib, send: (m) => core.broadcast(m) });
  void srv.start();
  process.once('exit', () => srv.close());
  core.register({
    name: 'attach.list',
    handler: () => ({ ok: true, result: { sessions: srv.list(), socket: srv.error ? null : srv.socketPath, ...(srv.error ? { error: srv.error } : {}) } }),
  });
  core.register({
    name: 'attach.call',
    handler: (c) => {
      const s = srv.sessions.get(c.args.session);
      if (!s) return fail('ENOENT', `args.session: no attached session ${c.args.session} (attach.list names them)`, 'args.session');
      return s.call(c.args.command);
    },
  });
  return srv;
}
