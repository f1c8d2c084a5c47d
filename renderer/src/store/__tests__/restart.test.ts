// The console's state after a host restart (the journal replayed) and in a console that connects late (the host's
// recent events + session.info) equals the state it drew live: the same objects, keys, QPs, CQs and ring slots, the
// same number of events (no CQE drawn twice). Runs the real host logic (HostCore + the native device) over the
// Electron MessagePort transport, with the restart done as the supervisor does it: 'starting', a new host process
// replaying the journal into the same port, 'up'.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel, type MessagePort as NodePort } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { portMessage } from '../../../../app/host/batcher.ts';
import type { HostCore as HostCoreT } from '../../../../app/host/core.ts';
import type { SendWr } from '../../../../app/protocol/index.ts';
import { MessagePortTransport } from '../../transport/index.ts';
import { createConsoleStore, type ConsoleState, type ConsoleStore } from '../store.ts';
import { needAddon } from '../../../../app/scenario/testlib.ts';

const mods = { ex: await needAddon('console restart tests'), core: await import('../../../../app/host/core.ts') };

const until = async (what: string, ok: () => boolean, ms = 10_000) => {
  const t0 = Date.now();
  while (!ok()) { if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`); await new Promise((r) => setTimeout(r, 5)); }
};

/** a host process: HostCore over a fresh native session, journaling in `dir`, serving one console's port */
function hostOn(dir: string, port: NodePort): HostCoreT {
  const core = new mods.core.HostCore(new mods.ex.NativeExecutor({ seed: 7 }), { sessionDir: dir, defaultDevice: 'rxe' });
  port.removeAllListeners('message');
  core.addClient((m) => port.postMessage(portMessage(m)));
  port.on('message', (m) => core.handle(m, (r) => port.postMessage(r)));
  return core;
}

/** a console page: the store over a MessagePort transport; `ctl` posts the supervisor's host status */
function consoleOn() {
  const hostCh = new MessageChannel(); const ctlCh = new MessageChannel();
  const t = new MessagePortTransport(hostCh.port1 as unknown as MessagePort, ctlCh.port1 as unknown as MessagePort);
  // frames run on a timer unless held: a page that draws late (a busy or hidden tab: no animation frames) still has
  // the events it received queued, not drawn, when the host says it is up
  const frames = { held: false, queue: [] as (() => void)[] };
  const timer = setInterval(() => { if (!frames.held) for (const f of frames.queue.splice(0)) f(); }, 2);
  const store = createConsoleStore({ transport: t, schedule: (cb) => { frames.queue.push(cb); } });
  const status = (state: 'starting' | 'up') => ctlCh.port2.postMessage({ type: 'host', state, restarts: 0 });
  const close = () => { clearInterval(timer); t.close(); hostCh.port2.close(); ctlCh.port2.close(); };
  return { store, hostPort: hostCh.port2, status, close, frames };
}

/** what the console shows of the session, as plain data */
function drawn(s: ConsoleState) {
  const m = s.model;
  return {
    events: m.ring.total,
    buffers: s.buffers, pds: s.pds,
    keys: m.keys.rows().map((k) => ({ ...k })),
    qps: [...m.queues.qps.values()].map((q) => ({ ...q })).sort((a, b) => a.handle - b.handle),
    cqs: [...m.queues.cqs.values()].map((c) => ({ ...c })).sort((a, b) => a.handle - b.handle),
    rings: [...m.queues.rings.values()].map((r) => ({
      key: r.key, depth: r.depth, producer: r.producer, consumer: r.consumer,
      slots: [...r.slots.values()].map((x) => ({ abs: x.abs, opcode: x.opcode, status: x.status, wrId: x.wrId, ok: x.ok })),
    })).sort((a, b) => a.key.localeCompare(b.key)),
    packets: m.wire.rows.map((p) => `${p.event} ${p.device}->${p.peer} ${p.opName} ${p.psn}`),
  };
}

/** the events drawn settle: nothing queued, and the count stays put for a few frames */
async function settled(store: ConsoleStore) {
  let last = -1; let same = 0;
  await until('the console to settle', () => {
    const n = store.getState().model.ring.total;
    same = n === last ? same + 1 : 0; last = n;
    return n > 0 && same >= 10;
  });
}

/** the replies syncObjects waits for (session.info, qp.query) land within a few frames: wait for the state to come
 *  equal, then check it stays equal once everything settled (a CQE drawn twice never comes equal) */
async function sameAs(now: () => unknown, want: unknown) {
  const same = () => JSON.stringify(now()) === JSON.stringify(want);
  try { await until('the drawn state to equal the live one', same, 3000); } catch { /* the diff below says how */ }
  await new Promise((r) => setTimeout(r, 50));
  expect(now()).toEqual(want);
}

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) fs.rmSync(d, { recursive: true, force: true }); });

describe('console state across a host restart and a late connect', () => {
  it('equals the state drawn live: objects, keys, QPs, CQs, ring slots, event count', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-restart-')); dirs.push(dir);
    const page = consoleOn();
    let host = hostOn(dir, page.hostPort);
    host.start();
    page.status('up');
    const st = () => page.store.getState();
    await until('devices', () => st().devices.length === 1);

    // two RC QPs on one device, MRs, a window, a fast-reg MR, a CQ with a channel armed, two RDMA WRITEs
    const dev = st().devices[0]!.handle;
    await st().allocPd(dev);
    const pd = st().pds[0]!.handle;
    await st().allocBuffer(4096); await st().allocBuffer(4096);
    const [ba, bb] = st().buffers;
    const access = ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_READ', 'IBV_ACCESS_MW_BIND'];
    expect(await st().regMr({ pd, addr: ba!.addr, length: 4096, access })).toBe(true);
    expect(await st().regMr({ pd, addr: bb!.addr, length: 4096, access })).toBe(true);
    expect(await st().allocMw(pd, 'IBV_MW_TYPE_2')).toBe(true);
    expect(await st().allocMr(pd, 4, false)).toBe(true);
    expect(await st().createCq(dev, 16, true)).toBe(true);
    const cq = [...st().model.queues.cqs.keys()][0]!;
    for (let i = 0; i < 2; i++) expect(await st().createQp({ pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC', maxSendWr: 16, maxRecvWr: 16 })).toBe(true);
    const [qa, qb] = [...st().model.queues.qps.keys()];
    expect(await st().connectQps(qa!, qb!)).toBe(true);
    await st().writeMemory('w', ba!.addr, 'c0ffee00');
    const [ma, mb] = st().model.keys.rows().filter((k) => k.type === 'MR' && k.kind === 'user');
    const wr = (id: number): SendWr => ({ wrId: id, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: ['IBV_SEND_SIGNALED'], sgList: [{ addr: ba!.addr, length: 4, lkey: ma!.lkey }], remoteAddr: bb!.addr, rkey: mb!.rkey });
    await st().reqNotify(cq, false);
    expect(await st().postSend(qa!, wr(1))).toBe(true);
    expect(await st().postSend(qa!, wr(2))).toBe(true);
    await st().runToIdle();
    await settled(page.store);
    const live = drawn(st());
    expect(live.rings.find((r) => r.key === `cq:${cq}`)!.slots.map((x) => x.status)).toEqual(['IBV_WC_SUCCESS', 'IBV_WC_SUCCESS']);
    expect(live.qps.map((q) => q.peer)).toEqual([qb, qa]);
    expect(live.keys.every((k) => k.pd === pd && k.device === dev)).toBe(true);

    // the host restarts: the supervisor says 'starting', a new host replays the journal into the page, then 'up'
    host.close();
    page.status('starting');
    await until('the page to see the restart', () => st().host.state === 'starting');
    host = hostOn(dir, page.hostPort);
    page.frames.held = true;                         // the replay's events arrive but are not drawn before 'up'
    expect(host.start().failed).toEqual([]);
    await new Promise((r) => setTimeout(r, 50));
    page.status('up');
    await until('the page to see the host up', () => st().host.state === 'up');
    await new Promise((r) => setTimeout(r, 50));     // syncObjects asks for what it needs (device.list first)
    page.frames.held = false;
    await settled(page.store);
    await sameAs(() => drawn(st()), live);

    // a console opened now draws the same from the host's recent events and session.info
    const late = consoleOn();
    host.addClient((m) => late.hostPort.postMessage(portMessage(m)));
    late.hostPort.on('message', (m) => host.handle(m, (r) => late.hostPort.postMessage(r)));
    late.status('up');
    await settled(late.store);
    await sameAs(() => drawn(late.store.getState()), live);
    late.close(); page.close(); host.close();
  }, 30_000);
});
