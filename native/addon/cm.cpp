// The device's connection manager (vl/cm.h, native/src/cm; docs/cm.md): session.cm_* over Session::cm_*. Addresses
// are { family?: 'ipv4' | 'ipv6', ip: text, port } (the family follows the text when not given); events and IDs
// come back as plain objects with the rdma-core / kernel names of their enums beside the numbers.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "binding.h"
#include "objects.h"
#include "vl/names.h"

namespace vladdon {
namespace {

bool ParseAddr(Conv& c, const Napi::Value& v, const std::string& where, vl::CmAddr& a) {
  auto o = c.obj(v, where);
  if (!c.ok()) return false;
  const std::string ip = c.str(o.Get("ip"), where + ".ip", "", true);
  const uint32_t port = c.u32(o.Get("port"), where + ".port", 0, true);
  const std::string fam = c.str(o.Get("family"), where + ".family", "", true);
  if (!c.ok()) return false;
  if (port > 65535) { c.fail(where + ".port", "a port 0..65535"); return false; }
  a = vl::CmAddr{};
  a.port = uint16_t(port);
  uint8_t v4[4];
  if (ip.empty()) { a.family = fam == "ipv6" ? 10 : 2; return true; }
  if (fam != "ipv6" && inet_pton(AF_INET, ip.c_str(), v4) == 1) {
    a.family = 2; a.ip[10] = a.ip[11] = 0xff; std::memcpy(a.ip + 12, v4, 4);
    return true;
  }
  if (fam != "ipv4" && inet_pton(AF_INET6, ip.c_str(), a.ip) == 1) { a.family = 10; return true; }
  c.fail(where + ".ip", "a numeric IPv4 or IPv6 address");
  return false;
}

Napi::Object AddrObj(Napi::Env env, const vl::CmAddr& a) {
  auto o = Napi::Object::New(env);
  char b[INET6_ADDRSTRLEN] = "";
  if (a.family == 2) inet_ntop(AF_INET, a.ip + 12, b, sizeof b);
  else if (a.family == 10) inet_ntop(AF_INET6, a.ip, b, sizeof b);
  o.Set("family", a.family == 2 ? "ipv4" : a.family == 10 ? "ipv6" : "");
  o.Set("ip", std::string(b));
  o.Set("port", Napi::Number::New(env, a.port));
  return o;
}

vl::CmConnParam ParseParam(Conv& c, const Napi::Value& v) {
  vl::CmConnParam p;
  if (v.IsUndefined() || v.IsNull()) return p;
  auto o = c.obj(v, "param");
  if (!c.ok()) return p;
  p.private_data = c.bytes(o.Get("privateData"), "param.privateData", true);
  p.responder_resources = uint8_t(c.u32(o.Get("responderResources"), "param.responderResources", 0, true));
  p.initiator_depth = uint8_t(c.u32(o.Get("initiatorDepth"), "param.initiatorDepth", 0, true));
  p.flow_control = uint8_t(c.u32(o.Get("flowControl"), "param.flowControl", 1, true));
  p.retry_count = uint8_t(c.u32(o.Get("retryCount"), "param.retryCount", 7, true));
  p.rnr_retry_count = uint8_t(c.u32(o.Get("rnrRetryCount"), "param.rnrRetryCount", 7, true));
  p.srq = uint8_t(c.u32(o.Get("srq"), "param.srq", 0, true));
  p.qp_num = c.u32(o.Get("qpNum"), "param.qpNum", 0, true);
  return p;
}

Napi::Object ParamObj(Napi::Env env, const vl::CmConnParam& p) {
  auto o = Napi::Object::New(env);
  auto pd = Napi::Uint8Array::New(env, p.private_data.size());
  if (!p.private_data.empty()) std::memcpy(pd.Data(), p.private_data.data(), p.private_data.size());
  o.Set("privateData", pd);
  o.Set("responderResources", Napi::Number::New(env, p.responder_resources));
  o.Set("initiatorDepth", Napi::Number::New(env, p.initiator_depth));
  o.Set("flowControl", Napi::Number::New(env, p.flow_control));
  o.Set("retryCount", Napi::Number::New(env, p.retry_count));
  o.Set("rnrRetryCount", Napi::Number::New(env, p.rnr_retry_count));
  o.Set("srq", Napi::Number::New(env, p.srq));
  o.Set("qpNum", Napi::Number::New(env, p.qp_num));
  return o;
}

Napi::Object IdObj(Napi::Env env, const vl::CmIdInfo& i) {
  auto o = Napi::Object::New(env);
  o.Set("id", Napi::Number::New(env, double(i.id))); o.Set("dev", Napi::Number::New(env, double(i.dev)));
  o.Set("qp", Napi::Number::New(env, double(i.qp))); o.Set("listenId", Napi::Number::New(env, double(i.listen_id)));
  o.Set("portSpace", Napi::Number::New(env, i.port_space)); o.Set("qpType", Napi::Number::New(env, i.qp_type));
  o.Set("state", Napi::Number::New(env, i.state));
  const char* sn = vl::name_of(vl::kCmStateNames, i.state);
  o.Set("stateName", std::string(sn ? sn : "?"));
  o.Set("bound", Napi::Boolean::New(env, i.bound)); o.Set("addrResolved", Napi::Boolean::New(env, i.addr_resolved));
  o.Set("routeResolved", Napi::Boolean::New(env, i.route_resolved)); o.Set("listening", Napi::Boolean::New(env, i.listening));
  o.Set("src", AddrObj(env, i.src)); o.Set("dst", AddrObj(env, i.dst));
  o.Set("sgidIndex", Napi::Number::New(env, i.sgid_index));
  o.Set("sgid", GidText(i.sgid)); o.Set("dgid", GidText(i.dgid));
  o.Set("localCommId", Napi::Number::New(env, i.local_comm_id)); o.Set("remoteCommId", Napi::Number::New(env, i.remote_comm_id));
  o.Set("localQpn", Napi::Number::New(env, i.local_qpn)); o.Set("remoteQpn", Napi::Number::New(env, i.remote_qpn));
  o.Set("startingPsn", Napi::Number::New(env, i.starting_psn)); o.Set("pathMtu", Napi::Number::New(env, i.path_mtu));
  o.Set("serviceId", U64(env, i.service_id)); o.Set("peerDev", Napi::Number::New(env, double(i.peer_dev)));
  o.Set("remoteGuid", U64(env, i.remote_guid));
  o.Set("tos", Napi::Number::New(env, i.tos)); o.Set("ackTimeout", Napi::Number::New(env, i.ack_timeout));
  return o;
}

Napi::Object CmEventObj(Napi::Env env, const vl::CmEvent& e) {
  auto o = Napi::Object::New(env);
  o.Set("id", Napi::Number::New(env, double(e.id))); o.Set("listenId", Napi::Number::New(env, double(e.listen_id)));
  o.Set("event", Napi::Number::New(env, e.event));
  const char* n = vl::name_of(vl::kCmEventNames, e.event);
  o.Set("eventName", std::string(n ? n : "?"));
  o.Set("status", Napi::Number::New(env, e.status));
  o.Set("param", ParamObj(env, e.param));
  o.Set("remoteQpn", Napi::Number::New(env, e.remote_qpn)); o.Set("remoteQkey", Napi::Number::New(env, e.remote_qkey));
  return o;
}

// every method: (id, ...) -> NStatus, through one shape
template <class F> Napi::Value WithId(const Napi::CallbackInfo& info, SessionState& ss, F&& f) {
  auto env = info.Env(); Conv c(env);
  auto id = c.u32(info[0], "id");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return f(env, c, *s, id);
}

Napi::Value CreateId(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto dev = c.u32(info[0], "dev");
  auto ps = c.u32(info[1], "portSpace", vl::CM_PS_TCP, true);
  auto qpt = c.u32(info[2], "qpType", vl::QPT_RC, true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->cm_create_id(dev, ps, qpt), [&](vl::Handle h) { return Napi::Number::New(env, double(h)); });
}
Napi::Value DestroyId(const Napi::CallbackInfo& info, SessionState& ss) {
  return WithId(info, ss, [](Napi::Env env, Conv&, vl::Session& s, uint32_t id) { return StatusObj(env, s.cm_destroy_id(id)); });
}
Napi::Value BindAddr(const Napi::CallbackInfo& info, SessionState& ss) {
  return WithId(info, ss, [&](Napi::Env env, Conv& c, vl::Session& s, uint32_t id) -> Napi::Value {
    vl::CmAddr a;
    ParseAddr(c, info[1], "addr", a);
    if (c.thrown()) return env.Undefined();
    return StatusObj(env, s.cm_bind_addr(id, a));
  });
}
Napi::Value ResolveAddr(const Napi::CallbackInfo& info, SessionState& ss) {
  return WithId(info, ss, [&](Napi::Env env, Conv& c, vl::Session& s, uint32_t id) -> Napi::Value {
    vl::CmAddr dst, src;
    const bool has_src = !info[2].IsUndefined() && !info[2].IsNull();
    ParseAddr(c, info[1], "dst", dst);
    if (has_src) ParseAddr(c, info[2], "src", src);
    if (c.thrown()) return env.Undefined();
    const uint32_t ms = c.u32(info[3], "timeoutMs", 2000, true);
    if (c.thrown()) return env.Undefined();
    return StatusObj(env, s.cm_resolve_addr(id, has_src ? &src : nullptr, dst, ms));
  });
}
Napi::Value ResolveRoute(const Napi::CallbackInfo& info, SessionState& ss) {
  return WithId(info, ss, [&](Napi::Env env, Conv& c, vl::Session& s, uint32_t id) -> Napi::Value {
    const uint32_t ms = c.u32(info[1], "timeoutMs", 2000, true);
    if (c.thrown()) return env.Undefined();
    return StatusObj(env, s.cm_resolve_route(id, ms));
  });
}
Napi::Value Listen(const Napi::CallbackInfo& info, SessionState& ss) {
  return WithId(info, ss, [&](Napi::Env env, Conv& c, vl::Session& s, uint32_t id) -> Napi::Value {
    const uint32_t backlog = c.u32(info[1], "backlog", 0, true);
    if (c.thrown()) return env.Undefined();
    return StatusObj(env, s.cm_listen(id, int(std::min<uint32_t>(backlog, 1u << 20))));
  });
}
Napi::Value SetQp(const Napi::CallbackInfo& info, SessionState& ss) {
  return WithId(info, ss, [&](Napi::Env env, Conv& c, vl::Session& s, uint32_t id) -> Napi::Value {
    const uint32_t qp = c.u32(info[1], "qp");
    if (c.thrown()) return env.Undefined();
    return StatusObj(env, s.cm_set_qp(id, qp));
  });
}
Napi::Value Connect(const Napi::CallbackInfo& info, SessionState& ss) {
  return WithId(info, ss, [&](Napi::Env env, Conv& c, vl::Session& s, uint32_t id) -> Napi::Value {
    auto p = ParseParam(c, info[1]);
    if (c.thrown()) return env.Undefined();
    return StatusObj(env, s.cm_connect(id, p));
  });
}
Napi::Value Accept(const Napi::CallbackInfo& info, SessionState& ss) {
  return WithId(info, ss, [&](Napi::Env env, Conv& c, vl::Session& s, uint32_t id) -> Napi::Value {
    auto p = ParseParam(c, info[1]);
    if (c.thrown()) return env.Undefined();
    return StatusObj(env, s.cm_accept(id, p));
  });
}
Napi::Value Reject(const Napi::CallbackInfo& info, SessionState& ss) {
  return WithId(info, ss, [&](Napi::Env env, Conv& c, vl::Session& s, uint32_t id) -> Napi::Value {
    auto pd = c.bytes(info[1], "privateData", true);
    if (c.thrown()) return env.Undefined();
    return StatusObj(env, s.cm_reject(id, pd));
  });
}
Napi::Value Disconnect(const Napi::CallbackInfo& info, SessionState& ss) {
  return WithId(info, ss, [](Napi::Env env, Conv&, vl::Session& s, uint32_t id) { return StatusObj(env, s.cm_disconnect(id)); });
}
Napi::Value Establish(const Napi::CallbackInfo& info, SessionState& ss) {
  return WithId(info, ss, [](Napi::Env env, Conv&, vl::Session& s, uint32_t id) { return StatusObj(env, s.cm_establish(id)); });
}
Napi::Value SetOption(const Napi::CallbackInfo& info, SessionState& ss) {
  return WithId(info, ss, [&](Napi::Env env, Conv& c, vl::Session& s, uint32_t id) -> Napi::Value {
    const uint32_t option = c.u32(info[1], "option"), value = c.u32(info[2], "value");
    if (c.thrown()) return env.Undefined();
    return StatusObj(env, s.cm_set_option(id, option, value));
  });
}
Napi::Value IdInfo(const Napi::CallbackInfo& info, SessionState& ss) {
  return WithId(info, ss, [](Napi::Env env, Conv&, vl::Session& s, uint32_t id) -> Napi::Value {
    auto i = s.cm_id_info(id);
    return i ? Napi::Value(IdObj(env, *i)) : env.Null();
  });
}
Napi::Value Ids(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto dev = c.u32(info[0], "dev");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  auto v = s->cm_ids(dev);
  auto a = Napi::Array::New(env, v.size());
  for (size_t i = 0; i < v.size(); i++) a.Set(uint32_t(i), IdObj(env, v[i]));
  return a;
}
Napi::Value GetEvents(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto dev = c.u32(info[0], "dev");
  auto max = c.u32(info[1], "max", 1024, true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  auto v = s->cm_get_events(dev, max);
  auto a = Napi::Array::New(env, v.size());
  for (size_t i = 0; i < v.size(); i++) a.Set(uint32_t(i), CmEventObj(env, v[i]));
  return a;
}
Napi::Value Counters(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto dev = c.u32(info[0], "dev");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  const vl::CmCounters n = s->cm_counters(dev);
  auto o = Napi::Object::New(env);
  o.Set("tx", U64(env, n.tx)); o.Set("rx", U64(env, n.rx)); o.Set("txRetries", U64(env, n.tx_retries));
  o.Set("rxDuplicates", U64(env, n.rx_duplicates)); o.Set("rxDropped", U64(env, n.rx_dropped));
  o.Set("rejSent", U64(env, n.rej_sent)); o.Set("rxStale", U64(env, n.rx_stale));
  return o;
}

const SessionMethod kMethods[] = {
  {"cm_create_id", CreateId}, {"cm_destroy_id", DestroyId}, {"cm_bind_addr", BindAddr},
  {"cm_resolve_addr", ResolveAddr}, {"cm_resolve_route", ResolveRoute}, {"cm_listen", Listen},
  {"cm_set_qp", SetQp}, {"cm_connect", Connect}, {"cm_accept", Accept}, {"cm_reject", Reject},
  {"cm_disconnect", Disconnect}, {"cm_establish", Establish}, {"cm_set_option", SetOption}, {"cm_id_info", IdInfo}, {"cm_ids", Ids},
  {"cm_get_events", GetEvents}, {"cm_counters", Counters},
};

}  // namespace
}  // namespace vladdon

VLADDON_REGISTER(vladdon::kMethods, vladdon::kNoFunctions);
