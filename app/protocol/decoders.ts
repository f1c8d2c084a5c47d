// Payload decoder registry. RDMA carries upper-layer protocols in its message payloads (NVMe/RDMA command and
// response capsules, SMB Direct headers, a lab's own messages); each registers one decoder here, and every place
// that shows a packet asks decodePayload() — the console's wire view does (renderer/src/store/models.ts
// packetFields), a lab's host agent can. The device itself decodes only the transport headers (BTH and its
// extension headers: native/src/wire, the packet record's fields); what the payload means is decided here, once.
//
// A decoder is a pure function of the payload and the few transport facts given with it; it returns undefined
// for payloads that are not its protocol's. Decoders are tried in registration order; the first that claims a
// payload wins. A decoder that throws does not take the caller down: the result names the decoder and the error.
import { nvmeRdmaDecoder } from './decoders/nvme-rdma.ts';
import { smbDirectDecoder } from './decoders/smb-direct.ts';

export interface PayloadInput {
  /** BTH opcode of the packet */
  opcode: number;
  /** destination QP number (BTH) */
  destQp: number;
  /** the message payload: after the transport headers, without pad and ICRC */
  payload: Uint8Array;
  /** the upper-layer protocol the caller knows this connection carries (a lab agent does), if any */
  protocol?: string;
}

export interface DecodedPayload {
  /** the id of the decoder that claimed the payload */
  protocol: string;
  /** one line, in the style of Wireshark's Info column ("NVMe Write CID 4 NSID 1 SLBA 0 NLB 128") */
  summary: string;
  /** the decoded fields (nested records), for a header pane */
  fields: Record<string, unknown>;
}

export interface PayloadDecoder {
  /** short id, also the prefix of its fields in a header pane ("nvme-rdma") */
  id: string;
  /** what it decodes, for people ("NVMe over RDMA capsules (NVMe-oF 1.1, RDMA transport)") */
  title: string;
  decode(input: PayloadInput): Omit<DecodedPayload, 'protocol'> | undefined;
}

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

// The decoders this code base ships (labs add theirs with registerDecoder).
registerDecoder(nvmeRdmaDecoder);
registerDecoder(smbDirectDecoder);
