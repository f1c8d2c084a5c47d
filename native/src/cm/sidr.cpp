// Service ID Resolution for UD IDs (IBA 12.11; cm.c ib_send_cm_sidr_req / cm_sidr_req_handler / ib_send_cm_sidr_rep,
// cma.c cma_resolve_ib_udp / cma_sidr_rep_handler): the SIDR REQ carries the IP CM header, the SIDR REP the
// listener's QPN and Q_Key. rdma_connect on a UD ID sends the REQ; rdma_accept / rdma_reject answer it.
#include <algorithm>
#include <cstring>

#include "cm/cm_impl.h"

namespace vl::cm {

static uint64_t form_tid(const Id& id) { return (uint64_t(kHiTid) << 32) | __builtin_bswap32(id.local_id); }

Status sidr_connect(SessionImpl& S, Id& id, const CmConnParam& p) {
  if (!id.route_resolved) return Status{EINVAL, "id: route not resolved (cm_resolve_route first)"};
  if (id.state != CM_IDLE) return Status{EINVAL, "id: a SIDR REQ is outstanding"};
  if (p.private_data.size() > pdata_len(CM_ATTR_SIDR_REQ) - kIpHdrLen)
    return Status{EINVAL, "private_data: more than 180 bytes (216 of the SIDR REQ less the 36-byte IP CM header)"};
  Core& c = core(S);
  do id.local_id = (c.next_id++) ^ c.id_xor; while (!id.local_id);
  id.tid = form_tid(id);
  id.service_id = service_id(id.ps, id.dst.port);
  Msg m; m.hdr.attr_id = CM_ATTR_SIDR_REQ; m.hdr.tid = id.tid;
  m.set(F_REQUEST_ID, id.local_id).set(F_PARTITION_KEY, kDefaultPkey).set(F_SERVICE_ID, id.service_id);
  put_ip_hdr(m.pdata, id.src, id.dst);
  m.put_pdata(p.private_data, kIpHdrLen);
  id.timeout_ms = iba_time_ms(kCmResponseTimeout);   // cma_resolve_ib_udp: 1 << (CMA_CM_RESPONSE_TIMEOUT - 8) ms
  id.max_cm_retries = kMaxCmRetries;
  id.retries = 0;
  send(S, id.dev, id.peer, m, &id);
  set_state(S, id, CM_SIDR_REQ_SENT, "SIDR REQ sent");
  arm(S, id, Timer::Resend, id.timeout_ms);
  return Status{};
}

static void sidr_rep(SessionImpl& S, Handle dev, const Peer& to, uint64_t tid, uint32_t req_id, uint64_t sid, uint8_t status,
                     uint32_t qpn, uint32_t qkey, const std::vector<uint8_t>& pd, Id* id) {
  Msg m; m.hdr.attr_id = CM_ATTR_SIDR_REP; m.hdr.tid = tid;
  m.set(F_REQUEST_ID, req_id).set(F_SIDR_STATUS, status).set(F_SIDR_QPN, qpn).set(F_SERVICE_ID, sid).set(F_SIDR_QKEY, qkey);
  m.put_pdata(pd);
  send(S, dev, to, m, id);
}

Status sidr_accept(SessionImpl& S, Id& id, const CmConnParam& p, uint8_t status) {
  if (id.state != CM_SIDR_REQ_RCVD) return Status{EINVAL, "id: no SIDR REQ to answer"};
  if (p.private_data.size() > pdata_len(CM_ATTR_SIDR_REP)) return Status{EINVAL, "private_data: more than 136 bytes (SIDR REP)"};
  if (Qp* q = S.qp(id.qp)) id.local_qpn = q->qpn; else id.local_qpn = p.qp_num & 0xFFFFFF;
  sidr_rep(S, id.dev, id.peer, id.tid, id.remote_id, id.service_id, status, status == CM_SIDR_SUCCESS ? id.local_qpn : 0,
           status == CM_SIDR_SUCCESS ? id.qkey : 0, p.private_data, &id);
  set_state(S, id, CM_IDLE, status == CM_SIDR_SUCCESS ? "SIDR REP sent" : "SIDR REP (reject) sent");
  auto& ids = core(S).ids;
  if (auto it = ids.find(id.listen_id); it != ids.end() && it->second.pending && !id.accepted) it->second.pending--;
  id.accepted = true;
  return Status{};
}

void on_sidr(SessionImpl& S, Handle dev, const Peer& from, const Msg& m) {
  Core& c = core(S);
  Dev& ds = dev_state(S, dev);
  const uint32_t req_id = uint32_t(m.get(F_REQUEST_ID));
  const uint64_t sid = m.get(F_SERVICE_ID);
  if (m.hdr.attr_id == CM_ATTR_SIDR_REP) {
    Id* id = nullptr;
    for (auto& [h, x] : c.ids) if (x.dev == dev && x.local_id == req_id && x.state == CM_SIDR_REQ_SENT) id = &x;
    if (!id) { ds.n.rx_dropped++; emit_mad(S, dev, 0, m, uint8_t(CmMadDir::Dropped), "no SIDR REQ outstanding with this request ID"); return; }
    disarm(*id);
    set_state(S, *id, CM_IDLE, "SIDR REP received");
    CmEvent e; e.id = id->h;
    const uint8_t st = uint8_t(m.get(F_SIDR_STATUS));
    e.remote_qpn = uint32_t(m.get(F_SIDR_QPN)); e.remote_qkey = uint32_t(m.get(F_SIDR_QKEY));
    if (st != CM_SIDR_SUCCESS) { e.event = CM_EVENT_UNREACHABLE; e.status = st; }
    else if (e.remote_qkey != id->qkey) { e.event = CM_EVENT_UNREACHABLE; e.status = -EINVAL; }   // cma_sidr_rep_handler
    else { e.event = CM_EVENT_ESTABLISHED; id->remote_qpn = e.remote_qpn; id->remote_qkey = e.remote_qkey; }
    e.param.qp_num = e.remote_qpn;
    e.param.private_data.assign(m.pdata, m.pdata + pdata_len(CM_ATTR_SIDR_REP));
    return queue_event(S, dev, std::move(e));
  }
  // SIDR REQ: a duplicate (same request ID from the same peer) is dropped (cm_insert_remote_sidr)
  for (auto& [h, x] : c.ids)
    if (x.dev == dev && x.state == CM_SIDR_REQ_RCVD && x.remote_id == req_id && std::memcmp(x.peer.gid, from.gid, 16) == 0) {
      ds.n.rx_duplicates++;
      return;
    }
  Id* l = nullptr;
  for (auto& [h, x] : c.ids)
    if (x.dev == dev && x.listening && x.qp_type == QPT_UD && is_ip_service(sid) && x.ps == service_ps(sid) && x.src.port == service_port(sid)) l = &x;
  if (!l) return sidr_rep(S, dev, from, m.hdr.tid, req_id, sid, CM_SIDR_UNSUPPORTED, 0, 0, {}, nullptr);
  CmAddr src, dst;
  if (!get_ip_hdr(m.pdata, src, dst, nullptr)) return sidr_rep(S, dev, from, m.hdr.tid, req_id, sid, CM_SIDR_REJECT, 0, 0, {}, nullptr);
  if (l->pending >= uint32_t(l->backlog)) { ds.n.rx_dropped++; emit_mad(S, dev, l->h, m, uint8_t(CmMadDir::Dropped), "listen backlog full"); return; }
  Device& d = *S.dev(dev);
  Id n;
  n.h = S.new_handle(); n.dev = dev; n.ps = l->ps; n.qp_type = QPT_UD; n.listen_id = l->h; n.from_listener = true; n.qkey = l->qkey;
  n.bound = n.addr_resolved = n.route_resolved = true;
  n.src = l->src; n.src.family = dst.family; std::memcpy(n.src.ip, dst.ip, 16); n.src.port = service_port(sid);
  n.dst = src;
  const int gi = gid_index_of(d, dst.ip);
  n.sgid_index = gi < 0 ? from.sgid_index : uint32_t(gi);
  std::memcpy(n.sgid, d.gids[n.sgid_index < d.gids.size() ? n.sgid_index : 0].gid, 16);
  n.peer = from;
  if (from.dev) std::memcpy(n.peer.gid, src.ip, 16);   // in-session: the peer's address as its IP CM header says
  n.remote_id = req_id; n.tid = m.hdr.tid; n.service_id = sid;
  n.local_id = 0;
  l->pending++;
  Id& id = c.ids.emplace(n.h, std::move(n)).first->second;
  if (S.capture) { auto& e = S.emit(EventKind::ObjectCreated, dev, id.h, "cm_id", "CM ID (UD) for " + addr_text(id.dst)); e.a = id.ps; e.b = id.qp_type; }
  set_state(S, id, CM_SIDR_REQ_RCVD, "SIDR REQ received");
  CmEvent e; e.id = id.h; e.listen_id = id.listen_id; e.event = CM_EVENT_CONNECT_REQUEST;
  e.param.private_data.assign(m.pdata + kIpHdrLen, m.pdata + pdata_len(CM_ATTR_SIDR_REQ));
  queue_event(S, dev, std::move(e));
}

}  // namespace vl::cm
