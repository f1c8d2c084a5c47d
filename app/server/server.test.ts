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
import type { FrameBatch, HostStatus } from '../protocol/index.ts';
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
  // onHost replays the current status at once (before it returns the unsubscribe function)
  return new Promise((resolve) => {
    let done = false;
    let off: (() => void) | undefined;
    off = t.onHost((s) => { if (done || !pred(s)) return; done = true; off?.(); resolve(s); });
    if (done) off();
  });
}

describe('browser-mode server', () => {
  it('serves the renderer with a strict CSP and refuses foreign Host headers', async () => {
    const res = await fetch(`http://127.0.0.1:${srv.port}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toContain('unsafe-inline');   // neither inline scripts nor inline styles
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
    t.onEvents((b) => { if (b.type === 'events') events.push(b.count); });

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

  it('sends the autorun flood as binary event frames that the transport decodes (RDMA WRITE packets included)', async () => {
    const t = new WebSocketTransport({ url: `ws://127.0.0.1:${srv.port}/rpc?token=test-token`, WebSocketImpl: WebSocket as unknown as typeof globalThis.WebSocket });
    await t.ready();
    await waitFor(t, (s) => s.state === 'up');
    const frames: FrameBatch[] = [];
    t.onEvents((b) => { if ('frames' in b) frames.push(b); });
    const run = async (cmd: string, args: Record<string, unknown>) => {
      const r = await t.call({ cmd, args } as never);
      expect(r.ok, `${cmd}: ${JSON.stringify(r.error)}`).toBe(true);
      return r.result as Record<string, number>;
    };
    const dev = (await run('device.create', { profile: 'rxe', name: 'bin_a' })).device!;
    const pd = (await run('pd.alloc', { device: dev })).pd!;
    const a = await run('buffer.alloc', { length: 4096 }); const b = await run('buffer.alloc', { length: 4096 });
    const acc = ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE'];
    const ma = await run('mr.reg', { pd, addr: a.addr, length: 4096, access: acc });
    const mb = await run('mr.reg', { pd, addr: b.addr, length: 4096, access: acc });
    const cq = (await run('cq.create', { device: dev, cqe: 64 })).cq!;
    const cap = { maxSendWr: 16, maxRecvWr: 16, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 };
    const q1 = (await run('qp.create', { pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC', cap })).qp!;
    const q2 = (await run('qp.create', { pd, sendCq: cq, recvCq: cq, qpType: 'IBV_QPT_RC', cap })).qp!;
    await run('qp.connect', { qp: q1, peer: q2 });
    await run('post.send', { qp: q1, wrs: [{ wrId: 7, opcode: 'IBV_WR_RDMA_WRITE', sendFlags: ['IBV_SEND_SIGNALED'], sgList: [{ addr: a.addr, length: 64, lkey: ma.lkey }], remoteAddr: b.addr, rkey: mb.rkey }] });
    await run('engine.autorun', { on: true, stepsPerSecond: 10_000 });
    const deadline = Date.now() + 10_000;
    const evs = () => frames.flatMap((f) => f.frames.flatMap((x) => x.events()));
    while (!evs().some((e) => e.kind === 'Cqe') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await run('engine.autorun', { on: false, stepsPerSecond: 1000 });
    const all = evs();
    const sent = all.find((e) => e.kind === 'PacketSent');
    expect(sent?.pkt).toMatchObject({ opcodeName: expect.stringMatching(/RDMA Write/i), reth: { rkey: mb.rkey, dmaLen: 64 } });
    expect(all.find((e) => e.kind === 'Cqe')?.wc).toMatchObject({ wrId: 7, statusName: 'IBV_WC_SUCCESS', opcodeName: 'IBV_WC_RDMA_WRITE' });
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => all[0]!.seq + i));   // in order, none missing
    t.close();
  }, 30_000);
});
