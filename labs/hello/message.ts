// The hello message the lab writes with one RDMA WRITE: "HELO", a kind byte (HelloKind), a length byte, the text
// (UTF-8, at most 200 bytes). Encoded by the handler, read back by the payload decoder on the wire.
import { table } from '../../app/protocol/enums.ts';

/** What a hello message is (its fifth byte). A lab-only table: the device has no counterpart. */
export const HelloKind = table({ GREETING: 1, REPLY: 2 });
export type HelloKindName = (typeof HelloKind.names)[number];

export const HELLO_MAGIC = [0x48, 0x45, 0x4c, 0x4f];   // "HELO"
export const HELLO_HEADER = 6;

export function encodeHello(kind: HelloKindName, text: string): Uint8Array {
  const body = new TextEncoder().encode(text);
  if (body.length > 200) throw new RangeError('hello: the text is at most 200 bytes');
  return Uint8Array.from([...HELLO_MAGIC, HelloKind.values[kind], body.length, ...body]);
}

/** The message at the start of `b`, or undefined when `b` does not hold one. */
export function decodeHello(b: Uint8Array): { kind: string; length: number; text: string } | undefined {
  if (b.length < HELLO_HEADER || HELLO_MAGIC.some((m, i) => b[i] !== m)) return undefined;
  const length = b[5]!;
  if (HELLO_HEADER + length > b.length) return undefined;
  return { kind: HelloKind.name(b[4]!), length, text: new TextDecoder().decode(b.subarray(HELLO_HEADER, HELLO_HEADER + length)) };
}
