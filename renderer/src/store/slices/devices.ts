// The devices slice: software devices and profiles (device.list), real libibverbs devices, PDs, host interfaces
// and the network attachment of a device (device.attachNet / detachNet: the session then runs in real time).
import type { Slice } from '../slice.ts';
import type { Rec } from '../spec.ts';
import { deviceView, profileView, type AttachNetArgs, type DeviceView, type HostInterface, type PdView, type ProfileView } from '../views.ts';

/** the session drives a real device through libibverbs (device.list `backend`); null: the software devices */
export interface BackendView { kind: 'ibverbs'; device: string; library: string; software: boolean }

export interface DevicesSlice {
  devicesLoaded: boolean; devices: DeviceView[]; profiles: ProfileView[]; realDevices: Rec[]; selectedDevice: number | null; pds: PdView[];
  backend: BackendView | null;
  refreshDevices(): Promise<void>; createDevice(profile: string, name?: string): Promise<void>;
  destroyDevice(handle: number): Promise<void>; selectDevice(h: number | null): void; allocPd(device: number): Promise<void>;
  deallocPd(pd: number): Promise<boolean>;
  /** host interfaces (for the "Put on network" form) and whether the session runs in real time (a device is on
   *  the network: the UDP transport drives the clock, so step / run / autorun are refused) */
  interfaces: HostInterface[]; realTime: boolean;
  attachNet(device: number, a: AttachNetArgs): Promise<boolean>; detachNet(device: number): Promise<boolean>;
}

export const createDevicesSlice: Slice<DevicesSlice> = (set, get) => ({
  devicesLoaded: false, devices: [], profiles: [], realDevices: [], selectedDevice: null, pds: [], backend: null,
  async refreshDevices() {
    const r = await get().run('devices', 'device.list', {});
    if (!r) return;
    const devices = r.devices.map(deviceView);
    const profiles = r.profiles.map(profileView);
    const real = r.realDevices as Rec[];
    const sel = get().selectedDevice;
    const ifs = r.interfaces.map((i) => ({ name: i.name, up: i.up, loopback: i.loopback, mtu: i.mtu, addrs: i.addrs }));
    const realTime = devices.some((d) => d.net);
    set({
      interfaces: ifs, realTime, ...(realTime ? { autorun: false } : {}),
      devicesLoaded: true, devices, realDevices: real, backend: r.backend ?? null,
      profiles: profiles.length ? profiles : get().profiles,
      selectedDevice: sel !== null && devices.some((d) => d.handle === sel) ? sel : devices[0]?.handle ?? null,
    });
  },
  async createDevice(profile, name) {
    const r = await get().run('device.create', 'device.create', name ? { profile, name } : { profile });
    if (r) { await get().refreshDevices(); set({ selectedDevice: r.device }); }
  },
  async destroyDevice(handle) {
    if (await get().exec(`device.destroy:${handle}`, { cmd: 'device.destroy', args: { device: handle } })) await get().refreshDevices();
  },
  selectDevice: (h) => set({ selectedDevice: h }),
  interfaces: [], realTime: false,
  async attachNet(device, a) {
    const args: Record<string, unknown> = { device, port: a.port };
    if (a.interface !== undefined) args.interface = a.interface; else args.address = a.address;
    if (a.peerPort !== undefined) args.peerPort = a.peerPort;
    const r = await get().exec(`device.attachNet:${device}`, { cmd: 'device.attachNet', args });
    await get().refreshDevices();
    return !!r;
  },
  async detachNet(device) {
    const r = await get().exec(`device.detachNet:${device}`, { cmd: 'device.detachNet', args: { device } });
    await get().refreshDevices();
    return !!r;
  },
  async allocPd(device) {
    const r = await get().run(`pd.alloc:${device}`, 'pd.alloc', { device });
    const h = r?.pd;
    if (h && !get().pds.some((p) => p.handle === h)) set((s) => ({ pds: [...s.pds, { handle: h, device, destroyed: false }] }));
  },
  async deallocPd(pd) {
    const r = await get().exec(`pd.dealloc:${pd}`, { cmd: 'pd.dealloc', args: { pd } });
    if (r) set((s) => ({ pds: s.pds.map((p) => (p.handle === pd ? { ...p, destroyed: true } : p)) }));
    return !!r;
  },
});
