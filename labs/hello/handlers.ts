// The executor's handler of hello.write, over the platform's own commands (memory.write, post.send, engine.run,
// cq.poll) run on the same executor: the lab adds no native code.
import { Command, resultSchema, type CommandName } from '../../app/protocol/commands.ts';
import { fail, ok } from '../../app/host/commands/outcome.ts';
import type { LabContext, LabHandlers } from '../../app/host/lab-context.ts';
import type { helloCommands } from './commands.ts';
import { encodeHello } from './message.ts';

/** one platform command on the executor (validated as the protocol validates it); throws its error */
function run(x: LabContext, cmd: CommandName, args: Record<string, unknown>): unknown {
  const r = x.exec(Command.parse({ cmd, args }));
  if (!r.ok) throw Object.assign(new Error(`${cmd}: ${r.error.message}`), { code: r.error.code });
  return r.result;
}

export const handlers: LabHandlers<typeof helloCommands> = {
  'hello.write': (x, a) => {
    const msg = encodeHello(a.kind, a.text);
    try {
      run(x, 'memory.write', { addr: a.addr, data: Buffer.from(msg).toString('hex') });
      run(x, 'post.send', { qp: a.qp, wrs: [{ opcode: 'IBV_WR_RDMA_WRITE', sgList: [{ addr: a.addr, length: msg.length, lkey: a.lkey }], remoteAddr: a.remoteAddr, rkey: a.rkey }] });
      run(x, 'engine.run', {});
      const wc = resultSchema('cq.poll').parse(run(x, 'cq.poll', { cq: a.cq, max: 1 })).wcs[0];   // typed by its schema
      if (!wc) return fail('EAGAIN', 'hello.write: the WRITE has not completed', 'args.qp');
      return ok({ bytes: msg.length, status: wc.statusName, kind: a.kind });
    } catch (e) {
      return fail((e as { code?: string }).code ?? 'EIO', (e as Error).message);
    }
  },
};
