// The hello lab's one command: write a hello message to the peer's buffer with one signaled RDMA WRITE on a
// connected RC QP, run the engine, and poll its completion.
import { z } from 'zod';
import { command } from '../../app/protocol/descriptor.ts';
import { Addr } from '../../app/protocol/commands/shared.ts';
import { HelloKind } from './message.ts';

const U32 = z.number().int().min(0).max(0xffffffff);

export const helloCommands = {
  'hello.write': command({
    args: (h) => ({
      qp: h('qp'), cq: h('cq'), addr: Addr, lkey: U32, remoteAddr: Addr, rkey: U32,
      kind: z.enum(HelloKind.names).default('GREETING'), text: z.string().min(1).max(200),
    }),
    result: z.object({ bytes: z.number(), status: z.string(), kind: z.string() }),
  }),
};
