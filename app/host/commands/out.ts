// Native objects as command results: the numbers rdma-core uses plus their names (the result schemas of
// app/protocol/commands/shared.ts).
import type { DeviceEvent } from '../../protocol/index.ts';
import { Access, AtomicCap, DeviceCap, EventType, Mtu, MwType, QpState, QpType, WcOpcode, WcStatus, namesOf } from '../../protocol/index.ts';
import type { NDevice, NEvent, NMr, NMw, NProfile, NQp, NWc } from '../native.ts';
import { u64n } from './handler.ts';

export function profileOut(p: NProfile) {
  const caps = typeof p.deviceCapFlags === 'number' ? p.deviceCapFlags : Number(BigInt(p.deviceCapFlags) & 0xffffffffn);
  return {
    ...p,
    deviceCapNames: namesOf(DeviceCap, caps),
    atomicCapName: AtomicCap.name(p.atomicCap),
    activeMtuName: Mtu.name(p.activeMtu),
  };
}
export function deviceOut(d: NDevice) {
  return { ...d, device: d.handle, profile: profileOut(d.profile), portStateName: d.portState === 4 ? 'IBV_PORT_ACTIVE' : `port state ${d.portState}` };
}
export function mrOut(m: NMr) { return { ...m, mr: m.handle, accessNames: namesOf(Access, m.access) }; }
export function mwOut(w: NMw) { return { ...w, mw: w.handle, typeName: MwType.name(w.type), accessNames: namesOf(Access, w.access) }; }
export function wcOut(w: NWc) {
  return {
    ...w, statusName: WcStatus.name(w.status), opcodeName: WcOpcode.name(w.opcode),
    wcFlagsNames: [...(w.wcFlags & 2 ? ['IBV_WC_WITH_IMM'] : []), ...(w.wcFlags & 8 ? ['IBV_WC_WITH_INV'] : [])],
  };
}
export function qpOut(q: NQp) {
  return {
    ...q, qp: q.handle,
    init: { ...q.init, qpTypeName: QpType.name(q.init.qpType) },
    attr: {
      ...q.attr, qpStateName: QpState.name(q.attr.qpState), curQpStateName: QpState.name(q.attr.curQpState),
      pathMtuName: Mtu.name(q.attr.pathMtu), qpAccessFlagsNames: namesOf(Access, q.attr.qpAccessFlags),
    },
  };
}
export function eventOut(e: NEvent): DeviceEvent {
  const ev: DeviceEvent = {
    seq: u64n(e.seq), t: u64n(e.t), kind: e.kind, device: e.device, obj: e.obj, objKind: e.objKind,
    // a..d stay lossless: numbers up to 2^53-1, "0x.." strings above (atomic operands can be that large)
    a: e.a as number, b: e.b as number, c: e.c as number, d: e.d as number,
  };
  if (e.text !== undefined) ev.text = e.text;
  if (e.ok !== undefined) ev.ok = e.ok;
  if (e.change !== undefined) ev.change = e.change;
  if (e.keyState !== undefined) ev.keyState = e.keyState;
  if (e.pkt) ev.pkt = e.pkt;
  if (e.wc) ev.wc = wcOut(e.wc);
  if (e.kind === 'AsyncEvent') ev.text = ev.text ?? EventType.name(Number(e.a));
  return ev;
}
