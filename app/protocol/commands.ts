// The one command protocol: every request from the UI, a scenario file or the CLI is one of these.
// Built by a factory over the "handle" type so that the live protocol (numeric handles) and the scenario
// format (handles or object names such as "qp1") come from the same source.
import { z } from 'zod';
import { Access, Mtu, QpAttrMask, QpState, QpType, SendFlag, WrOpcode } from './enums.ts';
import { GidText, IfName, IpLiteral, UdpPort } from './net.ts';

const U32 = z.number().int().min(0).max(0xffffffff);
const U24 = z.number().int().min(0).max(0xffffff);
/** 64-bit values: a safe integer, or a decimal/0x-hex string for values above 2^53. */
export const U64 = z.union([
  z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  z.string().regex(/^(0x[0-9a-fA-F]{1,16}|[0-9]{1,20})$/, 'a 64-bit number as decimal or 0x-hex'),
]);
const Addr = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const Len = z.number().int().min(0).max(2 ** 32);
const Hex = z.string().regex(/^([0-9a-fA-F]{2})*$/, 'hex bytes, two digits per byte').max(2 * 1024 * 1024);

const accessList = z.array(z.enum(Access.names)).max(8);
const sendFlags = z.array(z.enum(SendFlag.names)).max(4);

export function makeCommands<H extends z.ZodType<number | string>>(H: H) {
  const Sge = z.object({ addr: Addr, length: Len, lkey: U32 }).strict();
  const SendWr = z.object({
    wrId: U64.default(0),
    opcode: z.enum(WrOpcode.names),
    sendFlags: sendFlags.default(['IBV_SEND_SIGNALED']),
    sgList: z.array(Sge).max(64).default([]),
    inlineData: Hex.optional(),
    immData: U32.optional(),
    invalidateRkey: U32.optional(),
    remoteAddr: Addr.optional(),
    rkey: U32.optional(),
    compareAdd: U64.optional(),
    swap: U64.optional(),
    ah: H.optional(),
    remoteQpn: U24.optional(),
    remoteQkey: U32.optional(),
    mw: H.optional(),
    bindRkey: U32.optional(),
    bindMr: H.optional(),
    bindAddr: Addr.optional(),
    bindLength: Len.optional(),
    bindAccess: accessList.optional(),
    regMr: H.optional(),
    regKey: z.number().int().min(0).max(255).optional(),
    regAccess: accessList.optional(),
  }).strict();
  const RecvWr = z.object({ wrId: U64.default(0), sgList: z.array(Sge).max(64).default([]) }).strict();
  const QpAttr = z.object({
    qpState: z.enum(QpState.names).optional(),
    pathMtu: z.enum(Mtu.names).optional(),
    qpAccessFlags: accessList.optional(),
    qkey: U32.optional(),
    rqPsn: U24.optional(),
    sqPsn: U24.optional(),
    destQpNum: U24.optional(),
    destDevice: H.optional(),
    sgidIndex: z.number().int().min(0).max(255).optional(),
    pkeyIndex: z.number().int().min(0).max(0xffff).optional(),
    portNum: z.number().int().min(1).max(255).optional(),
    maxRdAtomic: z.number().int().min(0).max(255).optional(),
    maxDestRdAtomic: z.number().int().min(0).max(255).optional(),
    minRnrTimer: z.number().int().min(0).max(31).optional(),
    timeout: z.number().int().min(0).max(31).optional(),
    retryCnt: z.number().int().min(0).max(7).optional(),
    rnrRetry: z.number().int().min(0).max(7).optional(),
    // a remote host's GID (the device must be on the network, device.attachNet); else destDevice names the peer
    dgid: GidText.optional(),
  }).strict();
  /** The other side of an RC/UC connection on another host: what it shows as "local address" (rc_pingpong). */
  const RemoteDest = z.object({
    dgid: GidText,                                            // its GID, or its IPv4 address
    qpn: U24,                                                 // its QP number
    psn: U24,                                                 // its send PSN = our rq_psn
    sgidIndex: z.number().int().min(0).max(255).optional(),   // our GID to send from (default: same family as dgid)
  }).strict();

  const cmd = <N extends string, A extends z.ZodRawShape>(name: N, args: A) =>
    z.object({ cmd: z.literal(name), args: z.object(args).strict() }).strict();

  const list = [
    cmd('session.info', {}),
    cmd('session.reset', { seed: z.number().int().min(0).max(2 ** 32 - 1).optional() }),
    cmd('device.list', {}),
    cmd('device.create', { profile: z.string().min(1).max(32), name: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/).optional() }),
    cmd('device.destroy', { device: H }),
    // put a device on a real network (RoCEv2 over UDP): exactly one of interface / address; port 0 = ephemeral;
    // peerPort = the UDP port remote hosts listen on (default: port; 4791 on a real network)
    cmd('device.attachNet', { device: H, interface: IfName.optional(), address: IpLiteral.optional(), port: UdpPort.default(4791), peerPort: UdpPort.optional() }),
    cmd('device.detachNet', { device: H }),
    cmd('pd.alloc', { device: H }),
    cmd('pd.dealloc', { pd: H }),
    cmd('buffer.alloc', { length: z.number().int().min(1).max(64 * 1024 * 1024) }),
    cmd('buffer.free', { buffer: H }),
    cmd('memory.write', { addr: Addr, data: Hex.optional(), fill: z.object({ byte: z.number().int().min(0).max(255), length: z.number().int().min(1).max(64 * 1024 * 1024) }).strict().optional() }),
    cmd('memory.read', { addr: Addr, length: z.number().int().min(0).max(1024 * 1024) }),
    cmd('mr.reg', { pd: H, addr: Addr, length: Len, access: accessList, iova: Addr.optional() }),
    cmd('mr.rereg', { mr: H, pd: H.optional(), addr: Addr.optional(), length: Len.optional(), access: accessList.optional() }),
    cmd('mr.dereg', { mr: H }),
    cmd('mr.alloc', { pd: H, maxNumSg: z.number().int().min(1).max(4096), indirect: z.boolean().default(false) }),
    cmd('mr.map_sg', { mr: H, sgList: z.array(Sge).min(1).max(4096), pageSize: z.number().int().min(512).max(1 << 30).default(4096) }),
    cmd('mw.alloc', { pd: H, type: z.enum(['IBV_MW_TYPE_1', 'IBV_MW_TYPE_2']) }),
    cmd('mw.dealloc', { mw: H }),
    cmd('mw.bind', { qp: H, mw: H, mr: H, addr: Addr, length: Len, access: accessList, wrId: U64.default(0), sendFlags: sendFlags.default(['IBV_SEND_SIGNALED']) }),
    cmd('cq.create', { device: H, cqe: z.number().int().min(1).max(1 << 20), channel: z.boolean().default(false) }),
    cmd('cq.destroy', { cq: H }),
    cmd('cq.req_notify', { cq: H, solicitedOnly: z.boolean().default(false), reportMissedEvents: z.boolean().default(false) }),
    cmd('cq.poll', { cq: H, max: z.number().int().min(1).max(4096).default(16) }),
    cmd('cq.get_event', { device: H }),
    cmd('cq.ack_events', { cq: H, n: z.number().int().min(1).max(1 << 20) }),
    cmd('srq.create', { pd: H, maxWr: z.number().int().min(1).max(1 << 16), maxSge: z.number().int().min(1).max(64).default(1), srqLimit: z.number().int().min(0).max(1 << 16).default(0) }),
    cmd('srq.modify', { srq: H, srqLimit: z.number().int().min(0).max(1 << 16) }),
    cmd('srq.destroy', { srq: H }),
    cmd('srq.post_recv', { srq: H, wrs: z.array(RecvWr).min(1).max(1024) }),
    cmd('qp.create', {
      pd: H, sendCq: H, recvCq: H, srq: H.optional(), qpType: z.enum(QpType.names),
      cap: z.object({
        maxSendWr: z.number().int().min(1).max(1 << 15).default(16), maxRecvWr: z.number().int().min(0).max(1 << 15).default(16),
        maxSendSge: z.number().int().min(1).max(64).default(4), maxRecvSge: z.number().int().min(1).max(64).default(4),
        maxInlineData: z.number().int().min(0).max(4096).default(0),
      }).strict().default({ maxSendWr: 16, maxRecvWr: 16, maxSendSge: 4, maxRecvSge: 4, maxInlineData: 0 }),
      sqSigAll: z.boolean().default(false),
    }),
    cmd('qp.modify', { qp: H, attr: QpAttr, mask: z.array(z.enum(QpAttrMask.names)).min(1).max(21) }),
    cmd('qp.query', { qp: H }),
    cmd('qp.destroy', { qp: H }),
    // peer: a QP of this session (both ends are moved), or remote: a QP on another host (only qp is moved;
    // sqPsn is our send PSN, which the other side gives as its rq PSN)
    cmd('qp.connect', {
      qp: H, peer: H.optional(), remote: RemoteDest.optional(), sqPsn: U24.optional(), pathMtu: z.enum(Mtu.names).default('IBV_MTU_1024'),
      access: accessList.default(['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_READ', 'IBV_ACCESS_REMOTE_ATOMIC']),
    }),
    cmd('ah.create', { pd: H, destDevice: H, sgidIndex: z.number().int().min(0).max(255).default(1) }),
    cmd('post.send', { qp: H, wrs: z.array(SendWr).min(1).max(1024) }),
    cmd('post.recv', { qp: H, wrs: z.array(RecvWr).min(1).max(1024) }),
    cmd('engine.step', { count: z.number().int().min(1).max(1_000_000).default(1) }),
    cmd('engine.run', { maxSteps: z.number().int().min(1).max(100_000_000).default(1_000_000) }),
    // load generator (like perftest's ib_write_bw loop): while on, every engine.step (and autorun tick) first
    // polls the QP's send CQ (`cq`, if given, must be it) and posts `wrs` on `qp` again whenever the send queue
    // has room; off by { on: false }
    cmd('engine.traffic', { on: z.boolean(), qp: H.optional(), cq: H.optional(), wrs: z.array(SendWr).min(1).max(1024).optional() }),
    cmd('engine.faults', {
      loss: z.number().min(0).max(1).default(0), duplicate: z.number().min(0).max(1).default(0),
      reorder: z.number().min(0).max(1).default(0), delay: z.number().min(0).max(1).default(0),
      delayNs: z.number().int().min(0).max(10_000_000_000).default(0),
    }),
    // free: the engine runs on its own thread at stepsPerSecond whatever the console draws (the console gets a sample
    // of the events, every state event, and the rings as the device holds them); otherwise autorun is paced by the
    // console's acknowledgements and every event reaches it
    cmd('engine.autorun', { on: z.boolean(), stepsPerSecond: z.number().int().min(1).max(1_000_000_000).default(1000), free: z.boolean().default(false) }),
    // device: the capture of that device's real network traffic (real IP/UDP headers) instead of the session's
    cmd('pcap.get', { device: H.optional() }),
    cmd('journal.get', {}),
    // the device events the host sent most recently (a console that connects late draws what happened before)
    cmd('events.recent', { max: z.number().int().min(1).max(50_000).default(10_000) }),
  ] as const;
  return { Sge, SendWr, RecvWr, QpAttr, RemoteDest, Command: z.discriminatedUnion('cmd', list), list };
}

/** Live protocol: handles are positive integers issued by the backend host. */
export const HandleSchema = z.number().int().min(1).max(0xffffffff);
export const Live = makeCommands(HandleSchema);

// Console-only commands of the scenario recorder/replayer, answered by the backend host (app/host/recorder.ts),
// not by the device executor. They are not scenario steps (a scenario does not load or step another one), so
// they sit outside makeCommands(). Step numbers are 1-based, as in every scenario message.
const cc = <N extends string, A extends z.ZodRawShape>(name: N, args: A) =>
  z.object({ cmd: z.literal(name), args: z.object(args).strict() }).strict();
const StepNo = z.number().int().min(1).max(100_000);
export const ScenarioConsoleCommands = [
  // known: the version the client already shows; when nothing changed since, only { version } comes back
  cc('scenario.get', { known: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional() }),
  cc('scenario.save', {}),
  cc('scenario.rename', { from: z.string().min(1).max(64), to: z.string().min(1).max(64) }),
  cc('scenario.note', { step: StepNo, note: z.string().max(2000) }),
  cc('scenario.remove', { step: StepNo }),
  cc('scenario.meta', { name: z.string().min(1).max(200).optional(), description: z.string().max(20_000).optional() }),
  cc('scenario.expect', {
    step: StepNo,
    only: z.number().int().min(0).max(4095).optional(),
    bytes: z.object({ addr: Addr, length: z.number().int().min(1).max(4096) }).strict().optional(),
    qp: HandleSchema.optional(),
    packets: z.boolean().optional(),       // the packets the device sent during the step
    asyncEvents: z.boolean().optional(),   // the async events it raised during the step
  }),
  cc('scenario.load', { text: z.string().max(6 * 1024 * 1024), file: z.string().max(200).optional() }),
  cc('scenario.step', {}),
  cc('scenario.run_to', { step: StepNo }),
  cc('scenario.close', {}),
] as const;
export const Command = z.discriminatedUnion('cmd', [...Live.list, ...ScenarioConsoleCommands]);
export type Command = z.infer<typeof Command>;
export type CommandName = Command['cmd'];
export type CommandArgs<N extends CommandName> = Extract<Command, { cmd: N }>['args'];
export type SendWr = z.infer<typeof Live.SendWr>;
export type RecvWr = z.infer<typeof Live.RecvWr>;
export type QpAttr = z.infer<typeof Live.QpAttr>;
export const COMMAND_NAMES = Live.list.map((s) => s.shape.cmd.value) as CommandName[];
