// Payload decoder registry. RDMA carries upper-layer protocols in its message payloads (NVMe/RDMA command and
// response capsules, SMB Direct headers, a lab's own messages); each registers one decoder here, and every place
// that shows a packet asks decodePayload() — the console's wire view does (renderer/src/store/models.ts
// packetFields), a lab's host agent can. The device itself decodes only the transport headers (BTH and its
// extension headers: native/src/wire, the packet record's fields); what the payload means is decided here, once.
//
// A decoder is a pure function of the payload and the few transport facts given with it; it returns undefined
// for payloads that are not its protocol's. Decoders are tried in registration order; the first that claims a
// payload wins. A decoder that throws does not take the caller down: the result names the decoder and the error.
import { cmMadDecoder } from './cm-mad.ts';
import { LAB_DECODERS } from './labs.ts';
import type { DecodedPayload, PayloadDecoder, PayloadInput } from './payload.ts';

export type { DecodedPayload, PayloadDecoder, PayloadInput };

const registry: PayloadDecoder[] = [];

/** Register a decoder (a decoder with the same id is replaced, keeping its place). Returns its unregistration. */
export function registerDecoder(d: PayloadDecoder): () => void {
  const at = registry.findIndex((x) => x.id === d.id);
  if (at >= 0) registry[at] = d; else registry.push(d);
  return () => { const i = registry.indexOf(d); if (i >= 0) registry.splice(i, 1); };
}

export function registeredDecoders(): readonly PayloadDecoder[] { return registry; }

/** The payload decoded by the first registered decoder that claims it, or undefined. */
export function decodePayload(input: PayloadInput): DecodedPayload | undefined {
  if (input.payload.length === 0) return undefined;
  for (const d of registry) {
    try {
      const r = d.decode(input);
      if (r) return { protocol: d.id, ...r };
    } catch (e) {
      return { protocol: d.id, summary: `${d.id}: decoder error`, fields: { error: e instanceof Error ? e.message : String(e) } };
    }
  }
  return undefined;
}

const HEX = /^[0-9a-f]*$/i;
/**
 * The PayloadInput of a packet record as events carry it ({ hex, opcode, destQp, payloadLen, pad, ... }: the
 * UDP payload BTH..ICRC and its decoded transport headers), or undefined when it has no payload or cannot be read.
 */
export function payloadOfPacket(pkt: Record<string, unknown>): PayloadInput | undefined {
  const { hex, opcode, destQp, payloadLen, pad } = pkt;
  if (typeof hex !== 'string' || !HEX.test(hex) || hex.length % 2) return undefined;
  if (typeof opcode !== 'number' || typeof payloadLen !== 'number' || payloadLen <= 0) return undefined;
  const len = hex.length / 2;
  const end = len - 4 - (typeof pad === 'number' ? pad : 0);   // ICRC (4 bytes) and pad come after the payload
  const start = end - payloadLen;
  if (start < 12 || end > len) return undefined;                // BTH is 12 bytes
  const payload = new Uint8Array(payloadLen);
  for (let i = 0; i < payloadLen; i++) payload[i] = parseInt(hex.substr(2 * (start + i), 2), 16);
  return { opcode, destQp: typeof destQp === 'number' ? destQp : 0, payload };
}

// The platform's own: the connection manager's MADs on QP1 (app/protocol/cm-mad.ts; docs/cm.md).
registerDecoder(cmMadDecoder);
// The labs' decoders, as their manifests declare them (labs/<id>/index.ts `decoders`).
for (const d of LAB_DECODERS) registerDecoder(d);
