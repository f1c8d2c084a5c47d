// What the console shows of the host's replies: the view types of devices, buffers, PDs, polls, and the readers
// that turn a reply into them (device.list, buffer.alloc, memory.read, pcap.get, engine.step/run).
import { DeviceCap, namesOf, type ResultOf } from '../../../app/protocol/index.ts';
import type { Rec } from './spec.ts';

export interface ProfileView { name: string; description: string; transport: string; raw: Rec }
export interface DeviceView {
  handle: number; name: string; profile: string; capFlags: number; capNames: string[]; atomicCap: string;
  limits: [string, number][]; gids: { index: number; gid: string; type: string }[]; portState: number; portStateName: string;
  activeMtu: string; transport: string; nodeGuid: string;
  /** the device's UDP transport when it is on a real network (device.attachNet), else null */
  net: NetView | null;
  raw: Rec;
}
export interface NetView {
  interface: string; port: number;
  gids: { index: number; gid: string; type: string; ip?: string }[];
  stats: { txPackets: number; txBytes: number; rxPackets: number; rxBytes: number; rxDropped: number; txDropped: number };
}
export interface HostInterface { name: string; up: boolean; loopback: boolean; mtu: number; addrs: string[] }
/** where a device goes on the network: a host interface or one local address; UDP port; remote hosts' port */
export interface AttachNetArgs { interface?: string; address?: string; port: number; peerPort?: number }
/** the other side of a connection on another host, as it shows it (rc_pingpong's "remote address") */
export interface RemoteDestArgs { dgid: string; qpn: number; psn: number; sgidIndex?: number }
export interface BufferView { handle: number; addr: number; length: number; destroyed: boolean }
export interface PdView { handle: number; device: number; destroyed: boolean }
export interface PollView { cq: number; wcs: ResultOf<'cq.poll'>['wcs']; seqAt: number }
export interface Faults { loss: number; duplicate: number; reorder: number; delay: number; delayNs: number }

// ------------------------------------------------------------------ readers of replies
const CAP_SKIP = new Set(['name', 'description', 'transport', 'keyBytePolicy', 'key_byte_policy']);
const snakeName = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

type DeviceOut = ResultOf<'device.list'>['devices'][number];
type ProfileOut = ResultOf<'device.list'>['profiles'][number];

export function profileView(p: ProfileOut): ProfileView {
  return { name: p.name, description: p.description, transport: p.transport, raw: { ...p } };
}
/** a device.list entry (typed: the protocol's DeviceOut) */
export function deviceView(d: DeviceOut): DeviceView {
  const pr = d.profile;
  const capFlags = Number(pr.deviceCapFlags);
  const limits: [string, number][] = [];
  for (const [k, v] of Object.entries(pr)) {
    if (CAP_SKIP.has(k) || typeof v !== 'number') continue;
    const s = snakeName(k);
    if (s.startsWith('max_') || s === 'page_size_cap' || s === 'active_mtu') limits.push([s, v]);
  }
  return {
    handle: d.device, name: d.name, profile: pr.name,
    capFlags, capNames: namesOf(DeviceCap, capFlags), atomicCap: pr.atomicCapName,
    limits,
    gids: d.gids.map((g) => ({ index: g.index, gid: g.gid, type: g.type })),
    portState: d.portState, portStateName: d.portStateName,
    activeMtu: pr.activeMtuName, transport: pr.transport,
    net: d.net ? netView(d.net) : null,
    nodeGuid: d.nodeGuid,
    raw: { ...d },
  };
}
/** a device's network attachment (device.list's net: the protocol's NetOut), or null off the network */
export function netView(v: DeviceOut['net'] | undefined): NetView | null {
  if (!v) return null;
  const st = v.stats;
  return {
    interface: v.interface, port: v.port,
    gids: v.gids.map((g) => ({ index: g.index, gid: g.gid, type: g.type, ...(g.ip ? { ip: g.ip } : {}) })),
    stats: { txPackets: Number(st.txPackets), txBytes: Number(st.txBytes), rxPackets: Number(st.rxPackets), rxBytes: Number(st.rxBytes), rxDropped: Number(st.rxDropped), txDropped: Number(st.txDropped) },
  };
}
/** The GID this device sends from by default (same rule as the host): its first IPv4-mapped GID, else its first. */
export function localGid(net: Pick<NetView, 'gids'> | { gids: { index: number; gid: string; ip?: string }[] } | null): { index: number; gid: string; ip?: string } | null {
  if (!net || !net.gids.length) return null;
  return net.gids.find((g) => g.gid.startsWith('0000:0000:0000:0000:0000:ffff:')) ?? net.gids[0]!;
}
/** memory.read's hex text as bytes */
export function bytesFrom(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}


/** one line for the run bar from an engine.step / engine.run reply */
export function describeRun(what: string, result: { steps: number | string; nowNs: number | string; idle?: boolean }, fmtTime: (ns: number) => string): string {
  const steps = Number(result.steps);
  const parts = [`${what}: ${steps} step${steps === 1 ? '' : 's'}`];
  if (result.idle !== undefined) parts.push(result.idle ? 'engine idle' : 'engine still busy');
  parts.push(`virtual time ${fmtTime(Number(result.nowNs))}`);
  return parts.join(', ');
}
