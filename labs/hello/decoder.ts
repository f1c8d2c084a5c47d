// The hello message on the wire: an RDMA WRITE (only or first packet) whose payload starts with "HELO".
import { BthOpcode } from '../../app/protocol/bth.ts';
import type { PayloadDecoder } from '../../app/protocol/payload.ts';
import { decodeHello } from './message.ts';

const WRITES = new Set<number>([BthOpcode.RC_RDMA_WRITE_ONLY, BthOpcode.RC_RDMA_WRITE_FIRST]);

export const helloDecoder: PayloadDecoder = {
  id: 'hello',
  title: 'the hello lab\'s message (labs/hello)',
  decode(input) {
    if (!WRITES.has(input.opcode)) return undefined;
    const m = decodeHello(input.payload);
    return m ? { summary: `Hello ${m.kind} "${m.text}"`, fields: { kind: m.kind, length: m.length, text: m.text } } : undefined;
  },
};
