// The two ways events leave the device are the same events with the same values: the object path (addon
// EventObj + eventOut, used for commands and the scenario runner) and the JSON text path (native/addon/
// event_json.cpp, used for the autorun flood). Every scenario of the library runs twice with the same seed, once
// per path, and the event streams must be deep-equal (packets decoded, work completions named, 64-bit values
// lossless, texts escaped).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseScenarioText } from '../scenario/load.ts';
import { ScenarioRun } from '../scenario/run.ts';
import type { Executor } from './api.ts';
import type { DeviceEvent } from '../protocol/index.ts';
import { EventBatcher, EventText } from './batcher.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = path.join(root, 'e2e/scenarios');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json') && !f.endsWith('.schema.json')).sort();

type Mod = typeof import('./executor.ts');
let mod: Mod | undefined;
try { mod = await import('./executor.ts'); new mod.NativeExecutor({ seed: 1 }).close(); } catch { mod = undefined; }
if (!mod) console.warn('SKIPPED event JSON equivalence: native addon not built (node scripts/build.mjs addon)');

/** Runs a scenario and returns every event it drained, through the object path or the text path. */
function eventsOf(file: string, text: boolean): { events: DeviceEvent[]; digest: string } {
  const loaded = parseScenarioText(fs.readFileSync(path.join(dir, file), 'utf8'), file);
  if (!loaded.ok) throw new Error(loaded.error.message);
  const ex = new mod!.NativeExecutor({ seed: 1 });
  const seen: DeviceEvent[] = [];
  const drive: Executor = text
    ? {
        exec: (c) => ex.execBulk(c),
        drainEvents: () => {
          const chunks = ex.drainEventsText(7);   // small chunks: chunk boundaries are exercised too
          const evs = chunks.length ? (JSON.parse(`[${chunks.map((c) => c.json).join(',')}]`) as DeviceEvent[]) : [];
          seen.push(...evs); return evs;
        },
        pcap: () => ex.pcap(), close: () => ex.close(),
      }
    : { exec: (c) => ex.exec(c), drainEvents: (m) => { const evs = ex.drainEvents(m); seen.push(...evs); return evs; }, pcap: () => ex.pcap(), close: () => ex.close() };
  try {
    const rep = new ScenarioRun(loaded.scenario, drive, { seed: 1, keepGoing: true }).run();
    return { events: seen, digest: rep.digest };
  } finally { ex.close(); }
}

describe.skipIf(!mod)('event JSON text path', () => {
  for (const f of files) {
    it(`${f}: same events as the object path`, () => {
      const a = eventsOf(f, false);
      const b = eventsOf(f, true);
      expect(a.events.length).toBeGreaterThan(0);
      expect(b.events).toEqual(a.events);
      expect(b.digest).toBe(a.digest);
    });
  }

  it('covers packets, work completions, key checks and async events', () => {
    const kinds = new Set<string>();
    for (const f of files) for (const e of eventsOf(f, true).events) kinds.add(e.kind);
    for (const k of ['PacketSent', 'PacketReceived', 'Cqe', 'KeyCheck', 'AsyncEvent', 'ObjectModified', 'QpState', 'MemWrite']) expect(kinds).toContain(k);
  });

  it('a batch of native chunks is one message whose text parses to the same events', () => {
    const ex = new mod!.NativeExecutor({ seed: 3 });
    try {
      expect(ex.execBulk({ cmd: 'device.create', args: { profile: 'rxe', name: 'x0' } }).ok).toBe(true);
      expect(ex.execBulk({ cmd: 'pd.alloc', args: { device: 1 } } as never).ok).toBe(true);
      const chunks = ex.drainEventsText(1);
      expect(chunks.length).toBeGreaterThan(1);
      expect(chunks.flatMap((c) => c.objects).map((e) => e.kind)).toContain('ObjectCreated');
      const sent: EventText[] = [];
      const b = new EventBatcher((m) => sent.push(m), { setTimer: (fn) => { fn(); return 0; }, now: () => 0, intervalMs: 0 });
      b.pushChunks(chunks);
      expect(sent).toHaveLength(1);
      const msg = JSON.parse(sent[0]!.text()) as { type: string; first: number; count: number; events: DeviceEvent[] };
      expect(msg.type).toBe('events');
      expect(msg.count).toBe(chunks.reduce((n, c) => n + c.count, 0));
      expect(msg.events.map((e) => e.seq)).toEqual(msg.events.map((_, i) => msg.first + i));
      expect(sent[0]!.events).toEqual(msg.events);
    } finally { ex.close(); }
  });
});
