// The hello lab's message and decoder, and its lab run headless (the template's own check).
import { describe, expect, it } from 'vitest';
import { decodePayload } from '../../app/protocol/decoders.ts';
import { BthOpcode } from '../../app/protocol/bth.ts';
import { runLabs } from '../../app/scenario/lab-cli.ts';
import { executorFactory } from '../../app/scenario/testlib.ts';
import { decodeHello, encodeHello, HelloKind } from './message.ts';

const make = await executorFactory('hello lab tests');

describe('hello lab', () => {
  it('encodes and decodes a message; the registry decodes it on an RDMA WRITE only', () => {
    const m = encodeHello('REPLY', 'hé');
    expect([...m]).toEqual([0x48, 0x45, 0x4c, 0x4f, HelloKind.values.REPLY, 3, 0x68, 0xc3, 0xa9]);
    expect(decodeHello(m)).toEqual({ kind: 'REPLY', length: 3, text: 'hé' });
    expect(decodeHello(m.subarray(0, 8))).toBeUndefined();   // shorter than its length byte says
    expect(decodePayload({ opcode: BthOpcode.RC_RDMA_WRITE_ONLY, destQp: 17, payload: m })?.summary).toBe('Hello REPLY "hé"');
    expect(decodePayload({ opcode: BthOpcode.RC_SEND_ONLY, destQp: 17, payload: m })?.protocol).not.toBe('hello');
  });

  it('walks to green headless', async () => {
    const { runs, errors } = await runLabs(['hello'], { factory: make });
    expect(errors).toEqual([]);
    expect(runs[0]!.steps.map((s) => [s.id, s.passed])).toEqual([['pair', true], ['write', true]]);
  });
});
