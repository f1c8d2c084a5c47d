// Completion queues, shared receive queues, queue pairs, address handles and posting work requests.
import { z } from 'zod';
import { command, RHandle } from '../descriptor.ts';
import { IpLiteral } from '../net.ts';
import { CmState, Mtu, QpAttrMask, QpType } from '../enums.ts';
import { QpOut, U24, WcOut, accessList, type Shared } from './shared.ts';

const Posted = z.object({ posted: z.number() });

const CmPort = z.number().int().min(0).max(65535);
const CmAddrOut = z.object({ family: z.enum(['ipv4', 'ipv6', '']), ip: z.string(), port: z.number().int().min(0).max(65535) });
/** one RDMA CM ID as the console's Connections table shows it (vl::CmIdInfo; docs/cm.md) */
export const CmIdOut = z.object({
  id: RHandle, device: RHandle, listenId: z.number(),
  portSpace: z.string(),                           // RDMA_PS_TCP / RDMA_PS_UDP / RDMA_PS_IB / RDMA_PS_IPOIB (enum rdma_port_space)
  qpType: z.string(), qp: z.number(), localQpn: z.number(), remoteQpn: z.number(),
  state: z.enum(CmState.names), stateValue: z.number(),   // enum ib_cm_state (IBA 12.9)
  listening: z.boolean(), src: CmAddrOut, dst: CmAddrOut,
  localCommId: z.number(), remoteCommId: z.number(), serviceId: z.string(), peerDevice: z.number(),
});

export const queueCommands = {
  'cq.create': command({
    args: (h) => ({ device: h('device'), cqe: z.number().int().min(1).max(1 << 20), channel: z.boolean().default(false) }),
    result: z.object({ cq: RHandle, device: RHandle, cqe: z.number(), channel: z.boolean() }), creates: 'cq',
  }),
  'cq.destroy': command({ args: (h) => ({ cq: h('cq') }), result: z.object({ cq: RHandle }) }),
  'cq.req_notify': command({
    args: (h) => ({ cq: h('cq'), solicitedOnly: z.boolean().default(false), reportMissedEvents: z.boolean().default(false) }),
    result: z.object({ cq: RHandle, missedEvents: z.number().optional() }),
  }),
  'cq.poll': command({
    args: (h) => ({ cq: h('cq'), max: z.number().int().min(1).max(4096).default(16) }),
    result: z.object({ cq: RHandle, wcs: z.array(WcOut) }),
  }),
  'cq.get_event': command({ args: (h) => ({ device: h('device') }), result: z.object({ cq: RHandle }) }),
  'cq.ack_events': command({ args: (h) => ({ cq: h('cq'), n: z.number().int().min(1).max(1 << 20) }), result: z.object({ cq: RHandle, acked: z.number() }) }),
  'srq.create': command({
    args: (h) => ({ pd: h('pd'), maxWr: z.number().int().min(1).max(1 << 16), maxSge: z.number().int().min(1).max(64).default(1), srqLimit: z.number().int().min(0).max(1 << 16).default(0) }),
    result: z.object({ srq: RHandle }), creates: 'srq',
  }),
  'srq.modify': command({ args: (h) => ({ srq: h('srq'), srqLimit: z.number().int().min(0).max(1 << 16) }), result: z.object({ srq: RHandle }) }),
  'srq.destroy': command({ args: (h) => ({ srq: h('srq') }), result: z.object({ srq: RHandle }) }),
  'srq.post_recv': command({ args: (h, x: Shared) => ({ srq: h('srq'), wrs: z.array(x.RecvWr).min(1).max(1024) }), result: Posted }),
  'qp.create': command({
    args: (h) => ({
      pd: h('pd'), sendCq: h('cq'), recvCq: h('cq'), srq: h('srq').optional(), qpType: z.enum(QpType.names),
      cap: z.object({
        maxSendWr: z.number().int().min(1).max(1 << 15).default(16), maxRecvWr: z.number().int().min(0).max(1 << 15).default(16),
        maxSendSge: z.number().int().min(1).max(64).default(4), maxRecvSge: z.number().int().min(1).max(64).default(4),
        maxInlineData: z.number().int().min(0).max(4096).default(0),
      }).strict().default({ maxSendWr: 16, maxRecvWr: 16, maxSendSge: 4, maxRecvSge: 4, maxInlineData: 0 }),
      sqSigAll: z.boolean().default(false),
    }),
    result: QpOut, creates: 'qp',
  }),
  'qp.modify': command({
    args: (h, x: Shared) => ({ qp: h('qp'), attr: x.QpAttr, mask: z.array(z.enum(QpAttrMask.names)).min(1).max(21) }),
    result: QpOut,
    network: (a) => ((a.attr as Record<string, unknown> | undefined)?.dgid !== undefined ? 'points a QP at a remote host\'s GID' : null),
  }),
  'qp.query': command({ args: (h) => ({ qp: h('qp') }), result: QpOut, readOnly: true }),
  'qp.destroy': command({ args: (h) => ({ qp: h('qp') }), result: z.object({ qp: RHandle }) }),
  // peer: a QP of this session (both ends are moved), or remote: a QP on another host (only qp is moved;
  // sqPsn is our send PSN, which the other side gives as its rq PSN)
  'qp.connect': command({
    args: (h, x: Shared) => ({
      qp: h('qp'), peer: h('qp').optional(), remote: x.RemoteDest.optional(), sqPsn: U24.optional(), pathMtu: z.enum(Mtu.names).default('IBV_MTU_1024'),
      access: accessList.default(['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_READ', 'IBV_ACCESS_REMOTE_ATOMIC']),
    }),
    result: z.object({
      transitions: z.array(z.object({ qp: RHandle, to: z.string() })), qps: z.array(QpOut),
      remote: z.object({ dgid: z.string(), qpn: z.number(), psn: z.number() }).optional(), sgidIndex: z.number().optional(),
    }),
    network: (a) => (a.remote !== undefined ? 'connects a QP to a QP on another host' : null),
  }),
  'ah.create': command({
    args: (h) => ({ pd: h('pd'), destDevice: h('device'), sgidIndex: z.number().int().min(0).max(255).default(1) }),
    result: z.object({ ah: RHandle }), creates: 'ah',
  }),
  'post.send': command({ args: (h, x: Shared) => ({ qp: h('qp'), wrs: z.array(x.SendWr).min(1).max(1024) }), result: Posted }),
  'post.recv': command({ args: (h, x: Shared) => ({ qp: h('qp'), wrs: z.array(x.RecvWr).min(1).max(1024) }), result: Posted }),
  // the connection manager's IDs (rdma_cm_id) of one device, or of every device of the session
  'cm.list': command({
    args: (h) => ({ device: h('device').optional() }),
    result: z.object({ ids: z.array(CmIdOut), supported: z.boolean() }),
    readOnly: true, recorded: false,
  }),
  // rdma_cm's calls on the software device's CM (docs/cm.md), so a scenario connects two devices through the CM. A CM
  // ID is a number in the reply (`as` a result, then "$name.id"). cm.connect resolves the address and the route
  // (stepping the engine until each event) and sends the REQ; cm.accept takes the listener's next CONNECT_REQUEST
  // (stepping until it comes), gives it the QP and sends the REP; ESTABLISHED follows as the engine runs.
  'cm.createId': command({
    args: (h) => ({ device: h('device'), portSpace: z.enum(['RDMA_PS_TCP', 'RDMA_PS_UDP']).default('RDMA_PS_TCP') }),
    result: z.object({ id: RHandle }),
  }),
  'cm.bind': command({ args: () => ({ id: RHandle, ip: IpLiteral, port: CmPort }), result: z.object({ id: RHandle }) }),
  'cm.listen': command({ args: () => ({ id: RHandle, backlog: z.number().int().min(1).max(1024).default(8) }), result: z.object({ id: RHandle }) }),
  'cm.connect': command({ args: (h) => ({ id: RHandle, qp: h('qp'), ip: IpLiteral, port: CmPort }), result: z.object({ id: RHandle }) }),
  'cm.accept': command({ args: (h) => ({ listenId: RHandle, qp: h('qp') }), result: z.object({ id: RHandle, listenId: RHandle }) }),
  'cm.disconnect': command({ args: () => ({ id: RHandle }), result: z.object({ id: RHandle }) }),
};
