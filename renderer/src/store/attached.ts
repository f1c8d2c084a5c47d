// Attached sessions (programs run under `verbslab exec --console`, app/host/attach.ts): each one is shown through a
// console store of its own, built exactly as the embedded device's (store.ts), over a transport that speaks for that
// session: the read-only commands the panels send go to the host as attach.call (answered from what the program
// sent), the events and rings the host broadcasts for the session reach only its store, and every command that would
// act on the device is refused here with the reason (the program owns its device).
import { ATTACH_READ_COMMANDS, type AttachedSession, type Command, type Reply } from '../../../app/protocol/index.ts';
import { createConsoleStore, type ConsoleStore, type ConsoleTransport } from './store.ts';

/** console commands about the console itself, not about a device: they go to the host as they are */
const CONSOLE_ONLY = new Set(['lab.list', 'lab.get', 'attach.list']);
const READ = new Set<string>(ATTACH_READ_COMMANDS);

/** the words the console uses for an attached program */
export function programName(s: Pick<AttachedSession, 'program' | 'pid'>): string { return `${s.program} (pid ${s.pid})`; }

/** why a command cannot be sent to an attached session */
export function readOnlyReason(who: string, cmd?: string): string {
  if (cmd === 'memory.read') return `memory.read: the buffers of ${who} are in its own process; an attached session shows the device's memory writes (MemWrite events), not the bytes`;
  return `${cmd ? `${cmd}: ` : ''}${who} owns this device, so the console only watches it: its forms are read-only (run the commands in the program, or view "this console's device")`;
}

export function sessionTransport(t: ConsoleTransport, session: number, who: () => string): ConsoleTransport {
  return {
    async call(command: Command): Promise<Reply> {
      if (CONSOLE_ONLY.has(command.cmd)) return t.call(command);
      if (!READ.has(command.cmd)) return { type: 'reply', id: null, ok: false, error: { code: 'PROGRAM_OWNED', message: readOnlyReason(who(), command.cmd) } };
      return t.call({ cmd: 'attach.call', args: { session, command: { cmd: command.cmd, args: command.args as Record<string, unknown> } } });
    },
    onEvents: (cb) => t.onEvents(cb),
    onHost: (cb) => t.onHost(cb),
    control() { /* the backend host is the console's: an attached session cannot restart or kill it */ },
  };
}

// by session, pid and attach time: a restarted backend host numbers its sessions from 1 again
const stores = new Map<string, ConsoleStore>();
Object.assign(globalThis, { __vlAttached: stores });   // for debugging from devtools

/** The store of attached session `id` (made on first use, kept while the page lives: an ended session stays readable). */
export function attachedStore(t: ConsoleTransport, s: AttachedSession): ConsoleStore {
  const key = `${s.session}:${s.pid}:${s.attachedAt}`;
  let st = stores.get(key);
  if (!st) {
    const who = programName(s);
    st = createConsoleStore({ transport: sessionTransport(t, s.session, () => who), session: s.session, readOnly: who });
    stores.set(key, st);
  }
  return st;
}
