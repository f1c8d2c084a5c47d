// The device executor's handlers of the SG lab's commands (labs/sg/commands.ts), over the executor's addon.
import type { ResultOf } from '../../app/protocol/index.ts';
import { fail, ok, type Outcome } from '../../app/host/commands/outcome.ts';
import type { LabHandlers } from '../../app/host/lab-context.ts';
import type { sgCommands } from './commands.ts';
import { handleSg, type SgCommandName } from './agent.ts';

function answer<N extends SgCommandName>(r: ReturnType<typeof handleSg>): Outcome<ResultOf<N>> {
  return r.ok ? ok(r.result as ResultOf<N>) : fail(r.error.code, r.error.message);
}

/** The manifest's `handlers` (index.ts). */
export const handlers: LabHandlers<typeof sgCommands> = {
  'sg.generate': (x, a) => answer<'sg.generate'>(handleSg(x.addon, 'sg.generate', a)),
  'sg.check': (x, a) => answer<'sg.check'>(handleSg(x.addon, 'sg.check', a)),
  'sg.run': (x, a) => answer<'sg.run'>(handleSg(x.addon, 'sg.run', a)),
  'sg.compare': (x, a) => answer<'sg.compare'>(handleSg(x.addon, 'sg.compare', a)),
};
