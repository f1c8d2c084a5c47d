// Handlers of the queue commands (app/protocol/commands/queues.ts): CQs, SRQs, QPs, AHs, posting work requests.
import type { CommandArgs, ResultOf } from '../../protocol/index.ts';
import { Access, CmState, Mtu, QpAttrMask, QpState, QpType, SendFlag, WrOpcode, flagsOf, parseGid } from '../../protocol/index.ts';
import type { queueCommands } from '../../protocol/commands/queues.ts';
import type { NativeExecutor } from '../executor.ts';
import type { NativeCmSession, NativeSession, NCmEvent, NCmId, NQp, NQpAttr, NRecvWr, NSendWr } from '../native.ts';
import { errnoName, fail, ok, post, res, st, type Handlers, type Outcome } from './handler.ts';
import { qpOut, wcOut } from './out.ts';

export const queueHandlers: Handlers<typeof queueCommands> = {
  'cq.create': (x, a) => res(x.s.create_cq(a.device, a.cqe, a.channel), (cq) => ({ cq, device: a.device, cqe: x.s.cq_info(cq)?.cqe ?? a.cqe, channel: a.channel })),   // cqe: as granted
  'cq.destroy': (x, a) => st(x.s.destroy_cq(a.cq), { cq: a.cq }),
  'cq.req_notify': (x, a) => (a.reportMissedEvents
    ? res(x.s.req_notify_cq_report_missed(a.cq, a.solicitedOnly), (missed) => ({ cq: a.cq, missedEvents: missed }))
    : st(x.s.req_notify_cq(a.cq, a.solicitedOnly), { cq: a.cq })),
  'cq.poll': (x, a) => ok({ cq: a.cq, wcs: x.s.poll_cq(a.cq, a.max).map(wcOut) }),
  'cq.get_event': (x, a) => res(x.s.get_cq_event(a.device), (cq) => ({ cq })),
  'cq.ack_events': (x, a) => st(x.s.ack_cq_events(a.cq, a.n), { cq: a.cq, acked: a.n }),
  'srq.create': (x, a) => res(x.s.create_srq(a.pd, a.maxWr, a.maxSge, a.srqLimit), (srq) => ({ srq })),
  'srq.modify': (x, a) => st(x.s.modify_srq(a.srq, a.srqLimit), { srq: a.srq }),
  'srq.destroy': (x, a) => st(x.s.destroy_srq(a.srq), { srq: a.srq }),
  'srq.post_recv': (x, a) => post(x.s.post_srq_recv(a.srq, a.wrs.map(recvWr)), a.wrs.length),
  'qp.create': (x, a) => res(x.s.create_qp(a.pd, {
    sendCq: a.sendCq, recvCq: a.recvCq, srq: a.srq ?? 0, qpType: QpType.values[a.qpType], sqSigAll: a.sqSigAll, cap: a.cap,
  }), qpOut),
  'qp.modify': (x, a) => {
    const s = x.s.modify_qp(a.qp, qpAttr(x, a.attr), flagsOf(QpAttrMask, a.mask));
    if (s.err) return st(s, null) as Outcome<never>;
    const q = x.s.query_qp(a.qp);
    return q ? ok(qpOut(q)) : fail('ENOENT', `args.qp: no QP with handle ${a.qp} after the modify`, 'args.qp');
  },
  'qp.query': (x, a) => {
    const q = x.s.query_qp(a.qp);
    return q ? ok(qpOut(q)) : fail('ENOENT', `args.qp: no QP with handle ${a.qp}`, 'args.qp');
  },
  'qp.destroy': (x, a) => st(x.s.destroy_qp(a.qp), { qp: a.qp }),
  'qp.connect': (x, a) => connect(x, a),
  'ah.create': (x, a) => res(x.s.create_ah(a.pd, a.destDevice, a.sgidIndex), (ah) => ({ ah })),
  'post.send': (x, a) => post(x.s.post_send(a.qp, a.wrs.map((w) => sendWr(x, w))), a.wrs.length),
  'post.recv': (x, a) => post(x.s.post_recv(a.qp, a.wrs.map(recvWr)), a.wrs.length),
  'cm.list': (x, a) => {
    const cm = cmSession(x.s);
    if (!cm) return ok({ ids: [], supported: false });   // a real device's session: its CM is the kernel's
    const devs = a.device !== undefined ? [a.device] : x.s.devices().map((d) => d.handle);
    return ok({ ids: devs.flatMap((d) => cm.cm_ids(d)).map(cmIdOut), supported: true });
  },
  'cm.createId': (x, a) => withCm(x, (cm) => res(cm.cm_create_id(a.device, a.portSpace === 'RDMA_PS_UDP' ? 0x0111 : 0x0106), (id) => ({ id }))),
  'cm.bind': (x, a) => withCm(x, (cm) => st(cm.cm_bind_addr(a.id, { ip: a.ip, port: a.port }), { id: a.id })),
  'cm.listen': (x, a) => withCm(x, (cm) => st(cm.cm_listen(a.id, a.backlog), { id: a.id })),
  'cm.connect': (x, a) => withCm(x, (cm) => {
    const dev = cm.cm_id_info(a.id)?.dev;
    if (!dev) return fail('ENOENT', `args.id: no CM ID ${a.id}`, 'args.id');
    const r1 = cm.cm_resolve_addr(a.id, { ip: a.ip, port: a.port });
    if (r1.err) return st(r1, null) as Outcome<never>;
    const e1 = nextCmEvent(cm, dev, (e) => e.id === a.id);
    if (e1?.eventName !== 'RDMA_CM_EVENT_ADDR_RESOLVED') return fail('EHOSTUNREACH', `cm.connect: ${e1?.eventName ?? 'no event'} resolving ${a.ip}`, 'args.ip');
    const r2 = cm.cm_resolve_route(a.id);
    if (r2.err) return st(r2, null) as Outcome<never>;
    const e2 = nextCmEvent(cm, dev, (e) => e.id === a.id);
    if (e2?.eventName !== 'RDMA_CM_EVENT_ROUTE_RESOLVED') return fail('EHOSTUNREACH', `cm.connect: ${e2?.eventName ?? 'no event'} resolving the route`, 'args.ip');
    const r3 = cm.cm_set_qp(a.id, a.qp);
    if (r3.err) return st(r3, null) as Outcome<never>;
    return st(cm.cm_connect(a.id, {}), { id: a.id });
  }),
  'cm.accept': (x, a) => withCm(x, (cm) => {
    const dev = cm.cm_id_info(a.listenId)?.dev;
    if (!dev) return fail('ENOENT', `args.listenId: no CM ID ${a.listenId}`, 'args.listenId');
    const req = nextCmEvent(cm, dev, (e) => e.listenId === a.listenId && e.eventName === 'RDMA_CM_EVENT_CONNECT_REQUEST');
    if (!req) return fail('EAGAIN', `cm.accept: no CONNECT_REQUEST on listener ${a.listenId}`, 'args.listenId');
    const r1 = cm.cm_set_qp(req.id, a.qp);
    if (r1.err) return st(r1, null) as Outcome<never>;
    return st(cm.cm_accept(req.id, {}), { id: req.id, listenId: a.listenId });
  }),
  'cm.disconnect': (x, a) => withCm(x, (cm) => st(cm.cm_disconnect(a.id), { id: a.id })),
};

function withCm<T>(x: NativeExecutor, f: (cm: NativeSession & NativeCmSession) => Outcome<T>): Outcome<T> {
  const cm = cmSession(x.s);
  return cm ? f(cm) : fail('EOPNOTSUPP', 'the connection manager is the software device\'s: a real device\'s session has the kernel\'s');
}

/** steps the engine until the device's CM queues an event `want` takes (others of that device are consumed and
 *  passed over, as rdma_get_cm_event would hand them to the program); undefined when the engine runs dry first */
function nextCmEvent(cm: NativeSession & NativeCmSession, dev: number, want: (e: NCmEvent) => boolean): NCmEvent | undefined {
  for (let i = 0; i < 100000; i++) {
    for (const e of cm.cm_get_events(dev, 16)) if (want(e)) return e;
    if (!cm.step()) return undefined;
  }
  return undefined;
}

/** the session's connection manager (native/addon/cm.cpp), which the software device's session has */
function cmSession(s: NativeSession): (NativeSession & NativeCmSession) | undefined {
  return typeof (s as Partial<NativeCmSession>).cm_ids === 'function' ? (s as NativeSession & NativeCmSession) : undefined;
}

/** enum rdma_port_space (rdma/rdma_cma.h; vl::CmPortSpace) */
const PORT_SPACE: Readonly<Record<number, string>> = { 0x0002: 'RDMA_PS_IPOIB', 0x0106: 'RDMA_PS_TCP', 0x0111: 'RDMA_PS_UDP', 0x013f: 'RDMA_PS_IB' };
export const portSpaceName = (ps: number): string => PORT_SPACE[ps] ?? `0x${ps.toString(16)}`;

export function cmIdOut(i: NCmId): ResultOf<'cm.list'>['ids'][number] {
  return {
    id: i.id, device: i.dev, listenId: i.listenId, portSpace: portSpaceName(i.portSpace),
    qpType: QpType.name(i.qpType), qp: i.qp, localQpn: i.localQpn, remoteQpn: i.remoteQpn,
    state: CmState.nameOf(i.state) ?? 'IB_CM_IDLE', stateValue: i.state, listening: i.listening, src: i.src, dst: i.dst,
    localCommId: i.localCommId, remoteCommId: i.remoteCommId, serviceId: `0x${BigInt(i.serviceId).toString(16).padStart(16, '0')}`, peerDevice: i.peerDev,
  };
}

/** A send work request as the native session takes it (enum names to rdma-core values). */
export function sendWr(x: NativeExecutor, w: CommandArgs<'post.send'>['wrs'][number]): NSendWr {
  const out: NSendWr = {
    wrId: w.wrId, opcode: WrOpcode.values[w.opcode], sendFlags: flagsOf(SendFlag, w.sendFlags),
    sgList: w.sgList,
  };
  if (w.inlineData !== undefined) out.inlineData = Buffer.from(w.inlineData, 'hex');
  // IBV_WR_SEND_WITH_INV and IBV_WR_LOCAL_INV carry the key in imm_data's union slot (invalidate_rkey)
  if (w.immData !== undefined) out.immData = w.immData;
  if (w.invalidateRkey !== undefined) out.immData = w.invalidateRkey;
  const copy = ['remoteAddr', 'rkey', 'compareAdd', 'swap', 'ah', 'remoteQpn', 'remoteQkey', 'mw', 'bindRkey', 'bindMr',
    'bindAddr', 'bindLength', 'regMr', 'regKey'] as const;
  for (const k of copy) if (w[k] !== undefined) (out as unknown as Record<string, unknown>)[k] = w[k];
  // regKey is the new 8-bit key byte (ib_update_fast_reg_key); the REG_MR WR carries the whole key:
  // the MR's 24-bit index with that byte (kernel struct ib_reg_wr.key)
  if (w.regKey !== undefined && w.regMr !== undefined) {
    const m = x.s.mr_info(w.regMr);
    if (m) out.regKey = ((m.lkey & ~0xff) | w.regKey) >>> 0;
  }
  if (w.bindAccess) out.bindAccess = flagsOf(Access, w.bindAccess);
  if (w.regAccess) out.regAccess = flagsOf(Access, w.regAccess);
  return out;
}
function recvWr(w: { wrId: number | string; sgList: { addr: number; length: number; lkey: number }[] }): NRecvWr {
  return { wrId: w.wrId, sgList: w.sgList };
}

/** Address vector for a peer device: the GID at sgidIndex of the destination device's port 1. */
function dgidOf(x: NativeExecutor, destDevice: number, sgidIndex: number): Uint8Array | undefined {
  const g = x.deviceInfo(destDevice)?.gids.find((y) => y.index === sgidIndex);
  return g ? Buffer.from(g.gid.replace(/:/g, ''), 'hex') : undefined;
}
/** The RoCE v2 GID index (rc_pingpong -g): first GID of type "RoCE v2", else 0. On a real device, the first
 *  RoCE v2 GID of an IP address when there is one (the link-local GID has no route through a loopback
 *  interface, hence rc_pingpong's -g), else the first RoCE v2 one, else 0 (InfiniBand: LIDs route). */
function roceV2Index(x: NativeExecutor, dev: number): number {
  const v2 = x.deviceInfo(dev)?.gids.filter((g) => /v2/i.test(g.type)) ?? [];
  if (x.realSession) return (v2.find((g) => !/^fe[89ab]/.test(g.gid)) ?? v2[0])?.index ?? 0;
  return v2[0]?.index ?? 0;
}
/** The GIDs a remote QP can be reached from: those the UDP transport bound a socket for; a real device's own table. */
function localGids(x: NativeExecutor, dev: number): { index: number; gid: string; type: string }[] | undefined {
  if (x.realSession) return x.deviceInfo(dev)?.gids;
  return x.s.net_info(dev)?.gids;
}
/** The default sgid index for a remote dgid: a GID of the same family (on a real device a RoCE v2 one first). */
function sgidFor(x: NativeExecutor, dev: number, dgid: Uint8Array): number | undefined {
  const all = localGids(x, dev);
  if (!all) return undefined;
  const net = { gids: [...all.filter((g) => /v2/i.test(g.type)), ...all.filter((g) => !/v2/i.test(g.type))] };
  const v4 = dgid.slice(0, 12).every((b, i) => b === (i < 10 ? 0 : 0xff));
  const ll = dgid[0] === 0xfe && (dgid[1]! & 0xc0) === 0x80;
  const isV4 = (g: string) => g.startsWith('0000:0000:0000:0000:0000:ffff:');
  const isLl = (g: string) => /^fe[89ab]/.test(g);
  const g = net.gids.find((y) => (v4 ? isV4(y.gid) : ll ? isLl(y.gid) : !isV4(y.gid) && !isLl(y.gid)));
  return g?.index;
}

function qpAttr(x: NativeExecutor, a: CommandArgs<'qp.modify'>['attr']): NQpAttr {
  const out: NQpAttr = {};
  if (a.qpState !== undefined) out.qpState = QpState.values[a.qpState];
  if (a.pathMtu !== undefined) out.pathMtu = Mtu.values[a.pathMtu];
  if (a.qpAccessFlags !== undefined) out.qpAccessFlags = flagsOf(Access, a.qpAccessFlags);
  const copy = ['qkey', 'rqPsn', 'sqPsn', 'destQpNum', 'destDevice', 'sgidIndex', 'pkeyIndex', 'portNum', 'maxRdAtomic',
    'maxDestRdAtomic', 'minRnrTimer', 'timeout', 'retryCnt', 'rnrRetry'] as const;
  for (const k of copy) if (a[k] !== undefined) (out as unknown as Record<string, unknown>)[k] = a[k];
  if (a.destDevice !== undefined) {
    const g = dgidOf(x, a.destDevice, a.sgidIndex ?? 0);
    if (g) out.dgid = g;
  }
  if (a.dgid !== undefined) {          // a remote host's GID (schema-checked); destDevice 0 = that host
    const g = parseGid(a.dgid);
    if (g) { out.dgid = g; out.destDevice ??= 0; }
  }
  return out;
}

type Connected = Outcome<ResultOf<'qp.connect'>>;

/** qp.connect: RESET->INIT->RTR->RTS on both QPs with rc_pingpong's attributes. */
function connect(x: NativeExecutor, a: CommandArgs<'qp.connect'>): Connected {
  const q1 = x.s.query_qp(a.qp);
  if (!q1) return fail('ENOENT', `args.qp: no QP with handle ${a.qp}`, 'args.qp');
  if ((a.peer === undefined) === (a.remote === undefined))
    return fail('EINVAL', 'args.peer: give exactly one of "peer" (a QP of this session) or "remote" (a QP on another host: dgid, qpn, psn)', 'args.peer');
  if (a.remote) return connectRemote(x, a, q1, a.remote);
  const q2 = x.s.query_qp(a.peer!);
  if (!q2) return fail('ENOENT', `args.peer: no QP with handle ${a.peer}`, 'args.peer');
  const pairs: [NQp, NQp][] = a.qp === a.peer ? [[q1, q1]] : [[q1, q2], [q2, q1]];
  const access = flagsOf(Access, a.access);
  const mtu = Mtu.values[a.pathMtu];
  const M = QpAttrMask.values;
  const PSN = 0; // rc_pingpong draws a random PSN; the lab uses 0 so recorded sessions are reproducible
  const steps: { state: string; attr: (me: NQp, peer: NQp) => NQpAttr; mask: (t: number) => number }[] = [
    {
      state: 'IBV_QPS_INIT',
      attr: (me) => (me.init.qpType === QpType.values.IBV_QPT_UD
        ? { qpState: QpState.values.IBV_QPS_INIT, pkeyIndex: 0, portNum: 1, qkey: 0x11111111 }
        : { qpState: QpState.values.IBV_QPS_INIT, pkeyIndex: 0, portNum: 1, qpAccessFlags: access }),
      mask: (t) => M.IBV_QP_STATE | M.IBV_QP_PKEY_INDEX | M.IBV_QP_PORT | (t === QpType.values.IBV_QPT_UD ? M.IBV_QP_QKEY : M.IBV_QP_ACCESS_FLAGS),
    },
    {
      state: 'IBV_QPS_RTR',
      attr: (me, peer) => {
        if (me.init.qpType === QpType.values.IBV_QPT_UD) return { qpState: QpState.values.IBV_QPS_RTR };
        const dgid = dgidOf(x, peer.device, roceV2Index(x, peer.device));
        return {
          qpState: QpState.values.IBV_QPS_RTR, pathMtu: mtu, destQpNum: peer.qpNum, rqPsn: PSN,
          maxDestRdAtomic: 1, minRnrTimer: 12, destDevice: peer.device, sgidIndex: roceV2Index(x, me.device),
          portNum: 1, ...(dgid ? { dgid } : {}),
        };
      },
      mask: (t) => M.IBV_QP_STATE | (t === QpType.values.IBV_QPT_UD ? 0
        : M.IBV_QP_AV | M.IBV_QP_PATH_MTU | M.IBV_QP_DEST_QPN | M.IBV_QP_RQ_PSN
          | (t === QpType.values.IBV_QPT_RC ? M.IBV_QP_MAX_DEST_RD_ATOMIC | M.IBV_QP_MIN_RNR_TIMER : 0)),
    },
    {
      state: 'IBV_QPS_RTS',
      attr: () => ({ qpState: QpState.values.IBV_QPS_RTS, sqPsn: PSN, timeout: 14, retryCnt: 7, rnrRetry: 7, maxRdAtomic: 1 }),
      mask: (t) => M.IBV_QP_STATE | M.IBV_QP_SQ_PSN
        | (t === QpType.values.IBV_QPT_RC ? M.IBV_QP_TIMEOUT | M.IBV_QP_RETRY_CNT | M.IBV_QP_RNR_RETRY | M.IBV_QP_MAX_QP_RD_ATOMIC : 0),
    },
  ];
  const transitions: { qp: number; to: string }[] = [];
  for (const step of steps) {
    for (const [me, peer] of pairs) {
      const s = x.s.modify_qp(me.handle, step.attr(me, peer), step.mask(me.init.qpType));
      if (s.err) {
        const which = me.handle === a.qp ? 'args.qp' : 'args.peer';
        return fail(errnoName(s.err), `${which}: modify to ${step.state} failed: ${s.msg}`, which);
      }
      transitions.push({ qp: me.handle, to: step.state });
    }
  }
  const after = pairs.map(([me]) => x.s.query_qp(me.handle)).filter((q): q is NQp => !!q).map(qpOut);
  return ok({ transitions, qps: after });
}

/** qp.connect to a QP on another host: RESET->INIT->RTR->RTS on this side only, the address vector naming the
 *  remote GID (ibv_modify_qp as rc_pingpong does it with the numbers the other side printed). */
function connectRemote(x: NativeExecutor, a: CommandArgs<'qp.connect'>, q: NQp, rem: NonNullable<CommandArgs<'qp.connect'>['remote']>): Connected {
  if (q.init.qpType === QpType.values.IBV_QPT_UD)
    return fail('EOPNOTSUPP', 'args.remote: UD QPs are not carried over the network (an address handle names no remote GID)', 'args.remote');
  if (!x.netDevices.has(q.device) && !x.realSession)   // a real device is on its own network
    return fail('ENETDOWN', `args.remote: qp ${q.handle} is on ${x.deviceInfo(q.device)?.name ?? `device ${q.device}`}, which is not on the network (put it on the network first: device.attachNet)`, 'args.remote');
  const dgid = parseGid(rem.dgid);
  if (!dgid) return fail('EINVAL', `args.remote.dgid: "${rem.dgid}" is not a GID`, 'args.remote.dgid');
  const gids = localGids(x, q.device) ?? [];
  const sgid = rem.sgidIndex ?? sgidFor(x, q.device, dgid);
  if (sgid === undefined)
    return fail('EINVAL', `args.remote.sgidIndex: no local GID of the same family as ${rem.dgid} (the device's GIDs: ${gids.map((g) => `${g.index} ${g.gid}`).join(', ')}); give sgidIndex`, 'args.remote.sgidIndex');
  if (!gids.some((g) => g.index === sgid))
    return fail('EINVAL', `args.remote.sgidIndex: the device has no GID ${sgid} (it has ${gids.length})`, 'args.remote.sgidIndex');
  const M = QpAttrMask.values; const S = QpState.values;
  const uc = q.init.qpType === QpType.values.IBV_QPT_UC;
  const steps: { state: string; attr: NQpAttr; mask: number }[] = [
    { state: 'IBV_QPS_INIT', attr: { qpState: S.IBV_QPS_INIT, pkeyIndex: 0, portNum: 1, qpAccessFlags: flagsOf(Access, a.access) },
      mask: M.IBV_QP_STATE | M.IBV_QP_PKEY_INDEX | M.IBV_QP_PORT | M.IBV_QP_ACCESS_FLAGS },
    { state: 'IBV_QPS_RTR', attr: { qpState: S.IBV_QPS_RTR, pathMtu: Mtu.values[a.pathMtu], destQpNum: rem.qpn, rqPsn: rem.psn,
      maxDestRdAtomic: 1, minRnrTimer: 12, destDevice: 0, sgidIndex: sgid, portNum: 1, dgid },
      mask: M.IBV_QP_STATE | M.IBV_QP_AV | M.IBV_QP_PATH_MTU | M.IBV_QP_DEST_QPN | M.IBV_QP_RQ_PSN | (uc ? 0 : M.IBV_QP_MAX_DEST_RD_ATOMIC | M.IBV_QP_MIN_RNR_TIMER) },
    { state: 'IBV_QPS_RTS', attr: { qpState: S.IBV_QPS_RTS, sqPsn: a.sqPsn ?? 0, timeout: 14, retryCnt: 7, rnrRetry: 7, maxRdAtomic: 1 },
      mask: M.IBV_QP_STATE | M.IBV_QP_SQ_PSN | (uc ? 0 : M.IBV_QP_TIMEOUT | M.IBV_QP_RETRY_CNT | M.IBV_QP_RNR_RETRY | M.IBV_QP_MAX_QP_RD_ATOMIC) },
  ];
  const transitions: { qp: number; to: string }[] = [];
  for (const step of steps) {
    const r = x.s.modify_qp(q.handle, step.attr, step.mask);
    if (r.err) return fail(errnoName(r.err), `args.qp: modify to ${step.state} failed: ${r.msg}`, 'args.qp');
    transitions.push({ qp: q.handle, to: step.state });
  }
  const after = x.s.query_qp(q.handle);
  return ok({ transitions, qps: after ? [qpOut(after)] : [], remote: { dgid: rem.dgid, qpn: rem.qpn, psn: rem.psn }, sgidIndex: sgid });
}
