// Console commands of lab 5's host agent (labs/smbd/host.ts): two SMB Direct peers in the console's own session.
// Answered by the host, never scenario steps (the device commands the agent runs are journaled themselves). The
// result schemas mirror session.ts / io.ts / conn.ts types; host.test.ts parses every reply with them.
import { z } from 'zod';
import { command } from '../../app/protocol/descriptor.ts';

const host = { answeredBy: 'host', step: false, recorded: false } as const;
const Profile = z.enum(['spec', 'ksmbd', 'last-credit-bug']);
const Side = z.enum(['client', 'server']);
const Seed = z.number().int().min(0).max(2 ** 32 - 1);
const U16 = z.number().int().min(0).max(0xffff);
const U32 = z.number().int().min(0).max(0xffffffff);

const Rule = z.object({ id: z.string(), section: z.string(), rule: z.string(), value: z.number(), pass: z.boolean() });
const Sizes = z.object({
  maxSendSize: z.number(), maxReceiveSize: z.number(), maxFragmentedSendSize: z.number(), maxFragmentedRecvSize: z.number(),
  maxReadWriteSize: z.number(), sendCredits: z.number(), receiveCreditTarget: z.number(),
});
const Request = z.object({
  minVersion: z.number(), maxVersion: z.number(), reserved: z.number(), creditsRequested: z.number(),
  preferredSendSize: z.number(), maxReceiveSize: z.number(), maxFragmentedSize: z.number(),
});
const Response = z.object({
  minVersion: z.number(), maxVersion: z.number(), negotiatedVersion: z.number(), reserved: z.number(), creditsRequested: z.number(),
  creditsGranted: z.number(), status: z.number(), maxReadWriteSize: z.number(), preferredSendSize: z.number(), maxReceiveSize: z.number(),
  maxFragmentedSize: z.number(),
});
export const Negotiation = z.object({
  requestHex: z.string(), request: Request.nullable(), serverRules: z.array(Rule), serverOutcome: z.enum(['accept', 'reject', 'terminate']),
  responseHex: z.string().nullable(), response: Response.nullable(), clientRules: z.array(Rule),
  clientOutcome: z.enum(['accept', 'terminate', 'no-response']).nullable(), client: Sizes.nullable(), server: Sizes.nullable(),
});
const SideView = z.object({
  state: z.enum(['established', 'disconnected']), sendCredits: z.number(), sendCreditTarget: z.number(),
  receiveCredits: z.number(), receiveCreditTarget: z.number(), receiveCreditMax: z.number(), pendingGrant: z.number(),
  sendQueue: z.number(), blocked: z.enum(['no-send-credits', 'last-credit-rule']).nullable(), keepalive: z.enum(['NONE', 'PENDING', 'SENT']),
  sendImmediate: z.boolean(), reassemblyBytes: z.number(), reassemblyRemaining: z.number(), idleDeadlineNs: z.number(),
  keepaliveDeadlineNs: z.number().nullable(), sent: z.number(), received: z.number(), creditsGrantedSent: z.number(),
  creditsGrantedReceived: z.number(), lastCreditHolds: z.number(), delivered: z.number(),
  disconnect: z.object({ rule: z.string(), reason: z.string() }).nullable(), postedRecvs: z.number(), sendsInFlight: z.number(),
});
const Note = z.object({
  dir: z.enum(['tx', 'rx']), bytes: z.number(), creditsRequested: z.number(), creditsGranted: z.number(), flags: z.number(),
  remainingDataLength: z.number(), dataLength: z.number(), invalidate: z.number().optional(),
});
export const Board = z.object({
  nowNs: z.number(), stalled: z.boolean(), profiles: z.object({ client: Profile, server: Profile }),
  client: SideView.nullable(), server: SideView.nullable(),
  /** the messages each side sent and received since the last reply (the fragmentation view's rows) */
  notes: z.object({ client: z.array(Note), server: z.array(Note) }),
  /** upper-layer messages delivered since the last reply: size, fragments, the synthesised RFC1002 length */
  delivered: z.array(z.object({ to: Side, bytes: z.number(), fragments: z.number(), rfc1002Length: z.number() })),
});
const IoRecord = z.object({
  op: z.enum(['READ', 'WRITE']), channel: z.enum(['RDMA_V1', 'RDMA_V1_INVALIDATE']), length: z.number(),
  descriptor: z.object({ offset: z.string(), token: z.number(), length: z.number() }), requestHex: z.string(),
  serverOp: z.enum(['IBV_WR_RDMA_WRITE', 'IBV_WR_RDMA_READ']), serverStatus: z.string(),
  responseOpcode: z.enum(['IBV_WR_SEND', 'IBV_WR_SEND_WITH_INV']), invalidatedBy: z.enum(['remote', 'local']),
  clientMrState: z.string(), verified: z.boolean(), latencyNs: z.number(),
});
const PolicyStats = z.object({
  policy: z.enum(['pool', 'per-io']), ios: z.number(), bytes: z.number(), serverRegistrations: z.number(), serverInvalidations: z.number(),
  serverKeys: z.number(), serverPinnedBytes: z.number(), clientRegistrations: z.number(), clientInvalidations: z.number(),
  virtualNs: z.number(), wallNs: z.number(), verified: z.number(),
});
export const StartResult = z.object({ negotiation: Negotiation, board: Board });
const Crossings = z.object({ crossings: z.number(), ns: z.number() });
export const MeasureResult = z.object({
  registration: z.object({
    ios: z.number(), pool: PolicyStats, perIo: PolicyStats, poolMiBps: z.number(), perIoMiBps: z.number(), ratio: z.number(),
    poolLatencyUs: z.number(), perIoLatencyUs: z.number(),
  }),
  crossing: z.object({
    events: z.number(), single: Crossings, batched: Crossings.extend({ perCrossing: z.number() }), nsPerCrossing: z.number(), ratio: z.number(),
  }),
});
export const IoResult = z.object({ io: IoRecord, stats: PolicyStats, board: Board });

export const labSmbdCommands = {
  /** session.reset with the seed, two peers on two devices, negotiation ([MS-SMBD] 3.1.5.2 - 3.1.5.7) */
  'lab.smbd.start': command({
    ...host,
    args: () => ({
      seed: Seed.default(1), client: Profile.default('spec'), server: Profile.default('spec'),
      /** linux: 255 credits (ksmbd / cifs today); lab: 8 credits and ksmbd's lazy reposting (the deadlock's setting) */
      credits: z.enum(['linux', 'lab']).default('linux'),
      /** negotiate request fields changed from the client's own (the rules' edge cases) */
      request: z.object({
        minVersion: U16, maxVersion: U16, creditsRequested: U16, preferredSendSize: U32, maxReceiveSize: U32, maxFragmentedSize: U32,
      }).partial().strict().default({}),
    }),
    result: StartResult,
  }),
  /** one upper-layer message of `bytes` bytes from one side (fragmented at MaxSendSize - 24), then run */
  'lab.smbd.send': command({
    ...host, args: () => ({ from: Side, bytes: z.number().int().min(0).max(1 << 20), run: z.boolean().default(true) }), result: Board,
  }),
  /** both sides queue `perSide` seeded messages at once; run to quiet unless run is false (then step it) */
  'lab.smbd.burst': command({
    ...host, args: () => ({ seed: Seed.default(1), perSide: z.number().int().min(1).max(512).default(24), run: z.boolean().default(true) }), result: Board,
  }),
  /** `count` engine steps, both peers' completions handled after each */
  'lab.smbd.step': command({ ...host, args: () => ({ count: z.number().int().min(1).max(100_000).default(1) }), result: Board }),
  /** skip idle virtual time (the keepalive timers: 120 s idle, 5 s answer), then run */
  'lab.smbd.advance': command({ ...host, args: () => ({ seconds: z.number().min(0).max(3600), answer: z.boolean().default(true) }), result: Board }),
  /** SMB2 READ / WRITE through a buffer descriptor, the server's buffer from the chosen policy */
  'lab.smbd.io': command({
    ...host,
    args: () => ({
      op: z.enum(['READ', 'WRITE']), channel: z.enum(['RDMA_V1', 'RDMA_V1_INVALIDATE']).default('RDMA_V1_INVALIDATE'),
      policy: z.enum(['pool', 'per-io']).default('pool'), length: z.number().int().min(1).max(1 << 20).default(65536),
    }),
    result: IoResult,
  }),
  /** the two comparisons of `verbslab bench` in sessions of their own (not the console's): 1 MiB SMB2 I/O with the
   *  pool vs per-I/O registration, `rounds` x 2 I/Os each; the same completions taken one or 64 per crossing */
  'lab.smbd.measure': command({
    ...host, readOnly: true, args: () => ({ rounds: z.number().int().min(1).max(16).default(2), events: z.number().int().min(64).max(16384).default(1024) }),
    result: MeasureResult,
  }),
  /** the credit board now */
  'lab.smbd.board': command({ ...host, readOnly: true, args: () => ({}), result: Board }),
};
