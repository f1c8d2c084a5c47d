// Real RDMA devices as the kernel exposes them to libibverbs (/sys/class/infiniband), so the console and
// `verbslab devices` can say which real devices exist. Driving them (the libibverbs backend) is not built yet.
import fs from 'node:fs';
import path from 'node:path';

export interface RealDevice { name: string; nodeGuid?: string; nodeType?: string; fwVer?: string; ports: { port: number; state?: string; linkLayer?: string }[] }

const read = (p: string): string | undefined => { try { return fs.readFileSync(p, 'utf8').trim(); } catch { return undefined; } };

export function listRealDevices(sysfs = '/sys/class/infiniband'): RealDevice[] {
  let names: string[];
  try { names = fs.readdirSync(sysfs).sort(); } catch { return []; }
  return names.map((name) => {
    const dir = path.join(sysfs, name);
    let ports: RealDevice['ports'] = [];
    try {
      ports = fs.readdirSync(path.join(dir, 'ports')).map(Number).filter(Number.isInteger).sort((a, b) => a - b).map((port) => ({
        port, state: read(path.join(dir, 'ports', String(port), 'state')), linkLayer: read(path.join(dir, 'ports', String(port), 'link_layer')),
      }));
    } catch { /* no ports dir */ }
    return { name, nodeGuid: read(path.join(dir, 'node_guid')), nodeType: read(path.join(dir, 'node_type')), fwVer: read(path.join(dir, 'fw_ver')), ports };
  });
}

/** Is the libibverbs runtime library installed (the real-device backend would dlopen it)? */
export function libibverbsPresent(): boolean {
  const dirs = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/lib/x86_64-linux-gnu'];
  return dirs.some((d) => fs.existsSync(path.join(d, 'libibverbs.so.1')));
}

export interface RealDeviceView extends RealDevice { guid?: string; usable: false; note: string }

/** Real devices from libibverbs (names, GUIDs) completed with sysfs details; none can be driven yet. */
export function realDevices(ib: { library: boolean; error?: string; devices: { name: string; guid: string }[] } | null): { devices: RealDeviceView[]; libibverbs: boolean; error?: string } {
  const sys = new Map(listRealDevices().map((d) => [d.name, d]));
  const names = ib?.library ? ib.devices.map((d) => d.name) : [...sys.keys()];
  const devices = names.map((name) => ({
    ...(sys.get(name) ?? { name, ports: [] }),
    ...(ib?.devices.find((d) => d.name === name) ? { guid: ib.devices.find((d) => d.name === name)!.guid } : {}),
    usable: false as const, note: 'driving real devices (the libibverbs backend) is not built yet',
  }));
  return { devices, libibverbs: ib?.library ?? libibverbsPresent(), ...(ib?.error ? { error: ib.error } : {}) };
}
