// The session commands (app/protocol/commands/session.ts) as libibverbs calls: how `verbslab export-c` writes each step
// (app/scenario/export-c.ts writes the program around them). Typed by the descriptor table, so a step command
// without its emitter does not compile.
import { type CExport } from './emitter.ts';
import type { sessionCommands } from '../../protocol/commands/session.ts';

export const sessionC: CExport<typeof sessionCommands> = {
  'session.info': ({ st, a, soft }) => { soft(`${st.cmd}: a console/session command; nothing to do on libibverbs`); },
  'session.reset': ({ st, a, soft }) => { soft(`${st.cmd}: a console/session command; nothing to do on libibverbs`); },
  'pcap.get': ({ st, a, soft }) => { soft(`${st.cmd}: a console/session command; nothing to do on libibverbs`); },
  'journal.get': ({ st, a, soft }) => { soft(`${st.cmd}: a console/session command; nothing to do on libibverbs`); },
  'events.recent': ({ st, a, soft }) => { soft(`${st.cmd}: a console/session command; nothing to do on libibverbs`); },
};
