// The connection state machine of IBA 12.9 (Figures 140-142), both sides, as the kernel's drivers/infiniband/core/
// cm.c runs it for rdma_cm (cma.c): REQ / MRA / REJ / REP / RTU / DREQ / DREP, duplicates, stale connections,
// TimeWait, and the QP moved INIT -> RTR -> RTS with the attributes the REQ / REP carry (cm_init_qp_*_attr).
#include <algorithm>
#include <cstring>

#include "cm/cm_impl.h"
#include "vl/names.h"

namespace vl::cm {

uint8_t ack_timeout(uint8_t ca_ack_delay, uint8_t plt) {   // cm.c cm_ack_timeout
  int t = plt + 1;
  if (t >= ca_ack_delay) t += (ca_ack_delay >= t - 1);
  else t = ca_ack_delay + (t >= ca_ack_delay - 1);
  return uint8_t(std::min(31, t));
}

void set_state(SessionImpl& S, Id& id, uint8_t st, const char* why) {
  if (id.state == st) return;
  emit_state(S, id, st, why);
  id.state = st;
}

// cm.c cm_form_tid: the agent's hi_tid over the local comm ID as the kernel stores it (big-endian bytes read as a
// little-endian u32: the capture's REQ of comm ID 0x29a5ee4a has TID 0x000000024aeea529)
static uint64_t form_tid(const Id& id) { return (uint64_t(kHiTid) << 32) | __builtin_bswap32(id.local_id); }

static uint32_t alloc_local_id(SessionImpl& S) {
  Core& c = core(S);
  for (;;) {
    const uint32_t v = (c.next_id++) ^ c.id_xor;
    if (!v) continue;
    bool used = false;
    for (auto& [h, x] : c.ids) if (x.local_id == v) { used = true; break; }
    for (auto& t : c.timewait) if (t.local_id == v) used = true;
    if (!used) return v;
  }
}

static Msg msg(uint16_t attr, uint64_t tid) { Msg m; m.hdr.attr_id = attr; m.hdr.tid = tid; return m; }

static void event(SessionImpl& S, Id& id, uint32_t type, int32_t status, const Msg* from = nullptr, size_t pd_off = 0) {
  CmEvent e;
  e.id = id.h; e.event = type; e.status = status;
  if (type == CM_EVENT_CONNECT_REQUEST) e.listen_id = id.listen_id;
  e.param.responder_resources = id.responder_resources; e.param.initiator_depth = id.initiator_depth;
  e.param.flow_control = id.flow_control; e.param.retry_count = id.retry_count;
  e.param.rnr_retry_count = id.rnr_retry_count; e.param.srq = id.srq; e.param.qp_num = id.remote_qpn;
  e.remote_qpn = id.remote_qpn; e.remote_qkey = id.remote_qkey;
  if (from) {
    const size_t n = pdata_len(from->hdr.attr_id);
    if (n > pd_off) e.param.private_data.assign(from->pdata + pd_off, from->pdata + n);
  }
  queue_event(S, id.dev, std::move(e));
}

// ---- the QP (cma.c cma_init_conn_qp / cma_modify_qp_rtr / cma_modify_qp_rts; cm.c cm_init_qp_*_attr)
QpAttr init_attr(const Id& id, uint32_t st, uint32_t& mask, int& err) {
  QpAttr a;
  err = 0;
  a.qp_state = st;
  if (st == QPS_INIT) {
    mask = QP_STATE | QP_PKEY_INDEX | QP_PORT;
    a.pkey_index = 0; a.port_num = 1;
    if (id.qp_type == QPT_UD) { mask |= QP_QKEY; a.qkey = id.qkey; }
    else {
      mask |= QP_ACCESS_FLAGS;                   // before a connection: 0 (cma_ib_init_qp_attr); on one, cm.c's
      a.qp_access_flags = 0;
      if (id.state != CM_IDLE && id.state != CM_LISTEN) {
        a.qp_access_flags = ACCESS_REMOTE_WRITE;
        if (id.responder_resources) a.qp_access_flags |= ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
      }
    }
    return a;
  }
  if (id.qp_type == QPT_UD) {
    mask = QP_STATE | (st == QPS_RTS ? uint32_t(QP_SQ_PSN) : 0u);
    a.sq_psn = 0;
    return a;
  }
  const bool connected = id.state >= CM_REQ_RCVD && id.state <= CM_ESTABLISHED && id.state != CM_MRA_REQ_RCVD &&
                         !(st == QPS_RTR && id.state == CM_REQ_SENT);
  if (!connected) { err = EINVAL; return a; }
  if (st == QPS_RTR) {
    mask = QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER;
    a.dest_device = id.peer.dev; a.sgid_index = id.sgid_index; std::memcpy(a.dgid, id.peer.gid, 16);
    a.path_mtu = id.path_mtu; a.dest_qp_num = id.remote_qpn; a.rq_psn = id.rq_psn;
    a.max_dest_rd_atomic = id.responder_resources; a.min_rnr_timer = 0;
  } else if (st == QPS_RTS) {
    mask = QP_STATE | QP_SQ_PSN | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC | QP_TIMEOUT;
    a.sq_psn = id.sq_psn; a.retry_cnt = id.retry_count; a.rnr_retry = id.rnr_retry_count;
    a.max_rd_atomic = id.initiator_depth;
    a.timeout = id.ack_timeout_set ? id.ack_timeout : id.local_ack_timeout;   // cma.c rdma_init_qp_attr: timeout_set
  } else err = EINVAL;
  return a;
}

static Status modify(SessionImpl& S, Id& id, uint32_t st) {
  uint32_t mask = 0; int err = 0;
  QpAttr a = init_attr(id, st, mask, err);
  if (err) return Status{err, "cm: no attributes for this state"};
  if (Qp* q = S.qp(id.qp)) {                     // the device's limits bound what the peer asked for
    const Profile& pr = S.profile_of(q->dev);
    a.max_dest_rd_atomic = std::min(a.max_dest_rd_atomic, pr.max_qp_rd_atom);
    a.max_rd_atomic = std::min(a.max_rd_atomic, pr.max_qp_init_rd_atom);
    a.path_mtu = std::min(a.path_mtu, pr.active_mtu);
  }
  return S.self->modify_qp(id.qp, a, mask);
}

Status qp_init(SessionImpl& S, Id& id) {
  Qp* q = S.qp(id.qp);
  if (!q) return Status{};
  if (q->state == QPS_RESET) if (Status st = modify(S, id, QPS_INIT); !st.ok()) return st;
  if (id.qp_type == QPT_UD) {                    // cma_init_ud_qp: straight on to RTS (SQ PSN 0)
    if (Status st = modify(S, id, QPS_RTR); !st.ok()) return st;
    return modify(S, id, QPS_RTS);
  }
  return Status{};
}

Status qp_rtr_rts(SessionImpl& S, Id& id) {
  Qp* q = S.qp(id.qp);
  if (!q) return Status{};
  if (q->state == QPS_INIT) if (Status st = modify(S, id, QPS_INIT); !st.ok()) return st;   // the access flags
  if (q->state == QPS_INIT) if (Status st = modify(S, id, QPS_RTR); !st.ok()) return st;
  if (q->state == QPS_RTR) return modify(S, id, QPS_RTS);
  return Status{};
}

static void qp_err(SessionImpl& S, Id& id) {    // cma_modify_qp_err
  if (Qp* q = S.qp(id.qp); q && q->state != QPS_ERR && q->state != QPS_RESET) {
    QpAttr a; a.qp_state = QPS_ERR;
    S.self->modify_qp(id.qp, a, QP_STATE);
  }
}

// ---- messages of an ID (cm.c cm_format_*)
static void send_rej(SessionImpl& S, Id& id, uint16_t reason, const uint8_t* ari, size_t ari_len,
                     const std::vector<uint8_t>& pd) {
  Msg m = msg(CM_ATTR_REJ, id.tid ? id.tid : form_tid(id));
  const uint8_t st = id.state;
  m.set(F_LOCAL_COMM_ID, st == CM_REQ_RCVD ? 0 : id.local_id).set(F_REMOTE_COMM_ID, id.remote_id);
  m.set(F_MESSAGE_REJECTED, st == CM_REQ_RCVD || st == CM_MRA_REQ_SENT ? 0 : st == CM_REP_RCVD || st == CM_MRA_REP_SENT ? 1 : 2);
  m.set(F_REASON, reason).set(F_REJ_INFO_LENGTH, ari_len);
  if (ari_len) std::memcpy(m.info, ari, std::min<size_t>(ari_len, 72));
  m.put_pdata(pd);
  dev_state(S, id.dev).n.rej_sent++;
  send(S, id.dev, id.peer, m, &id, false);
}

// cm.c cm_issue_rej: a REJ to a REQ / REP that no ID takes (the comm IDs swapped, the received TID)
static void issue_rej(SessionImpl& S, Handle dev, const Peer& to, const Msg& rcv, uint16_t reason, uint8_t msg_rejected,
                      const uint8_t* ari = nullptr, size_t ari_len = 0) {
  Msg m = msg(CM_ATTR_REJ, rcv.hdr.tid);
  m.set(F_REMOTE_COMM_ID, rcv.get(F_LOCAL_COMM_ID)).set(F_LOCAL_COMM_ID, rcv.get(F_REMOTE_COMM_ID));
  m.set(F_MESSAGE_REJECTED, msg_rejected).set(F_REASON, reason).set(F_REJ_INFO_LENGTH, ari_len);
  if (ari_len) std::memcpy(m.info, ari, ari_len);
  dev_state(S, dev).n.rej_sent++;
  send(S, dev, to, m, nullptr);
}

static void send_drep(SessionImpl& S, Id& id) {
  Msg m = msg(CM_ATTR_DREP, id.tid);
  m.set(F_LOCAL_COMM_ID, id.local_id).set(F_REMOTE_COMM_ID, id.remote_id);
  send(S, id.dev, id.peer, m, &id);
}

static void send_dreq(SessionImpl& S, Id& id) {
  id.tid = form_tid(id);
  Msg m = msg(CM_ATTR_DREQ, id.tid);
  m.set(F_LOCAL_COMM_ID, id.local_id).set(F_REMOTE_COMM_ID, id.remote_id).set(F_REMOTE_QPN_EECN, id.remote_qpn);
  send(S, id.dev, id.peer, m, &id);
  id.retries = 0;
  set_state(S, id, CM_DREQ_SENT, "DREQ sent");
  arm(S, id, Timer::Resend, id.timeout_ms);
}

static void send_rtu(SessionImpl& S, Id& id) {
  Msg m = msg(CM_ATTR_RTU, id.tid);
  m.set(F_LOCAL_COMM_ID, id.local_id).set(F_REMOTE_COMM_ID, id.remote_id);
  send(S, id.dev, id.peer, m, &id);
}

// cm_send_mra with IB_CM_MRA_FLAG_DELAY (what rdma_cm asks for): the MRA is built now, sent only if a duplicate
// REQ / REP shows the peer is waiting (cm_dup_req_handler / cm_dup_rep_handler)
static void prepare_mra(Id& id, uint8_t mraed) {
  Msg m = msg(CM_ATTR_MRA, id.tid);
  m.set(F_LOCAL_COMM_ID, id.local_id).set(F_REMOTE_COMM_ID, id.remote_id);
  m.set(F_MESSAGE_MRAED, mraed).set(F_SERVICE_TIMEOUT, kMraServiceTimeout);
  encode(m, id.mra);
  id.have_mra = true;
}

static void unpend(SessionImpl& S, Id& id) {
  if (id.accepted || !id.listen_id) return;
  id.accepted = true;
  auto& ids = core(S).ids;
  if (auto it = ids.find(id.listen_id); it != ids.end() && it->second.pending) it->second.pending--;
}

void enter_timewait(SessionImpl& S, Id& id) {   // cm.c cm_enter_timewait
  disarm(id);
  set_state(S, id, CM_TIMEWAIT, "TimeWait");
  const uint64_t ms = iba_time_ms(id.local_ack_timeout);
  TimeWaitEntry t;
  t.dev = id.dev; t.local_id = id.local_id; t.remote_id = id.remote_id; t.remote_qpn = id.remote_qpn;
  t.remote_guid = id.remote_guid; t.until = S.now + ms * 1000000;
  core(S).timewait.push_back(t);
  arm(S, id, Timer::TimeWait, ms);
}

static void report_disconnect(SessionImpl& S, Id& id, int32_t status) {
  if (id.disconnect_reported) return;
  id.disconnect_reported = true;
  event(S, id, CM_EVENT_DISCONNECTED, status);
}

// ---- active side: REQ
Status connect(SessionImpl& S, Id& id, const CmConnParam& p) {
  if (!id.route_resolved) return Status{EINVAL, "id: route not resolved (cm_resolve_route first)"};
  if (id.state != CM_IDLE) return Status{EINVAL, std::string("id: in ") + CM_STATE_NAMES[id.state] + ", not IB_CM_IDLE"};
  if (p.private_data.size() > pdata_len(CM_ATTR_REQ) - kIpHdrLen)
    return Status{EINVAL, "private_data: more than 56 bytes (92 of the REQ less the 36-byte IP CM header)"};
  Device& d = *S.dev(id.dev);
  if (Qp* q = S.qp(id.qp)) id.local_qpn = q->qpn; else id.local_qpn = p.qp_num & 0xFFFFFF;
  id.local_id = alloc_local_id(S);
  id.tid = form_tid(id);
  // The REQ's Starting PSN is the PSN the active side will *receive* first, as Linux reads it: ib_send_cm_req sets
  // the active ID's rq_psn from it, cm_req_handler the passive ID's sq_psn (drivers/infiniband/core/cm.c); the REP's
  // the other way round. (Sending our send PSN there broke every RC connection with the kernel: its QP took our
  // first packets for duplicates, docs/interop.md.)
  id.rq_psn = uint32_t(S.rng()) & 0xFFFFFF;      // rdma_cm: seq_num = get_random_u32() & 0xffffff
  id.responder_resources = p.responder_resources; id.initiator_depth = p.initiator_depth;
  id.flow_control = p.flow_control; id.retry_count = std::min<uint8_t>(p.retry_count, 7);
  id.rnr_retry_count = std::min<uint8_t>(p.rnr_retry_count, 7); id.srq = p.srq;
  id.service_id = service_id(id.ps, id.dst.port);
  id.local_ack_timeout = ack_timeout(kCaAckDelay, id.packet_life_time);
  id.remote_id = 0; id.remote_qpn = 0; id.disconnect_reported = false;
  Msg m = msg(CM_ATTR_REQ, id.tid);
  m.set(F_LOCAL_COMM_ID, id.local_id).set(F_SERVICE_ID, id.service_id).set(F_LOCAL_CA_GUID, d.node_guid);
  m.set(F_LOCAL_QKEY, 0).set(F_LOCAL_QPN, id.local_qpn).set(F_RESPONDER_RESOURCES, id.responder_resources);
  m.set(F_INITIATOR_DEPTH, id.initiator_depth).set(F_REMOTE_CM_RESPONSE_TIMEOUT, kCmResponseTimeout);
  m.set(F_TRANSPORT_SERVICE_TYPE, 0).set(F_END_TO_END_FLOW_CONTROL, id.flow_control);
  m.set(F_STARTING_PSN, id.rq_psn).set(F_LOCAL_CM_RESPONSE_TIMEOUT, kCmResponseTimeout);
  m.set(F_RETRY_COUNT, id.retry_count).set(F_PARTITION_KEY, kDefaultPkey).set(F_PATH_MTU, id.path_mtu);
  m.set(F_RNR_RETRY_COUNT, id.rnr_retry_count).set(F_MAX_CM_RETRIES, kMaxCmRetries).set(F_SRQ, id.srq);
  // RoCE paths are routable (hop limit 64 > 1): permissive LIDs, not subnet-local (cm_format_req)
  m.set(F_PRI_LOCAL_LID, 0xFFFF).set(F_PRI_REMOTE_LID, 0xFFFF);
  std::memcpy(m.pri_local_gid, id.sgid, 16); std::memcpy(m.pri_remote_gid, id.peer.gid, 16);
  // cma.c cma_get_roce_udp_flow_label: (sport * 31 + dport) & 0xFFFFF
  m.set(F_PRI_FLOW_LABEL, (uint32_t(id.src.port) * 31 + id.dst.port) & 0xFFFFF);
  // the traffic class is the ID's ToS (default_roce_tos 0); SL 0: no VLAN priority map on a software device
  m.set(F_PRI_PACKET_RATE, 0).set(F_PRI_TRAFFIC_CLASS, id.tos).set(F_PRI_HOP_LIMIT, 64).set(F_PRI_SL, 0);
  m.set(F_PRI_SUBNET_LOCAL, 0).set(F_PRI_LOCAL_ACK_TIMEOUT, id.local_ack_timeout);
  put_ip_hdr(m.pdata, id.src, id.dst);
  m.put_pdata(p.private_data, kIpHdrLen);
  id.timeout_ms = iba_time_ms(id.packet_life_time) * 2 + iba_time_ms(kCmResponseTimeout);   // cm.c ib_send_cm_req
  id.max_cm_retries = kMaxCmRetries;
  id.retries = 0;
  send(S, id.dev, id.peer, m, &id);
  set_state(S, id, CM_REQ_SENT, "REQ sent");
  arm(S, id, Timer::Resend, id.timeout_ms);
  return Status{};
}

// ---- passive side: REQ in (cm.c cm_req_handler / cm_match_req; cma.c cma_ib_req_handler)
static bool connected_state(uint8_t s) { return s >= CM_REQ_RCVD && s <= CM_DREQ_RCVD && s != CM_MRA_REQ_RCVD; }

static void on_req(SessionImpl& S, Handle dev, const Peer& from, const Msg& m) {
  Core& c = core(S);
  Dev& ds = dev_state(S, dev);
  const uint32_t rcomm = uint32_t(m.get(F_LOCAL_COMM_ID));
  const uint64_t rguid = m.get(F_LOCAL_CA_GUID);
  const uint32_t rqpn = uint32_t(m.get(F_LOCAL_QPN));
  // a duplicate: the same remote comm ID and CA GUID (cm_insert_remote_id -> cm_dup_req_handler)
  for (auto& [h, id] : c.ids) {
    if (id.dev != dev || id.listening || id.remote_id != rcomm || id.remote_guid != rguid) continue;
    ds.n.rx_duplicates++;
    switch (id.state) {
      case CM_MRA_REQ_SENT: resend(S, id, id.mra); break;
      case CM_REP_SENT: case CM_MRA_REP_RCVD: if (id.have_sent) resend(S, id, id.sent); break;
      case CM_TIMEWAIT: send_rej(S, id, CM_REJ_STALE_CONN, nullptr, 0, {}); break;
      default: break;                            // REQ_RCVD: the consumer has not answered yet
    }
    return;
  }
  // a stale connection: the remote QPN of this CA is still connected or in TimeWait (cm_insert_remote_qpn)
  Id* cur = nullptr;
  bool stale = false;
  for (auto& [h, id] : c.ids)
    if (id.dev == dev && connected_state(id.state) && id.remote_qpn == rqpn && id.remote_guid == rguid) { stale = true; cur = &id; }
  for (auto& t : c.timewait)
    if (t.dev == dev && t.remote_qpn == rqpn && t.remote_guid == rguid && t.until > S.now) stale = true;
  if (stale) {
    ds.n.rx_stale++;
    issue_rej(S, dev, from, m, CM_REJ_STALE_CONN, 0);
    // the connection the REQ says its sender no longer has is stale too: cm_match_req disconnects it
    // (ib_send_cm_dreq, which only an ESTABLISHED ID sends)
    if (cur && cur->state == CM_ESTABLISHED) send_dreq(S, *cur);
    return;
  }
  // the listener of the service ID (cm_find_listen): ib_cm REJects with INVALID_SERVICE_ID when there is none
  const uint64_t sid = m.get(F_SERVICE_ID);
  std::vector<Id*> ls;
  for (auto& [h, id] : c.ids)
    if (id.dev == dev && id.listening && is_ip_service(sid) && id.ps == service_ps(sid) && id.src.port == service_port(sid))
      ls.push_back(&id);
  if (ls.empty()) return issue_rej(S, dev, from, m, CM_REJ_INVALID_SERVICE_ID, 0);
  // rdma_cm's checks (cma_ib_req_handler): an RC REQ with a valid IP CM header addressed to a listener's address;
  // a refusal there destroys the new ib_cm ID, which REJects with CONSUMER_DEFINED (cm_destroy_id)
  CmAddr src, dst;
  std::string why;
  Id* l = nullptr;
  if (m.get(F_TRANSPORT_SERVICE_TYPE) == 0 && get_ip_hdr(m.pdata, src, dst, &why)) {
    for (Id* x : ls) {
      bool any = true;
      for (uint8_t b : x->src.ip) if (b) any = false;
      const bool fam = !x->src.family || any || x->src.family == dst.family;
      if (std::memcmp(x->src.ip, dst.ip, 16) == 0 && fam) { l = x; break; }
      if (any && fam && !l) l = x;
    }
  }
  if (!l) return issue_rej(S, dev, from, m, CM_REJ_CONSUMER_DEFINED, 0);
  // the path: our GID the REQ names must be one of ours (cm_init_av_by_path fails: REJ INVALID_GID, ARI = GID 0)
  Device& d = *S.dev(dev);
  const int gi = gid_index_of(d, m.pri_remote_gid);
  if (gi < 0) return issue_rej(S, dev, from, m, CM_REJ_INVALID_GID, 0, d.gids[0].gid, 16);
  const uint32_t mtu = uint32_t(m.get(F_PATH_MTU));
  if (mtu < MTU_256 || mtu > MTU_4096) return issue_rej(S, dev, from, m, CM_REJ_INVALID_MTU, 0);
  // the backlog (ucma: -ENOMEM from the event handler): no REJ, so that the peer's REQ retry may find room
  if (l->pending >= uint32_t(l->backlog)) { ds.n.rx_dropped++; emit_mad(S, dev, l->h, m, uint8_t(CmMadDir::Dropped), "listen backlog full"); return; }
  Id n;
  n.h = S.new_handle(); n.dev = dev; n.ps = l->ps; n.qp_type = QPT_RC; n.listen_id = l->h; n.from_listener = true;
  n.bound = n.addr_resolved = n.route_resolved = true;
  // the local port of the new ID is the service ID's (cma_save_ip_info: the IP CM header carries only the source port)
  n.src = l->src; n.src.family = dst.family; std::memcpy(n.src.ip, dst.ip, 16); n.src.port = service_port(sid);
  n.dst = src;
  n.sgid_index = uint32_t(gi); std::memcpy(n.sgid, m.pri_remote_gid, 16);
  n.peer = from; n.peer.sgid_index = uint32_t(gi); std::memcpy(n.peer.gid, m.pri_local_gid, 16);
  n.remote_id = rcomm; n.remote_guid = rguid; n.remote_qpn = rqpn; n.sq_psn = uint32_t(m.get(F_STARTING_PSN));   // cm_req_handler
  n.path_mtu = std::min<uint32_t>(mtu, d.profile.active_mtu);
  n.responder_resources = uint8_t(m.get(F_INITIATOR_DEPTH)); n.initiator_depth = uint8_t(m.get(F_RESPONDER_RESOURCES));
  n.flow_control = uint8_t(m.get(F_END_TO_END_FLOW_CONTROL)); n.retry_count = uint8_t(m.get(F_RETRY_COUNT));
  n.rnr_retry_count = uint8_t(m.get(F_RNR_RETRY_COUNT)); n.srq = uint8_t(m.get(F_SRQ));
  n.local_ack_timeout = uint8_t(m.get(F_PRI_LOCAL_ACK_TIMEOUT));
  n.service_id = sid; n.tid = m.hdr.tid;
  n.timeout_ms = iba_time_ms(unsigned(m.get(F_LOCAL_CM_RESPONSE_TIMEOUT)));
  n.max_cm_retries = uint8_t(m.get(F_MAX_CM_RETRIES));
  n.local_id = alloc_local_id(S);
  l->pending++;
  Id& id = c.ids.emplace(n.h, std::move(n)).first->second;
  if (S.capture) { auto& e = S.emit(EventKind::ObjectCreated, dev, id.h, "cm_id", "CM ID for " + addr_text(id.dst) + " -> " + addr_text(id.src)); e.a = id.ps; e.b = id.qp_type; }
  set_state(S, id, CM_REQ_RCVD, "REQ received");
  event(S, id, CM_EVENT_CONNECT_REQUEST, 0, &m, kIpHdrLen);
  prepare_mra(id, 0);                            // cma_ib_req_handler: ib_send_cm_mra(CMA_CM_MRA_SETTING), delayed
  set_state(S, id, CM_MRA_REQ_SENT, "MRA pending (IB_CM_MRA_FLAG_DELAY)");
}

Status accept(SessionImpl& S, Id& id, const CmConnParam& p) {
  if (id.state != CM_REQ_RCVD && id.state != CM_MRA_REQ_SENT)
    return Status{EINVAL, std::string("id: in ") + CM_STATE_NAMES[id.state] + ", no connection request to accept"};
  if (p.private_data.size() > pdata_len(CM_ATTR_REP)) return Status{EINVAL, "private_data: more than 196 bytes (REP)"};
  Device& d = *S.dev(id.dev);
  if (Qp* q = S.qp(id.qp)) id.local_qpn = q->qpn; else id.local_qpn = p.qp_num & 0xFFFFFF;
  id.responder_resources = p.responder_resources; id.initiator_depth = p.initiator_depth;
  id.rq_psn = uint32_t(S.rng()) & 0xFFFFFF;      // the REP's Starting PSN: our receive PSN (ib_send_cm_rep)
  // cma_accept_ib: the QP to RTR and RTS before the REP leaves (the REQ's attributes, the consumer's responder
  // resources / initiator depth; the QP's RNR retry stays the REQ's: ib_send_cm_rep only puts the consumer's in the REP)
  if (Status st = qp_rtr_rts(S, id); !st.ok()) {
    reject(S, id, CM_REJ_CONSUMER_DEFINED, {});
    return st;
  }
  Msg m = msg(CM_ATTR_REP, id.tid);
  m.set(F_LOCAL_COMM_ID, id.local_id).set(F_REMOTE_COMM_ID, id.remote_id).set(F_LOCAL_QKEY, 0);
  m.set(F_LOCAL_QPN, id.local_qpn).set(F_STARTING_PSN, id.rq_psn).set(F_RESPONDER_RESOURCES, id.responder_resources);
  m.set(F_INITIATOR_DEPTH, id.initiator_depth).set(F_TARGET_ACK_DELAY, kCaAckDelay).set(F_FAILOVER_ACCEPTED, 0);
  m.set(F_END_TO_END_FLOW_CONTROL, p.flow_control).set(F_RNR_RETRY_COUNT, std::min<uint8_t>(7, p.rnr_retry_count)).set(F_SRQ, p.srq);
  m.set(F_LOCAL_CA_GUID, d.node_guid);
  m.put_pdata(p.private_data);
  unpend(S, id);
  id.retries = 0;
  send(S, id.dev, id.peer, m, &id);
  id.have_mra = false;
  set_state(S, id, CM_REP_SENT, "REP sent");
  arm(S, id, Timer::Resend, id.timeout_ms);
  return Status{};
}

Status reject(SessionImpl& S, Id& id, uint16_t reason, const std::vector<uint8_t>& pd) {
  const uint8_t s = id.state;
  if (s != CM_REQ_RCVD && s != CM_MRA_REQ_SENT && s != CM_REP_RCVD && s != CM_MRA_REP_SENT)
    return Status{EINVAL, std::string("id: in ") + CM_STATE_NAMES[s] + ", nothing to reject"};
  if (pd.size() > pdata_len(CM_ATTR_REJ)) return Status{EINVAL, "private_data: more than 148 bytes (REJ)"};
  send_rej(S, id, reason, nullptr, 0, pd);
  unpend(S, id);
  disarm(id);
  set_state(S, id, CM_IDLE, "REJ sent");
  return Status{};
}

// ---- REP in (cm.c cm_rep_handler; cma.c cma_rep_recv)
static void on_rep(SessionImpl& S, Id& id, const Msg& m) {
  Dev& ds = dev_state(S, id.dev);
  switch (id.state) {
    case CM_REQ_SENT: case CM_MRA_REQ_RCVD: break;
    case CM_ESTABLISHED: ds.n.rx_duplicates++; if (id.have_sent) resend(S, id, id.sent); return;   // the RTU was lost
    case CM_MRA_REP_SENT: ds.n.rx_duplicates++; if (id.have_mra) resend(S, id, id.mra); return;
    default: ds.n.rx_duplicates++; return;
  }
  disarm(id);
  id.remote_id = uint32_t(m.get(F_LOCAL_COMM_ID)); id.remote_qpn = uint32_t(m.get(F_LOCAL_QPN));
  id.remote_guid = m.get(F_LOCAL_CA_GUID); id.sq_psn = uint32_t(m.get(F_STARTING_PSN));   // cm_rep_handler
  id.initiator_depth = uint8_t(m.get(F_RESPONDER_RESOURCES)); id.responder_resources = uint8_t(m.get(F_INITIATOR_DEPTH));
  id.rnr_retry_count = uint8_t(m.get(F_RNR_RETRY_COUNT));
  id.local_ack_timeout = ack_timeout(uint8_t(m.get(F_TARGET_ACK_DELAY)), uint8_t(id.local_ack_timeout - 1));
  set_state(S, id, CM_REP_RCVD, "REP received");
  prepare_mra(id, 1);                            // cma_ib_handler: ib_send_cm_mra(CMA_CM_MRA_SETTING), delayed
  set_state(S, id, CM_MRA_REP_SENT, "MRA pending (IB_CM_MRA_FLAG_DELAY)");
  if (!id.qp) return event(S, id, CM_EVENT_CONNECT_RESPONSE, 0, &m);   // the consumer moves its QP, then cm_establish
  if (Status st = qp_rtr_rts(S, id); !st.ok()) {
    reject(S, id, CM_REJ_CONSUMER_DEFINED, {});
    return event(S, id, CM_EVENT_CONNECT_ERROR, -st.err, &m);
  }
  send_rtu(S, id);
  id.have_mra = false;
  set_state(S, id, CM_ESTABLISHED, "RTU sent");
  event(S, id, CM_EVENT_ESTABLISHED, 0, &m);
}

Status establish(SessionImpl& S, Id& id) {
  if (id.state == CM_REP_RCVD || id.state == CM_MRA_REP_SENT) {   // rdma_establish: the RTU
    send_rtu(S, id);                             // (no event: cma.c reports none for it, the peer gets ESTABLISHED)
    id.have_mra = false;
    set_state(S, id, CM_ESTABLISHED, "RTU sent");
    return Status{};
  }
  if (id.state == CM_REP_SENT || id.state == CM_MRA_REP_RCVD) {   // cm.c cm_establish: COMM_EST before the RTU
    disarm(id);
    set_state(S, id, CM_ESTABLISHED, "communication established (first packet before the RTU)");
    event(S, id, CM_EVENT_ESTABLISHED, 0);
    return Status{};
  }
  return Status{EINVAL, std::string("id: in ") + CM_STATE_NAMES[id.state] + ", nothing to establish"};
}

// ---- disconnection (cm.c ib_send_cm_dreq / ib_send_cm_drep / cm_dreq_handler / cm_drep_handler)
Status disconnect(SessionImpl& S, Id& id) {
  if (id.state == CM_ESTABLISHED) {
    qp_err(S, id);
    send_dreq(S, id);
    return Status{};
  }
  if (id.state == CM_DREQ_RCVD) {
    qp_err(S, id);
    send_drep(S, id);
    enter_timewait(S, id);
    return Status{};
  }
  return Status{EINVAL, std::string("id: in ") + CM_STATE_NAMES[id.state] + ", not connected"};
}

static void on_dreq(SessionImpl& S, Id& id, const Msg& m) {
  Dev& ds = dev_state(S, id.dev);
  if (uint32_t(m.get(F_REMOTE_QPN_EECN)) != id.local_qpn) { ds.n.rx_dropped++; emit_mad(S, id.dev, id.h, m, uint8_t(CmMadDir::Dropped), "DREQ names QPN " + hex(m.get(F_REMOTE_QPN_EECN)) + ", not " + hex(id.local_qpn)); return; }
  switch (id.state) {
    case CM_REP_SENT: case CM_MRA_REP_RCVD: case CM_ESTABLISHED: case CM_DREQ_SENT: break;
    case CM_TIMEWAIT: ds.n.rx_duplicates++; id.tid = m.hdr.tid; send_drep(S, id); return;
    case CM_DREQ_RCVD: ds.n.rx_duplicates++; return;
    default: ds.n.rx_dropped++; emit_mad(S, id.dev, id.h, m, uint8_t(CmMadDir::Dropped), std::string("DREQ in ") + CM_STATE_NAMES[id.state]); return;
  }
  const bool ours = id.state == CM_DREQ_SENT;
  disarm(id);
  id.tid = m.hdr.tid;
  set_state(S, id, CM_DREQ_RCVD, "DREQ received");
  if (ours) {                                    // both sides disconnected at once: our consumer already did
    send_drep(S, id);
    enter_timewait(S, id);
  }
  report_disconnect(S, id, 0);
}

static void on_drep(SessionImpl& S, Id& id, const Msg& m) {
  if (id.state != CM_DREQ_SENT && id.state != CM_DREQ_RCVD) { dev_state(S, id.dev).n.rx_duplicates++; return; }
  enter_timewait(S, id);
  report_disconnect(S, id, 0);
}

// ---- REJ / MRA / RTU in
static void on_rej(SessionImpl& S, Id& id, const Msg& m) {
  const uint16_t reason = uint16_t(m.get(F_REASON));
  switch (id.state) {
    case CM_REQ_SENT: case CM_MRA_REQ_RCVD: case CM_REP_SENT: case CM_MRA_REP_RCVD:
      disarm(id);
      if (reason == CM_REJ_STALE_CONN) enter_timewait(S, id); else set_state(S, id, CM_IDLE, "REJ received");
      break;
    case CM_REQ_RCVD: case CM_MRA_REQ_SENT:
      unpend(S, id);
      set_state(S, id, CM_IDLE, "REJ received");
      break;
    case CM_REP_RCVD: case CM_MRA_REP_SENT: case CM_ESTABLISHED:
      enter_timewait(S, id);
      break;
    default:
      dev_state(S, id.dev).n.rx_dropped++;
      emit_mad(S, id.dev, id.h, m, uint8_t(CmMadDir::Dropped), std::string("REJ in ") + CM_STATE_NAMES[id.state]);
      return;
  }
  event(S, id, CM_EVENT_REJECTED, reason, &m);
}

static void on_mra(SessionImpl& S, Id& id, const Msg& m) {
  const uint64_t wait = iba_time_ms(unsigned(m.get(F_SERVICE_TIMEOUT))) + iba_time_ms(id.local_ack_timeout);
  if ((id.state == CM_REQ_SENT && m.get(F_MESSAGE_MRAED) == 0) || (id.state == CM_REP_SENT && m.get(F_MESSAGE_MRAED) == 1)) {
    set_state(S, id, id.state == CM_REQ_SENT ? CM_MRA_REQ_RCVD : CM_MRA_REP_RCVD, "MRA received");
    arm(S, id, Timer::Resend, wait);             // cm_mra_handler: the outstanding MAD waits service timeout longer
    return;
  }
  dev_state(S, id.dev).n.rx_duplicates++;
}

static void on_rtu(SessionImpl& S, Id& id, const Msg& m) {
  if (id.state != CM_REP_SENT && id.state != CM_MRA_REP_RCVD) { dev_state(S, id.dev).n.rx_duplicates++; return; }
  disarm(id);
  set_state(S, id, CM_ESTABLISHED, "RTU received");
  event(S, id, CM_EVENT_ESTABLISHED, 0, &m);
}

void on_mad(SessionImpl& S, Handle dev, const Peer& from, const Msg& m) {
  const uint16_t a = m.hdr.attr_id;
  if (a == CM_ATTR_REQ) return on_req(S, dev, from, m);
  // every other message names our comm ID as its REMOTE_COMM_ID (cm_acquire_id)
  const uint32_t ours = uint32_t(m.get(F_REMOTE_COMM_ID));
  Id* id = ours ? find_local(S, dev, ours) : nullptr;
  if (id && id->remote_id && m.get(F_LOCAL_COMM_ID) && id->remote_id != m.get(F_LOCAL_COMM_ID)) id = nullptr;
  if (!id) {
    if (a == CM_ATTR_DREQ) {                     // cm.c cm_issue_drep: a DREP to a DREQ for an unknown ID
      Msg r = msg(CM_ATTR_DREP, m.hdr.tid);
      r.set(F_LOCAL_COMM_ID, m.get(F_REMOTE_COMM_ID)).set(F_REMOTE_COMM_ID, m.get(F_LOCAL_COMM_ID));
      dev_state(S, dev).n.rx_dropped++;
      return send(S, dev, from, r, nullptr);
    }
    dev_state(S, dev).n.rx_dropped++;
    emit_mad(S, dev, 0, m, uint8_t(CmMadDir::Dropped), "no CM ID with local comm ID " + hex(ours));
    return;
  }
  switch (a) {
    case CM_ATTR_MRA: return on_mra(S, *id, m);
    case CM_ATTR_REJ: return on_rej(S, *id, m);
    case CM_ATTR_REP: return on_rep(S, *id, m);
    case CM_ATTR_RTU: return on_rtu(S, *id, m);
    case CM_ATTR_DREQ: return on_dreq(S, *id, m);
    case CM_ATTR_DREP: return on_drep(S, *id, m);
    default: dev_state(S, dev).n.rx_dropped++;
  }
}

// ---- a response timeout (cm.c cm_send_handler / cm_process_send_error; ib_mad retries)
void on_timeout(SessionImpl& S, Id& id) {
  if (id.retries < id.max_cm_retries && id.have_sent) {
    id.retries++;
    dev_state(S, id.dev).n.tx_retries++;
    resend(S, id, id.sent);
    arm(S, id, Timer::Resend, id.timeout_ms);
    return;
  }
  switch (id.state) {
    case CM_REQ_SENT: case CM_MRA_REQ_RCVD: case CM_REP_SENT: case CM_MRA_REP_RCVD:
      unpend(S, id);
      set_state(S, id, CM_IDLE, "no response: retries exhausted");
      qp_err(S, id);
      event(S, id, CM_EVENT_UNREACHABLE, -ETIMEDOUT);
      break;
    case CM_DREQ_SENT:
      enter_timewait(S, id);
      report_disconnect(S, id, -ETIMEDOUT);
      break;
    case CM_SIDR_REQ_SENT:
      set_state(S, id, CM_IDLE, "no SIDR REP: retries exhausted");
      event(S, id, CM_EVENT_UNREACHABLE, -ETIMEDOUT);
      break;
    default: break;
  }
}

// ---- rdma_destroy_id (cm.c cm_destroy_id): what the state needs to tell the peer
void destroy(SessionImpl& S, Id& id) {
  Device* d = S.dev(id.dev);
  switch (id.state) {
    case CM_REQ_SENT: case CM_MRA_REQ_RCVD:
      if (d) { uint8_t guid[8]; for (int i = 0; i < 8; i++) guid[i] = uint8_t(d->node_guid >> (56 - 8 * i)); send_rej(S, id, CM_REJ_TIMEOUT, guid, 8, {}); }
      break;
    case CM_REQ_RCVD: case CM_MRA_REQ_SENT: case CM_REP_RCVD: case CM_MRA_REP_SENT: case CM_REP_SENT: case CM_MRA_REP_RCVD:
      send_rej(S, id, CM_REJ_CONSUMER_DEFINED, nullptr, 0, {});
      break;
    case CM_ESTABLISHED:
      send_dreq(S, id);
      enter_timewait(S, id);
      break;
    case CM_DREQ_SENT:
      enter_timewait(S, id);
      break;
    case CM_DREQ_RCVD:
      send_drep(S, id);
      enter_timewait(S, id);
      break;
    default: break;
  }
  unpend(S, id);
  disarm(id);
}

}  // namespace vl::cm
