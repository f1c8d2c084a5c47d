// The profile quirk flags exist twice: in the device's profile table (native/include/vl/session.h, reported by the
// addon as profile.quirks) and in app/protocol/quirks.ts (the console's words for each rule). They must agree.
import { describe, expect, it } from 'vitest';
import { loadAddon } from './native.ts';
import { QUIRKS, QUIRK_NAMES, actsAsRxe, quirkRules } from '../protocol/quirks.ts';
import { explainWc } from '../../renderer/src/store/explain.ts';

const profiles = loadAddon().Session.profiles();
const byName = (n: string) => profiles.find((p) => p.name === n)!;

describe('profile quirks: device table and console table agree', () => {
  it('every profile reports exactly the flags of app/protocol/quirks.ts', () => {
    for (const p of profiles) expect(Object.keys(p.quirks).sort(), p.name).toEqual([...QUIRK_NAMES].sort());
  });
  it('the rxe profile sets every flag to its rxe value; cx to the other one', () => {
    for (const n of QUIRK_NAMES) {
      expect(byName('rxe').quirks[n], n).toBe(QUIRKS[n].rxeValue);
      expect(actsAsRxe(byName('cx').quirks, n), n).toBe(false);
    }
  });
  it('numeric flags carry rdma-core / errno numbers', () => {
    expect(byName('rxe').quirks.localKeyErrorStatus).toBe(2);   // IBV_WC_LOC_QP_OP_ERR
    expect(byName('cx').quirks.localKeyErrorStatus).toBe(4);    // IBV_WC_LOC_PROT_ERR
    expect(byName('rxe').quirks.deregBoundMrErrno).toBe(22);    // EINVAL
    expect(byName('cx').quirks.deregBoundMrErrno).toBe(16);     // EBUSY
  });
});

describe('explanations name the rule that applied', () => {
  it('rxe: a local key failure as IBV_WC_LOC_QP_OP_ERR says rxe and what the IBA does', () => {
    const t = explainWc('IBV_WC_LOC_QP_OP_ERR', 'lkey 0x1234: key byte 0x34 != 0x35', byName('rxe').quirks);
    expect(t).toContain('lkey 0x1234: key byte 0x34 != 0x35');
    expect(t).toContain('This device follows rxe');
    expect(t).toContain('IBV_WC_LOC_PROT_ERR');
    expect(t).toContain('rxe_req.c');
  });
  it('cx: IBV_WC_LOC_PROT_ERR says the IBA rule and what rxe does', () => {
    const rules = quirkRules('IBV_WC_LOC_PROT_ERR', byName('cx').quirks);
    expect(rules.some((r) => r.startsWith('This device follows the IBA / ConnectX') && r.includes('IBV_WC_LOC_QP_OP_ERR'))).toBe(true);
  });
  it('rxe: IBV_WC_RETRY_EXC_ERR mentions the receive CQ overrun rule; cx does not', () => {
    expect(quirkRules('IBV_WC_RETRY_EXC_ERR', byName('rxe').quirks).join(' ')).toContain('rxe_resp.c do_complete');
    expect(quirkRules('IBV_WC_RETRY_EXC_ERR', byName('cx').quirks)).toEqual([]);
  });
  it('no profile flags, no rule sentences', () => {
    expect(explainWc('IBV_WC_REM_OP_ERR')).toBe('the responder could not complete the operation (NAK Remote Operational Error)');
  });
});
