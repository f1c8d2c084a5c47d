// Binding of the real-device backend (native/ibverbs/realdev.h): `new RealDevice(library, device)` opens a device of
// a libibverbs.so.1 loaded with dlopen; `realdevList(library)` lists a library's devices. Same conventions as
// addon.cpp: { err, msg, value } results, objects in the shapes of app/host/native.ts (the host's adapter,
// app/host/realdev.ts, gives the backend host the software session's interface over it), TypeError for arguments
// of the wrong type. Registered by addon.cpp's Init through RealdevInit.
#define NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED
#include "realdev.h"

#include <endian.h>

#include <arpa/inet.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "../ibverbs/realdev.h"

namespace vladdon {
namespace {
using vl::ibverbs::RealDevice;
using vl::ibverbs::Status;

Napi::Value U64(Napi::Env env, uint64_t v) {
  if (v <= 9007199254740991ull) return Napi::Number::New(env, static_cast<double>(v));
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return Napi::String::New(env, b);
}
std::string Gid(const uint8_t* g) {
  char b[48];
  std::snprintf(b, sizeof b, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[0], g[1], g[2], g[3], g[4],
                g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
  return b;
}

// Argument reading; the first problem becomes a TypeError naming the field (nothing is called then).
struct In {
  Napi::Env env;
  std::string err;
  explicit In(Napi::Env e) : env(e) {}
  uint64_t u64(const Napi::Value& v, const char* where, uint64_t def = 0, bool optional = true) {
    if (v.IsUndefined() || v.IsNull()) { if (!optional) fail(where, "a number"); return def; }
    if (v.IsNumber()) {
      const double d = v.As<Napi::Number>().DoubleValue();
      if (d >= 0 && d <= 9007199254740991.0 && d == static_cast<double>(static_cast<uint64_t>(d))) return static_cast<uint64_t>(d);
    } else if (v.IsString()) {
      const std::string s = v.As<Napi::String>().Utf8Value();
      char* end = nullptr;
      errno = 0;
      const unsigned long long x = std::strtoull(s.c_str(), &end, 0);
      if (!s.empty() && end && !*end && !errno && s[0] != '-') return x;
    } else if (v.IsBigInt()) {
      bool lossless = false;
      const uint64_t x = v.As<Napi::BigInt>().Uint64Value(&lossless);
      if (lossless) return x;
    }
    fail(where, "an unsigned 64-bit integer (number, \"0x..\" string or bigint)");
    return def;
  }
  uint32_t u32(const Napi::Value& v, const char* where, uint32_t def = 0, bool optional = true) {
    const uint64_t x = u64(v, where, def, optional);
    if (x > 0xffffffffull) { fail(where, "a 32-bit integer"); return def; }
    return static_cast<uint32_t>(x);
  }
  std::string str(const Napi::Value& v, const char* where) {
    if (v.IsUndefined() || v.IsNull()) return "";
    if (!v.IsString()) { fail(where, "a string"); return ""; }
    return v.As<Napi::String>().Utf8Value();
  }
  Napi::Object obj(const Napi::Value& v, const char* where) {
    if (!v.IsObject()) { fail(where, "an object"); return Napi::Object::New(env); }
    return v.As<Napi::Object>();
  }
  std::vector<uint8_t> bytes(const Napi::Value& v, const char* where) {
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) { fail(where, "a Uint8Array"); return {}; }
    auto a = v.As<Napi::Uint8Array>();
    return {a.Data(), a.Data() + a.ElementLength()};
  }
  std::vector<ibv_sge> sges(const Napi::Value& v, const char* where) {
    std::vector<ibv_sge> out;
    if (v.IsUndefined()) return out;
    if (!v.IsArray()) { fail(where, "an array"); return out; }
    auto a = v.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); ++i) {
      auto o = obj(a.Get(i), where);
      out.push_back({u64(o.Get("addr"), "sgList.addr"), u32(o.Get("length"), "sgList.length"), u32(o.Get("lkey"), "sgList.lkey")});
    }
    return out;
  }
  void fail(const char* where, const char* what) { if (err.empty()) err = std::string(where) + ": expected " + what; }
  bool thrown() {
    if (err.empty()) return false;
    Napi::TypeError::New(env, err).ThrowAsJavaScriptException();
    return true;
  }
};

Napi::Object St(Napi::Env env, const Status& s) {
  auto o = Napi::Object::New(env);
  o.Set("err", Napi::Number::New(env, s.err));
  o.Set("msg", Napi::String::New(env, s.msg));
  return o;
}
Napi::Object Res(Napi::Env env, const Status& s, Napi::Value v) {
  auto o = St(env, s);
  if (!s.err) o.Set("value", v);
  return o;
}

Napi::Object MrObj(Napi::Env env, const vl::ibverbs::MrInfo& m) {
  auto o = Napi::Object::New(env);
  o.Set("handle", m.handle); o.Set("pd", m.pd); o.Set("lkey", m.lkey); o.Set("rkey", m.rkey);
  o.Set("addr", U64(env, m.addr)); o.Set("length", U64(env, m.length)); o.Set("iova", U64(env, m.addr)); o.Set("access", m.access);
  return o;
}
Napi::Object MwObj(Napi::Env env, const vl::ibverbs::MwInfo& w) {
  auto o = Napi::Object::New(env);
  o.Set("handle", w.handle); o.Set("pd", w.pd); o.Set("rkey", w.rkey); o.Set("type", w.type);
  o.Set("state", w.bound ? "valid" : "free");   // the library's view: bound by the last bind that was posted
  o.Set("mr", w.mr); o.Set("qp", w.qp); o.Set("addr", U64(env, w.addr)); o.Set("length", U64(env, w.length)); o.Set("access", w.access);
  return o;
}
Napi::Object QpObj(Napi::Env env, const vl::ibverbs::QpInfo& q) {
  auto o = Napi::Object::New(env);
  o.Set("handle", q.handle); o.Set("qpNum", q.qp_num); o.Set("device", RealDevice::kDevice);
  auto i = Napi::Object::New(env);
  i.Set("sendCq", q.init.send_cq); i.Set("recvCq", q.init.recv_cq); i.Set("srq", q.init.srq); i.Set("pd", q.init.pd);
  i.Set("qpType", q.init.qp_type); i.Set("sqSigAll", q.init.sq_sig_all);
  auto c = Napi::Object::New(env);
  c.Set("maxSendWr", q.init.cap.max_send_wr); c.Set("maxRecvWr", q.init.cap.max_recv_wr); c.Set("maxSendSge", q.init.cap.max_send_sge);
  c.Set("maxRecvSge", q.init.cap.max_recv_sge); c.Set("maxInlineData", q.init.cap.max_inline_data);
  i.Set("cap", c);
  o.Set("init", i);
  const ibv_qp_attr& x = q.attr;
  auto a = Napi::Object::New(env);
  a.Set("qpState", static_cast<int>(x.qp_state)); a.Set("curQpState", static_cast<int>(x.cur_qp_state)); a.Set("pathMtu", static_cast<int>(x.path_mtu));
  a.Set("qpAccessFlags", x.qp_access_flags); a.Set("qkey", x.qkey); a.Set("rqPsn", x.rq_psn); a.Set("sqPsn", x.sq_psn);
  a.Set("destQpNum", x.dest_qp_num); a.Set("pkeyIndex", x.pkey_index); a.Set("portNum", x.port_num);
  a.Set("maxRdAtomic", x.max_rd_atomic); a.Set("maxDestRdAtomic", x.max_dest_rd_atomic); a.Set("minRnrTimer", x.min_rnr_timer);
  a.Set("timeout", x.timeout); a.Set("retryCnt", x.retry_cnt); a.Set("rnrRetry", x.rnr_retry);
  a.Set("sgidIndex", x.ah_attr.grh.sgid_index);
  a.Set("destDevice", 0);   // a real device's peer is known by its GID only
  a.Set("dgid", Gid(x.ah_attr.grh.dgid.raw));
  o.Set("attr", a);
  return o;
}
Napi::Object WcObj(Napi::Env env, const ibv_wc& w) {
  auto o = Napi::Object::New(env);
  o.Set("wrId", U64(env, w.wr_id)); o.Set("status", static_cast<int>(w.status)); o.Set("opcode", static_cast<int>(w.opcode));
  o.Set("vendorErr", w.vendor_err); o.Set("byteLen", w.byte_len);
  o.Set("immData", (w.wc_flags & IBV_WC_WITH_IMM) ? ntohl(w.imm_data) : 0u);
  o.Set("invalidatedRkey", (w.wc_flags & IBV_WC_WITH_INV) ? w.invalidated_rkey : 0u);
  o.Set("qpNum", w.qp_num); o.Set("srcQp", w.src_qp); o.Set("wcFlags", w.wc_flags); o.Set("pkeyIndex", w.pkey_index);
  o.Set("slid", w.slid); o.Set("sl", w.sl); o.Set("dlidPathBits", w.dlid_path_bits);
  return o;
}

Napi::Object InfoObj(Napi::Env env, const vl::ibverbs::DeviceInfo& d) {
  auto o = Napi::Object::New(env);
  o.Set("name", d.name); o.Set("library", d.library); o.Set("software", d.software); o.Set("fwVer", d.fw_ver);
  char guid[24];
  std::snprintf(guid, sizeof guid, "%016llx", static_cast<unsigned long long>(be64toh(d.node_guid_be)));
  o.Set("nodeGuid", guid);
  const ibv_device_attr& a = d.attr;
  auto at = Napi::Object::New(env);
  at.Set("vendorId", a.vendor_id); at.Set("vendorPartId", a.vendor_part_id); at.Set("hwVer", a.hw_ver);
  at.Set("deviceCapFlags", a.device_cap_flags); at.Set("atomicCap", static_cast<int>(a.atomic_cap));
  at.Set("maxQp", a.max_qp); at.Set("maxQpWr", a.max_qp_wr); at.Set("maxSge", a.max_sge); at.Set("maxCq", a.max_cq);
  at.Set("maxCqe", a.max_cqe); at.Set("maxMr", a.max_mr); at.Set("maxPd", a.max_pd); at.Set("maxMw", a.max_mw);
  at.Set("maxSrq", a.max_srq); at.Set("maxSrqWr", a.max_srq_wr); at.Set("maxSrqSge", a.max_srq_sge);
  at.Set("maxQpRdAtom", a.max_qp_rd_atom); at.Set("maxQpInitRdAtom", a.max_qp_init_rd_atom);
  at.Set("maxMrSize", U64(env, a.max_mr_size)); at.Set("pageSizeCap", U64(env, a.page_size_cap));
  at.Set("physPortCnt", a.phys_port_cnt);
  o.Set("attr", at);
  auto p = Napi::Object::New(env);
  p.Set("state", static_cast<int>(d.port.state)); p.Set("activeMtu", static_cast<int>(d.port.active_mtu));
  p.Set("maxMtu", static_cast<int>(d.port.max_mtu)); p.Set("linkLayer", d.port.link_layer); p.Set("lid", d.port.lid);
  p.Set("gidTblLen", d.port.gid_tbl_len);
  o.Set("port", p);
  auto gids = Napi::Array::New(env, d.gids.size());
  for (size_t i = 0; i < d.gids.size(); ++i) {
    auto g = Napi::Object::New(env);
    g.Set("index", d.gids[i].index); g.Set("gid", d.gids[i].gid); g.Set("type", d.gids[i].type);
    gids.Set(static_cast<uint32_t>(i), g);
  }
  o.Set("gids", gids);
  return o;
}

class RealDeviceWrap : public Napi::ObjectWrap<RealDeviceWrap> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "RealDevice", {
      InstanceMethod<&RealDeviceWrap::OpenStatus>("open_status"), InstanceMethod<&RealDeviceWrap::Close>("close"),
      InstanceMethod<&RealDeviceWrap::Info>("info"),
      InstanceMethod<&RealDeviceWrap::AllocPd>("alloc_pd"), InstanceMethod<&RealDeviceWrap::DeallocPd>("dealloc_pd"),
      InstanceMethod<&RealDeviceWrap::AllocBuffer>("alloc_buffer"), InstanceMethod<&RealDeviceWrap::FreeBuffer>("free_buffer"),
      InstanceMethod<&RealDeviceWrap::WriteMemory>("write_memory"), InstanceMethod<&RealDeviceWrap::ReadMemory>("read_memory"),
      InstanceMethod<&RealDeviceWrap::RegMr>("reg_mr"), InstanceMethod<&RealDeviceWrap::ReregMr>("rereg_mr"),
      InstanceMethod<&RealDeviceWrap::DeregMr>("dereg_mr"), InstanceMethod<&RealDeviceWrap::MrInfo>("mr_info"),
      InstanceMethod<&RealDeviceWrap::AllocMw>("alloc_mw"), InstanceMethod<&RealDeviceWrap::DeallocMw>("dealloc_mw"),
      InstanceMethod<&RealDeviceWrap::BindMw>("bind_mw"), InstanceMethod<&RealDeviceWrap::MwInfo>("mw_info"),
      InstanceMethod<&RealDeviceWrap::CreateCq>("create_cq"), InstanceMethod<&RealDeviceWrap::DestroyCq>("destroy_cq"),
      InstanceMethod<&RealDeviceWrap::CqInfo>("cq_info"), InstanceMethod<&RealDeviceWrap::ReqNotifyCq>("req_notify_cq"),
      InstanceMethod<&RealDeviceWrap::PollCq>("poll_cq"), InstanceMethod<&RealDeviceWrap::GetCqEvent>("get_cq_event"),
      InstanceMethod<&RealDeviceWrap::AckCqEvents>("ack_cq_events"),
      InstanceMethod<&RealDeviceWrap::CreateSrq>("create_srq"), InstanceMethod<&RealDeviceWrap::ModifySrq>("modify_srq"),
      InstanceMethod<&RealDeviceWrap::DestroySrq>("destroy_srq"), InstanceMethod<&RealDeviceWrap::PostSrqRecv>("post_srq_recv"),
      InstanceMethod<&RealDeviceWrap::CreateQp>("create_qp"), InstanceMethod<&RealDeviceWrap::ModifyQp>("modify_qp"),
      InstanceMethod<&RealDeviceWrap::QueryQp>("query_qp"), InstanceMethod<&RealDeviceWrap::DestroyQp>("destroy_qp"),
      InstanceMethod<&RealDeviceWrap::CreateAh>("create_ah"),
      InstanceMethod<&RealDeviceWrap::PostSend>("post_send"), InstanceMethod<&RealDeviceWrap::PostRecv>("post_recv"),
      InstanceMethod<&RealDeviceWrap::TakeAsync>("take_async"),
    });
  }

  explicit RealDeviceWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<RealDeviceWrap>(info) {
    In in(info.Env());
    const std::string lib = in.str(info[0], "library"), dev = in.str(info[1], "device");
    if (in.thrown()) return;
    d_ = RealDevice::open(lib, dev, open_);
  }

 private:
  std::unique_ptr<RealDevice> d_;
  Status open_;

  // every method but open_status/close answers ENODEV once the device is closed (or was never opened)
  bool gone(const Napi::CallbackInfo& info, Napi::Value& out) {
    if (d_) return false;
    out = St(info.Env(), {ENODEV, open_.err ? open_.msg : "the real device was closed"});
    return true;
  }
#define GUARD Napi::Value g_; if (gone(info, g_)) return g_; In in(info.Env()); const Napi::Env env = info.Env()

  Napi::Value OpenStatus(const Napi::CallbackInfo& info) { return St(info.Env(), open_); }
  Napi::Value Close(const Napi::CallbackInfo& info) { if (d_) d_->close(); d_.reset(); return info.Env().Undefined(); }
  Napi::Value Info(const Napi::CallbackInfo& info) {
    GUARD;
    d_->refresh();
    return InfoObj(env, d_->info());
  }
  Napi::Value AllocPd(const Napi::CallbackInfo& info) {
    GUARD;
    uint32_t pd = 0;
    const Status s = d_->alloc_pd(pd);
    return Res(env, s, Napi::Number::New(env, pd));
  }
  Napi::Value DeallocPd(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t pd = in.u32(info[0], "pd", 0, false);
    if (in.thrown()) return env.Undefined();
    return St(env, d_->dealloc_pd(pd));
  }
  Napi::Value AllocBuffer(const Napi::CallbackInfo& info) {
    GUARD; const uint64_t len = in.u64(info[0], "length", 0, false);
    if (in.thrown()) return env.Undefined();
    vl::ibverbs::BufferInfo b{};
    const Status s = d_->alloc_buffer(len, b);
    auto o = Napi::Object::New(env);
    o.Set("handle", b.handle); o.Set("addr", U64(env, b.addr)); o.Set("length", U64(env, b.length));
    return Res(env, s, o);
  }
  Napi::Value FreeBuffer(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t b = in.u32(info[0], "buffer", 0, false);
    if (in.thrown()) return env.Undefined();
    return St(env, d_->free_buffer(b));
  }
  Napi::Value WriteMemory(const Napi::CallbackInfo& info) {
    GUARD; const uint64_t addr = in.u64(info[0], "addr", 0, false); const auto data = in.bytes(info[1], "data");
    if (in.thrown()) return env.Undefined();
    return St(env, d_->write_memory(addr, data.data(), data.size()));
  }
  Napi::Value ReadMemory(const Napi::CallbackInfo& info) {
    GUARD; const uint64_t addr = in.u64(info[0], "addr", 0, false); const uint64_t len = in.u64(info[1], "length", 0, false);
    if (in.thrown()) return env.Undefined();
    std::vector<uint8_t> out;
    const Status s = d_->read_memory(addr, len, out);
    return Res(env, s, Napi::Buffer<uint8_t>::Copy(env, out.data(), out.size()));
  }
  Napi::Value RegMr(const Napi::CallbackInfo& info) {
    GUARD;
    const uint32_t pd = in.u32(info[0], "pd", 0, false); const uint64_t addr = in.u64(info[1], "addr", 0, false);
    const uint64_t len = in.u64(info[2], "length", 0, false); const uint32_t access = in.u32(info[3], "access");
    const bool has_iova = !info[4].IsUndefined(); const uint64_t iova = in.u64(info[4], "iova");
    if (in.thrown()) return env.Undefined();
    vl::ibverbs::MrInfo m{};
    const Status s = d_->reg_mr(pd, addr, len, static_cast<int>(access), has_iova, iova, m);
    return Res(env, s, MrObj(env, m));
  }
  Napi::Value ReregMr(const Napi::CallbackInfo& info) {
    GUARD;
    const uint32_t mr = in.u32(info[0], "mr", 0, false), flags = in.u32(info[1], "flags"), pd = in.u32(info[2], "pd");
    const uint64_t addr = in.u64(info[3], "addr"), len = in.u64(info[4], "length"); const uint32_t access = in.u32(info[5], "access");
    if (in.thrown()) return env.Undefined();
    vl::ibverbs::MrInfo m{};
    const Status s = d_->rereg_mr(mr, static_cast<int>(flags), pd, addr, len, static_cast<int>(access), m);
    return Res(env, s, MrObj(env, m));
  }
  Napi::Value DeregMr(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t mr = in.u32(info[0], "mr", 0, false);
    if (in.thrown()) return env.Undefined();
    return St(env, d_->dereg_mr(mr));
  }
  Napi::Value MrInfo(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t mr = in.u32(info[0], "mr", 0, false);
    if (in.thrown()) return env.Undefined();
    vl::ibverbs::MrInfo m{};
    return d_->mr_info(mr, m) ? Napi::Value(MrObj(env, m)) : env.Null();
  }
  Napi::Value AllocMw(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t pd = in.u32(info[0], "pd", 0, false), type = in.u32(info[1], "type", 1);
    if (in.thrown()) return env.Undefined();
    vl::ibverbs::MwInfo w{};
    const Status s = d_->alloc_mw(pd, static_cast<int>(type), w);
    return Res(env, s, MwObj(env, w));
  }
  Napi::Value DeallocMw(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t mw = in.u32(info[0], "mw", 0, false);
    if (in.thrown()) return env.Undefined();
    return St(env, d_->dealloc_mw(mw));
  }
  Napi::Value BindMw(const Napi::CallbackInfo& info) {
    GUARD;
    const uint32_t qp = in.u32(info[0], "qp", 0, false), mw = in.u32(info[1], "mw", 0, false);
    const uint64_t wr_id = in.u64(info[2], "wrId"); const uint32_t flags = in.u32(info[3], "sendFlags"), mr = in.u32(info[4], "mr", 0, false);
    const uint64_t addr = in.u64(info[5], "addr"), len = in.u64(info[6], "length"); const uint32_t access = in.u32(info[7], "access");
    if (in.thrown()) return env.Undefined();
    uint32_t rkey = 0;
    const Status s = d_->bind_mw(qp, mw, wr_id, flags, mr, addr, len, static_cast<int>(access), rkey);
    return Res(env, s, Napi::Number::New(env, rkey));
  }
  Napi::Value MwInfo(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t mw = in.u32(info[0], "mw", 0, false);
    if (in.thrown()) return env.Undefined();
    vl::ibverbs::MwInfo w{};
    return d_->mw_info(mw, w) ? Napi::Value(MwObj(env, w)) : env.Null();
  }
  Napi::Value CreateCq(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t cqe = in.u32(info[0], "cqe", 0, false); const bool ch = info[1].ToBoolean();
    if (in.thrown()) return env.Undefined();
    vl::ibverbs::CqInfo c{};
    const Status s = d_->create_cq(static_cast<int>(cqe), ch, c);
    auto o = Napi::Object::New(env);
    o.Set("cq", c.handle); o.Set("cqe", c.cqe); o.Set("channel", c.channel);
    return Res(env, s, o);
  }
  Napi::Value DestroyCq(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t cq = in.u32(info[0], "cq", 0, false);
    if (in.thrown()) return env.Undefined();
    return St(env, d_->destroy_cq(cq));
  }
  Napi::Value CqInfo(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t cq = in.u32(info[0], "cq", 0, false);
    if (in.thrown()) return env.Undefined();
    vl::ibverbs::CqInfo c{};
    if (!d_->cq_info(cq, c)) return env.Null();
    auto o = Napi::Object::New(env);
    o.Set("cq", c.handle); o.Set("device", RealDevice::kDevice); o.Set("cqe", c.cqe); o.Set("channel", c.channel);
    return o;
  }
  Napi::Value ReqNotifyCq(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t cq = in.u32(info[0], "cq", 0, false);
    if (in.thrown()) return env.Undefined();
    return St(env, d_->req_notify_cq(cq, info[1].ToBoolean()));
  }
  Napi::Value PollCq(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t cq = in.u32(info[0], "cq", 0, false), max = in.u32(info[1], "max", 16);
    if (in.thrown()) return env.Undefined();
    std::vector<ibv_wc> wcs;
    const Status s = d_->poll_cq(cq, static_cast<int>(max > 4096 ? 4096 : max), wcs);
    auto a = Napi::Array::New(env, wcs.size());
    for (size_t i = 0; i < wcs.size(); ++i) a.Set(static_cast<uint32_t>(i), WcObj(env, wcs[i]));
    return Res(env, s, a);
  }
  Napi::Value GetCqEvent(const Napi::CallbackInfo& info) {
    GUARD;
    uint32_t cq = 0;
    const Status s = d_->get_cq_event(cq);
    return Res(env, s, Napi::Number::New(env, cq));
  }
  Napi::Value AckCqEvents(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t cq = in.u32(info[0], "cq", 0, false), n = in.u32(info[1], "n", 1);
    if (in.thrown()) return env.Undefined();
    return St(env, d_->ack_cq_events(cq, n));
  }
  Napi::Value CreateSrq(const Napi::CallbackInfo& info) {
    GUARD;
    const uint32_t pd = in.u32(info[0], "pd", 0, false), wr = in.u32(info[1], "maxWr"), sge = in.u32(info[2], "maxSge"), lim = in.u32(info[3], "srqLimit");
    if (in.thrown()) return env.Undefined();
    uint32_t srq = 0;
    const Status s = d_->create_srq(pd, wr, sge, lim, srq);
    return Res(env, s, Napi::Number::New(env, srq));
  }
  Napi::Value ModifySrq(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t srq = in.u32(info[0], "srq", 0, false), lim = in.u32(info[1], "srqLimit");
    if (in.thrown()) return env.Undefined();
    return St(env, d_->modify_srq(srq, lim));
  }
  Napi::Value DestroySrq(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t srq = in.u32(info[0], "srq", 0, false);
    if (in.thrown()) return env.Undefined();
    return St(env, d_->destroy_srq(srq));
  }
  std::vector<vl::ibverbs::RecvWrIn> recvs(In& in, const Napi::Value& v) {
    std::vector<vl::ibverbs::RecvWrIn> out;
    if (!v.IsArray()) { in.fail("wrs", "an array"); return out; }
    auto a = v.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); ++i) {
      auto o = in.obj(a.Get(i), "wrs[]");
      out.push_back({in.u64(o.Get("wrId"), "wrId"), in.sges(o.Get("sgList"), "sgList")});
    }
    return out;
  }
  Napi::Object Post(Napi::Env env, const Status& s, size_t bad) {
    auto o = St(env, s);
    o.Set("badWr", Napi::Number::New(env, static_cast<double>(s.err ? bad : 0)));
    return o;
  }
  Napi::Value PostSrqRecv(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t srq = in.u32(info[0], "srq", 0, false); const auto wrs = recvs(in, info[1]);
    if (in.thrown()) return env.Undefined();
    size_t bad = 0;
    const Status s = d_->post_srq_recv(srq, wrs, bad);
    return Post(env, s, bad);
  }
  Napi::Value PostRecv(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t qp = in.u32(info[0], "qp", 0, false); const auto wrs = recvs(in, info[1]);
    if (in.thrown()) return env.Undefined();
    size_t bad = 0;
    const Status s = d_->post_recv(qp, wrs, bad);
    return Post(env, s, bad);
  }
  Napi::Value CreateQp(const Napi::CallbackInfo& info) {
    GUARD;
    const uint32_t pd = in.u32(info[0], "pd", 0, false);
    auto o = in.obj(info[1], "init");
    vl::ibverbs::QpInit init{};
    if (in.err.empty()) {
      init.send_cq = in.u32(o.Get("sendCq"), "init.sendCq", 0, false); init.recv_cq = in.u32(o.Get("recvCq"), "init.recvCq", 0, false);
      init.srq = in.u32(o.Get("srq"), "init.srq"); init.qp_type = static_cast<int>(in.u32(o.Get("qpType"), "init.qpType", IBV_QPT_RC));
      init.sq_sig_all = o.Get("sqSigAll").ToBoolean();
      auto c = in.obj(o.Get("cap"), "init.cap");
      if (in.err.empty()) {
        init.cap.max_send_wr = in.u32(c.Get("maxSendWr"), "cap.maxSendWr"); init.cap.max_recv_wr = in.u32(c.Get("maxRecvWr"), "cap.maxRecvWr");
        init.cap.max_send_sge = in.u32(c.Get("maxSendSge"), "cap.maxSendSge"); init.cap.max_recv_sge = in.u32(c.Get("maxRecvSge"), "cap.maxRecvSge");
        init.cap.max_inline_data = in.u32(c.Get("maxInlineData"), "cap.maxInlineData");
      }
    }
    if (in.thrown()) return env.Undefined();
    vl::ibverbs::QpInfo q{};
    const Status s = d_->create_qp(pd, init, q);
    return Res(env, s, QpObj(env, q));
  }
  Napi::Value ModifyQp(const Napi::CallbackInfo& info) {
    GUARD;
    const uint32_t qp = in.u32(info[0], "qp", 0, false);
    auto o = in.obj(info[1], "attr");
    const uint32_t mask = in.u32(info[2], "mask", 0, false);
    vl::ibverbs::QpAttrIn a;
    if (in.err.empty()) {
      ibv_qp_attr& x = a.attr;
      x.qp_state = static_cast<ibv_qp_state>(in.u32(o.Get("qpState"), "attr.qpState"));
      x.cur_qp_state = static_cast<ibv_qp_state>(in.u32(o.Get("curQpState"), "attr.curQpState"));
      x.path_mtu = static_cast<ibv_mtu>(in.u32(o.Get("pathMtu"), "attr.pathMtu", IBV_MTU_1024));
      x.qp_access_flags = static_cast<unsigned>(in.u32(o.Get("qpAccessFlags"), "attr.qpAccessFlags"));
      x.qkey = in.u32(o.Get("qkey"), "attr.qkey"); x.rq_psn = in.u32(o.Get("rqPsn"), "attr.rqPsn"); x.sq_psn = in.u32(o.Get("sqPsn"), "attr.sqPsn");
      x.dest_qp_num = in.u32(o.Get("destQpNum"), "attr.destQpNum");
      x.pkey_index = static_cast<uint16_t>(in.u32(o.Get("pkeyIndex"), "attr.pkeyIndex"));
      x.port_num = static_cast<uint8_t>(in.u32(o.Get("portNum"), "attr.portNum", 1));
      x.max_rd_atomic = static_cast<uint8_t>(in.u32(o.Get("maxRdAtomic"), "attr.maxRdAtomic"));
      x.max_dest_rd_atomic = static_cast<uint8_t>(in.u32(o.Get("maxDestRdAtomic"), "attr.maxDestRdAtomic"));
      x.min_rnr_timer = static_cast<uint8_t>(in.u32(o.Get("minRnrTimer"), "attr.minRnrTimer"));
      x.timeout = static_cast<uint8_t>(in.u32(o.Get("timeout"), "attr.timeout"));
      x.retry_cnt = static_cast<uint8_t>(in.u32(o.Get("retryCnt"), "attr.retryCnt"));
      x.rnr_retry = static_cast<uint8_t>(in.u32(o.Get("rnrRetry"), "attr.rnrRetry"));
      x.ah_attr.grh.sgid_index = static_cast<uint8_t>(in.u32(o.Get("sgidIndex"), "attr.sgidIndex"));
      a.dest_is_self = in.u32(o.Get("destDevice"), "attr.destDevice") == RealDevice::kDevice;
      if (!o.Get("dgid").IsUndefined()) {
        const auto g = in.bytes(o.Get("dgid"), "attr.dgid");
        if (g.size() == 16) { a.has_dgid = true; std::copy(g.begin(), g.end(), a.dgid); }
        else in.fail("attr.dgid", "16 bytes");
      }
    }
    if (in.thrown()) return env.Undefined();
    return St(env, d_->modify_qp(qp, a, static_cast<int>(mask)));
  }
  Napi::Value QueryQp(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t qp = in.u32(info[0], "qp", 0, false);
    if (in.thrown()) return env.Undefined();
    vl::ibverbs::QpInfo q{};
    const Status s = d_->query_qp(qp, q);
    return Res(env, s, QpObj(env, q));
  }
  Napi::Value DestroyQp(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t qp = in.u32(info[0], "qp", 0, false);
    if (in.thrown()) return env.Undefined();
    return St(env, d_->destroy_qp(qp));
  }
  Napi::Value CreateAh(const Napi::CallbackInfo& info) {
    GUARD; const uint32_t pd = in.u32(info[0], "pd", 0, false); const auto g = in.bytes(info[1], "dgid"); const uint32_t sgid = in.u32(info[2], "sgidIndex");
    if (in.err.empty() && g.size() != 16) in.fail("dgid", "16 bytes");
    if (in.thrown()) return env.Undefined();
    uint32_t ah = 0;
    const Status s = d_->create_ah(pd, g.data(), static_cast<uint8_t>(sgid), ah);
    return Res(env, s, Napi::Number::New(env, ah));
  }
  Napi::Value PostSend(const Napi::CallbackInfo& info) {
    GUARD;
    const uint32_t qp = in.u32(info[0], "qp", 0, false);
    std::vector<vl::ibverbs::SendWrIn> wrs;
    if (!info[1].IsArray()) in.fail("wrs", "an array");
    else {
      auto arr = info[1].As<Napi::Array>();
      for (uint32_t i = 0; i < arr.Length() && in.err.empty(); ++i) {
        auto o = in.obj(arr.Get(i), "wrs[]");
        vl::ibverbs::SendWrIn w;
        w.wr_id = in.u64(o.Get("wrId"), "wrId"); w.opcode = static_cast<int>(in.u32(o.Get("opcode"), "opcode", 0, false));
        w.send_flags = in.u32(o.Get("sendFlags"), "sendFlags"); w.sg = in.sges(o.Get("sgList"), "sgList");
        if (!o.Get("inlineData").IsUndefined()) w.inline_data = in.bytes(o.Get("inlineData"), "inlineData");
        w.has_imm = !o.Get("immData").IsUndefined(); w.imm_or_inv = in.u32(o.Get("immData"), "immData");
        w.remote_addr = in.u64(o.Get("remoteAddr"), "remoteAddr"); w.rkey = in.u32(o.Get("rkey"), "rkey");
        w.compare_add = in.u64(o.Get("compareAdd"), "compareAdd"); w.swap = in.u64(o.Get("swap"), "swap");
        w.ah = in.u32(o.Get("ah"), "ah"); w.remote_qpn = in.u32(o.Get("remoteQpn"), "remoteQpn"); w.remote_qkey = in.u32(o.Get("remoteQkey"), "remoteQkey");
        w.mw = in.u32(o.Get("mw"), "mw"); w.bind_rkey = in.u32(o.Get("bindRkey"), "bindRkey"); w.bind_mr = in.u32(o.Get("bindMr"), "bindMr");
        w.bind_addr = in.u64(o.Get("bindAddr"), "bindAddr"); w.bind_length = in.u64(o.Get("bindLength"), "bindLength");
        w.bind_access = static_cast<int>(in.u32(o.Get("bindAccess"), "bindAccess"));
        wrs.push_back(std::move(w));
      }
    }
    if (in.thrown()) return env.Undefined();
    size_t bad = 0;
    const Status s = d_->post_send(qp, wrs, bad);
    return Post(env, s, bad);
  }
  Napi::Value TakeAsync(const Napi::CallbackInfo& info) {
    GUARD;
    const auto evs = d_->take_async();
    auto a = Napi::Array::New(env, evs.size());
    for (size_t i = 0; i < evs.size(); ++i) {
      auto o = Napi::Object::New(env);
      o.Set("type", evs[i].type); o.Set("obj", evs[i].obj); o.Set("objKind", evs[i].obj_kind); o.Set("t", U64(env, evs[i].t_ns));
      a.Set(static_cast<uint32_t>(i), o);
    }
    return a;
  }
#undef GUARD
};

Napi::Value RealdevList(const Napi::CallbackInfo& info) {
  In in(info.Env());
  const std::string lib = in.str(info[0], "library");
  if (in.thrown()) return info.Env().Undefined();
  const auto l = vl::ibverbs::list_devices(lib);
  const Napi::Env env = info.Env();
  auto o = Napi::Object::New(env);
  o.Set("library", l.library); o.Set("software", l.software); o.Set("path", l.path);
  if (!l.error.empty()) o.Set("error", l.error);
  auto a = Napi::Array::New(env, l.devices.size());
  for (size_t i = 0; i < l.devices.size(); ++i) {
    auto d = Napi::Object::New(env);
    char guid[24];
    std::snprintf(guid, sizeof guid, "%016llx", static_cast<unsigned long long>(be64toh(l.devices[i].guid_be)));
    d.Set("name", l.devices[i].name); d.Set("guid", guid);
    a.Set(static_cast<uint32_t>(i), d);
  }
  o.Set("devices", a);
  return o;
}

}  // namespace

void RealdevInit(Napi::Env env, Napi::Object exports) {
  exports.Set("RealDevice", RealDeviceWrap::Init(env));
  exports.Set("realdevList", Napi::Function::New(env, RealdevList, "realdevList"));
}

}  // namespace vladdon
