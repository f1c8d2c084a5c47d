// The commands the labs add to the protocol: one line per lab that has commands of its own (labs/<id>/commands.ts).
// The protocol's descriptor table (app/protocol/commands.ts) and the C export (app/scenario/export-c.ts) read this
// file, the host's handler table reads labs/handlers.ts; nothing outside labs/ lists a lab. Browser-safe: no Node
// imports here (the console validates lab commands too). labs/registry.test.ts checks every lab is listed.
import { labCqCommands } from './cq/commands.ts';
import { nvmfAgentC, nvmfAgentCommands } from './nvmf/agent-commands.ts';
import { nvmfC, nvmfCommands } from './nvmf/commands.ts';
import { sgC, sgCommands } from './sg/commands.ts';

/** Every lab command's descriptor, by name. */
export const LAB_COMMANDS = { ...labCqCommands, ...sgCommands, ...nvmfCommands, ...nvmfAgentCommands };
/** How the lab commands that are scenario steps are written by `verbslab export-c`. */
export const LAB_C_EMITTERS = { ...sgC, ...nvmfC, ...nvmfAgentC };
