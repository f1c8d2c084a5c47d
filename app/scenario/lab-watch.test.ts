// lab-watch: a step's outcome (completions, packets, key states: what names no object) found in an event stream in
// order, each step after the previous one seen.
import { describe, expect, it } from 'vitest';
import type { DeviceEvent } from '../protocol/index.ts';
import { seenByHand, stepSignature } from './lab-watch.ts';

const ev = (kind: string, over: Partial<DeviceEvent> = {}): DeviceEvent => ({ seq: 0, t: 0, kind, device: 1, obj: 1, objKind: 'qp', a: 0, b: 0, c: 0, d: 0, ...over });
const cqe = (status: number, opcode: number) => ev('Cqe', { wc: { status, opcode } });
const pkt = (hex: string) => ev('PacketSent', { pkt: { hex } });
const step = (id: string, expect: Record<string, unknown>) => ({ id, run: [{ cmd: 'cq.poll', args: { cq: 'cq' }, expect }] as never[] });

describe('lab-watch', () => {
  it('a signature holds the completions, packets and key states a step expects, not named objects', () => {
    const s = stepSignature({ run: [
      { cmd: 'pd.alloc', args: { device: 'dev0' }, as: 'pd' },
      { cmd: 'engine.run', args: {}, expect: { packet: [{ opcode: 'RC_ACKNOWLEDGE', syndrome: 'NAK_REMOTE_ACCESS_ERROR', count: 1 }, { opcode: 'RC_SEND_ONLY', count: 0 }] } },
      { cmd: 'cq.poll', args: { cq: 'cq' }, expect: { wc: [{ status: 'IBV_WC_REM_ACCESS_ERR', wrId: 2 }], keyState: [{ key: 'mr', state: 'free' }] } },
      { cmd: 'post.send', args: {}, expect: { error: 'EINVAL', wc: [{ status: 'IBV_WC_SUCCESS' }] } },
    ] as never[] });
    expect(s.map((w) => w.text)).toEqual(['RC_ACKNOWLEDGE NAK_REMOTE_ACCESS_ERROR packet', 'IBV_WC_REM_ACCESS_ERR completion', 'a key FREE']);
    expect(stepSignature({ run: [{ cmd: 'pd.alloc', args: { device: 'dev0' } }] as never[] })).toEqual([]);
  });
  it('steps are seen in order, each after the previous one; a wrong outcome does not count', () => {
    const steps = [step('ok', { wc: [{ status: 'IBV_WC_SUCCESS', opcode: 'IBV_WC_RDMA_WRITE' }] }), step('bad', { wc: [{ status: 'IBV_WC_REM_ACCESS_ERR' }] }),
      step('setup', {}), step('ok2', { wc: [{ status: 'IBV_WC_SUCCESS', opcode: 'IBV_WC_RDMA_WRITE' }] })];
    // nothing yet
    expect(seenByHand(steps, []).map((r) => r.seen)).toEqual([false, false, false, false]);
    // a READ completion is not the WRITE the first step expects
    expect(seenByHand(steps, [cqe(0, 2)]).map((r) => r.seen)).toEqual([false, false, false, false]);
    // WRITE ok, then the NAKed one: both seen; the second WRITE must come after the error, so ok2 is not seen yet
    const evs = [cqe(0, 1), cqe(10, 1)];
    expect(seenByHand(steps, evs).map((r) => [r.id, r.watchable, r.seen])).toEqual([['ok', true, true], ['bad', true, true], ['setup', false, false], ['ok2', true, false]]);
    expect(seenByHand(steps, [...evs, cqe(0, 1)]).at(-1)!.seen).toBe(true);
    // the error before the success: "bad" is seen, but "ok2" needs a WRITE after it
    expect(seenByHand(steps, [cqe(10, 1), cqe(0, 1)]).map((r) => r.seen)).toEqual([true, false, false, false]);
  });
  it('packets by opcode and AETH syndrome; key states from MR / MW events', () => {
    const nak = '11400000' + '00000001' + '00000005' + '62000001';   // RC_ACKNOWLEDGE, AETH syndrome 0x62 (NAK remote access)
    const steps = [step('nak', { packet: [{ opcode: 'RC_ACKNOWLEDGE', syndrome: 'NAK_REMOTE_ACCESS_ERROR', count: 1 }] }), step('free', { keyState: [{ key: 'k', state: 'free' }] })];
    expect(seenByHand(steps, [pkt('11400000000000010000000500000001')]).map((r) => r.seen)).toEqual([false, false]);   // a plain ACK
    expect(seenByHand(steps, [pkt(nak), ev('ObjectCreated', { objKind: 'mr', keyState: 1 })]).map((r) => r.seen)).toEqual([true, true]);
  });
});
