// The fast paths <infiniband/verbs.h> inlines through the context ops: post_send, post_recv, post_srq_recv,
// poll_cq, req_notify_cq. Work requests are translated into the device's (values are rdma-core's on both sides;
// immediate data is big-endian in libibverbs and a number in the device).
#include <sched.h>

#include <cstring>
#include <vector>

#include "lib.h"

using namespace vlib;

namespace {

vl::Handle qp_h(ibv_qp* q) { return reinterpret_cast<Qp*>(q)->h; }

void to_sges(const ibv_sge* s, int n, std::vector<vl::Sge>& out) {
  out.resize(n > 0 ? n : 0);
  for (int i = 0; i < n; i++) out[i] = {s[i].addr, s[i].length, s[i].lkey};
}

bool to_send_wr(const ibv_send_wr& w, vl::SendWr& v, bool ud) {
  v = vl::SendWr{};
  v.wr_id = w.wr_id;
  v.opcode = w.opcode;
  v.send_flags = w.send_flags;
  if (w.num_sge < 0) return false;
  if (w.send_flags & IBV_SEND_INLINE) {        // copied at post time; the lkeys are not looked at (verbs.h)
    size_t len = 0;
    for (int i = 0; i < w.num_sge; i++) len += w.sg_list[i].length;
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
  if (ud) {                                     // wr.ud shares its bytes with wr.rdma / wr.atomic
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

int vlib::op_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  thread_local std::vector<vl::SendWr> wrs;
  wrs.clear();
  const bool ud = qp->qp_type == IBV_QPT_UD;
  for (ibv_send_wr* w = wr; w; w = w->next) {
    wrs.emplace_back();
    if (!to_send_wr(*w, wrs.back(), ud)) { *bad = w; return EINVAL; }
  }
  auto lk = lock();
  vl::PostResult r = g().s->post_send(qp_h(qp), wrs);
  kick();
  if (r.err) { *bad = nth(wr, r.bad_wr); return err_of(r); }
  return 0;
}

static int post_recv_list(ibv_recv_wr* wr, ibv_recv_wr** bad, std::vector<vl::RecvWr>& wrs) {
  wrs.clear();
  for (ibv_recv_wr* w = wr; w; w = w->next) {
    if (w->num_sge < 0) { *bad = w; return EINVAL; }
    wrs.emplace_back();
    wrs.back().wr_id = w->wr_id;
    to_sges(w->sg_list, w->num_sge, wrs.back().sg_list);
  }
  return 0;
}

int vlib::op_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  thread_local std::vector<vl::RecvWr> wrs;
  if (int e = post_recv_list(wr, bad, wrs)) return e;
  auto lk = lock();
  vl::PostResult r = g().s->post_recv(qp_h(qp), wrs);
  kick();                                      // a receive can end an RNR wait
  if (r.err) { *bad = nth(wr, r.bad_wr); return err_of(r); }
  return 0;
}

int vlib::op_post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  thread_local std::vector<vl::RecvWr> wrs;
  if (int e = post_recv_list(wr, bad, wrs)) return e;
  auto lk = lock();
  vl::PostResult r = g().s->post_srq_recv(reinterpret_cast<Srq*>(srq)->h, wrs);
  kick();
  if (r.err) { *bad = nth(wr, r.bad_wr); return err_of(r); }
  return 0;
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
