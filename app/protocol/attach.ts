// Live in the console: what a program run under `verbslab exec --console` sends the backend host, one JSON object
// per line over the console's Unix socket (native/libibverbs/console.cpp writes it; app/host/attach.ts reads it),
// and what the console says about each attached program. Browser-safe (zod only): the sessions list reads it too.
import { z } from 'zod';
import { DeviceEvent } from './event.ts';
import { RingSnapshot } from './messages.ts';

const U64 = z.union([z.number().int().min(0), z.string().regex(/^0x[0-9a-f]+$/)]);

/** a line longer than this ends the connection (the library cuts its messages at 512 KiB of JSON) */
export const ATTACH_MAX_LINE = 4 * 1024 * 1024;
/** the hello must come within this many ms of connecting */
export const ATTACH_HELLO_MS = 5_000;
/** a live program sends something at least every second; this long without a line: "stalled" (a debugger?) */
export const ATTACH_STALL_MS = 3_000;
/** attached sessions kept (live or ended); the oldest ended one goes first */
export const ATTACH_MAX_SESSIONS = 16;
/** events and datagrams the host keeps per session (the newest) */
export const ATTACH_KEEP_EVENTS = 100_000;
export const ATTACH_KEEP_FRAMES = 50_000;
export const ATTACH_PROTOCOL_VERSION = 1;
/** the consoles are sent a session's events every ATTACH_FORWARD_MS, at most ATTACH_FORWARD_MAX of them besides the
 *  state events (object life cycle, QP states, async events): a program at full speed makes more events than a
 *  screen can draw; the rest are counted as dropped in the batch, and the rings come from the state messages */
export const ATTACH_FORWARD_MS = 100;
export const ATTACH_FORWARD_MAX = 2_000;
/** event kinds never left out when a batch is sampled (native/src/core/events.cpp is_state_event) */
export const ATTACH_STATE_KINDS: ReadonlySet<string> = new Set(['ObjectCreated', 'ObjectDestroyed', 'ObjectModified', 'QpState', 'AsyncEvent', 'CqArmed', 'CompEvent', 'CmState']);

const Handle = z.number().int().min(0).max(0xffffffff);

export const AttachHello = z.object({
  t: z.literal('hello'), v: z.number().int(), token: z.string().max(256),
  pid: z.number().int().min(1), program: z.string().max(256), argv: z.array(z.string().max(4096)).max(256),
}).strict();
/** a device event as the library writes it (vl::json, the host's own text): a..d above 2^53-1 are "0x.." strings */
const AttachEvent = DeviceEvent.extend({ a: U64, b: U64, c: U64, d: U64 });
export const AttachEvents = z.object({ t: z.literal('events'), dropped: z.number().int().min(0), events: z.array(AttachEvent) }).strict();
export const AttachFrames = z.object({
  t: z.literal('frames'), dropped: z.number().int().min(0),
  frames: z.array(z.object({ t: z.number().int().min(0), hex: z.string().regex(/^(?:[0-9a-f]{2})*$/).max(2 * 65_600) }).strict()),
}).strict();

const MrInfo = z.object({
  handle: Handle, pd: Handle, lkey: z.number().int(), rkey: z.number().int(), addr: U64, length: U64, iova: U64,
  access: z.number().int(), kind: z.string(), state: z.string(),
  sg: z.array(z.object({ addr: U64, length: z.number().int(), lkey: z.number().int() }).strict()),
}).strict();
const MwInfo = z.object({
  handle: Handle, pd: Handle, rkey: z.number().int(), type: z.number().int(), state: z.string(), mr: Handle, qp: Handle,
  addr: U64, length: U64, access: z.number().int(),
}).strict();
const N = z.number().int();
const QpInfo = z.object({
  handle: Handle, qpNum: N, device: Handle,
  init: z.object({
    pd: Handle, sendCq: Handle, recvCq: Handle, srq: Handle, qpType: N, sqSigAll: z.boolean(),
    cap: z.object({ maxSendWr: N, maxRecvWr: N, maxSendSge: N, maxRecvSge: N, maxInlineData: N }).strict(),
  }).strict(),
  attr: z.object({
    qpState: N, curQpState: N, pathMtu: N, qpAccessFlags: N, qkey: N, rqPsn: N, sqPsn: N, destQpNum: N, pkeyIndex: N,
    portNum: N, maxRdAtomic: N, maxDestRdAtomic: N, minRnrTimer: N, timeout: N, retryCnt: N, rnrRetry: N,
    dgid: z.string(), sgidIndex: N, destDevice: Handle,
  }).strict(),
}).strict();
export const AttachState = z.object({
  t: z.literal('state'), seq: U64, nowNs: U64, address: z.string(), profile: z.string(),
  net: z.object({
    interface: z.string(), port: N,
    stats: z.object({ txPackets: U64, txBytes: U64, rxPackets: U64, rxBytes: U64, rxDropped: U64, txDropped: U64 }).strict(),
  }).strict().optional(),
  devices: z.array(z.object({
    handle: Handle, name: z.string(), profile: z.string(), nodeGuid: z.string(),
    gids: z.array(z.object({ index: N, gid: z.string(), type: z.string() }).strict()), portState: N,
  }).strict()),
  objects: z.array(z.object({ kind: z.string(), handle: Handle, device: Handle, info: z.union([MrInfo, MwInfo]).optional() }).strict()),
  qps: z.array(QpInfo),
  rings: RingSnapshot.shape.rings,
}).strict();
export const AttachBeat = z.object({ t: z.literal('beat') }).strict();
export const AttachBye = z.object({ t: z.literal('bye'), reason: z.string().max(256) }).strict();
/** any line after the hello */
export const AttachMessage = z.discriminatedUnion('t', [AttachEvents, AttachFrames, AttachState, AttachBeat, AttachBye]);
export type AttachHello = z.infer<typeof AttachHello>;
export type AttachMessage = z.infer<typeof AttachMessage>;
export type AttachState = z.infer<typeof AttachState>;

// the sessions list (attach.list) and the commands a panel may send about a program: commands/attach.ts
export { AttachedSession, ATTACH_READ_COMMANDS } from './commands/attach.ts';
