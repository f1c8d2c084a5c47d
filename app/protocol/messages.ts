// Envelopes that cross Electron IPC (MessagePort) and the browser-mode WebSocket, in both directions.
import { z } from 'zod';
import { Command } from './commands.ts';

export const PROTOCOL_VERSION = 1;

/** renderer -> host */
export const Request = z.object({
  type: z.literal('request'),
  id: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  command: Command,
}).strict();
export type Request = z.infer<typeof Request>;

/** a client-side control message (not a device command): restart the host after it died */
export const Control = z.object({ type: z.literal('control'), action: z.enum(['restart-host', 'kill-host']) }).strict();
export type Control = z.infer<typeof Control>;

/** renderer -> host: the console has drawn the events up to `seq` (no reply). The host's autorun produces no more
 *  than a few batches ahead of the fastest console that acknowledges, so a live view is never buried. */
/** console -> host (flow control): the events up to seq are drawn; `window`: how many more the console asks for
 *  (autorun stays at most that far ahead; the host's default when absent) */
export const EventsAck = z.object({
  type: z.literal('ack'), seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  window: z.number().int().min(1).max(1_000_000).optional(),
}).strict();
export type EventsAck = z.infer<typeof EventsAck>;

export const ErrorInfo = z.object({
  code: z.string(),              // "EINVAL", "EOPNOTSUPP", "BAD_REQUEST", "HOST_DOWN", ...
  message: z.string(),           // readable sentence naming the field or rule
  field: z.string().optional(),  // dotted path of the offending field, e.g. "command.args.wrs.0.sgList.1.lkey"
  badWr: z.number().int().min(0).optional(),   // post.*: index of the refused work request (ibv_post_send's bad_wr)
});
export type ErrorInfo = z.infer<typeof ErrorInfo>;

/** host -> renderer: reply to one request */
export const Reply = z.object({
  type: z.literal('reply'),
  id: z.number().int().nullable(),        // null when the request was too broken to read its id
  ok: z.boolean(),
  result: z.unknown().optional(),
  error: ErrorInfo.optional(),
});
export type Reply = z.infer<typeof Reply>;

// DeviceEvent lives in event.ts (command result schemas name it without importing the envelopes)
import { DeviceEvent } from './event.ts';
export { DeviceEvent };

/** host -> renderer: many events per crossing (at most one batch per frame's worth of time) */
export const EventBatch = z.object({
  type: z.literal('events'),
  first: z.number(), count: z.number(), dropped: z.number().default(0),
  events: z.array(DeviceEvent),
  /** the attached program these events come from (app/host/attach.ts); absent: the console's own device */
  session: z.number().int().min(1).optional(),
});
export type EventBatch = z.infer<typeof EventBatch>;

/** host -> renderer, free-running autorun: every work and completion queue as the device holds it right after event
 *  `seq` (the console samples the event stream then, so its rings cannot follow the events; it redraws them from
 *  this). Slots are the occupied ones, oldest first: slot i is at absolute index first + i. */
export const RingSnapshot = z.object({
  type: z.literal('rings'),
  seq: z.number().int().min(0),
  /** the attached program (as EventBatch.session) */
  session: z.number().int().min(1).optional(),
  rings: z.array(z.object({
    owner: z.number().int(), device: z.number().int(), queue: z.enum(['sq', 'rq', 'cq', 'srq']), depth: z.number().int(),
    producer: z.number().int().min(0), consumer: z.number().int().min(0), first: z.number().int().min(0),
    slots: z.array(z.object({
      wrId: z.number(), opcode: z.number().int(), status: z.number().int(), state: z.enum(['posted', 'started', 'done']),
      qpNum: z.number().int().optional(),
    })),
  })),
});
export type RingSnapshot = z.infer<typeof RingSnapshot>;

/** host/server -> renderer: backend host life cycle */
export const HostStatus = z.object({
  type: z.literal('host'),
  state: z.enum(['starting', 'up', 'down']),
  reason: z.string().optional(),
  pid: z.number().optional(),
  journalEntries: z.number().optional(),
  restarts: z.number().optional(),
});
export type HostStatus = z.infer<typeof HostStatus>;

export const ToHost = z.discriminatedUnion('type', [Request, Control, EventsAck]);
export type ToHost = z.infer<typeof ToHost>;
export const FromHost = z.discriminatedUnion('type', [Reply, EventBatch, HostStatus, RingSnapshot]);
export type FromHost = z.infer<typeof FromHost>;

/** Turn a zod error into one readable message that names the field. */
export function describeZodError(err: z.ZodError, prefix = ''): ErrorInfo {
  const issue = err.issues[0];
  const path = [prefix, ...(issue?.path ?? []).map(String)].filter(Boolean).join('.');
  const more = err.issues.length > 1 ? ` (and ${err.issues.length - 1} more problem${err.issues.length > 2 ? 's' : ''})` : '';
  return { code: 'BAD_REQUEST', field: path || undefined, message: `${path || 'message'}: ${issue?.message ?? 'invalid'}${more}` };
}

/** Validate one raw message from a client; returns the parsed message or an error reply. */
export function parseToHost(raw: unknown): { ok: true; msg: ToHost } | { ok: false; reply: Reply } {
  let data = raw;
  if (typeof raw === 'string') {
    if (raw.length > 8 * 1024 * 1024) return { ok: false, reply: { type: 'reply', id: null, ok: false, error: { code: 'TOO_LARGE', message: 'message larger than 8 MiB' } } };
    try { data = JSON.parse(raw); } catch (e) {
      return { ok: false, reply: { type: 'reply', id: null, ok: false, error: { code: 'BAD_JSON', message: `not JSON: ${(e as Error).message}` } } };
    }
  }
  const r = ToHost.safeParse(data);
  if (r.success) return { ok: true, msg: r.data };
  const id = typeof (data as { id?: unknown })?.id === 'number' ? (data as { id: number }).id : null;
  return { ok: false, reply: { type: 'reply', id, ok: false, error: describeZodError(r.error) } };
}
