// The three ways events leave the device are the same events with the same values: the object path (addon
// EventObj + eventOut, used for commands and the scenario runner), the JSON text path (native/addon/
// event_json.cpp) and the binary frame path (native/addon/event_frame.cpp read by app/protocol/eventframe.ts,
// used for the autorun flood). Every scenario of the library runs once per path with the same seed, and the event
// streams must be deep-equal (packets decoded, work completions named, 64-bit values lossless, texts escaped).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseScenarioText } from '../scenario/load.ts';
import { ScenarioRun } from '../scenario/run.ts';
import type { Executor } from './api.ts';
import type { DeviceEvent } from '../protocol/index.ts';
import { Change, KeyState, addDropped, concatFrames, decodeFrames, frameEvents, frameTotals } from '../protocol/index.ts';
import { EventBatcher, EventBinary, EventText } from './batcher.ts';
import { REPO_ROOT, libraryFiles } from '../scenario/library.ts';
import { needAddon } from '../scenario/testlib.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = REPO_ROOT;
const files = libraryFiles().map((f) => path.relative(REPO_ROOT, f));

const mod = await needAddon('event JSON equivalence tests');

/** Runs a scenario and returns every event it drained, through the object path, the text path or the frame path. */
function eventsOf(file: string, via: 'objects' | 'text' | 'frames'): { events: DeviceEvent[]; digest: string } {
  const loaded = parseScenarioText(fs.readFileSync(path.join(dir, file), 'utf8'), file);
  if (!loaded.ok) throw new Error(loaded.error.message);
  const ex = new mod.NativeExecutor({ seed: 1 });
  const seen: DeviceEvent[] = [];
  const drive: Executor = via !== 'objects'
    ? {
        exec: (c) => ex.execBulk(c),
        drainEvents: () => {
          // small chunks: chunk boundaries are exercised too
          const chunks = ex.drainEventChunks(via === 'text' ? 'json' : 'frames', 7);
          const evs = chunks.flatMap((c) => (c.frame !== undefined ? frameEvents(c.frame) : (JSON.parse(`[${c.json}]`) as DeviceEvent[])));
          for (const item of evs) seen.push(item); return evs;
        },
        pcap: () => ex.pcap(), close: () => ex.close(),
      }
    : { exec: (c) => ex.exec(c), drainEvents: (m) => { const evs = ex.drainEvents(m); for (const item of evs) seen.push(item); return evs; }, pcap: () => ex.pcap(), close: () => ex.close() };
  try {
    const rep = new ScenarioRun(loaded.scenario, drive, { seed: 1, keepGoing: true }).run();
    return { events: seen, digest: rep.digest };
  } finally { ex.close(); }
}

/** a device and a PD created through the bulk path: their events stay in the device for drainEventChunks */
function makeDeviceAndPd(ex: InstanceType<typeof mod.NativeExecutor>) {
  expect(ex.execBulk({ cmd: 'device.create', args: { profile: 'rxe', name: 'x0' } }).ok).toBe(true);
  expect(ex.execBulk({ cmd: 'pd.alloc', args: { device: 1 } } as never).ok).toBe(true);
}
/** a batcher that sends every push at once (no interval, no timer) */
const sendingAtOnce = (sent: (EventText | EventBinary)[]) =>
  new EventBatcher((m) => sent.push(m), { setTimer: (fn) => { fn(); return 0; }, now: () => 0, intervalMs: 0 });

describe('event JSON text path and binary frame path', () => {
  for (const f of files) {
    it(`${f}: same events as the object path`, () => {
      const a = eventsOf(f, 'objects');
      const b = eventsOf(f, 'text');
      const c = eventsOf(f, 'frames');
      expect(a.events.length).toBeGreaterThan(0);
      expect(b.events).toEqual(a.events);
      expect(c.events).toEqual(a.events);
      expect(b.digest).toBe(a.digest);
      expect(c.digest).toBe(a.digest);
    });
  }

  it('covers packets, work completions, key checks, async events and the typed change / key state', () => {
    const kinds = new Set<string>();
    const changes = new Set<string>(), states = new Set<string>();
    for (const f of files) {
      for (const e of eventsOf(f, 'frames').events) {
        kinds.add(e.kind);
        if (e.change !== undefined) changes.add(Change.name(e.change));
        if (e.keyState !== undefined) states.add(`${e.objKind} ${e.kind} ${KeyState.name(e.keyState)}`);
      }
    }
    for (const k of ['PacketSent', 'PacketReceived', 'Cqe', 'KeyCheck', 'AsyncEvent', 'ObjectModified', 'QpState', 'MemWrite']) expect(kinds).toContain(k);
    for (const c of ['MAP_MR_SG', 'REG_MR', 'LOCAL_INV', 'REMOTE_INV', 'BIND']) expect(changes).toContain(c);
    for (const s of ['mr ObjectCreated valid', 'mr ObjectCreated free', 'mw ObjectCreated free', 'mw ObjectModified valid', 'mr ObjectModified free']) expect(states).toContain(s);
  });

  it('a batch of native chunks is one message whose text parses to the same events', () => {
    const ex = new mod.NativeExecutor({ seed: 3 });
    try {
      makeDeviceAndPd(ex);
      const chunks = ex.drainEventChunks('json', 1);
      expect(chunks.length).toBeGreaterThan(1);
      expect(chunks.flatMap((c) => c.objects).map((e) => e.kind)).toContain('ObjectCreated');
      const sent: (EventText | EventBinary)[] = [];
      const b = sendingAtOnce(sent);
      b.pushChunks(chunks);
      expect(sent).toHaveLength(1);
      const msg = JSON.parse((sent[0] as EventText).text()) as { type: string; first: number; count: number; events: DeviceEvent[] };
      expect(msg.type).toBe('events');
      expect(msg.count).toBe(chunks.reduce((n, c) => n + c.count, 0));
      expect(msg.events.map((e) => e.seq)).toEqual(msg.events.map((_, i) => msg.first + i));
      expect(sent[0]!.events).toEqual(msg.events);
    } finally { ex.close(); }
  });

  it('frames from several drains make one binary message that decodes to the same events, with the dropped count', () => {
    const ex = new mod.NativeExecutor({ seed: 3 });
    try {
      makeDeviceAndPd(ex);
      const chunks = ex.drainEventChunks('frames', 1);
      expect(chunks.length).toBeGreaterThan(1);
      expect(chunks.every((c) => c.frame instanceof Uint8Array && c.frame.byteLength % 8 === 0)).toBe(true);
      const sent: (EventText | EventBinary)[] = [];
      const b = sendingAtOnce(sent);
      b.pushChunks(chunks, 5);
      expect(sent).toHaveLength(1);
      const msg = sent[0] as EventBinary;
      expect(msg).toBeInstanceOf(EventBinary);
      const frames = decodeFrames(msg.bytes);
      expect(frames).toHaveLength(chunks.length);
      expect(frames[0]!.dropped).toBe(5);
      expect(msg.count).toBe(chunks.reduce((n, c) => n + c.count, 0));
      expect(msg.events.map((e) => e.seq)).toEqual(msg.events.map((_, i) => msg.first + i));
      expect(msg.events.map((e) => e.kind)).toContain('ObjectCreated');
      // a late client gets the same events from the history
      expect(b.recent(100).events).toEqual(msg.events);
    } finally { ex.close(); }
  });

  it('the server adds a slow client\'s dropped count to the next message without touching the shared bytes', () => {
    const ex = new mod.NativeExecutor({ seed: 3 });
    try {
      ex.execBulk({ cmd: 'device.create', args: { profile: 'rxe', name: 'x0' } });
      const msg = concatFrames(ex.drainEventChunks('frames', 1).map((c) => c.frame!), 2);
      const more = addDropped(msg, 40);
      expect(decodeFrames(more)[0]!.dropped).toBe(42);
      expect(decodeFrames(msg)[0]!.dropped).toBe(2);
      expect(frameTotals(decodeFrames(more)).dropped).toBe(42);
      expect(frameEvents(more)).toEqual(frameEvents(msg));
    } finally { ex.close(); }
  });

  it('refuses bytes that are not a frame, naming what is wrong', () => {
    expect(() => decodeFrames(new Uint8Array(40))).toThrow(/bad magic/);
    const ex = new mod.NativeExecutor({ seed: 3 });
    try {
      ex.execBulk({ cmd: 'device.create', args: { profile: 'rxe', name: 'x0' } });
      const f = ex.drainEventChunks('frames')[0]!.frame!;
      expect(() => decodeFrames(f.subarray(0, f.byteLength - 8))).toThrow(/does not fit/);
    } finally { ex.close(); }
  });
});
