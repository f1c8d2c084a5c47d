// Validation of raw client messages: bad JSON, unknown command, wrong type -> an error that names the field.
import { describe, expect, it } from 'vitest';
import { parseToHost } from '../protocol/index.ts';
import { HostCore } from './core.ts';
import type { HostExecutor } from './core.ts';
import type { Command, DeviceEvent, Reply } from '../protocol/index.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

describe('parseToHost', () => {
  it('refuses text that is not JSON', () => {
    const r = parseToHost('{"type":"request",');
    expect(r.ok).toBe(false);
    if (!r.ok) { expect(r.reply.error?.code).toBe('BAD_JSON'); expect(r.reply.id).toBeNull(); }
  });
  it('names the field of an unknown command and keeps the request id', () => {
    const r = parseToHost(JSON.stringify({ type: 'request', id: 7, command: { cmd: 'mr.frobnicate', args: {} } }));
    expect(r.ok).toBe(false);
    if (!r.ok) { expect(r.reply.id).toBe(7); expect(r.reply.error?.field).toBe('command.cmd'); expect(r.reply.error?.message).toMatch(/^command\.cmd: /); }
  });
  it('names the field with a wrong type in mr.reg', () => {
    const r = parseToHost({ type: 'request', id: 3, command: { cmd: 'mr.reg', args: { pd: 1, addr: 4096, length: 'big', access: [] } } });
    expect(r.ok).toBe(false);
    if (!r.ok) { expect(r.reply.error?.code).toBe('BAD_REQUEST'); expect(r.reply.error?.field).toBe('command.args.length'); expect(r.reply.error?.message).toContain('command.args.length'); }
  });
  it('names a bad access flag inside an array', () => {
    const r = parseToHost({ type: 'request', id: 4, command: { cmd: 'mr.reg', args: { pd: 1, addr: 0, length: 8, access: ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_EVERYTHING'] } } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reply.error?.field).toBe('command.args.access.1');
  });
  it('refuses unknown extra fields (strict)', () => {
    const r = parseToHost({ type: 'request', id: 5, command: { cmd: 'pd.alloc', args: { device: 1, colour: 'red' } } });
    expect(r.ok).toBe(false);
  });
  it('accepts a valid request and fills defaults', () => {
    const r = parseToHost({ type: 'request', id: 1, command: { cmd: 'cq.poll', args: { cq: 3 } } });
    expect(r.ok).toBe(true);
    if (r.ok && r.msg.type === 'request' && r.msg.command.cmd === 'cq.poll') expect(r.msg.command.args.max).toBe(16);
  });
});

/** A recording executor: the host logic is tested here without native code (the native path is in host.test.ts). */
class RecordingExecutor implements HostExecutor {
  autorun = { on: false, stepsPerSecond: 1000 };
  seen: Command[] = [];
  exec(c: Command) { this.seen.push(c); return c.cmd === 'pd.alloc' && c.args.device === 99 ? { ok: false as const, error: { code: 'ENOENT', message: 'args.device: no device 99' } } : { ok: true as const, result: { n: this.seen.length } }; }
  drainEvents(): DeviceEvent[] { return []; }
  pcap() { return new Uint8Array(); }
  close() {}
}

describe('HostCore.handle', () => {
  it('answers a malformed command with the field and goes on with the next one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-host-'));
    const ex = new RecordingExecutor();
    const core = new HostCore(ex, { sessionDir: dir, defaultDevice: null });
    core.start();
    const replies: Reply[] = [];
    core.handle(JSON.stringify({ type: 'request', id: 1, command: { cmd: 'mr.reg', args: { pd: 'one', addr: 0, length: 8, access: [] } } }), (r) => replies.push(r));
    core.handle(JSON.stringify({ type: 'request', id: 2, command: { cmd: 'device.create', args: { profile: 'rxe' } } }), (r) => replies.push(r));
    core.handle(JSON.stringify({ type: 'request', id: 3, command: { cmd: 'pd.alloc', args: { device: 99 } } }), (r) => replies.push(r));
    expect(replies[0]).toMatchObject({ id: 1, ok: false, error: { field: 'command.args.pd' } });
    expect(replies[1]).toMatchObject({ id: 2, ok: true });
    expect(replies[2]).toMatchObject({ id: 3, ok: false, error: { code: 'ENOENT' } });
    expect(ex.seen.map((c) => c.cmd)).toEqual(['device.create', 'pd.alloc']);   // the bad one never reached the executor
    // only the successful state-changing command is journaled
    expect(core.journal.read().entries.map((e) => e.command.cmd)).toEqual(['device.create']);
    core.close();
  });
});

describe('HostCore.register', () => {
  it('answers a registered command in the host; device commands it runs are journaled, the command itself is not', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-host-'));
    const ex = new RecordingExecutor();
    const core = new HostCore(ex, { sessionDir: dir, defaultDevice: null });
    core.start();
    core.register('session.info', (_c, host) => {
      const r = host.execute({ cmd: 'buffer.alloc', args: { length: 64 } });
      return { ok: true, result: { viaHost: true, inner: r.ok } };
    });
    const replies: Reply[] = [];
    core.handle({ type: 'request', id: 1, command: { cmd: 'session.info', args: {} } }, (r) => replies.push(r));
    expect(replies[0]).toMatchObject({ id: 1, ok: true, result: { viaHost: true, inner: true } });
    expect(ex.seen.map((c) => c.cmd)).toEqual(['buffer.alloc']);
    expect(core.journal.read().entries.map((e) => e.command.cmd)).toEqual(['buffer.alloc']);
    core.close();
  });
});

describe('host extension API', () => {
  it('onStart brackets the journal replay, onCommand sees replayed and live device commands with their outcomes, onEvents their events', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-host-'));
    const first = new HostCore(new RecordingExecutor(), { sessionDir: dir, defaultDevice: null });
    first.start();
    first.execute({ cmd: 'buffer.alloc', args: { length: 64 } });
    first.close();

    class Evented extends RecordingExecutor {
      private q: DeviceEvent[] = [];
      exec(c: Command) { const r = super.exec(c); this.q.push({ seq: this.seen.length, t: 0, kind: 'ObjectCreated', device: 1, obj: this.seen.length, objKind: 'buffer', a: 0, b: 0, c: 0, d: 0 }); return r; }
      drainEvents(): DeviceEvent[] { const q = this.q; this.q = []; return q; }
    }
    const core = new HostCore(new Evented(), { sessionDir: dir, defaultDevice: null });
    const log: string[] = [];
    core.onStart((phase, report) => log.push(`start ${phase}${report ? ` ${report.entries}` : ''}`));
    core.onCommand((c, r, { replay }) => log.push(`${replay ? 'replayed' : 'ran'} ${c.cmd} ${r.ok}`));
    core.onEvents((evs, { complete, inCommand }) => log.push(`events ${evs.length} ${complete} ${inCommand}`));
    core.start();
    core.execute({ cmd: 'pd.alloc', args: { device: 99 } });
    core.handle({ type: 'request', id: 1, command: { cmd: 'session.info', args: {} } }, () => {});
    expect(log).toEqual([
      'start replaying', 'replayed buffer.alloc true', 'events 1 true false', 'start started 1',
      'events 1 true true', 'ran pd.alloc false',
      'events 1 true true', 'ran session.info true',
    ]);
    core.close();
  });
  it('register(descriptor) takes console commands only: a device command stays the device\'s', () => {
    const core = new HostCore(new RecordingExecutor(), { sessionDir: fs.mkdtempSync(path.join(os.tmpdir(), 'vl-host-')), defaultDevice: null });
    expect(() => core.register({ name: 'qp.create', handler: () => ({ ok: false, error: { code: 'X', message: 'x' } }) })).toThrow(/device command/);
    core.register({ name: 'lab.list', handler: () => ({ ok: true, result: { labs: [] } }) });
    const replies: Reply[] = [];
    core.handle({ type: 'request', id: 2, command: { cmd: 'lab.list', args: {} } }, (r) => replies.push(r));
    expect(replies[0]).toMatchObject({ id: 2, ok: true, result: { labs: [] } });
    expect(core.journal.read().entries).toEqual([]);
    core.close();
  });
});
