// Real RDMA devices as the kernel exposes them to libibverbs (/sys/class/infiniband), so the console and
// `verbslab devices` can say which real devices exist; the console opens one with session.reset
// { backend: 'ibverbs', device } (the real-device backend, app/host/realdev.ts, docs/real-devices.md).
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

export interface RealDeviceView extends RealDevice { guid?: string; usable: boolean; note: string; software?: boolean; library?: string }

/** Real devices from libibverbs (names, GUIDs) completed with sysfs details. `usable`: the addon has the real-device
 *  backend (session.reset { backend: 'ibverbs', device } opens one). `ib.software`: the listing came from Verbs Lab's
 *  own libibverbs.so.1 (VERBSLAB_LIBIBVERBS), whose device is the software device behind the libibverbs ABI. */
export function realDevices(ib: { library: boolean; error?: string; software?: boolean; path?: string; devices: { name: string; guid: string }[] } | null,
  usable = false): { devices: RealDeviceView[]; libibverbs: boolean; error?: string } {
  const sys = new Map((ib?.software ? [] : listRealDevices()).map((d) => [d.name, d]));
  const names = ib?.library ? ib.devices.map((d) => d.name) : [...sys.keys()];
  const devices = names.map((name) => ({
    ...(sys.get(name) ?? { name, ports: [] }),
    ...(ib?.devices.find((d) => d.name === name) ? { guid: ib.devices.find((d) => d.name === name)!.guid } : {}),
    usable,
    note: !usable ? 'the native addon has no real-device backend (rebuild it: node scripts/build.mjs addon)'
      : ib?.software ? `Verbs Lab's software device behind the libibverbs ABI (${ib.path}): opened like a real device, through dlopen`
        : `open it: session.reset { backend: 'ibverbs', device: '${name}' }`,
    ...(ib?.software ? { software: true } : {}), ...(ib?.path ? { library: ib.path } : {}),
  }));
  return { devices, libibverbs: ib?.library ?? libibverbsPresent(), ...(ib?.error ? { error: ib.error } : {}) };
}
