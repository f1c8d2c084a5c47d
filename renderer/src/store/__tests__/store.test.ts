import { describe, expect, it, vi } from 'vitest';
import type { DeviceEvent, Reply, Command } from '../../../../app/protocol/index.ts';
import { ACK_WINDOW, createConsoleStore, type ConsoleTransport } from '../store.ts';
import { EventRing, FilteredView } from '../eventRing.ts';
import { KeyChecks, KeyTable, MemoryMarks, QueueModel, WireLog, keyByte, keyIndex } from '../models.ts';
import { Change, EVENT_KINDS, KeyState, OBJ_KINDS } from '../../../../app/protocol/index.ts';
import { accessProblem, commandProblem } from '../validate.ts';
import { explainWc } from '../explain.ts';
import { emptyReply, sessionInfo } from './replies.ts';

let seq = 0;
const ev = (kind: string, over: Partial<DeviceEvent> = {}): DeviceEvent => ({
  seq: seq++, t: seq * 10, kind, device: 1, obj: 0, objKind: '', a: 0, b: 0, c: 0, d: 0, ...over,
});

/** a scheduler the test drives by hand: frames run only when flushed */
function manualFrames() {
  const q: (() => void)[] = [];
  return { schedule: (cb: () => void) => { q.push(cb); }, pending: () => q.length, run: () => { const all = q.splice(0); all.forEach((f) => f()); } };
}

describe('event ingestion batching', () => {
  it('notifies the store once per frame however many events arrive', () => {
    const frames = manualFrames();
    const store = createConsoleStore({ schedule: frames.schedule, ringCapacity: 1024 });
    let notifications = 0;
    store.subscribe(() => { notifications++; });
    for (let i = 0; i < 50; i++) store.getState().ingest([ev('Log', { text: `line ${i}` }), ev('Timer')]);
    expect(notifications).toBe(0);          // nothing published before the frame
    expect(frames.pending()).toBe(1);        // one frame queued for 50 batches
    frames.run();
    expect(notifications).toBe(1);
    expect(store.getState().versions.events).toBe(1);
    expect(store.getState().model.ring.total).toBe(100);
    expect(store.getState().model.view.length).toBe(100);
  });

  it('spreads a large batch over several frames instead of one long task', () => {
    const frames = manualFrames();
    // a budget that is always exceeded: each frame applies one slice of 256 events
    const store = createConsoleStore({ schedule: frames.schedule, ringCapacity: 4096, frameBudgetMs: -1 });
    let notifications = 0;
    store.subscribe(() => { notifications++; });
    store.getState().ingest(Array.from({ length: 1000 }, (_, i) => ev('Log', { text: `e${i}` })));
    const totals: number[] = [];
    while (frames.pending()) { frames.run(); totals.push(store.getState().model.ring.total); }
    expect(totals.slice(0, 4)).toEqual([256, 512, 768, 1000]);
    expect(notifications).toBeGreaterThanOrEqual(4);
    expect(store.getState().model.view.length).toBe(1000);
  });

  it('acknowledges what it drew once per frame, asking for a window that halves when frames come late (frame pacing)', () => {
    const frames = manualFrames();
    let clock = 1000;
    const acks: [number, number | undefined][] = [];
    const t: ConsoleTransport = {
      call: async () => ({ type: 'reply', id: 1, ok: true, result: {} }) as Reply,
      onEvents: () => () => {}, onHost: () => () => {}, control: () => {}, ack: (s, w) => { acks.push([s, w]); },
    };
    const store = createConsoleStore({ transport: t, schedule: frames.schedule, now: () => clock });
    const feed = (from: number) => store.getState().ingest([from, from + 1].map((s) => ev('Log', { seq: s })));
    const win = () => acks[acks.length - 1]![1]!;
    feed(10); frames.run();                        // first frame (no previous one): on time
    expect(acks.map((a) => a[0])).toEqual([11]);
    const w0 = win();
    expect(w0).toBeGreaterThan(ACK_WINDOW.initial);
    clock += 16.7; feed(12); frames.run();         // on time: the window grows a little
    expect(acks.map((a) => a[0])).toEqual([11, 13]);
    expect(win()).toBeGreaterThan(w0);
    expect(win()).toBeLessThan(w0 * 1.2);
    const w1 = win();
    clock += 50; feed(14); frames.run();           // 50 ms after the previous frame: dropping frames, the window halves
    expect(acks.map((a) => a[0])).toEqual([11, 13, 15]);
    expect(win()).toBe(w1 >> 1);
    expect(store.getState().model.ring.total).toBe(6);   // the events are drawn all the same
    for (let i = 0; i < 20; i++) { clock += 40; feed(16 + 2 * i); frames.run(); }
    expect(win()).toBe(ACK_WINDOW.min);            // never below the minimum
    // while events stream every frame is looked at, also the ones without new events: a late one between two acks
    // counts (the frames the host sees acks from are not the page's frames)
    clock += 2000; feed(90); frames.run();
    for (let i = 0; i < 40; i++) { clock += 16.7; if (i % 3 === 0) feed(92 + i); frames.run(); }
    const wOk = win();
    expect(wOk).toBeGreaterThan(ACK_WINDOW.min * 2);
    clock += 16.7; frames.run(); clock += 60; frames.run();   // no events in these frames, the second one late
    clock += 16.7; feed(200); frames.run();
    expect(win()).toBe(wOk >> 1);
    clock += 2000; feed(100); frames.run();        // a pause of the stream is not a slow frame
    expect(win()).toBeGreaterThan(ACK_WINDOW.min);
    clock += 16.7; frames.run();
    expect(acks.map((a) => a[0]).slice(-1)).toEqual([101]);   // nothing new drawn: no second ack
  });

  it('keeps only the newest events in the ring and the filtered view follows', () => {
    const ring = new EventRing(8);
    const view = new FilteredView(ring, { kind: 'KeyCheck', obj: null, text: '' });
    for (let i = 0; i < 20; i++) ring.push(ev(i % 2 ? 'KeyCheck' : 'Log', { obj: i }));
    view.update();
    expect(ring.size).toBe(8);
    expect(ring.first).toBe(12);
    expect(view.length).toBe(4);
    expect(ring.row(view.at(0))!.obj).toBe(13);
    for (let i = 20; i < 24; i++) ring.push(ev('KeyCheck', { obj: i }));
    view.update();
    expect([...Array(view.length)].map((_, i) => ring.row(view.at(i))!.obj)).toEqual([17, 19, 20, 21, 22, 23]);
  });

  it('filters by object and text, case-insensitively', () => {
    const ring = new EventRing(64);
    ring.push(ev('KeyCheck', { obj: 5, text: 'rkey 0x1234 key byte 0x34 != 0x35', ok: false }));
    ring.push(ev('KeyCheck', { obj: 6, text: 'ok' }));
    ring.push(ev('Log', { obj: 5, text: 'hello' }));
    const v = new FilteredView(ring, { kind: '', obj: 5, text: 'RKEY' });
    v.update();
    expect(v.length).toBe(1);
    expect(ring.row(v.at(0))!.ok).toBe(false);
  });

  it('a million events fit and filtering scans only new ones', () => {
    const ring = new EventRing(1 << 20);
    const view = new FilteredView(ring, { kind: 'Cqe', obj: null, text: '' });
    const e = ev('Cqe'); const l = ev('Log');
    for (let i = 0; i < 1_000_000; i++) ring.push(i % 10 === 0 ? e : l);
    view.update();
    expect(view.length).toBe(100_000);
    ring.push(e); view.update();
    expect(view.length).toBe(100_001);
  });
});

describe('key table derivation', () => {
  it('splits a key into index and key byte', () => {
    expect(keyIndex(0x00001234)).toBe(0x12);
    expect(keyByte(0x00001234)).toBe(0x34);
  });

  it('builds rows from ObjectCreated events and marks destroyed keys', () => {
    const k = new KeyTable();
    k.applyEvent(ev('ObjectCreated', { objKind: 'mr', obj: 7, device: 2, a: 0x1a2b, b: 0x1a2b, c: 0x7f0000000000, d: 4096, keyState: KeyState.values.valid }));
    expect(k.rows()).toHaveLength(1);
    const r = k.rows()[0];
    expect(r).toMatchObject({ handle: 7, type: 'MR', lkey: 0x1a2b, rkey: 0x1a2b, addr: 0x7f0000000000, length: 4096, state: 'valid' });
    k.applyEvent(ev('ObjectDestroyed', { objKind: 'mr', obj: 7, keyState: KeyState.values.invalid }));
    expect(k.rows(false)).toHaveLength(0);
    expect(k.rows()[0].state).toBe('destroyed');
  });

  it('follows MW binds and MR re-registration from the typed change and key state', () => {
    const k = new KeyTable();
    k.applyEvent(ev('ObjectCreated', { objKind: 'mw', obj: 4, a: 0x2203, b: 2, text: 'MW type 2 rkey 0x00002203', keyState: KeyState.values.free }));
    expect(k.rows()[0]).toMatchObject({ type: 'MW', kind: 'type 2', rkey: 0x2203, state: 'free' });
    k.applyEvent(ev('ObjectModified', { objKind: 'mw', obj: 4, a: 0x2204, b: 0x1000, c: 64, d: 2, change: Change.values.BIND, keyState: KeyState.values.valid }));
    expect(k.rows()[0]).toMatchObject({ rkey: 0x2204, addr: 0x1000, length: 64, access: 2, state: 'valid' });
    k.applyEvent(ev('ObjectModified', { objKind: 'mw', obj: 4, a: 0x2204, change: Change.values.QP_DESTROYED, keyState: KeyState.values.free }));
    expect(k.rows()[0]).toMatchObject({ rkey: 0x2204, state: 'free' });
    k.applyEvent(ev('ObjectCreated', { objKind: 'mr', obj: 5, a: 0x105, b: 0x105, c: 0x2000, d: 16, keyState: KeyState.values.valid }));
    k.applyEvent(ev('ObjectModified', { objKind: 'mr', obj: 5, a: 0x177, b: 0x178, change: Change.values.REREG, keyState: KeyState.values.valid }));
    expect(k.byHandle.get(5)).toMatchObject({ lkey: 0x177, rkey: 0x178, addr: 0x2000, length: 16 });
  });

  it('reads no state from the text: only the typed fields move a key', () => {
    const k = new KeyTable();
    k.applyEvent(ev('ObjectCreated', { objKind: 'mr', obj: 6, a: 0x106, b: 0x106, c: 0x1000, d: 8, keyState: KeyState.values.valid }));
    k.applyEvent(ev('ObjectModified', { objKind: 'mr', obj: 6, a: 2, b: 2, c: 0x3000, d: 8192, text: 'MR 0x00000106 free, key now 0x999 (REG_MR bound)' }));
    expect(k.byHandle.get(6)).toMatchObject({ lkey: 0x106, rkey: 0x106, addr: 0x1000, length: 8, state: 'valid' });
    k.applyEvent(ev('ObjectModified', { objKind: 'mr', obj: 6, a: 2, b: 2, c: 0x3000, d: 8192, change: Change.values.MAP_MR_SG, keyState: KeyState.values.free }));
    expect(k.byHandle.get(6)).toMatchObject({ lkey: 0x106, addr: 0x3000, length: 8192, state: 'free' });
    k.applyEvent(ev('ObjectModified', { objKind: 'mr', obj: 6, a: 0x1a6, b: 0x4000, c: 64, d: 3, change: Change.values.REG_MR, keyState: KeyState.values.valid }));
    expect(k.byHandle.get(6)).toMatchObject({ lkey: 0x1a6, rkey: 0x1a6, addr: 0x4000, length: 64, access: 3, state: 'valid' });
  });

  it('merges an mr.reg reply (access number, SG segments)', () => {
    const k = new KeyTable();
    k.applyInfo('MR', { handle: 3, mr: 3, accessNames: [], pd: 1, lkey: 0x305, rkey: 0x305, addr: 4096, length: 64, iova: 4096, access: 7, kind: 'fast_reg', state: 'valid',
      sg: [{ addr: 4096, length: 32, lkey: 0 }, { addr: 8192, length: 32, lkey: 0 }] });
    const r = k.rows()[0];
    expect(r.access).toBe(7);
    expect(r.sg).toEqual([{ addr: 4096, length: 32 }, { addr: 8192, length: 32 }]);
    k.applyEvent(ev('ObjectModified', { objKind: 'mr', obj: 3, a: 0x305, text: 'local invalidate: MR 0x00000305 free', change: Change.values.LOCAL_INV, keyState: KeyState.values.free }));
    expect(k.rows()[0].state).toBe('free');
  });

  it('ignores events about other objects', () => {
    const k = new KeyTable();
    expect(k.applyEvent(ev('ObjectCreated', { objKind: 'qp', obj: 1 }))).toBe(false);
    expect(k.rows()).toHaveLength(0);
  });
});

describe('ring slot derivation', () => {
  it('tracks SQ producer/consumer and slot status from Wqe events', () => {
    const q = new QueueModel();
    // (a qp.query reply carries every attribute; this one lists those the model reads)
    q.applyQpInfo({ handle: 9, qp: 9, qpNum: 0x11, device: 1, init: { pd: 1, sendCq: 2, recvCq: 2, srq: 0, qpType: 2, cap: { maxSendWr: 4, maxRecvWr: 4 } }, attr: { qpState: 0, destQpNum: 0 } } as unknown as Parameters<QueueModel['applyQpInfo']>[0]);
    // WqePosted: a = wr_id, b = WR opcode (0 = RDMA_WRITE), c = length, d = occupancy
    for (let i = 0; i < 6; i++) q.applyEvent(ev('WqePosted', { objKind: 'qp', obj: 9, a: 100 + i, b: 0, c: 8, d: i + 1 }));
    const sq = q.rings.get('qp:9:sq')!;
    expect(sq.depth).toBe(4);
    expect(sq.producer).toBe(6);
    expect(sq.consumer).toBe(0);
    expect(sq.slots.size).toBeLessThanOrEqual(5);
    q.applyEvent(ev('WqeStarted', { objKind: 'qp', obj: 9, a: 102, b: 0, c: 0, d: 0, text: 'PSN 0..0' }));
    expect(sq.slots.get(2)!.status).toBe('started');
    // WqeCompleted: a = wr_id, b = status (10 = REM_ACCESS_ERR), c = WC opcode (1 = RDMA_WRITE)
    q.applyEvent(ev('WqeCompleted', { objKind: 'qp', obj: 9, a: 102, b: 10, c: 1, d: 1, ok: false }));
    expect(sq.consumer).toBe(1);
    expect(sq.slots.get(2)).toMatchObject({ opcode: 'IBV_WR_RDMA_WRITE', status: 'IBV_WC_REM_ACCESS_ERR', ok: false, wrId: 102 });
  });

  it('puts receive WQEs on the RQ ring', () => {
    const q = new QueueModel();
    q.applyEvent(ev('WqePosted', { objKind: 'qp', obj: 3, a: 7, b: 128, d: 1 }));
    q.applyEvent(ev('WqeCompleted', { objKind: 'qp', obj: 3, a: 7, b: 0, c: 128, d: 1, text: 'receive IBV_WC_SUCCESS' }));
    const rq = q.rings.get('qp:3:rq')!;
    expect(rq.producer).toBe(1);
    expect(rq.consumer).toBe(1);
    expect(rq.slots.get(0)).toMatchObject({ opcode: 'RECV', status: 'IBV_WC_SUCCESS', ok: true });
    expect(q.rings.has('qp:3:sq')).toBe(false);
  });

  it('fills CQ slots from Cqe events; occupancy and polls move the consumer', () => {
    const q = new QueueModel();
    q.applyEvent(ev('ObjectCreated', { objKind: 'cq', obj: 2, a: 8 }));
    // Cqe: a = status, b = WC opcode, c = QPN, d = occupancy after this CQE
    q.applyEvent(ev('Cqe', { objKind: 'cq', obj: 2, a: 0, b: 1, c: 0x11, d: 1, wc: { status: 0, opcode: 1, wrId: 1 } }));
    q.applyEvent(ev('Cqe', { objKind: 'cq', obj: 2, a: 10, b: 1, c: 0x11, d: 2, wc: { status: 10, opcode: 1, wrId: 2 } }));
    const r = q.rings.get('cq:2')!;
    expect(r.depth).toBe(8);
    expect(r.producer).toBe(2);
    expect(r.consumer).toBe(0);
    expect(r.slots.get(0)).toMatchObject({ opcode: 'IBV_WC_RDMA_WRITE', status: 'IBV_WC_SUCCESS', ok: true, wrId: 1 });
    expect(r.slots.get(1)).toMatchObject({ status: 'IBV_WC_REM_ACCESS_ERR', ok: false });
    q.applyPoll(2, 1);
    expect(r.consumer).toBe(1);
    q.applyEvent(ev('Cqe', { objKind: 'cq', obj: 2, a: 0, b: 0, d: 1, wc: { status: 0, opcode: 0, wrId: 3 } }));
    expect(r.consumer).toBe(2); // one CQE left in the queue after the third arrived: the first two were consumed
  });

  it('after a gap (a sampled free run) ignores WQE/CQE events until the device\'s rings snapshot, then follows events again', () => {
    const q = new QueueModel();
    q.applyEvent(ev('ObjectCreated', { objKind: 'cq', obj: 2, a: 8 }));
    q.applyEvent(ev('WqePosted', { objKind: 'qp', obj: 9, a: 1, b: 0, c: 8, d: 1 }));
    q.gap();
    expect(q.applyEvent(ev('WqePosted', { objKind: 'qp', obj: 9, a: 500, b: 0, c: 8, d: 1 }))).toBe(false);
    expect(q.applyEvent(ev('Cqe', { objKind: 'cq', obj: 2, a: 0, b: 1, d: 1, wc: { status: 0, opcode: 1, wrId: 9 } }))).toBe(false);
    expect(q.rings.get('qp:9:sq')!.producer).toBe(1);
    // state events still apply
    q.applyEvent(ev('QpState', { objKind: 'qp', obj: 9, a: 3, b: 6, c: 0x11 }));
    expect(q.qps.get(9)!.state).toBe(6);
    q.applySnapshot({ type: 'rings', seq: 1000, rings: [
      { owner: 9, device: 1, queue: 'sq', depth: 4, producer: 700, consumer: 697, first: 697, slots: [
        { wrId: 697, opcode: 0, status: 0, state: 'done' }, { wrId: 698, opcode: 0, status: 0, state: 'started' }, { wrId: 699, opcode: 2, status: 0, state: 'posted' }] },
      { owner: 2, device: 1, queue: 'cq', depth: 8, producer: 40, consumer: 39, first: 39, slots: [{ wrId: 696, opcode: 1, status: 10, state: 'done', qpNum: 0x11 }] },
    ] });
    expect(q.stale).toBe(false);
    expect(q.snapshotSeq).toBe(1000);
    const sq = q.rings.get('qp:9:sq')!;
    expect(sq).toMatchObject({ producer: 700, consumer: 697, started: 699, depth: 4 });
    expect([...sq.slots.keys()]).toEqual([697, 698, 699]);
    expect(sq.slots.get(697)).toMatchObject({ opcode: 'IBV_WR_RDMA_WRITE', status: 'IBV_WC_SUCCESS', ok: true });
    expect(sq.slots.get(698)).toMatchObject({ status: 'started' });
    expect(sq.slots.get(699)).toMatchObject({ opcode: 'IBV_WR_SEND', status: 'posted' });
    expect(q.rings.get('cq:2')!.slots.get(39)).toMatchObject({ opcode: 'IBV_WC_RDMA_WRITE', status: 'IBV_WC_REM_ACCESS_ERR', ok: false, wrId: 696 });
    // whole events again: they continue from the snapshot
    expect(q.applyEvent(ev('WqePosted', { objKind: 'qp', obj: 9, a: 700, b: 0, c: 8, d: 4 }))).toBe(true);
    expect(sq.producer).toBe(701);
    expect(sq.slots.get(700)).toMatchObject({ wrId: 700, status: 'posted' });
  });

  it('lights the QP state from QpState events and tracks CQ arming', () => {
    const q = new QueueModel();
    q.applyEvent(ev('QpState', { objKind: 'qp', obj: 4, a: 2, b: 3, c: 0x12 }));
    expect(q.qps.get(4)!).toMatchObject({ state: 3, qpn: 0x12 });
    q.applyEvent(ev('CqArmed', { objKind: 'cq', obj: 1 }));
    expect(q.cqs.get(1)!.armed).toBe(true);
    q.applyEvent(ev('CompEvent', { objKind: 'cq', obj: 1 }));
    expect(q.cqs.get(1)!).toMatchObject({ armed: false, pendingEvents: 1 });
  });
});

describe('validation and errors next to the form', () => {
  it('REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE', () => {
    expect(accessProblem(['IBV_ACCESS_REMOTE_WRITE'])).toMatch(/LOCAL_WRITE/);
    expect(accessProblem(['IBV_ACCESS_REMOTE_READ'])).toBeNull();
    expect(commandProblem({ cmd: 'mr.reg', args: { pd: 1, addr: 0, length: 8, access: ['IBV_ACCESS_REMOTE_ATOMIC'] } })).toMatch(/LOCAL_WRITE/);
    expect(commandProblem({ cmd: 'buffer.alloc', args: { length: 0 } })).toMatch(/length/);
  });

  it('files the host error under the form that sent the command', async () => {
    const calls: Command[] = [];
    const t: ConsoleTransport = {
      call: async (c) => { calls.push(c); return { type: 'reply', id: 1, ok: false, error: { code: 'ENOSYS', message: 'cq.create: not built yet' } } as Reply; },
      onEvents: () => () => {}, onHost: () => () => {}, control: () => {},
    };
    const store = createConsoleStore({ transport: t, schedule: () => {} });
    expect(await store.getState().createCq(1, 16)).toBe(false);
    expect(calls[0]).toMatchObject({ cmd: 'cq.create', args: { device: 1, cqe: 16 } });
    expect(store.getState().errors['cq.create']).toEqual({ code: 'ENOSYS', message: 'cq.create: not built yet' });
  });

  it('explains a remote access error with the KeyCheck reason', () => {
    expect(explainWc(10, 'rkey 0x1234 key byte 0x34 != 0x35')).toBe('the responder refused the rkey: rkey 0x1234 key byte 0x34 != 0x35');
  });
});

describe('a console that connects late', () => {
  it('draws the recent history first, then the live events, each once and in order', async () => {
    // the host's history holds 1..6 (5 and 6 were still queued in its batcher when the history was taken)
    const history = [1, 2, 3, 4, 5, 6].map((s) => ev('Log', { seq: s, text: `before ${s}` }));
    let live: ((b: { type: 'events'; first: number; count: number; dropped: number; events: DeviceEvent[] }) => void) | null = null;
    const calls: string[] = [];
    const t: ConsoleTransport = {
      call: async (c) => {
        calls.push(c.cmd);
        if (c.cmd === 'events.recent') {
          // live batches cross the reply: 3..4 arrive before it, then the queued 5..6, then 7..8
          live!({ type: 'events', first: 3, count: 2, dropped: 0, events: [3, 4].map((s) => ev('Log', { seq: s, text: `live ${s}` })) });
          return { type: 'reply', id: 1, ok: true, result: { first: 1, count: 6, events: history } } as Reply;
        }
        return { type: 'reply', id: 2, ok: true, result: emptyReply(c.cmd) } as Reply;
      },
      onEvents: (cb) => { live = cb as typeof live; return () => {}; }, onHost: () => () => {}, control: () => {},
    };
    const frames = manualFrames();
    const store = createConsoleStore({ transport: t, schedule: frames.schedule });
    await store.getState().syncObjects();
    live!({ type: 'events', first: 5, count: 2, dropped: 0, events: [5, 6].map((s) => ev('Log', { seq: s, text: `live ${s}` })) });
    live!({ type: 'events', first: 7, count: 2, dropped: 0, events: [7, 8].map((s) => ev('Log', { seq: s, text: `live ${s}` })) });
    frames.run(); frames.run();
    expect(calls).toContain('events.recent');
    const ring = store.getState().model.ring;
    const seqs = Array.from({ length: ring.total }, (_, i) => ring.row(i)!.seq);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(ring.row(0)!.text).toBe('before 1');
    expect(ring.row(5)!.text).toBe('before 6');
    expect(ring.row(6)!.text).toBe('live 7');
  });

  it('does not fetch the history when it already has events', async () => {
    const calls: string[] = [];
    const t: ConsoleTransport = {
      call: async (c) => { calls.push(c.cmd); return { type: 'reply', id: 1, ok: true, result: emptyReply(c.cmd) } as Reply; },
      onEvents: () => () => {}, onHost: () => () => {}, control: () => {},
    };
    const frames = manualFrames();
    const store = createConsoleStore({ transport: t, schedule: frames.schedule });
    store.getState().ingest([ev('Log', { seq: 9 })]);
    frames.run();
    await store.getState().syncObjects();
    expect(calls).not.toContain('events.recent');
  });
});

describe('late connect, concurrently', () => {
  it('two syncObjects at once fetch the history once and draw it once', async () => {
    const calls: string[] = [];
    const t: ConsoleTransport = {
      call: async (c) => {
        calls.push(c.cmd);
        await new Promise((r) => setTimeout(r, 5));
        if (c.cmd === 'events.recent') return { type: 'reply', id: 1, ok: true, result: { events: [1, 2].map((s) => ev('Log', { seq: s })) } } as Reply;
        return { type: 'reply', id: 1, ok: true, result: emptyReply(c.cmd) } as Reply;
      },
      onEvents: () => () => {}, onHost: () => () => {}, control: () => {},
    };
    const frames = manualFrames();
    const store = createConsoleStore({ transport: t, schedule: frames.schedule });
    await Promise.all([store.getState().syncObjects(), store.getState().syncObjects()]);
    frames.run();
    expect(calls.filter((c) => c === 'events.recent')).toHaveLength(1);
    expect(store.getState().model.ring.total).toBe(2);
  });
});

describe('load generator counts', () => {
  it('are read from session.info while the load generator runs on autorun, and no more once it stops', async () => {
    vi.useFakeTimers();
    try {
      const calls: string[] = [];
      let posted = 0;
      let trafficOn = false;
      const t: ConsoleTransport = {
        call: async (c: Command) => {
          calls.push(c.cmd);
          if (c.cmd === 'engine.traffic') { trafficOn = (c.args as { on: boolean }).on; return { type: 'reply', id: 1, ok: true, result: { traffic: { on: trafficOn, qp: 5, posted, completed: 0 } } } as Reply; }
          if (c.cmd === 'session.info') { posted += 64; return { type: 'reply', id: 2, ok: true, result: sessionInfo({ traffic: { on: trafficOn, qp: 5, cq: 2, wrs: 1, posted, completed: posted >> 8 } }) } as Reply; }
          return { type: 'reply', id: 3, ok: true, result: {} } as Reply;
        },
        onEvents: () => () => {}, onHost: () => () => {}, control: () => {},
      };
      const store = createConsoleStore({ transport: t, schedule: () => {} });
      store.setState({ lastPosted: { 5: { wrId: 1, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: [], sgList: [] } as never } });
      await store.getState().setTraffic(true, 5);
      await vi.advanceTimersByTimeAsync(2000);
      expect(calls.filter((c) => c === 'session.info')).toHaveLength(0);   // not on autorun: the counts only move on a step
      await store.getState().setAutorun(true);
      await vi.advanceTimersByTimeAsync(1600);
      expect(calls.filter((c) => c === 'session.info').length).toBe(3);
      expect(store.getState().traffic).toMatchObject({ on: true, qp: 5, posted: 192 });
      await store.getState().setTraffic(false);
      const n = calls.length;
      await vi.advanceTimersByTimeAsync(2000);
      expect(calls.length).toBe(n);
      expect(store.getState().errors['traffic.status']).toBeUndefined();
    } finally { vi.useRealTimers(); }
  });
});

describe('event routing', () => {
  it('each model declares every kind it looks at (the store routes only those to it)', () => {
    const models = [new KeyTable(), new QueueModel(), new WireLog(), new KeyChecks(), new MemoryMarks()];
    const declared = [KeyTable.KINDS, QueueModel.KINDS, WireLog.KINDS, KeyChecks.KINDS, MemoryMarks.KINDS];
    for (const kind of EVENT_KINDS) {
      for (const objKind of OBJ_KINDS) {
        models.forEach((m, i) => {
          if (declared[i]!.includes(kind)) return;
          expect(m.applyEvent(ev(kind, { objKind, obj: 3, a: 1, b: 128, c: 2, d: 1, text: 'receive x', pkt: { opcode: 4 } })), `${m.constructor.name} ${kind}/${objKind}`).toBe(false);
        });
      }
    }
  });
});

describe('filtering a full log', () => {
  it('a new filter over many rows is scanned a slice per frame, never in one long task, and ends with every match', () => {
    const frames = manualFrames();
    const store = createConsoleStore({ schedule: frames.schedule, ringCapacity: 1 << 16, frameBudgetMs: -1 });   // budget always spent
    const evs = Array.from({ length: 50_000 }, (_, i) => ev(i % 5 ? 'Log' : 'KeyCheck', { text: i % 10 === 0 ? `rkey 0x${i.toString(16)} refused` : 'RC Acknowledge' }));
    store.getState().ingest(evs);
    while (frames.pending()) frames.run();
    expect(store.getState().model.view.length).toBe(50_000);
    store.getState().setFilter({ text: 'RKEY' });   // case does not matter
    const view = store.getState().model.view;
    const slices: number[] = [];
    while (view.pending) { slices.push(view.pending); frames.run(); }
    expect(slices.length).toBeGreaterThan(5);          // several frames, each a slice of at most 4096 rows
    expect(view.length).toBe(5000);
    for (let i = 0; i < view.length; i++) expect(store.getState().model.ring.row(view.at(i))!.text).toMatch(/^rkey 0x/);
    store.getState().setFilter({ text: 'keycheck' });  // matches the kind's name too
    while (view.pending) frames.run();
    expect(view.length).toBe(10_000);
  });
});
