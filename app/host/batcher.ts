// Event batching: many events per message, at most one message per interval (one animation frame's worth
// of time, 16 ms by default). The clock and timer are injectable so the behaviour is testable without
// depending on wall-clock time.
import type { DeviceEvent, EventBatch } from '../protocol/index.ts';

export interface BatcherOptions {
  intervalMs?: number;          // minimum spacing between two messages
  maxPerBatch?: number;         // events per message; the rest waits for the next slot
  maxQueued?: number;           // beyond this the oldest events are dropped (counted in `dropped`)
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (t: unknown) => void;
}

export class EventBatcher {
  private queue: DeviceEvent[] = [];
  private head = 0;
  private dropped = 0;
  private last = -Infinity;
  private timer: unknown = null;
  private readonly interval: number;
  private readonly maxPerBatch: number;
  private readonly maxQueued: number;
  private readonly now: () => number;
  private readonly setTimer: (fn: () => void, ms: number) => unknown;
  private readonly clearTimer: (t: unknown) => void;
  /** messages sent so far */
  sent = 0;

  constructor(private readonly send: (batch: EventBatch) => void, opts: BatcherOptions = {}) {
    this.interval = opts.intervalMs ?? 16;
    this.maxPerBatch = opts.maxPerBatch ?? 10_000;
    this.maxQueued = opts.maxQueued ?? 500_000;
    this.now = opts.now ?? (() => performance.now());
    this.setTimer = opts.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
    this.clearTimer = opts.clearTimer ?? ((t) => clearTimeout(t as ReturnType<typeof setTimeout>));
  }

  get queued(): number { return this.queue.length - this.head; }

  /** Add events; a message goes out now if the last one is at least one interval old, else at the next slot. */
  push(events: DeviceEvent[], extraDropped = 0): void {
    this.dropped += extraDropped;
    if (!events.length && !extraDropped) return;
    for (const e of events) this.queue.push(e);
    const over = this.queued - this.maxQueued;
    if (over > 0) { this.head += over; this.dropped += over; }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== null || (this.queued === 0 && this.dropped === 0)) return;
    const wait = Math.max(0, this.last + this.interval - this.now());
    this.timer = this.setTimer(() => { this.timer = null; this.flushNow(); }, wait);
  }

  /** Send one message with up to maxPerBatch events (ignores the interval; used by the timer and on shutdown). */
  flushNow(): void {
    const n = Math.min(this.queued, this.maxPerBatch);
    if (n === 0 && this.dropped === 0) return;
    const events = this.queue.slice(this.head, this.head + n);
    this.head += n;
    if (this.head > 4096 && this.head * 2 > this.queue.length) { this.queue = this.queue.slice(this.head); this.head = 0; }
    const batch: EventBatch = { type: 'events', first: events.length ? events[0]!.seq : 0, count: events.length, dropped: this.dropped, events };
    this.dropped = 0;
    this.last = this.now();
    this.sent++;
    this.send(batch);
    this.schedule();
  }

  /** Drop everything queued (session reset). */
  clear(): void { this.queue = []; this.head = 0; this.dropped = 0; }

  close(): void { if (this.timer !== null) this.clearTimer(this.timer); this.timer = null; }
}
