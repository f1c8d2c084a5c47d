// Real-device listing: libibverbs' names win, sysfs adds details; usable when the addon has the real-device backend.
import { describe, expect, it } from 'vitest';
import { realDevices } from './ibverbs.ts';
import { loadAddon } from './native.ts';

describe('realDevices', () => {
  it('lists what libibverbs reports; usable only with the real-device backend in the addon', () => {
    const r = realDevices({ library: true, devices: [{ name: 'rxe_eth0', guid: '5054:00ff:fe12:3456' }] }, true);
    expect(r.libibverbs).toBe(true);
    expect(r.devices).toEqual([expect.objectContaining({ name: 'rxe_eth0', guid: '5054:00ff:fe12:3456', usable: true })]);
    expect(r.devices[0]!.note).toContain("session.reset { backend: 'ibverbs', device: 'rxe_eth0' }");
    const old = realDevices({ library: true, devices: [{ name: 'rxe_eth0', guid: '5054:00ff:fe12:3456' }] }, false);
    expect(old.devices[0]).toMatchObject({ usable: false });
    expect(old.devices[0]!.note).toContain('no real-device backend');
  });
  it('a listing from Verbs Lab\'s own library is marked as the software device, without sysfs details', () => {
    const r = realDevices({ library: true, software: true, path: '/x/libibverbs.so.1', devices: [{ name: 'vlrxe0', guid: '00564cfffe000001' }] }, true);
    expect(r.devices).toEqual([{ name: 'vlrxe0', ports: [], guid: '00564cfffe000001', usable: true, software: true, library: '/x/libibverbs.so.1', note: expect.stringContaining('software device behind the libibverbs ABI') }]);
  });
  it('passes the library error through', () => {
    const r = realDevices({ library: true, error: 'ibv_get_device_list failed (no RDMA subsystem?)', devices: [] });
    expect(r.devices).toEqual([]);
    expect(r.error).toContain('ibv_get_device_list');
  });
  it('the addon enumerates through dlopen without crashing, with or without libibverbs', () => {
    const e = loadAddon().ibverbsDevices();
    expect(typeof e.library).toBe('boolean');
    expect(Array.isArray(e.devices)).toBe(true);
    if (!e.library) expect(e.error).toBeTruthy();
  });
});
