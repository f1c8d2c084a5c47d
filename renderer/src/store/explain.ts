// Work-completion statuses in words, for the person at the projector. Where the device said why (a failed
// KeyCheck event), its reason is quoted verbatim. Where the status comes from a rule on which Linux rxe and the IBA /
// ConnectX differ, the device's profile flags (profile.quirks, app/protocol/quirks.ts) say which rule applied.
import { WcStatus } from '../../../app/protocol/index.ts';
import { quirkRules, type ProfileQuirks } from '../../../app/protocol/quirks.ts';

type WcStatusName = keyof typeof WcStatus.values;

const WORDS: Record<WcStatusName, string> = {
  IBV_WC_SUCCESS: 'the work request completed',
  // Reliable Datagram / EE context statuses: rdma-core names them, no Linux device (nor this one) implements RD
  IBV_WC_LOC_EEC_OP_ERR: 'a local EE context operation error (Reliable Datagram, which no Linux device implements)',
  IBV_WC_LOC_RDD_VIOL_ERR: 'a local RD domain violation (Reliable Datagram only)',
  IBV_WC_REM_INV_RD_REQ_ERR: 'the responder found the Reliable Datagram request invalid (RD only)',
  IBV_WC_INV_EECN_ERR: 'an invalid EE context number (Reliable Datagram only)',
  IBV_WC_INV_EEC_STATE_ERR: 'an invalid EE context state (Reliable Datagram only)',
  IBV_WC_LOC_LEN_ERR: 'a local length error: the message did not fit the posted buffers (or exceeded a limit)',
  IBV_WC_LOC_QP_OP_ERR: 'a local QP operation error: the WQE was malformed or not allowed for this QP',
  IBV_WC_LOC_PROT_ERR: 'a local protection error: an lkey in the SG list did not cover the buffer with the needed access',
  IBV_WC_WR_FLUSH_ERR: 'flushed: the QP was in the error state, so this WR was not executed',
  IBV_WC_MW_BIND_ERR: 'the memory window bind failed',
  IBV_WC_BAD_RESP_ERR: 'an unexpected response opcode came back from the responder',
  IBV_WC_LOC_ACCESS_ERR: 'a local access error while writing the response into local memory',
  IBV_WC_REM_INV_REQ_ERR: 'the responder rejected the request as invalid (NAK Invalid Request)',
  IBV_WC_REM_ACCESS_ERR: 'the responder refused the rkey',
  IBV_WC_REM_OP_ERR: 'the responder could not complete the operation (NAK Remote Operational Error)',
  IBV_WC_RETRY_EXC_ERR: 'the transport retry counter was exceeded: no ACK came back in time',
  IBV_WC_RNR_RETRY_EXC_ERR: 'the responder had no receive posted (RNR) more times than rnr_retry allows',
  IBV_WC_REM_ABORT_ERR: 'the responder aborted the operation',
  IBV_WC_FATAL_ERR: 'a fatal device error',
  IBV_WC_RESP_TIMEOUT_ERR: 'the response timed out',
  IBV_WC_GENERAL_ERR: 'a general error',
};

/** The statuses whose cause the device states as it decides them (a KeyCheck, or the refusal of a local operation):
 *  their explanation quotes the device's reason. */
const QUOTES_REASON: ReadonlySet<string> = new Set<WcStatusName>([
  'IBV_WC_LOC_QP_OP_ERR', 'IBV_WC_LOC_PROT_ERR', 'IBV_WC_MW_BIND_ERR', 'IBV_WC_LOC_ACCESS_ERR', 'IBV_WC_REM_INV_REQ_ERR', 'IBV_WC_REM_ACCESS_ERR',
]);

/** `reason`: the device's own words for this failure (a failed KeyCheck, or the refusal of a local operation —
 *  BIND_MW, LOCAL_INV, REG_MR — that the device gave as it started the WQE), quoted after the status's words;
 *  `rule`: the completion's own rule field (the profile rule the device applied), when it has one. */
export function explainWc(status: number | string, reason?: string, quirks?: Partial<ProfileQuirks>, rule?: string): string {
  const name = typeof status === 'number' ? WcStatus.name(status) : status;
  const w = (WORDS as Record<string, string | undefined>)[name] ?? 'no explanation recorded for this status';
  const base = reason && QUOTES_REASON.has(name) ? `${w}: ${reason}` : w;
  const rules = quirkRules(name, quirks, rule);
  return rules.length ? `${base}. ${rules.join(' ')}` : base;
}

/** The quirk flags of a device as the host reported it (device.list: `profile.quirks`), if any. */
export function deviceQuirks(raw: unknown): Partial<ProfileQuirks> | undefined {
  const prof = raw && typeof raw === 'object' ? (raw as Record<string, unknown>).profile : undefined;
  const q = prof && typeof prof === 'object' ? (prof as Record<string, unknown>).quirks : undefined;
  return q && typeof q === 'object' ? (q as Partial<ProfileQuirks>) : undefined;
}
