// Event batching: many events per message, at most one message per interval (one animation frame's worth
// of time, 16 ms by default). The clock and timer are injectable so the behaviour is testable without
// depending on wall-clock time.
//
// The autorun flood travels as binary event frames written by the native addon (app/protocol/eventframe.ts):
// a batch of them is an EventBinary, one binary message. Other events (a command's few) are serialised here once
// as JSON text: an EventText, whose message text is built by concatenation, never by re-serialising objects.
// Each message holds one kind of chunk; `events` decodes either on demand for in-process clients and tests.
import type { DeviceEvent, EventBatch, FromHost } from '../protocol/index.ts';
import { concatFrames, frameEvents } from '../protocol/index.ts';

/** Events already serialised: `json` is `{...},{...}` (no brackets), or `frame` one binary event frame; `first`
 *  is the first one's seq, `last` the last one's when the chunk is not gap-free (a sample of the free-running
 *  engine's events; default first + count - 1). */
export type EventChunk = { count: number; first: number; last?: number } & ({ json: string; frame?: undefined } | { frame: Uint8Array; json?: undefined });

/** One 'events' message whose events are JSON text (see the header). Structurally an EventBatch. */
export class EventText implements EventBatch {
  readonly type = 'events' as const;
  private parsed: DeviceEvent[] | null = null;
  constructor(readonly first: number, readonly count: number, public dropped: number, readonly json: string) {}
  get events(): DeviceEvent[] { return (this.parsed ??= this.json ? (JSON.parse(`[${this.json}]`) as DeviceEvent[]) : []); }
  /** the message as the protocol's JSON text */
  text(): string { return `{"type":"events","first":${this.first},"count":${this.count},"dropped":${this.dropped},"events":[${this.json}]}`; }
}

/** One 'events' message of binary event frames (see the header). Structurally an EventBatch. */
export class EventBinary implements EventBatch {
  readonly type = 'events' as const;
  private parsed: DeviceEvent[] | null = null;
  /** `bytes`: the frames back to back, `dropped` already in the first frame's header */
  constructor(readonly first: number, readonly count: number, readonly dropped: number, readonly bytes: Uint8Array) {}
  get events(): DeviceEvent[] { return (this.parsed ??= frameEvents(this.bytes)); }
}

/** A message for a MessagePort (Electron): event batches as their JSON text or their frames' bytes (a structured
 *  clone would drop the lazy events); the renderer's transport parses strings and decodes bytes. */
export function portMessage(msg: FromHost): FromHost | string | Uint8Array {
  return msg instanceof EventText ? msg.text() : msg instanceof EventBinary ? msg.bytes : msg;
}

/** The JSON text of a message to a client (an EventText's own text, else JSON.stringify; an EventBinary's events
 *  decoded: for clients that take text only). */
export function messageText(msg: FromHost): string {
  if (msg instanceof EventText) return msg.text();
  if (msg instanceof EventBinary) return JSON.stringify({ type: 'events', first: msg.first, count: msg.count, dropped: msg.dropped, events: msg.events });
  return JSON.stringify(msg);
}

export interface BatcherOptions {
  intervalMs?: number;          // minimum spacing between two messages
  maxPerBatch?: number;         // events per message (a native chunk is never split); the rest waits for the next slot
  maxQueued?: number;           // beyond this the oldest events are dropped (counted in `dropped`)
  historyMax?: number;          // events kept for recent() (at least; whole chunks)
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (t: unknown) => void;
}

export class EventBatcher {
  private queue: EventChunk[] = [];
  private head = 0;
  private nQueued = 0;
  private dropped = 0;
  private last = -Infinity;
  private timer: unknown = null;
  private readonly interval: number;
  readonly maxPerBatch: number;
  private readonly maxQueued: number;
  private readonly historyMax: number;
  private readonly now: () => number;
  private readonly setTimer: (fn: () => void, ms: number) => unknown;
  private readonly clearTimer: (t: unknown) => void;
  /** messages sent so far */
  sent = 0;
  /** seq of the last event sent (-1: none yet) */
  lastSentSeq = -1;

  constructor(private readonly send: (batch: EventText | EventBinary) => void, opts: BatcherOptions = {}) {
    this.interval = opts.intervalMs ?? 16;
    this.maxPerBatch = opts.maxPerBatch ?? 10_000;
    this.maxQueued = opts.maxQueued ?? 200_000;
    this.historyMax = opts.historyMax ?? 50_000;
    this.now = opts.now ?? (() => performance.now());
    this.setTimer = opts.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
    this.clearTimer = opts.clearTimer ?? ((t) => clearTimeout(t as ReturnType<typeof setTimeout>));
  }

  get queued(): number { return this.nQueued; }

  /** Add events; a message goes out now if the last one is at least one interval old, else at the next slot. */
  push(events: DeviceEvent[], extraDropped = 0): void {
    this.pushChunks(events.map((e) => ({ json: JSON.stringify(e), count: 1, first: e.seq })), extraDropped);
  }

  /** Add events already in JSON text (native chunks). */
  pushChunks(chunks: EventChunk[], extraDropped = 0): void {
    this.dropped += extraDropped;
    if (!chunks.length && !extraDropped) return;
    for (const c of chunks) if (c.count > 0) { this.queue.push(c); this.nQueued += c.count; this.remember(c); }
    while (this.nQueued > this.maxQueued && this.head < this.queue.length) {
      const c = this.queue[this.head++]!;
      this.nQueued -= c.count; this.dropped += c.count;
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== null || (this.nQueued === 0 && this.dropped === 0)) return;
    const wait = Math.max(0, this.last + this.interval - this.now());
    this.timer = this.setTimer(() => { this.timer = null; this.flushNow(); }, wait);
  }

  /** Send up to maxPerBatch events (ignores the interval; used by the timer and on shutdown): one message per run
   *  of chunks of one kind (binary frames or JSON text), in order. */
  flushNow(): void {
    if (this.nQueued === 0 && this.dropped === 0) return;
    let n = 0;
    do {
      const texts: string[] = []; const frames: Uint8Array[] = [];
      let m = 0; let first = 0; let binary = false;
      while (this.head < this.queue.length) {
        const c = this.queue[this.head]!;
        const isBin = c.frame !== undefined;
        if (m > 0 && (n + m + c.count > this.maxPerBatch || isBin !== binary)) break;
        if (m === 0) { first = c.first; binary = isBin; }
        if (c.frame !== undefined) frames.push(c.frame); else texts.push(c.json);
        m += c.count; this.nQueued -= c.count; this.head++;
        this.lastSentSeq = c.last ?? c.first + c.count - 1;
      }
      const batch = binary ? new EventBinary(first, m, this.dropped, concatFrames(frames, this.dropped)) : new EventText(first, m, this.dropped, texts.join(','));
      this.dropped = 0;
      n += m;
      this.sent++;
      this.send(batch);
    } while (this.head < this.queue.length && n < this.maxPerBatch);
    if (this.head > 4096 && this.head * 2 > this.queue.length) { this.queue = this.queue.slice(this.head); this.head = 0; }
    this.last = this.now();
    this.schedule();
  }

  /** Drop everything queued and the history (session reset). */
  clear(): void { this.queue = []; this.head = 0; this.nQueued = 0; this.dropped = 0; this.hist = []; this.nHist = 0; }

  // ---- history: the most recent events pushed (sent or still queued), for a client that connects late
  private hist: EventChunk[] = [];
  private nHist = 0;
  private remember(c: EventChunk): void {
    this.hist.push(c); this.nHist += c.count;
    let drop = 0;
    while (this.nHist - this.hist[drop]!.count >= this.historyMax) { this.nHist -= this.hist[drop]!.count; drop++; }
    if (drop) this.hist.splice(0, drop);
  }
  /** Up to `max` of the most recent events, oldest first (whole chunks, so possibly a few more than max). */
  recent(max: number): EventText {
    const parts: string[] = [];
    let n = 0;
    let i = this.hist.length;
    while (i > 0 && n < max) { i--; n += this.hist[i]!.count; }
    for (let k = i; k < this.hist.length; k++) {
      const c = this.hist[k]!;
      parts.push(c.frame !== undefined ? frameEvents(c.frame).map((e) => JSON.stringify(e)).join(',') : c.json);
    }
    return new EventText(i < this.hist.length ? this.hist[i]!.first : 0, n, 0, parts.join(','));
  }

  close(): void { if (this.timer !== null) this.clearTimer(this.timer); this.timer = null; }
}
