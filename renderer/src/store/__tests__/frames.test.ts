// The console draws the same thing from binary event frames as from event objects: real sessions (library
// scenarios run on the native device) are ingested both ways and the event log, key table, rings, wire log
// and key checks must come out equal.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeFrames, type DeviceEvent, type EventFrame } from '../../../../app/protocol/index.ts';
import { parseScenarioText } from '../../../../app/scenario/load.ts';
import { ScenarioRun } from '../../../../app/scenario/run.ts';
import { libraryFile } from '../../../../app/scenario/library.ts';
import type { Executor } from '../../../../app/host/api.ts';
import { createConsoleStore } from '../store.ts';
import { emptyReply } from './replies.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
import { needAddon } from '../../../../app/scenario/testlib.ts';
const mod = await needAddon('console frame ingest tests');

/** the scenario's events as the host sends them on autorun: frames (and JSON chunks for events already drained) */
function batchesOf(file: string): (EventFrame[] | DeviceEvent[])[] {
  const loaded = parseScenarioText(fs.readFileSync(libraryFile(file), 'utf8'), file);
  if (!loaded.ok) throw new Error(loaded.error.message);
  const ex = new mod.NativeExecutor({ seed: 1 });
  const out: (EventFrame[] | DeviceEvent[])[] = [];
  const drive: Executor = {
    exec: (c) => ex.execBulk(c),
    drainEvents: () => {
      for (const c of ex.drainEventChunks('frames', 5)) out.push(c.frame !== undefined ? decodeFrames(c.frame) : (JSON.parse(`[${c.json}]`) as DeviceEvent[]));
      return [];
    },
    pcap: () => ex.pcap(), close: () => ex.close(),
  };
  try { new ScenarioRun(loaded.scenario, drive, { seed: 1, keepGoing: true }).run(); } finally { ex.close(); }
  return out;
}

function drawn(batches: (EventFrame[] | DeviceEvent[])[], frames: boolean) {
  const q: (() => void)[] = [];
  const store = createConsoleStore({ schedule: (cb) => { q.push(cb); }, ringCapacity: 1 << 14 });
  for (const b of batches) {
    if (!b.length) continue;
    if (!frames || !('count' in b[0]!)) store.getState().ingest('count' in b[0]! ? (b as EventFrame[]).flatMap((f) => f.events()) : (b as DeviceEvent[]));
    else store.getState().ingestFrames(b as EventFrame[]);
  }
  while (q.length) q.shift()!();
  const m = store.getState().model;
  return {
    log: Array.from({ length: m.ring.total }, (_, i) => m.ring.row(i)),
    keys: [...m.keys.byHandle.values()],
    rings: [...m.queues.rings.values()].map((r) => ({ ...r, slots: [...r.slots.values()] })),
    qps: [...m.queues.qps.values()], cqs: [...m.queues.cqs.values()],
    wire: m.wire.rows.map((p) => ({ seq: p.seq, event: p.event, opName: p.opName, psn: p.psn, dstQpn: p.dstQpn, ackReq: p.ackReq, syndrome: p.syndrome, synText: p.synText, nak: p.nak, length: p.length, hex: p.hex, pkt: p.pkt })),
    checks: m.checks.rows, marks: [...m.marks.writes.entries()],
  };
}

describe('console ingest of binary event frames', () => {
  for (const f of ['rc_rdma_write.json', 'rkey_wrong_key_byte.json', 'rc_write_with_packet_loss.json', 'cq_notify_missed_events.json', 'mw_type2_bind_local_inv.json', 'srq_limit_event.json']) {
    it(`${f}: draws the same as from event objects`, () => {
      const batches = batchesOf(f);
      expect(batches.some((b) => b.length && 'count' in b[0]!)).toBe(true);
      const a = drawn(batches, false);
      const b = drawn(batches, true);
      expect(a.log.length).toBeGreaterThan(10);
      expect(b).toEqual(a);
    });
  }
  it('draws packets with their decoded headers (wrong rkey: the NAK is there)', () => {
    const d = drawn(batchesOf('rkey_wrong_key_byte.json'), true);
    expect(d.wire.some((p) => p.nak && /Remote Access/i.test(p.synText))).toBe(true);
    expect(d.checks.some((c) => !c.ok && /key byte/.test(c.text))).toBe(true);
  });
});

describe('a free run\'s sampled frames', () => {
  it('a late console skips what its history held by seq, also inside a frame with gaps', async () => {
    // a real sample: the state events of a session plus the newest 5 of a flood (seq has gaps)
    const ex = new mod.NativeExecutor({ seed: 1 });
    let frame: EventFrame;
    try {
      const x = (c: unknown) => { const r = ex.execBulk(c as never); if (!r.ok) throw new Error(r.error.message); return r.result as Record<string, number>; };
      const d = x({ cmd: 'device.create', args: { profile: 'rxe' } }).device!;
      x({ cmd: 'pd.alloc', args: { device: d } });
      ex.drainSample(1e6);
      for (let i = 0; i < 20; i++) {   // ObjectCreated (kept) and MemWrite (sampled out but for the newest)
        const b = x({ cmd: 'buffer.alloc', args: { length: 64 } });
        x({ cmd: 'memory.write', args: { addr: b.addr, data: 'ab' } });
      }
      x({ cmd: 'pd.alloc', args: { device: d } });
      const c = ex.drainSample(5);
      expect(c.dropped).toBeGreaterThan(10);
      frame = decodeFrames(c.frame!)[0]!;
      // window 0 (the console has not drawn the last sample): the state events only, and no production time
      const b = x({ cmd: 'buffer.alloc', args: { length: 64 } });
      x({ cmd: 'memory.write', args: { addr: b.addr, data: 'cd' } });
      const z = ex.drainSample(0);
      expect(z).toMatchObject({ count: 1, dropped: 1 });
      const zf = decodeFrames(z.frame!)[0]!;
      expect(zf.events().map((e) => e.kind)).toEqual(['ObjectCreated']);
      expect(zf.producedAt).toBe(0);
    } finally { ex.close(); }
    const seqs = Array.from(frame.seq);
    expect(seqs.length).toBeGreaterThan(5);
    const cut = seqs[Math.floor(seqs.length / 2)]!;   // the history ends in the middle of the frame
    let live: ((b: unknown) => void) | null = null;
    const t = {
      call: async (c: { cmd: string }) => {
        if (c.cmd === 'events.recent') {
          live!({ type: 'events', frames: [frame], first: frame.firstSeq, count: frame.count, dropped: 0 });
          return { type: 'reply', id: 1, ok: true, result: { first: seqs[0], count: 0, events: seqs.filter((s) => s <= cut).map((s) => ({ seq: s, t: 0, kind: 'Log', device: 0, obj: 0, objKind: 'session', a: 0, b: 0, c: 0, d: 0, text: `history ${s}` })) } };
        }
        return { type: 'reply', id: 2, ok: true, result: emptyReply(c.cmd) };
      },
      onEvents: (cb: (b: unknown) => void) => { live = cb; return () => {}; }, onHost: () => () => {}, control: () => {},
    };
    const q: (() => void)[] = [];
    const store = createConsoleStore({ transport: t as never, schedule: (cb) => { q.push(cb); } });
    await store.getState().syncObjects();
    while (q.length) q.shift()!();
    const ring = store.getState().model.ring;
    const drawnSeqs = Array.from({ length: ring.total }, (_, i) => ring.row(i)!.seq);
    expect(drawnSeqs).toEqual(seqs);   // each once, in order: the history up to the cut, the frame after it
    expect(ring.row(0)!.text).toMatch(/^history/);
    expect(ring.row(ring.total - 1)!.text).not.toMatch(/^history/);
  });
});
