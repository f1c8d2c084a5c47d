// Browser-mode server end to end (real backend host child + native addon), driven through the renderer's
// WebSocket transport: token and Origin checks, CSP, readable errors, host death and journal replay.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startServer } from './server.ts';
import type { RunningServer } from './server.ts';
import { WebSocketTransport } from '../../renderer/src/transport/index.ts';
import type { HostStatus } from '../protocol/index.ts';
import type { ConsoleTransport } from '../../renderer/src/store/store.ts';

let srv: RunningServer;
const staticDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-static-'));
fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>t</title>');

beforeAll(async () => {
  srv = await startServer({ port: 0, token: 'test-token', staticDir, sessionDir: fs.mkdtempSync(path.join(os.tmpdir(), 'vl-srv-')), log: () => {} });
});
afterAll(async () => { await srv?.close(); });

function refused(url: string, origin?: string): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, origin ? { origin } : {});
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => { ws.close(); resolve(101); });
    ws.on('error', () => {});
  });
}

function waitFor(t: WebSocketTransport, pred: (s: HostStatus) => boolean): Promise<HostStatus> {
  return new Promise((resolve) => { const off = t.onHost((s) => { if (pred(s)) { off(); resolve(s); } }); });
}

describe('browser-mode server', () => {
  it('serves the renderer with a strict CSP and refuses foreign Host headers', async () => {
    const res = await fetch(`http://127.0.0.1:${srv.port}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    const evil = await new Promise<number>((resolve) => {
      import('node:http').then(({ request }) => {
        const r = request({ host: '127.0.0.1', port: srv.port, path: '/', headers: { Host: 'attacker.example:80' } }, (res) => resolve(res.statusCode ?? 0));
        r.end();
      });
    });
    expect(evil).toBe(421);
  });

  it('requires the token and our own Origin on /rpc', async () => {
    const base = `ws://127.0.0.1:${srv.port}/rpc`;
    expect(await refused(`${base}?token=wrong`, `http://127.0.0.1:${srv.port}`)).toBe(401);
    expect(await refused(`${base}?token=test-token`, 'http://evil.example')).toBe(403);
    expect(await refused(`${base}?token=test-token`, `http://127.0.0.1:${srv.port}`)).toBe(101);
  });

  it('answers commands, names the bad field, survives host death and replays the journal', async () => {
    const t = new WebSocketTransport({ url: `ws://127.0.0.1:${srv.port}/rpc?token=test-token`, WebSocketImpl: WebSocket as unknown as typeof globalThis.WebSocket });
    await t.ready();
    const asConsole: ConsoleTransport = t;      // compile-time: the UI store accepts this transport
    expect(asConsole.call).toBeTypeOf('function');
    await waitFor(t, (s) => s.state === 'up');
    const events: number[] = [];
    t.onEvents((b) => { events.push(b.count); });

    const list = await t.call({ cmd: 'device.list', args: {} });
    expect(list.ok).toBe(true);
    expect((list.result as { devices: { profile: { name: string } }[] }).devices[0]!.profile.name).toBe('rxe');

    const pd = await t.call({ cmd: 'pd.alloc', args: { device: 1 } });
    expect(pd.ok).toBe(true);
    const pdHandle = (pd.result as { pd: number }).pd;

    // a malformed command (sent raw, as a hostile page could) gets an error naming the field ...
    const raw = new WebSocket(`ws://127.0.0.1:${srv.port}/rpc?token=test-token`);
    await new Promise((r) => raw.once('open', r));
    const reply = await new Promise<{ id: number; ok: boolean; error: { field: string; message: string } }>((resolve) => {
      raw.on('message', (d) => { const m = JSON.parse(d.toString()); if (m.type === 'reply') resolve(m); });
      raw.send(JSON.stringify({ type: 'request', id: 41, command: { cmd: 'mr.reg', args: { pd: pdHandle, addr: 0, length: 'lots', access: [] } } }));
    });
    raw.close();
    expect(reply).toMatchObject({ id: 41, ok: false, error: { field: 'command.args.length' } });
    // ... and the session goes on
    expect((await t.call({ cmd: 'session.info', args: {} })).ok).toBe(true);

    // kill the host: status down with the reason; calls fail with HOST_DOWN instead of hanging
    const down = waitFor(t, (s) => s.state === 'down');
    t.control('kill-host');
    expect((await down).reason).toContain('SIGKILL');
    const during = await t.call({ cmd: 'device.list', args: {} });
    expect(during).toMatchObject({ ok: false, error: { code: 'HOST_DOWN' } });

    // restart: the new host replays the journal, so the PD is back under the same handle
    const up = waitFor(t, (s) => s.state === 'up');
    t.control('restart-host');
    const st = await up;
    expect(st.restarts).toBe(1);
    expect(st.journalEntries).toBe(2);
    const info = await t.call({ cmd: 'session.info', args: {} });
    expect((info.result as { objects: { handle: number; kind: string }[] }).objects).toContainEqual({ handle: pdHandle, kind: 'pd', device: 1 });
    expect(events.length).toBeGreaterThan(0);

    // a crash inside native code (std::abort) is reported with its signal, and a restart recovers too
    const crashed = waitFor(t, (s) => s.state === 'down');
    srv.crashHostNatively();
    expect((await crashed).reason).toContain('SIGABRT');
    const up2 = waitFor(t, (s) => s.state === 'up');
    t.control('restart-host');
    expect((await up2).restarts).toBe(2);
    expect((await t.call({ cmd: 'qp.query', args: { qp: 999 } })).error?.code).toBe('ENOENT');
    t.close();
  }, 30_000);
});
