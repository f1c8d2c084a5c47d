// The UDP transport (native/src/net/udp.h): a device of this session on the real network, and the host's interfaces.
#include <string>
#include <vector>

#include "binding.h"
#include "objects.h"

namespace vladdon {
namespace {

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
// attach_net(dev, { interface?, address?, port?, peerPort? }) -> Result<{ interface, port, gids, stats }>, with
// `field` (UdpField's name) on failure
Napi::Value AttachNet(const Napi::CallbackInfo& info, SessionState& ss) {
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
  auto* s = ss.S(env); if (!s) return env.Undefined();
  vl::net::UdpField bad = vl::net::UdpField::Device;
  auto r = vl::net::UdpTransport::attach(*s, dev, opt, &bad);
  auto out = StatusObj(env, r);
  if (!r.ok()) { out.Set("field", vl::net::kUdpFieldNames[static_cast<int>(bad)]); return out; }
  r.value->set_capture(true);                    // the console saves the network pcap on request
  out.Set("value", NetObj(env, *r.value));
  ss.nets[dev] = std::move(r.value);
  return out;
}
Napi::Value DetachNet(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto dev = c.u32(info[0], "dev");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  if (!ss.nets.erase(dev)) return StatusObj(env, vl::Status{ENOENT, "dev: device " + std::to_string(dev) + " is not on the network"});
  return StatusObj(env, vl::Status{});
}
// net_info(dev) -> { interface, port, gids, stats } or null when the device is not on the network
Napi::Value NetInfo(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto dev = c.u32(info[0], "dev");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  auto it = ss.nets.find(dev);
  return it == ss.nets.end() ? env.Null() : Napi::Value(NetObj(env, *it->second));
}
// net_poll(timeout_ns = 0): polls every attached transport once; returns datagrams + engine actions run.
// With one transport it may wait up to timeout_ns; with several each is polled without waiting.
Napi::Value NetPoll(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto timeout = c.u64(info[0], "timeout_ns", 0, true);
  if (c.ok() && timeout > 1000000000ull) c.fail("timeout_ns", "at most 1 s (1e9 ns)");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  size_t work = 0;
  for (auto& [dev, t] : ss.nets) work += t->poll(ss.nets.size() == 1 ? static_cast<int64_t>(timeout) : 0);
  return Napi::Number::New(env, static_cast<double>(work));
}
Napi::Value WriteNetPcap(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto dev = c.u32(info[0], "dev");
  auto path = c.str(info[1], "path");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  auto it = ss.nets.find(dev);
  if (it == ss.nets.end()) return StatusObj(env, vl::Status{ENOENT, "dev: device " + std::to_string(dev) + " is not on the network"});
  return StatusObj(env, it->second->write_pcap(path));
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

const SessionMethod kMethods[] = {
  {"attach_net", AttachNet},
  {"detach_net", DetachNet},
  {"net_info", NetInfo},
  {"net_poll", NetPoll},
  {"write_net_pcap", WriteNetPcap},
};

const ModuleFunction kFunctions[] = {
  {"netInterfaces", NetInterfaces},
};

}  // namespace
}  // namespace vladdon

VLADDON_REGISTER(vladdon::kMethods, vladdon::kFunctions);
