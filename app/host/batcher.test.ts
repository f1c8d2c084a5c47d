// Event batching: many events per message, never more than one message per interval (virtual clock).
import { describe, expect, it } from 'vitest';
import { EventBatcher } from './batcher.ts';
import type { DeviceEvent, EventBatch } from '../protocol/index.ts';

function ev(seq: number): DeviceEvent {
  return { seq, t: seq, kind: 'Log', device: 1, obj: 0, objKind: '', a: 0, b: 0, c: 0, d: 0 };
}

/** A manual clock + timer queue so the test controls time. */
function fakeTime() {
  let now = 1000;
  const timers: { at: number; fn: () => void }[] = [];
  return {
    now: () => now,
    setTimer: (fn: () => void, ms: number) => { const t = { at: now + ms, fn }; timers.push(t); return t; },
    clearTimer: (t: unknown) => { const i = timers.indexOf(t as never); if (i >= 0) timers.splice(i, 1); },
    advance(ms: number) {
      const end = now + ms;
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const t = timers[0];
        if (!t || t.at > end) break;
        timers.shift();
        now = t.at;
        t.fn();
      }
      now = end;
    },
  };
}

describe('EventBatcher', () => {
  it('puts many events pushed in one frame into one message', () => {
    const time = fakeTime();
    const sent: EventBatch[] = [];
    const b = new EventBatcher((m) => sent.push(m), { ...time });
    for (let i = 1; i <= 1000; i++) b.push([ev(i)]);
    expect(sent.length).toBe(0);          // nothing synchronously: the message waits for the timer
    time.advance(0);
    expect(sent.length).toBe(1);
    expect(sent[0]!.count).toBe(1000);
    expect(sent[0]!.first).toBe(1);
    expect(sent[0]!.events.map((e) => e.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
  });

  it('sends at most one message per 16 ms', () => {
    const time = fakeTime();
    const sentAt: number[] = [];
    const b = new EventBatcher(() => sentAt.push(time.now()), { ...time, intervalMs: 16 });
    let seq = 1;
    for (let ms = 0; ms < 200; ms++) { b.push([ev(seq++), ev(seq++)]); time.advance(1); }
    time.advance(100);
    expect(sentAt.length).toBeGreaterThan(5);
    for (let i = 1; i < sentAt.length; i++) expect(sentAt[i]! - sentAt[i - 1]!).toBeGreaterThanOrEqual(16);
  });

  it('loses no event across messages, in order', () => {
    const time = fakeTime();
    const got: number[] = [];
    const b = new EventBatcher((m) => { for (const e of m.events) got.push(e.seq); }, { ...time, maxPerBatch: 100 });
    for (let i = 1; i <= 1050; i++) b.push([ev(i)]);
    time.advance(16 * 20);
    expect(got).toEqual(Array.from({ length: 1050 }, (_, i) => i + 1));
    expect(b.sent).toBe(11);             // 10 full batches of 100 and one of 50
  });

  it('drops the oldest events beyond maxQueued and says how many', () => {
    const time = fakeTime();
    const sent: EventBatch[] = [];
    const b = new EventBatcher((m) => sent.push(m), { ...time, maxQueued: 10 });
    b.push(Array.from({ length: 25 }, (_, i) => ev(i + 1)));
    time.advance(0);
    expect(sent[0]!.dropped).toBe(15);
    expect(sent[0]!.events.map((e) => e.seq)).toEqual([16, 17, 18, 19, 20, 21, 22, 23, 24, 25]);
  });

  it('keeps the most recent events (sent or queued) for a late client; clear() forgets them', () => {
    const time = fakeTime();
    const b = new EventBatcher(() => {}, { ...time, historyMax: 100 });
    b.push(Array.from({ length: 250 }, (_, i) => ev(i + 1)));
    time.advance(20);
    b.pushChunks([{ json: JSON.stringify(ev(251)) + ',' + JSON.stringify(ev(252)), count: 2, first: 251 }]);   // still queued
    const r = b.recent(10);
    expect(r.events.map((e) => e.seq)).toEqual([243, 244, 245, 246, 247, 248, 249, 250, 251, 252]);
    expect(r.first).toBe(243);
    const all = b.recent(1_000).events.map((e) => e.seq);
    expect(all.length).toBeGreaterThanOrEqual(100);
    expect(all.length).toBeLessThan(110);
    expect(all[all.length - 1]).toBe(252);
    b.clear();
    expect(b.recent(10).count).toBe(0);
  });
});

describe('flow control (EventsAck)', () => {
  it('the host takes acks without replying, and autorun waits while the console is more than a window behind', async () => {
    const fs = await import('node:fs'); const os = await import('node:os'); const path = await import('node:path');
    const { HostCore } = await import('./core.ts');
    const executor = { autorun: { on: false, stepsPerSecond: 1 }, exec: () => ({ ok: true as const, result: {} }), drainEvents: () => [], pcap: () => new Uint8Array(), close: () => {} };
    const core = new HostCore(executor, { sessionDir: fs.mkdtempSync(path.join(os.tmpdir(), 'vl-ack-')), ackWindow: 100 });
    const replies: unknown[] = [];
    core.batcher.push(Array.from({ length: 50 }, (_, i) => ev(i + 1)));
    core.batcher.flushNow();
    expect(core.batcher.lastSentSeq).toBe(50);
    expect(core.unacked()).toBe(0);                 // nobody acknowledges: nothing is held back
    core.handle(JSON.stringify({ type: 'ack', seq: 10 }), (r) => replies.push(r));
    expect(replies).toEqual([]);
    expect(core.unacked()).toBe(40);
    expect(core.autorunMayRun()).toBe(true);
    core.batcher.push(Array.from({ length: 100 }, (_, i) => ev(i + 51)));
    core.batcher.flushNow();
    expect(core.unacked()).toBe(140);
    expect(core.autorunMayRun()).toBe(false);       // 140 > 100: wait for the console
    core.handle({ type: 'ack', seq: 150 }, (r) => replies.push(r));
    expect(core.unacked()).toBe(0);
    expect(core.autorunMayRun()).toBe(true);
    // the console asks for a smaller window (it is dropping frames): autorun waits sooner
    core.batcher.push(Array.from({ length: 30 }, (_, i) => ev(i + 151)));
    core.batcher.flushNow();
    expect(core.autorunMayRun()).toBe(true);        // 30 <= 100
    core.handle({ type: 'ack', seq: 160, window: 10 }, (r) => replies.push(r));
    expect(core.unacked()).toBe(20);
    expect(core.autorunMayRun()).toBe(false);       // 20 > 10
    core.handle({ type: 'ack', seq: 180, window: 10 }, (r) => replies.push(r));
    expect(core.autorunMayRun()).toBe(true);
    core.handle({ type: 'ack', seq: -1 }, (r) => replies.push(r));
    core.handle({ type: 'ack', seq: 1, window: 0 }, (r) => replies.push(r));
    expect(replies).toMatchObject([{ ok: false, error: { field: 'seq' } }, { ok: false, error: { field: 'window' } }]);
    core.close();
  });
});
