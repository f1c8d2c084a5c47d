// Console commands of the attach extension (app/host/attach.ts): the programs run under `verbslab exec --console`
// that stream their device to this console, and the read-only commands the console's panels send about one of them.
import { z } from 'zod';
import { command } from '../descriptor.ts';

/** an attached program as the console lists it (attach.list) */
export const AttachedSession = z.object({
  session: z.number().int().min(1), pid: z.number().int(), program: z.string(), argv: z.array(z.string()),
  /** live: streaming; stalled: connected, nothing for ATTACH_STALL_MS (stopped in a debugger?); ended: gone */
  state: z.enum(['live', 'stalled', 'ended']),
  /** why it ended (or why it is stalled), in words */
  reason: z.string().optional(),
  attachedAt: z.number(), endedAt: z.number().optional(),
  device: z.string().optional(), address: z.string().optional(),
  events: z.number(), frames: z.number(),
  /** lost before reaching the console: the program's queue was full (dropped there), or the host kept only the newest */
  dropped: z.object({ events: z.number(), frames: z.number(), keptOut: z.number() }),
});
export type AttachedSession = z.infer<typeof AttachedSession>;

/** Commands the console may send about an attached program (attach.call): they read what the host holds. Every other
 *  command is the program's to give. */
export const ATTACH_READ_COMMANDS = ['device.list', 'session.info', 'events.recent', 'qp.query', 'mr.query', 'pcap.get', 'cm.list'] as const;

const host = { answeredBy: 'host', step: false, recorded: false, readOnly: true } as const;

export const attachCommands = {
  'attach.list': command({
    ...host, args: () => ({}),
    result: z.object({ sessions: z.array(AttachedSession), socket: z.string().nullable(), error: z.string().optional() }),
  }),
  // a panel's command about attached session `session`: answered from what the program sent (ATTACH_READ_COMMANDS);
  // the result is the inner command's own result (its schema checks it)
  'attach.call': command({
    ...host,
    args: () => ({
      session: z.number().int().min(1),
      command: z.object({ cmd: z.string().max(64), args: z.record(z.string(), z.unknown()).default({}) }).strict(),
    }),
    result: z.unknown(),
  }),
};
