// One device event as the console draws it; its own file so that command result schemas (events.recent) can
// name it without importing the message envelopes (which import the commands).
import { z } from 'zod';

/** one device event, as drawn by the console (see native/EVENTS.md for a/b/c/d per kind) */
export const DeviceEvent = z.object({
  seq: z.number(), t: z.number(), kind: z.string(), device: z.number(), obj: z.number(), objKind: z.string(),
  a: z.number(), b: z.number(), c: z.number(), d: z.number(),
  text: z.string().optional(), ok: z.boolean().optional(),
  change: z.number().optional(),     // ObjectModified: Change (enums.ts)
  keyState: z.number().optional(),   // mr / mw created / modified / destroyed: KeyState after the event
  pkt: z.record(z.string(), z.unknown()).optional(),   // decoded headers + "hex"
  wc: z.record(z.string(), z.unknown()).optional(),
});
export type DeviceEvent = z.infer<typeof DeviceEvent>;
