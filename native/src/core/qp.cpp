// Queue pairs (rxe_qp.c, core ib_modify_qp_is_ok): creation, the state machine with per-transition
// required/optional attribute masks, address handles, post-time validation of work requests.
#include <algorithm>
#include <cerrno>

#include "core/impl.h"
#include "core/wr_info.h"

namespace vl {

static std::string mask_names(uint32_t m) {
  static const char* n[] = {"IBV_QP_STATE", "IBV_QP_CUR_STATE", "IBV_QP_EN_SQD_ASYNC_NOTIFY", "IBV_QP_ACCESS_FLAGS",
                            "IBV_QP_PKEY_INDEX", "IBV_QP_PORT", "IBV_QP_QKEY", "IBV_QP_AV", "IBV_QP_PATH_MTU",
                            "IBV_QP_TIMEOUT", "IBV_QP_RETRY_CNT", "IBV_QP_RNR_RETRY", "IBV_QP_RQ_PSN",
                            "IBV_QP_MAX_QP_RD_ATOMIC", "IBV_QP_ALT_PATH", "IBV_QP_MIN_RNR_TIMER", "IBV_QP_SQ_PSN",
                            "IBV_QP_MAX_DEST_RD_ATOMIC", "IBV_QP_PATH_MIG_STATE", "IBV_QP_CAP", "IBV_QP_DEST_QPN"};
  std::string s;
  for (int i = 0; i < 32; i++)
    if (m & (1u << i)) { if (!s.empty()) s += "|"; s += i < 21 ? n[i] : ("bit" + std::to_string(i)); }
  return s;
}

static const char* type_name(uint32_t t) { return t == QPT_RC ? "RC" : t == QPT_UC ? "UC" : "UD"; }

struct Trans { bool valid = false; uint32_t req = 0, opt = 0; };

// ib_modify_qp_is_ok table for RC/UC/UD (drivers/infiniband/core/verbs.c qp_state_table)
static Trans transition(uint32_t cur, uint32_t next, uint32_t type) {
  Trans t;
  const bool rc = type == QPT_RC, uc = type == QPT_UC, ud = type == QPT_UD;
  if (next == QPS_RESET || next == QPS_ERR) { t.valid = cur <= QPS_ERR; return t; }
  switch (cur) {
    case QPS_RESET:
      if (next == QPS_INIT) { t.valid = true; t.req = QP_PKEY_INDEX | QP_PORT | (ud ? QP_QKEY : QP_ACCESS_FLAGS); }
      break;
    case QPS_INIT:
      if (next == QPS_INIT) { t.valid = true; t.opt = QP_PKEY_INDEX | QP_PORT | (ud ? QP_QKEY : QP_ACCESS_FLAGS); }
      if (next == QPS_RTR) {
        t.valid = true;
        if (uc) t.req = QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN;
        if (rc) t.req = QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER;
        t.opt = ud ? (QP_PKEY_INDEX | QP_QKEY) : (QP_ALT_PATH | QP_ACCESS_FLAGS | QP_PKEY_INDEX);
      }
      break;
    case QPS_RTR:
      if (next == QPS_RTS) {
        t.valid = true;
        t.req = QP_SQ_PSN | (rc ? (QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC) : 0);
        t.opt = ud ? (QP_CUR_STATE | QP_QKEY)
               : uc ? (QP_CUR_STATE | QP_ALT_PATH | QP_ACCESS_FLAGS | QP_PATH_MIG_STATE)
                    : (QP_CUR_STATE | QP_ALT_PATH | QP_ACCESS_FLAGS | QP_MIN_RNR_TIMER | QP_PATH_MIG_STATE);
      }
      break;
    case QPS_RTS:
      if (next == QPS_RTS) {
        t.valid = true;
        t.opt = ud ? (QP_CUR_STATE | QP_QKEY)
               : uc ? (QP_CUR_STATE | QP_ACCESS_FLAGS | QP_ALT_PATH | QP_PATH_MIG_STATE)
                    : (QP_CUR_STATE | QP_ACCESS_FLAGS | QP_ALT_PATH | QP_PATH_MIG_STATE | QP_MIN_RNR_TIMER);
      }
      if (next == QPS_SQD) { t.valid = true; t.opt = QP_EN_SQD_ASYNC_NOTIFY; }
      break;
    case QPS_SQD:
      if (next == QPS_RTS) {
        t.valid = true;
        t.opt = ud ? (QP_CUR_STATE | QP_QKEY)
               : uc ? (QP_CUR_STATE | QP_ALT_PATH | QP_ACCESS_FLAGS | QP_PATH_MIG_STATE)
                    : (QP_CUR_STATE | QP_ALT_PATH | QP_ACCESS_FLAGS | QP_MIN_RNR_TIMER | QP_PATH_MIG_STATE);
      }
      if (next == QPS_SQD) {
        t.valid = true;
        t.opt = ud ? (QP_PKEY_INDEX | QP_QKEY)
               : uc ? (QP_AV | QP_ALT_PATH | QP_ACCESS_FLAGS | QP_PKEY_INDEX | QP_PATH_MIG_STATE)
                    : (QP_PORT | QP_AV | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC |
                       QP_MAX_DEST_RD_ATOMIC | QP_ALT_PATH | QP_ACCESS_FLAGS | QP_PKEY_INDEX | QP_MIN_RNR_TIMER |
                       QP_PATH_MIG_STATE);
      }
      break;
    case QPS_SQE:
      if (next == QPS_RTS) { t.valid = !rc; t.opt = ud ? (QP_CUR_STATE | QP_QKEY) : (QP_CUR_STATE | QP_ACCESS_FLAGS); }
      break;
  }
  return t;
}

Qp* SessionImpl::qp_by_qpn(Handle devh, uint32_t qpn) {
  Device* d = dev(devh);
  if (!d) return nullptr;
  const Handle h = d->qp_by_qpn.get(qpn);
  return h ? qp(h) : nullptr;
}

Result<QpInfo> Session::create_qp(Handle pdh, const QpInitAttr& a) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Pd* p = S.pd(pdh);
  if (!p) return rfail<QpInfo>(ENOENT, "pd: no PD with handle " + std::to_string(pdh));
  Device& d = *S.dev(p->dev);
  const Profile& pr = d.profile;
  if (a.qp_type != QPT_RC && a.qp_type != QPT_UC && a.qp_type != QPT_UD)
    return rfail<QpInfo>(EINVAL, "qp_type: must be IBV_QPT_RC (2), IBV_QPT_UC (3) or IBV_QPT_UD (4)");
  if (pr.transport == "iWARP" && a.qp_type != QPT_RC)
    return rfail<QpInfo>(EOPNOTSUPP, "qp_type: iWARP devices support RC QPs only");
  Cq* sc = S.cq(a.send_cq);
  Cq* rc = S.cq(a.recv_cq);
  if (!sc) return rfail<QpInfo>(EINVAL, "send_cq: no CQ with handle " + std::to_string(a.send_cq));
  if (!rc) return rfail<QpInfo>(EINVAL, "recv_cq: no CQ with handle " + std::to_string(a.recv_cq));
  if (sc->dev != p->dev || rc->dev != p->dev) return rfail<QpInfo>(EINVAL, "send_cq/recv_cq: CQ belongs to another device");
  if (a.srq) {
    Srq* s = S.srq(a.srq);
    if (!s) return rfail<QpInfo>(EINVAL, "srq: no SRQ with handle " + std::to_string(a.srq));
    if (s->dev != p->dev) return rfail<QpInfo>(EINVAL, "srq: SRQ belongs to another device");
  }
  const QpCap& c = a.cap;
  if (c.max_send_wr < 1 || c.max_send_wr > pr.max_qp_wr) return rfail<QpInfo>(EINVAL, "cap.max_send_wr: must be 1.." + std::to_string(pr.max_qp_wr));
  if (!a.srq && (c.max_recv_wr < 1 || c.max_recv_wr > pr.max_qp_wr)) return rfail<QpInfo>(EINVAL, "cap.max_recv_wr: must be 1.." + std::to_string(pr.max_qp_wr));
  if (c.max_send_sge > pr.max_sge) return rfail<QpInfo>(EINVAL, "cap.max_send_sge: larger than max_sge " + std::to_string(pr.max_sge));
  if (c.max_recv_sge > pr.max_sge) return rfail<QpInfo>(EINVAL, "cap.max_recv_sge: larger than max_sge " + std::to_string(pr.max_sge));
  if (c.max_inline_data > pr.max_inline_data) return rfail<QpInfo>(EINVAL, "cap.max_inline_data: larger than " + std::to_string(pr.max_inline_data));
  if (d.n_qp >= pr.max_qp) return rfail<QpInfo>(ENOMEM, "max_qp reached");
  // the GSI QP is QP1 of the port (IBA 3.5.1.1 / 13.5.1: QP1 receives every GMP, CM included); rxe_qp.c gives
  // IB_QPT_GSI its fixed number the same way
  static constexpr uint32_t kGsiQpn = 1;
  if (a.gsi && a.qp_type != QPT_UD) return rfail<QpInfo>(EINVAL, "gsi: the GSI QP has UD semantics (qp_type IBV_QPT_UD)");
  if (a.gsi && d.qp_by_qpn.count(kGsiQpn)) return rfail<QpInfo>(EEXIST, "gsi: the device already has its GSI QP (QP1)");
  if (a.gsi && d.cm_qp1) return rfail<QpInfo>(EEXIST, "gsi: QP1 belongs to the device's connection manager (cm_create_id took it)");
  // its rings at the depth asked (rxe rounds up to 2^n - 1: at most twice that), each WQE with its SGE list
  const uint64_t depth_x = pr.round_queue_depths ? 2 : 1;
  const uint64_t cost = sizeof(Qp) + depth_x * (uint64_t(c.max_send_wr) * (sizeof(SendWqe) + c.max_send_sge * sizeof(Sge) + c.max_inline_data) +
                                                (a.srq ? 0 : uint64_t(c.max_recv_wr) * (sizeof(RecvWr) + c.max_recv_sge * sizeof(Sge))));
  if (auto m = S.over_budget(cost, "qp"); !m.empty()) return rfail<QpInfo>(ENOMEM, m);
  Qp q;
  q.h = S.new_handle(); q.pd = pdh; q.dev = p->dev; q.qpn = a.gsi ? kGsiQpn : d.next_qpn++; q.init = a; q.init.pd = pdh;
  if (pr.round_queue_depths) {
    // rxe_qp_init_req / rxe_qp_init_resp: ring depths 2^n - 1 (rxe_queue_init); one send WQE holds
    // max(max_send_sge * sizeof(struct ib_sge), max_inline_data) bytes after its header, and both caps are read back
    // from that size; the granted caps are returned to the caller
    QpCap& g = q.init.cap;
    g.max_send_wr = round_depth(g.max_send_wr);
    if (!a.srq) g.max_recv_wr = round_depth(g.max_recv_wr);
    const uint32_t wqe_bytes = std::max(g.max_send_sge * 16, g.max_inline_data);
    g.max_send_sge = wqe_bytes / 16;
    g.max_inline_data = wqe_bytes;
  }
  q.state = QPS_RESET;
  d.qp_by_qpn.set(q.qpn, q.h);
  d.n_qp++; p->users++;
  QpInfo info; info.handle = q.h; info.qp_num = q.qpn; info.device = q.dev; info.init = q.init; info.attr = q.attr;
  if (S.capture) {
    auto& e = S.emit(EventKind::ObjectCreated, q.dev, q.h, "qp", std::string(type_name(a.qp_type)) + " QP " + hex(q.qpn));
    e.a = q.qpn; e.b = a.qp_type;
  }
  S.charge(q.h, cost);
  S.qps.emplace(q.h, std::move(q));
  return rok(info);
}

void SessionImpl::set_qp_state(Qp& q, uint32_t st, const std::string& why) {
  uint32_t old = q.state;
  q.state = st; q.attr.qp_state = st; q.attr.cur_qp_state = st;
  if (capture) {
    auto& e = emit(EventKind::QpState, q.dev, q.h, "qp", std::string(qp_state_name(old)) + " -> " + qp_state_name(st) + (why.empty() ? "" : ": " + why));
    e.a = old; e.b = st; e.c = q.qpn;
  }
}

void SessionImpl::flush_qp(Qp& q) {
  // every outstanding send WQE completes with IBV_WC_WR_FLUSH_ERR (in order), then every receive WQE
  while (!q.sq.empty()) {
    SendWqe& w = q.sq.front();
    complete_wqe(q, w, w.state == WqeState::Error ? w.status : WC_WR_FLUSH_ERR);
  }
  q.req_idx = 0; q.req_offset = 0; q.rd_atomic_outstanding = 0;
  q.timer_gen++; q.timer_armed = false; q.rnr_wait = false;
  Cq* rc = cq(q.init.recv_cq);
  while (!q.rq.empty()) {
    Wc wc; wc.wr_id = q.rq.front().wr_id; wc.status = WC_WR_FLUSH_ERR; wc.opcode = WC_RECV; wc.qp_num = q.qpn;
    q.rq.pop_front();
    if (rc) cq_post(*rc, wc, false, q.h);
  }
  q.have_wqe = false;
}

// SQD: once no started WQE is outstanding, the SQ is drained (IBV_EVENT_SQ_DRAINED if requested)
void SessionImpl::check_sq_drained(Qp& q) {
  if (q.state != QPS_SQD || !q.sqd_notify) return;
  for (size_t i = 0; i < q.sq.size(); i++)
    if (q.sq[i].state != WqeState::Posted) return;
  if (q.req_offset) return;
  q.sqd_notify = false;
  async_event(q.dev, q.h, "qp", EVENT_SQ_DRAINED, "IBV_EVENT_SQ_DRAINED: no outstanding send WQEs");
}

void SessionImpl::qp_to_error(Qp& q, const std::string& why) {
  if (q.state == QPS_ERR) return;
  set_qp_state(q, QPS_ERR, why);
  flush_qp(q);
}

static void reset_qp(Qp& q) {
  q.sq.clear(); q.rq.clear(); q.req_idx = 0; q.req_offset = 0; q.rd_atomic_outstanding = 0;
  q.timer_gen++; q.timer_armed = false; q.rnr_wait = false; q.pkts_since_ack = 0;
  q.resp_last_opcode = 0xFF; q.nak_sent = false; q.uc_drop = false; q.have_wqe = false; q.msn = 0;
  q.w_remaining = 0; q.res.clear(); q.res_next = 0; q.flush_rule = nullptr;
}

Status Session::modify_qp(Handle qph, const QpAttr& a, uint32_t mask) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Qp* qq = S.qp(qph);
  if (!qq) return fail(ENOENT, "qp: no QP with handle " + std::to_string(qph));
  Qp& q = *qq;
  Device& d = *S.dev(q.dev);
  const uint32_t type = q.init.qp_type;
  if (mask & ~((1u << 21) - 1)) return fail(EINVAL, "attr_mask: unknown bits " + hex(mask & ~((1u << 21) - 1)));
  if (mask & QP_CUR_STATE && a.cur_qp_state != q.state)
    return fail(EINVAL, std::string("cur_qp_state: QP is in ") + qp_state_name(q.state) + ", not " + qp_state_name(a.cur_qp_state));
  uint32_t cur = q.state;
  uint32_t next = (mask & QP_STATE) ? a.qp_state : cur;
  if (next > QPS_ERR) return fail(EINVAL, "qp_state: invalid value " + std::to_string(next));
  Trans t = transition(cur, next, type);
  std::string tr = std::string(qp_state_name(cur)) + "->" + qp_state_name(next) + " (" + type_name(type) + ")";
  if (!t.valid) return fail(EINVAL, "qp_state: transition " + tr + " is not allowed");
  uint32_t given = mask & ~QP_STATE;
  if (uint32_t missing = t.req & ~given) return fail(EINVAL, "attr_mask: missing " + mask_names(missing) + " for " + tr);
  if (next != QPS_RESET && next != QPS_ERR)
    if (uint32_t extra = given & ~(t.req | t.opt)) return fail(EINVAL, "attr_mask: " + mask_names(extra) + " not allowed for " + tr);
  // values
  const Profile& pr = d.profile;
  if (mask & QP_PKEY_INDEX && a.pkey_index != 0) return fail(EINVAL, "pkey_index: only index 0 (0xffff) exists");
  if (mask & QP_PORT && a.port_num != 1) return fail(EINVAL, "port_num: only port 1 exists");
  if (mask & QP_ACCESS_FLAGS && (a.qp_access_flags & ~(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC)))
    return fail(EINVAL, "qp_access_flags: only LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC are allowed");
  if (mask & QP_PATH_MTU) {
    if (a.path_mtu < MTU_256 || a.path_mtu > MTU_4096) return fail(EINVAL, "path_mtu: must be IBV_MTU_256..IBV_MTU_4096 (1..5)");
    if (a.path_mtu > pr.active_mtu) return fail(EINVAL, "path_mtu: " + std::to_string(mtu_bytes(a.path_mtu)) + " larger than the port's active_mtu " + std::to_string(mtu_bytes(pr.active_mtu)));
  }
  if (mask & QP_AV) {
    if (!(d.port && a.dest_device == 0) && !S.dev(a.dest_device))   // on a network: 0 = the remote host in dgid
      return fail(EINVAL, "dest_device: no device with handle " + std::to_string(a.dest_device) + " (address vector)");
    if (a.sgid_index >= d.gids.size()) return fail(EINVAL, "sgid_index: only GID 0.." + std::to_string(d.gids.size() - 1) + " exist");
    // on the network, a connected QP's AV is resolved by ib_core at modify (ib_resolve_eth_dmac, verbs.c), which
    // refuses a source and destination GID of different IP versions with EINVAL (gid_family_mismatch, impl.h)
    if (d.port && (type == QPT_RC || type == QPT_UC))
      if (auto why = gid_family_mismatch(d.gids[a.sgid_index].gid, a.dgid); !why.empty()) return fail(EINVAL, why);
  }
  if (mask & QP_DEST_QPN && a.dest_qp_num > 0xFFFFFF) return fail(EINVAL, "dest_qp_num: more than 24 bits");
  if (mask & QP_RQ_PSN && a.rq_psn > 0xFFFFFF) return fail(EINVAL, "rq_psn: more than 24 bits");
  if (mask & QP_SQ_PSN && a.sq_psn > 0xFFFFFF) return fail(EINVAL, "sq_psn: more than 24 bits");
  if (mask & QP_MAX_QP_RD_ATOMIC && a.max_rd_atomic > pr.max_qp_init_rd_atom) return fail(EINVAL, "max_rd_atomic: larger than max_qp_init_rd_atom " + std::to_string(pr.max_qp_init_rd_atom));
  if (mask & QP_MAX_DEST_RD_ATOMIC && a.max_dest_rd_atomic > pr.max_qp_rd_atom) return fail(EINVAL, "max_dest_rd_atomic: larger than max_qp_rd_atom " + std::to_string(pr.max_qp_rd_atom));
  if (mask & QP_TIMEOUT && a.timeout > 31) return fail(EINVAL, "timeout: must be 0..31");
  if (mask & QP_RETRY_CNT && a.retry_cnt > 7) return fail(EINVAL, "retry_cnt: must be 0..7");
  if (mask & QP_RNR_RETRY && a.rnr_retry > 7) return fail(EINVAL, "rnr_retry: must be 0..7");
  if (mask & QP_MIN_RNR_TIMER && a.min_rnr_timer > 31) return fail(EINVAL, "min_rnr_timer: must be 0..31");
  if (mask & QP_ALT_PATH) return fail(EOPNOTSUPP, "attr_mask: IBV_QP_ALT_PATH (APM) is not supported");
  // commit attributes
  QpAttr& A = q.attr;
  if (mask & QP_ACCESS_FLAGS) A.qp_access_flags = a.qp_access_flags;
  if (mask & QP_PKEY_INDEX) A.pkey_index = a.pkey_index;
  if (mask & QP_PORT) A.port_num = a.port_num;
  if (mask & QP_QKEY) A.qkey = a.qkey;
  if (mask & QP_AV) { A.dest_device = a.dest_device; A.sgid_index = a.sgid_index; std::memcpy(A.dgid, a.dgid, 16); }
  if (mask & QP_PATH_MTU) A.path_mtu = a.path_mtu;
  if (mask & QP_TIMEOUT) A.timeout = a.timeout;
  if (mask & QP_RETRY_CNT) { A.retry_cnt = a.retry_cnt; q.retry_left = a.retry_cnt; }
  if (mask & QP_RNR_RETRY) { A.rnr_retry = a.rnr_retry; q.rnr_left = a.rnr_retry; }
  if (mask & QP_RQ_PSN) { A.rq_psn = a.rq_psn; q.resp_psn = a.rq_psn; }
  if (mask & QP_SQ_PSN) { A.sq_psn = a.sq_psn; q.req_psn = a.sq_psn; q.comp_psn = a.sq_psn; }
  if (mask & QP_MAX_QP_RD_ATOMIC) A.max_rd_atomic = a.max_rd_atomic;
  if (mask & QP_MAX_DEST_RD_ATOMIC) { A.max_dest_rd_atomic = a.max_dest_rd_atomic; q.res.assign(a.max_dest_rd_atomic, RespRes{}); q.res_next = 0; }
  if (mask & QP_MIN_RNR_TIMER) A.min_rnr_timer = a.min_rnr_timer;
  if (mask & QP_DEST_QPN) A.dest_qp_num = a.dest_qp_num;
  if (mask & QP_STATE && next != cur) {
    if (next == QPS_RESET) { reset_qp(q); if (S.nvmf) S.nvmf_qp_gone(q.h); S.set_qp_state(q, next, "modify_qp"); }
    else if (next == QPS_ERR) S.qp_to_error(q, "modify_qp");
    else S.set_qp_state(q, next, "modify_qp");
    if (next == QPS_RTS) S.schedule_req(q);
    if (next == QPS_SQD) { q.sqd_notify = mask & QP_EN_SQD_ASYNC_NOTIFY; S.check_sq_drained(q); }
  } else if (S.capture) {
    auto& e = S.emit(EventKind::ObjectModified, q.dev, q.h, "qp", "modify_qp " + mask_names(mask));
    e.a = mask; e.why(Change::ModifyQp);
  }
  return ok();
}

std::optional<QpInfo> Session::query_qp(Handle qph) const {
  auto lk_ = impl_->lock();
  auto it = impl_->qps.find(qph);
  if (it == impl_->qps.end()) return std::nullopt;
  const Qp& q = it->second;
  QpInfo i; i.handle = q.h; i.qp_num = q.qpn; i.device = q.dev; i.init = q.init; i.attr = q.attr;
  i.attr.qp_state = i.attr.cur_qp_state = q.state;
  i.attr.sq_psn = q.req_psn; i.attr.rq_psn = q.resp_psn;
  return i;
}

Status Session::destroy_qp(Handle qph) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Qp* q = S.qp(qph);
  if (!q) return fail(ENOENT, "qp: no QP with handle " + std::to_string(qph));
  for (auto& [h, w] : S.mws)
    if (w.qp == qph && w.type == MW_TYPE_2 && w.state == KeyState::Valid) {   // type 2 windows die with their QP
      if (Mr* m = S.mr(w.mr)) m->bound_mws--;
      w.mr = 0; w.qp = 0; w.length = 0; w.state = KeyState::Free;
      if (S.capture) {   // the key table must see it: the window is FREE now, its rkey unusable
        auto& e = S.emit(EventKind::ObjectModified, w.dev, h, "mw", "QP " + hex(q->qpn) + " destroyed: MW " + key_text(w.rkey) + " free");
        e.a = w.rkey; e.why(Change::QpDestroyed).state(KeyState::Free);
      }
    }
  if (S.nvmf) S.nvmf_qp_gone(qph);
  Device& d = *S.dev(q->dev);
  d.qp_by_qpn.erase(q->qpn);
  d.n_qp--;
  S.pd(q->pd)->users--;
  S.emit_obj(EventKind::ObjectDestroyed, q->dev, qph, "qp", "QP " + hex(q->qpn));
  S.qps.erase(qph);
  S.uncharge(qph);
  return ok();
}

Result<Handle> Session::create_ah(Handle pdh, Handle dest_device, uint32_t sgid_index) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Pd* p = S.pd(pdh);
  if (!p) return rfail<Handle>(ENOENT, "pd: no PD with handle " + std::to_string(pdh));
  if (!S.dev(dest_device)) return rfail<Handle>(EINVAL, "dest_device: no device with handle " + std::to_string(dest_device));
  if (sgid_index > 1) return rfail<Handle>(EINVAL, "sgid_index: only GID 0 and 1 exist");
  if (auto m = S.over_budget(sizeof(Ah), "ah"); !m.empty()) return rfail<Handle>(ENOMEM, m);
  Ah a; a.h = S.new_handle(); a.pd = pdh; a.dev = p->dev; a.dest_device = dest_device; a.sgid_index = sgid_index;
  S.ahs.emplace(a.h, a);
  S.charge(a.h, sizeof(Ah));
  p->users++;
  if (S.capture) { auto& e = S.emit(EventKind::ObjectCreated, p->dev, a.h, "ah"); e.a = dest_device; }
  return rok(a.h);
}

bool SessionImpl::take_recv_wqe(Qp& q, RecvWr& out, bool& from_srq) {
  if (q.init.srq) {
    Srq* s = srq(q.init.srq);
    if (!s || s->q.empty()) return false;
    out = std::move(s->q.front());
    s->q.pop_front();
    from_srq = true;
    if (s->limit && s->q.size() < s->limit) {
      async_event(s->dev, s->h, "srq", EVENT_SRQ_LIMIT_REACHED,
                  "IBV_EVENT_SRQ_LIMIT_REACHED: " + std::to_string(s->q.size()) + " WQE(s) < limit " + std::to_string(s->limit));
      s->limit = 0;   // one-shot: disarmed
    }
    return true;
  }
  if (q.rq.empty()) return false;
  out = std::move(q.rq.front());
  q.rq.pop_front();
  from_srq = false;
  return true;
}

PostResult SessionImpl::post_send_impl(Handle qph, const std::vector<SendWr>& wrs, bool internal) {
  PostResult r;
  Qp* qq = qp(qph);
  if (!qq) { r.err = ENOENT; r.msg = "qp: no QP with handle " + std::to_string(qph); return r; }
  Qp& q = *qq;
  const Profile& pr = dev(q.dev)->profile;
  const uint32_t type = q.init.qp_type;
  // A failing WR stops the post, but the WRs before it are posted (ibv_post_send's bad_wr): the requester is
  // scheduled for them as after a full post (rxe rings the doorbell after its loop either way).
  auto bad = [&](size_t i, int err, std::string msg) {
    r.err = err; r.bad_wr = i; r.msg = "wr[" + std::to_string(i) + "]" + msg;
    if (i > 0) { schedule_req(q); if (inline_run) run_to_idle(); }
    return r;
  };
  if (q.state == QPS_RESET || q.state == QPS_INIT || q.state == QPS_RTR) {
    r.err = EINVAL; r.msg = std::string("qp: state ") + qp_state_name(q.state) + ", post_send needs RTS"; return r;
  }
  for (size_t i = 0; i < wrs.size(); i++) {
    const SendWr& w = wrs[i];
    uint32_t op = w.opcode;
    const WrOpInfo* info = wr_op_info(op);   // the opcode's facts (core/wr_info.h)
    if (!info) return bad(i, EINVAL, ".opcode: unknown opcode " + std::to_string(op));
    const bool read = info->flags & WRF_READ;
    if (!(info->qp_types & wr_qp_type_bit(type)))
      return bad(i, EINVAL, std::string(".opcode: ") + wr_op_name(op) + " is not valid on a " + type_name(type) + " QP");
    // RDMA READ with invalidate is iWARP's (core rw.c uses it where rdma_cap_read_inv(), i.e. rdma_protocol_iwarp);
    // rxe takes it at post time and fails it in the requester (profile flag read_with_inv_loc_qp_op_err)
    if (op == WR_RDMA_READ_WITH_INV && !pr.read_with_inv && !pr.read_with_inv_loc_qp_op_err)
      return bad(i, EINVAL, ".opcode: IB_WR_RDMA_READ_WITH_INV is iWARP only (rdma_cap_read_inv); " + pr.name + " has no such work request");
    if ((info->flags & WRF_ATOMIC) && pr.atomic_cap == ATOMIC_NONE)
      return bad(i, EOPNOTSUPP, std::string(".opcode: ") + wr_op_name(op) + " needs atomic_cap, device has IBV_ATOMIC_NONE");
    if ((info->flags & WRF_MEM_MGT) && !(pr.device_cap_flags & DEVICE_MEM_MGT_EXTENSIONS))
      return bad(i, EOPNOTSUPP, std::string(".opcode: ") + wr_op_name(op) + " needs IBV_DEVICE_MEM_MGT_EXTENSIONS");
    if ((info->flags & WRF_MW) && !(pr.device_cap_flags & DEVICE_MEM_WINDOW))
      return bad(i, EOPNOTSUPP, std::string(".opcode: ") + wr_op_name(op) + " needs IBV_DEVICE_MEM_WINDOW");
    if (w.sg_list.size() > q.init.cap.max_send_sge)
      return bad(i, EINVAL, ".sg_list: " + std::to_string(w.sg_list.size()) + " SGEs > max_send_sge " + std::to_string(q.init.cap.max_send_sge));
    if (q.sq.size() >= q.init.cap.max_send_wr)
      return bad(i, ENOMEM, ": send queue full (" + std::to_string(q.init.cap.max_send_wr) + " WRs)");
    uint64_t len = 0;
    for (auto& s : w.sg_list) len += s.length;
    // built in the ring's next slot, committed once every check passed; the slot's old SGE list and inline buffer keep
    // their storage (copy-assign), so a post allocates nothing
    SendWqe& e = q.sq.next_back();
    {
      std::vector<Sge> sg = std::move(e.wr.sg_list);
      std::vector<uint8_t> inl = std::move(e.wr.inline_data);
      e = SendWqe{};
      e.wr.sg_list = std::move(sg); e.wr.inline_data = std::move(inl);
    }
    e.wr = w;
    bool is_inline = w.send_flags & SEND_INLINE;
    if (is_inline) {
      if (op != WR_SEND && op != WR_SEND_WITH_IMM && op != WR_RDMA_WRITE && op != WR_RDMA_WRITE_WITH_IMM && op != WR_SEND_WITH_INV)
        return bad(i, EINVAL, std::string(".send_flags: IBV_SEND_INLINE is not valid with ") + wr_op_name(op));
      uint64_t ilen = w.inline_data.empty() ? len : w.inline_data.size();
      if (ilen > q.init.cap.max_inline_data)
        return bad(i, EINVAL, ".inline_data: " + std::to_string(ilen) + " bytes > max_inline_data " + std::to_string(q.init.cap.max_inline_data));
      if (w.inline_data.empty()) {                 // gather now; "the L_Key will not be checked"
        e.wr.inline_data.resize(len);
        uint64_t off = 0;
        for (size_t k = 0; k < w.sg_list.size(); k++) {
          const uint8_t* p = host(w.sg_list[k].addr, w.sg_list[k].length);
          if (!p) return bad(i, EINVAL, ".sg_list[" + std::to_string(k) + "]: inline source not inside a buffer");
          std::memcpy(e.wr.inline_data.data() + off, p, w.sg_list[k].length);
          off += w.sg_list[k].length;
        }
      }
      len = e.wr.inline_data.size();
    }
    if (read && pr.transport == "iWARP" && w.sg_list.size() > 1)
      return bad(i, EINVAL, ".sg_list: iWARP RDMA READ places data into one sink STag (one SGE)");
    // the sink STag it invalidates is the one SGE's lkey (siw_qp_rx.c siw_rdmap_complete, iw_cxgb4 post_send)
    if (op == WR_RDMA_READ_WITH_INV && pr.read_with_inv && w.sg_list.size() != 1)
      return bad(i, EINVAL, ".sg_list: IB_WR_RDMA_READ_WITH_INV needs one SGE, the sink whose lkey it invalidates");
    if (op == WR_ATOMIC_CMP_AND_SWP || op == WR_ATOMIC_FETCH_AND_ADD) {
      if (w.sg_list.size() != 1 || w.sg_list[0].length < 8) return bad(i, EINVAL, ".sg_list: atomics need one SGE of at least 8 bytes");
      if (w.remote_addr & 7) return bad(i, EINVAL, ".remote_addr: atomic target " + hex(w.remote_addr) + " is not 8-byte aligned");
      len = 8;
    }
    if (op == WR_BIND_MW) {
      if (!w.sg_list.empty() || is_inline) return bad(i, EINVAL, ": IBV_WR_BIND_MW takes no SGEs");
      Mw* m = mw(w.mw);
      if (!m) return bad(i, EINVAL, ".mw: no MW with handle " + std::to_string(w.mw));
      if (m->type == MW_TYPE_1 && !internal) return bad(i, EINVAL, ".mw: type 1 windows are bound with ibv_bind_mw()");
      if (w.bind_length && !w.bind_mr) return bad(i, EINVAL, ".bind_mr: a non-zero length bind needs an MR");
      len = 0;
    }
    if (op == WR_REG_MR) {
      if (!mr(w.reg_mr)) return bad(i, EINVAL, ".reg_mr: no MR with handle " + std::to_string(w.reg_mr));
      len = 0;
    }
    if (op == WR_LOCAL_INV) len = 0;
    if (len > (1ull << 31)) return bad(i, EINVAL, ": message length " + std::to_string(len) + " > 2^31");
    if (type == QPT_UD) {
      Ah* a = ahs.count(w.ah) ? &ahs[w.ah] : nullptr;
      if (!a) return bad(i, EINVAL, ".ah: no address handle " + std::to_string(w.ah));
      if (a->pd != q.pd) return bad(i, EINVAL, ".ah: AH belongs to another PD");
      if (len > mtu_bytes(pr.active_mtu)) return bad(i, EINVAL, ": UD message of " + std::to_string(len) + " bytes > MTU");
    }
    e.length = len;
    e.local = op == WR_LOCAL_INV || op == WR_BIND_MW || op == WR_REG_MR;
    e.signaled = (w.send_flags & SEND_SIGNALED) || q.init.sq_sig_all;
    q.sq.commit_back();
    q.sq_posted++;
    if (capture) {
      auto& ev = emit(EventKind::WqePosted, q.dev, q.h, "qp", std::string(wr_op_name(op)) + " wr_id " + std::to_string(w.wr_id));
      ev.a = w.wr_id; ev.b = op; ev.c = len; ev.d = q.sq.size();
    }
  }
  schedule_req(q);
  if (inline_run) run_to_idle();
  return r;
}

PostResult Session::post_send(Handle qph, const std::vector<SendWr>& wrs) {
  auto lk_ = impl_->lock();
  return impl_->post_send_impl(qph, wrs, false);
}

PostResult Session::post_recv(Handle qph, const std::vector<RecvWr>& wrs) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  PostResult r;
  Qp* qq = S.qp(qph);
  if (!qq) { r.err = ENOENT; r.msg = "qp: no QP with handle " + std::to_string(qph); return r; }
  Qp& q = *qq;
  if (q.init.srq) { r.err = EINVAL; r.msg = "qp: QP " + hex(q.qpn) + " receives through an SRQ (use post_srq_recv)"; return r; }
  if (q.state == QPS_RESET) { r.err = EINVAL; r.msg = "qp: state RESET, post_recv needs INIT or later"; return r; }
  for (size_t i = 0; i < wrs.size(); i++) {
    const RecvWr& w = wrs[i];
    std::string idx = "wr[" + std::to_string(i) + "]";
    if (w.sg_list.size() > q.init.cap.max_recv_sge) { r.err = EINVAL; r.bad_wr = i; r.msg = idx + ".sg_list: " + std::to_string(w.sg_list.size()) + " SGEs > max_recv_sge " + std::to_string(q.init.cap.max_recv_sge); return r; }
    if (q.rq.size() >= q.init.cap.max_recv_wr) { r.err = ENOMEM; r.bad_wr = i; r.msg = idx + ": receive queue full (" + std::to_string(q.init.cap.max_recv_wr) + " WRs)"; return r; }
    q.rq.push_back(w);
    q.rq_posted++;
    if (S.capture) { auto& e = S.emit(EventKind::WqePosted, q.dev, q.h, "qp", "RECV wr_id " + std::to_string(w.wr_id)); e.a = w.wr_id; e.b = 128; e.d = q.rq.size(); }
  }
  if (q.state == QPS_ERR) S.flush_qp(q);
  if (S.inline_run) S.run_to_idle();
  return r;
}

}  // namespace vl
