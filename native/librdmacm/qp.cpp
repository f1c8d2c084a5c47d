// QPs, SRQs and endpoints of an ID: rdma_create_qp (with the CQs rdma-core makes when none are given),
// rdma_destroy_qp, rdma_create_srq, rdma_create_ep / destroy_ep, rdma_get_request (rdma-core librdmacm/cma.c).
// A QP made here is handed to the device's CM (cm_set_qp), which moves it INIT -> RTR -> RTS during the exchange,
// as the kernel's rdma_cm does for its QPs; a UD QP goes to RTS at once (ucma_init_ud_qp).
#include <cstring>

#include "lib.h"

namespace vcm {

int modify_qp_err(Id* id) {                    // ucma_modify_qp_err
  if (!id->id.qp) return 0;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_ERR;
  int e = ibv_modify_qp(id->id.qp, &a, IBV_QP_STATE);
  return e ? fail(e) : 0;
}

static void destroy_cqs(rdma_cm_id* id) {      // ucma_destroy_cqs
  if (id->recv_cq) {
    ibv_destroy_cq(id->recv_cq);
    if (id->send_cq && id->send_cq != id->recv_cq) ibv_destroy_cq(id->send_cq);
    id->recv_cq = id->send_cq = nullptr;
  }
  if (id->recv_cq_channel) {
    ibv_destroy_comp_channel(id->recv_cq_channel);
    if (id->send_cq_channel && id->send_cq_channel != id->recv_cq_channel) ibv_destroy_comp_channel(id->send_cq_channel);
    id->recv_cq_channel = id->send_cq_channel = nullptr;
  }
}

// ucma_create_cqs: a completion channel and a CQ for each direction the program gave no CQ for
static int create_cqs(rdma_cm_id* id, uint32_t send_size, uint32_t recv_size) {
  auto make = [&](uint32_t n, ibv_comp_channel*& ch, ibv_cq*& cq) {
    ch = ibv_create_comp_channel(id->verbs);
    if (!ch) return false;
    cq = ibv_create_cq(id->verbs, static_cast<int>(n), id, ch, 0);
    return cq != nullptr;
  };
  if (recv_size && !make(recv_size, id->recv_cq_channel, id->recv_cq)) { destroy_cqs(id); return -1; }
  if (send_size && !make(send_size, id->send_cq_channel, id->send_cq)) { destroy_cqs(id); return -1; }
  return 0;
}

// ucma_init_ud_qp's last two steps, when the CM left the QP in INIT: RTR, then RTS with SQ PSN 0
static int ud_to_rts(ibv_qp* qp) {
  ibv_qp_attr a{};
  ibv_qp_init_attr ia{};
  if (int e = ibv_query_qp(qp, &a, IBV_QP_STATE, &ia)) return fail(e);
  if (a.qp_state == IBV_QPS_RTS) return 0;
  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_RTR;
  if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE)) return fail(e);
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0;
  if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) return fail(e);
  return 0;
}

}  // namespace vcm

using namespace vcm;

VL_EXPORT int rdma_create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr* attr) {
  if (!id || !attr || id->qp) return fail(EINVAL);
  if (!pd) pd = id->pd;
  if (!pd || !id->verbs || pd->context != id->verbs) return fail(EINVAL);
  if ((id->recv_cq && attr->recv_cq && id->recv_cq != attr->recv_cq) ||
      (id->send_cq && attr->send_cq && id->send_cq != attr->send_cq))
    return fail(EINVAL);
  if (create_cqs(id, attr->send_cq || id->send_cq ? 0 : attr->cap.max_send_wr,
                 attr->recv_cq || id->recv_cq ? 0 : attr->cap.max_recv_wr))
    return -1;
  if (!attr->send_cq) attr->send_cq = id->send_cq;
  if (!attr->recv_cq) attr->recv_cq = id->recv_cq;
  if (id->srq && !attr->srq) attr->srq = id->srq;
  ibv_qp* qp = ibv_create_qp(pd, attr);
  if (!qp) { int e = errno; destroy_cqs(id); return fail(e); }
  Global& G = g();
  auto st = G.s->cm_set_qp(reinterpret_cast<Id*>(id)->h, G.abi->qp_handle(qp));
  int ret = st.ok() ? 0 : fail_status(st);
  if (!ret && qp->qp_type == IBV_QPT_UD) ret = ud_to_rts(qp);
  if (ret) {
    int e = errno;
    ibv_destroy_qp(qp);
    destroy_cqs(id);
    return fail(e);
  }
  id->pd = qp->pd;
  id->qp = qp;
  return 0;
}

// Only what ibv_create_qp takes: the extended QP (send ops, XRC, ...) is not built in libibverbs either
VL_EXPORT int rdma_create_qp_ex(rdma_cm_id* id, ibv_qp_init_attr_ex* attr) {
  if (!id || !attr) return fail(EINVAL);
  if (attr->comp_mask & ~uint32_t(IBV_QP_INIT_ATTR_PD)) return fail(EOPNOTSUPP);
  ibv_qp_init_attr a{};
  std::memcpy(&a, attr, sizeof a);             // ibv_qp_init_attr_ex starts with ibv_qp_init_attr's fields
  int ret = rdma_create_qp(id, (attr->comp_mask & IBV_QP_INIT_ATTR_PD) ? attr->pd : nullptr, &a);
  std::memcpy(attr, &a, sizeof a);
  return ret;
}

VL_EXPORT void rdma_destroy_qp(rdma_cm_id* id) {
  ibv_destroy_qp(id->qp);
  id->qp = nullptr;
  destroy_cqs(id);
}

VL_EXPORT int rdma_create_srq(rdma_cm_id* id, ibv_pd* pd, ibv_srq_init_attr* attr) {
  if (!id || !attr) return fail(EINVAL);
  if (!pd) pd = id->pd;
  if (!pd) return fail(EINVAL);
  ibv_srq* srq = ibv_create_srq(pd, attr);
  if (!srq) return -1;
  id->srq = srq;
  id->pd = pd;
  return 0;
}

VL_EXPORT int rdma_create_srq_ex(rdma_cm_id* id, ibv_srq_init_attr_ex* attr) {
  if (!id || !attr || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)) return fail(EINVAL);
  if (attr->srq_type != IBV_SRQT_BASIC || (attr->comp_mask & ~uint32_t(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD)))
    return fail(EOPNOTSUPP);                   // XRC / tag matching SRQs: not types of this device
  ibv_srq_init_attr a{};
  a.srq_context = attr->srq_context;
  a.attr = attr->attr;
  int ret = rdma_create_srq(id, (attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) ? attr->pd : nullptr, &a);
  attr->attr = a.attr;
  return ret;
}

VL_EXPORT void rdma_destroy_srq(rdma_cm_id* id) {
  ibv_destroy_srq(id->srq);
  id->srq = nullptr;
}

// rdma_get_request: a sync listener's next connection request, with the QP rdma_create_ep asked for
VL_EXPORT int rdma_get_request(rdma_cm_id* listen, rdma_cm_id** out) {
  if (!listen || !out) return fail(EINVAL);
  Id* l = reinterpret_cast<Id*>(listen);
  if (!l->sync) return fail(EINVAL);
  if (listen->event) { rdma_ack_cm_event(listen->event); listen->event = nullptr; }
  rdma_cm_event* ev;
  if (rdma_get_cm_event(listen->channel, &ev)) return -1;
  int ret = 0;
  if (ev->event == RDMA_CM_EVENT_REJECTED) ret = fail(ECONNREFUSED);
  else if (ev->status) ret = fail(ev->status < 0 ? -ev->status : ev->status);
  else if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) ret = fail(EINVAL);
  else if (l->qp_init_attr) {
    ibv_qp_init_attr a = *l->qp_init_attr;
    ret = rdma_create_qp(ev->id, listen->pd, &a);
  }
  if (ret) { listen->event = ev; return ret; }
  *out = ev->id;
  (*out)->event = ev;
  return 0;
}

VL_EXPORT int rdma_create_ep(rdma_cm_id** out, rdma_addrinfo* res, ibv_pd* pd, ibv_qp_init_attr* qp_init_attr) {
  if (!out || !res) return fail(EINVAL);
  rdma_cm_id* cm_id;
  // rdma_create_id2: the port space and QP type of the address info
  if (create_id(nullptr, &cm_id, nullptr, static_cast<rdma_port_space>(res->ai_port_space),
                static_cast<ibv_qp_type>(res->ai_qp_type)))
    return -1;
  Id* id = reinterpret_cast<Id*>(cm_id);
  int ret = 0;
  if (res->ai_flags & RAI_PASSIVE) {           // ucma_passive_ep
    ret = rdma_bind_addr(cm_id, res->ai_src_addr);
    if (!ret && pd) cm_id->pd = pd;
    if (!ret && qp_init_attr) {
      id->qp_init_attr = new ibv_qp_init_attr(*qp_init_attr);
      id->qp_init_attr->qp_type = static_cast<ibv_qp_type>(res->ai_qp_type);
    }
  } else {
    ret = rdma_resolve_addr(cm_id, res->ai_src_addr, res->ai_dst_addr, 2000);
    if (!ret) ret = res->ai_route_len ? fail(ENOSYS) : rdma_resolve_route(cm_id, 2000);   // IB path records: no
    if (!ret && qp_init_attr) {
      qp_init_attr->qp_type = static_cast<ibv_qp_type>(res->ai_qp_type);
      ret = rdma_create_qp(cm_id, pd, qp_init_attr);
    }
    if (!ret && res->ai_connect_len) {
      auto* b = static_cast<const uint8_t*>(res->ai_connect);
      id->connect.assign(b, b + res->ai_connect_len);
    }
  }
  if (ret) {
    int e = errno;
    rdma_destroy_ep(cm_id);
    return fail(e);
  }
  *out = cm_id;
  return 0;
}

VL_EXPORT void rdma_destroy_ep(rdma_cm_id* id) {
  if (id->qp) rdma_destroy_qp(id);
  if (id->srq) rdma_destroy_srq(id);
  rdma_destroy_id(id);
}
