// The profile quirk flags exist twice: in the device's profile table (native/include/vl/session.h, reported by the
// addon as profile.quirks) and in app/protocol/quirks.ts (the console's words for each rule). They must agree.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadAddon } from './native.ts';
import { createExecutor } from './executor.ts';
import { runScenario } from '../scenario/run.ts';
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
  it('rxe: a sender\'s IBV_WC_REM_OP_ERR tells the receive-too-small rule as a condition, with what the IBA does', () => {
    const t = explainWc('IBV_WC_REM_OP_ERR', undefined, byName('rxe').quirks);
    expect(t).toContain('If the SEND was longer than the posted receive buffers: this device follows rxe');
    expect(t).toContain('IBV_WC_REM_INV_REQ_ERR');
    expect(t).toContain('rxe_resp.c send_data_in');
  });
  it('cx: IBV_WC_LOC_PROT_ERR tells the unfenced LOCAL_INV rule and what rxe does', () => {
    const rules = quirkRules('IBV_WC_LOC_PROT_ERR', byName('cx').quirks);
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatch(/^If an unfenced LOCAL_INV followed an RDMA READ into the MR it invalidates: this device follows the IBA \/ ConnectX: .*; rxe holds every LOCAL_INV/);
  });
  it('rxe: IBV_WC_RETRY_EXC_ERR mentions the receive CQ overrun rule; cx does not', () => {
    expect(quirkRules('IBV_WC_RETRY_EXC_ERR', byName('rxe').quirks).join(' ')).toContain('rxe_resp.c do_complete');
    expect(quirkRules('IBV_WC_RETRY_EXC_ERR', byName('cx').quirks)).toEqual([]);
  });
  it('a completion tagged with its rule: the key check reason, then that rule alone', () => {
    const t = explainWc('IBV_WC_LOC_QP_OP_ERR', 'lkey 0x1234: key byte 0x34 != 0x35', byName('rxe').quirks, 'localKeyErrorStatus');
    expect(t).toBe(`${'a local QP operation error: the WQE was malformed or not allowed for this QP'}: lkey 0x1234: key byte 0x34 != 0x35. Rule applied: this device follows rxe: ${QUIRKS.localKeyErrorStatus.rxe}; ${QUIRKS.localKeyErrorStatus.iba} (${QUIRKS.localKeyErrorStatus.source}).`);
  });
  it('a completion tagged with its rule tells that rule alone', () => {
    const rules = quirkRules('IBV_WC_LOC_QP_OP_ERR', byName('rxe').quirks, 'recvTooSmallIsMalformed');
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatch(/^Rule applied: this device follows rxe: a SEND longer than the posted receive buffers/);
    expect(quirkRules('IBV_WC_LOC_LEN_ERR', byName('cx').quirks, 'recvTooSmallIsMalformed')[0])
      .toMatch(/^Rule applied: this device follows the IBA \/ ConnectX: the IBA \/ ConnectX NAK it as an invalid request/);
  });
  it('no profile flags, no rule sentences', () => {
    expect(explainWc('IBV_WC_REM_OP_ERR')).toBe('the responder could not complete the operation (NAK Remote Operational Error)');
  });
});

const scenarios = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scenarios');
describe('the device tags completions with the rule it applied', () => {
  const polls = (file: string) => {
    const ex = createExecutor({ seed: 1 });
    try {
      const text = fs.readFileSync(path.join(scenarios, file), 'utf8');
      const rep = runScenario(text, ex, { file });
      expect(rep.failure, file).toBeUndefined();
      return rep.steps.filter((s) => s.cmd === 'cq.poll').flatMap((s) => (s.result as { wcs: { status: number; rule?: string }[] }).wcs);
    } finally { ex.close(); }
  };
  it('rxe local key failures carry localKeyErrorStatus; cx too (its IBA side)', () => {
    for (const f of ['rxe_local_key_errors.json', 'rxe_local_key_errors_cx.json'])
      expect(polls(f).filter((w) => w.status !== 0).map((w) => w.rule), f).toEqual(['localKeyErrorStatus', 'localKeyErrorStatus', 'localKeyErrorStatus']);
  });
  it('a receive too small: the receiver completion carries recvTooSmallIsMalformed; the sender none (the cause is remote)', () => {
    const w = polls('send_longer_than_recv.json');
    expect(w.map((x) => x.rule)).toEqual([undefined, 'recvTooSmallIsMalformed']);
  });
  it('cx flushes after a send CQ overrun carry sendCqOverflowKeepsRts', () => {
    expect(polls('rxe_send_cq_overrun_cx.json').filter((w) => w.status === 5).map((w) => w.rule)).toEqual(['sendCqOverflowKeepsRts']);
  });
  it('rxe receive completions with IBV_WC_GRH carry wcFlagsRxe; cx none', () => {
    expect(polls('rxe_wc_flags.json').every((w) => w.rule === 'wcFlagsRxe')).toBe(false);
    expect(polls('rxe_wc_flags.json').filter((w) => w.rule === 'wcFlagsRxe').length).toBe(5);   // 2 send *_WITH_IMM + 3 receives
    expect(polls('rxe_wc_flags_cx.json').some((w) => w.rule)).toBe(false);
  });
  it('LOCAL_INV across PDs and REG_MR without LOCAL_WRITE name their rules on both profiles', () => {
    for (const f of ['rxe_local_inv_other_pd.json', 'rxe_local_inv_other_pd_cx.json'])
      expect(polls(f).map((w) => w.rule).at(-1), f).toBe('invalidateChecksPd');
    for (const f of ['rxe_reg_mr_wr_access.json', 'rxe_reg_mr_wr_access_cx.json'])
      expect(polls(f).map((w) => w.rule).at(-1), f).toBe('regMrWrChecksAccess');
  });
});
