// Responder (rxe_resp.c): PSN check, duplicates (re-ACK, READ replay re-reading memory after re-checking the
// key, saved atomic result), opcode sequence, QP access flags, receive WQE / SRQ (RNR), length rules, the rkey
// check chain, execution (SEND scatter, WRITE, READ responses, atomics), SEND_WITH_INV, MSN, ACKs.
// UC: no ACKs, a gap drops the rest of the message. UD: DETH, Q_Key check, 40-byte GRH slot.
#include "core/impl.h"

namespace vl {
using namespace wire;

static constexpr uint8_t kAckSyndrome = 0x1F;   // ACK, credits invalid (rxe always sends 0x1F)

void SessionImpl::send_ack(Qp& q, uint8_t syndrome, uint32_t psn, Handle dst) {
  Packet a;
  a.opcode = RC_ACKNOWLEDGE; a.dest_qp = q.attr.dest_qp_num; a.psn = psn;
  a.aeth_syndrome = syndrome; a.aeth_msn = q.msn & 0xFFFFFF;
  send_packet(q, a, dst);
}

// false when the receive CQ had no room (IBV_EVENT_CQ_ERR raised, the QP moved to error): the caller sends no ACK on
// a profile with recv_cq_overflow_no_ack (rxe_resp.c do_complete returns RESPST_ERR_CQ_OVERFLOW before the ACK)
bool SessionImpl::complete_recv(Qp& q, uint32_t status, uint32_t opcode, uint32_t byte_len, uint32_t imm, uint32_t flags,
                                uint32_t inv_rkey, bool solicited, uint32_t src_qp, const char* rule) {
  if (!q.have_wqe) return true;
  // rxe_resp.c do_complete: every successful completion on a user CQ carries IBV_WC_GRH (RC and UC too)
  if (status == WC_SUCCESS && profile_of(q.dev).wc_flags_rxe && !(flags & WC_GRH)) { flags |= WC_GRH; if (!rule) rule = "wcFlagsRxe"; }
  Wc wc;
  wc.rule = rule;
  wc.wr_id = q.cur_wqe.wr_id; wc.status = status; wc.opcode = opcode; wc.byte_len = byte_len; wc.qp_num = q.qpn;
  wc.src_qp = src_qp; wc.wc_flags = flags;
  wc.imm_data = imm; wc.invalidated_rkey = inv_rkey;
  q.have_wqe = false; q.cur_recv_off = 0;
  if (nvmf && q.cur_from_srq && nvmf_recv(q, wc)) return true;   // a capsule the NVMe-oF offload engine serves
  if (capture) {
    auto& e = emit(EventKind::WqeCompleted, q.dev, q.h, "qp", std::string("receive ") + wc_status_name(status));
    e.wc = wc; e.a = wc.wr_id; e.b = status; e.c = opcode; e.d = 1;
  }
  if (Cq* c = cq(q.init.recv_cq))
    if (!cq_post(*c, wc, solicited, q.h)) { qp_to_error(q, "receive CQ overrun (class G)"); return false; }
  return true;
}

// class A / C errors: NAK (RC), the held receive WQE completes with recv_status, responder QP -> error
void SessionImpl::nak(Qp& q, uint8_t code, uint32_t psn, Handle dst, const std::string& why, uint32_t recv_status, const char* rule) {
  if (capture) {
    auto& e = emit(EventKind::Log, q.dev, q.h, "qp", "responder error: " + why);
    e.a = code; e.b = psn;
  }
  if (q.init.qp_type == QPT_RC) send_ack(q, static_cast<uint8_t>(0x60 | code), psn, dst);
  if (q.have_wqe) complete_recv(q, recv_status, WC_RECV, 0, 0, 0, 0, false, 0, rule);
  qp_to_error(q, why);
}

void SessionImpl::send_read_responses(Qp& q, const RespRes& r, uint32_t from_psn, Handle dst) {
  const uint32_t mtu = mtu_bytes(q.attr.path_mtu);
  const uint32_t total = r.length == 0 ? 1 : static_cast<uint32_t>((r.length + mtu - 1) / mtu);
  uint32_t idx = static_cast<uint32_t>(psn_cmp(from_psn, r.first_psn) >> 8);
  Mr* m = nullptr;
  uint64_t base_va = r.va;
  if (r.length) {
    RkeyResult k = check_rkey(q, r.rkey, r.va, r.length, ACCESS_REMOTE_READ, "read");
    if (!k.ok) {                                   // rxe_recheck_mr failed on replay: drop
      if (capture) { auto& e = emit(EventKind::KeyCheck, q.dev, q.h, "qp", k.reason + " (READ replay)"); e.ok = false; e.a = r.rkey; }
      return;
    }
    m = k.m; base_va = k.va;
  }
  std::vector<Piece> pcs;
  for (; idx < total; idx++) {
    uint64_t off = uint64_t(idx) * mtu;
    uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(mtu, r.length - std::min<uint64_t>(off, r.length)));
    Packet p;
    bool in_memory = false;
    p.opcode = total == 1 ? RC_RDMA_READ_RESPONSE_ONLY : idx == 0 ? RC_RDMA_READ_RESPONSE_FIRST
               : idx + 1 == total ? RC_RDMA_READ_RESPONSE_LAST : RC_RDMA_READ_RESPONSE_MIDDLE;
    p.dest_qp = q.attr.dest_qp_num; p.psn = psn_add(r.first_psn, idx);
    p.aeth_syndrome = kAckSyndrome; p.aeth_msn = q.msn & 0xFFFFFF;
    if (n) {
      pcs.clear();
      if (!mr_translate(*m, base_va + off, n, pcs)) return;
      if (pcs.size() == 1) p.payload = pcs[0].p, in_memory = true;
      else {
        scratch.resize(n);
        uint64_t o = 0;
        for (auto& pc : pcs) { std::memcpy(scratch.data() + o, pc.p, pc.n); o += pc.n; }
        p.payload = scratch.data();
      }
    }
    p.payload_len = n;
    send_packet(q, p, dst, in_memory);
  }
}

void SessionImpl::duplicate(Qp& q, const Packet& p, Handle src) {
  const uint32_t m = opcode_mask(p.opcode);
  if (capture) { auto& e = emit(EventKind::Log, q.dev, q.h, "qp", "duplicate request PSN " + std::to_string(p.psn)); e.a = p.psn; }
  if (m & (H_SEND | H_WRITE)) {
    send_ack(q, kAckSyndrome, psn_add(q.resp_psn, 0xFFFFFF), src);   // expected - 1
    return;
  }
  for (auto& r : q.res) {
    if (!r.valid) continue;
    if ((m & H_READ) && !r.atomic && psn_cmp(p.psn, r.first_psn) >= 0 && psn_cmp(p.psn, r.last_psn) <= 0) {
      send_read_responses(q, r, p.psn, src);
      return;
    }
    if ((m & H_ATOMIC) && r.atomic && r.first_psn == p.psn) {
      Packet a;
      a.opcode = RC_ATOMIC_ACKNOWLEDGE; a.dest_qp = q.attr.dest_qp_num; a.psn = p.psn;
      a.aeth_syndrome = kAckSyndrome; a.aeth_msn = q.msn & 0xFFFFFF; a.atomic_ack_orig = r.orig;
      send_packet(q, a, src);
      return;
    }
  }
  if (capture) emit(EventKind::PacketDropped, q.dev, q.h, "qp", "duplicate without a saved responder resource");
}

void SessionImpl::ud_receive(Qp& q, const Packet& p, Handle src, uint16_t ipid) {
  auto drop = [&](const std::string& why) { if (capture) emit(EventKind::PacketDropped, q.dev, q.h, "qp", why); };
  if (q.state != QPS_RTR && q.state != QPS_RTS && q.state != QPS_SQD) return drop(std::string("QP in ") + qp_state_name(q.state));
  if ((p.opcode >> 5) != 3) return drop("not a UD opcode");
  if (p.deth_qkey != q.attr.qkey) return drop("Q_Key " + hex(p.deth_qkey) + " != QP Q_Key " + hex(q.attr.qkey));
  RecvWr wr; bool from_srq = false;
  if (!take_recv_wqe(q, wr, from_srq)) return drop("no receive WQE (UD: dropped)");
  uint64_t cap = 0;
  for (auto& s : wr.sg_list) cap += s.length;
  if (p.payload_len + 40 > cap) {
    if (from_srq) srq(q.init.srq)->q.push_front(wr); else q.rq.push_front(wr);
    return drop("message of " + std::to_string(p.payload_len) + " + 40 GRH bytes does not fit the receive buffer");
  }
  // GRH slot: for IPv4 the IPv4 header sits in the last 20 of the 40 bytes (rxe); from the network (src 0) the
  // addresses are the datagram's own (rx_framing), and an IPv6 datagram's header fills all 40 bytes
  uint8_t grh[40] = {};
  uint8_t* ip = grh + 20;
  const uint16_t udp_len = static_cast<uint16_t>(8 + encoded_len(p));   // UDP header + BTH, DETH (, ImmDt), payload, pad, ICRC
  uint16_t tot = static_cast<uint16_t>(20 + udp_len);
  wire::Framing f = (src == 0 && rx_framing) ? *rx_framing : framing(src, q.dev, ipid);
  if (f.ipv6) {
    grh[0] = 0x60; grh[4] = udp_len >> 8; grh[5] = udp_len & 0xff; grh[6] = 17; grh[7] = 64;
    std::memcpy(grh + 8, f.src_ip, 16); std::memcpy(grh + 24, f.dst_ip, 16);
  } else {
  ip[0] = 0x45; ip[2] = tot >> 8; ip[3] = tot & 0xff; ip[4] = ipid >> 8; ip[5] = ipid & 0xff; ip[6] = 0x40; ip[8] = 64; ip[9] = 17;
  std::memcpy(ip + 12, f.src_ip, 4); std::memcpy(ip + 16, f.dst_ip, 4);
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += (ip[i] << 8) | ip[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  ip[10] = static_cast<uint8_t>(~sum >> 8); ip[11] = static_cast<uint8_t>(~sum);
  }
  q.have_wqe = true; q.cur_wqe = std::move(wr); q.cur_from_srq = from_srq;
  std::string why;
  int rc = copy_to_sges(q.pd, q.dev, q.cur_wqe.sg_list, 0, grh, 40, why);
  if (!rc) rc = copy_to_sges(q.pd, q.dev, q.cur_wqe.sg_list, 40, p.payload, p.payload_len, why);
  if (rc) {
    if (capture) { auto& e = emit(EventKind::KeyCheck, q.dev, q.h, "qp", why); e.ok = false; }
    complete_recv(q, WC_LOC_QP_OP_ERR, WC_RECV, 0, 0, 0, 0, true, p.deth_src_qp);
    qp_to_error(q, "bad receive WQE: " + why);
    return;
  }
  bool imm = p.opcode == UD_SEND_ONLY_WITH_IMMEDIATE;
  complete_recv(q, WC_SUCCESS, WC_RECV, static_cast<uint32_t>(p.payload_len + 40), imm ? p.immdt : 0,
                static_cast<uint32_t>(WC_GRH) | (imm ? static_cast<uint32_t>(WC_WITH_IMM) : 0u), 0, p.se, p.deth_src_qp);
}

void SessionImpl::responder(Qp& q, const Packet& p, Handle src) {
  const bool rc = q.init.qp_type == QPT_RC;
  auto drop = [&](const std::string& why) { if (capture) emit(EventKind::PacketDropped, q.dev, q.h, "qp", why); };
  if (q.state != QPS_RTR && q.state != QPS_RTS && q.state != QPS_SQD) return drop(std::string("QP in ") + qp_state_name(q.state));
  if ((p.opcode >> 5) != (rc ? 0 : 1)) return drop(std::string("opcode ") + opcode_name(p.opcode) + " does not match the QP type");
  if (q.state == QPS_RTR && !q.comm_est) {
    q.comm_est = true;
    async_event(q.dev, q.h, "qp", EVENT_COMM_EST, "IBV_EVENT_COMM_EST: first packet received in RTR");
  }
  const uint32_t m = opcode_mask(p.opcode);
  const uint32_t mtu = mtu_bytes(q.attr.path_mtu);
  const bool first = m & H_FIRST, last = m & H_LAST;
  // ---- 1. PSN
  int32_t diff = psn_cmp(p.psn, q.resp_psn);
  if (rc) {
    if (diff > 0) {
      if (!q.nak_sent) { q.nak_sent = true; send_ack(q, 0x60 | NAK_PSN_SEQ_ERR, q.resp_psn, src); }
      return drop("PSN " + std::to_string(p.psn) + " ahead of expected " + std::to_string(q.resp_psn));
    }
    if (diff < 0) return duplicate(q, p, src);
  } else if (diff != 0) {
    // UC: a gap abandons the message in progress; resynchronise on the next FIRST/ONLY
    q.resp_psn = p.psn;
    if (!first) { q.uc_drop = true; q.resp_psn = psn_add(p.psn, 1); return drop("UC PSN gap: dropping until the next FIRST/ONLY"); }
    q.uc_drop = false; q.resp_last_opcode = 0xFF;
  }
  if (!rc && q.uc_drop) {
    if (!first) { q.resp_psn = psn_add(q.resp_psn, 1); return drop("UC: rest of a damaged message"); }
    q.uc_drop = false; q.resp_last_opcode = 0xFF;
  }
  auto uc_fail = [&](const std::string& why) { q.uc_drop = !last; q.resp_psn = psn_add(p.psn, 1); q.resp_last_opcode = 0xFF; drop(why); };
  // ---- 2. opcode sequence
  const uint8_t lastop = q.resp_last_opcode;
  const bool in_msg = lastop != 0xFF && !(opcode_mask(lastop) & H_LAST);
  if (first && in_msg) {
    if (rc) return nak(q, NAK_INVALID_REQUEST, p.psn, src, "opcode sequence: missing LAST before " + std::string(opcode_name(p.opcode)), WC_REM_INV_REQ_ERR);
    q.resp_last_opcode = 0xFF;                     // UC: abandon the previous message
  }
  if (!first && (m & (H_SEND | H_WRITE))) {
    bool same = in_msg && ((opcode_mask(lastop) & (H_SEND | H_WRITE)) == (m & (H_SEND | H_WRITE)));
    if (!same) {
      if (rc) return nak(q, NAK_INVALID_REQUEST, p.psn, src, std::string("opcode sequence: unexpected ") + opcode_name(p.opcode), WC_REM_INV_REQ_ERR);
      return uc_fail("UC: unexpected MIDDLE/LAST");
    }
  }
  // ---- 3. operation allowed by the QP's access flags
  uint32_t qacc = q.attr.qp_access_flags;
  if (((m & H_WRITE) && !(qacc & ACCESS_REMOTE_WRITE)) || ((m & H_READ) && !(qacc & ACCESS_REMOTE_READ)) ||
      ((m & H_ATOMIC) && !(qacc & ACCESS_REMOTE_ATOMIC))) {
    std::string why = std::string("QP access flags do not allow ") + opcode_name(p.opcode);
    if (rc) return nak(q, NAK_INVALID_REQUEST, p.psn, src, why, WC_REM_INV_REQ_ERR);
    return uc_fail(why);
  }
  // ---- 4. resources
  if ((m & (H_READ | H_ATOMIC)) && q.res.empty())
    return nak(q, NAK_INVALID_REQUEST, p.psn, src, "max_dest_rd_atomic is 0", WC_REM_INV_REQ_ERR);
  const bool needs_wqe = ((m & H_SEND) && first) || ((m & H_WRITE) && (m & H_IMMDT) && last);
  if (needs_wqe && q.have_wqe && (m & H_SEND)) q.cur_recv_off = 0;   // UC: reuse the WQE of an abandoned message
  if (needs_wqe && !q.have_wqe) {
    RecvWr wr; bool from_srq = false;
    if (!take_recv_wqe(q, wr, from_srq)) {
      if (rc) {
        if (capture) { auto& e = emit(EventKind::Log, q.dev, q.h, "qp", "no receive WQE: RNR NAK"); e.a = p.psn; }
        send_ack(q, static_cast<uint8_t>(0x20 | (q.attr.min_rnr_timer & 0x1F)), p.psn, src);
        return;
      }
      return uc_fail("UC: no receive WQE");
    }
    q.have_wqe = true; q.cur_wqe = std::move(wr); q.cur_recv_off = 0; q.cur_from_srq = from_srq;
    if (m & H_SEND) q.recv_byte_len = 0;
  }
  // ---- 5. length rules
  if (m & H_PAYLOAD) {
    bool okl = (first && last) ? p.payload_len <= mtu : (first || !last) ? p.payload_len == mtu : (p.payload_len >= 1 && p.payload_len <= mtu);
    if (!okl) {
      std::string why = "payload length " + std::to_string(p.payload_len) + " invalid for " + opcode_name(p.opcode) + " at MTU " + std::to_string(mtu);
      if (rc) return nak(q, NAK_INVALID_REQUEST, p.psn, src, why, WC_REM_INV_REQ_ERR);
      return uc_fail(why);
    }
  }
  if ((m & H_RETH) && p.reth_dmalen > (1u << 31)) {
    if (rc) return nak(q, NAK_INVALID_REQUEST, p.psn, src, "RETH DMA length > 2^31", WC_REM_INV_REQ_ERR);
    return uc_fail("RETH DMA length > 2^31");
  }
  // ---- 6. rkey
  auto key_event = [&](const RkeyResult& k, uint32_t rkey, uint64_t va, uint64_t len) {
    if (!capture) return;
    auto& e = emit(EventKind::KeyCheck, q.dev, q.h, "qp", k.ok ? "rkey " + key_text(rkey) + ": ok" : k.reason);
    e.ok = k.ok; e.a = rkey; e.b = va; e.c = len; e.d = p.psn;
  };
  if ((m & H_WRITE) && first) {
    q.w_va = p.reth_va; q.w_rkey = p.reth_rkey; q.w_len = q.w_remaining = p.reth_dmalen; q.w_mr = 0;
    if (p.reth_dmalen) {
      RkeyResult k = check_rkey(q, p.reth_rkey, p.reth_va, p.reth_dmalen, ACCESS_REMOTE_WRITE, "write");
      key_event(k, p.reth_rkey, p.reth_va, p.reth_dmalen);
      if (!k.ok) {
        if (rc) return nak(q, NAK_REMOTE_ACCESS_ERROR, p.psn, src, k.reason, WC_REM_ACCESS_ERR);
        return uc_fail(k.reason);
      }
      q.w_mr = k.m->h; q.w_va = k.va;
    }
  }
  if (m & H_WRITE) {
    bool okl = last ? p.payload_len == q.w_remaining : p.payload_len < q.w_remaining;
    if (!okl) {
      std::string why = "WRITE payload " + std::to_string(p.payload_len) + " does not match the remaining DMA length " + std::to_string(q.w_remaining);
      if (rc) return nak(q, NAK_INVALID_REQUEST, p.psn, src, why, WC_REM_INV_REQ_ERR);
      return uc_fail(why);
    }
  }
  RespRes res;
  if (m & H_READ) {
    res.first_psn = p.psn; res.va = p.reth_va; res.rkey = p.reth_rkey; res.length = p.reth_dmalen; res.opcode = p.opcode;
    uint32_t npk = p.reth_dmalen == 0 ? 1 : (p.reth_dmalen + mtu - 1) / mtu;
    res.last_psn = psn_add(p.psn, npk - 1);
    if (p.reth_dmalen) {
      RkeyResult k = check_rkey(q, p.reth_rkey, p.reth_va, p.reth_dmalen, ACCESS_REMOTE_READ, "read");
      key_event(k, p.reth_rkey, p.reth_va, p.reth_dmalen);
      if (!k.ok) return nak(q, NAK_REMOTE_ACCESS_ERROR, p.psn, src, k.reason, WC_REM_ACCESS_ERR);
    }
  }
  uint8_t* atomic_ptr = nullptr;
  if (m & H_ATOMIC) {
    RkeyResult k = check_rkey(q, p.atomic_rkey, p.atomic_va, 8, ACCESS_REMOTE_ATOMIC, "atomic");
    key_event(k, p.atomic_rkey, p.atomic_va, 8);
    if (!k.ok) return nak(q, NAK_REMOTE_ACCESS_ERROR, p.psn, src, k.reason, WC_REM_ACCESS_ERR);
    if (k.va & 7) return nak(q, NAK_INVALID_REQUEST, p.psn, src, "atomic address " + hex(k.va) + " is not 8-byte aligned", WC_REM_INV_REQ_ERR);
    std::vector<Piece> pcs;
    if (!mr_translate(*k.m, k.va, 8, pcs) || pcs.size() != 1)
      return nak(q, NAK_INVALID_REQUEST, p.psn, src, "atomic target crosses a segment", WC_REM_INV_REQ_ERR);
    atomic_ptr = pcs[0].p;
    res.atomic = true; res.first_psn = res.last_psn = p.psn; res.va = pcs[0].va; res.opcode = p.opcode;
  }
  // ---- 7. execute
  if (m & H_SEND) {
    std::string why;
    int r = copy_to_sges(q.pd, q.dev, q.cur_wqe.sg_list, q.cur_recv_off, p.payload, p.payload_len, why);
    if (r == -2) {
      // rxe: copy_data returns -EINVAL for a message longer than the WQE, which send_data_in treats as a malformed
      // WQE (class A: NAK remote operational error, receive IBV_WC_LOC_QP_OP_ERR, QP to error; UC: no NAK). The
      // IBA / ConnectX: NAK invalid request, the receive completes with IBV_WC_LOC_LEN_ERR.
      if (profile_of(q.dev).recv_too_small_is_malformed) {
        if (rc) return nak(q, NAK_REMOTE_OP_ERROR, p.psn, src, "malformed receive WQE: " + why, WC_LOC_QP_OP_ERR, "recvTooSmallIsMalformed");
        complete_recv(q, WC_LOC_QP_OP_ERR, WC_RECV, 0, 0, 0, 0, false, 0, "recvTooSmallIsMalformed");
        qp_to_error(q, "malformed receive WQE: " + why);
        return;
      }
      if (rc) return nak(q, NAK_INVALID_REQUEST, p.psn, src, why, WC_LOC_LEN_ERR, "recvTooSmallIsMalformed");
      complete_recv(q, WC_LOC_LEN_ERR, WC_RECV, 0, 0, 0, 0, false, 0, "recvTooSmallIsMalformed");
      return uc_fail(why);
    }
    if (r == -1) {
      if (capture) { auto& e = emit(EventKind::KeyCheck, q.dev, q.h, "qp", why); e.ok = false; }
      if (rc) return nak(q, NAK_REMOTE_OP_ERROR, p.psn, src, "malformed receive WQE: " + why, WC_LOC_QP_OP_ERR);
      complete_recv(q, WC_LOC_QP_OP_ERR, WC_RECV, 0, 0, 0, 0, false, 0);
      qp_to_error(q, "malformed receive WQE: " + why);
      return;
    }
    q.cur_recv_off += p.payload_len;
  }
  if ((m & H_WRITE) && p.payload_len) {
    Mr* wm = mr(q.w_mr);
    std::vector<Piece>& pcs = pcs_scratch;
    pcs.clear();
    if (!wm || !mr_translate(*wm, q.w_va, p.payload_len, pcs)) {
      std::string why = "WRITE target no longer valid";
      if (rc) return nak(q, NAK_REMOTE_ACCESS_ERROR, p.psn, src, why, WC_REM_ACCESS_ERR);
      return uc_fail(why);
    }
    const uint8_t* s = unaliased(p.payload, p.payload_len, pcs);
    for (auto& pc : pcs) { std::memcpy(pc.p, s, pc.n); s += pc.n; note_write(q.dev, pc.va, pc.n); }
    q.w_va += p.payload_len;
  }
  if (m & H_WRITE) q.w_remaining -= p.payload_len;
  if (m & H_ATOMIC) {
    uint64_t orig;
    std::memcpy(&orig, atomic_ptr, 8);
    uint64_t nv = orig;
    if (p.opcode == RC_COMPARE_SWAP) { if (orig == p.atomic_compare) nv = p.atomic_swap_add; }
    else nv = orig + p.atomic_swap_add;
    std::memcpy(atomic_ptr, &nv, 8);
    note_write(q.dev, res.va, 8);
    res.orig = orig;
  }
  if (m & (H_READ | H_ATOMIC)) {
    res.valid = true;
    q.res[q.res_next] = res;
    q.res_next = (q.res_next + 1) % q.res.size();
  }
  // ---- 8. advance, complete, acknowledge
  q.nak_sent = false;
  q.resp_last_opcode = p.opcode;
  if (m & H_READ) {
    q.msn++;                                       // MSN counts a READ on receipt
    q.resp_psn = psn_add(res.last_psn, 1);
    send_read_responses(q, res, res.first_psn, src);
    return;
  }
  q.resp_psn = psn_add(p.psn, 1);
  if (m & H_ATOMIC) {
    q.msn++;
    Packet a;
    a.opcode = RC_ATOMIC_ACKNOWLEDGE; a.dest_qp = q.attr.dest_qp_num; a.psn = p.psn;
    a.aeth_syndrome = kAckSyndrome; a.aeth_msn = q.msn & 0xFFFFFF; a.atomic_ack_orig = res.orig;
    send_packet(q, a, src);
    return;
  }
  if (last) {
    q.msn++;
    if (m & H_SEND) {
      uint32_t flags = 0, inv = 0, imm = 0;
      uint32_t status = WC_SUCCESS;
      op_rule = nullptr;                           // invalidate_key names the profile rule it applied, if any
      if (m & H_IMMDT) { flags |= WC_WITH_IMM; imm = p.immdt; }
      if (m & H_IETH) {
        Status st = invalidate_key(q, p.ieth_rkey, true);
        if (st.ok()) { flags |= WC_WITH_INV; inv = p.ieth_rkey; }
        else {
          // class J: the requester still gets an ACK; the receive completes with an error, QP -> error
          if (capture) { auto& e = emit(EventKind::KeyCheck, q.dev, q.h, "qp", st.msg); e.ok = false; e.a = p.ieth_rkey; }
          status = WC_REM_INV_REQ_ERR;
        }
      }
      const bool posted = complete_recv(q, status, WC_RECV, static_cast<uint32_t>(q.cur_recv_off), imm, flags, inv, p.se, 0,
                                        (m & H_IETH) ? op_rule : nullptr);
      if (!posted && profile_of(q.dev).recv_cq_overflow_no_ack) return;   // the requester retries into an ERR QP
      if (rc && p.ack_req) send_ack(q, kAckSyndrome, p.psn, src);
      if (status != WC_SUCCESS) qp_to_error(q, "SEND_WITH_INV: " + std::string(wc_status_name(status)));
      return;
    }
    if ((m & H_WRITE) && (m & H_IMMDT))
      if (!complete_recv(q, WC_SUCCESS, WC_RECV_RDMA_WITH_IMM, static_cast<uint32_t>(q.w_len), p.immdt, WC_WITH_IMM, 0, p.se, 0) &&
          profile_of(q.dev).recv_cq_overflow_no_ack)
        return;
  }
  if (rc && p.ack_req) send_ack(q, kAckSyndrome, p.psn, src);
}

}  // namespace vl
