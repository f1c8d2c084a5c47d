// The fast paths <infiniband/verbs.h> inlines through the context ops: post_send, post_recv, post_srq_recv,
// poll_cq, req_notify_cq. Work requests are translated into the device's (values are rdma-core's on both sides;
// immediate data is big-endian in libibverbs and a number in the device).
#include <sched.h>

#include <cstring>
#include <vector>

#include "lib.h"

using namespace vlib;

namespace {

void to_sges(const ibv_sge* s, int n, std::vector<vl::Sge>& out) {
  out.resize(n > 0 ? n : 0);
  for (int i = 0; i < n; i++) out[i] = {s[i].addr, s[i].length, s[i].lkey};
}

// Every count is checked against the QP's caps before one element of sg_list is read, as rxe's validate_send_wr
// does (num_sge > max_sge, then the inline length > max_inline_data: EINVAL): num_sge is the program's word and the
// list may be shorter. The inline length is summed over at most max_send_sge elements, in 64 bits.
bool to_send_wr(const ibv_send_wr& w, vl::SendWr& v, const Qp& q) {
  v = vl::SendWr{};
  v.wr_id = w.wr_id;
  v.opcode = w.opcode;
  v.send_flags = w.send_flags;
  if (w.num_sge < 0 || static_cast<uint32_t>(w.num_sge) > q.max_send_sge) return false;
  if (w.num_sge && !w.sg_list) return false;
  if (w.send_flags & IBV_SEND_INLINE) {        // copied at post time; the lkeys are not looked at (verbs.h)
    uint64_t len = 0;
    for (int i = 0; i < w.num_sge; i++) len += w.sg_list[i].length;
    if (len > q.max_inline_data) return false;
    v.inline_data.resize(len);
    size_t off = 0;
    for (int i = 0; i < w.num_sge; i++) {
      if (w.sg_list[i].length) std::memcpy(v.inline_data.data() + off, reinterpret_cast<const void*>(w.sg_list[i].addr), w.sg_list[i].length);
      off += w.sg_list[i].length;
    }
  } else {
    to_sges(w.sg_list, w.num_sge, v.sg_list);
  }
  switch (w.opcode) {
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_RDMA_WRITE_WITH_IMM: v.imm_data = be32toh(w.imm_data); break;
    case IBV_WR_SEND_WITH_INV:
    case IBV_WR_LOCAL_INV: v.imm_data = w.invalidate_rkey; break;
    default: break;
  }
  switch (w.opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ:
      v.remote_addr = w.wr.rdma.remote_addr;
      v.rkey = w.wr.rdma.rkey;
      break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      v.remote_addr = w.wr.atomic.remote_addr;
      v.rkey = w.wr.atomic.rkey;
      v.compare_add = w.wr.atomic.compare_add;
      v.swap = w.wr.atomic.swap;
      break;
    case IBV_WR_BIND_MW:
      v.mw = w.bind_mw.mw ? reinterpret_cast<Mw*>(w.bind_mw.mw)->h : 0;
      v.bind_rkey = w.bind_mw.rkey;
      v.bind_mr = w.bind_mw.bind_info.mr ? reinterpret_cast<Mr*>(w.bind_mw.bind_info.mr)->h : 0;
      v.bind_addr = w.bind_mw.bind_info.addr;
      v.bind_length = w.bind_mw.bind_info.length;
      v.bind_access = w.bind_mw.bind_info.mw_access_flags;
      break;
    default: break;
  }
  if (q.qp.qp_type == IBV_QPT_UD) {            // wr.ud shares its bytes with wr.rdma / wr.atomic
    if (!w.wr.ud.ah) return false;
    v.ah = reinterpret_cast<Ah*>(w.wr.ud.ah)->h;
    v.remote_qpn = w.wr.ud.remote_qpn;
    v.remote_qkey = w.wr.ud.remote_qkey;
  }
  return true;
}

template <class Wr> Wr* nth(Wr* first, size_t n) {
  while (n-- && first) first = first->next;
  return first;
}

}  // namespace

void vlib::to_ibv_wc(const vl::Wc& w, ibv_wc& o) {
  o.wr_id = w.wr_id;
  o.status = static_cast<ibv_wc_status>(w.status);
  o.opcode = static_cast<ibv_wc_opcode>(w.opcode);
  o.vendor_err = w.vendor_err;
  o.byte_len = w.byte_len;
  if (w.wc_flags & IBV_WC_WITH_INV) o.invalidated_rkey = w.invalidated_rkey;
  else o.imm_data = htobe32(w.imm_data);
  o.qp_num = w.qp_num;
  o.src_qp = w.src_qp;
  o.wc_flags = w.wc_flags;
  o.pkey_index = static_cast<uint16_t>(w.pkey_index);
  o.slid = static_cast<uint16_t>(w.slid);
  o.sl = static_cast<uint8_t>(w.sl);
  o.dlid_path_bits = static_cast<uint8_t>(w.dlid_path_bits);
}

// A WR refused by the library (a count beyond the caps) is refused like one the device refuses: the WRs before it
// are posted, *bad_wr names it (ibv_post_send's contract; rxe posts one by one and stops at the first bad one).
namespace {
template <class Wr, class VWr, class Post>
int post_prefix(Wr* wr, Wr** bad, Wr* refused, const std::vector<VWr>& wrs, Post post) {
  if (!wrs.empty()) {
    auto lk = lock();
    vl::PostResult r = post(wrs);
    kick();                                    // a receive can end an RNR wait
    if (r.err) { *bad = nth(wr, r.bad_wr); return err_of(r); }
  }
  if (refused) { *bad = refused; return EINVAL; }
  return 0;
}
}  // namespace

int vlib::op_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  thread_local std::vector<vl::SendWr> wrs;
  wrs.clear();
  const Qp& q = *reinterpret_cast<Qp*>(qp);
  ibv_send_wr* refused = nullptr;
  for (ibv_send_wr* w = wr; w && wrs.size() <= q.max_send_wr; w = w->next) {
    wrs.emplace_back();
    if (!to_send_wr(*w, wrs.back(), q)) { wrs.pop_back(); refused = w; break; }
  }
  return post_prefix(wr, bad, refused, wrs, [&](const auto& v) { return g().s->post_send(q.h, v); });
}

// num_sge checked against the receive queue's max_sge (the QP's max_recv_sge or the SRQ's max_sge) before the list
// is read: rxe's post_one_recv (num_sge > rq->max_sge: EINVAL). Returns the WR refused, if any.
static ibv_recv_wr* recv_list(ibv_recv_wr* wr, std::vector<vl::RecvWr>& wrs, uint32_t max_wr, uint32_t max_sge) {
  wrs.clear();
  for (ibv_recv_wr* w = wr; w && wrs.size() <= max_wr; w = w->next) {
    if (w->num_sge < 0 || static_cast<uint32_t>(w->num_sge) > max_sge || (w->num_sge && !w->sg_list)) return w;
    wrs.emplace_back();
    wrs.back().wr_id = w->wr_id;
    to_sges(w->sg_list, w->num_sge, wrs.back().sg_list);
  }
  return nullptr;
}

int vlib::op_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  thread_local std::vector<vl::RecvWr> wrs;
  const Qp& q = *reinterpret_cast<Qp*>(qp);
  ibv_recv_wr* refused = recv_list(wr, wrs, q.max_recv_wr, q.max_recv_sge);
  return post_prefix(wr, bad, refused, wrs, [&](const auto& v) { return g().s->post_recv(q.h, v); });
}

int vlib::op_post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  thread_local std::vector<vl::RecvWr> wrs;
  const Srq& s = *reinterpret_cast<Srq*>(srq);
  ibv_recv_wr* refused = recv_list(wr, wrs, s.max_wr, s.max_sge);
  return post_prefix(wr, bad, refused, wrs, [&](const auto& v) { return g().s->post_srq_recv(s.h, v); });
}

int vlib::op_poll_cq(ibv_cq* cq, int n, ibv_wc* wc) {
  if (n < 0) return -1;
  Global& G = g();
  vl::Handle h = reinterpret_cast<Cq*>(cq)->h;
  std::vector<vl::Wc> got = G.s->poll_cq(h, static_cast<uint32_t>(n));
  if (got.empty()) {
    // a program spinning on an empty CQ drives the device itself when nobody else holds it (lib.h: progress)
    std::unique_lock<std::recursive_mutex> lk(G.S->mu, std::try_to_lock);
    if (!lk.owns_lock()) return 0;
    progress_locked();
    got = G.s->poll_cq(h, static_cast<uint32_t>(n));
    lk.unlock();
    // The device shares the CPU with the program: a caller spinning on an empty CQ gives its core away once per
    // empty poll, so the peer it waits for (the other process, or this one's progress thread) gets to run.
    if (got.empty()) sched_yield();
  }
  for (size_t i = 0; i < got.size(); i++) to_ibv_wc(got[i], wc[i]);
  return static_cast<int>(got.size());
}

int vlib::op_req_notify_cq(ibv_cq* cq, int solicited_only) {
  auto st = g().s->req_notify_cq(reinterpret_cast<Cq*>(cq)->h, solicited_only != 0);
  return st.ok() ? 0 : err_of(st);
}
