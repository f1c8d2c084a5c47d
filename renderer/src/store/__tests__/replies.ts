// Replies of a fake host, complete per the protocol's result schemas (ResultOf<N>): the console reads replies as
// typed, so a fake answers with every field a real host gives. Each builder takes the fields a test cares about.
import type { ResultOf } from '../../../../app/protocol/index.ts';

type DeviceEntry = ResultOf<'device.list'>['devices'][number];
type Profile = DeviceEntry['profile'];

export function profileOut(over: Partial<Profile> = {}): Profile {
  return {
    name: 'rxe', description: 'software RoCE', transport: 'RoCEv2', deviceCapFlags: 0, atomicCap: 1, maxQp: 64, maxQpWr: 64,
    maxSge: 4, maxCq: 64, maxCqe: 64, maxMr: 64, maxPd: 64, maxMw: 64, maxSrq: 64, maxSrqWr: 64, maxSrqSge: 4, maxQpRdAtom: 1,
    maxQpInitRdAtom: 1, maxFastRegPageListLen: 64, maxInlineData: 0, activeMtu: 3, maxMrSize: 0, pageSizeCap: 4096,
    indirectReg: false, zeroBasedMr: false, readWithInv: false, lkeyEqRkey: true, keyBytePolicy: 'increment', quirks: {}, notifyReportsMissed: true,
    deviceCapNames: [], atomicCapName: 'IBV_ATOMIC_HCA', activeMtuName: 'IBV_MTU_1024', ...over,
  };
}
export function deviceOut(over: Partial<DeviceEntry> = {}): DeviceEntry {
  const handle = over.handle ?? over.device ?? 1;
  return { handle, device: handle, name: 'vlrxe0', profile: profileOut(), nodeGuid: '0', gids: [], portState: 4, portStateName: 'IBV_PORT_ACTIVE', net: null, ...over };
}
export function deviceList(over: Partial<ResultOf<'device.list'>> = {}): ResultOf<'device.list'> {
  return { devices: [], interfaces: [], realTime: false, profiles: [], realDevices: [], libibverbs: false, ...over };
}
export function sessionInfo(over: Partial<ResultOf<'session.info'>> = {}): ResultOf<'session.info'> {
  return {
    seed: 1, epoch: 0, nowNs: 0, napiVersion: 9, profiles: [], objects: [], autorun: { on: false, stepsPerSecond: 1000, free: false },
    realTime: false, network: [], traffic: null, eventSeq: 0, ...over,
  };
}
export function qpOut(over: { handle: number; qpNum: number; state?: number }): ResultOf<'qp.query'> {
  return {
    handle: over.handle, qp: over.handle, qpNum: over.qpNum, device: 1,
    init: { sendCq: 0, recvCq: 0, srq: 0, pd: 0, qpType: 2, qpTypeName: 'IBV_QPT_RC', sqSigAll: false, cap: { maxSendWr: 16, maxRecvWr: 16, maxSendSge: 4, maxRecvSge: 4, maxInlineData: 0 } },
    attr: {
      qpState: over.state ?? 0, qpStateName: '', curQpState: 0, curQpStateName: '', pathMtu: 3, pathMtuName: 'IBV_MTU_1024', qpAccessFlags: 0,
      qpAccessFlagsNames: [], qkey: 0, rqPsn: 0, sqPsn: 0, destQpNum: 0, pkeyIndex: 0, portNum: 1, maxRdAtomic: 0, maxDestRdAtomic: 0,
      minRnrTimer: 0, timeout: 0, retryCnt: 0, rnrRetry: 0, sgidIndex: 0, destDevice: 0, dgid: '',
    },
  };
}
/** the answer of a host with nothing in it, for the read commands a console sends on connect */
export function emptyReply(cmd: string): unknown {
  return cmd === 'device.list' ? deviceList() : cmd === 'session.info' ? sessionInfo() : cmd === 'events.recent' ? { first: 0, count: 0, events: [] } : {};
}
