// The device executor's handlers of lab 4's agent commands (agent-commands.ts), over the agents of agent.ts.
import type { ResultOf } from '../../app/protocol/index.ts';
import { fail, ok, type Outcome } from '../../app/host/commands/outcome.ts';
import type { LabHandlers } from '../../app/host/lab-context.ts';
import type { nvmfAgentCommands } from './agent-commands.ts';
import { nvmfAgent, type Out } from './agent.ts';

function answer<T>(r: Out<T>): Outcome<T> { return r.ok ? ok(r.result) : fail(r.error.code, r.error.message, r.error.field); }

export const nvmfAgentHandlers: LabHandlers<typeof nvmfAgentCommands> = {
  'nvmf.setup': (x, a) => answer<ResultOf<'nvmf.setup'>>(nvmfAgent.setup(x, a)),
  'nvmf.queue': (x, a) => answer<ResultOf<'nvmf.queue'>>(nvmfAgent.queue(x, a)),
  'nvmf.connect': (x, a) => answer<ResultOf<'nvmf.connect'>>(nvmfAgent.connect(x, a)),
  'nvmf.admin': (x, a) => answer<ResultOf<'nvmf.admin'>>(nvmfAgent.admin(x, a)),
  'nvmf.io': (x, a) => answer<ResultOf<'nvmf.io'>>(nvmfAgent.io(x, a)),
  'nvmf.offload': (x, a) => answer<ResultOf<'nvmf.offload'>>(nvmfAgent.offload(x, a)),
  'nvmf.offload_enable': (x, a) => answer<ResultOf<'nvmf.offload_enable'>>(nvmfAgent.offloadEnable(x, a)),
  'nvmf.offload_fault': (x, a) => answer<ResultOf<'nvmf.offload_fault'>>(nvmfAgent.offloadFault(x, a)),
  'nvmf.state': (x, a) => answer<ResultOf<'nvmf.state'>>(nvmfAgent.state(x, a)),
};
