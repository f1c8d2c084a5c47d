// Completer (rxe_comp.c): ACK / NAK / READ response / atomic ACK handling -> work completions in SQ order,
// retries on PSN-sequence NAK or implicit NAK, RNR back-off, error completion -> QP to error -> flush.
#include "core/impl.h"
#include "core/wr_info.h"

namespace vl {
using namespace wire;

static uint32_t wc_opcode(uint32_t wr) {
  switch (wr) {
    case WR_RDMA_WRITE: case WR_RDMA_WRITE_WITH_IMM: return WC_RDMA_WRITE;
    case WR_SEND: case WR_SEND_WITH_IMM: case WR_SEND_WITH_INV: return WC_SEND;
    case WR_RDMA_READ: case WR_RDMA_READ_WITH_INV: return WC_RDMA_READ;   // siw_cq.c map_wc_opcode
    case WR_ATOMIC_CMP_AND_SWP: return WC_COMP_SWAP;
    case WR_ATOMIC_FETCH_AND_ADD: return WC_FETCH_ADD;
    case WR_LOCAL_INV: return WC_LOCAL_INV;
    case WR_BIND_MW: return WC_BIND_MW;
    case WR_REG_MR: return WC_REG_MR;
  }
  return WC_SEND;
}


// w must be q.sq.front()
void SessionImpl::complete_wqe(Qp& q, SendWqe& w, uint32_t status) {
  Wc wc;
  wc.wr_id = w.wr.wr_id; wc.status = status; wc.opcode = wc_opcode(w.wr.opcode); wc.qp_num = q.qpn;
  wc.byte_len = static_cast<uint32_t>(w.length);
  wc.rule = w.rule ? w.rule : status == WC_WR_FLUSH_ERR ? q.flush_rule : nullptr;
  const Profile& pr = profile_of(q.dev);
  // rxe_comp.c make_send_cqe: a successful WRITE_WITH_IMM / SEND_WITH_IMM reports IBV_WC_WITH_IMM to the sender
  if (pr.wc_flags_rxe && status == WC_SUCCESS && (w.wr.opcode == WR_RDMA_WRITE_WITH_IMM || w.wr.opcode == WR_SEND_WITH_IMM)) {
    wc.wc_flags = WC_WITH_IMM;
    wc.rule = "wcFlagsRxe";
  }
  bool post = (status != WC_SUCCESS || w.signaled) && !w.offload;   // offload-engine WQEs complete to the device
  // read w before nvmf_wqe_done, which may post a WR (and grow sq): w is not used after it
  const bool is_front = !q.sq.empty() && &q.sq.front() == &w;
  const bool was_current = q.req_idx == 0;        // the requester was (re)sending this very WQE
  const bool local = w.local;
  const uint32_t next_psn = psn_add(w.last_psn, 1);
  if (w.offload) nvmf_wqe_done(q, w, status);
  if (capture) {
    auto& e = emit(EventKind::WqeCompleted, q.dev, q.h, "qp", wc_status_name(status));
    e.wc = wc; e.a = wc.wr_id; e.b = status; e.c = wc.opcode; e.d = post;
  }
  if (is_front) q.sq.pop_front();                 // its slot (and SGE list storage) is reused by a later post
  if (q.req_idx > 0) q.req_idx--;
  else if (was_current) {
    // completed (e.g. by late responses) while a retransmission of it was in progress: move on
    q.req_offset = 0;
    if (!local && psn_cmp(q.req_psn, next_psn) < 0) q.req_psn = next_psn;
  }
  // send completions are unsolicited (ibv_req_notify_cq(3); rxe_comp.c do_complete posts with solicited 0). A send
  // CQ overrun raises IBV_EVENT_CQ_ERR; the IBA lets the CI move the QP to error too, rxe ignores rxe_cq_post's
  // failure and the QP stays in RTS (profile flag send_cq_overflow_keeps_rts).
  if (post)
    if (Cq* c = cq(q.init.send_cq))
      if (!cq_post(*c, wc, false, q.h) && q.state != QPS_ERR && !pr.send_cq_overflow_keeps_rts) {
        q.flush_rule = "sendCqOverflowKeepsRts";
        qp_to_error(q, "send CQ overrun");
      }
}

void SessionImpl::comp_drain(Qp& q) {
  bool progressed = false;
  while (!q.sq.empty()) {
    SendWqe& w = q.sq.front();
    if (w.state == WqeState::Done) {
      if (!w.local && q.init.qp_type == QPT_RC && psn_cmp(psn_add(w.last_psn, 1), q.comp_psn) > 0) q.comp_psn = psn_add(w.last_psn, 1);
      complete_wqe(q, w, WC_SUCCESS);
      progressed = true;
      continue;
    }
    if (w.state == WqeState::Error) {
      uint32_t st = w.status;
      complete_wqe(q, w, st);
      qp_to_error(q, std::string("work request failed: ") + wc_status_name(st));
      return;
    }
    break;
  }
  if (progressed) {
    q.started_retry = false;
    q.retry_left = q.attr.retry_cnt;
    bool outstanding = false;
    for (size_t i = 0; i < q.req_idx && i < q.sq.size(); i++)
      if (q.sq[i].state == WqeState::Pending || q.sq[i].state == WqeState::Processing) outstanding = true;
    if (q.init.qp_type == QPT_RC) {
      if (outstanding) arm_ack_timer(q);
      else q.timer_armed = false;
    }
    if (q.req_idx < q.sq.size()) schedule_req(q);
    check_sq_drained(q);
  }
}

uint32_t SessionImpl::comp_psn_of(const Qp& q) const { return q.comp_psn; }

void SessionImpl::completer(Qp& q, const Packet& p) {
  if (q.init.qp_type != QPT_RC) return;
  if (q.state != QPS_RTS && q.state != QPS_SQD) return;
  const uint32_t m = opcode_mask(p.opcode);
  const uint32_t psn = p.psn;
  const bool has_aeth = m & H_AETH;
  const uint8_t syn = has_aeth ? p.aeth_syndrome : 0;
  const uint8_t atype = (syn >> 5) & 3;
  const uint32_t mtu = mtu_bytes(q.attr.path_mtu);
  const bool is_read_resp = p.opcode >= RC_RDMA_READ_RESPONSE_FIRST && p.opcode <= RC_RDMA_READ_RESPONSE_ONLY;
  const bool is_atomic_ack = p.opcode == RC_ATOMIC_ACKNOWLEDGE;
  for (;;) {
    comp_drain(q);
    if (q.state == QPS_ERR || q.sq.empty()) return;
    size_t k = 0;
    while (k < q.sq.size() && q.sq[k].local && q.sq[k].state != WqeState::Done && q.sq[k].state != WqeState::Error) k++;
    if (k != 0) return;                            // a local op at the head not yet executed
    SendWqe& w = q.sq.front();
    if (w.state == WqeState::Posted) return;       // nothing sent for this WQE: stale response
    const uint32_t op = w.wr.opcode;
    if (psn_cmp(psn, w.last_psn) > 0) {
      // the response is beyond this WQE: implicit ACK of a SEND/WRITE, implicit NAK of a READ/ATOMIC
      if (w.state != WqeState::Pending) return;
      if (wr_is_read_or_atomic(op)) {
        if (q.started_retry) return;                // a retry sequence is already under way
        if (q.retry_left == 0) { w.state = WqeState::Error; w.status = WC_RETRY_EXC_ERR; continue; }
        q.retry_left--;
        q.started_retry = true;
        req_retry(q, q.comp_psn);
        return;
      }
      w.state = WqeState::Done;
      q.retry_left = q.attr.retry_cnt; q.rnr_left = q.attr.rnr_retry;
      continue;
    }
    if (psn_cmp(psn, w.first_psn) < 0) return;     // duplicate of something already completed
    // psn within this WQE
    if (has_aeth && atype == AETH_NAK && !is_read_resp) {
      uint8_t code = syn & 0x1F;
      if (psn_cmp(psn, q.comp_psn) > 0) q.comp_psn = psn;   // everything before the NAK PSN is acknowledged
      if (code == NAK_PSN_SEQ_ERR) {
        if (capture) { auto& e = emit(EventKind::Log, q.dev, q.h, "qp", "NAK PSN sequence error at PSN " + std::to_string(psn)); e.a = psn; }
        if (q.started_retry) return;
        if (q.retry_left == 0) { w.state = WqeState::Error; w.status = WC_RETRY_EXC_ERR; continue; }
        q.retry_left--;
        q.started_retry = true;
        req_retry(q, psn);
        return;
      }
      uint32_t st = code == NAK_INVALID_REQUEST ? WC_REM_INV_REQ_ERR : code == NAK_REMOTE_ACCESS_ERROR ? WC_REM_ACCESS_ERR
                    : code == NAK_REMOTE_OP_ERROR ? WC_REM_OP_ERR : WC_BAD_RESP_ERR;
      w.state = WqeState::Error; w.status = st;
      continue;                                    // comp_drain completes it and moves the QP to error
    }
    if (has_aeth && atype == AETH_RNR_NAK) {
      if (psn_cmp(psn, q.comp_psn) > 0) q.comp_psn = psn;
      if (q.attr.rnr_retry != 7) {
        if (q.rnr_left == 0) { w.state = WqeState::Error; w.status = WC_RNR_RETRY_EXC_ERR; continue; }
        q.rnr_left--;
      }
      q.rnr_wait = true;
      q.timer_gen++; q.timer_armed = false;
      Action a; a.t = now + static_cast<uint64_t>(rnr_timer_ms(syn & 0x1F) * 1e6); a.kind = Action::RnrTimer; a.qp = q.h; a.gen = q.timer_gen;
      if (capture) { auto& e = emit(EventKind::Timer, q.dev, q.h, "qp", "RNR NAK: wait " + std::to_string(rnr_timer_ms(syn & 0x1F)) + " ms"); e.a = uint64_t(TimerReason::RnrWait); e.b = syn & 0x1F; e.c = static_cast<uint64_t>(rnr_timer_ms(syn & 0x1F) * 1e6); }
      push(std::move(a));
      return;
    }
    if (wr_is_read(op)) {
      if (!is_read_resp) return;                   // plain ACK inside a READ's PSN range: ignore
      uint32_t expect = psn_add(w.first_psn, static_cast<uint32_t>(w.resp_offset / mtu));
      if (psn != expect) return;                   // out of order / duplicate response: the timer recovers
      uint64_t n = std::min<uint64_t>(mtu, w.length - w.resp_offset);
      if (p.payload_len != n) return;
      std::string why;
      int rc = 0;
      if (dev(q.dev)->profile.transport == "iWARP" && !w.wr.sg_list.empty()) {
        // iWARP: the READ response is a tagged write into the sink STag, which needs REMOTE_WRITE (siw)
        Mr* sink = mr_by_key(q.dev, w.wr.sg_list[0].lkey);
        if (sink && sink->lkey == w.wr.sg_list[0].lkey && !(sink->access & ACCESS_REMOTE_WRITE)) {
          why = "lkey " + key_text(sink->lkey) + ": iWARP READ sink needs REMOTE_WRITE";
          rc = -1;
        }
      }
      if (!rc) rc = copy_to_sges(q.pd, q.dev, w.wr.sg_list, w.resp_offset, p.payload, n, why);
      if (rc) {
        if (capture) { auto& e = emit(EventKind::KeyCheck, q.dev, q.h, "qp", why); e.ok = false; e.a = w.wr.wr_id; }
        w.state = WqeState::Error; w.status = WC_LOC_PROT_ERR;
        continue;
      }
      w.resp_offset += n;
      q.comp_psn = psn_add(psn, 1);
      q.retry_left = q.attr.retry_cnt;
      q.started_retry = false;
      if (w.resp_offset < w.length) { arm_ack_timer(q); return; }
      // RDMA READ with invalidate: the last response has landed, the requester invalidates the sink STag (the one
      // SGE's lkey) before completing; a failed invalidation completes the READ with IBV_WC_GENERAL_ERR
      // (siw_qp_rx.c siw_rdmap_complete -> siw_invalidate_stag; RFC 5040 leaves the Read Request unchanged)
      if (op == WR_RDMA_READ_WITH_INV) {
        Status st = invalidate_key(q, w.wr.sg_list[0].lkey, false, "read with invalidate");
        if (!st.ok()) {
          if (capture) { auto& e = emit(EventKind::KeyCheck, q.dev, q.h, "qp", st.msg); e.ok = false; e.a = w.wr.wr_id; }
          w.state = WqeState::Error; w.status = WC_GENERAL_ERR;
          continue;
        }
      }
      w.state = WqeState::Done;
      comp_drain(q);
      return;
    }
    if (op == WR_ATOMIC_CMP_AND_SWP || op == WR_ATOMIC_FETCH_AND_ADD) {
      if (!is_atomic_ack || psn != w.first_psn) {
        if (is_read_resp) { w.state = WqeState::Error; w.status = WC_FATAL_ERR; continue; }
        return;
      }
      uint8_t v[8];
      std::memcpy(v, &p.atomic_ack_orig, 8);
      std::string why;
      if (copy_to_sges(q.pd, q.dev, w.wr.sg_list, 0, v, 8, why)) {
        if (capture) { auto& e = emit(EventKind::KeyCheck, q.dev, q.h, "qp", why); e.ok = false; e.a = w.wr.wr_id; }
        w.state = WqeState::Error; w.status = WC_LOC_PROT_ERR;
        continue;
      }
      q.comp_psn = psn_add(psn, 1);
      w.state = WqeState::Done;
      q.retry_left = q.attr.retry_cnt;
      continue;
    }
    // SEND / WRITE
    if (is_read_resp || is_atomic_ack) { w.state = WqeState::Error; w.status = WC_FATAL_ERR; continue; }
    if (psn_cmp(psn_add(psn, 1), q.comp_psn) > 0) { q.comp_psn = psn_add(psn, 1); q.started_retry = false; q.retry_left = q.attr.retry_cnt; }
    q.rnr_left = q.attr.rnr_retry;
    if (psn == w.last_psn && w.state == WqeState::Pending) { w.state = WqeState::Done; continue; }
    comp_drain(q);
    arm_ack_timer(q);
    return;
  }
}

}  // namespace vl
