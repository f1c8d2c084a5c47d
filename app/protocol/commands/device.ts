// Devices: the software devices of the session, and putting one on a real network (RoCEv2 over UDP).
import { z } from 'zod';
import { command, RHandle } from '../descriptor.ts';
import { IfName, IpLiteral, UdpPort } from '../net.ts';
import { BackendOut, DeviceOut, InterfaceOut, NetOut, ProfileOut } from './shared.ts';

export const deviceCommands = {
  'device.list': command({
    args: () => ({}),
    result: z.object({
      devices: z.array(DeviceOut.extend({ net: NetOut.nullable() })),
      interfaces: z.array(InterfaceOut), realTime: z.boolean(), profiles: z.array(ProfileOut),
      // real devices (libibverbs + sysfs); usable: session.reset { backend: 'ibverbs', device: name } opens one
      realDevices: z.array(z.object({
        name: z.string(), guid: z.string().optional(), nodeGuid: z.string().optional(), nodeType: z.string().optional(),
        fwVer: z.string().optional(), ports: z.array(z.object({ port: z.number(), state: z.string().optional(), linkLayer: z.string().optional() })),
        usable: z.boolean(), note: z.string(), software: z.boolean().optional(), library: z.string().optional(),
      })),
      libibverbs: z.boolean(), libibverbsError: z.string().optional(),
      backend: BackendOut.optional(),
    }),
    readOnly: true, recorded: false,
  }),
  'device.create': command({
    args: () => ({ profile: z.string().min(1).max(32), name: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/).optional() }),
    result: DeviceOut, creates: 'device',
  }),
  'device.destroy': command({ args: (h) => ({ device: h('device') }), result: z.object({ device: RHandle }) }),
  // put a device on a real network (RoCEv2 over UDP): exactly one of interface / address; port 0 = ephemeral;
  // peerPort = the UDP port remote hosts listen on (default: port; 4791 on a real network)
  'device.attachNet': command({
    args: (h) => ({ device: h('device'), interface: IfName.optional(), address: IpLiteral.optional(), port: UdpPort.default(4791), peerPort: UdpPort.optional() }),
    result: NetOut.extend({ device: RHandle, peerPort: z.number(), realTime: z.literal(true) }),
    network: () => 'puts a device on a real network',
  }),
  'device.detachNet': command({
    args: (h) => ({ device: h('device') }),
    result: z.object({ device: RHandle, realTime: z.boolean() }),
    network: () => 'takes a device off a real network',
  }),
};
