// Where a profile behaves as Linux rxe (upstream, after the 2022 fencing fix) rather than as the IBA / ConnectX: one
// entry per flag of the device's profile table (native/include/vl/session.h, struct Profile; the device reports them
// in `profile.quirks`). The console explains completions with these words; app/host/quirks.test.ts checks that the
// device and this table name the same flags and that the rxe profile sets each one to its rxe value.
import { WcStatus } from './enums.ts';

type WcStatusName = keyof typeof WcStatus.values & string;

export interface QuirkDoc {
  /** The flag's value on the rxe profile (the IBA / ConnectX value is anything else). */
  rxeValue: boolean | number;
  /** The situation the rule is about ("If <when>: ..."), for completions the device did not tag with the rule. */
  when: string;
  /** What rxe does, and why. */
  rxe: string;
  /** What the IBA / ConnectX (the cx profile) does instead. */
  iba: string;
  /** Public sources (kernel / rdma-core files and functions, spec sections, man pages). */
  source: string;
  /** Statuses this rule can cause on completions that cannot name it because the cause lay elsewhere (a NAK, an ACK
   *  that never came, an MR invalidated under a READ): on a device with the rxe value, and on one with the IBA value.
   *  Completions the device decided by this rule carry it in their `rule` field instead. */
  statuses: { rxe: readonly WcStatusName[]; iba: readonly WcStatusName[] };
}

export const QUIRKS = {
  localInvWaitsAll: {
    rxeValue: true,
    when: 'an unfenced LOCAL_INV followed an RDMA READ into the MR it invalidates',
    rxe: 'rxe holds every LOCAL_INV, fenced or not, until all earlier work requests have completed (the Local Invalidate Fence made mandatory)',
    iba: 'the IBA / ConnectX run an unfenced LOCAL_INV in send-queue order without waiting, so it can invalidate an MR an earlier RDMA READ is still writing into (that READ then fails); IBV_SEND_FENCE makes it wait for earlier READs and atomics',
    source: 'drivers/infiniband/sw/rxe/rxe_req.c rxe_wqe_is_fenced; IBA 10.6.5.1, 10.8.3.3',
    statuses: { rxe: [], iba: ['IBV_WC_LOC_PROT_ERR'] },
  },
  recvCqOverflowNoAck: {
    rxeValue: true,
    when: 'the receiver\'s completion queue was full',
    rxe: 'when the receiver\'s CQ has no room for the receive completion, rxe moves the receiving QP to error before it acknowledges the message, so the sender never gets an ACK, retries into a QP in error and ends with IBV_WC_RETRY_EXC_ERR',
    iba: 'the ConnectX model acknowledges the message (the sender sees IBV_WC_SUCCESS) while the receiver\'s CQ overruns (IBV_EVENT_CQ_ERR, receiving QP to error)',
    source: 'drivers/infiniband/sw/rxe/rxe_resp.c do_complete (RESPST_ERR_CQ_OVERFLOW before RESPST_ACKNOWLEDGE); rxe_cq.c rxe_cq_post',
    statuses: { rxe: ['IBV_WC_RETRY_EXC_ERR'], iba: [] },
  },
  sendCqOverflowKeepsRts: {
    rxeValue: true,
    when: 'the send CQ overran',
    rxe: 'a send completion that does not fit the send CQ is lost (IBV_EVENT_CQ_ERR) but rxe ignores the failure: the QP stays in RTS',
    iba: 'the IBA lets the channel adapter move the QP to the error state on a CQ overrun; the cx profile does, so later work requests complete with IBV_WC_WR_FLUSH_ERR',
    source: 'drivers/infiniband/sw/rxe/rxe_comp.c do_complete (rxe_cq_post result ignored); IBA 11.4.2.1',
    statuses: { rxe: [], iba: [] },
  },
  errorWcNotSolicited: {
    rxeValue: true,
    when: 'the CQ was armed solicited-only',
    rxe: 'rxe fires a solicited-only CQ arm only for a receive completion of a message with the SE bit: error completions do not fire it',
    iba: 'ibv_req_notify_cq(3): an unsuccessful completion counts as solicited and fires a solicited-only arm',
    source: 'drivers/infiniband/sw/rxe/rxe_cq.c rxe_cq_post; rxe_comp.c do_complete (solicited 0); ibv_req_notify_cq(3)',
    statuses: { rxe: [], iba: [] },
  },
  reregPdAccessOnly: {
    rxeValue: true,
    when: 'the MR was re-registered',
    rxe: 'rxe re-registers only the PD and the access flags (a new translation is EOPNOTSUPP) and keeps the lkey and rkey',
    iba: 'ibv_rereg_mr(3) allows new keys; the cx profile gives the MR a new key byte on every re-registration',
    source: 'drivers/infiniband/sw/rxe/rxe_verbs.c rxe_rereg_user_mr; ibv_rereg_mr(3)',
    statuses: { rxe: [], iba: [] },
  },
  roundQueueDepths: {
    rxeValue: true,
    when: 'a queue was created',
    rxe: 'rxe rounds every CQ, send and receive queue depth up to 2^n - 1 and sizes a send WQE for max(max_send_sge x 16, max_inline_data) bytes, granting both caps from that size; the create replies report what was granted',
    iba: 'the cx profile grants exactly the depths and caps asked for (modelled: real mlx5 rounds in its own way)',
    source: 'drivers/infiniband/sw/rxe/rxe_queue.c rxe_queue_init; rxe_qp.c rxe_qp_init_req, rxe_qp_init_resp; rxe_cq.c rxe_cq_from_init',
    statuses: { rxe: [], iba: [] },
  },
  wcFlagsRxe: {
    rxeValue: true,
    when: 'the completion carries wc_flags',
    rxe: 'rxe sets IBV_WC_GRH on every successful receive completion of a user CQ, and IBV_WC_WITH_IMM on the sender\'s completion of a WRITE_WITH_IMM / SEND_WITH_IMM',
    iba: 'the cx profile sets IBV_WC_GRH on UD receives only and no flags on send completions',
    source: 'drivers/infiniband/sw/rxe/rxe_resp.c do_complete; rxe_comp.c make_send_cqe',
    statuses: { rxe: [], iba: [] },
  },
  deregBoundMrErrno: {
    rxeValue: 22,
    when: 'an MR with bound windows was deregistered',
    rxe: 'rxe refuses to deregister an MR with bound memory windows with EINVAL',
    iba: 'the cx profile refuses it with EBUSY (IBA 10.6.7.2.6 forbids it; the errno is the implementation\'s)',
    source: 'drivers/infiniband/sw/rxe/rxe_mr.c rxe_dereg_mr; IBA 10.6.7.2.6',
    statuses: { rxe: [], iba: [] },
  },
  localKeyErrorStatus: {
    rxeValue: WcStatus.values.IBV_WC_LOC_QP_OP_ERR!,
    when: 'a gather SGE failed its local key check',
    rxe: 'rxe reports a bad gather lkey, an MR of another PD or an SGE outside its MR as IBV_WC_LOC_QP_OP_ERR: copy_data returns -EINVAL for them and the requester maps only -EFAULT to IBV_WC_LOC_PROT_ERR',
    iba: 'the IBA / ConnectX report a failed local key check as IBV_WC_LOC_PROT_ERR',
    source: 'drivers/infiniband/sw/rxe/rxe_req.c rxe_requester (finish_packet error); rxe_mr.c copy_data; IBA 10.7.2.1',
    statuses: { rxe: [], iba: [] },
  },
  recvTooSmallIsMalformed: {
    rxeValue: true,
    when: 'the SEND was longer than the posted receive buffers',
    rxe: 'a SEND longer than the posted receive buffers makes rxe\'s copy_data return -EINVAL, which the responder treats as a malformed receive WQE: NAK remote operational error (sender IBV_WC_REM_OP_ERR), receive IBV_WC_LOC_QP_OP_ERR',
    iba: 'the IBA / ConnectX NAK it as an invalid request (sender IBV_WC_REM_INV_REQ_ERR) and complete the receive with IBV_WC_LOC_LEN_ERR',
    source: 'drivers/infiniband/sw/rxe/rxe_resp.c send_data_in (RESPST_ERR_MALFORMED_WQE); rxe_mr.c copy_data; IBA 9.7.5.2.2',
    statuses: { rxe: ['IBV_WC_REM_OP_ERR'], iba: ['IBV_WC_REM_INV_REQ_ERR'] },
  },
  invalidateChecksPd: {
    rxeValue: false,
    when: 'the invalidated MR belongs to another PD than the QP',
    rxe: 'rxe invalidates a fast-registration MR from a QP of any PD (LOCAL_INV and SEND_WITH_INV)',
    iba: 'the IBA requires the QP and the MR to share a PD: the cx profile fails the LOCAL_INV',
    source: 'drivers/infiniband/sw/rxe/rxe_mr.c rxe_invalidate_mr; IBA 10.6.5',
    statuses: { rxe: [], iba: [] },
  },
  regMrWrChecksAccess: {
    rxeValue: false,
    when: 'the REG_MR granted REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE',
    rxe: 'rxe\'s fast registration takes any access flags, REMOTE_WRITE without LOCAL_WRITE included',
    iba: 'the cx profile refuses REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE, as ibv_reg_mr does',
    source: 'drivers/infiniband/sw/rxe/rxe_mr.c rxe_reg_fast_mr; core ib_check_mr_access; IBA 10.6.3.1',
    statuses: { rxe: [], iba: [] },
  },
  readWithInvLocQpOpErr: {
    rxeValue: true,
    when: 'an IB_WR_RDMA_READ_WITH_INV was posted on a device that is not iWARP',
    rxe: 'rxe accepts IB_WR_RDMA_READ_WITH_INV at post time (its work-request table lists it for RC QPs) but its requester has no packet opcode for it: the work request completes with IBV_WC_LOC_QP_OP_ERR and the QP moves to the error state',
    iba: 'the cx profile refuses it in ibv_post_send with EINVAL, nothing posted (modelled: ConnectX has no read-with-invalidate work request; kernel ULPs issue it only where rdma_cap_read_inv() holds, that is on iWARP)',
    source: 'drivers/infiniband/sw/rxe/rxe_opcode.c rxe_wr_opcode_info; rxe_req.c next_opcode, rxe_requester; core rw.c rdma_rw_init_mr_wrs, rdma_cap_read_inv',
    statuses: { rxe: [], iba: [] },
  },
} as const satisfies Record<string, QuirkDoc>;

export type QuirkName = keyof typeof QUIRKS;
export const QUIRK_NAMES = Object.keys(QUIRKS) as QuirkName[];
/** The profile's quirk values as the device reports them (profile.quirks). */
export type ProfileQuirks = { [K in QuirkName]: (typeof QUIRKS)[K]['rxeValue'] extends boolean ? boolean : number };

/** true when the device behaves as rxe for this flag. */
export function actsAsRxe(q: Partial<ProfileQuirks> | undefined, name: QuirkName): boolean | undefined {
  const v = q?.[name];
  return v === undefined ? undefined : v === QUIRKS[name].rxeValue;
}

function sentence(d: QuirkDoc, rx: boolean): string {
  return rx ? `this device follows rxe: ${d.rxe}; ${d.iba} (${d.source})`
    : `this device follows the IBA / ConnectX: ${d.iba}; ${d.rxe} (${d.source})`;
}
const isQuirk = (n: string | undefined): n is QuirkName => !!n && Object.hasOwn(QUIRKS, n);

/**
 * Which rule of this device's profile decided a completion, and what the other side does ("rxe does X here; the IBA
 * / ConnectX does Y"). `rule` is the completion's own `rule` field (the device names the rule it applied): then that
 * rule alone is told. Without it, the rules that can produce `status` on this device are told as conditions
 * ("If <situation>: ..."), since the cause lies on the other side (a NAK, a missing ACK). Empty when no rule bears on it.
 */
export function quirkRules(status: string, q: Partial<ProfileQuirks> | undefined, rule?: string): string[] {
  if (isQuirk(rule)) {
    const rx = actsAsRxe(q, rule);
    return [`Rule applied: ${sentence(QUIRKS[rule], rx ?? QUIRKS[rule].rxeValue === true)}.`];
  }
  const out: string[] = [];
  for (const name of QUIRK_NAMES) {
    const rx = actsAsRxe(q, name);
    if (rx === undefined) continue;
    const d: QuirkDoc = QUIRKS[name];
    if (!(rx ? d.statuses.rxe : d.statuses.iba).includes(status as WcStatusName)) continue;
    out.push(`If ${d.when}: ${sentence(d, rx)}.`);
  }
  return out;
}
