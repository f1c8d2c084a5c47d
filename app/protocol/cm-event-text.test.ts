// CmState / CmMad events in words (cm-event-text.ts), from the numbers native/EVENTS.md gives them.
import { describe, expect, it } from 'vitest';
import { cmEventText } from './cm-event-text.ts';
import { CmAttr, CmMadDir, CmState } from './enums.ts';

describe('CM events in words', () => {
  it('a CmState event names both states from the ib_cm_state table', () => {
    expect(cmEventText({ kind: 'CmState', a: CmState.values.IB_CM_REQ_SENT, b: CmState.values.IB_CM_ESTABLISHED, c: 0x5, d: 0xabc }))
      .toBe('IB_CM_REQ_SENT → IB_CM_ESTABLISHED comm 0x5 → 0xabc');
    expect(cmEventText({ kind: 'CmState', a: CmState.values.IB_CM_IDLE, b: CmState.values.IB_CM_LISTEN, c: 0, d: 0 })).toBe('IB_CM_IDLE → IB_CM_LISTEN');
  });

  it('a CmMad event: the message and what happened to it; a REJ with its reason by name', () => {
    expect(cmEventText({ kind: 'CmMad', a: CmAttr.values.REQ, b: CmMadDir.values.SENT, c: 0x11223344, d: 0 })).toBe('REQ sent comm 0x11223344 → 0x0');
    expect(cmEventText({ kind: 'CmMad', a: CmAttr.values.REJ | (8 << 16), b: CmMadDir.values.RECEIVED, c: 7, d: 5 }))
      .toBe('REJ received: reason 8 INVALID_SERVICE_ID comm 0x7 → 0x5');
    expect(cmEventText({ kind: 'CmMad', a: CmAttr.values.DREQ, b: CmMadDir.values.RESENT, c: 1, d: 2 })).toBe('DREQ resent comm 0x1 → 0x2');
    expect(cmEventText({ kind: 'CmMad', a: CmAttr.values.SIDR_REQ, b: CmMadDir.values.DROPPED, c: 9, d: 0 })).toBe('SIDR_REQ dropped request 0x9');
    expect(cmEventText({ kind: 'CmMad', a: 0x99, b: 7, c: 0, d: 0 })).toBe('attribute 0x99 direction 7');
    expect(cmEventText({ kind: 'QpState', a: 1, b: 2, c: 0, d: 0 })).toBeUndefined();
  });
});
