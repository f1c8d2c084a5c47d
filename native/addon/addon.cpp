// Thin node-addon-api binding of vl::Session (Node-API 8, no C++ exceptions).
//
// One JS class `Session` with one method per vl::Session method (same snake_case names), converting
// arguments and results to plain JS values (camelCase fields). Rules:
//  - Status results come back as { err, msg }, Result<T> as { err, msg, value }; the binding never
//    interprets them (the executor in app/host/executor.ts does).
//  - 64-bit values: accepted as Number, BigInt or decimal/0x-hex string; returned as Number when
//    <= 2^53-1, otherwise as a "0x..." hex string (lossless and JSON-friendly).
//  - Bytes are always *copied* into new Buffers: no external ArrayBuffers (Electron's V8 memory cage
//    forbids them); NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED turns any accidental use into a compile error.
//  - Programming errors (wrong JS argument types) throw a TypeError naming the argument.
#define NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED
#include <napi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <map>

#include "net/udp.h"
#include "vl/session.h"
#include "vl/traffic.h"
#include "vl/wire.h"
#include "../ibverbs/enumerate.h"
#include "event_frame.h"
#include "event_json.h"
#include "sg_lab.h"
#include "datapath.h"

namespace {

constexpr uint64_t kMaxSafe = (1ull << 53) - 1;

Napi::Value U64(Napi::Env env, uint64_t v) {
  if (v <= kMaxSafe) return Napi::Number::New(env, static_cast<double>(v));
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return Napi::String::New(env, buf);
}

std::string HexOf(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s(n * 2, '0');
  for (size_t i = 0; i < n; ++i) { s[2 * i] = d[p[i] >> 4]; s[2 * i + 1] = d[p[i] & 15]; }
  return s;
}

std::string GidText(const uint8_t g[16]) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
                g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
  return buf;
}

// Argument conversion that records the first problem instead of throwing (no C++ exceptions).
struct Conv {
  Napi::Env env;
  std::string err;
  explicit Conv(Napi::Env e) : env(e) {}
  bool ok() const { return err.empty(); }
  void fail(const std::string& where, const char* what) { if (err.empty()) err = where + ": expected " + what; }
  // Throws the recorded TypeError; returns true when there was one.
  bool thrown() {
    if (err.empty()) return false;
    Napi::TypeError::New(env, err).ThrowAsJavaScriptException();
    return true;
  }

  uint64_t u64(const Napi::Value& v, const std::string& where, uint64_t def = 0, bool optional = false) {
    if (v.IsUndefined() || v.IsNull()) { if (!optional) fail(where, "a 64-bit unsigned integer"); return def; }
    if (v.IsNumber()) {
      double d = v.As<Napi::Number>().DoubleValue();
      if (!(d >= 0) || d > 18446744073709551615.0 || d != static_cast<double>(static_cast<uint64_t>(d))) { fail(where, "a non-negative integer"); return def; }
      return static_cast<uint64_t>(d);
    }
    if (v.IsBigInt()) {
      bool lossless = false;
      uint64_t r = v.As<Napi::BigInt>().Uint64Value(&lossless);
      if (!lossless) { fail(where, "a BigInt in 0..2^64-1"); return def; }
      return r;
    }
    if (v.IsString()) {
      std::string s = v.As<Napi::String>().Utf8Value();
      if (s.empty() || s[0] == '-' || s[0] == '+' || s[0] == ' ') { fail(where, "a decimal or 0x-hex string"); return def; }
      char* end = nullptr;
      errno = 0;
      unsigned long long r = std::strtoull(s.c_str(), &end, (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10);
      if (errno || !end || *end) { fail(where, "a decimal or 0x-hex string"); return def; }
      return r;
    }
    fail(where, "a number, BigInt or numeric string");
    return def;
  }
  uint32_t u32(const Napi::Value& v, const std::string& where, uint32_t def = 0, bool optional = false) {
    if (v.IsUndefined() || v.IsNull()) { if (!optional) fail(where, "a 32-bit unsigned integer"); return def; }
    uint64_t r = u64(v, where, def, optional);
    if (r > 0xffffffffull) { fail(where, "a 32-bit unsigned integer"); return def; }
    return static_cast<uint32_t>(r);
  }
  double num(const Napi::Value& v, const std::string& where) {
    if (!v.IsNumber()) { fail(where, "a number"); return 0; }
    return v.As<Napi::Number>().DoubleValue();
  }
  bool boolean(const Napi::Value& v, const std::string& where, bool def = false) {
    if (v.IsUndefined() || v.IsNull()) return def;
    if (!v.IsBoolean()) { fail(where, "a boolean"); return def; }
    return v.As<Napi::Boolean>().Value();
  }
  std::string str(const Napi::Value& v, const std::string& where, const std::string& def = "", bool optional = false) {
    if (v.IsUndefined() || v.IsNull()) { if (!optional) fail(where, "a string"); return def; }
    if (!v.IsString()) { fail(where, "a string"); return def; }
    return v.As<Napi::String>().Utf8Value();
  }
  std::vector<uint8_t> bytes(const Napi::Value& v, const std::string& where, bool optional = false) {
    std::vector<uint8_t> out;
    if (v.IsUndefined() || v.IsNull()) { if (!optional) fail(where, "a Uint8Array"); return out; }
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) { fail(where, "a Uint8Array"); return out; }
    auto a = v.As<Napi::Uint8Array>();
    out.assign(a.Data(), a.Data() + a.ByteLength());
    return out;
  }
  Napi::Object obj(const Napi::Value& v, const std::string& where) {
    if (!v.IsObject() || v.IsArray()) { fail(where, "an object"); return Napi::Object::New(env); }
    return v.As<Napi::Object>();
  }
  Napi::Array arr(const Napi::Value& v, const std::string& where, bool optional = false) {
    if ((v.IsUndefined() || v.IsNull()) && optional) return Napi::Array::New(env);
    if (!v.IsArray()) { fail(where, "an array"); return Napi::Array::New(env); }
    return v.As<Napi::Array>();
  }

  vl::Sge sge(const Napi::Value& v, const std::string& where) {
    vl::Sge s;
    auto o = obj(v, where);
    if (!ok()) return s;
    s.addr = u64(o.Get("addr"), where + ".addr");
    s.length = u32(o.Get("length"), where + ".length");
    s.lkey = u32(o.Get("lkey"), where + ".lkey");
    return s;
  }
  std::vector<vl::Sge> sges(const Napi::Value& v, const std::string& where, bool optional = true) {
    std::vector<vl::Sge> out;
    auto a = arr(v, where, optional);
    for (uint32_t i = 0; ok() && i < a.Length(); ++i) out.push_back(sge(a.Get(i), where + "[" + std::to_string(i) + "]"));
    return out;
  }
  vl::RecvWr recv_wr(const Napi::Value& v, const std::string& where) {
    vl::RecvWr w;
    auto o = obj(v, where);
    if (!ok()) return w;
    w.wr_id = u64(o.Get("wrId"), where + ".wrId", 0, true);
    w.sg_list = sges(o.Get("sgList"), where + ".sgList");
    return w;
  }
  std::vector<vl::RecvWr> recv_wrs(const Napi::Value& v, const std::string& where) {
    std::vector<vl::RecvWr> out;
    auto a = arr(v, where);
    for (uint32_t i = 0; ok() && i < a.Length(); ++i) out.push_back(recv_wr(a.Get(i), where + "[" + std::to_string(i) + "]"));
    return out;
  }
  vl::SendWr send_wr(const Napi::Value& v, const std::string& w) {
    vl::SendWr r;
    auto o = obj(v, w);
    if (!ok()) return r;
    r.wr_id = u64(o.Get("wrId"), w + ".wrId", 0, true);
    r.opcode = u32(o.Get("opcode"), w + ".opcode");
    r.send_flags = u32(o.Get("sendFlags"), w + ".sendFlags", 0, true);
    r.sg_list = sges(o.Get("sgList"), w + ".sgList");
    r.inline_data = bytes(o.Get("inlineData"), w + ".inlineData", true);
    r.imm_data = u32(o.Get("immData"), w + ".immData", 0, true);
    r.remote_addr = u64(o.Get("remoteAddr"), w + ".remoteAddr", 0, true);
    r.rkey = u32(o.Get("rkey"), w + ".rkey", 0, true);
    r.compare_add = u64(o.Get("compareAdd"), w + ".compareAdd", 0, true);
    r.swap = u64(o.Get("swap"), w + ".swap", 0, true);
    r.ah = u32(o.Get("ah"), w + ".ah", 0, true);
    r.remote_qpn = u32(o.Get("remoteQpn"), w + ".remoteQpn", 0, true);
    r.remote_qkey = u32(o.Get("remoteQkey"), w + ".remoteQkey", 0, true);
    r.mw = u32(o.Get("mw"), w + ".mw", 0, true);
    r.bind_rkey = u32(o.Get("bindRkey"), w + ".bindRkey", 0, true);
    r.bind_mr = u32(o.Get("bindMr"), w + ".bindMr", 0, true);
    r.bind_addr = u64(o.Get("bindAddr"), w + ".bindAddr", 0, true);
    r.bind_length = u64(o.Get("bindLength"), w + ".bindLength", 0, true);
    r.bind_access = u32(o.Get("bindAccess"), w + ".bindAccess", 0, true);
    r.reg_mr = u32(o.Get("regMr"), w + ".regMr", 0, true);
    r.reg_key = u32(o.Get("regKey"), w + ".regKey", 0, true);
    r.reg_access = u32(o.Get("regAccess"), w + ".regAccess", 0, true);
    return r;
  }
  std::vector<vl::SendWr> send_wrs(const Napi::Value& v, const std::string& where) {
    std::vector<vl::SendWr> out;
    auto a = arr(v, where);
    for (uint32_t i = 0; ok() && i < a.Length(); ++i) out.push_back(send_wr(a.Get(i), where + "[" + std::to_string(i) + "]"));
    return out;
  }
  vl::QpAttr qp_attr(const Napi::Value& v, const std::string& w) {
    vl::QpAttr a;
    auto o = obj(v, w);
    if (!ok()) return a;
    a.qp_state = u32(o.Get("qpState"), w + ".qpState", a.qp_state, true);
    a.cur_qp_state = u32(o.Get("curQpState"), w + ".curQpState", a.cur_qp_state, true);
    a.path_mtu = u32(o.Get("pathMtu"), w + ".pathMtu", a.path_mtu, true);
    a.qp_access_flags = u32(o.Get("qpAccessFlags"), w + ".qpAccessFlags", a.qp_access_flags, true);
    a.qkey = u32(o.Get("qkey"), w + ".qkey", a.qkey, true);
    a.rq_psn = u32(o.Get("rqPsn"), w + ".rqPsn", a.rq_psn, true);
    a.sq_psn = u32(o.Get("sqPsn"), w + ".sqPsn", a.sq_psn, true);
    a.dest_qp_num = u32(o.Get("destQpNum"), w + ".destQpNum", a.dest_qp_num, true);
    a.pkey_index = u32(o.Get("pkeyIndex"), w + ".pkeyIndex", a.pkey_index, true);
    a.port_num = u32(o.Get("portNum"), w + ".portNum", a.port_num, true);
    a.max_rd_atomic = u32(o.Get("maxRdAtomic"), w + ".maxRdAtomic", a.max_rd_atomic, true);
    a.max_dest_rd_atomic = u32(o.Get("maxDestRdAtomic"), w + ".maxDestRdAtomic", a.max_dest_rd_atomic, true);
    a.min_rnr_timer = u32(o.Get("minRnrTimer"), w + ".minRnrTimer", a.min_rnr_timer, true);
    a.timeout = u32(o.Get("timeout"), w + ".timeout", a.timeout, true);
    a.retry_cnt = u32(o.Get("retryCnt"), w + ".retryCnt", a.retry_cnt, true);
    a.rnr_retry = u32(o.Get("rnrRetry"), w + ".rnrRetry", a.rnr_retry, true);
    a.sgid_index = u32(o.Get("sgidIndex"), w + ".sgidIndex", a.sgid_index, true);
    a.dest_device = u32(o.Get("destDevice"), w + ".destDevice", a.dest_device, true);
    auto g = bytes(o.Get("dgid"), w + ".dgid", true);
    if (!g.empty()) {
      if (g.size() != 16) fail(w + ".dgid", "16 bytes");
      else std::memcpy(a.dgid, g.data(), 16);
    }
    return a;
  }
};

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

const char* EventKindName(vl::EventKind k) { return vl::json::event_kind_name(k); }

Napi::Object EventObj(Napi::Env env, const vl::Event& e) {
  auto o = Napi::Object::New(env);
  o.Set("seq", U64(env, e.seq));
  o.Set("t", U64(env, e.time_ns));
  o.Set("kind", EventKindName(e.kind));
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

template <class T, class F>
Napi::Object ResultObj(Napi::Env env, const vl::Result<T>& r, F&& conv) {
  auto o = StatusObj(env, r);
  if (r.ok()) o.Set("value", conv(r.value));
  return o;
}

class SessionWrap : public Napi::ObjectWrap<SessionWrap> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "Session", {
      InstanceMethod<&SessionWrap::Close>("close"),
      InstanceMethod<&SessionWrap::CreateDevice>("create_device"),
      InstanceMethod<&SessionWrap::DestroyDevice>("destroy_device"),
      InstanceMethod<&SessionWrap::Devices>("devices"),
      InstanceMethod<&SessionWrap::AllocPd>("alloc_pd"),
      InstanceMethod<&SessionWrap::DeallocPd>("dealloc_pd"),
      InstanceMethod<&SessionWrap::AllocBuffer>("alloc_buffer"),
      InstanceMethod<&SessionWrap::FreeBuffer>("free_buffer"),
      InstanceMethod<&SessionWrap::WriteMemory>("write_memory"),
      InstanceMethod<&SessionWrap::ReadMemory>("read_memory"),
      InstanceMethod<&SessionWrap::RegMr>("reg_mr"),
      InstanceMethod<&SessionWrap::ReregMr>("rereg_mr"),
      InstanceMethod<&SessionWrap::DeregMr>("dereg_mr"),
      InstanceMethod<&SessionWrap::AllocMr>("alloc_mr"),
      InstanceMethod<&SessionWrap::MapMrSg>("map_mr_sg"),
      InstanceMethod<&SessionWrap::SgLabRun>("sg_lab_run"),
      InstanceMethod<&SessionWrap::AllocMw>("alloc_mw"),
      InstanceMethod<&SessionWrap::DeallocMw>("dealloc_mw"),
      InstanceMethod<&SessionWrap::BindMw>("bind_mw"),
      InstanceMethod<&SessionWrap::MrInfo>("mr_info"),
      InstanceMethod<&SessionWrap::MwInfo>("mw_info"),
      InstanceMethod<&SessionWrap::CreateCq>("create_cq"),
      InstanceMethod<&SessionWrap::CqInfo>("cq_info"),
      InstanceMethod<&SessionWrap::DestroyCq>("destroy_cq"),
      InstanceMethod<&SessionWrap::ReqNotifyCq>("req_notify_cq"),
      InstanceMethod<&SessionWrap::ReqNotifyCqReportMissed>("req_notify_cq_report_missed"),
      InstanceMethod<&SessionWrap::PollCq>("poll_cq"),
      InstanceMethod<&SessionWrap::GetCqEvent>("get_cq_event"),
      InstanceMethod<&SessionWrap::AckCqEvents>("ack_cq_events"),
      InstanceMethod<&SessionWrap::CreateSrq>("create_srq"),
      InstanceMethod<&SessionWrap::ModifySrq>("modify_srq"),
      InstanceMethod<&SessionWrap::DestroySrq>("destroy_srq"),
      InstanceMethod<&SessionWrap::PostSrqRecv>("post_srq_recv"),
      InstanceMethod<&SessionWrap::CreateQp>("create_qp"),
      InstanceMethod<&SessionWrap::ModifyQp>("modify_qp"),
      InstanceMethod<&SessionWrap::QueryQp>("query_qp"),
      InstanceMethod<&SessionWrap::DestroyQp>("destroy_qp"),
      InstanceMethod<&SessionWrap::CreateAh>("create_ah"),
      InstanceMethod<&SessionWrap::PostSend>("post_send"),
      InstanceMethod<&SessionWrap::PostRecv>("post_recv"),
      InstanceMethod<&SessionWrap::SetFaults>("set_faults"),
      InstanceMethod<&SessionWrap::Step>("step"),
      InstanceMethod<&SessionWrap::Run>("run"),
      InstanceMethod<&SessionWrap::NowNs>("now_ns"),
      InstanceMethod<&SessionWrap::DrainEvents>("drain_events"),
      InstanceMethod<&SessionWrap::TrafficStart>("traffic_start"),
      InstanceMethod<&SessionWrap::TrafficStop>("traffic_stop"),
      InstanceMethod<&SessionWrap::TrafficState>("traffic_state"),
      InstanceMethod<&SessionWrap::StepTraffic>("step_traffic"),
      InstanceMethod<&SessionWrap::RunnerStart>("runner_start"),
      InstanceMethod<&SessionWrap::RunnerStop>("runner_stop"),
      InstanceMethod<&SessionWrap::RunnerPause>("runner_pause"),
      InstanceMethod<&SessionWrap::RunnerResume>("runner_resume"),
      InstanceMethod<&SessionWrap::RunnerTake>("runner_take"),
      InstanceMethod<&SessionWrap::RunnerRunning>("runner_running"),
      InstanceMethod<&SessionWrap::RunnerSetEventBudget>("runner_set_event_budget"),
      InstanceMethod<&SessionWrap::DrainEventsSample>("drain_events_sample"),
      InstanceMethod<&SessionWrap::QueueSnapshot>("queue_snapshot"),
      InstanceMethod<&SessionWrap::LastSeq>("last_seq"),
      InstanceMethod<&SessionWrap::SampleEvents>("sample_events"),
      InstanceMethod<&SessionWrap::DrainEventsJson>("drain_events_json"),
      InstanceMethod<&SessionWrap::DrainEventsFrame>("drain_events_frame"),
      InstanceMethod<&SessionWrap::SetEventCapture>("set_event_capture"),
      InstanceMethod<&SessionWrap::SetDataPath>("set_data_path"), InstanceMethod<&SessionWrap::DataPath>("data_path"),   // datapath.cpp
      InstanceMethod<&SessionWrap::WritePcap>("write_pcap"),
      InstanceMethod<&SessionWrap::AttachNet>("attach_net"),
      InstanceMethod<&SessionWrap::DetachNet>("detach_net"),
      InstanceMethod<&SessionWrap::NetInfo>("net_info"),
      InstanceMethod<&SessionWrap::NetPoll>("net_poll"),
      InstanceMethod<&SessionWrap::WriteNetPcap>("write_net_pcap"),
      StaticMethod<&SessionWrap::Profiles>("profiles"),
    });
  }

  explicit SessionWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<SessionWrap>(info) {
    Conv c(info.Env());
    uint64_t seed = c.u64(info[0], "seed", 1, true);
    if (c.thrown()) return;
    s_ = std::make_unique<vl::Session>(seed);
    runner_ = std::make_unique<vl::Runner>(*s_, traffic_);
  }
  ~SessionWrap() override { runner_.reset(); }

 private:
  std::unique_ptr<vl::Session> s_;
  vl::Traffic traffic_;                  // the load generator (engine.traffic)
  std::unique_ptr<vl::Runner> runner_;   // the free-running engine thread (created with the session)
  // UDP transports of devices put on the network (destroyed before the session, and before their device)
  std::map<uint32_t, std::unique_ptr<vl::net::UdpTransport>> nets_;

  // Returns nullptr (with a pending JS error) when the session was closed.
  vl::Session* S(Napi::Env env) {
    if (!s_) Napi::Error::New(env, "session is closed").ThrowAsJavaScriptException();
    return s_.get();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) { runner_.reset(); nets_.clear(); s_.reset(); return info.Env().Undefined(); }

  static Napi::Value Profiles(const Napi::CallbackInfo& info) {
    auto env = info.Env();
    const auto& ps = vl::builtin_profiles();
    auto a = Napi::Array::New(env, ps.size());
    for (size_t i = 0; i < ps.size(); ++i) a.Set(static_cast<uint32_t>(i), ProfileObj(env, ps[i]));
    return a;
  }

  Napi::Value CreateDevice(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto profile = c.str(info[0], "profile");
    auto name = c.str(info[1], "name", "", true);
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->create_device(profile, name), [&](vl::Handle h) { return Napi::Number::New(env, h); });
  }
  Napi::Value DestroyDevice(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "dev");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    nets_.erase(h);                                // off the network first: the transport refers to the device
    return StatusObj(env, s->destroy_device(h));
  }
  Napi::Value Devices(const Napi::CallbackInfo& info) {
    auto env = info.Env();
    auto* s = S(env); if (!s) return env.Undefined();
    auto ds = s->devices();
    auto a = Napi::Array::New(env, ds.size());
    for (size_t i = 0; i < ds.size(); ++i) a.Set(static_cast<uint32_t>(i), DeviceObj(env, ds[i]));
    return a;
  }
  Napi::Value AllocPd(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "dev");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->alloc_pd(h), [&](vl::Handle v) { return Napi::Number::New(env, v); });
  }
  Napi::Value DeallocPd(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "pd");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return StatusObj(env, s->dealloc_pd(h));
  }
  Napi::Value AllocBuffer(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto len = c.u64(info[0], "length");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->alloc_buffer(len), [&](const vl::BufferInfo& b) {
      auto o = Napi::Object::New(env);
      o.Set("handle", Napi::Number::New(env, b.handle));
      o.Set("addr", U64(env, b.addr));
      o.Set("length", U64(env, b.length));
      return o;
    });
  }
  Napi::Value FreeBuffer(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "buf");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return StatusObj(env, s->free_buffer(h));
  }
  Napi::Value WriteMemory(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto addr = c.u64(info[0], "addr");
    auto data = c.bytes(info[1], "data");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return StatusObj(env, s->write_memory(addr, data.data(), data.size()));
  }
  Napi::Value ReadMemory(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto addr = c.u64(info[0], "addr");
    auto len = c.u64(info[1], "len");
    if (c.ok() && len > (1ull << 30)) c.fail("len", "at most 1 GiB");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    std::vector<uint8_t> out(len);
    auto st = s->read_memory(addr, out.data(), out.size());
    auto o = StatusObj(env, st);
    if (st.ok()) o.Set("value", Napi::Buffer<uint8_t>::Copy(env, out.data(), out.size()));
    return o;
  }
  Napi::Value RegMr(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto pd = c.u32(info[0], "pd");
    auto addr = c.u64(info[1], "addr");
    auto len = c.u64(info[2], "length");
    auto access = c.u32(info[3], "access");
    std::optional<uint64_t> iova;
    if (!info[4].IsUndefined() && !info[4].IsNull()) iova = c.u64(info[4], "iova");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->reg_mr(pd, addr, len, access, iova), [&](const vl::MrInfo& m) { return MrObj(env, m); });
  }
  Napi::Value ReregMr(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto mr = c.u32(info[0], "mr");
    auto flags = c.u32(info[1], "flags");
    auto pd = c.u32(info[2], "pd", 0, true);
    auto addr = c.u64(info[3], "addr", 0, true);
    auto len = c.u64(info[4], "length", 0, true);
    auto access = c.u32(info[5], "access", 0, true);
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->rereg_mr(mr, flags, pd, addr, len, access), [&](const vl::MrInfo& m) { return MrObj(env, m); });
  }
  Napi::Value DeregMr(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "mr");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return StatusObj(env, s->dereg_mr(h));
  }
  Napi::Value AllocMr(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto pd = c.u32(info[0], "pd");
    auto n = c.u32(info[1], "max_num_sg");
    auto indirect = c.boolean(info[2], "indirect");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->alloc_mr(pd, n, indirect), [&](const vl::MrInfo& m) { return MrObj(env, m); });
  }
  Napi::Value MapMrSg(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto mr = c.u32(info[0], "mr");
    auto sg = c.sges(info[1], "sg", false);
    auto ps = c.u32(info[2], "page_size", 4096, true);
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->map_mr_sg(mr, sg, ps), [&](uint32_t n) { return Napi::Number::New(env, n); });
  }
  Napi::Value SetDataPath(const Napi::CallbackInfo& info) { auto* s = S(info.Env()); return s ? vladdon::SetDataPath(info, *s) : info.Env().Undefined(); }
  Napi::Value DataPath(const Napi::CallbackInfo& info) { auto* s = S(info.Env()); return s ? vladdon::GetDataPath(info, *s) : info.Env().Undefined(); }
  Napi::Value SgLabRun(const Napi::CallbackInfo& info) {   // the SG lab (sg_lab.cpp)
    auto* s = S(info.Env()); if (!s) return info.Env().Undefined();
    return vladdon::SgLabRun(info, *s);
  }
  Napi::Value AllocMw(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto pd = c.u32(info[0], "pd");
    auto type = c.u32(info[1], "type");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->alloc_mw(pd, type), [&](const vl::MwInfo& w) { return MwObj(env, w); });
  }
  Napi::Value DeallocMw(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "mw");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return StatusObj(env, s->dealloc_mw(h));
  }
  Napi::Value BindMw(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto qp = c.u32(info[0], "qp");
    auto mw = c.u32(info[1], "mw");
    auto wr_id = c.u64(info[2], "wr_id");
    auto flags = c.u32(info[3], "send_flags");
    auto mr = c.u32(info[4], "mr");
    auto addr = c.u64(info[5], "addr");
    auto len = c.u64(info[6], "length");
    auto access = c.u32(info[7], "access");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->bind_mw(qp, mw, wr_id, flags, mr, addr, len, access), [&](uint32_t k) { return Napi::Number::New(env, k); });
  }
  Napi::Value MrInfo(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "mr");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    auto r = s->mr_info(h);
    return r ? Napi::Value(MrObj(env, *r)) : env.Null();
  }
  Napi::Value MwInfo(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "mw");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    auto r = s->mw_info(h);
    return r ? Napi::Value(MwObj(env, *r)) : env.Null();
  }
  Napi::Value CreateCq(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto dev = c.u32(info[0], "dev");
    auto cqe = c.u32(info[1], "cqe");
    auto ch = c.boolean(info[2], "with_channel");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->create_cq(dev, cqe, ch), [&](vl::Handle h) { return Napi::Number::New(env, h); });
  }
  Napi::Value CqInfo(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "cq");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    auto r = s->cq_info(h);
    if (!r) return env.Null();
    auto o = Napi::Object::New(env);
    o.Set("cq", Napi::Number::New(env, r->handle));
    o.Set("device", Napi::Number::New(env, r->device));
    o.Set("cqe", Napi::Number::New(env, r->cqe));
    o.Set("channel", Napi::Boolean::New(env, r->channel));
    return o;
  }
  Napi::Value DestroyCq(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "cq");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return StatusObj(env, s->destroy_cq(h));
  }
  Napi::Value ReqNotifyCq(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "cq");
    auto sol = c.boolean(info[1], "solicited_only");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return StatusObj(env, s->req_notify_cq(h, sol));
  }
  Napi::Value ReqNotifyCqReportMissed(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "cq");
    auto sol = c.boolean(info[1], "solicited_only");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->req_notify_cq_report_missed(h, sol), [&](int v) { return Napi::Number::New(env, v); });
  }
  Napi::Value PollCq(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "cq");
    auto max = c.u32(info[1], "max", 16, true);
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    auto wcs = s->poll_cq(h, max);
    auto a = Napi::Array::New(env, wcs.size());
    for (size_t i = 0; i < wcs.size(); ++i) {
      auto o = WcObj(env, wcs[i]);
      if (wcs[i].rule) o.Set("rule", wcs[i].rule);   // the profile rule that decided it (app/protocol/quirks.ts)
      a.Set(static_cast<uint32_t>(i), o);
    }
    return a;
  }
  Napi::Value GetCqEvent(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "dev");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->get_cq_event(h), [&](vl::Handle v) { return Napi::Number::New(env, v); });
  }
  Napi::Value AckCqEvents(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "cq");
    auto n = c.u32(info[1], "n");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return StatusObj(env, s->ack_cq_events(h, n));
  }
  Napi::Value CreateSrq(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto pd = c.u32(info[0], "pd");
    auto wr = c.u32(info[1], "max_wr");
    auto sge = c.u32(info[2], "max_sge");
    auto lim = c.u32(info[3], "srq_limit", 0, true);
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->create_srq(pd, wr, sge, lim), [&](vl::Handle v) { return Napi::Number::New(env, v); });
  }
  Napi::Value ModifySrq(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "srq");
    auto lim = c.u32(info[1], "srq_limit");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return StatusObj(env, s->modify_srq(h, lim));
  }
  Napi::Value DestroySrq(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "srq");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return StatusObj(env, s->destroy_srq(h));
  }
  static Napi::Object PostObj(Napi::Env env, const vl::PostResult& r) {
    auto o = StatusObj(env, r);
    o.Set("badWr", Napi::Number::New(env, static_cast<double>(r.bad_wr)));
    return o;
  }
  Napi::Value PostSrqRecv(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "srq");
    auto wrs = c.recv_wrs(info[1], "wrs");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return PostObj(env, s->post_srq_recv(h, wrs));
  }
  Napi::Value CreateQp(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto pd = c.u32(info[0], "pd");
    auto o = c.obj(info[1], "init_attr");
    vl::QpInitAttr a;
    if (c.ok()) {
      a.pd = pd;
      a.send_cq = c.u32(o.Get("sendCq"), "init_attr.sendCq");
      a.recv_cq = c.u32(o.Get("recvCq"), "init_attr.recvCq");
      a.srq = c.u32(o.Get("srq"), "init_attr.srq", 0, true);
      a.qp_type = c.u32(o.Get("qpType"), "init_attr.qpType", vl::QPT_RC, true);
      a.sq_sig_all = c.boolean(o.Get("sqSigAll"), "init_attr.sqSigAll");
      auto cv = o.Get("cap");
      if (!cv.IsUndefined() && !cv.IsNull()) {
        auto cap = c.obj(cv, "init_attr.cap");
        if (c.ok()) {
          a.cap.max_send_wr = c.u32(cap.Get("maxSendWr"), "init_attr.cap.maxSendWr", a.cap.max_send_wr, true);
          a.cap.max_recv_wr = c.u32(cap.Get("maxRecvWr"), "init_attr.cap.maxRecvWr", a.cap.max_recv_wr, true);
          a.cap.max_send_sge = c.u32(cap.Get("maxSendSge"), "init_attr.cap.maxSendSge", a.cap.max_send_sge, true);
          a.cap.max_recv_sge = c.u32(cap.Get("maxRecvSge"), "init_attr.cap.maxRecvSge", a.cap.max_recv_sge, true);
          a.cap.max_inline_data = c.u32(cap.Get("maxInlineData"), "init_attr.cap.maxInlineData", a.cap.max_inline_data, true);
        }
      }
    }
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->create_qp(pd, a), [&](const vl::QpInfo& q) { return QpObj(env, q); });
  }
  Napi::Value ModifyQp(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "qp");
    auto attr = c.qp_attr(info[1], "attr");
    auto mask = c.u32(info[2], "attr_mask");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return StatusObj(env, s->modify_qp(h, attr, mask));
  }
  Napi::Value QueryQp(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "qp");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    auto r = s->query_qp(h);
    return r ? Napi::Value(QpObj(env, *r)) : env.Null();
  }
  Napi::Value DestroyQp(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "qp");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return StatusObj(env, s->destroy_qp(h));
  }
  Napi::Value CreateAh(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto pd = c.u32(info[0], "pd");
    auto dest = c.u32(info[1], "dest_device");
    auto sgid = c.u32(info[2], "sgid_index", 0, true);
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ResultObj(env, s->create_ah(pd, dest, sgid), [&](vl::Handle v) { return Napi::Number::New(env, v); });
  }
  Napi::Value PostSend(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "qp");
    auto wrs = c.send_wrs(info[1], "wrs");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return PostObj(env, s->post_send(h, wrs));
  }
  // The load generator and the free-running runner (vl/traffic.h). traffic_start(qp, cq, wrs) converts the WRs
  // once; step_traffic(count) is engine.step with the generator; the runner_* calls drive the engine thread.
  Napi::Value TrafficStart(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto qp = c.u32(info[0], "qp");
    auto cq = c.u32(info[1], "cq");
    auto wrs = c.send_wrs(info[2], "wrs");
    if (c.thrown()) return env.Undefined();
    if (!S(env)) return env.Undefined();
    return StatusObj(env, traffic_.start(qp, cq, std::move(wrs)));
  }
  Napi::Value TrafficStop(const Napi::CallbackInfo& info) { traffic_.stop(); return info.Env().Undefined(); }
  Napi::Value TrafficState(const Napi::CallbackInfo& info) {
    auto env = info.Env();
    const auto st = traffic_.state();
    auto o = Napi::Object::New(env);
    o.Set("on", Napi::Boolean::New(env, st.on));
    o.Set("qp", Napi::Number::New(env, st.qp));
    o.Set("cq", Napi::Number::New(env, st.cq));
    o.Set("wrs", Napi::Number::New(env, static_cast<double>(st.wrs)));
    o.Set("posted", U64(env, st.posted));
    o.Set("completed", U64(env, st.completed));
    if (!st.stopped.empty()) o.Set("stopped", Napi::String::New(env, st.stopped));
    return o;
  }
  Napi::Value StepTraffic(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto count = c.u64(info[0], "count");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    if (runner_->running()) { Napi::Error::New(env, "step_traffic: the runner thread is running (runner_stop first)").ThrowAsJavaScriptException(); return env.Undefined(); }
    const auto r = vl::step_with_traffic(*s, &traffic_, count);
    auto o = Napi::Object::New(env);
    o.Set("steps", U64(env, r.steps));
    o.Set("idle", Napi::Boolean::New(env, r.idle));
    return o;
  }
  Napi::Value RunnerStart(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto rate = c.num(info[0], "steps_per_second");
    if (c.thrown()) return env.Undefined();
    if (!S(env)) return env.Undefined();
    return StatusObj(env, runner_->start(rate));
  }
  Napi::Value RunnerStop(const Napi::CallbackInfo& info) { return U64(info.Env(), runner_->stop()); }
  Napi::Value RunnerPause(const Napi::CallbackInfo& info) { return U64(info.Env(), runner_->pause()); }
  Napi::Value RunnerResume(const Napi::CallbackInfo& info) { runner_->resume(); return info.Env().Undefined(); }
  Napi::Value RunnerTake(const Napi::CallbackInfo& info) { return U64(info.Env(), runner_->take()); }
  Napi::Value RunnerSetEventBudget(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto n = c.u32(info[0], "events");
    if (c.thrown()) return env.Undefined();
    runner_->set_event_budget(n);
    return env.Undefined();
  }
  Napi::Value RunnerRunning(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), runner_->running()); }
  // sample_events(keep): the queued events older than the newest `keep` are removed, except state events;
  // returns how many (the caller reports them: not counted in drain_events_sample's `dropped`).
  Napi::Value SampleEvents(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto keep = c.u64(info[0], "keep");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return U64(env, s->sample_events(static_cast<size_t>(keep), false));
  }
  Napi::Value LastSeq(const Napi::CallbackInfo& info) {
    auto env = info.Env();
    auto* s = S(env); if (!s) return env.Undefined();
    return U64(env, s->last_seq());
  }
  // Every queue's ring as the device holds it now: [{ owner, device, queue: "sq"|"rq"|"cq"|"srq", depth, producer,
  // consumer, first, slots: [{ wrId, opcode, status, state: "posted"|"started"|"done", qpNum }] }]
  Napi::Value QueueSnapshot(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto max = c.u32(info[0], "max_slots", 256, true);
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    static const char* qn[] = {"sq", "rq", "cq", "srq"};
    static const char* sn[] = {"posted", "started", "done"};
    const auto rings = s->queue_snapshot(max);
    auto a = Napi::Array::New(env, rings.size());
    for (size_t i = 0; i < rings.size(); i++) {
      const auto& r = rings[i];
      auto o = Napi::Object::New(env);
      o.Set("owner", Napi::Number::New(env, r.owner));
      o.Set("device", Napi::Number::New(env, r.device));
      o.Set("queue", Napi::String::New(env, qn[static_cast<uint32_t>(r.queue)]));
      o.Set("depth", Napi::Number::New(env, r.depth));
      o.Set("producer", U64(env, r.producer));
      o.Set("consumer", U64(env, r.consumer));
      o.Set("first", U64(env, r.first));
      auto sl = Napi::Array::New(env, r.slots.size());
      for (size_t k = 0; k < r.slots.size(); k++) {
        const auto& x = r.slots[k];
        auto so = Napi::Object::New(env);
        so.Set("wrId", U64(env, x.wr_id));
        so.Set("opcode", Napi::Number::New(env, x.opcode));
        so.Set("status", Napi::Number::New(env, x.status));
        so.Set("state", Napi::String::New(env, sn[static_cast<uint32_t>(x.state)]));
        if (r.queue == vl::RingQueue::Cq) so.Set("qpNum", Napi::Number::New(env, x.qp_num));
        sl.Set(static_cast<uint32_t>(k), so);
      }
      o.Set("slots", sl);
      a.Set(static_cast<uint32_t>(i), o);
    }
    return a;
  }
  Napi::Value PostRecv(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto h = c.u32(info[0], "qp");
    auto wrs = c.recv_wrs(info[1], "wrs");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return PostObj(env, s->post_recv(h, wrs));
  }
  Napi::Value SetFaults(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto o = c.obj(info[0], "faults");
    vl::FaultConfig f;
    auto num = [&](const char* k, double& out) {
      auto v = o.Get(k);
      if (v.IsUndefined()) return;
      if (!v.IsNumber()) { c.fail(std::string("faults.") + k, "a number"); return; }
      out = v.As<Napi::Number>().DoubleValue();
    };
    if (c.ok()) {
      num("loss", f.loss); num("duplicate", f.duplicate); num("reorder", f.reorder); num("delay", f.delay);
      f.delay_ns = c.u64(o.Get("delayNs"), "faults.delayNs", 0, true);
    }
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    s->set_faults(f);
    return env.Undefined();
  }
  Napi::Value Step(const Napi::CallbackInfo& info) {
    auto env = info.Env();
    auto* s = S(env); if (!s) return env.Undefined();
    return Napi::Boolean::New(env, s->step());
  }
  Napi::Value Run(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto max = c.u64(info[0], "max_steps", UINT64_MAX, true);
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return U64(env, s->run(max));
  }
  Napi::Value NowNs(const Napi::CallbackInfo& info) {
    auto env = info.Env();
    auto* s = S(env); if (!s) return env.Undefined();
    return U64(env, s->now_ns());
  }
  Napi::Value DrainEvents(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto max = c.u64(info[0], "max", SIZE_MAX, true);
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    auto evs = s->drain_events(static_cast<size_t>(max));
    auto a = Napi::Array::New(env, evs.size());
    for (size_t i = 0; i < evs.size(); ++i) a.Set(static_cast<uint32_t>(i), EventObj(env, evs[i]));
    return a;
  }
  // Up to `max` events for forwarding without a JS object per event, as the protocol's JSON text ("{...},{...}", no
  // brackets; drain_events_json) or as one binary event frame (event_frame.h; drain_events_frame); object lifecycle
  // events (created / destroyed / modified) also as objects, for the host's object table and the scenario recorder.
  // { json | frame, count, first (seq of the first event), objects }.
  Napi::Value DrainEventsJson(const Napi::CallbackInfo& info) { return DrainChunk(info, false); }
  Napi::Value DrainEventsFrame(const Napi::CallbackInfo& info) { return DrainChunk(info, true); }
  Napi::Value DrainChunk(const Napi::CallbackInfo& info, bool frame) {
    auto env = info.Env(); Conv c(env);
    auto max = c.u64(info[0], "max", SIZE_MAX, true);
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return ChunkObj(env, s->drain_events(static_cast<size_t>(max)), frame);
  }
  // { frame | json, count, first, objects } of drained events: the frame (or JSON text) of all of them, and the object
  // life-cycle events also as objects (the host's object table and the scenario recorder follow them).
  static Napi::Object ChunkObj(Napi::Env env, const std::vector<vl::Event>& evs, bool frame, double produced_at_ms = 0) {
    auto o = Napi::Object::New(env);
    if (frame) {
      std::vector<uint8_t> bytes;
      vl::frame::append_frame(bytes, evs, produced_at_ms);
      o.Set("frame", Napi::Buffer<uint8_t>::Copy(env, bytes.data(), bytes.size()));
    } else {
      std::string text;
      vl::json::append_events(text, evs);
      o.Set("json", Napi::String::New(env, text));
    }
    auto objs = Napi::Array::New(env);
    uint32_t no = 0;
    for (const auto& e : evs)
      if (e.kind == vl::EventKind::ObjectCreated || e.kind == vl::EventKind::ObjectDestroyed || e.kind == vl::EventKind::ObjectModified)
        objs.Set(no++, EventObj(env, e));
    o.Set("count", Napi::Number::New(env, static_cast<double>(evs.size())));
    o.Set("first", U64(env, evs.empty() ? 0 : evs.front().seq));
    o.Set("objects", objs);
    return o;
  }
  // The free-running engine's flood, sampled for a console that cannot draw it all: every event queued is drained;
  // the frame holds the object life-cycle and state events (vl::is_state_event: never sampled out, the host's
  // object table and the console's key table and QP states follow them) and the newest `window` events; the others
  // are counted in `dropped`. { frame, count, first, last, dropped, objects } (first / last: seq of the first / last
  // event in the frame, which is not gap-free when dropped > 0).
  Napi::Value DrainEventsSample(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto window = c.u64(info[0], "window");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    uint64_t sampled_out = 0;                    // removed at the source (Runner::set_event_budget) before these
    auto evs = s->drain_events(SIZE_MAX, &sampled_out);
    const size_t removed = vl::keep_state_and_newest(evs, static_cast<size_t>(window));
    // when the oldest of the newest `window` events was produced (the console's latency counts from it); with
    // window 0 only state events go and no time is given
    const size_t newest = std::min<size_t>(evs.size(), window);
    const double at = newest ? runner_->produced_at_ms(evs[evs.size() - newest].seq) : 0;
    auto o = ChunkObj(env, evs, true, at);
    o.Set("last", U64(env, evs.empty() ? 0 : evs.back().seq));
    o.Set("dropped", Napi::Number::New(env, static_cast<double>(removed + sampled_out)));
    return o;
  }
  Napi::Value SetEventCapture(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto on = c.boolean(info[0], "on", true);
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    s->set_event_capture(on);
    return env.Undefined();
  }
  Napi::Value WritePcap(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto path = c.str(info[0], "path");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    return StatusObj(env, s->write_pcap(path));
  }

  // ---- UDP transport (native/src/net/udp.h): a device of this session on the real network
  Napi::Object NetObj(Napi::Env env, const vl::net::UdpTransport& t) {
    auto o = Napi::Object::New(env);
    o.Set("interface", t.interface_name());
    o.Set("port", Napi::Number::New(env, t.port()));
    auto gids = Napi::Array::New(env, t.gids().size());
    for (size_t i = 0; i < t.gids().size(); ++i) {
      auto g = Napi::Object::New(env);
      g.Set("index", Napi::Number::New(env, t.gids()[i].index));
      g.Set("gid", GidText(t.gids()[i].gid));
      g.Set("type", t.gids()[i].type);
      vl::net::IpAddr ip;
      if (vl::net::gid_to_ip(t.gids()[i].gid, ip)) g.Set("ip", vl::net::ip_text(ip));
      gids.Set(static_cast<uint32_t>(i), g);
    }
    o.Set("gids", gids);
    const auto& st = t.stats();
    auto so = Napi::Object::New(env);
    so.Set("txPackets", U64(env, st.tx_packets)); so.Set("txBytes", U64(env, st.tx_bytes));
    so.Set("rxPackets", U64(env, st.rx_packets)); so.Set("rxBytes", U64(env, st.rx_bytes));
    so.Set("rxDropped", U64(env, st.rx_dropped)); so.Set("txDropped", U64(env, st.tx_dropped));
    o.Set("stats", so);
    return o;
  }
  // attach_net(dev, { interface?, address?, port?, peerPort? }) -> Result<{ interface, port, gids, stats }>
  Napi::Value AttachNet(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto dev = c.u32(info[0], "dev");
    auto o = c.obj(info[1], "options");
    vl::net::UdpOptions opt;
    if (c.ok()) {
      opt.interface = c.str(o.Get("interface"), "options.interface", "", true);
      opt.address = c.str(o.Get("address"), "options.address", "", true);
      uint32_t port = c.u32(o.Get("port"), "options.port", vl::wire::kRoceUdpPort, true);
      uint32_t peer = c.u32(o.Get("peerPort"), "options.peerPort", 0, true);
      if (port > 65535) c.fail("options.port", "a UDP port 0..65535");
      if (peer > 65535) c.fail("options.peerPort", "a UDP port 0..65535");
      opt.port = static_cast<uint16_t>(port);
      opt.peer_port = static_cast<uint16_t>(peer);
    }
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    auto r = vl::net::UdpTransport::attach(*s, dev, opt);
    auto out = StatusObj(env, r);
    if (!r.ok()) return out;
    r.value->set_capture(true);                    // the console saves the network pcap on request
    out.Set("value", NetObj(env, *r.value));
    nets_[dev] = std::move(r.value);
    return out;
  }
  Napi::Value DetachNet(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto dev = c.u32(info[0], "dev");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    if (!nets_.erase(dev)) return StatusObj(env, vl::Status{ENOENT, "dev: device " + std::to_string(dev) + " is not on the network"});
    return StatusObj(env, vl::Status{});
  }
  // net_info(dev) -> { interface, port, gids, stats } or null when the device is not on the network
  Napi::Value NetInfo(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto dev = c.u32(info[0], "dev");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    auto it = nets_.find(dev);
    return it == nets_.end() ? env.Null() : Napi::Value(NetObj(env, *it->second));
  }
  // net_poll(timeout_ns = 0): polls every attached transport once; returns datagrams + engine actions run.
  // With one transport it may wait up to timeout_ns; with several each is polled without waiting.
  Napi::Value NetPoll(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto timeout = c.u64(info[0], "timeout_ns", 0, true);
    if (c.ok() && timeout > 1000000000ull) c.fail("timeout_ns", "at most 1 s (1e9 ns)");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    size_t work = 0;
    for (auto& [dev, t] : nets_) work += t->poll(nets_.size() == 1 ? static_cast<int64_t>(timeout) : 0);
    return Napi::Number::New(env, static_cast<double>(work));
  }
  Napi::Value WriteNetPcap(const Napi::CallbackInfo& info) {
    auto env = info.Env(); Conv c(env);
    auto dev = c.u32(info[0], "dev");
    auto path = c.str(info[1], "path");
    if (c.thrown()) return env.Undefined();
    auto* s = S(env); if (!s) return env.Undefined();
    auto it = nets_.find(dev);
    if (it == nets_.end()) return StatusObj(env, vl::Status{ENOENT, "dev: device " + std::to_string(dev) + " is not on the network"});
    return StatusObj(env, it->second->write_pcap(path));
  }
};

// Decode one RoCEv2 UDP payload (exposed for tests and for pcaps read from disk).
Napi::Value DecodePacket(const Napi::CallbackInfo& info) {
  auto env = info.Env(); Conv c(env);
  auto b = c.bytes(info[0], "bytes");
  if (c.thrown()) return env.Undefined();
  return PacketObj(env, b);
}

// Real RDMA devices as libibverbs sees them (dlopen; { library, error, devices: [{ name, guid }] }).
Napi::Value IbverbsDevices(const Napi::CallbackInfo& info) {
  auto env = info.Env();
  auto e = vl::ibverbs::enumerate();
  auto o = Napi::Object::New(env);
  o.Set("library", Napi::Boolean::New(env, e.library));
  if (!e.error.empty()) o.Set("error", e.error);
  auto a = Napi::Array::New(env, e.devices.size());
  for (size_t i = 0; i < e.devices.size(); ++i) {
    auto d = Napi::Object::New(env);
    d.Set("name", e.devices[i].name);
    const auto* g = reinterpret_cast<const uint8_t*>(&e.devices[i].guid_be);   // big-endian bytes as stored
    char buf[24];
    std::snprintf(buf, sizeof buf, "%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7]);
    d.Set("guid", buf);
    a.Set(static_cast<uint32_t>(i), d);
  }
  o.Set("devices", a);
  return o;
}

// Host network interfaces (getifaddrs): [{ name, index, mtu, up, loopback, addrs: [text] }]
Napi::Value NetInterfaces(const Napi::CallbackInfo& info) {
  auto env = info.Env();
  auto ifs = vl::net::interfaces();
  auto a = Napi::Array::New(env, ifs.size());
  for (size_t i = 0; i < ifs.size(); ++i) {
    auto o = Napi::Object::New(env);
    o.Set("name", ifs[i].name);
    o.Set("index", Napi::Number::New(env, ifs[i].index));
    o.Set("mtu", Napi::Number::New(env, ifs[i].mtu));
    o.Set("up", Napi::Boolean::New(env, ifs[i].up));
    o.Set("loopback", Napi::Boolean::New(env, ifs[i].loopback));
    auto addrs = Napi::Array::New(env, ifs[i].addrs.size());
    for (size_t k = 0; k < ifs[i].addrs.size(); ++k) addrs.Set(static_cast<uint32_t>(k), vl::net::ip_text(ifs[i].addrs[k]));
    o.Set("addrs", addrs);
    a.Set(static_cast<uint32_t>(i), o);
  }
  return a;
}

// Deliberate native crash, used only to prove that the UI survives the backend host's death.
Napi::Value Abort(const Napi::CallbackInfo& info) {
  std::abort();
  return info.Env().Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("Session", SessionWrap::Init(env));
  exports.Set("decodePacket", Napi::Function::New(env, DecodePacket, "decodePacket"));
  exports.Set("abort", Napi::Function::New(env, Abort, "abort"));
  exports.Set("netInterfaces", Napi::Function::New(env, NetInterfaces, "netInterfaces"));
  exports.Set("ibverbsDevices", Napi::Function::New(env, IbverbsDevices, "ibverbsDevices"));
  exports.Set("sgCheck", Napi::Function::New(env, vladdon::SgCheck, "sgCheck"));
  exports.Set("sgGenerate", Napi::Function::New(env, vladdon::SgGenerate, "sgGenerate"));
  exports.Set("napiVersion", Napi::Number::New(env, NAPI_VERSION));
  return exports;
}

}  // namespace

NODE_API_MODULE(verbslab, Init)
