// The backend host process: owns the native session. Started by the browser-mode server (child_process.fork,
// Node IPC) or by Electron's main process (utilityProcess.fork, MessagePorts).
//
//   node --import tsx app/host/main.ts [--session-dir DIR] [--seed N] [--default-device rxe|none]
//
// Node IPC protocol with the server (app/server):
//   server -> host  { t: 'msg', conn, data }      data = the client's raw message (string or object)
//   host -> server  { t: 'out', conn, type, count, text }  text = the FromHost message as JSON, serialised once
//                                                 here and sent as is by the server; conn = null: every client
//   host -> server  { t: 'out', conn, type: 'events', count, bin }  bin = binary event frames (a binary message)
//   host -> server  { t: 'ready', pid, journalEntries, replay }
// Electron: the main process posts { t: 'port' } with one MessagePortMain per renderer connection.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FromHost } from '../protocol/index.ts';
import { EventBinary, messageText, portMessage } from './batcher.ts';
import { HostCore } from './core.ts';
import type { HostExtension } from './core.ts';
import { NativeExecutor } from './executor.ts';
import { lockSessionDir } from './journal.ts';
import { LAB_EXTENSIONS } from '../../labs/extensions.generated.ts';   // the composition root: the labs' agents

export interface HostArgs { sessionDir: string; seed: number; defaultDevice: string | null }

export function parseHostArgs(argv: string[], cwd = process.cwd()): HostArgs {
  const args: HostArgs = { sessionDir: path.join(cwd, '.verbslab'), seed: 1, defaultDevice: 'rxe' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => { const v = argv[++i]; if (v === undefined) throw new Error(`${a} needs a value`); return v; };
    if (a === '--session-dir') args.sessionDir = path.resolve(cwd, val());
    else if (a === '--seed') args.seed = Number(val());
    else if (a === '--default-device') { const v = val(); args.defaultDevice = v === 'none' ? null : v; }
    else throw new Error(`unknown argument ${a}`);
  }
  if (process.env.VERBSLAB_SESSION_DIR && !argv.includes('--session-dir')) args.sessionDir = path.resolve(cwd, process.env.VERBSLAB_SESSION_DIR);
  return args;
}

// Electron's utility process exposes process.parentPort
interface ParentPort {
  on(ev: 'message', fn: (e: { data: unknown; ports: PortLike[] }) => void): void;
  postMessage(msg: unknown): void;
}
interface PortLike {
  on(ev: 'message', fn: (e: { data: unknown }) => void): void;
  on(ev: 'close', fn: () => void): void;
  postMessage(msg: unknown): void;
  start(): void;
}

/** The host extensions next to this file (app/host/<name>.ts, or <name>.mjs next to the Electron bundle): the
 *  scenario recorder, the labs and the attach server (programs under `verbslab exec --console`). Each exports attach(core) (HostCore.register / onCommand / onEvents / onStart).
 *  Without the recorder, scenario.* commands get the executor's "not answered" error. */
const EXTENSIONS = ['recorder', 'labs', 'attach'];
async function extensions(): Promise<HostExtension[]> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const out: HostExtension[] = [];
  for (const ext of EXTENSIONS) {
    for (const name of [`${ext}.ts`, `${ext}.mjs`]) {
      const file = path.join(here, name);
      if (!fs.existsSync(file)) continue;
      const mod = (await import(pathToFileURL(file).href)) as Partial<HostExtension>;
      if (typeof mod.attach === 'function') { out.push(mod as HostExtension); break; }
    }
  }
  // the labs' host extensions, as their manifests declare them (labs/<id>/index.ts `host`)
  for (const x of LAB_EXTENSIONS) out.push(x);
  return out;
}

async function main(): Promise<void> {
  const args = parseHostArgs(process.argv.slice(2));
  const locked = lockSessionDir(args.sessionDir);
  if (locked) { console.error(locked); process.exit(3); }
  const parentPort = (process as unknown as { parentPort?: ParentPort }).parentPort;
  // Listeners go in first (nothing sent early is lost); their work waits until the core exists and the
  // journal is replayed.
  let core: HostCore | null = null;
  let executor: NativeExecutor | null = null;
  let queued: ((c: HostCore) => void)[] | null = [];
  const whenReady = (fn: (c: HostCore) => void) => { if (queued || !core) (queued ??= []).push(fn); else fn(core); };
  let announce: (c: HostCore, report: unknown) => void;

  if (parentPort) {
    // Electron utility process: one MessagePort per renderer
    parentPort.on('message', (e) => {
      const d = e.data as { t?: string };
      if (d?.t !== 'port' || !e.ports?.[0]) return;
      const port = e.ports[0];
      port.on('message', (m) => whenReady((c) => c.handle(m.data, (r) => port.postMessage(r), port)));
      whenReady((c) => {
        const id = c.addClient((msg) => port.postMessage(portMessage(msg)));
        port.on('close', () => c.removeClient(id));
      });
      port.start();
    });
    announce = (c, report) => parentPort.postMessage({ t: 'ready', pid: process.pid, journalEntries: c.journal.count, replay: report });
  } else if (process.send) {
    const send = (m: unknown) => { if (process.connected) process.send!(m); };
    const out = (conn: number | null, msg: FromHost) => msg instanceof EventBinary
      ? send({ t: 'out', conn, type: 'events', count: msg.count, bin: msg.bytes })
      : send({ t: 'out', conn, type: msg.type, count: msg.type === 'events' ? msg.count : 0, text: messageText(msg) });
    whenReady((c) => c.addClient((msg: FromHost) => out(null, msg)));
    process.on('message', (m: { t?: string; conn?: number; data?: unknown }) => {
      if (m?.t === 'msg' && typeof m.conn === 'number') {
        const conn = m.conn;
        whenReady((c) => c.handle(m.data, (r) => out(conn, r), conn));
      } else if (m?.t === 'abort') {
        // deliberate native crash (std::abort in the addon) for the "backend dies" demo and its test
        executor?.addon.abort();
      }
    });
    process.on('disconnect', () => { core?.close(); process.exit(0); });
    announce = (c, report) => send({ t: 'ready', pid: process.pid, journalEntries: c.journal.count, replay: report });
  } else {
    console.error('verbslab host: no parent (start it through the server or Electron)');
    process.exit(2);
  }

  const exts = await extensions();
  executor = new NativeExecutor({ seed: args.seed });
  const c = new HostCore(executor, { sessionDir: args.sessionDir, defaultDevice: args.defaultDevice });
  for (const x of exts) x.attach(c);
  const report = c.start();
  core = c;
  announce(c, report);
  const q = queued ?? [];
  queued = null;
  for (const fn of q) fn(c);

  const stop = () => { c.close(); process.exit(0); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e) => { console.error(`verbslab host: ${(e as Error).stack ?? e}`); process.exit(1); });
