// The shapes of a payload decoder (app/protocol/decoders.ts is the registry): a lab declares its decoders in its
// manifest (labs/<id>/index.ts) against these types, without importing the registry.

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
