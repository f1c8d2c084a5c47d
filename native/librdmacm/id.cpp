// CM IDs and the connection calls: rdma_create_id / destroy_id, bind, resolve addr / route, listen, connect, accept,
// reject, disconnect, establish, notify, init_qp_attr, set_option, ports (rdma-core librdmacm/cma.c; each call goes
// to the device's CM, vl/cm.h, instead of a write() to rdma_ucm).
#include <arpa/inet.h>
#include <unistd.h>

#include <cstring>

#include "lib.h"
#include "../libibverbs/qp_attr.h"

namespace vcm {

Id* new_id(rdma_event_channel* ch, void* context, rdma_port_space ps, ibv_qp_type qpt) {
  auto* id = new Id{};
  id->id.context = context;
  id->id.ps = ps;
  id->id.qp_type = qpt;
  if (!ch) {                                   // ucma_alloc_id: a channel of its own, calls wait (sync)
    int err = 0;
    Channel* c = new_channel(&err);
    if (!c) { delete id; errno = err; return nullptr; }
    ch = &c->ch;
    id->sync = true;
  }
  id->id.channel = ch;
  return id;
}

void free_id(Id* id) {
  if (id->sync) rdma_destroy_event_channel(id->id.channel);
  free(id->id.route.path_rec);
  delete id->qp_init_attr;
  delete id;
}

static Id* priv(rdma_cm_id* id) { return reinterpret_cast<Id*>(id); }

int create_id(rdma_event_channel* ch, rdma_cm_id** out, void* context, rdma_port_space ps, ibv_qp_type qpt) {
  Global& G = g();
  if (init()) return -1;
  if (!out) return fail(EINVAL);
  Id* id = new_id(ch, context, ps, qpt);
  if (!id) return -1;
  auto r = G.s->cm_create_id(G.abi->dev, static_cast<uint32_t>(ps), static_cast<uint32_t>(qpt));
  if (!r.ok()) { free_id(id); return fail_status(r); }
  id->h = r.value;
  {
    std::lock_guard<std::mutex> lk(G.mu);
    G.ids[id->h] = id;
  }
  *out = &id->id;
  return 0;
}

// ucma_valid_param: the TCP port space needs a QP or the QP number in the parameters, and depths the device has
static int valid_param(Id* id, const rdma_conn_param* p) {
  if (id->id.ps != RDMA_PS_TCP) return 0;
  if (!id->id.qp && !p) return fail(EINVAL);
  if (!p) return 0;
  if (p->responder_resources != RDMA_MAX_RESP_RES && p->responder_resources > g().max_responder_resources) return fail(EINVAL);
  if (p->initiator_depth != RDMA_MAX_INIT_DEPTH && p->initiator_depth > g().max_initiator_depth) return fail(EINVAL);
  return 0;
}

// ucma_copy_conn_param_to_kern
static vl::CmConnParam to_cm_param(Id* id, const rdma_conn_param* p, uint32_t qp_num, uint8_t srq) {
  vl::CmConnParam c;
  c.qp_num = qp_num;
  c.srq = srq;
  c.responder_resources = id->responder_resources;
  c.initiator_depth = id->initiator_depth;
  c.private_data = id->connect;
  if (p) {
    c.flow_control = p->flow_control;
    c.retry_count = p->retry_count;
    c.rnr_retry_count = p->rnr_retry_count;
    if (p->private_data && p->private_data_len) {
      auto* b = static_cast<const uint8_t*>(p->private_data);
      c.private_data.insert(c.private_data.end(), b, b + p->private_data_len);
    }
  } else {
    c.retry_count = 7;
    c.rnr_retry_count = 7;
  }
  return c;
}

}  // namespace vcm

using namespace vcm;

VL_EXPORT int rdma_create_id(rdma_event_channel* ch, rdma_cm_id** id, void* context, rdma_port_space ps) {
  // rdma_create_id: the UDP and IPoIB port spaces are datagram (UD), the others connected (RC)
  ibv_qp_type qpt = (ps == RDMA_PS_IPOIB || ps == RDMA_PS_UDP) ? IBV_QPT_UD : IBV_QPT_RC;
  return create_id(ch, id, context, ps, qpt);
}

VL_EXPORT int rdma_destroy_id(rdma_cm_id* cm_id) {
  if (!cm_id) return fail(EINVAL);
  Global& G = g();
  Id* id = priv(cm_id);
  std::vector<Pending> dropped;
  std::vector<Id*> children;
  {
    std::lock_guard<std::mutex> lk(G.mu);
    id->destroying = true;
    G.ids.erase(id->h);
    dropped = take_events(id);                 // events it was never given (rdma_ucm drops them too)
    for (auto& p : dropped) {                  // ... and the IDs of the requests among them
      if (p.ev.event != vl::CM_EVENT_CONNECT_REQUEST) continue;
      auto it = G.ids.find(p.ev.id);
      if (it != G.ids.end()) { children.push_back(it->second); G.ids.erase(it); }
    }
  }
  auto st = G.s->cm_destroy_id(id->h);
  for (Id* c : children) { G.s->cm_destroy_id(c->h); free_id(c); }
  progress();
  if (!st.ok() && st.err != ENOENT) return fail_status(st);
  if (id->id.event) { rdma_ack_cm_event(id->id.event); id->id.event = nullptr; }
  {
    std::unique_lock<std::mutex> lk(id->mu);   // rdma-core: until every event it got is acknowledged
    id->cv.wait(lk, [&] { return id->events_completed >= id->events_reported; });
  }
  free_id(id);
  return 0;
}

VL_EXPORT int rdma_bind_addr(rdma_cm_id* cm_id, sockaddr* addr) {
  if (!cm_id || !addr_len(addr)) return fail(EINVAL);
  Id* id = priv(cm_id);
  vl::CmAddr a;
  to_cm_addr(addr, a);
  if (attach_for(addr)) return -1;
  auto st = g().s->cm_bind_addr(id->h, a);
  if (!st.ok()) return fail_status(st);
  return query_route(id);
}

VL_EXPORT int rdma_resolve_addr(rdma_cm_id* cm_id, sockaddr* src, sockaddr* dst, int timeout_ms) {
  if (!cm_id) return fail(EINVAL);
  socklen_t dst_len = addr_len(dst), src_len = addr_len(src);
  if (!dst_len || (src && !src_len)) return fail(EINVAL);
  Id* id = priv(cm_id);
  vl::CmAddr s, d;
  to_cm_addr(dst, d);
  if (src) to_cm_addr(src, s);
  // the device not on the network yet: at the source given, or at ::1 to reach ::1 (loopback has no other IPv6
  // address; two programs on ::1 need their own UDP ports, docs/librdmacm.md), else at its default address
  static const uint8_t v6_loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  const bool to_v6_loopback = d.family == AF_INET6 && !std::memcmp(d.ip, v6_loopback, 16);
  if (attach_for(src ? src : to_v6_loopback ? dst : nullptr)) return -1;
  std::memcpy(&id->id.route.addr.dst_storage, dst, dst_len);
  auto st = g().s->cm_resolve_addr(id->h, src ? &s : nullptr, d, timeout_ms > 0 ? static_cast<uint32_t>(timeout_ms) : 0);
  if (!st.ok()) return fail_status(st);
  progress();
  return complete(id);
}

VL_EXPORT int rdma_resolve_route(rdma_cm_id* cm_id, int timeout_ms) {
  if (!cm_id) return fail(EINVAL);
  Id* id = priv(cm_id);
  auto st = g().s->cm_resolve_route(id->h, timeout_ms > 0 ? static_cast<uint32_t>(timeout_ms) : 0);
  if (!st.ok()) return fail_status(st);
  progress();
  return complete(id);
}

VL_EXPORT int rdma_listen(rdma_cm_id* cm_id, int backlog) {
  if (!cm_id) return fail(EINVAL);
  Id* id = priv(cm_id);
  if (!g().abi->attached() && attach_for(nullptr)) return -1;   // listening on an unbound ID binds "any"
  auto st = g().s->cm_listen(id->h, backlog);
  if (!st.ok()) return fail_status(st);
  return query_route(id);
}

VL_EXPORT int rdma_connect(rdma_cm_id* cm_id, rdma_conn_param* param) {
  if (!cm_id) return fail(EINVAL);
  Global& G = g();
  Id* id = priv(cm_id);
  if (valid_param(id, param)) return -1;
  id->initiator_depth = param && param->initiator_depth != RDMA_MAX_INIT_DEPTH ? param->initiator_depth : G.max_initiator_depth;
  id->responder_resources = param && param->responder_resources != RDMA_MAX_RESP_RES ? param->responder_resources : G.max_responder_resources;
  uint32_t qp_num = param ? param->qp_num : 0;
  uint8_t srq = param ? param->srq : 0;
  if (cm_id->qp) { qp_num = cm_id->qp->qp_num; srq = cm_id->qp->srq != nullptr; }
  auto st = G.s->cm_connect(id->h, to_cm_param(id, param, qp_num, srq));
  if (!st.ok()) return fail_status(st);
  id->connect.clear();
  progress();
  return complete(id);
}

VL_EXPORT int rdma_accept(rdma_cm_id* cm_id, rdma_conn_param* param) {
  if (!cm_id) return fail(EINVAL);
  Global& G = g();
  Id* id = priv(cm_id);
  if (!cm_id->qp && !param) return fail(EINVAL);
  if (valid_param(id, param)) return -1;
  const uint32_t qp_num = cm_id->qp ? cm_id->qp->qp_num : param->qp_num;
  const uint8_t srq = cm_id->qp ? cm_id->qp->srq != nullptr : param->srq;
  if (!param || param->initiator_depth == RDMA_MAX_INIT_DEPTH) id->initiator_depth = std::min(id->initiator_depth, G.max_initiator_depth);
  else id->initiator_depth = param->initiator_depth;
  if (!param || param->responder_resources == RDMA_MAX_RESP_RES) id->responder_resources = std::min(id->responder_resources, G.max_responder_resources);
  else id->responder_resources = param->responder_resources;
  // RC: the CM moves an attached QP to RTR and RTS before its REP leaves (rdma-core does it here in user space)
  auto st = G.s->cm_accept(id->h, to_cm_param(id, param, qp_num, srq));
  if (!st.ok()) { modify_qp_err(id); return fail_status(st); }
  progress();
  if (cm_id->qp_type == IBV_QPT_UD) {          // SIDR REP: nothing to wait for
    if (id->sync && cm_id->event) { rdma_ack_cm_event(cm_id->event); cm_id->event = nullptr; }
    return 0;
  }
  return complete(id);
}

VL_EXPORT int rdma_reject(rdma_cm_id* cm_id, const void* private_data, uint8_t len) {
  if (!cm_id) return fail(EINVAL);
  std::vector<uint8_t> pd;
  if (private_data && len) pd.assign(static_cast<const uint8_t*>(private_data), static_cast<const uint8_t*>(private_data) + len);
  auto st = g().s->cm_reject(priv(cm_id)->h, pd);
  if (!st.ok()) return fail_status(st);
  progress();
  return 0;
}

VL_EXPORT int rdma_notify(rdma_cm_id* cm_id, ibv_event_type event) {
  if (!cm_id) return fail(EINVAL);
  auto st = g().s->cm_notify(priv(cm_id)->h, static_cast<uint32_t>(event));
  if (!st.ok()) return fail_status(st);
  progress();
  return 0;
}

// ucma_shutdown (the QP to ERR: RoCE reports transport IB) then DREQ; a sync ID waits for DISCONNECTED
VL_EXPORT int rdma_disconnect(rdma_cm_id* cm_id) {
  if (!cm_id) return fail(EINVAL);
  if (!cm_id->verbs) return fail(EINVAL);
  Id* id = priv(cm_id);
  if (modify_qp_err(id)) return -1;
  auto st = g().s->cm_disconnect(id->h);
  if (!st.ok()) return fail_status(st);
  progress();
  return complete(id);
}

// For an ID without a QP, after CONNECT_RESPONSE: the RTU (ucma_process_conn_resp without the QP steps)
VL_EXPORT int rdma_establish(rdma_cm_id* cm_id) {
  if (!cm_id || cm_id->qp) return fail(EINVAL);
  auto st = g().s->cm_establish(priv(cm_id)->h);
  if (!st.ok()) return fail_status(st);
  progress();
  return 0;
}

VL_EXPORT int rdma_init_qp_attr(rdma_cm_id* cm_id, ibv_qp_attr* a, int* mask) {
  if (!cm_id || !a || !mask) return fail(EINVAL);
  uint32_t m = 0;
  auto r = g().s->cm_init_qp_attr(priv(cm_id)->h, a->qp_state, &m);
  if (!r.ok()) return fail_status(r);
  const vl::QpAttr& v = r.value;
  vlib::to_ibv_qp_attr(v, *a);
  a->ah_attr.grh.hop_limit = 64;
  a->ah_attr.port_num = static_cast<uint8_t>(v.port_num);
  *mask = static_cast<int>(m);
  return 0;
}

// RDMA_OPTION_ID_TOS (uint8_t: the traffic class of the connection's packets) and ACK_TIMEOUT (uint8_t: the QP's
// local ACK timeout) go to the CM (cm_set_option). REUSEADDR / AFONLY (int) are accepted, with their sizes checked,
// and change nothing: the device's CM has one address per GID and no TIME_WAIT port reservation to reuse. IB path
// records (RDMA_OPTION_IB_PATH): ENOSYS, as a kernel without the option answers.
VL_EXPORT int rdma_set_option(rdma_cm_id* cm_id, int level, int optname, void* optval, size_t optlen) {
  if (!cm_id || !optval) return fail(EINVAL);
  if (level == RDMA_OPTION_ID && (optname == RDMA_OPTION_ID_TOS || optname == RDMA_OPTION_ID_ACK_TIMEOUT)) {
    if (optlen != sizeof(uint8_t)) return fail(EINVAL);
    const uint32_t opt = optname == RDMA_OPTION_ID_TOS ? vl::CM_OPTION_ID_TOS : vl::CM_OPTION_ID_ACK_TIMEOUT;
    auto st = g().s->cm_set_option(priv(cm_id)->h, opt, *static_cast<const uint8_t*>(optval));
    return st.ok() ? 0 : fail_status(st);
  }
  if (level == RDMA_OPTION_ID && (optname == RDMA_OPTION_ID_REUSEADDR || optname == RDMA_OPTION_ID_AFONLY))
    return optlen == sizeof(int) ? 0 : fail(EINVAL);
  if (level == RDMA_OPTION_IB) return fail(ENOSYS);
  return fail(EINVAL);
}

static __be16 port_of(const sockaddr* a) {     // ucma_get_port
  if (a->sa_family == AF_INET) return reinterpret_cast<const sockaddr_in*>(a)->sin_port;
  if (a->sa_family == AF_INET6) return reinterpret_cast<const sockaddr_in6*>(a)->sin6_port;
  return 0;
}
VL_EXPORT __be16 rdma_get_src_port(rdma_cm_id* id) { return port_of(&id->route.addr.src_addr); }
VL_EXPORT __be16 rdma_get_dst_port(rdma_cm_id* id) { return port_of(&id->route.addr.dst_addr); }
