// The nvmf.* commands through the executor: bad input gets a clear error and the session goes on.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createExecutor, type NativeExecutor } from '../../app/host/executor.ts';
import type { Command } from '../../app/protocol/index.ts';

let x: NativeExecutor;
const run = (cmd: string, args: Record<string, unknown>) => x.exec({ cmd, args } as Command);
const code = (r: ReturnType<typeof run>) => (r.ok ? 'ok' : r.error.code);

beforeEach(() => {
  x = createExecutor({ seed: 2 });
  run('device.create', { profile: 'rxe', name: 't' }); run('device.create', { profile: 'rxe', name: 'h' });
});
afterEach(() => x.close());

describe('nvmf.* commands', () => {
  it('refuse what cannot be done, with the errno and the field, and the session goes on', () => {
    expect(code(run('nvmf.io', { qid: 1, op: 'read' }))).toBe('ENOENT');                       // no setup yet
    expect(code(run('nvmf.state', {}))).toBe('ENOENT');
    const same = run('nvmf.setup', { targetDevice: 1, hostDevice: 1 });
    expect(same.ok ? null : same.error.field).toBe('args.hostDevice');
    expect(code(run('nvmf.setup', { targetDevice: 1, hostDevice: 9 }))).toBe('ENOENT');
    expect(code(run('nvmf.setup', { targetDevice: 1, hostDevice: 2, lbaSize: 4096, maxIo: 6144 }))).not.toBe('ok');   // not a multiple
    expect(code(run('nvmf.setup', { targetDevice: 1, hostDevice: 2 }))).toBe('ok');
    expect(code(run('nvmf.setup', { targetDevice: 1, hostDevice: 2 }))).toBe('EEXIST');
    expect(code(run('nvmf.admin', { op: 'keep-alive' }))).toBe('ENOENT');                      // no admin queue
    expect(code(run('nvmf.queue', { qid: 0 }))).toBe('ok');
    expect(code(run('nvmf.queue', { qid: 0 }))).toBe('EEXIST');
    expect(code(run('nvmf.admin', { op: 'property-get' }))).toBe('EINVAL');                    // needs an offset
    expect(code(run('nvmf.connect', { qid: 5 }))).toBe('ENOENT');
    const c = run('nvmf.connect', { qid: 0 });
    expect(c.ok && (c.result as { cqe: { statusName: string } }).cqe.statusName).toBe('NVME_SC_SUCCESS');
  });

  it('a session.reset starts the agents over', () => {
    expect(code(run('nvmf.setup', { targetDevice: 1, hostDevice: 2 }))).toBe('ok');
    x.resetSession(3);
    expect(code(run('nvmf.state', {}))).toBe('ENOENT');
  });
});

describe('nvmf.offload* commands', () => {
  it('refuse without a backend, on a device without offload caps, twice, and on a queue made before the backend', () => {
    expect(code(run('nvmf.offload', {}))).toBe('ENOENT');                                       // no setup yet
    expect(code(run('nvmf.setup', { targetDevice: 1, hostDevice: 2 }))).toBe('ok');
    expect(code(run('nvmf.queue', { qid: 1 }))).toBe('ok');
    expect(code(run('nvmf.offload_enable', { qid: 1 }))).toBe('ENOENT');                       // no backend
    expect(code(run('nvmf.offload_fault', { fault: 'timeout' }))).toBe('ENOENT');
    expect(code(run('nvmf.offload', {}))).toBe('EOPNOTSUPP');                                   // rxe: no NVMe-oF offload caps
    expect(code(run('nvmf.state', {}))).toBe('ok');
  });

  it('on cx: the backend once, enable only on queues that receive from its SRQ', () => {
    x.resetSession(3);
    run('device.create', { profile: 'cx', name: 't' }); run('device.create', { profile: 'cx', name: 'h' });
    expect(code(run('nvmf.setup', { targetDevice: 1, hostDevice: 2 }))).toBe('ok');
    expect(code(run('nvmf.queue', { qid: 1 }))).toBe('ok');
    const o = run('nvmf.offload', {});
    expect(o.ok && (o.result as { map: { feNsid: number } }).map.feNsid).toBe(1);
    expect(code(run('nvmf.offload', {}))).toBe('EEXIST');
    const before = run('nvmf.offload_enable', { qid: 1 });
    expect(before.ok ? null : [before.error.code, before.error.field]).toEqual(['EINVAL', 'args.qid']);
    expect(code(run('nvmf.offload_enable', { qid: 2 }))).toBe('ENOENT');
    expect(code(run('nvmf.queue', { qid: 2 }))).toBe('ok');
    const en = run('nvmf.offload_enable', { qid: 2 });
    expect(en.ok && (en.result as { connected: boolean }).connected).toBe(false);
    const st = run('nvmf.state', {});
    expect(st.ok && (st.result as { offload: { enabledQids: number[] } }).offload.enabledQids).toEqual([2]);
  });
});
