// The attach protocol (app/host/attach.ts) against fake clients on the real Unix socket, inside a real HostCore:
// a good program's session (hello, state, events, frames, bye) answers the panels' read-only commands with results
// that match their schemas, refuses the others with the reason; garbage, oversized, truncated and unauthenticated
// input gets a clear one-line error, closes that one connection, and kills nothing (the host and the other session go on).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FromHost } from '../protocol/index.ts';
import { ATTACH_MAX_LINE, resultSchema } from '../protocol/index.ts';
import { attach, TOKEN_FILE } from './attach.ts';
import { HostCore } from './core.ts';
import { NativeExecutor } from './executor.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-attach-'));
const core = new HostCore(new NativeExecutor({ seed: 1 }), { sessionDir: dir, defaultDevice: 'rxe' });
const sent: FromHost[] = [];
core.addClient((m) => sent.push(m));
const srv = attach(core);
core.start();
afterAll(() => { srv.close(); core.close(); });

const token = () => fs.readFileSync(path.join(dir, TOKEN_FILE), 'utf8').trim();
const hello = (over: Record<string, unknown> = {}) => JSON.stringify({ t: 'hello', v: 1, token: token(), pid: 4242, program: 'fake', argv: ['fake', '-x'], ...over });

/** a fake program: writes what it is given, collects the console's lines, knows when the console closed it */
class Client {
  lines: string[] = [];
  closed = false;
  private buf = '';
  readonly sock: net.Socket;
  constructor() {
    this.sock = net.connect(srv.socketPath);
    this.sock.on('data', (d) => {
      this.buf += d.toString();
      let i: number;
      while ((i = this.buf.indexOf('\n')) >= 0) { this.lines.push(this.buf.slice(0, i)); this.buf = this.buf.slice(i + 1); }
    });
    this.sock.on('close', () => { this.closed = true; });
    this.sock.on('error', () => { this.closed = true; });
  }
  write(s: string | Buffer) { this.sock.write(s); }
  async until(f: () => boolean, what: string) {
    const t0 = Date.now();
    while (!f()) {
      if (Date.now() - t0 > 10_000) throw new Error(`timed out waiting for ${what}; lines: ${this.lines.join(' | ')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  json(i: number) { return JSON.parse(this.lines[i]!) as { t: string; message?: string; session?: number }; }
}

const call = (session: number, cmd: string, args: Record<string, unknown> = {}) =>
  new Promise<{ ok: boolean; result?: unknown; error?: { code: string; message: string } }>((resolve) =>
    core.handle({ type: 'request', id: 1, command: { cmd: 'attach.call', args: { session, command: { cmd, args } } } }, (r) => resolve(r as never)));
const list = () => new Promise<{ sessions: { session: number; state: string; reason?: string; dropped: { events: number } }[] }>((resolve) =>
  core.handle({ type: 'request', id: 2, command: { cmd: 'attach.list', args: {} } }, (r) => resolve((r as unknown as { result: never }).result)));

const QP = {
  handle: 5, qpNum: 17, device: 1,
  init: { pd: 2, sendCq: 4, recvCq: 4, srq: 0, qpType: 2, sqSigAll: false, cap: { maxSendWr: 1, maxRecvWr: 500, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 16 } },
  attr: {
    qpState: 3, curQpState: 3, pathMtu: 3, qpAccessFlags: 0, qkey: 0, rqPsn: 1, sqPsn: 2, destQpNum: 18, pkeyIndex: 0, portNum: 1,
    maxRdAtomic: 1, maxDestRdAtomic: 1, minRnrTimer: 12, timeout: 14, retryCnt: 7, rnrRetry: 7,
    dgid: '0000:0000:0000:0000:0000:ffff:7f00:0002', sgidIndex: 1, destDevice: 0,
  },
};
const MR = { handle: 3, pd: 2, lkey: 454, rkey: 454, addr: 94640150859776, length: 4096, iova: 94640150859776, access: 1, kind: 'user', state: 'valid', sg: [] };
const STATE = {
  t: 'state', seq: 3, nowNs: 5000, address: '127.0.0.1', profile: 'rxe',
  net: { interface: 'lo', port: 4791, stats: { txPackets: 1, txBytes: 60, rxPackets: 0, rxBytes: 0, rxDropped: 0, txDropped: 0 } },
  devices: [{ handle: 1, name: 'vlrxe0', profile: 'rxe', nodeGuid: '0002c9fffe000001', gids: [{ index: 1, gid: '0000:0000:0000:0000:0000:ffff:7f00:0001', type: 'RoCE v2' }], portState: 4 }],
  objects: [{ kind: 'pd', handle: 2, device: 1 }, { kind: 'mr', handle: 3, device: 1, info: MR }, { kind: 'cq', handle: 4, device: 1 }, { kind: 'qp', handle: 5, device: 1 }],
  qps: [QP],
  rings: [{ owner: 4, device: 1, queue: 'cq', depth: 16, producer: 1, consumer: 0, first: 0, slots: [{ wrId: 1, opcode: 128, status: 0, state: 'done', qpNum: 17 }] }],
};
const EV = (seq: number, kind = 'ObjectCreated') => ({ seq, t: seq * 10, kind, device: 1, obj: 5, objKind: 'qp', a: 0, b: 0, c: 0, d: seq === 2 ? '0xffffffffffffffff' : 0 });
// one Ethernet/IPv4/UDP frame: the bytes are stored as given
const FRAME = '02007f00000102007f0000020800' + '45000020000040004011' + '0000' + '7f000002' + '7f000001' + '12b712b7000c0000' + 'deadbeef';

describe('attach: a program streaming its device to the console', () => {
  let good: Client;
  let id = 0;
  it('welcomes a program with the token, keeps what it sends and forwards its events and rings with its session id', async () => {
    good = new Client();
    good.write(`${hello()}\n`);
    await good.until(() => good.lines.length > 0, 'the welcome');
    expect(good.json(0)).toMatchObject({ t: 'welcome' });
    id = good.json(0).session!;
    good.write(`${JSON.stringify({ t: 'events', dropped: 0, events: [EV(1), EV(2, 'AtomicDone')] })}\n`);
    good.write(`${JSON.stringify(STATE)}\n${JSON.stringify({ t: 'frames', dropped: 0, frames: [{ t: 1_500_000, hex: FRAME }] })}\n`);
    // a message in two pieces (TCP / Unix stream: lines may arrive split)
    const beat = `${JSON.stringify({ t: 'events', dropped: 7, events: [EV(3, 'QpState')] })}\n`;
    good.write(beat.slice(0, 10));
    await new Promise((r) => setTimeout(r, 50));
    good.write(beat.slice(10));
    await good.until(() => srv.sessions.get(id)!.received.events === 3, 'the three events');
    const s = srv.sessions.get(id)!;
    s.forward();
    const evs = sent.filter((m) => m.type === 'events' && m.session === id).flatMap((m) => (m as { events: unknown[] }).events);
    expect(evs).toHaveLength(3);
    expect(sent.some((m) => m.type === 'rings' && m.session === id && m.rings[0]!.owner === 4)).toBe(true);
    expect(sent.filter((m) => m.type === 'events' && m.session === id).reduce((n, m) => n + (m as { dropped: number }).dropped, 0)).toBe(7);
    const l = await list();
    expect(l.sessions.find((x) => x.session === id)).toMatchObject({ state: 'live', dropped: { events: 7 } });
  });

  it("answers the panels' read-only commands from it, each result matching its command's schema", async () => {
    for (const [cmd, args] of [['device.list', {}], ['session.info', {}], ['events.recent', { max: 1 }], ['qp.query', { qp: 5 }], ['mr.query', { mr: 3 }], ['pcap.get', {}], ['cm.list', {}]] as const) {
      const r = await call(id, cmd, args);
      expect(r.ok, `${cmd}: ${r.error?.message}`).toBe(true);
      expect(resultSchema(cmd).safeParse(r.result).success).toBe(true);
    }
    expect(((await call(id, 'qp.query', { qp: 5 })).result as { attr: { qpStateName: string } }).attr.qpStateName).toBe('IBV_QPS_RTS');
    // a..d above 2^53-1 stay lossless "0x.." strings, as the host's own event text writes them
    const recent = (max: number) => call(id, 'events.recent', { max }).then((r) => (r.result as { events: { seq: number; d: unknown }[] }).events);
    const all = await recent(3);
    expect(all.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(all[1]!.d).toBe('0xffffffffffffffff');
    // a short window still brings the older life-cycle events (the QP's creation), then the newest
    expect((await recent(2)).map((e) => e.seq)).toEqual([1, 3]);
    expect((await recent(1)).map((e) => e.seq)).toEqual([3]);
    const dl = (await call(id, 'device.list')).result as { devices: { name: string; net: { interface: string } | null; profile: { name: string } }[] };
    expect(dl.devices[0]).toMatchObject({ name: 'vlrxe0', net: { interface: 'lo' }, profile: { name: 'rxe' } });
    const pcap = Buffer.from(((await call(id, 'pcap.get')).result as { base64: string }).base64, 'base64');
    expect(pcap.readUInt32LE(0)).toBe(0xa1b2c3d4);
    expect(pcap.readUInt32LE(20)).toBe(1);                         // LINKTYPE_ETHERNET
    expect(pcap.readUInt32LE(24 + 4)).toBe(1500);                  // 1.5 ms -> 0 s 1500 us
    expect(pcap.subarray(24 + 16).toString('hex')).toBe(FRAME);
  });

  it('refuses what the program owns, with the reason, and names a missing object or session', async () => {
    const r = await call(id, 'qp.destroy', { qp: 5 });
    expect(r.error).toMatchObject({ code: 'PROGRAM_OWNED' });
    expect(r.error!.message).toContain('fake (pid 4242) owns this device');
    expect((await call(id, 'qp.query', { qp: 99 })).error).toMatchObject({ code: 'ENOENT' });
    expect((await call(id, 'qp.query', { qp: 'x' })).error?.code).toBe('BAD_REQUEST');
    expect((await call(999, 'session.info')).error).toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a wrong token, a missing hello and a bad version with one line each, and closes only that connection', async () => {
    for (const [line, why] of [[hello({ token: 'nope' }), 'wrong token'], ['{"t":"events","dropped":0,"events":[]}', 'the first line must be a hello'],
      [hello({ v: 99 }), 'protocol version 99'], ['not json at all', 'not JSON']] as const) {
      const c = new Client();
      c.write(`${line}\n`);
      await c.until(() => c.closed, `the close after ${why}`);
      expect(c.lines.length).toBe(1);
      expect(c.json(0).message).toContain(why);
    }
  });

  it('ends a session that sends garbage, an oversized line or a truncated message with the reason; the others go on', async () => {
    const cases: [string, (c: Client) => void, string][] = [
      ['garbage', (c) => c.write('{"t":"events","dropped":0,"events":[{"seq":"x"}]}\n'), 'protocol error: message.events.0'],
      ['not JSON', (c) => c.write('{{{\n'), 'protocol error: a line is not JSON'],
      ['unknown message', (c) => c.write('{"t":"reboot"}\n'), 'protocol error'],
      ['oversized', (c) => c.write(Buffer.alloc(ATTACH_MAX_LINE + 1024, 'x')), `more than ${ATTACH_MAX_LINE} bytes`],
      ['oversized line', (c) => c.write(Buffer.concat([Buffer.alloc(ATTACH_MAX_LINE + 10, 'x'), Buffer.from('\n')])), 'byte limit'],
      ['truncated', (c) => { c.write('{"t":"events","dropped":0,"ev'); c.sock.end(); }, 'in the middle of a message'],
      ['killed', (c) => c.sock.destroy(), 'without a goodbye'],
    ];
    for (const [what, act, why] of cases) {
      const c = new Client();
      c.write(`${hello()}\n`);
      await c.until(() => c.lines.length > 0, `${what}: the welcome`);
      const sid = c.json(0).session!;
      act(c);
      await c.until(() => srv.sessions.get(sid)?.ended !== null || !srv.sessions.has(sid), `${what}: the session's end`);
      const v = (await list()).sessions.find((x) => x.session === sid);
      if (v) {
        expect(v.state, what).toBe('ended');
        expect(v.reason, what).toContain(why);
      }
      if (!what.startsWith('truncated') && what !== 'killed') {
        await c.until(() => c.closed, `${what}: the close`);
        expect(c.lines.at(-1), what).toContain('"t":"error"');
      }
    }
    // the good session is still live (after a beat: the cases above took seconds, a silent one shows as stalled) and
    // readable, and the host answers device commands
    good.write('{"t":"beat"}\n');
    await good.until(() => Date.now() - srv.sessions.get(id)!.lastLine < 1000, 'the beat');
    expect((await list()).sessions.find((x) => x.session === id)?.state).toBe('live');
    expect((await call(id, 'qp.query', { qp: 5 })).ok).toBe(true);
    const r = await new Promise<{ ok: boolean }>((resolve) => core.handle({ type: 'request', id: 3, command: { cmd: 'pd.alloc', args: { device: 1 } } }, (x) => resolve(x as never)));
    expect(r.ok).toBe(true);
  });

  it('a goodbye ends the session as exited; what it sent stays readable', async () => {
    good.write(`${JSON.stringify({ t: 'bye', reason: 'exited' })}\n`);
    good.sock.end();
    await good.until(() => srv.sessions.get(id)!.ended !== null, 'the end');
    expect((await list()).sessions.find((x) => x.session === id)).toMatchObject({ state: 'ended', reason: 'the program exited' });
    expect((await call(id, 'qp.query', { qp: 5 })).ok).toBe(true);
    expect((await call(id, 'events.recent')).ok).toBe(true);
  });
});
