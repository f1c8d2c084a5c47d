// Verbs objects: PD, MR, MW, completion channel, CQ, SRQ, QP. Each wraps one object of the software device; errors
// follow rdma-core (int verbs return an errno value, pointer verbs return NULL and set errno).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "lib.h"
#include "qp_attr.h"

using namespace vlib;

namespace {

vl::Handle pd_h(ibv_pd* pd) { return reinterpret_cast<Pd*>(pd)->h; }
vl::Handle cq_h(ibv_cq* cq) { return cq ? reinterpret_cast<Cq*>(cq)->h : 0; }
vl::Handle srq_h(ibv_srq* s) { return s ? reinterpret_cast<Srq*>(s)->h : 0; }
vl::Handle qp_h(ibv_qp* q) { return reinterpret_cast<Qp*>(q)->h; }

template <class T> T* fail_null(int e) { errno = e; return nullptr; }

// ib_umem_get pins the pages and fails with EFAULT where the range is not mapped; mincore says the same.
bool mapped(const void* addr, size_t len) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t a = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
  uintptr_t end = reinterpret_cast<uintptr_t>(addr) + len;
  if (end < a) return false;
  std::vector<unsigned char> v((end - a + page - 1) / page);
  return mincore(reinterpret_cast<void*>(a), end - a, v.data()) == 0;
}

}  // namespace

void vlib::fill_ops(Context& c) {
  ibv_context_ops& o = c.vctx.context.ops;
  o.alloc_mw = op_alloc_mw;
  o.bind_mw = op_bind_mw;
  o.dealloc_mw = op_dealloc_mw;
  o.poll_cq = op_poll_cq;
  o.req_notify_cq = op_req_notify_cq;
  o.post_srq_recv = op_post_srq_recv;
  o.post_send = op_post_send;
  o.post_recv = op_post_recv;
  c.vctx.query_port = op_query_port;
  c.vctx.query_device_ex = op_query_device_ex;
}

// ---------------------------------------------------------------- PD
VL_EXPORT ibv_pd* ibv_alloc_pd(ibv_context* ctx) {
  auto r = g().s->alloc_pd(g().dev);
  if (!r.ok()) return fail_null<ibv_pd>(err_of(r));
  auto* p = new Pd{};
  p->pd.context = ctx;
  p->pd.handle = r.value;
  p->h = r.value;
  return &p->pd;
}

VL_EXPORT int ibv_dealloc_pd(ibv_pd* pd) {
  auto st = g().s->dealloc_pd(pd_h(pd));
  if (!st.ok()) return err_of(st);
  delete reinterpret_cast<Pd*>(pd);
  return 0;
}

// ---------------------------------------------------------------- MR
VL_EXPORT ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned int access) {
  if (!pd) return fail_null<ibv_mr>(EINVAL);
  if (access & IBV_ACCESS_ON_DEMAND) return fail_null<ibv_mr>(EOPNOTSUPP);    // no ODP (page faults) here
  access &= ~(unsigned(IBV_ACCESS_HUGETLB) | unsigned(IBV_ACCESS_OPTIONAL_RANGE));                // hints only
  if (!length || !mapped(addr, length)) return fail_null<ibv_mr>(length ? EFAULT : EINVAL);
  auto r = g().s->reg_mr(pd_h(pd), reinterpret_cast<uint64_t>(addr), length, access, iova);
  if (!r.ok()) return fail_null<ibv_mr>(err_of(r));
  auto* m = new Mr{};
  m->mr.context = pd->context;
  m->mr.pd = pd;
  m->mr.addr = addr;
  m->mr.length = length;
  m->mr.handle = r.value.handle;
  m->mr.lkey = r.value.lkey;
  m->mr.rkey = r.value.rkey;
  m->h = r.value.handle;
  return &m->mr;
}

#undef ibv_reg_mr
#undef ibv_reg_mr_iova
VL_EXPORT ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  return ibv_reg_mr_iova2(pd, addr, length, reinterpret_cast<uint64_t>(addr), static_cast<unsigned>(access));
}
VL_EXPORT ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
  return ibv_reg_mr_iova2(pd, addr, length, iova, static_cast<unsigned>(access));
}

VL_EXPORT int ibv_dereg_mr(ibv_mr* mr) {
  auto st = g().s->dereg_mr(reinterpret_cast<Mr*>(mr)->h);
  if (!st.ok()) return err_of(st);
  delete reinterpret_cast<Mr*>(mr);
  return 0;
}

// ibv_rereg_mr: IBV_REREG_MR_CHANGE_TRANSLATION = 1, CHANGE_PD = 2, CHANGE_ACCESS = 4 (the session's flags).
VL_EXPORT int ibv_rereg_mr(ibv_mr* mr, int flags, ibv_pd* pd, void* addr, size_t length, int access) {
  Mr* m = reinterpret_cast<Mr*>(mr);
  if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && !mapped(addr, length)) return IBV_REREG_MR_ERR_INPUT;
  auto r = g().s->rereg_mr(m->h, static_cast<uint32_t>(flags), (flags & IBV_REREG_MR_CHANGE_PD) ? pd_h(pd) : 0,
                           reinterpret_cast<uint64_t>(addr), length, static_cast<uint32_t>(access));
  if (!r.ok()) { errno = err_of(r); return IBV_REREG_MR_ERR_INPUT; }
  if (flags & IBV_REREG_MR_CHANGE_PD) mr->pd = pd;
  if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) { mr->addr = addr; mr->length = length; }
  mr->lkey = r.value.lkey;
  mr->rkey = r.value.rkey;
  return 0;
}

// ---------------------------------------------------------------- MW (context ops)
ibv_mw* vlib::op_alloc_mw(ibv_pd* pd, ibv_mw_type type) {
  auto r = g().s->alloc_mw(pd_h(pd), static_cast<uint32_t>(type));
  if (!r.ok()) return fail_null<ibv_mw>(err_of(r));
  auto* w = new Mw{};
  w->mw.context = pd->context;
  w->mw.pd = pd;
  w->mw.rkey = r.value.rkey;
  w->mw.handle = r.value.handle;
  w->mw.type = type;
  w->h = r.value.handle;
  return &w->mw;
}

int vlib::op_bind_mw(ibv_qp* qp, ibv_mw* mw, ibv_mw_bind* b) {
  if (!qp || !mw || !b) return EINVAL;
  vl::Handle mrh = b->bind_info.mr ? reinterpret_cast<Mr*>(b->bind_info.mr)->h : 0;
  auto lk = lock();
  auto r = g().s->bind_mw(qp_h(qp), reinterpret_cast<Mw*>(mw)->h, b->wr_id, b->send_flags, mrh, b->bind_info.addr,
                          b->bind_info.length, b->bind_info.mw_access_flags);
  if (!r.ok()) return err_of(r);
  mw->rkey = r.value;
  kick();
  return 0;
}

int vlib::op_dealloc_mw(ibv_mw* mw) {
  auto st = g().s->dealloc_mw(reinterpret_cast<Mw*>(mw)->h);
  if (!st.ok()) return err_of(st);
  delete reinterpret_cast<Mw*>(mw);
  return 0;
}

// ---------------------------------------------------------------- completion channel, CQ
VL_EXPORT ibv_comp_channel* ibv_create_comp_channel(ibv_context* ctx) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return nullptr;
  fcntl(fds[1], F_SETFL, O_NONBLOCK);
  auto* c = new CompChannel{};
  c->ch.context = ctx;
  c->ch.fd = fds[0];
  c->ch.refcnt = 0;
  c->wfd = fds[1];
  return &c->ch;
}

VL_EXPORT int ibv_destroy_comp_channel(ibv_comp_channel* ch) {
  if (ch->refcnt) return EBUSY;                // CQs still use it (verbs.c)
  auto* c = reinterpret_cast<CompChannel*>(ch);
  close(c->ch.fd);
  close(c->wfd);
  delete c;
  return 0;
}

VL_EXPORT ibv_cq* ibv_create_cq(ibv_context* ctx, int cqe, void* cq_context, ibv_comp_channel* ch, int comp_vector) {
  if (cqe < 1 || comp_vector < 0 || comp_vector >= ctx->num_comp_vectors) return fail_null<ibv_cq>(EINVAL);
  auto r = g().s->create_cq(g().dev, static_cast<uint32_t>(cqe), ch != nullptr);
  if (!r.ok()) return fail_null<ibv_cq>(err_of(r));
  auto* c = new Cq{};
  c->cq.context = ctx;
  c->cq.channel = ch;
  c->cq.cq_context = cq_context;
  c->cq.handle = r.value;
  c->cq.cqe = cqe;
  pthread_mutex_init(&c->cq.mutex, nullptr);
  pthread_cond_init(&c->cq.cond, nullptr);
  c->h = r.value;
  c->ch = reinterpret_cast<CompChannel*>(ch);
  if (ch) ch->refcnt++;
  std::lock_guard<std::mutex> lk(g().mu);
  g().cqs[c->h] = c;
  return &c->cq;
}

VL_EXPORT int ibv_destroy_cq(ibv_cq* cq) {
  Cq* c = reinterpret_cast<Cq*>(cq);
  auto lk = lock();                            // no completion event can be handed out while it goes
  auto st = g().s->destroy_cq(c->h);
  if (!st.ok()) return err_of(st);
  {
    std::lock_guard<std::mutex> l2(g().mu);
    g().cqs.erase(c->h);
  }
  if (c->ch) c->ch->ch.refcnt--;
  pthread_mutex_destroy(&cq->mutex);
  pthread_cond_destroy(&cq->cond);
  delete c;
  return 0;
}

VL_EXPORT int ibv_resize_cq(ibv_cq* cq, int cqe) { return EOPNOTSUPP; }   // not built in the device

VL_EXPORT int ibv_get_cq_event(ibv_comp_channel* ch, ibv_cq** cq, void** cq_context) {
  Cq* c = nullptr;
  ssize_t n = read(ch->fd, &c, sizeof c);
  if (n != static_cast<ssize_t>(sizeof c)) return -1;   // errno from read (EAGAIN on a non-blocking channel)
  *cq = &c->cq;
  *cq_context = c->cq.cq_context;
  return 0;
}

VL_EXPORT void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  g().s->ack_cq_events(reinterpret_cast<Cq*>(cq)->h, nevents);
  pthread_mutex_lock(&cq->mutex);
  cq->comp_events_completed += nevents;
  pthread_cond_signal(&cq->cond);
  pthread_mutex_unlock(&cq->mutex);
}

// ---------------------------------------------------------------- async events
// The context's async_fd is a pipe carrying struct ibv_async_event (progress.cpp, send_async): poll works,
// ibv_get_async_event blocks unless the program made the fd non-blocking (then -1, EAGAIN).
VL_EXPORT int ibv_get_async_event(ibv_context* ctx, ibv_async_event* ev) {
  ssize_t n = read(ctx->async_fd, ev, sizeof *ev);
  return n == static_cast<ssize_t>(sizeof *ev) ? 0 : -1;
}
VL_EXPORT void ibv_ack_async_event(ibv_async_event* ev) {}

// ---------------------------------------------------------------- SRQ
VL_EXPORT ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* a) {
  auto r = g().s->create_srq(pd_h(pd), a->attr.max_wr, a->attr.max_sge, a->attr.srq_limit);
  if (!r.ok()) return fail_null<ibv_srq>(err_of(r));
  auto* s = new Srq{};
  {
    auto lk = lock();
    vl::Srq* d = g().S->srq(r.value);
    s->max_wr = d ? d->max_wr : a->attr.max_wr;
    s->max_sge = d ? d->max_sge : a->attr.max_sge;
  }
  s->srq.context = pd->context;
  s->srq.srq_context = a->srq_context;
  s->srq.pd = pd;
  s->srq.handle = r.value;
  pthread_mutex_init(&s->srq.mutex, nullptr);
  pthread_cond_init(&s->srq.cond, nullptr);
  s->h = r.value;
  std::lock_guard<std::mutex> lk(g().mu);
  g().srqs[s->h] = s;
  return &s->srq;
}

VL_EXPORT int ibv_modify_srq(ibv_srq* srq, ibv_srq_attr* a, int mask) {
  if (mask & IBV_SRQ_MAX_WR) return EOPNOTSUPP;   // resizing an SRQ is not built in the device
  if (!(mask & IBV_SRQ_LIMIT)) return mask ? EINVAL : 0;
  auto st = g().s->modify_srq(srq_h(srq), a->srq_limit);
  return st.ok() ? 0 : err_of(st);
}

VL_EXPORT int ibv_query_srq(ibv_srq* srq, ibv_srq_attr* a) {
  auto lk = lock();
  vl::Srq* s = g().S->srq(srq_h(srq));
  if (!s) return EINVAL;
  a->max_wr = s->max_wr;
  a->max_sge = s->max_sge;
  a->srq_limit = s->limit;
  return 0;
}

VL_EXPORT int ibv_destroy_srq(ibv_srq* srq) {
  auto lk = lock();
  auto st = g().s->destroy_srq(srq_h(srq));
  if (!st.ok()) return err_of(st);
  {
    std::lock_guard<std::mutex> l2(g().mu);
    g().srqs.erase(srq_h(srq));
  }
  pthread_mutex_destroy(&srq->mutex);
  pthread_cond_destroy(&srq->cond);
  delete reinterpret_cast<Srq*>(srq);
  return 0;
}

// ---------------------------------------------------------------- QP
VL_EXPORT ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* a) {
  if (!pd || !a) return fail_null<ibv_qp>(EINVAL);
  if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC && a->qp_type != IBV_QPT_UD)
    return fail_null<ibv_qp>(EOPNOTSUPP);      // RAW_PACKET, XRC, DRIVER: not types of this device
  vl::QpInitAttr ia;
  ia.pd = pd_h(pd);
  ia.send_cq = cq_h(a->send_cq);
  ia.recv_cq = cq_h(a->recv_cq);
  ia.srq = srq_h(a->srq);
  ia.qp_type = a->qp_type;
  ia.sq_sig_all = a->sq_sig_all != 0;
  ia.cap.max_send_wr = a->cap.max_send_wr;
  ia.cap.max_recv_wr = a->cap.max_recv_wr;
  ia.cap.max_send_sge = a->cap.max_send_sge;
  ia.cap.max_recv_sge = a->cap.max_recv_sge;
  ia.cap.max_inline_data = a->cap.max_inline_data;
  auto r = g().s->create_qp(pd_h(pd), ia);
  if (!r.ok()) return fail_null<ibv_qp>(err_of(r));
  auto* q = new Qp{};
  ibv_qp& qp = q->qp;
  qp.context = pd->context;
  qp.qp_context = a->qp_context;
  qp.pd = pd;
  qp.send_cq = a->send_cq;
  qp.recv_cq = a->recv_cq;
  qp.srq = a->srq;
  qp.handle = r.value.handle;
  qp.qp_num = r.value.qp_num;
  qp.state = IBV_QPS_RESET;
  qp.qp_type = a->qp_type;
  pthread_mutex_init(&qp.mutex, nullptr);
  pthread_cond_init(&qp.cond, nullptr);
  q->h = r.value.handle;
  const vl::QpCap& cap = r.value.init.cap;     // what the device gave (rdma-core writes it back)
  a->cap.max_send_wr = cap.max_send_wr;
  a->cap.max_recv_wr = cap.max_recv_wr;
  a->cap.max_send_sge = cap.max_send_sge;
  a->cap.max_recv_sge = cap.max_recv_sge;
  a->cap.max_inline_data = cap.max_inline_data;
  q->max_send_wr = cap.max_send_wr;
  q->max_recv_wr = cap.max_recv_wr;
  q->max_send_sge = cap.max_send_sge;
  q->max_recv_sge = cap.max_recv_sge;
  q->max_inline_data = cap.max_inline_data;
  std::lock_guard<std::mutex> lk(g().mu);
  g().qps[q->h] = q;
  return &qp;
}

// Only the send-ops API's QPs (IBV_QP_INIT_ATTR_SEND_OPS_FLAGS through ibv_create_qp_ex) have an ibv_qp_ex; that
// API is not built, so there are none (rdma-core returns NULL for such a QP too).
VL_EXPORT ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp* qp) { return nullptr; }

VL_EXPORT int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* a, int mask) {
  vl::QpAttr v;
  v.qp_state = a->qp_state;
  v.cur_qp_state = a->cur_qp_state;
  v.path_mtu = a->path_mtu;
  v.qp_access_flags = a->qp_access_flags;
  v.qkey = a->qkey;
  v.rq_psn = a->rq_psn;
  v.sq_psn = a->sq_psn;
  v.dest_qp_num = a->dest_qp_num;
  v.pkey_index = a->pkey_index;
  v.port_num = a->port_num;
  v.max_rd_atomic = a->max_rd_atomic;
  v.max_dest_rd_atomic = a->max_dest_rd_atomic;
  v.min_rnr_timer = a->min_rnr_timer;
  v.timeout = a->timeout;
  v.retry_cnt = a->retry_cnt;
  v.rnr_retry = a->rnr_retry;
  if (mask & IBV_QP_AV) {                      // RoCE: the GRH names the remote host (dest_device 0 = the network)
    std::memcpy(v.dgid, a->ah_attr.grh.dgid.raw, 16);
    v.sgid_index = a->ah_attr.grh.sgid_index;
    v.dest_device = 0;
  }
  auto st = g().s->modify_qp(qp_h(qp), v, static_cast<uint32_t>(mask));
  if (!st.ok()) return err_of(st);
  if (mask & IBV_QP_STATE) qp->state = a->qp_state;
  return 0;
}

VL_EXPORT int ibv_query_qp(ibv_qp* qp, ibv_qp_attr* a, int mask, ibv_qp_init_attr* ia) {
  auto i = g().s->query_qp(qp_h(qp));
  if (!i) return EINVAL;
  const vl::QpAttr& v = i->attr;
  to_ibv_qp_attr(v, *a);
  a->ah_attr.port_num = 1;
  const vl::QpCap& c = i->init.cap;
  a->cap.max_send_wr = c.max_send_wr;
  a->cap.max_recv_wr = c.max_recv_wr;
  a->cap.max_send_sge = c.max_send_sge;
  a->cap.max_recv_sge = c.max_recv_sge;
  a->cap.max_inline_data = c.max_inline_data;
  if (ia) {
    std::memset(ia, 0, sizeof *ia);
    ia->qp_context = qp->qp_context;
    ia->send_cq = qp->send_cq;
    ia->recv_cq = qp->recv_cq;
    ia->srq = qp->srq;
    ia->cap = a->cap;
    ia->qp_type = qp->qp_type;
    ia->sq_sig_all = i->init.sq_sig_all;
  }
  qp->state = a->qp_state;
  return 0;
}

VL_EXPORT int ibv_destroy_qp(ibv_qp* qp) {
  auto lk = lock();
  auto st = g().s->destroy_qp(qp_h(qp));
  if (!st.ok()) return err_of(st);
  {
    std::lock_guard<std::mutex> l2(g().mu);
    g().qps.erase(qp_h(qp));
  }
  pthread_mutex_destroy(&qp->mutex);
  pthread_cond_destroy(&qp->cond);
  delete reinterpret_cast<Qp*>(qp);
  return 0;
}

// ---------------------------------------------------------------- address handles
// RoCE: an AH names the remote host by the GID in its GRH (Session::create_ah_remote); UD sends through it leave
// from the socket of sgid_index. Without is_global there is no address to send to: EINVAL, as rxe.
VL_EXPORT ibv_ah* ibv_create_ah(ibv_pd* pd, ibv_ah_attr* attr) {
  if (!pd || !attr || !attr->is_global) return fail_null<ibv_ah>(EINVAL);
  if (attr->port_num != 1) return fail_null<ibv_ah>(EINVAL);
  auto r = g().s->create_ah_remote(pd_h(pd), attr->grh.dgid.raw, attr->grh.sgid_index);
  if (!r.ok()) return fail_null<ibv_ah>(err_of(r));
  auto* a = new Ah{};
  a->ah.context = pd->context;
  a->ah.pd = pd;
  a->ah.handle = r.value;
  a->h = r.value;
  return &a->ah;
}

VL_EXPORT int ibv_destroy_ah(ibv_ah* ah) {
  auto st = g().s->destroy_ah(reinterpret_cast<Ah*>(ah)->h);
  if (!st.ok()) return err_of(st);
  delete reinterpret_cast<Ah*>(ah);
  return 0;
}

// The reply address of a UD receive: the GRH slot of the receive buffer holds the datagram's IP header (IPv4 in its
// last 20 bytes, as rxe writes it, or IPv6 in all 40); its source is the remote GID, its destination our sgid
// (verbs.c ibv_init_ah_from_wc, the RoCE v2 case).
VL_EXPORT int ibv_init_ah_from_wc(ibv_context* ctx, uint8_t port, ibv_wc* wc, ibv_grh* grh, ibv_ah_attr* attr) {
  if (!ctx || !wc || !grh || !attr || port != 1 || !(wc->wc_flags & IBV_WC_GRH)) { errno = EINVAL; return -1; }
  const uint8_t* b = reinterpret_cast<const uint8_t*>(grh);
  uint8_t sgid[16] = {}, dgid[16] = {};
  if ((b[0] >> 4) == 6) {
    std::memcpy(sgid, b + 8, 16);
    std::memcpy(dgid, b + 24, 16);
  } else {
    const uint8_t* ip = b + 20;
    if ((ip[0] >> 4) != 4) { errno = EINVAL; return -1; }
    sgid[10] = sgid[11] = 0xff; std::memcpy(sgid + 12, ip + 12, 4);
    dgid[10] = dgid[11] = 0xff; std::memcpy(dgid + 12, ip + 16, 4);
  }
  int index = -1;
  {
    auto lk = lock();
    for (auto& d : g().s->devices())
      if (d.handle == g().dev)
        for (auto& e : d.gids) if (!std::memcmp(e.gid, dgid, 16)) index = static_cast<int>(e.index);
  }
  if (index < 0) { errno = ENOENT; return -1; }
  std::memset(attr, 0, sizeof *attr);
  attr->is_global = 1;
  std::memcpy(attr->grh.dgid.raw, sgid, 16);
  attr->grh.sgid_index = static_cast<uint8_t>(index);
  attr->grh.hop_limit = 0xff;
  attr->sl = wc->sl;
  attr->port_num = port;
  return 0;
}

VL_EXPORT ibv_ah* ibv_create_ah_from_wc(ibv_pd* pd, ibv_wc* wc, ibv_grh* grh, uint8_t port) {
  ibv_ah_attr attr;
  if (ibv_init_ah_from_wc(pd->context, port, wc, grh, &attr)) return nullptr;
  return ibv_create_ah(pd, &attr);
}
