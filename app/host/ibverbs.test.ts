// Real-device listing: libibverbs' names win, sysfs adds details, and nothing claims to be drivable yet.
import { describe, expect, it } from 'vitest';
import { realDevices } from './ibverbs.ts';
import { loadAddon } from './native.ts';

describe('realDevices', () => {
  it('lists what libibverbs reports, marked not usable (backend not built yet)', () => {
    const r = realDevices({ library: true, devices: [{ name: 'rxe_eth0', guid: '5054:00ff:fe12:3456' }] });
    expect(r.libibverbs).toBe(true);
    expect(r.devices).toEqual([expect.objectContaining({ name: 'rxe_eth0', guid: '5054:00ff:fe12:3456', usable: false })]);
    expect(r.devices[0]!.note).toContain('not built yet');
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
