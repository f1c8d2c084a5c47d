// cm.list for an attached program (verbslab exec --console): its CM IDs folded from the events it sent, since the
// program's state message carries no CM IDs. ObjectCreated of kind cm_id gives the port space (a) and QP type (b),
// CmState the IBA 12.9 state entered (b) and the comm IDs (c / d), ObjectDestroyed ends it (native/EVENTS.md). What
// events do not carry (addresses, QP, QPNs, service ID) is left empty: the table shows "*" and blanks.
import type { ResultOf } from '../protocol/index.ts';
import { CmState, QpType } from '../protocol/index.ts';
import type { DeviceEvent } from '../protocol/event.ts';
import { portSpaceName } from './commands/queues.ts';

type CmIdOut = ResultOf<'cm.list'>['ids'][number];
const NONE = { family: '' as const, ip: '', port: 0 };

/** the CM IDs alive after `events` (in seq order; an event seen twice counts once), of one device or all */
export function cmIdsOfEvents(events: readonly DeviceEvent[], device?: number): CmIdOut[] {
  const ids = new Map<number, CmIdOut>();
  let last = -Infinity;
  for (const e of [...events].sort((x, y) => x.seq - y.seq)) {
    if (e.seq === last) continue;
    last = e.seq;
    if (e.objKind !== 'cm_id' || (device !== undefined && e.device !== device)) continue;
    if (e.kind === 'ObjectCreated') {
      ids.set(e.obj, { id: e.obj, device: e.device, listenId: 0, portSpace: portSpaceName(Number(e.a)), qpType: QpType.name(Number(e.b)), qp: 0,
        localQpn: 0, remoteQpn: 0, state: 'IB_CM_IDLE', stateValue: 0, listening: false, src: NONE, dst: NONE,
        localCommId: 0, remoteCommId: 0, serviceId: '', peerDevice: 0 });
    } else if (e.kind === 'ObjectDestroyed') ids.delete(e.obj);
    else if (e.kind === 'CmState') {
      const i = ids.get(e.obj);
      if (!i) continue;
      const st = Number(e.b);
      i.state = CmState.nameOf(st) ?? 'IB_CM_IDLE'; i.stateValue = st; i.listening = st === CmState.values.IB_CM_LISTEN;
      i.localCommId = Number(e.c); i.remoteCommId = Number(e.d);
    }
  }
  return [...ids.values()];
}
