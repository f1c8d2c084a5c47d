// The Connections (RDMA CM) table's facts, kept out of the component so they are tested without a DOM: when to ask
// cm.list again (a CmState event arrived: the device reports every IBA 12.9 state change of a CM ID as one), and the
// path of states a CM ID walks, active side (rdma_connect) or passive side (a listener's child), with IBA 12.9's
// names (enum ib_cm_state, app/protocol/enums.ts CmState).
import type { EventRing } from '../../store/eventRing.ts';

/** whether the ring received a CmState event at an absolute position >= from (positions no longer held count; a
 *  ring that holds fewer events than `from` was cleared, by a session reset: ask) */
export function cmStateSince(ring: EventRing, from: number): boolean {
  if (from > ring.total) return true;
  const kind = ring.kinds.lookup('CmState');
  if (kind < 0 || from === ring.total) return false;
  if (from < ring.first) return true;   // events left the ring unseen: ask
  for (let p = from; p < ring.total; p++) if (ring.kind[p % ring.capacity] === kind) return true;
  return false;
}

/** the states of a connection, in the order the CM walks them (IBA 12.9.6 figures 165-167, without MRA and LAP) */
export const ACTIVE_PATH = ['IB_CM_IDLE', 'IB_CM_REQ_SENT', 'IB_CM_REP_RCVD', 'IB_CM_ESTABLISHED', 'IB_CM_DREQ_SENT', 'IB_CM_TIMEWAIT'] as const;
export const PASSIVE_PATH = ['IB_CM_LISTEN', 'IB_CM_REQ_RCVD', 'IB_CM_REP_SENT', 'IB_CM_ESTABLISHED', 'IB_CM_DREQ_RCVD', 'IB_CM_TIMEWAIT'] as const;

/** the path to draw for a CM ID: a listener's child or a listener walks the passive one */
export function pathOf(id: { listenId: number; listening: boolean; state: string }): readonly string[] {
  const passive = id.listening || id.listenId !== 0 || id.state === 'IB_CM_DREQ_RCVD';
  const path: readonly string[] = passive ? PASSIVE_PATH : ACTIVE_PATH;
  return path.includes(id.state) ? path : [...path, id.state];   // a state off the path (MRA, SIDR) is shown after it
}

/** "10.0.0.2:4420", "[fe80::1]:4420", or "*" for an unbound address */
export function addrText(a: { family: string; ip: string; port: number }): string {
  if (!a.family && !a.port) return '*';
  return `${a.family === 'ipv6' ? `[${a.ip}]` : a.ip || '*'}:${a.port}`;
}
