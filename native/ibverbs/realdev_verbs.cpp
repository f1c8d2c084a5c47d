// The real-device backend (realdev.h): the verbs on objects and the posting of work requests. Exported verbs go
// through the dlsym'd table; the static-inline fast paths of <infiniband/verbs.h> (ibv_post_send, ibv_post_recv,
// ibv_post_srq_recv, ibv_poll_cq, ibv_req_notify_cq, ibv_alloc_mw, ibv_bind_mw, ibv_dealloc_mw) through the
// context's ops table, as those inlines do.
#include <arpa/inet.h>
#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "realdev.h"
#include "realdev_lib.h"

namespace vl::ibverbs {

namespace {
std::string h(uint32_t v) { return std::to_string(v); }
// rdma-core has no IB_WR_REG_MR (a kernel work request, ib_verbs.h); the console's value for it
constexpr int kKernelRegMr = 0x20;
}  // namespace

// ---- PDs
Status RealDevice::alloc_pd(uint32_t& out) {
  ibv_pd* pd = lib_->alloc_pd(ctx_);
  if (!pd) return errno_status("ibv_alloc_pd", errno);
  std::lock_guard<std::mutex> g(mu_);
  out = next();
  pds_[out] = {pd};
  return okst();
}

Status RealDevice::dealloc_pd(uint32_t pd) {
  auto* p = find(pds_, pd);
  if (!p) return {ENOENT, "no PD with handle " + h(pd)};
  if (int e = lib_->dealloc_pd(p->pd)) return errno_status("ibv_dealloc_pd", e);   // EBUSY while objects use it
  std::lock_guard<std::mutex> g(mu_);
  pds_.erase(pd);
  return okst();
}

// ---- MRs: only over the session's buffers (a registered range is memory the peer may write)
Status RealDevice::reg_mr(uint32_t pd, uint64_t addr, uint64_t length, int access, bool has_iova, uint64_t iova, MrInfo& out) {
  auto* p = find(pds_, pd);
  if (!p) return {ENOENT, "no PD with handle " + h(pd)};
  if (!covered(addr, length)) return {EFAULT, "ibv_reg_mr: the range is not inside a buffer of this session (buffer.alloc): a peer could write into it"};
  ibv_mr* mr;
  if (has_iova) {
    if (!lib_->reg_mr_iova) return {EOPNOTSUPP, info_.library + " has no ibv_reg_mr_iova (IBVERBS_1.7)"};
    mr = lib_->reg_mr_iova(p->pd, reinterpret_cast<void*>(addr), length, iova, access);
  } else {
    mr = lib_->reg_mr(p->pd, reinterpret_cast<void*>(addr), length, access);
  }
  if (!mr) return errno_status("ibv_reg_mr", errno);
  std::lock_guard<std::mutex> g(mu_);
  const uint32_t hd = next();
  mrs_[hd] = {mr, pd, access};
  out = {hd, pd, mr->lkey, mr->rkey, addr, length, access};
  return okst();
}

Status RealDevice::rereg_mr(uint32_t mr, int flags, uint32_t pd, uint64_t addr, uint64_t length, int access, MrInfo& out) {
  auto* m = find(mrs_, mr);
  if (!m) return {ENOENT, "no MR with handle " + h(mr)};
  auto* p = find(pds_, pd);
  if (!p) return {ENOENT, "no PD with handle " + h(pd)};
  if (!lib_->rereg_mr) return {EOPNOTSUPP, info_.library + " has no ibv_rereg_mr"};
  if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && !covered(addr, length))
    return {EFAULT, "ibv_rereg_mr: the range is not inside a buffer of this session (buffer.alloc)"};
  errno = 0;
  if (int r = lib_->rereg_mr(m->mr, flags, p->pd, reinterpret_cast<void*>(addr), length, access))
    return errno_status("ibv_rereg_mr", errno ? errno : (r > 0 ? r : EINVAL));
  if (flags & IBV_REREG_MR_CHANGE_PD) m->pd = pd;
  if (flags & IBV_REREG_MR_CHANGE_ACCESS) m->access = access;
  if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) { m->mr->addr = reinterpret_cast<void*>(addr); m->mr->length = length; }
  mr_info(mr, out);
  return okst();
}

Status RealDevice::dereg_mr(uint32_t mr) {
  auto* m = find(mrs_, mr);
  if (!m) return {ENOENT, "no MR with handle " + h(mr)};
  if (int e = lib_->dereg_mr(m->mr)) return errno_status("ibv_dereg_mr", e);
  std::lock_guard<std::mutex> g(mu_);
  mrs_.erase(mr);
  return okst();
}

bool RealDevice::mr_info(uint32_t mr, MrInfo& out) {
  auto* m = find(mrs_, mr);
  if (!m) return false;
  out = {mr, m->pd, m->mr->lkey, m->mr->rkey, reinterpret_cast<uint64_t>(m->mr->addr), m->mr->length, m->access};
  return true;
}

// ---- memory windows (ibv_alloc_mw / ibv_bind_mw / ibv_dealloc_mw are inlines over the ops)
Status RealDevice::alloc_mw(uint32_t pd, int type, MwInfo& out) {
  auto* p = find(pds_, pd);
  if (!p) return {ENOENT, "no PD with handle " + h(pd)};
  if (!ctx_->ops.alloc_mw) return {EOPNOTSUPP, "ibv_alloc_mw: " + info_.name + "'s provider has no memory windows (ops.alloc_mw is NULL)"};
  ibv_mw* mw = ctx_->ops.alloc_mw(p->pd, static_cast<ibv_mw_type>(type));
  if (!mw) return errno_status("ibv_alloc_mw", errno);
  std::lock_guard<std::mutex> g(mu_);
  const uint32_t hd = next();
  mws_[hd] = {mw, pd, type};
  out = {hd, pd, mw->rkey, type, 0, 0, 0, 0, 0, false};
  return okst();
}

Status RealDevice::dealloc_mw(uint32_t mw) {
  auto* w = find(mws_, mw);
  if (!w) return {ENOENT, "no MW with handle " + h(mw)};
  if (int e = ctx_->ops.dealloc_mw(w->mw)) return errno_status("ibv_dealloc_mw", e);
  std::lock_guard<std::mutex> g(mu_);
  mws_.erase(mw);
  return okst();
}

Status RealDevice::bind_mw(uint32_t qp, uint32_t mw, uint64_t wr_id, unsigned send_flags, uint32_t mr, uint64_t addr, uint64_t length, int access, uint32_t& rkey) {
  auto* q = find(qps_, qp);
  if (!q) return {ENOENT, "no QP with handle " + h(qp)};
  auto* w = find(mws_, mw);
  if (!w) return {ENOENT, "no MW with handle " + h(mw)};
  auto* m = find(mrs_, mr);
  if (!m) return {ENOENT, "no MR with handle " + h(mr)};
  if (!ctx_->ops.bind_mw) return {EOPNOTSUPP, "ibv_bind_mw: " + info_.name + "'s provider has no bind_mw op"};
  ibv_mw_bind b{};
  b.wr_id = wr_id; b.send_flags = send_flags;
  b.bind_info.mr = m->mr; b.bind_info.addr = addr; b.bind_info.length = length; b.bind_info.mw_access_flags = access;
  if (int e = ctx_->ops.bind_mw(q->qp, w->mw, &b)) return errno_status("ibv_bind_mw", e);
  w->mr = mr; w->qp = qp; w->addr = addr; w->length = length; w->access = access;
  rkey = w->mw->rkey;
  return okst();
}

bool RealDevice::mw_info(uint32_t mw, MwInfo& out) {
  auto* w = find(mws_, mw);
  if (!w) return false;
  out = {mw, w->pd, w->mw->rkey, w->type, w->mr, w->qp, w->addr, w->length, w->access, w->length > 0};
  return true;
}

// ---- CQs and the device's completion channel (one per device, as the software device has)
Status RealDevice::create_cq(int cqe, bool channel, CqInfo& out) {
  if (channel && !channel_) {
    channel_ = lib_->create_comp_channel(ctx_);
    if (!channel_) return errno_status("ibv_create_comp_channel", errno);
    fcntl(channel_->fd, F_SETFL, fcntl(channel_->fd, F_GETFL) | O_NONBLOCK);   // cq.get_event never blocks the host
  }
  std::lock_guard<std::mutex> g(mu_);
  const uint32_t hd = next_;
  ibv_cq* cq = lib_->create_cq(ctx_, cqe, reinterpret_cast<void*>(uintptr_t(hd)), channel ? channel_ : nullptr, 0);
  if (!cq) return errno_status("ibv_create_cq", errno);
  next();
  cqs_[hd] = {cq, cq->cqe, channel};
  out = {hd, cq->cqe, channel};
  return okst();
}

Status RealDevice::destroy_cq(uint32_t cq) {
  auto* c = find(cqs_, cq);
  if (!c) return {ENOENT, "no CQ with handle " + h(cq)};
  if (int e = lib_->destroy_cq(c->cq)) return errno_status("ibv_destroy_cq", e);
  std::lock_guard<std::mutex> g(mu_);
  cqs_.erase(cq);
  return okst();
}

bool RealDevice::cq_info(uint32_t cq, CqInfo& out) {
  auto* c = find(cqs_, cq);
  if (!c) return false;
  out = {cq, c->cq->cqe, c->channel};
  return true;
}

Status RealDevice::req_notify_cq(uint32_t cq, bool solicited_only) {
  auto* c = find(cqs_, cq);
  if (!c) return {ENOENT, "no CQ with handle " + h(cq)};
  if (int e = ctx_->ops.req_notify_cq(c->cq, solicited_only)) return errno_status("ibv_req_notify_cq", e);
  return okst();
}

Status RealDevice::poll_cq(uint32_t cq, int max, std::vector<ibv_wc>& out) {
  auto* c = find(cqs_, cq);
  if (!c) return {ENOENT, "no CQ with handle " + h(cq)};
  out.resize(max > 0 ? max : 1);
  const int n = ctx_->ops.poll_cq(c->cq, max, out.data());
  if (n < 0) { out.clear(); return errno_status("ibv_poll_cq", -n > 0 ? -n : EIO); }
  out.resize(n);
  return okst();
}

Status RealDevice::get_cq_event(uint32_t& cq) {
  if (!channel_) return {ENOENT, "the device has no completion channel (create a CQ with channel: true)"};
  ibv_cq* c = nullptr;
  void* cq_ctx = nullptr;
  if (lib_->get_cq_event(channel_, &c, &cq_ctx)) {
    const int e = errno;
    if (e == EAGAIN) return {EAGAIN, "no completion event on " + info_.name + "'s channel (arm the CQ with cq.req_notify; events come when a completion arrives)"};
    return errno_status("ibv_get_cq_event", e);
  }
  cq = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(cq_ctx));
  return okst();
}

Status RealDevice::ack_cq_events(uint32_t cq, unsigned n) {
  auto* c = find(cqs_, cq);
  if (!c) return {ENOENT, "no CQ with handle " + h(cq)};
  lib_->ack_cq_events(c->cq, n);
  return okst();
}

// ---- SRQs
Status RealDevice::create_srq(uint32_t pd, uint32_t max_wr, uint32_t max_sge, uint32_t srq_limit, uint32_t& out) {
  auto* p = find(pds_, pd);
  if (!p) return {ENOENT, "no PD with handle " + h(pd)};
  std::lock_guard<std::mutex> g(mu_);
  ibv_srq_init_attr ia{};
  ia.srq_context = reinterpret_cast<void*>(uintptr_t(next_));
  ia.attr.max_wr = max_wr; ia.attr.max_sge = max_sge; ia.attr.srq_limit = srq_limit;
  ibv_srq* s = lib_->create_srq(p->pd, &ia);
  if (!s) return errno_status("ibv_create_srq", errno);
  out = next();
  srqs_[out] = {s, pd};
  return okst();
}

Status RealDevice::modify_srq(uint32_t srq, uint32_t srq_limit) {
  auto* s = find(srqs_, srq);
  if (!s) return {ENOENT, "no SRQ with handle " + h(srq)};
  ibv_srq_attr a{};
  a.srq_limit = srq_limit;
  if (int e = lib_->modify_srq(s->srq, &a, IBV_SRQ_LIMIT)) return errno_status("ibv_modify_srq", e);
  return okst();
}

Status RealDevice::destroy_srq(uint32_t srq) {
  auto* s = find(srqs_, srq);
  if (!s) return {ENOENT, "no SRQ with handle " + h(srq)};
  if (int e = lib_->destroy_srq(s->srq)) return errno_status("ibv_destroy_srq", e);
  std::lock_guard<std::mutex> g(mu_);
  srqs_.erase(srq);
  return okst();
}

namespace {
// receive WRs as one chain (the SGE arrays live in `wrs`)
std::vector<ibv_recv_wr> recv_chain(const std::vector<RecvWrIn>& wrs) {
  std::vector<ibv_recv_wr> out(wrs.size());
  for (size_t i = 0; i < wrs.size(); ++i) {
    out[i].wr_id = wrs[i].wr_id;
    out[i].sg_list = const_cast<ibv_sge*>(wrs[i].sg.data());
    out[i].num_sge = static_cast<int>(wrs[i].sg.size());
    out[i].next = i + 1 < wrs.size() ? &out[i + 1] : nullptr;
  }
  return out;
}
template <class W> size_t bad_index(const std::vector<W>& chain, const W* bad) {
  return bad && bad >= chain.data() && bad < chain.data() + chain.size() ? size_t(bad - chain.data()) : 0;
}
}  // namespace

Status RealDevice::post_srq_recv(uint32_t srq, const std::vector<RecvWrIn>& wrs, size_t& bad) {
  auto* s = find(srqs_, srq);
  if (!s) return {ENOENT, "no SRQ with handle " + h(srq)};
  if (wrs.empty()) return okst();
  auto chain = recv_chain(wrs);
  ibv_recv_wr* b = nullptr;
  if (int e = ctx_->ops.post_srq_recv(s->srq, chain.data(), &b)) { bad = bad_index(chain, b); return errno_status("ibv_post_srq_recv", e); }
  return okst();
}

// ---- QPs
Status RealDevice::create_qp(uint32_t pd, const QpInit& init, QpInfo& out) {
  auto* p = find(pds_, pd);
  if (!p) return {ENOENT, "no PD with handle " + h(pd)};
  auto* sc = find(cqs_, init.send_cq);
  if (!sc) return {ENOENT, "sendCq: no CQ with handle " + h(init.send_cq)};
  auto* rc = find(cqs_, init.recv_cq);
  if (!rc) return {ENOENT, "recvCq: no CQ with handle " + h(init.recv_cq)};
  auto* sr = init.srq ? find(srqs_, init.srq) : nullptr;
  if (init.srq && !sr) return {ENOENT, "srq: no SRQ with handle " + h(init.srq)};
  std::lock_guard<std::mutex> g(mu_);
  ibv_qp_init_attr ia{};
  ia.qp_context = reinterpret_cast<void*>(uintptr_t(next_));
  ia.send_cq = sc->cq; ia.recv_cq = rc->cq; ia.srq = sr ? sr->srq : nullptr;
  ia.cap = init.cap; ia.qp_type = static_cast<ibv_qp_type>(init.qp_type); ia.sq_sig_all = init.sq_sig_all;
  ibv_qp* qp = lib_->create_qp(p->pd, &ia);
  if (!qp) return errno_status("ibv_create_qp", errno);
  const uint32_t hd = next();
  QpInit granted = init;
  granted.pd = pd;
  granted.cap = ia.cap;   // the provider writes the capacities it granted back
  qps_[hd] = {qp, granted};
  out = {hd, qp->qp_num, granted, {}};
  out.attr.qp_state = IBV_QPS_RESET;
  return okst();
}

Status RealDevice::modify_qp(uint32_t qp, const QpAttrIn& in, int mask) {
  auto* q = find(qps_, qp);
  if (!q) return {ENOENT, "no QP with handle " + h(qp)};
  ibv_qp_attr a = in.attr;
  if (mask & IBV_QP_AV) {
    // the address vector: the port's LID (InfiniBand; 0 on RoCE) and, with a GID, the GRH
    a.ah_attr.port_num = in.attr.port_num ? in.attr.port_num : 1;
    a.ah_attr.dlid = in.dest_is_self ? info_.port.lid : 0;
    if (in.has_dgid) {
      a.ah_attr.is_global = 1;
      std::memcpy(a.ah_attr.grh.dgid.raw, in.dgid, 16);
      a.ah_attr.grh.hop_limit = 1;
    }
  }
  if (int e = lib_->modify_qp(q->qp, &a, mask)) return errno_status("ibv_modify_qp", e);
  return okst();
}

Status RealDevice::query_qp(uint32_t qp, QpInfo& out) {
  auto* q = find(qps_, qp);
  if (!q) return {ENOENT, "no QP with handle " + h(qp)};
  ibv_qp_attr a{};
  ibv_qp_init_attr ia{};
  const int all = IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_AV |
                  IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
                  IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN | IBV_QP_CAP;
  if (int e = lib_->query_qp(q->qp, &a, all, &ia)) return errno_status("ibv_query_qp", e);
  out = {qp, q->qp->qp_num, q->init, a};
  return okst();
}

Status RealDevice::destroy_qp(uint32_t qp) {
  auto* q = find(qps_, qp);
  if (!q) return {ENOENT, "no QP with handle " + h(qp)};
  if (int e = lib_->destroy_qp(q->qp)) return errno_status("ibv_destroy_qp", e);
  std::lock_guard<std::mutex> g(mu_);
  qps_.erase(qp);
  for (auto& [hd, w] : mws_) if (w.qp == qp && w.type == IBV_MW_TYPE_2) { w.qp = 0; w.length = 0; }
  return okst();
}

uint32_t RealDevice::qp_handle_by_num(uint32_t qpn) {
  for (auto& [hd, q] : qps_) if (q.qp->qp_num == qpn) return hd;
  return 0;
}

Status RealDevice::create_ah(uint32_t pd, const uint8_t dgid[16], uint8_t sgid_index, uint32_t& out) {
  auto* p = find(pds_, pd);
  if (!p) return {ENOENT, "no PD with handle " + h(pd)};
  ibv_ah_attr a{};
  a.is_global = 1; a.port_num = 1; a.dlid = info_.port.lid;
  std::memcpy(a.grh.dgid.raw, dgid, 16);
  a.grh.sgid_index = sgid_index; a.grh.hop_limit = 1;
  ibv_ah* ah = lib_->create_ah(p->pd, &a);
  if (!ah) return errno_status("ibv_create_ah", errno);
  std::lock_guard<std::mutex> g(mu_);
  out = next();
  ahs_[out] = {ah, pd};
  return okst();
}

// ---- posting
Status RealDevice::post_send(uint32_t qp, const std::vector<SendWrIn>& wrs, size_t& bad) {
  auto* q = find(qps_, qp);
  if (!q) return {ENOENT, "no QP with handle " + h(qp)};
  if (wrs.empty()) return okst();
  std::vector<ibv_send_wr> chain(wrs.size());
  std::vector<ibv_sge> inl(wrs.size());
  for (size_t i = 0; i < wrs.size(); ++i) {
    const SendWrIn& in = wrs[i];
    ibv_send_wr& w = chain[i];
    bad = i;
    if (in.opcode == kKernelRegMr)
      return {EOPNOTSUPP, "IB_WR_REG_MR is a kernel work request (ib_verbs.h): libibverbs has no such opcode, so a real device cannot be given it from user space"};
    w.wr_id = in.wr_id; w.opcode = static_cast<ibv_wr_opcode>(in.opcode); w.send_flags = in.send_flags;
    if (!in.inline_data.empty()) {
      inl[i] = {reinterpret_cast<uint64_t>(in.inline_data.data()), static_cast<uint32_t>(in.inline_data.size()), 0};
      w.sg_list = &inl[i]; w.num_sge = 1;
    } else {
      w.sg_list = const_cast<ibv_sge*>(in.sg.data()); w.num_sge = static_cast<int>(in.sg.size());
    }
    if (in.opcode == IBV_WR_LOCAL_INV || in.opcode == IBV_WR_SEND_WITH_INV) w.invalidate_rkey = in.imm_or_inv;
    else if (in.has_imm) w.imm_data = htonl(in.imm_or_inv);   // __be32 on the wire
    switch (in.opcode) {
      case IBV_WR_RDMA_WRITE: case IBV_WR_RDMA_WRITE_WITH_IMM: case IBV_WR_RDMA_READ:
        w.wr.rdma.remote_addr = in.remote_addr; w.wr.rdma.rkey = in.rkey; break;
      case IBV_WR_ATOMIC_CMP_AND_SWP: case IBV_WR_ATOMIC_FETCH_AND_ADD:
        w.wr.atomic.remote_addr = in.remote_addr; w.wr.atomic.rkey = in.rkey;
        w.wr.atomic.compare_add = in.compare_add; w.wr.atomic.swap = in.swap; break;
      case IBV_WR_BIND_MW: {
        auto* mw = find(mws_, in.mw);
        if (!mw) return {ENOENT, "mw: no MW with handle " + h(in.mw)};
        auto* mr = find(mrs_, in.bind_mr);
        if (!mr) return {ENOENT, "bindMr: no MR with handle " + h(in.bind_mr)};
        w.bind_mw.mw = mw->mw; w.bind_mw.rkey = in.bind_rkey;
        w.bind_mw.bind_info.mr = mr->mr; w.bind_mw.bind_info.addr = in.bind_addr;
        w.bind_mw.bind_info.length = in.bind_length; w.bind_mw.bind_info.mw_access_flags = in.bind_access;
        break;
      }
      default: break;
    }
    if (q->init.qp_type == IBV_QPT_UD) {
      auto* ah = find(ahs_, in.ah);
      if (!ah) return {ENOENT, "ah: no address handle " + h(in.ah) + " (a UD send names its destination by an AH)"};
      w.wr.ud.ah = ah->ah; w.wr.ud.remote_qpn = in.remote_qpn; w.wr.ud.remote_qkey = in.remote_qkey;
    }
    w.next = i + 1 < wrs.size() ? &chain[i + 1] : nullptr;
  }
  bad = 0;
  ibv_send_wr* b = nullptr;
  if (int e = ctx_->ops.post_send(q->qp, chain.data(), &b)) { bad = bad_index(chain, b); return errno_status("ibv_post_send", e); }
  // a type 2 window bound by a BIND_MW work request: what was asked (the completion says whether it held)
  for (const SendWrIn& in : wrs)
    if (in.opcode == IBV_WR_BIND_MW)
      if (auto* mw = find(mws_, in.mw)) { mw->mr = in.bind_mr; mw->qp = qp; mw->addr = in.bind_addr; mw->length = in.bind_length; mw->access = in.bind_access; }
  return okst();
}

Status RealDevice::post_recv(uint32_t qp, const std::vector<RecvWrIn>& wrs, size_t& bad) {
  auto* q = find(qps_, qp);
  if (!q) return {ENOENT, "no QP with handle " + h(qp)};
  if (wrs.empty()) return okst();
  auto chain = recv_chain(wrs);
  ibv_recv_wr* b = nullptr;
  if (int e = ctx_->ops.post_recv(q->qp, chain.data(), &b)) { bad = bad_index(chain, b); return errno_status("ibv_post_recv", e); }
  return okst();
}

}  // namespace vl::ibverbs
