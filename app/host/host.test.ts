// The host over the real native session: names <-> values, journal replay after a restart, honest errors.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HostCore } from './core.ts';
import { NativeExecutor } from './executor.ts';
import type { Command } from '../protocol/index.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'vl-hostn-'));
const exec = (core: HostCore, c: Command) => core.execute(c);

describe('NativeExecutor', () => {
  it('creates a device and lists it with its profile, numbers and rdma-core names', () => {
    const ex = new NativeExecutor({ seed: 1 });
    const r = ex.exec({ cmd: 'device.create', args: { profile: 'cx' } });
    expect(r.ok).toBe(true);
    const list = ex.exec({ cmd: 'device.list', args: {} });
    expect(list.ok).toBe(true);
    const devs = (list as { result: { devices: { name: string; profile: { name: string; atomicCap: number; atomicCapName: string; deviceCapNames: string[] } }[] } }).result.devices;
    expect(devs.length).toBe(1);
    expect(devs[0]!.profile.name).toBe('cx');
    expect(devs[0]!.profile.atomicCapName).toBe('IBV_ATOMIC_HCA');
    expect(devs[0]!.profile.atomicCap).toBe(1);
    expect(devs[0]!.profile.deviceCapNames).toContain('IBV_DEVICE_MEM_MGT_EXTENSIONS');
    ex.close();
  });
  it('refuses an unknown profile naming the field', () => {
    const ex = new NativeExecutor();
    const r = ex.exec({ cmd: 'device.create', args: { profile: 'nonesuch' } });
    expect(r).toMatchObject({ ok: false, error: { code: 'EINVAL', field: 'args.profile' } });
    ex.close();
  });
  it('writes and reads back session memory by virtual address', () => {
    const ex = new NativeExecutor();
    const b = ex.exec({ cmd: 'buffer.alloc', args: { length: 4096 } });
    expect(b.ok).toBe(true);
    const addr = (b as { result: { addr: number } }).result.addr;
    expect(ex.exec({ cmd: 'memory.write', args: { addr: addr + 10, data: 'c0ffee' } }).ok).toBe(true);
    expect(ex.exec({ cmd: 'memory.read', args: { addr: addr + 8, length: 6 } })).toMatchObject({ ok: true, result: { hex: '0000c0ffee00' } });
    const bad = ex.exec({ cmd: 'memory.read', args: { addr: 12, length: 4 } });
    expect(bad.ok).toBe(false);
    ex.close();
  });
  it('emits ObjectCreated events with decoded fields', () => {
    const ex = new NativeExecutor();
    ex.exec({ cmd: 'device.create', args: { profile: 'rxe' } });
    ex.exec({ cmd: 'pd.alloc', args: { device: 1 } });
    const evs = ex.drainEvents();
    expect(evs.filter((e) => e.kind === 'ObjectCreated').map((e) => e.objKind)).toEqual(['device', 'pd']);
    expect(ex.drainEvents()).toEqual([]);
    ex.close();
  });
});

describe('journal replay', () => {
  it('a restarted host has the same objects (same handles) as before', () => {
    const dir = tmp();
    const a = new HostCore(new NativeExecutor(), { sessionDir: dir, defaultDevice: 'rxe' });
    a.start();
    const pd = exec(a, { cmd: 'pd.alloc', args: { device: 1 } });
    const buf = exec(a, { cmd: 'buffer.alloc', args: { length: 8192 } });
    const addr = (buf as { result: { addr: number } }).result.addr;
    exec(a, { cmd: 'memory.write', args: { addr, data: '0102030405' } });
    exec(a, { cmd: 'device.create', args: { profile: 'iwarp', name: 'peer' } });
    exec(a, { cmd: 'pd.alloc', args: { device: 77 } });                   // fails: not journaled
    const before = exec(a, { cmd: 'session.info', args: {} });
    a.close();                                                              // (a killed host leaves the same file)

    const b = new HostCore(new NativeExecutor(), { sessionDir: dir, defaultDevice: 'rxe' });
    const report = b.start();
    expect(report.entries).toBe(5);                                         // default device + 4 successful commands
    expect(report.failed).toEqual([]);
    const after = exec(b, { cmd: 'session.info', args: {} });
    expect((after as { result: { objects: unknown } }).result.objects).toEqual((before as { result: { objects: unknown } }).result.objects);
    expect(exec(b, { cmd: 'memory.read', args: { addr, length: 5 } })).toMatchObject({ ok: true, result: { hex: '0102030405' } });
    const names = (exec(b, { cmd: 'device.list', args: {} }) as { result: { devices: { name: string }[] } }).result.devices.map((d) => d.name);
    expect(names).toContain('peer');
    expect(pd.ok).toBe(true);
    b.close();
  });
});
