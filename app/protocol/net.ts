// Network addressing for devices put on a real network (UDP transport, native/src/net/udp.h): GID text,
// IP literals, interface names, UDP ports. Pure functions, shared by the backend host (executor) and the
// renderer (validation as you type), so both refuse the same input with the same words.
import { z } from 'zod';

function parseIpv4(s: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const b = m.slice(1).map(Number);
  if (b.some((x, i) => x > 255 || (m[i + 1]!.length > 1 && m[i + 1]!.startsWith('0')))) return null;
  return b;
}

/** IPv6 text (with "::" compression and an optional trailing dotted IPv4) -> 16 bytes; null if malformed. */
function parseIpv6(s: string): number[] | null {
  if (!/^[0-9a-fA-F:.]+$/.test(s) || s.length > 45) return null;
  let tail: number[] = [];
  let text = s;
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.')) {
    const v4 = parseIpv4(s.slice(lastColon + 1));
    if (!v4 || lastColon < 0) return null;
    tail = v4;
    const prefix = s.slice(0, lastColon + 1);                  // ends with ':'
    text = prefix.endsWith('::') ? prefix : prefix.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if ([...head, ...rest].some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return null;
  const want = 8 - tail.length / 2;
  const have = head.length + rest.length;
  if (halves.length === 1 ? have !== want : have > want - 1) return null;
  const words = [...head, ...Array(want - have).fill('0'), ...rest].map((g) => parseInt(g, 16));
  const out: number[] = [];
  for (const w of words) out.push(w >> 8, w & 0xff);
  return [...out, ...tail];
}

/** A GID as the console accepts it: IPv6 text ("fe80::1", "0000:...:0001", "::ffff:10.0.0.1") or an IPv4
 *  address ("10.0.0.1", taken as the IPv4-mapped GID ::ffff:10.0.0.1). 16 bytes, or null. */
export function parseGid(text: string): Uint8Array | null {
  const s = text.trim();
  const v4 = parseIpv4(s);
  if (v4) return Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4]);
  const v6 = parseIpv6(s);
  if (!v6 || v6.length !== 16) return null;
  if (v6.every((b) => b === 0)) return null;                  // the zero GID names no host
  return Uint8Array.from(v6);
}

/** 16 bytes -> the GID text the console shows (eight groups of four hex digits, as ibv_devinfo -v prints). */
export function gidText(b: Uint8Array): string {
  const parts: string[] = [];
  for (let i = 0; i < 16; i += 2) parts.push(((b[i]! << 8) | b[i + 1]!).toString(16).padStart(4, '0'));
  return parts.join(':');
}

/** IPv4-mapped GID (::ffff:a.b.c.d) -> "a.b.c.d"; other GIDs -> null. */
export function gidIpv4(b: Uint8Array): string | null {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return null;
  if (b[10] !== 0xff || b[11] !== 0xff) return null;
  return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
}

/** A numeric local address to bind (IPv4, or IPv6 with an optional %interface scope). */
export function isIpLiteral(text: string): boolean {
  const [addr, scope, more] = text.split('%');
  if (more !== undefined || (scope !== undefined && !/^[A-Za-z0-9_.@-]{1,15}$/.test(scope))) return false;
  return parseIpv4(addr!) !== null || parseIpv6(addr!) !== null;
}

export const GidText = z.string().max(64).refine((s) => parseGid(s) !== null,
  'a GID: IPv6 text (fe80::1, ::ffff:10.0.0.1, 0000:...:0001) or an IPv4 address, not the zero GID');
export const IfName = z.string().regex(/^[A-Za-z0-9_.@:-]{1,15}$/, 'an interface name such as "eth0" or "lo" (at most 15 characters)');
export const IpLiteral = z.string().max(64).refine(isIpLiteral, 'a numeric IPv4 or IPv6 address such as "127.0.0.1" or "fe80::1%eth0" (no host names)');
export const UdpPort = z.number().int('a UDP port: a whole number').min(0, 'a UDP port 0..65535').max(65535, 'a UDP port 0..65535');
