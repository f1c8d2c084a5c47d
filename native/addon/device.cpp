// The device / session part of the binding: the session itself (close, profiles), devices, PDs, buffers and their
// memory, fault injection and the engine clock. Conventions: addon.cpp.
#include <string>
#include <vector>

#include "binding.h"
#include "objects.h"
#include "../ibverbs/enumerate.h"

namespace vladdon {
namespace {

Napi::Value Close(const Napi::CallbackInfo& info, SessionState& ss) { ss.close(); return info.Env().Undefined(); }

// Session.profiles(): the built-in device profiles (a static method of the class)
Napi::Value Profiles(const Napi::CallbackInfo& info) {
  auto env = info.Env();
  const auto& ps = vl::builtin_profiles();
  auto a = Napi::Array::New(env, ps.size());
  for (size_t i = 0; i < ps.size(); ++i) a.Set(static_cast<uint32_t>(i), ProfileObj(env, ps[i]));
  return a;
}

Napi::Value CreateDevice(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto profile = c.str(info[0], "profile");
  auto name = c.str(info[1], "name", "", true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->create_device(profile, name), [&](vl::Handle h) { return Napi::Number::New(env, h); });
}
Napi::Value DestroyDevice(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "dev");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  ss.nets.erase(h);                                // off the network first: the transport refers to the device
  return StatusObj(env, s->destroy_device(h));
}
Napi::Value Devices(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  auto ds = s->devices();
  auto a = Napi::Array::New(env, ds.size());
  for (size_t i = 0; i < ds.size(); ++i) a.Set(static_cast<uint32_t>(i), DeviceObj(env, ds[i]));
  return a;
}
Napi::Value AllocPd(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "dev");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->alloc_pd(h), [&](vl::Handle v) { return Napi::Number::New(env, v); });
}
Napi::Value DeallocPd(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "pd");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, s->dealloc_pd(h));
}
Napi::Value AllocBuffer(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto len = c.u64(info[0], "length");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->alloc_buffer(len), [&](const vl::BufferInfo& b) {
    auto o = Napi::Object::New(env);
    o.Set("handle", Napi::Number::New(env, b.handle));
    o.Set("addr", U64(env, b.addr));
    o.Set("length", U64(env, b.length));
    return o;
  });
}
Napi::Value FreeBuffer(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "buf");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, s->free_buffer(h));
}
Napi::Value WriteMemory(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto addr = c.u64(info[0], "addr");
  auto data = c.bytes(info[1], "data");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, s->write_memory(addr, data.data(), data.size()));
}
Napi::Value ReadMemory(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto addr = c.u64(info[0], "addr");
  auto len = c.u64(info[1], "len");
  if (c.ok() && len > (1ull << 30)) c.fail("len", "at most 1 GiB");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  std::vector<uint8_t> out(len);
  auto st = s->read_memory(addr, out.data(), out.size());
  auto o = StatusObj(env, st);
  if (st.ok()) o.Set("value", Napi::Buffer<uint8_t>::Copy(env, out.data(), out.size()));
  return o;
}
Napi::Value SetFaults(const Napi::CallbackInfo& info, SessionState& ss) {
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
  auto* s = ss.S(env); if (!s) return env.Undefined();
  s->set_faults(f);
  return env.Undefined();
}
Napi::Value Step(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return Napi::Boolean::New(env, s->step());
}
Napi::Value Run(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto max = c.u64(info[0], "max_steps", UINT64_MAX, true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return U64(env, s->run(max));
}
Napi::Value NowNs(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return U64(env, s->now_ns());
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

// Deliberate native crash, used only to prove that the UI survives the backend host's death.
Napi::Value Abort(const Napi::CallbackInfo& info) {
  std::abort();
  return info.Env().Undefined();
}

const SessionMethod kMethods[] = {
  {"close", Close},
  {"create_device", CreateDevice},
  {"destroy_device", DestroyDevice},
  {"devices", Devices},
  {"alloc_pd", AllocPd},
  {"dealloc_pd", DeallocPd},
  {"alloc_buffer", AllocBuffer},
  {"free_buffer", FreeBuffer},
  {"write_memory", WriteMemory},
  {"read_memory", ReadMemory},
  {"set_faults", SetFaults},
  {"step", Step},
  {"run", Run},
  {"now_ns", NowNs},
};

const ModuleFunction kFunctions[] = {
  {"profiles", Profiles, true},
  {"ibverbsDevices", IbverbsDevices},
  {"abort", Abort},
};

}  // namespace
}  // namespace vladdon

VLADDON_REGISTER(vladdon::kMethods, vladdon::kFunctions);
