// The engine commands (app/protocol/commands/engine.ts) as libibverbs calls: how `verbslab export-c` writes each step
// (app/scenario/export-c.ts writes the program around them). Typed by the descriptor table, so a step command
// without its emitter does not compile.
import { type CExport } from './emitter.ts';
import type { engineCommands } from '../../protocol/commands/engine.ts';

export const engineC: CExport<typeof engineCommands> = {
  'engine.step': ({ st, a, soft }) => {
    soft(`${st.cmd}: the software device's engine advances virtual time here; a real device runs by itself (the next poll waits for completions)`);
  },
  'engine.run': ({ st, a, soft }) => {
    soft(`${st.cmd}: the software device's engine advances virtual time here; a real device runs by itself (the next poll waits for completions)`);
  },
  'engine.traffic': ({ st, soft }) => {
    soft(`${st.cmd}: the software device's load generator (poll the CQ, post the same WRs again while the send queue has room); on libibverbs that is your own loop around ibv_poll_cq and ibv_post_send, as in perftest's ib_write_bw`);
  },
  'engine.faults': ({ a, soft }) => {
    soft(`engine.faults ${JSON.stringify(a)}: fault injection on the software wire; not available on real hardware`);
  },
  'engine.autorun': ({ a, soft }) => { soft('engine.autorun: software engine timer; a real device runs by itself'); },
};
