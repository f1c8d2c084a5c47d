// What the console shows of the host's replies: the view types of devices, buffers, PDs, polls, and the readers
// that turn a reply into them (device.list, buffer.alloc, memory.read, pcap.get, engine.step/run).
import { AtomicCap, DeviceCap, Mtu, namesOf } from '../../../app/protocol/index.ts';
import { handleOf, isRec, num, pick, str, type Rec } from './spec.ts';

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
export interface PollView { cq: number; wcs: Rec[]; seqAt: number }
export interface Faults { loss: number; duplicate: number; reorder: number; delay: number; delayNs: number }

// ------------------------------------------------------------------ readers of replies
const CAP_SKIP = new Set(['name', 'description', 'transport', 'keyBytePolicy', 'key_byte_policy']);
const snakeName = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function profileView(p: unknown): ProfileView {
  const r = (isRec(p) ? p : { name: String(p) }) as Rec;
  return { name: str(r, 'name') ?? '?', description: str(r, 'description') ?? '', transport: str(r, 'transport') ?? '', raw: r };
}
function gidText(g: unknown): string {
  if (typeof g === 'string') return g;
  if (Array.isArray(g)) {
    const b = g as number[]; const parts: string[] = [];
    for (let i = 0; i < b.length; i += 2) parts.push(((b[i] << 8) | (b[i + 1] ?? 0)).toString(16).padStart(4, '0'));
    return parts.join(':');
  }
  return '';
}
export function deviceView(d: unknown): DeviceView {
  const r = (isRec(d) ? d : {}) as Rec;
  const prof = pick(r, 'profile');
  const pr = (isRec(prof) ? prof : r) as Rec;
  const capFlags = num(pr, 'deviceCapFlags', 'capFlags') ?? 0;
  const atomic = pick(pr, 'atomicCap');
  const limits: [string, number][] = [];
  for (const [k, v] of Object.entries(pr)) {
    if (CAP_SKIP.has(k) || typeof v !== 'number') continue;
    const s = snakeName(k);
    if (s.startsWith('max_') || s === 'page_size_cap' || s === 'active_mtu') limits.push([s, v]);
  }
  const gids = pick(r, 'gids');
  return {
    handle: handleOf(r, 'device') ?? 0,
    name: str(r, 'name') ?? '?',
    profile: typeof prof === 'string' ? prof : str(pr, 'name') ?? '?',
    capFlags, capNames: namesOf(DeviceCap, capFlags),
    atomicCap: typeof atomic === 'string' ? atomic : AtomicCap.name(typeof atomic === 'number' ? atomic : 0),
    limits,
    gids: Array.isArray(gids) ? gids.map((g, i) => ({ index: num(g, 'index') ?? i, gid: gidText(pick(g, 'gid') ?? g), type: str(g, 'type') ?? '' })) : [],
    portState: num(r, 'portState') ?? 0,
    portStateName: str(r, 'portStateName') ?? (num(r, 'portState') === 4 ? 'IBV_PORT_ACTIVE' : `port state ${num(r, 'portState') ?? '?'}`),
    activeMtu: str(pr, 'activeMtuName') ?? Mtu.name(num(pr, 'activeMtu') ?? 0),
    transport: str(pr, 'transport') ?? '',
    net: netView(pick(r, 'net')),
    nodeGuid: (() => { const v = pick(r, 'nodeGuid'); return typeof v === 'number' ? `0x${v.toString(16)}` : typeof v === 'string' ? v : ''; })(),
    raw: r,
  };
}
export function netView(v: unknown): NetView | null {
  if (!isRec(v)) return null;
  const st = (isRec(v.stats) ? v.stats : {}) as Rec;
  const n = (k: string) => num(st, k) ?? 0;
  const gids = Array.isArray(v.gids) ? v.gids.filter(isRec) as Rec[] : [];
  return {
    interface: str(v, 'interface') ?? '', port: num(v, 'port') ?? 0,
    gids: gids.map((g, i) => ({ index: num(g, 'index') ?? i, gid: str(g, 'gid') ?? '', type: str(g, 'type') ?? '', ...(str(g, 'ip') ? { ip: str(g, 'ip') } : {}) })),
    stats: { txPackets: n('txPackets'), txBytes: n('txBytes'), rxPackets: n('rxPackets'), rxBytes: n('rxBytes'), rxDropped: n('rxDropped'), txDropped: n('txDropped') },
  };
}
/** The GID this device sends from by default (same rule as the host): its first IPv4-mapped GID, else its first. */
export function localGid(net: NetView | null): { index: number; gid: string; ip?: string } | null {
  if (!net || !net.gids.length) return null;
  return net.gids.find((g) => g.gid.startsWith('0000:0000:0000:0000:0000:ffff:')) ?? net.gids[0]!;
}
export function bytesFrom(v: unknown): Uint8Array {
  const s = typeof v === 'string' ? v : str(v, 'data', 'hex', 'bytes');
  if (typeof s === 'string') {
    const out = new Uint8Array(s.length >> 1);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(i * 2, 2), 16);
    return out;
  }
  const arr = Array.isArray(v) ? v : pick(v, 'data', 'bytes');
  if (Array.isArray(arr)) return Uint8Array.from(arr as number[]);
  return new Uint8Array(0);
}
export function listOf(result: unknown, ...names: string[]): unknown[] {
  if (Array.isArray(result)) return result;
  const v = pick(result, ...names);
  return Array.isArray(v) ? v : [];
}


/** one line for the run bar from an engine.step / engine.run reply */
export function describeRun(what: string, result: unknown, fmtTime: (ns: number) => string): string {
  const steps = typeof result === 'number' ? result : num(result, 'steps', 'taken', 'count');
  const idle = pick(result, 'idle');
  const t = num(result, 'now', 'nowNs', 'timeNs');
  const parts = [steps !== undefined ? `${what}: ${steps} step${steps === 1 ? '' : 's'}` : `${what}: done`];
  if (idle !== undefined) parts.push(idle ? 'engine idle' : 'engine still busy');
  if (t !== undefined) parts.push(`virtual time ${fmtTime(t)}`);
  return parts.join(', ');
}
