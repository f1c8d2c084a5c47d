// No client input kills the browser-mode server or its backend host: every kind of bad message gets a reply
// (or, over the socket limit, a close with the reason) and the session goes on with the same host process, the
// other consoles untouched. The cases are one table (app/host/badinput.cases.ts) shared with the MessagePort test.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BAD_INPUTS, GOOD } from '../host/badinput.cases.ts';
import type { Reply } from '../protocol/index.ts';
import { TOO_BIG_REASON, WS_MAX_PAYLOAD, startServer } from './server.ts';
import type { RunningServer } from './server.ts';

const TOKEN = 'bad-input-token';
const staticDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-static-'));
fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>t</title>');
let srv: RunningServer;
let other: RunningServer;
const logs: string[] = [];

beforeAll(async () => {
  const opts = { port: 0, token: TOKEN, staticDir, log: (l: string) => logs.push(l), maxInFlight: 4 };
  srv = await startServer({ ...opts, sessionDir: fs.mkdtempSync(path.join(os.tmpdir(), 'vl-bad-')) });
  other = await startServer({ ...opts, sessionDir: fs.mkdtempSync(path.join(os.tmpdir(), 'vl-bad-other-')) });
});
afterAll(async () => { await srv?.close(); await other?.close(); });

/** a raw client: every text message it gets, in order, and how its socket closed */
class Client {
  ws: WebSocket;
  msgs: Record<string, unknown>[] = [];
  closed: Promise<{ code: number; reason: string }>;
  private waiters: (() => void)[] = [];
  constructor(s: RunningServer) {
    this.ws = new WebSocket(`ws://127.0.0.1:${s.port}/rpc?token=${TOKEN}`, { maxPayload: 64 << 20 });
    this.ws.on('message', (d, bin) => {
      if (bin) return;
      this.msgs.push(JSON.parse(d.toString()) as Record<string, unknown>);
      for (const w of this.waiters.splice(0)) w();
    });
    this.ws.on('error', () => {});
    this.closed = new Promise((resolve) => this.ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }
  async open(): Promise<void> {
    if (this.ws.readyState !== WebSocket.OPEN) await new Promise((r) => this.ws.once('open', r));
    await this.until(() => this.msgs.some((m) => m.type === 'host' && m.state === 'up'));
  }
  async until<T>(pick: () => T | undefined | false, ms = 20_000): Promise<T> {
    const t0 = Date.now();
    for (;;) {
      const v = pick();
      if (v) return v;
      if (Date.now() - t0 > ms) throw new Error('no such message in time');
      await new Promise<void>((r) => { this.waiters.push(r); setTimeout(r, 50); });
    }
  }
  /** send, and wait for the next reply (replies come in order: one host, one socket) */
  async send(data: string | Buffer, binary = false): Promise<Reply> {
    const before = this.replies().length;
    this.ws.send(data, { binary });
    return this.until(() => this.replies()[before]);
  }
  replies(): Reply[] { return this.msgs.filter((m) => m.type === 'reply') as unknown as Reply[]; }
  async call(id: number, text: string): Promise<Reply> {
    this.ws.send(text);
    return this.until(() => this.replies().find((r) => r.id === id));
  }
}

const hostPid = (s: RunningServer) => s.status().pid;

describe('bad input over the WebSocket', () => {
  it('each kind of bad message gets its reply and the session goes on', async () => {
    const c = new Client(srv);
    await c.open();
    const pid = hostPid(srv);
    expect(pid).toBeGreaterThan(0);
    expect((await c.call(1000, JSON.stringify({ type: 'request', id: 1000, command: { cmd: 'pd.alloc', args: { device: 1 } } }))).result).toMatchObject({ pd: 2 });
    let id = 2000;
    for (const bad of BAD_INPUTS) {
      const r = await c.send(bad.text);
      expect(r.ok, bad.what).toBe(false);
      expect(r.error?.code, `${bad.what}: ${r.error?.message}`).toBe(bad.code);
      expect(r.id, bad.what).toBe(bad.id);
      if (bad.field) expect(r.error?.field ?? '', `${bad.what}: ${r.error?.message}`).toMatch(new RegExp(`^${bad.field.replace(/\./g, '\\.')}`));
      if (bad.says) expect(r.error?.message, bad.what).toContain(bad.says);
      const good = await c.call(++id, GOOD(id));
      expect(good.ok, `after ${bad.what}`).toBe(true);
    }
    // binary where JSON text is expected
    const bin = await c.send(Buffer.from([0x7b, 0x00, 0xff, 0xfe]), true);
    expect(bin.error).toMatchObject({ code: 'BAD_REQUEST' });
    expect(bin.error?.message).toContain('binary');
    expect((await c.call(++id, GOOD(id))).ok).toBe(true);
    expect(hostPid(srv)).toBe(pid);           // the same host process answered everything
    c.ws.close();
  }, 120_000);

  it('a message over the socket limit closes that socket with 1009 and the reason; the other consoles, the server and the session go on', async () => {
    const a = new Client(srv);
    const b = new Client(srv);
    await a.open();
    await b.open();
    const pid = hostPid(srv);
    const before = (await b.call(1, GOOD(1))).result;
    for (const size of [WS_MAX_PAYLOAD + 1, 50 * 1000 * 1000]) {
      const c = size === WS_MAX_PAYLOAD + 1 ? a : new Client(srv);
      await c.open();
      c.ws.send('x'.repeat(size));
      const closed = await c.closed;
      expect(closed.code).toBe(1009);
      expect(closed.reason).toBe(TOO_BIG_REASON);
      // the other console still talks to the same host
      const r = await b.call(size, GOOD(size));
      expect(r.ok).toBe(true);
      expect(r.result).toEqual(before);
    }
    expect(hostPid(srv)).toBe(pid);
    expect((await fetch(`http://127.0.0.1:${srv.port}/healthz`)).status).toBe(200);
    expect(logs.some((l) => /websocket \d+: Max payload size exceeded; connection closed/.test(l))).toBe(true);
    // a new console connects and finds the session as it was
    const again = new Client(srv);
    await again.open();
    expect((await again.call(7, GOOD(7))).result).toEqual(before);
    again.ws.close();
    b.ws.close();
  }, 120_000);

  it('more requests than may wait for the host are answered BUSY at once, each exactly once', async () => {
    const c = new Client(srv);
    await c.open();
    const n = 64;
    for (let i = 0; i < n; i++) c.ws.send(JSON.stringify({ type: 'request', id: 5000 + i, command: { cmd: 'engine.run', args: {} } }));
    const all = await c.until(() => c.replies().length >= n && c.replies());
    await new Promise((r) => setTimeout(r, 200));
    expect(c.replies().length).toBe(n);
    expect(new Set(all.map((r) => r.id)).size).toBe(n);
    const busy = all.filter((r) => r.error?.code === 'BUSY');
    expect(busy.length).toBeGreaterThan(0);
    expect(busy[0]!.error!.message).toContain('more than 4 requests');
    expect(all.filter((r) => r.ok).length).toBeGreaterThanOrEqual(4);
    expect((await c.call(9999, GOOD(9999))).ok).toBe(true);
    c.ws.close();
  }, 60_000);

  it('handles of another session name nothing here (or this session\'s own object), never the other session\'s', async () => {
    const mine = new Client(srv);
    const theirs = new Client(other);
    await mine.open();
    await theirs.open();
    // the other session makes objects until its handles are past every handle of this one
    const mineList = await mine.call(1, JSON.stringify({ type: 'request', id: 1, command: { cmd: 'session.info', args: {} } }));
    expect(mineList.ok).toBe(true);
    let last = 0;
    for (let i = 0; i < 40; i++) {
      const r = await theirs.call(100 + i, JSON.stringify({ type: 'request', id: 100 + i, command: { cmd: 'pd.alloc', args: { device: 1 } } }));
      last = (r.result as { pd: number }).pd;
    }
    const r = await mine.call(2, JSON.stringify({ type: 'request', id: 2, command: { cmd: 'pd.dealloc', args: { pd: last } } }));
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('ENOENT');
    // the other session's PD is still there: deallocating it there works
    const there = await theirs.call(3, JSON.stringify({ type: 'request', id: 3, command: { cmd: 'pd.dealloc', args: { pd: last } } }));
    expect(there.ok).toBe(true);
    mine.ws.close();
    theirs.ws.close();
  }, 60_000);
});
