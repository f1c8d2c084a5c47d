// The Connections (RDMA CM) table's facts (panels/queues/connections.ts): when cm.list is asked again, the path a
// CM ID's state is lit on, addresses as text.
import { describe, expect, it } from 'vitest';
import { EventRing } from '../../store/eventRing.ts';
import { addrText, cmStateSince, pathOf } from '../queues/connections.ts';

const ev = (kind: string, seq: number) => ({ seq, t: seq, kind, device: 1, obj: 1, objKind: 'cm_id', a: 0, b: 0, c: 0, d: 0 });

describe('Connections (RDMA CM)', () => {
  it('asks cm.list again only when a CmState event arrived since the last look', () => {
    const r = new EventRing(4);
    expect(cmStateSince(r, 0)).toBe(false);
    r.push(ev('PacketSent', 1)); r.push(ev('CmMad', 2));
    expect(cmStateSince(r, 0)).toBe(false);
    r.push(ev('CmState', 3));
    expect(cmStateSince(r, 0)).toBe(true);
    expect(cmStateSince(r, 3)).toBe(false);
    r.push(ev('Cqe', 4)); r.push(ev('Cqe', 5)); r.push(ev('Cqe', 6)); r.push(ev('Cqe', 7));   // the CmState at 2 left the ring
    expect(cmStateSince(r, 3)).toBe(false);
    expect(cmStateSince(r, 1)).toBe(true);   // positions no longer held: unknown, so ask
    expect(cmStateSince(new EventRing(4), 7)).toBe(true);   // a ring emptied by a session reset: ask
  });

  it('the active side walks REQ sent → REP received, a listener\'s child REQ received → REP sent', () => {
    expect(pathOf({ listenId: 0, listening: false, state: 'IB_CM_REQ_SENT' })).toEqual(['IB_CM_IDLE', 'IB_CM_REQ_SENT', 'IB_CM_REP_RCVD', 'IB_CM_ESTABLISHED', 'IB_CM_DREQ_SENT', 'IB_CM_TIMEWAIT']);
    expect(pathOf({ listenId: 3, listening: false, state: 'IB_CM_ESTABLISHED' })).toEqual(['IB_CM_LISTEN', 'IB_CM_REQ_RCVD', 'IB_CM_REP_SENT', 'IB_CM_ESTABLISHED', 'IB_CM_DREQ_RCVD', 'IB_CM_TIMEWAIT']);
    expect(pathOf({ listenId: 0, listening: false, state: 'IB_CM_MRA_REP_SENT' }).at(-1)).toBe('IB_CM_MRA_REP_SENT');
  });

  it('addresses', () => {
    expect(addrText({ family: 'ipv4', ip: '10.0.0.2', port: 4420 })).toBe('10.0.0.2:4420');
    expect(addrText({ family: 'ipv6', ip: 'fe80::1', port: 1 })).toBe('[fe80::1]:1');
    expect(addrText({ family: '', ip: '', port: 0 })).toBe('*');
  });
});
