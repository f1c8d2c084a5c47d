// The renderer's only way to the backend host: typed commands and event batches over either a WebSocket
// (browser mode) or a MessagePort handed over by the Electron preload. Framework-free: the zustand store
// (renderer/src/store) consumes it.
//
// Life cycle seen through onHost():
//   'starting' -> 'up' (pid, journalEntries, restarts)   the host replayed its journal and is serving
//   'down' (reason)                                       the host died; pending calls resolve with HOST_DOWN
// After a restart the host replays the journal; its events arrive again (same seq numbers: the device
// is deterministic), so a client may reset its models on 'starting'.
import type { Command, Control, DeviceEvent, EventBatch, FrameBatch, FromHost, HostStatus, Reply, RingSnapshot } from '../../../app/protocol/index.ts';
import { decodeFrames, frameTotals, isFrameMessage } from '../../../app/protocol/index.ts';

export type { Command, Control, DeviceEvent, EventBatch, FrameBatch, FromHost, HostStatus, Reply };
export type ControlAction = Control['action'];

export interface Transport {
  /** Send one command; resolves with the host's reply (ok or error). Never rejects: transport failures
   *  come back as a reply with error.code "HOST_DOWN". */
  call(command: Command): Promise<Reply>;
  /** Subscribe to event batches (JSON, or binary event frames) and a free run's rings snapshots, in arrival order;
   *  returns an unsubscribe function. */
  onEvents(cb: (batch: EventBatch | FrameBatch | RingSnapshot) => void): () => void;
  /** Subscribe to backend-host status changes (the current status is replayed to new subscribers). */
  onHost(cb: (status: HostStatus) => void): () => void;
  /** Restart or kill the backend host (kill exists for tests and the "crash the backend" demo). */
  control(action: ControlAction): void;
  close(): void;
  readonly kind: 'websocket' | 'messageport';
}

type Listener<T> = (v: T) => void;

/** Shared bookkeeping: request ids, pending replies, listeners, host status. */
abstract class BaseTransport implements Transport {
  abstract readonly kind: 'websocket' | 'messageport';
  private nextId = 1;
  private pending = new Map<number, (r: Reply) => void>();
  private eventCbs = new Set<Listener<EventBatch | FrameBatch | RingSnapshot>>();
  private hostCbs = new Set<Listener<HostStatus>>();
  protected status: HostStatus | null = null;
  protected closed = false;

  protected abstract sendText(msg: object): boolean;
  abstract control(action: ControlAction): void;
  abstract close(): void;

  call(command: Command): Promise<Reply> {
    const id = this.nextId++;
    return new Promise<Reply>((resolve) => {
      if (this.closed) { resolve(down(id, 'transport closed')); return; }
      if (this.status?.state === 'down') { resolve(down(id, `backend host is down${this.status.reason ? `: ${this.status.reason}` : ''}`)); return; }
      this.pending.set(id, resolve);
      if (!this.sendText({ type: 'request', id, command })) {
        this.pending.delete(id);
        resolve(down(id, 'not connected to the backend host'));
      }
    });
  }

  /** flow control: the console has drawn the events up to seq and asks for `window` more (no reply) */
  ack(seq: number, window?: number): void { this.sendText(window === undefined ? { type: 'ack', seq } : { type: 'ack', seq, window }); }

  /** event batches, and the rings snapshots of a free run, in the order they arrived */
  onEvents(cb: Listener<EventBatch | FrameBatch | RingSnapshot>): () => void { this.eventCbs.add(cb); return () => this.eventCbs.delete(cb); }
  onHost(cb: Listener<HostStatus>): () => void {
    this.hostCbs.add(cb);
    if (this.status) cb(this.status);
    return () => this.hostCbs.delete(cb);
  }

  /** Dispatch one message from the host side. */
  protected receive(data: unknown): void {
    if (isFrameMessage(data)) {
      let batch: FrameBatch;
      try {
        const frames = decodeFrames(data);
        batch = { type: 'events', frames, ...frameTotals(frames) };
      } catch (e) { console.error(`verbslab: ${(e as Error).message}`); return; }
      for (const cb of this.eventCbs) cb(batch);
      return;
    }
    let msg: FromHost;
    try { msg = (typeof data === 'string' ? JSON.parse(data) : data) as FromHost; } catch { return; }
    if (!msg || typeof msg !== 'object') return;
    if (msg.type === 'reply') {
      const cb = msg.id !== null ? this.pending.get(msg.id) : undefined;
      if (cb) { this.pending.delete(msg.id as number); cb(msg); }
    } else if (msg.type === 'events' || msg.type === 'rings') {
      for (const cb of this.eventCbs) cb(msg);
    } else if (msg.type === 'host') {
      this.setStatus(msg);
    }
  }

  protected setStatus(s: HostStatus): void {
    this.status = s;
    if (s.state === 'down') this.failPending(`backend host is down${s.reason ? `: ${s.reason}` : ''}`);
    for (const cb of this.hostCbs) cb(s);
  }

  protected failPending(why: string): void {
    const all = [...this.pending.entries()];
    this.pending.clear();
    for (const [id, cb] of all) cb(down(id, why));
  }
}

function down(id: number, message: string): Reply {
  return { type: 'reply', id, ok: false, error: { code: 'HOST_DOWN', message } };
}

// ------------------------------------------------------------------ WebSocket (browser mode)
export interface WebSocketTransportOptions {
  url: string;                               // ws://127.0.0.1:PORT/rpc?token=...
  reconnectMs?: number;                      // retry delay after the server went away (default 1000)
  WebSocketImpl?: typeof WebSocket;
}

export class WebSocketTransport extends BaseTransport {
  readonly kind = 'websocket' as const;
  private ws: WebSocket | null = null;
  private queue: string[] = [];
  private retry: ReturnType<typeof setTimeout> | null = null;
  private readonly WS: typeof WebSocket;

  constructor(private readonly opts: WebSocketTransportOptions) {
    super();
    this.WS = opts.WebSocketImpl ?? WebSocket;
    this.open();
  }

  /** Resolves once the socket is open (rejects if the first attempt fails). */
  ready(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.ws?.readyState === 1) { resolve(); return; }
      const ws = this.ws!;
      const ok = () => { cleanup(); resolve(); };
      const bad = () => { cleanup(); reject(new Error(`cannot open ${redact(this.opts.url)} (wrong token, or the server is not running)`)); };
      const cleanup = () => { ws.removeEventListener('open', ok); ws.removeEventListener('close', bad); };
      ws.addEventListener('open', ok);
      ws.addEventListener('close', bad);
    });
  }

  private open(): void {
    const ws = new this.WS(this.opts.url);
    ws.binaryType = 'arraybuffer';   // binary event frames (app/protocol/eventframe.ts)
    this.ws = ws;
    ws.addEventListener('open', () => {
      for (const m of this.queue) ws.send(m);
      this.queue = [];
    });
    ws.addEventListener('message', (e) => this.receive((e as MessageEvent).data));
    ws.addEventListener('close', (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.closed) return;
      // the server says why when it closes the socket itself (1009: a message over its size limit)
      const why = (e as CloseEvent).reason;
      this.setStatus({ type: 'host', state: 'down', reason: why ? `the Verbs Lab server closed the connection: ${why}` : 'lost the connection to the Verbs Lab server' });
      this.retry = setTimeout(() => { this.retry = null; if (!this.closed) this.open(); }, this.opts.reconnectMs ?? 1000);
    });
  }

  protected sendText(msg: object): boolean {
    const text = JSON.stringify(msg);
    if (this.ws?.readyState === 1) { this.ws.send(text); return true; }
    if (this.ws && this.ws.readyState === 0) { this.queue.push(text); return true; }
    return false;
  }

  control(action: ControlAction): void { this.sendText({ type: 'control', action }); }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.ws?.close();
    this.failPending('transport closed');
  }
}

function redact(url: string): string { return url.replace(/token=[^&]*/, 'token=…'); }

// ------------------------------------------------------------------ MessagePort (Electron)
/** What the Electron preload exposes on window (see app/electron/preload.ts). */
export interface VerbsLabBridge { connect(): void }

export class MessagePortTransport extends BaseTransport {
  readonly kind = 'messageport' as const;
  private hostPort: MessagePort | null = null;

  /** ports[0]: the backend host (requests/replies/events); ports[1]: the main process (host status, control). */
  constructor(hostPort: MessagePort, private readonly controlPort: MessagePort) {
    super();
    this.attach(hostPort);
    controlPort.onmessage = (e) => {
      const d = e.data as { type?: string };
      if (d?.type === 'host-port' && e.ports[0]) this.attach(e.ports[0]);
      else if (d?.type === 'host') this.setStatus(d as HostStatus);
    };
  }

  private attach(port: MessagePort): void {
    this.hostPort?.close();
    this.hostPort = port;
    port.onmessage = (e) => this.receive(e.data);
  }

  protected sendText(msg: object): boolean {
    if (!this.hostPort) return false;
    this.hostPort.postMessage(msg);
    return true;
  }

  control(action: ControlAction): void { this.controlPort.postMessage({ type: 'control', action }); }

  close(): void {
    this.closed = true;
    this.hostPort?.close();
    this.controlPort.close();
    this.failPending('transport closed');
  }
}

/** Ask the preload for the two ports; they arrive as a window message from the preload itself. */
export function connectMessagePort(bridge: VerbsLabBridge, timeoutMs = 10_000): Promise<MessagePortTransport> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => { window.removeEventListener('message', onMsg); reject(new Error('the Electron main process did not hand over a port')); }, timeoutMs);
    function onMsg(e: MessageEvent) {
      if (e.source !== window || (e.data as { type?: string })?.type !== 'verbslab:ports' || e.ports.length !== 2) return;
      clearTimeout(t);
      window.removeEventListener('message', onMsg);
      resolve(new MessagePortTransport(e.ports[0]!, e.ports[1]!));
    }
    window.addEventListener('message', onMsg);
    bridge.connect();
  });
}

// ------------------------------------------------------------------ choose
/** Electron (preload bridge present) -> MessagePort; otherwise a WebSocket to the page's own server with the
 *  token from the page URL (?token=...). */
export async function connectTransport(): Promise<Transport> {
  const bridge = (globalThis as { verbslab?: VerbsLabBridge }).verbslab;
  if (bridge && typeof bridge.connect === 'function') return connectMessagePort(bridge);
  const token = new URLSearchParams(location.search).get('token');
  if (!token) throw new Error('no access token in the page URL: open the exact URL printed by `npm start` (it ends with ?token=...)');
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const t = new WebSocketTransport({ url: `${proto}//${location.host}/rpc?token=${encodeURIComponent(token)}` });
  await t.ready();
  return t;
}
