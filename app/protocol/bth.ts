// BTH opcodes (IBA Table 35; RoCEv2 carries the same BTH): the protocol's one table. `BthOpcode` names each
// opcode the device builds with the identifier scenarios use (Wireshark's names with underscores);
// `bthOpcodeName` gives Wireshark's Info-column text ("RC RDMA Write Only", packet-infiniband.c), as the wire
// codec does (native/src/wire/opcodes.cpp opcode_name; tables.test.ts checks all 256 values agree).

export const BthOpcode = {
  RC_SEND_FIRST: 0x00, RC_SEND_MIDDLE: 0x01, RC_SEND_LAST: 0x02, RC_SEND_LAST_WITH_IMMEDIATE: 0x03,
  RC_SEND_ONLY: 0x04, RC_SEND_ONLY_WITH_IMMEDIATE: 0x05, RC_RDMA_WRITE_FIRST: 0x06, RC_RDMA_WRITE_MIDDLE: 0x07,
  RC_RDMA_WRITE_LAST: 0x08, RC_RDMA_WRITE_LAST_WITH_IMMEDIATE: 0x09, RC_RDMA_WRITE_ONLY: 0x0a,
  RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE: 0x0b, RC_RDMA_READ_REQUEST: 0x0c, RC_RDMA_READ_RESPONSE_FIRST: 0x0d,
  RC_RDMA_READ_RESPONSE_MIDDLE: 0x0e, RC_RDMA_READ_RESPONSE_LAST: 0x0f, RC_RDMA_READ_RESPONSE_ONLY: 0x10,
  RC_ACKNOWLEDGE: 0x11, RC_ATOMIC_ACKNOWLEDGE: 0x12, RC_COMPARE_SWAP: 0x13, RC_FETCH_ADD: 0x14,
  RC_SEND_LAST_WITH_INVALIDATE: 0x16, RC_SEND_ONLY_WITH_INVALIDATE: 0x17,
  UC_SEND_FIRST: 0x20, UC_SEND_MIDDLE: 0x21, UC_SEND_LAST: 0x22, UC_SEND_LAST_WITH_IMMEDIATE: 0x23,
  UC_SEND_ONLY: 0x24, UC_SEND_ONLY_WITH_IMMEDIATE: 0x25, UC_RDMA_WRITE_FIRST: 0x26, UC_RDMA_WRITE_MIDDLE: 0x27,
  UC_RDMA_WRITE_LAST: 0x28, UC_RDMA_WRITE_LAST_WITH_IMMEDIATE: 0x29, UC_RDMA_WRITE_ONLY: 0x2a,
  UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE: 0x2b,
  UD_SEND_ONLY: 0x64, UD_SEND_ONLY_WITH_IMMEDIATE: 0x65,
} as const;
export type BthOpcodeName = keyof typeof BthOpcode;

const TRANSPORT = ['RC', 'UC', 'RD', 'UD', 'CNP', 'XRC', 'Reserved', 'Manufacturer'];
/** the 5-bit operation in Wireshark's words (RC has them all; UC the SEND / WRITE ones, UD SEND ONLY [imm]) */
const OPERATION: Record<number, string> = {
  0x00: 'Send First', 0x01: 'Send Middle', 0x02: 'Send Last', 0x03: 'Send Last Immediate', 0x04: 'Send Only',
  0x05: 'Send Only Immediate', 0x06: 'RDMA Write First', 0x07: 'RDMA Write Middle', 0x08: 'RDMA Write Last',
  0x09: 'RDMA Write Last Immediate', 0x0a: 'RDMA Write Only', 0x0b: 'RDMA Write Only Immediate',
  0x0c: 'RDMA Read Request', 0x0d: 'RDMA Read Response First', 0x0e: 'RDMA Read Response Middle',
  0x0f: 'RDMA Read Response Last', 0x10: 'RDMA Read Response Only', 0x11: 'Acknowledge', 0x12: 'Atomic Acknowledge',
  0x13: 'Compare Swap', 0x14: 'Fetch Add', 0x16: 'Send Last Invalidate', 0x17: 'Send Only Invalidate',
};
const BY_VALUE = new Map<number, BthOpcodeName>(Object.entries(BthOpcode).map(([k, v]) => [v, k as BthOpcodeName]));

/** the scenario identifier of a BTH opcode the device builds (undefined for the others) */
export function bthOpcodeId(op: number): BthOpcodeName | undefined { return BY_VALUE.get(op); }

/** Wireshark's name of a BTH opcode ("RC RDMA Read Request"), "Unknown opcode" for one the device does not build */
export function bthOpcodeName(op: number): string {
  const base = BY_VALUE.has(op) ? OPERATION[op & 0x1f] : undefined;
  return base ? `${TRANSPORT[op >> 5]} ${base}` : 'Unknown opcode';
}

/** opcodes whose payload begins a SEND message (its first or only packet: where upper-layer headers are) */
const SEND_STARTS = new Set<number>([
  BthOpcode.RC_SEND_FIRST, BthOpcode.RC_SEND_ONLY, BthOpcode.RC_SEND_ONLY_WITH_IMMEDIATE, BthOpcode.RC_SEND_ONLY_WITH_INVALIDATE,
  BthOpcode.UC_SEND_FIRST, BthOpcode.UC_SEND_ONLY, BthOpcode.UC_SEND_ONLY_WITH_IMMEDIATE,
  BthOpcode.UD_SEND_ONLY, BthOpcode.UD_SEND_ONLY_WITH_IMMEDIATE,
]);
export function startsSend(opcode: number): boolean { return SEND_STARTS.has(opcode); }
