// vl:: results to JS values (objects.h).
#include "objects.h"

#include "vl/wire.h"
#include "event_json.h"

namespace vladdon {

Napi::Object StatusObj(Napi::Env env, const vl::Status& s) {
  auto o = Napi::Object::New(env);
  o.Set("err", Napi::Number::New(env, s.err));
  o.Set("msg", Napi::String::New(env, s.msg));
  return o;
}

Napi::Object SgeObj(Napi::Env env, const vl::Sge& s) {
  auto o = Napi::Object::New(env);
  o.Set("addr", U64(env, s.addr));
  o.Set("length", Napi::Number::New(env, s.length));
  o.Set("lkey", Napi::Number::New(env, s.lkey));
  return o;
}

Napi::Object ProfileObj(Napi::Env env, const vl::Profile& p) {
  auto o = Napi::Object::New(env);
  o.Set("name", p.name);
  o.Set("description", p.description);
  o.Set("transport", p.transport);
  o.Set("deviceCapFlags", U64(env, p.device_cap_flags));
  o.Set("atomicCap", Napi::Number::New(env, p.atomic_cap));
#define N(js, f) o.Set(js, Napi::Number::New(env, p.f))
  N("maxQp", max_qp); N("maxQpWr", max_qp_wr); N("maxSge", max_sge); N("maxCq", max_cq); N("maxCqe", max_cqe);
  N("maxMr", max_mr); N("maxPd", max_pd); N("maxMw", max_mw); N("maxSrq", max_srq); N("maxSrqWr", max_srq_wr);
  N("maxSrqSge", max_srq_sge); N("maxQpRdAtom", max_qp_rd_atom); N("maxQpInitRdAtom", max_qp_init_rd_atom);
  N("maxFastRegPageListLen", max_fast_reg_page_list_len); N("maxInlineData", max_inline_data);
  N("activeMtu", active_mtu);
#undef N
  o.Set("maxMrSize", U64(env, p.max_mr_size));
  o.Set("pageSizeCap", U64(env, p.page_size_cap));
  o.Set("indirectReg", Napi::Boolean::New(env, p.indirect_reg));
  o.Set("zeroBasedMr", Napi::Boolean::New(env, p.zero_based_mr));
  o.Set("readWithInv", Napi::Boolean::New(env, p.read_with_inv));
  o.Set("lkeyEqRkey", Napi::Boolean::New(env, p.lkey_eq_rkey));
  o.Set("notifyReportsMissed", Napi::Boolean::New(env, p.notify_reports_missed));
  o.Set("keyBytePolicy", p.key_byte_policy);
  // where the profile behaves as Linux rxe rather than the IBA / ConnectX (session.h; app/protocol/quirks.ts)
  auto q = Napi::Object::New(env);
#define B(js, f) q.Set(js, Napi::Boolean::New(env, p.f))
  B("localInvWaitsAll", local_inv_waits_all); B("recvCqOverflowNoAck", recv_cq_overflow_no_ack);
  B("sendCqOverflowKeepsRts", send_cq_overflow_keeps_rts); B("errorWcNotSolicited", error_wc_not_solicited);
  B("reregPdAccessOnly", rereg_pd_access_only); B("roundQueueDepths", round_queue_depths); B("wcFlagsRxe", wc_flags_rxe);
  B("recvTooSmallIsMalformed", recv_too_small_is_malformed); B("invalidateChecksPd", invalidate_checks_pd);
  B("regMrWrChecksAccess", reg_mr_wr_checks_access);
#undef B
  q.Set("deregBoundMrErrno", Napi::Number::New(env, p.dereg_bound_mr_errno));
  q.Set("localKeyErrorStatus", Napi::Number::New(env, p.local_key_error_status));
  o.Set("quirks", q);
  return o;
}

Napi::Object DeviceObj(Napi::Env env, const vl::DeviceInfo& d) {
  auto o = Napi::Object::New(env);
  o.Set("handle", Napi::Number::New(env, d.handle));
  o.Set("name", d.name);
  o.Set("profile", ProfileObj(env, d.profile));
  char guid[24];
  std::snprintf(guid, sizeof guid, "%016llx", static_cast<unsigned long long>(d.node_guid));
  o.Set("nodeGuid", guid);
  auto gids = Napi::Array::New(env, d.gids.size());
  for (size_t i = 0; i < d.gids.size(); ++i) {
    auto g = Napi::Object::New(env);
    g.Set("index", Napi::Number::New(env, d.gids[i].index));
    g.Set("gid", GidText(d.gids[i].gid));
    g.Set("type", d.gids[i].type);
    gids.Set(static_cast<uint32_t>(i), g);
  }
  o.Set("gids", gids);
  o.Set("portState", Napi::Number::New(env, d.port_state));
  return o;
}

Napi::Object MrObj(Napi::Env env, const vl::MrInfo& m) {
  auto o = Napi::Object::New(env);
  o.Set("handle", Napi::Number::New(env, m.handle));
  o.Set("pd", Napi::Number::New(env, m.pd));
  o.Set("lkey", Napi::Number::New(env, m.lkey));
  o.Set("rkey", Napi::Number::New(env, m.rkey));
  o.Set("addr", U64(env, m.addr));
  o.Set("length", U64(env, m.length));
  o.Set("iova", U64(env, m.iova));
  o.Set("access", Napi::Number::New(env, m.access));
  o.Set("kind", m.kind);
  o.Set("state", m.state);
  auto sg = Napi::Array::New(env, m.sg.size());
  for (size_t i = 0; i < m.sg.size(); ++i) sg.Set(static_cast<uint32_t>(i), SgeObj(env, m.sg[i]));
  o.Set("sg", sg);
  return o;
}

Napi::Object MwObj(Napi::Env env, const vl::MwInfo& w) {
  auto o = Napi::Object::New(env);
  o.Set("handle", Napi::Number::New(env, w.handle));
  o.Set("pd", Napi::Number::New(env, w.pd));
  o.Set("rkey", Napi::Number::New(env, w.rkey));
  o.Set("type", Napi::Number::New(env, w.type));
  o.Set("state", w.state);
  o.Set("mr", Napi::Number::New(env, w.mr));
  o.Set("qp", Napi::Number::New(env, w.qp));
  o.Set("addr", U64(env, w.addr));
  o.Set("length", U64(env, w.length));
  o.Set("access", Napi::Number::New(env, w.access));
  return o;
}

Napi::Object QpObj(Napi::Env env, const vl::QpInfo& q) {
  auto o = Napi::Object::New(env);
  o.Set("handle", Napi::Number::New(env, q.handle));
  o.Set("qpNum", Napi::Number::New(env, q.qp_num));
  o.Set("device", Napi::Number::New(env, q.device));
  auto init = Napi::Object::New(env);
  init.Set("pd", Napi::Number::New(env, q.init.pd));
  init.Set("sendCq", Napi::Number::New(env, q.init.send_cq));
  init.Set("recvCq", Napi::Number::New(env, q.init.recv_cq));
  init.Set("srq", Napi::Number::New(env, q.init.srq));
  init.Set("qpType", Napi::Number::New(env, q.init.qp_type));
  init.Set("sqSigAll", Napi::Boolean::New(env, q.init.sq_sig_all));
  auto cap = Napi::Object::New(env);
  cap.Set("maxSendWr", Napi::Number::New(env, q.init.cap.max_send_wr));
  cap.Set("maxRecvWr", Napi::Number::New(env, q.init.cap.max_recv_wr));
  cap.Set("maxSendSge", Napi::Number::New(env, q.init.cap.max_send_sge));
  cap.Set("maxRecvSge", Napi::Number::New(env, q.init.cap.max_recv_sge));
  cap.Set("maxInlineData", Napi::Number::New(env, q.init.cap.max_inline_data));
  init.Set("cap", cap);
  o.Set("init", init);
  auto a = Napi::Object::New(env);
  const vl::QpAttr& t = q.attr;
#define N(js, f) a.Set(js, Napi::Number::New(env, t.f))
  N("qpState", qp_state); N("curQpState", cur_qp_state); N("pathMtu", path_mtu); N("qpAccessFlags", qp_access_flags);
  N("qkey", qkey); N("rqPsn", rq_psn); N("sqPsn", sq_psn); N("destQpNum", dest_qp_num); N("pkeyIndex", pkey_index);
  N("portNum", port_num); N("maxRdAtomic", max_rd_atomic); N("maxDestRdAtomic", max_dest_rd_atomic);
  N("minRnrTimer", min_rnr_timer); N("timeout", timeout); N("retryCnt", retry_cnt); N("rnrRetry", rnr_retry);
  N("sgidIndex", sgid_index); N("destDevice", dest_device);
#undef N
  a.Set("dgid", GidText(t.dgid));
  o.Set("attr", a);
  return o;
}

Napi::Object WcObj(Napi::Env env, const vl::Wc& w) {
  auto o = Napi::Object::New(env);
  o.Set("wrId", U64(env, w.wr_id));
#define N(js, f) o.Set(js, Napi::Number::New(env, w.f))
  N("status", status); N("opcode", opcode); N("vendorErr", vendor_err); N("byteLen", byte_len); N("immData", imm_data);
  N("invalidatedRkey", invalidated_rkey); N("qpNum", qp_num); N("srcQp", src_qp); N("wcFlags", wc_flags);
  N("pkeyIndex", pkey_index); N("slid", slid); N("sl", sl); N("dlidPathBits", dlid_path_bits);
#undef N
  return o;
}

Napi::Object PacketObj(Napi::Env env, const std::vector<uint8_t>& bytes) {
  auto o = Napi::Object::New(env);
  o.Set("len", Napi::Number::New(env, static_cast<double>(bytes.size())));
  o.Set("hex", HexOf(bytes.data(), bytes.size()));
  vl::wire::Packet p;
  std::string err;
  if (!vl::wire::decode(bytes.data(), bytes.size(), p, &err)) {
    o.Set("error", err.empty() ? std::string("malformed packet") : err);
    return o;
  }
  const uint32_t m = vl::wire::opcode_mask(p.opcode);
  o.Set("opcode", Napi::Number::New(env, p.opcode));
  const char* name = vl::wire::opcode_name(p.opcode);
  o.Set("opcodeName", name ? name : "unknown");
  o.Set("se", Napi::Boolean::New(env, p.se));
  o.Set("mig", Napi::Boolean::New(env, p.mig));
  o.Set("pad", Napi::Number::New(env, p.pad));
  o.Set("tver", Napi::Number::New(env, p.tver));
  o.Set("pkey", Napi::Number::New(env, p.pkey));
  o.Set("fecnBecnResv", Napi::Number::New(env, p.fecn_becn_resv));
  o.Set("destQp", Napi::Number::New(env, p.dest_qp));
  o.Set("ackReq", Napi::Boolean::New(env, p.ack_req));
  o.Set("psn", Napi::Number::New(env, p.psn));
  if (m & vl::wire::H_RETH) {
    auto h = Napi::Object::New(env);
    h.Set("va", U64(env, p.reth_va)); h.Set("rkey", Napi::Number::New(env, p.reth_rkey)); h.Set("dmaLen", Napi::Number::New(env, p.reth_dmalen));
    o.Set("reth", h);
  }
  if (m & vl::wire::H_AETH) {
    auto h = Napi::Object::New(env);
    h.Set("syndrome", Napi::Number::New(env, p.aeth_syndrome));
    h.Set("text", vl::wire::syndrome_text(p.aeth_syndrome));
    h.Set("msn", Napi::Number::New(env, p.aeth_msn));
    o.Set("aeth", h);
  }
  if (m & vl::wire::H_ATOMICETH) {
    auto h = Napi::Object::New(env);
    h.Set("va", U64(env, p.atomic_va)); h.Set("rkey", Napi::Number::New(env, p.atomic_rkey));
    h.Set("swapAdd", U64(env, p.atomic_swap_add)); h.Set("compare", U64(env, p.atomic_compare));
    o.Set("atomicEth", h);
  }
  if (m & vl::wire::H_ATOMICACKETH) {
    auto h = Napi::Object::New(env);
    h.Set("orig", U64(env, p.atomic_ack_orig));
    o.Set("atomicAckEth", h);
  }
  if (m & vl::wire::H_IMMDT) o.Set("immdt", Napi::Number::New(env, p.immdt));
  if (m & vl::wire::H_IETH) o.Set("iethRkey", Napi::Number::New(env, p.ieth_rkey));
  if (m & vl::wire::H_DETH) {
    auto h = Napi::Object::New(env);
    h.Set("qkey", Napi::Number::New(env, p.deth_qkey)); h.Set("srcQp", Napi::Number::New(env, p.deth_src_qp));
    o.Set("deth", h);
  }
  o.Set("payloadLen", Napi::Number::New(env, static_cast<double>(p.payload_len)));
  o.Set("icrc", Napi::Number::New(env, p.icrc));
  return o;
}

Napi::Object EventObj(Napi::Env env, const vl::Event& e) {
  auto o = Napi::Object::New(env);
  o.Set("seq", U64(env, e.seq));
  o.Set("t", U64(env, e.time_ns));
  o.Set("kind", vl::json::event_kind_name(e.kind));
  o.Set("device", Napi::Number::New(env, e.device));
  o.Set("obj", Napi::Number::New(env, e.obj));
  o.Set("objKind", e.obj_kind);
  o.Set("a", U64(env, e.a));
  o.Set("b", U64(env, e.b));
  o.Set("c", U64(env, e.c));
  o.Set("d", U64(env, e.d));
  if (!e.text.empty()) o.Set("text", e.text);
  if (e.kind == vl::EventKind::KeyCheck) o.Set("ok", Napi::Boolean::New(env, e.ok));
  if (e.change != vl::Event::kNone) o.Set("change", Napi::Number::New(env, e.change));
  if (e.key_state != vl::Event::kNone) o.Set("keyState", Napi::Number::New(env, e.key_state));
  if (!e.pkt.empty()) o.Set("pkt", PacketObj(env, e.pkt));
  if (e.kind == vl::EventKind::Cqe || e.kind == vl::EventKind::WqeCompleted) o.Set("wc", WcObj(env, e.wc));
  return o;
}

}  // namespace vladdon
