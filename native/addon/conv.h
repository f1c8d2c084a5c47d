// Argument conversion for the binding (see addon.cpp's header comment for the conventions): JS values to vl::
// types, recording the first problem instead of throwing (the binding is built without C++ exceptions), plus the
// small value formatters every binding file uses.
#pragma once
#define NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED
#include <napi.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "vl/session.h"

namespace vladdon {

inline constexpr uint64_t kMaxSafe = (1ull << 53) - 1;

inline Napi::Value U64(Napi::Env env, uint64_t v) {
  if (v <= kMaxSafe) return Napi::Number::New(env, static_cast<double>(v));
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return Napi::String::New(env, buf);
}

inline std::string HexOf(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s(n * 2, '0');
  for (size_t i = 0; i < n; ++i) { s[2 * i] = d[p[i] >> 4]; s[2 * i + 1] = d[p[i] & 15]; }
  return s;
}

inline std::string GidText(const uint8_t g[16]) {
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

}  // namespace vladdon
