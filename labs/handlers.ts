// The host-side handlers of the lab commands that the device executor answers (labs/<id>/handlers.ts), one line per
// lab; commands answered by a lab's host agent (labs/<id>/host.ts, attached by app/host/main.ts) are not listed here.
import { nvmfAgentHandlers } from './nvmf/agent-handlers.ts';
import { nvmfHandlers } from './nvmf/handlers.ts';
import { sgHandlers } from './sg/handlers.ts';

export const LAB_HANDLERS = { ...sgHandlers, ...nvmfHandlers, ...nvmfAgentHandlers };
