// The MessagePort transport (Electron) against the real host logic, over Node's MessageChannel (same
// postMessage/onmessage semantics as the renderer's ports): replies are matched by id, event batches and host
// status arrive, and a host that goes down fails pending calls with HOST_DOWN instead of leaving them hanging.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { portMessage } from '../../../app/host/batcher.ts';
import { HostCore } from '../../../app/host/core.ts';
import { NativeExecutor } from '../../../app/host/executor.ts';
import type { EventBatch, FrameBatch, HostStatus } from '../../../app/protocol/index.ts';
import { MessagePortTransport } from './index.ts';

function until<T>(get: () => T | undefined): Promise<T> {
  return new Promise((resolve) => {
    const tick = () => { const v = get(); if (v !== undefined) resolve(v); else setTimeout(tick, 5); };
    tick();
  });
}

describe('MessagePortTransport', () => {
  it('carries commands, replies, event batches and host status', async () => {
    const hostCh = new MessageChannel();
    const ctlCh = new MessageChannel();
    const core = new HostCore(new NativeExecutor(), { sessionDir: fs.mkdtempSync(path.join(os.tmpdir(), 'vl-port-')), defaultDevice: 'rxe' });
    core.start();
    const hostSide = hostCh.port2;
    core.addClient((m) => hostSide.postMessage(portMessage(m)));
    hostSide.on('message', (m) => core.handle(m, (r) => hostSide.postMessage(r)));

    const t = new MessagePortTransport(hostCh.port1 as unknown as MessagePort, ctlCh.port1 as unknown as MessagePort);
    const statuses: HostStatus[] = [];
    const batches: (EventBatch | FrameBatch)[] = [];
    t.onHost((s) => statuses.push(s));
    t.onEvents((b) => { if (b.type === 'events') batches.push(b); });
    const controls: unknown[] = [];
    ctlCh.port2.on('message', (m) => controls.push(m));

    ctlCh.port2.postMessage({ type: 'host', state: 'up', pid: 1, restarts: 0 });
    await until(() => statuses[0]);
    expect(statuses[0]!.state).toBe('up');

    const [a, b] = await Promise.all([t.call({ cmd: 'pd.alloc', args: { device: 1 } }), t.call({ cmd: 'device.list', args: {} })]);
    expect(a).toMatchObject({ ok: true, result: { pd: 2 } });
    expect((b.result as { devices: unknown[] }).devices.length).toBe(1);
    const bad = await t.call({ cmd: 'pd.alloc', args: { device: 'x' } } as never);
    expect(bad).toMatchObject({ ok: false, error: { field: 'command.args.device' } });
    await until(() => batches.find((x) => 'events' in x && x.events.some((e) => e.objKind === 'pd')));
    // the autorun path: events as binary frames, through the port as bytes, decoded by the transport
    expect(core.executor.execBulk!({ cmd: 'pd.alloc', args: { device: 1 } }).ok).toBe(true);
    core.pumpEvents(true);
    const fb = await until(() => batches.find((x): x is FrameBatch => 'frames' in x));
    const evs = fb.frames.flatMap((f) => f.events());
    expect(evs.map((e) => [e.kind, e.objKind, e.obj])).toContainEqual(['ObjectCreated', 'pd', 3]);
    expect(fb.count).toBe(evs.length);
    expect(fb.first).toBe(evs[0]!.seq);

    t.control('kill-host');
    await until(() => controls[0]);
    expect(controls[0]).toEqual({ type: 'control', action: 'kill-host' });

    // the host dies with a call in flight: the call resolves with HOST_DOWN
    hostSide.removeAllListeners('message');
    const pending = t.call({ cmd: 'session.info', args: {} });
    ctlCh.port2.postMessage({ type: 'host', state: 'down', reason: 'exited with code 134', restarts: 0 });
    expect(await pending).toMatchObject({ ok: false, error: { code: 'HOST_DOWN' } });
    expect((await t.call({ cmd: 'session.info', args: {} })).error?.message).toContain('exited with code 134');
    t.close();
    core.close();
    hostCh.port2.close();
    ctlCh.port2.close();
  });
});
