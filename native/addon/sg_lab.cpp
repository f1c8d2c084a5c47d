// The SG lab's part of the binding (lab 1; vl/sg.h and vl/sg_lab.h): the page / entry rule per element, the list
// generators, and a strategy run on a session. Same conventions as addon.cpp: { err, msg, value } results, TypeError
// for wrong argument types.
//   sgCheck({ sg: [{addr, length}], pageSize?, maxNumSg?, indirect? })
//   sgGenerate({ pattern, n, total, seed? })
//   session.sg_lab_run(list, strategy, config?)
#include "binding.h"

#include <cerrno>
#include <string>
#include <vector>

#include "vl/sg.h"
#include "vl/sg_lab.h"

namespace vladdon {
namespace {

// Plain-number argument reading; the first problem becomes a TypeError naming the field.
struct In {
  Napi::Env env;
  std::string err;
  explicit In(Napi::Env e) : env(e) {}
  Napi::Object obj(const Napi::Value& v, const std::string& where) {
    if (!v.IsObject() || v.IsArray()) { fail(where, "an object"); return Napi::Object::New(env); }
    return v.As<Napi::Object>();
  }
  Napi::Array arr(const Napi::Value& v, const std::string& where) {
    if (!v.IsArray()) { fail(where, "an array"); return Napi::Array::New(env); }
    return v.As<Napi::Array>();
  }
  uint64_t num(const Napi::Value& v, const std::string& where, uint64_t def, bool optional, uint64_t max = UINT64_MAX) {
    if (v.IsUndefined() && optional) return def;
    if (!v.IsNumber()) { fail(where, "a number"); return def; }
    const double d = v.As<Napi::Number>().DoubleValue();
    if (!(d >= 0) || d > 9007199254740991.0 || d != static_cast<double>(static_cast<uint64_t>(d)) || static_cast<uint64_t>(d) > max) {
      fail(where, ("an integer 0.." + std::to_string(max)).c_str());
      return def;
    }
    return static_cast<uint64_t>(d);
  }
  bool boolean(const Napi::Value& v, const std::string& where) {
    if (v.IsUndefined()) return false;
    if (!v.IsBoolean()) { fail(where, "a boolean"); return false; }
    return v.As<Napi::Boolean>().Value();
  }
  std::string str(const Napi::Value& v, const std::string& where, const std::string& def, bool optional) {
    if (v.IsUndefined() && optional) return def;
    if (!v.IsString()) { fail(where, "a string"); return def; }
    return v.As<Napi::String>().Utf8Value();
  }
  void fail(const std::string& where, const char* what) { if (err.empty()) err = where + ": expected " + what; }
  bool thrown() {
    if (err.empty()) return false;
    Napi::TypeError::New(env, err).ThrowAsJavaScriptException();
    return true;
  }
};

Napi::Object status(Napi::Env env, int err, const std::string& msg) {
  auto o = Napi::Object::New(env);
  o.Set("err", Napi::Number::New(env, err));
  o.Set("msg", Napi::String::New(env, msg));
  return o;
}

Napi::Value mapping(Napi::Env env, const vl::SgMapping& m, uint64_t page_size) {
  auto o = Napi::Object::New(env);
  o.Set("mapped", Napi::Number::New(env, m.mapped));
  o.Set("entries", Napi::Number::New(env, m.entries));
  o.Set("length", Napi::Number::New(env, static_cast<double>(m.length)));
  o.Set("firstBreak", m.first_break == UINT32_MAX ? env.Null() : Napi::Number::New(env, m.first_break));
  auto els = Napi::Array::New(env, m.elements.size());
  for (size_t i = 0; i < m.elements.size(); i++) {
    const vl::SgVerdict& v = m.elements[i];
    auto e = Napi::Object::New(env);
    e.Set("why", Napi::Number::New(env, v.why));
    e.Set("reason", Napi::String::New(env, vl::sg_break_name(v.why)));
    e.Set("text", Napi::String::New(env, vl::sg_break_text(v.why, page_size)));
    e.Set("pages", Napi::Number::New(env, v.pages));
    e.Set("contiguous", Napi::Boolean::New(env, v.contiguous));
    els.Set(static_cast<uint32_t>(i), e);
  }
  o.Set("elements", els);
  return o;
}

std::vector<vl::SgElem> elems(In& in, const Napi::Value& v, const std::string& where) {
  std::vector<vl::SgElem> out;
  auto a = in.arr(v, where);
  for (uint32_t i = 0; in.err.empty() && i < a.Length(); i++) {
    const std::string w = where + "[" + std::to_string(i) + "]";
    auto o = in.obj(a.Get(i), w);
    vl::SgElem e;
    e.offset = in.num(o.Get("offset"), w + ".offset", 0, false, 1ull << 32);
    e.length = static_cast<uint32_t>(in.num(o.Get("length"), w + ".length", 0, false, UINT32_MAX));
    out.push_back(e);
  }
  return out;
}

}  // namespace

Napi::Value SgCheck(const Napi::CallbackInfo& info) {
  auto env = info.Env();
  In in(env);
  auto o = in.obj(info[0], "args");
  std::vector<vl::Sge> sg;
  auto a = in.arr(o.Get("sg"), "sg");
  for (uint32_t i = 0; in.err.empty() && i < a.Length(); i++) {
    const std::string w = "sg[" + std::to_string(i) + "]";
    auto e = in.obj(a.Get(i), w);
    sg.push_back({in.num(e.Get("addr"), w + ".addr", 0, false), static_cast<uint32_t>(in.num(e.Get("length"), w + ".length", 0, false, UINT32_MAX)), 0});
  }
  const uint64_t ps = in.num(o.Get("pageSize"), "pageSize", 4096, true, 1ull << 30);
  const uint32_t max = static_cast<uint32_t>(in.num(o.Get("maxNumSg"), "maxNumSg", UINT32_MAX, true, UINT32_MAX));
  const bool indirect = in.boolean(o.Get("indirect"), "indirect");
  if (in.thrown()) return env.Undefined();
  if (!indirect && (ps < 512 || (ps & (ps - 1)))) return status(env, EINVAL, "pageSize: a power of two >= 512");
  auto r = status(env, 0, "");
  r.Set("value", mapping(env, indirect ? vl::sg_to_entries(sg, max) : vl::sg_to_pages(sg, ps, max), ps));
  return r;
}

Napi::Value SgGenerate(const Napi::CallbackInfo& info) {
  auto env = info.Env();
  In in(env);
  auto o = in.obj(info[0], "args");
  const std::string name = in.str(o.Get("pattern"), "pattern", "", false);
  const uint32_t n = static_cast<uint32_t>(in.num(o.Get("n"), "n", 0, false, UINT32_MAX));
  const uint64_t total = in.num(o.Get("total"), "total", 0, false);
  const uint64_t seed = in.num(o.Get("seed"), "seed", 1, true);
  if (in.thrown()) return env.Undefined();
  vl::SgPattern p;
  if (!vl::sg_pattern_from_name(name, p))
    return status(env, EINVAL, "pattern: one of random, aligned4k, sectors512, one_byte_off, block_layer");
  auto g = vl::sg_generate(p, n, total, seed);
  auto r = status(env, g.err, g.msg);
  if (!g.ok()) return r;
  auto a = Napi::Array::New(env, g.value.size());
  for (size_t i = 0; i < g.value.size(); i++) {
    auto e = Napi::Object::New(env);
    e.Set("offset", Napi::Number::New(env, static_cast<double>(g.value[i].offset)));
    e.Set("length", Napi::Number::New(env, g.value[i].length));
    a.Set(static_cast<uint32_t>(i), e);
  }
  r.Set("value", a);
  return r;
}

Napi::Value SgLabRun(const Napi::CallbackInfo& info, SessionState& ss) {
  auto* sp = ss.S(info.Env()); if (!sp) return info.Env().Undefined();
  vl::Session& s = *sp;
  auto env = info.Env();
  In in(env);
  const auto list = elems(in, info[0], "list");
  const std::string name = in.str(info[1], "strategy", "", false);
  vl::SgLabConfig cfg;
  if (!info[2].IsUndefined()) {
    auto o = in.obj(info[2], "config");
    cfg.profile = in.str(o.Get("profile"), "config.profile", cfg.profile, true);
    cfg.queue_depth = static_cast<uint32_t>(in.num(o.Get("queueDepth"), "config.queueDepth", cfg.queue_depth, true, 64));
    cfg.ios = static_cast<uint32_t>(in.num(o.Get("ios"), "config.ios", cfg.ios, true, 4096));
    cfg.mr_pool = static_cast<uint32_t>(in.num(o.Get("mrPool"), "config.mrPool", cfg.mr_pool, true, 65536));
    cfg.max_num_sg = static_cast<uint32_t>(in.num(o.Get("maxNumSg"), "config.maxNumSg", cfg.max_num_sg, true, UINT32_MAX));
    cfg.seed = in.num(o.Get("seed"), "config.seed", cfg.seed, true);
    cfg.ignore_short_map = in.boolean(o.Get("ignoreShortMap"), "config.ignoreShortMap");
  }
  if (in.thrown()) return env.Undefined();
  vl::SgStrategy st;
  if (!vl::sg_strategy_from_name(name, st))
    return status(env, EINVAL, "strategy: one of fast_reg, bounce, multi_mr, pool512, indirect");
  const vl::SgLabResult r = vl::sg_lab_run(s, list, st, cfg);
  auto o = status(env, r.err, r.msg);
  auto v = Napi::Object::New(env);
  v.Set("strategy", Napi::String::New(env, vl::sg_strategy_name(r.strategy)));
  v.Set("err", Napi::Number::New(env, r.err));
  v.Set("msg", Napi::String::New(env, r.msg));
  v.Set("wcStatus", Napi::Number::New(env, r.wc_status));
  v.Set("mapped", Napi::Number::New(env, r.mapped));
  v.Set("firstBreak", r.first_break == UINT32_MAX ? env.Null() : Napi::Number::New(env, r.first_break));
  v.Set("breakWhy", Napi::Number::New(env, r.break_why));
  v.Set("verified", Napi::Boolean::New(env, r.verified));
  auto c = Napi::Object::New(env);
  auto N = [&](const char* k, uint64_t x) { c.Set(k, Napi::Number::New(env, static_cast<double>(x))); };
  N("bytesMoved", r.c.bytes_moved); N("bytesCopied", r.c.bytes_copied); N("registrations", r.c.registrations);
  N("invalidations", r.c.invalidations); N("keysOnWire", r.c.keys_on_wire); N("remoteOps", r.c.remote_ops);
  N("wrsPosted", r.c.wrs_posted); N("packets", r.c.packets); N("deviceNs", r.c.device_ns); N("wallNs", r.c.wall_ns);
  N("wallInitiatorNs", r.c.initiator_ns); N("mrsHeld", r.c.mrs_held); N("maxInFlight", r.c.max_in_flight);
  N("poolWaits", r.c.pool_waits); N("iosDone", r.c.ios_done);
  v.Set("counters", c);
  o.Set("value", v);                               // the run's figures come back with a refusal too
  return o;
}

const SessionMethod kMethods[] = {
  {"sg_lab_run", SgLabRun},
};
const ModuleFunction kFunctions[] = {
  {"sgCheck", SgCheck},
  {"sgGenerate", SgGenerate},
};

}  // namespace vladdon

VLADDON_REGISTER(vladdon::kMethods, vladdon::kFunctions);
