// Handlers of the device commands (app/protocol/commands/device.ts).
import type { CommandArgs, ResultOf } from '../../protocol/index.ts';
import type { deviceCommands } from '../../protocol/commands/device.ts';
import type { NativeExecutor } from '../executor.ts';
import type { NNet } from '../native.ts';
import { errnoName, fail, ok, res, st, u64n, type Handlers, type Outcome } from './handler.ts';
import { deviceOut, profileOut } from './out.ts';

export const deviceHandlers: Handlers<typeof deviceCommands> = {
  'device.list': (x) => ok({
    devices: x.s.devices().map((d) => ({ ...deviceOut(d), net: x.netDevices.has(d.handle) ? x.s.net_info(d.handle) : null })),
    interfaces: x.hostInterfaces(), realTime: x.netDevices.size > 0,
    profiles: x.addon.Session.profiles().map(profileOut),
    // real devices (libibverbs + sysfs): session.reset { backend: 'ibverbs', device } opens one
    realDevices: x.real.devices, libibverbs: x.real.libibverbs, ...(x.real.error ? { libibverbsError: x.real.error } : {}),
    ...(x.realSession ? { backend: x.realSession.backend } : {}),
  }),
  'device.create': (x, a) => {
    const known = x.addon.Session.profiles().map((p) => p.name);
    if (!known.includes(a.profile)) return fail('EINVAL', `args.profile: unknown profile "${a.profile}" (known: ${known.join(', ')})`, 'args.profile');
    const r = x.s.create_device(a.profile, a.name ?? '');
    if (r.err) return res(r, () => null) as Outcome<never>;
    const d = x.deviceInfo(r.value as number);
    return d ? ok(deviceOut(d)) : fail('INTERNAL', `device.create: device ${r.value} is not listed after creation`);
  },
  'device.destroy': (x, a) => {
    const r = st(x.s.destroy_device(a.device), { device: a.device });   // takes it off the network first
    if (r.ok) x.netDevices.delete(a.device);
    return r;
  },
  'device.attachNet': (x, a) => attachNet(x, a),
  'device.detachNet': (x, a) => {
    if (!x.netDevices.has(a.device)) return fail('ENOENT', `args.device: device ${a.device} is not on the network`, 'args.device');
    const r = st(x.s.detach_net(a.device), { device: a.device, realTime: x.netDevices.size > 1 });
    if (r.ok) x.netDevices.delete(a.device);
    return r;
  },
};

/** device.attachNet's argument for each UdpField (the session's free-running mode is about the device's session) */
const ATTACH_FIELD = { device: 'args.device', session: 'args.device', options: 'args.interface', interface: 'args.interface', address: 'args.address', port: 'args.port' } as const;

function attachNet(x: NativeExecutor, a: CommandArgs<'device.attachNet'>): Outcome<ResultOf<'device.attachNet'>> {
  if ((a.interface === undefined) === (a.address === undefined))
    return fail('EINVAL', 'args.interface: give exactly one of "interface" (a host interface such as lo or eth0) or "address" (one local IP address)', 'args.interface');
  if (!x.deviceInfo(a.device)) return fail('ENOENT', `args.device: no device with handle ${a.device}`, 'args.device');
  if (x.netDevices.has(a.device)) return fail('EBUSY', `args.device: device ${a.device} is already on the network (take it off first)`, 'args.device');
  const ifs = x.hostInterfaces();
  if (a.interface !== undefined && !ifs.some((i) => i.name === a.interface))
    return fail('ENODEV', `args.interface: interface "${a.interface}" not found on this host (it has: ${ifs.map((i) => i.name).join(', ') || 'none'})`, 'args.interface');
  if (x.autorun.on) x.autorun = { ...x.autorun, on: false, free: false };   // real time replaces the virtual-time autorun
  if (x.s.runner_running()) x.stepsLeft += u64n(x.s.runner_stop());
  const r = x.s.attach_net(a.device, { interface: a.interface, address: a.address, port: a.port, peerPort: a.peerPort });
  if (r.err) {
    const field = ATTACH_FIELD[r.field ?? 'device'];   // the device says which input (UdpField), not its message
    return fail(errnoName(r.err), `${field}: ${r.msg}`, field);
  }
  x.netDevices.add(a.device);
  const net = r.value as NNet;
  return ok({ device: a.device, ...net, peerPort: a.peerPort ?? net.port, realTime: true as const });
}
