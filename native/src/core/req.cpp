// Requester (rxe_req.c): walks the send queue in order, runs local operations, segments messages at the path
// MTU, assigns PSNs (READ reserves one PSN per response packet), sets the A bit, honours fences and
// max_rd_atomic, and retransmits from the oldest unacknowledged PSN.
#include "core/impl.h"
#include "core/wr_info.h"

namespace vl {
using namespace wire;

static constexpr uint32_t kMaxUnackedPsns = 128;   // rxe RXE_MAX_UNACKED_PSNS
static constexpr uint32_t kMaxPktPerAck = 64;      // rxe RXE_MAX_PKT_PER_ACK


// rxe_req.c rxe_wqe_is_fenced (upstream since the 2022 fencing fix). IBA 10.8.3.3: a WR with the fence indicator
// does not start until every earlier RDMA READ and atomic has completed (earlier SENDs / WRITEs do not hold it).
// IBA 10.6.5.1's Local Invalidate Fence (every earlier WR complete) is what rxe applies to every LOCAL_INV, fenced
// or not (profile flag local_inv_waits_all); without it a LOCAL_INV runs in SQ order like any local operation.
// sq holds only uncompleted WQEs, so "every earlier WQE completed" is req_idx == 0.
bool SessionImpl::fenced(const Qp& q, const SendWqe& w) const {
  if (w.wr.opcode == WR_LOCAL_INV && profile_of(q.dev).local_inv_waits_all) return q.req_idx > 0;
  if (!(w.wr.send_flags & SEND_FENCE)) return false;
  for (size_t i = 0; i < q.req_idx && i < q.sq.size(); i++)
    if (wr_is_read_or_atomic(q.sq[i].wr.opcode) && q.sq[i].state != WqeState::Done) return true;
  return false;
}

void SessionImpl::schedule_req(Qp& q, uint64_t delay) {
  if (q.req_scheduled) return;
  q.req_scheduled = true;
  if (batching_qp == q.h && delay == 0) return;    // the running ReqRun action loops instead
  Action a; a.t = now + delay; a.kind = Action::ReqRun; a.qp = q.h;
  push(std::move(a));
}

void SessionImpl::arm_ack_timer(Qp& q) {
  // (re)start the local ACK timeout: 4.096 us * 2^timeout (0 = infinite). One queued action per QP; when it
  // fires before a moved deadline it re-queues itself.
  q.timer_armed = true;
  if (q.attr.timeout == 0) return;
  q.timer_deadline = now + (4096ull << q.attr.timeout);
  if (q.timer_pending) return;
  q.timer_pending = true;
  Action a; a.t = q.timer_deadline; a.kind = Action::AckTimer; a.qp = q.h;
  push(std::move(a));
}

static uint8_t op_for(uint32_t qpt, uint32_t wr, bool first, bool last) {
  uint8_t base = qpt == QPT_UC ? 0x20 : 0x00;
  auto pick = [&](uint8_t f, uint8_t m, uint8_t l, uint8_t o) { return uint8_t(base | (first && last ? o : first ? f : last ? l : m)); };
  switch (wr) {
    case WR_SEND: return pick(RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST, RC_SEND_ONLY);
    case WR_SEND_WITH_IMM: return pick(RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST_WITH_IMMEDIATE, RC_SEND_ONLY_WITH_IMMEDIATE);
    case WR_SEND_WITH_INV: return pick(RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST_WITH_INVALIDATE, RC_SEND_ONLY_WITH_INVALIDATE);
    case WR_RDMA_WRITE: return pick(RC_RDMA_WRITE_FIRST, RC_RDMA_WRITE_MIDDLE, RC_RDMA_WRITE_LAST, RC_RDMA_WRITE_ONLY);
    case WR_RDMA_WRITE_WITH_IMM: return pick(RC_RDMA_WRITE_FIRST, RC_RDMA_WRITE_MIDDLE, RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
  }
  return 0xFF;
}

void SessionImpl::req_run(Qp& q) {
  if (q.state == QPS_ERR) { if (!q.sq.empty()) flush_qp(q); return; }
  if (q.state != QPS_RTS && q.state != QPS_SQD) return;
  if (q.rnr_wait || q.req_idx >= q.sq.size()) return;
  SendWqe& w = q.sq[q.req_idx];
  const uint32_t op = w.wr.opcode;
  const uint32_t qpt = q.init.qp_type;
  if (w.state == WqeState::Done) { q.req_idx++; if (q.req_idx < q.sq.size()) schedule_req(q); return; }   // already-done local op after a retry
  if (w.state == WqeState::Posted && q.req_offset == 0) {
    if (q.state == QPS_SQD) return;                // drained: start nothing new
    if (fenced(q, w)) return;                      // comp_drain reschedules the requester as WQEs complete
  }
  // rxe_req.c rxe_requester: next_opcode has no packet opcode for IB_WR_RDMA_READ_WITH_INV (-EINVAL), so the WQE
  // fails with IBV_WC_LOC_QP_OP_ERR (profile flag read_with_inv_loc_qp_op_err; the others refused it at post time)
  if (op == WR_RDMA_READ_WITH_INV && !profile_of(q.dev).read_with_inv) {
    if (capture) {
      auto& e = emit(EventKind::WqeStarted, q.dev, q.h, "qp", "IB_WR_RDMA_READ_WITH_INV: no packet opcode on a non-iWARP device");
      e.a = w.wr.wr_id; e.b = op;
    }
    w.state = WqeState::Error; w.status = WC_LOC_QP_OP_ERR; w.rule = "readWithInvLocQpOpErr";
    q.req_idx++; q.req_offset = 0;
    comp_drain(q);
    return;
  }
  // ---- local operations: no packets, complete in SQ order
  if (w.local) {
    Status st;
    uint32_t bad = WC_LOC_QP_OP_ERR;
    op_rule = nullptr;
    if (op == WR_BIND_MW) {
      bad = WC_MW_BIND_ERR;
      Mw* m = mw(w.wr.mw);
      st = m ? do_bind_mw(q, *m, w.wr.bind_rkey, w.wr.bind_mr, w.wr.bind_addr, w.wr.bind_length, w.wr.bind_access)
             : fail(EINVAL, "bind: MW no longer exists");
    } else if (op == WR_LOCAL_INV) {
      st = invalidate_key(q, w.wr.imm_data, false);
    } else {
      st = do_reg_mr_wr(q, w.wr.reg_mr, w.wr.reg_key, w.wr.reg_access);
    }
    if (capture) {
      auto& e = emit(EventKind::WqeStarted, q.dev, q.h, "qp", st.ok() ? "local operation done" : st.msg);
      e.a = w.wr.wr_id; e.b = op;
    }
    if (st.ok()) w.state = WqeState::Done;
    else { w.state = WqeState::Error; w.status = bad; }
    w.rule = op_rule;                              // a profile rule decided the outcome (invalidate PD, REG_MR access)
    q.req_idx++;
    comp_drain(q);
    if (q.req_idx < q.sq.size()) schedule_req(q);
    return;
  }
  const uint32_t mtu = qpt == QPT_UD ? mtu_bytes(dev(q.dev)->profile.active_mtu) : mtu_bytes(q.attr.path_mtu);
  Packet p;
  p.pkey = 0xFFFF;
  // ---- UD: one packet, completes when sent
  if (qpt == QPT_UD) {
    Ah* a = ahs.count(w.wr.ah) ? &ahs[w.wr.ah] : nullptr;
    if (!a) { w.state = WqeState::Error; w.status = WC_LOC_QP_OP_ERR; q.req_idx++; comp_drain(q); return; }
    const uint8_t* data;
    if (w.wr.send_flags & SEND_INLINE) data = w.wr.inline_data.data();
    else {
      scratch.resize(w.length);
      std::string why;
      if (!copy_from_sges(q.pd, w.wr.sg_list, 0, scratch.data(), w.length, why)) {
        if (capture) emit(EventKind::KeyCheck, q.dev, q.h, "qp", why).ok = false;
        w.state = WqeState::Error; w.status = profile_of(q.dev).local_key_error_status; w.rule = "localKeyErrorStatus"; q.req_idx++; comp_drain(q); return;
      }
      data = scratch.data();
    }
    p.opcode = op == WR_SEND_WITH_IMM ? UD_SEND_ONLY_WITH_IMMEDIATE : UD_SEND_ONLY;
    p.se = w.wr.send_flags & SEND_SOLICITED;
    p.dest_qp = w.wr.remote_qpn; p.psn = q.req_psn; q.req_psn = psn_add(q.req_psn, 1);
    p.deth_qkey = w.wr.remote_qkey; p.deth_src_qp = q.qpn; p.immdt = w.wr.imm_data;
    p.payload = data; p.payload_len = w.length;
    w.first_psn = w.last_psn = p.psn;
    if (capture) { auto& e = emit(EventKind::WqeStarted, q.dev, q.h, "qp", "UD send"); e.a = w.wr.wr_id; e.b = op; }
    send_packet(q, p, a->dest_device);
    w.state = WqeState::Done;
    q.req_idx++;
    comp_drain(q);
    if (q.req_idx < q.sq.size()) schedule_req(q);
    return;
  }
  // ---- RC / UC
  const bool rc = qpt == QPT_RC;
  if (rc && psn_cmp(q.req_psn, q.comp_psn) >= static_cast<int32_t>(kMaxUnackedPsns << 8) && q.req_idx > 0) return;   // window full
  if (rc && wr_is_read_or_atomic(op) && w.state == WqeState::Posted) {
    uint32_t outstanding = 0;
    for (size_t i = 0; i < q.req_idx; i++)
      if (wr_is_read_or_atomic(q.sq[i].wr.opcode) && q.sq[i].state == WqeState::Pending) outstanding++;
    if (outstanding >= std::max<uint32_t>(1, q.attr.max_rd_atomic)) return;   // wait for a response
  }
  if (w.state == WqeState::Posted && q.req_offset == 0) {
    uint32_t npkts = wr_is_atomic(op) ? 1
                     : std::max<uint64_t>(1, (w.length + mtu - 1) / mtu);
    w.first_psn = q.req_psn; w.npkts = npkts; w.last_psn = psn_add(q.req_psn, npkts - 1);
    w.resp_offset = 0;
    if (capture) { auto& e = emit(EventKind::WqeStarted, q.dev, q.h, "qp", "PSN " + std::to_string(w.first_psn) + ".." + std::to_string(w.last_psn)); e.a = w.wr.wr_id; e.b = op; e.c = w.first_psn; e.d = w.last_psn; }
  }
  w.state = WqeState::Processing;
  p.dest_qp = q.attr.dest_qp_num;
  p.psn = q.req_psn;
  const Handle dst = q.attr.dest_device;
  bool in_memory = false;                          // the payload is read from the source MR, not a copy
  if (wr_is_read(op)) {
    // READ with invalidate sends an ordinary RDMA Read Request (RFC 5040 has no other one: siw_qp_tx.c builds
    // RDMAP_RDMA_READ_REQ for SIW_OP_READ_LOCAL_INV); the invalidation is the requester's, at completion (comp.cpp)
    p.opcode = RC_RDMA_READ_REQUEST;
    p.reth_va = w.wr.remote_addr + q.req_offset; p.reth_rkey = w.wr.rkey;
    p.reth_dmalen = static_cast<uint32_t>(w.length - q.req_offset);
    p.ack_req = true;
    uint32_t n = std::max<uint64_t>(1, (w.length - q.req_offset + mtu - 1) / mtu);
    q.req_psn = psn_add(q.req_psn, n);
    w.state = WqeState::Pending; q.req_idx++; q.req_offset = 0;
  } else if (wr_is_atomic(op)) {
    p.opcode = op == WR_ATOMIC_CMP_AND_SWP ? RC_COMPARE_SWAP : RC_FETCH_ADD;
    p.atomic_va = w.wr.remote_addr; p.atomic_rkey = w.wr.rkey;
    p.atomic_swap_add = op == WR_ATOMIC_CMP_AND_SWP ? w.wr.swap : w.wr.compare_add;
    p.atomic_compare = op == WR_ATOMIC_CMP_AND_SWP ? w.wr.compare_add : 0;
    p.ack_req = true;
    q.req_psn = psn_add(q.req_psn, 1);
    w.state = WqeState::Pending; q.req_idx++; q.req_offset = 0;
  } else {
    uint64_t off = q.req_offset;
    uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(mtu, w.length - off));
    bool first = off == 0, last = off + n >= w.length;
    p.opcode = op_for(qpt, op, first, last);
    if (wr_flags(op) & WRF_WRITE) {
      if (first) { p.reth_va = w.wr.remote_addr; p.reth_rkey = w.wr.rkey; p.reth_dmalen = static_cast<uint32_t>(w.length); }
    }
    if (last) {
      p.immdt = w.wr.imm_data;
      p.ieth_rkey = w.wr.imm_data;                 // SEND_WITH_INV: invalidate_rkey shares the field
      p.se = (w.wr.send_flags & SEND_SOLICITED) && wr_solicitable(op);
    }
    if (w.wr.send_flags & SEND_INLINE) {
      p.payload = w.wr.inline_data.data() + off;
    } else if (n) {
      // zero-copy when the bytes are contiguous in one MR piece, else gather into a scratch buffer
      const uint8_t* direct = nullptr;
      if (w.wr.sg_list.size() == 1) {
        std::vector<Piece>& pcs = pcs_scratch;
        pcs.clear();
        std::string why;
        Sge part{w.wr.sg_list[0].addr + off, n, w.wr.sg_list[0].lkey};
        if (sge_pieces(q.pd, part, false, pcs, why) && pcs.size() == 1) direct = pcs[0].p, in_memory = true;
      }
      if (!direct) {
        scratch.resize(n);
        std::string why;
        if (!copy_from_sges(q.pd, w.wr.sg_list, off, scratch.data(), n, why)) {
          if (capture) { auto& e = emit(EventKind::KeyCheck, q.dev, q.h, "qp", why); e.ok = false; e.a = w.wr.wr_id; }
          // rxe_req.c: finish_packet's copy_data returns -EINVAL for a bad lkey, a PD mismatch or a range outside
          // the MR, and only -EFAULT maps to IBV_WC_LOC_PROT_ERR, so rxe reports IBV_WC_LOC_QP_OP_ERR; the IBA /
          // ConnectX report IBV_WC_LOC_PROT_ERR (profile value local_key_error_status)
          w.state = WqeState::Error; w.status = profile_of(q.dev).local_key_error_status; w.rule = "localKeyErrorStatus";
          q.req_idx++; q.req_offset = 0;
          comp_drain(q);
          return;
        }
        direct = scratch.data();
      }
      p.payload = direct;
    }
    p.payload_len = n;
    q.pkts_since_ack++;
    p.ack_req = rc && (last || q.pkts_since_ack >= kMaxPktPerAck);
    if (p.ack_req) q.pkts_since_ack = 0;
    q.req_psn = psn_add(q.req_psn, 1);
    if (last) {
      q.req_idx++; q.req_offset = 0;
      w.state = rc ? WqeState::Pending : WqeState::Done;   // UC completes when the last packet is sent
    } else {
      q.req_offset = off + n;
    }
  }
  send_packet(q, p, dst, in_memory);
  if (rc && !q.timer_armed) arm_ack_timer(q);
  if (!rc) comp_drain(q);
  if (q.req_idx < q.sq.size()) schedule_req(q);
}

void SessionImpl::req_retry(Qp& q, uint32_t from_psn) {
  // go back to the oldest unacknowledged PSN (rxe req_retry)
  if (q.rnr_wait) return;                          // rxe: the requester waits for the RNR timer, which retries
  size_t k = 0;
  while (k < q.sq.size() && (q.sq[k].state == WqeState::Done || q.sq[k].local)) k++;
  if (k >= q.sq.size() || (q.sq[k].state == WqeState::Posted && q.req_offset == 0 && k >= q.req_idx)) return;
  SendWqe& w = q.sq[k];
  uint32_t mtu = mtu_bytes(q.attr.path_mtu);
  uint32_t psn = from_psn;
  if (psn_cmp(psn, w.first_psn) < 0 || psn_cmp(psn, w.last_psn) > 0) psn = w.first_psn;
  uint64_t off = uint64_t(psn_cmp(psn, w.first_psn) >> 8) * mtu;
  if (wr_is_read(w.wr.opcode)) off = w.resp_offset, psn = psn_add(w.first_psn, static_cast<uint32_t>(w.resp_offset / mtu));
  if (wr_is_atomic(w.wr.opcode)) off = 0, psn = w.first_psn;
  size_t end = std::min(q.sq.size(), q.req_idx + 1);
  for (size_t i = k; i < end; i++)
    if (q.sq[i].state != WqeState::Done && !q.sq[i].local) q.sq[i].state = WqeState::Posted;
  w.state = off ? WqeState::Processing : WqeState::Posted;
  q.req_idx = k; q.req_offset = off; q.req_psn = psn; q.pkts_since_ack = 0;
  if (capture) {
    auto& e = emit(EventKind::Timer, q.dev, q.h, "qp", "retransmit from PSN " + std::to_string(psn));
    e.a = uint64_t(TimerReason::Retransmit); e.b = psn; e.c = w.wr.wr_id; e.d = q.retry_left;
  }
  arm_ack_timer(q);
  schedule_req(q);
}

void SessionImpl::on_ack_timer(Qp& q, uint64_t gen) {
  (void)gen;
  q.timer_pending = false;
  if (!q.timer_armed) return;
  if (now < q.timer_deadline) {
    q.timer_pending = true;
    Action a; a.t = q.timer_deadline; a.kind = Action::AckTimer; a.qp = q.h;
    push(std::move(a));
    return;
  }
  q.timer_armed = false;
  if (q.state != QPS_RTS && q.state != QPS_SQD) return;
  if (q.rnr_wait) return;
  bool outstanding = false;
  for (size_t i = 0; i < q.req_idx && i < q.sq.size(); i++)
    if (q.sq[i].state == WqeState::Pending || q.sq[i].state == WqeState::Processing) outstanding = true;
  if (q.req_idx < q.sq.size() && q.req_offset) outstanding = true;
  if (!outstanding) return;
  if (capture) { auto& e = emit(EventKind::Timer, q.dev, q.h, "qp", "ACK timeout, retry_cnt left " + std::to_string(q.retry_left)); e.a = uint64_t(TimerReason::AckTimeout); e.b = q.retry_left; }
  if (q.retry_left == 0) {
    size_t k = 0;
    while (k < q.sq.size() && q.sq[k].state == WqeState::Done) k++;
    if (k < q.sq.size()) { q.sq[k].state = WqeState::Error; q.sq[k].status = WC_RETRY_EXC_ERR; }
    comp_drain(q);
    return;
  }
  q.retry_left--;
  q.started_retry = true;
  req_retry(q, q.comp_psn);
}

void SessionImpl::on_rnr_timer(Qp& q, uint64_t gen) {
  if (gen != q.timer_gen || !q.rnr_wait) return;
  q.rnr_wait = false;
  if (q.state != QPS_RTS && q.state != QPS_SQD) return;
  if (capture) { auto& e = emit(EventKind::Timer, q.dev, q.h, "qp", "RNR timer expired"); e.a = uint64_t(TimerReason::RnrExpired); }
  req_retry(q, q.comp_psn);
}

}  // namespace vl
