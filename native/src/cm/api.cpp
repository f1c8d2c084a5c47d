// Session::cm_* (vl/session.h, vl/cm.h): the calls of the connection manager. Each takes the session lock, checks
// its arguments as rdma_cm does, and hands the work to conn.cpp / sidr.cpp / addr.cpp.
#include <cstring>

#include "cm/cm_impl.h"

namespace vl {

using namespace cm;

namespace {
Id* find(SessionImpl& S, Handle h) {
  if (!S.cm) return nullptr;
  auto it = S.cm->ids.find(h);
  return it == S.cm->ids.end() ? nullptr : &it->second;
}
Status no_id(Handle h) { return fail(ENOENT, "id: no CM ID with handle " + std::to_string(h)); }
bool any_ip(const uint8_t ip[16]) { for (int i = 0; i < 16; i++) if (ip[i]) return false; return true; }
CmAddr normalized(const CmAddr& a) {             // AF_INET: the address as ::ffff:a.b.c.d
  CmAddr x = a;
  if (x.family == kAfInet && is_v4_mapped(x.ip) && !x.ip[12] && !x.ip[13] && !x.ip[14] && !x.ip[15])
    std::memset(x.ip, 0, 16);                      // 0.0.0.0 (INADDR_ANY)
  if (x.family == kAfInet && !any_ip(x.ip) && !is_v4_mapped(x.ip)) {
    uint8_t v4[4]; std::memcpy(v4, x.ip + 12, 4);
    std::memset(x.ip, 0, 16); x.ip[10] = x.ip[11] = 0xff; std::memcpy(x.ip + 12, v4, 4);
  }
  return x;
}
}  // namespace

Result<Handle> Session::cm_create_id(Handle devh, uint32_t ps, uint32_t qp_type) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Device* d = S.dev(devh);
  if (!d) return rfail<Handle>(ENOENT, "dev: no device with handle " + std::to_string(devh));
  if (ps != CM_PS_TCP && ps != CM_PS_UDP && ps != CM_PS_IB && ps != CM_PS_IPOIB)
    return rfail<Handle>(EINVAL, "port_space: RDMA_PS_TCP (0x106), RDMA_PS_UDP (0x111), RDMA_PS_IB (0x13f) or RDMA_PS_IPOIB (0x2)");
  if (qp_type != QPT_RC && qp_type != QPT_UD) return rfail<Handle>(EINVAL, "qp_type: IBV_QPT_RC or IBV_QPT_UD");
  if ((ps == CM_PS_TCP && qp_type != QPT_RC) || ((ps == CM_PS_UDP || ps == CM_PS_IPOIB) && qp_type != QPT_UD))
    return rfail<Handle>(EINVAL, "qp_type: RDMA_PS_TCP is RC, RDMA_PS_UDP / RDMA_PS_IPOIB are UD (rdma_create_id)");
  // QP1: the CM takes it at its first use on the device, unless the user already made a GSI QP (docs/cm.md)
  if (!d->cm_qp1) {
    if (d->qp_by_qpn.count(kGsiQpn))
      return rfail<Handle>(EBUSY, "dev: QP1 belongs to a GSI QP the user created (create_qp gsi); the device's CM cannot run");
    d->cm_qp1 = true;
  }
  core(S);
  dev_state(S, devh);
  Id id;
  id.h = S.new_handle(); id.dev = devh; id.ps = ps; id.qp_type = qp_type;
  if (qp_type == QPT_UD) id.qkey = kUdpQkey;      // cma_set_default_qkey: RDMA_UDP_QKEY
  if (S.capture) {
    auto& e = S.emit(EventKind::ObjectCreated, devh, id.h, "cm_id", std::string("CM ID (") + (qp_type == QPT_RC ? "RC" : "UD") + ")");
    e.a = ps; e.b = qp_type;
  }
  const Handle h = id.h;
  S.cm->ids.emplace(h, std::move(id));
  return rok(h);
}

Status Session::cm_destroy_id(Handle h) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return no_id(h);
  for (auto& [k, x] : S.cm->ids)                   // rdma_destroy_id of a listener: its pending requests go too
    if (x.listen_id == h) x.listen_id = 0;
  destroy(S, *id);
  S.emit_obj(EventKind::ObjectDestroyed, id->dev, h, "cm_id", "CM ID");
  auto& evs = dev_state(S, id->dev).events;        // its queued events go with it (rdma_destroy_id acks them)
  for (auto it = evs.begin(); it != evs.end();) it = it->id == h ? evs.erase(it) : it + 1;
  S.cm->ids.erase(h);
  return ok();
}

Status Session::cm_bind_addr(Handle h, const CmAddr& a0) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return no_id(h);
  if (id->bound) return fail(EINVAL, "id: already bound");
  if (a0.family && a0.family != kAfInet && a0.family != kAfInet6) return fail(EAFNOSUPPORT, "family: AF_INET or AF_INET6");
  const CmAddr a = normalized(a0);
  if (!any_ip(a.ip) && gid_index_of(*S.dev(id->dev), a.ip) < 0)
    return fail(EADDRNOTAVAIL, "addr: " + addr_text(a) + " is not an address of this device (no such GID)");
  if (int e = bind_port(S, *id, a)) return fail(e, "addr: port " + std::to_string(a.port) + " of this port space is taken");
  if (!any_ip(a.ip)) {
    id->sgid_index = uint32_t(gid_index_of(*S.dev(id->dev), a.ip));
    std::memcpy(id->sgid, a.ip, 16);
  }
  return ok();
}

Status Session::cm_resolve_addr(Handle h, const CmAddr* src, const CmAddr& dst0, uint32_t timeout_ms) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return no_id(h);
  if (id->state != CM_IDLE || id->listening) return fail(EINVAL, "id: connecting or listening");
  const CmAddr dst = normalized(dst0);
  if (dst.family != kAfInet && dst.family != kAfInet6) return fail(EAFNOSUPPORT, "dst.family: AF_INET or AF_INET6");
  if (any_ip(dst.ip)) return fail(EINVAL, "dst: the unspecified address");
  if (!id->bound) {
    CmAddr s;
    if (src) s = normalized(*src);
    s.family = dst.family;
    if (!any_ip(s.ip) && gid_index_of(*S.dev(id->dev), s.ip) < 0)
      return fail(EADDRNOTAVAIL, "src: " + addr_text(s) + " is not an address of this device");
    if (int e = bind_port(S, *id, s)) return fail(e, "src: port taken");
  }
  Device& d = *S.dev(id->dev);
  id->dst = dst;
  int gi = any_ip(id->src.ip) ? source_gid_for(d, dst) : gid_index_of(d, id->src.ip);
  CmEvent e; e.id = h;
  Handle owner = 0; uint32_t ogi = 0;
  if (gi < 0) { e.event = CM_EVENT_ADDR_ERROR; e.status = -EADDRNOTAVAIL; }
  else if (owner_of(S, dst.ip, owner, ogi)) { e.event = CM_EVENT_ADDR_RESOLVED; id->peer.dev = owner; }
  else if (d.port) { e.event = CM_EVENT_ADDR_RESOLVED; id->peer.dev = 0; }   // a host on the network
  else { e.event = CM_EVENT_ADDR_ERROR; e.status = -EHOSTUNREACH; }
  if (e.event == CM_EVENT_ADDR_RESOLVED) {
    id->sgid_index = uint32_t(gi);
    std::memcpy(id->sgid, d.gids[gi].gid, 16);
    if (any_ip(id->src.ip)) std::memcpy(id->src.ip, d.gids[gi].gid, 16);
    id->src.family = dst.family;
    std::memcpy(id->peer.gid, dst.ip, 16);
    id->peer.sgid_index = uint32_t(gi);
    id->addr_resolved = true;
  }
  (void)timeout_ms;                                // resolution is immediate: the GID tables are local
  queue_event(S, id->dev, std::move(e));
  return ok();
}

Status Session::cm_resolve_route(Handle h, uint32_t timeout_ms) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return no_id(h);
  if (!id->addr_resolved) return fail(EINVAL, "id: address not resolved (cm_resolve_addr first)");
  // cma_resolve_iboe_route: the path MTU of the port (and of the in-session peer's port)
  uint32_t mtu = S.dev(id->dev)->profile.active_mtu;
  if (Device* p = S.dev(id->peer.dev)) mtu = std::min(mtu, p->profile.active_mtu);
  id->path_mtu = mtu;
  // cma_resolve_iboe_route: an ACK timeout set before the route gives the packet life time (timeout - 1)
  id->packet_life_time = id->ack_timeout_set && id->ack_timeout ? uint8_t(id->ack_timeout - 1) : kPacketLifeTime;
  id->route_resolved = true;
  (void)timeout_ms;
  CmEvent e; e.id = h; e.event = CM_EVENT_ROUTE_RESOLVED;
  queue_event(S, id->dev, std::move(e));
  return ok();
}

Status Session::cm_listen(Handle h, int backlog) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return no_id(h);
  if (id->state != CM_IDLE || id->addr_resolved) return fail(EINVAL, "id: connecting or already resolved");
  if (id->listening) { id->backlog = backlog > 0 && size_t(backlog) <= kMaxBacklog ? backlog : int(kMaxBacklog); return ok(); }
  if (!id->bound) { CmAddr any; any.family = kAfInet; if (int e = bind_port(S, *id, any)) return fail(e, "id: no free port"); }
  id->backlog = backlog > 0 && size_t(backlog) <= kMaxBacklog ? backlog : int(kMaxBacklog);   // ucma: max_backlog
  id->listening = true;
  set_state(S, *id, CM_LISTEN, "listen");
  return ok();
}

Status Session::cm_set_qp(Handle h, Handle qph) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return no_id(h);
  Qp* q = S.qp(qph);
  if (!q) return fail(ENOENT, "qp: no QP with handle " + std::to_string(qph));
  if (q->dev != id->dev) return fail(EINVAL, "qp: the QP is on another device than the CM ID");
  if (q->init.qp_type != id->qp_type) return fail(EINVAL, "qp: its type is not the CM ID's");
  if (id->qp) return fail(EINVAL, "id: already has a QP");
  id->qp = qph;
  id->local_qpn = q->qpn;
  if (Status st = qp_init(S, *id); !st.ok()) { id->qp = 0; return st; }
  return ok();
}

Status Session::cm_set_option(Handle h, uint32_t option, uint32_t value) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return no_id(h);
  switch (option) {
    case CM_OPTION_ID_TOS:                           // rdma_set_service_type
      if (value > 255) return fail(EINVAL, "value: a ToS byte 0..255");
      id->tos = uint8_t(value); id->tos_set = true;
      return ok();
    case CM_OPTION_ID_ACK_TIMEOUT:                   // rdma_set_ack_timeout
      if (id->qp_type != QPT_RC) return fail(EINVAL, "id: the ACK timeout is an RC connection's");
      if (value > 31) return fail(EINVAL, "value: an ACK timeout exponent 0..31");
      id->ack_timeout = uint8_t(value); id->ack_timeout_set = true;
      return ok();
    default:
      return fail(EOPNOTSUPP, "option: only RDMA_OPTION_ID_TOS (0) and RDMA_OPTION_ID_ACK_TIMEOUT (3)");
  }
}

Status Session::cm_connect(Handle h, const CmConnParam& p) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return no_id(h);
  return id->qp_type == QPT_UD ? sidr_connect(S, *id, p) : connect(S, *id, p);
}

Status Session::cm_accept(Handle h, const CmConnParam& p) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return no_id(h);
  return id->qp_type == QPT_UD ? sidr_accept(S, *id, p, CM_SIDR_SUCCESS) : accept(S, *id, p);
}

Status Session::cm_reject(Handle h, const std::vector<uint8_t>& pd) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return no_id(h);
  if (id->qp_type == QPT_UD) { CmConnParam p; p.private_data = pd; return sidr_accept(S, *id, p, CM_SIDR_REJECT); }
  return reject(S, *id, CM_REJ_CONSUMER_DEFINED, pd);
}

Status Session::cm_disconnect(Handle h) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return no_id(h);
  return disconnect(S, *id);
}

Status Session::cm_establish(Handle h) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return no_id(h);
  return establish(S, *id);
}

Status Session::cm_notify(Handle h, uint32_t ib_event) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return no_id(h);
  if (ib_event != EVENT_COMM_EST) return fail(EINVAL, "ib_event: only IBV_EVENT_COMM_EST (4)");
  if (id->state == CM_ESTABLISHED) return ok();
  if (id->state != CM_REP_SENT && id->state != CM_MRA_REP_RCVD) return fail(EINVAL, "id: no REP outstanding");
  return establish(S, *id);
}

Result<QpAttr> Session::cm_init_qp_attr(Handle h, uint32_t qp_state, uint32_t* attr_mask) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Id* id = find(S, h);
  if (!id) return rfail<QpAttr>(ENOENT, "id: no CM ID with handle " + std::to_string(h));
  if (qp_state != QPS_INIT && qp_state != QPS_RTR && qp_state != QPS_RTS)
    return rfail<QpAttr>(EINVAL, "qp_state: IBV_QPS_INIT, IBV_QPS_RTR or IBV_QPS_RTS");
  uint32_t mask = 0; int err = 0;
  QpAttr a = init_attr(*id, qp_state, mask, err);
  if (err) return rfail<QpAttr>(err, "id: no connection to take QP attributes from (rdma_init_qp_attr)");
  if (attr_mask) *attr_mask = mask;
  return rok(a);
}

std::vector<CmEvent> Session::cm_get_events(Handle devh, size_t max) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  std::vector<CmEvent> out;
  if (!S.cm) return out;
  if (S.inline_run) S.run_to_idle();               // free running inline: as poll_cq, the device works first
  auto it = S.cm->devs.find(devh);
  if (it == S.cm->devs.end()) return out;
  auto& q = it->second.events;
  while (!q.empty() && out.size() < max) { out.push_back(std::move(q.front())); q.pop_front(); }
  return out;
}

static CmIdInfo info_of(const Id& x) {
  CmIdInfo i;
  i.id = x.h; i.dev = x.dev; i.qp = x.qp; i.listen_id = x.listen_id; i.port_space = x.ps; i.qp_type = x.qp_type;
  i.state = x.state; i.bound = x.bound; i.addr_resolved = x.addr_resolved; i.route_resolved = x.route_resolved;
  i.listening = x.listening; i.src = x.src; i.dst = x.dst; i.sgid_index = x.sgid_index;
  std::memcpy(i.sgid, x.sgid, 16); std::memcpy(i.dgid, x.peer.gid, 16);
  i.local_comm_id = x.local_id; i.remote_comm_id = x.remote_id; i.local_qpn = x.local_qpn; i.remote_qpn = x.remote_qpn;
  i.starting_psn = x.sq_psn; i.path_mtu = x.path_mtu; i.service_id = x.service_id;
  i.peer_dev = x.peer.dev; i.remote_guid = x.remote_guid;
  i.tos = x.tos; i.ack_timeout = x.ack_timeout_set ? x.ack_timeout : 0;
  return i;
}

std::optional<CmIdInfo> Session::cm_id_info(Handle h) const {
  auto lk_ = impl_->lock();
  Id* id = find(*impl_, h);
  if (!id) return std::nullopt;
  return info_of(*id);
}

std::vector<CmIdInfo> Session::cm_ids(Handle devh) const {
  auto lk_ = impl_->lock();
  std::vector<CmIdInfo> v;
  if (impl_->cm) for (auto& [h, x] : impl_->cm->ids) if (x.dev == devh) v.push_back(info_of(x));
  return v;
}

void Session::cm_set_event_hook(std::function<void(Handle dev)> fn) {
  auto lk_ = impl_->lock();
  impl_->cm_hook = std::move(fn);
}

CmCounters Session::cm_counters(Handle devh) const {
  auto lk_ = impl_->lock();
  if (!impl_->cm) return {};
  auto it = impl_->cm->devs.find(devh);
  return it == impl_->cm->devs.end() ? CmCounters{} : it->second.n;
}

}  // namespace vl
