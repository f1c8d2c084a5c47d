// Memory registration: MRs (reg / rereg / dereg, alloc_mr + map_mr_sg) and memory windows (alloc / bind / dealloc).
#include <string>
#include <vector>

#include "binding.h"
#include "objects.h"

namespace vladdon {
namespace {

Napi::Value RegMr(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto pd = c.u32(info[0], "pd");
  auto addr = c.u64(info[1], "addr");
  auto len = c.u64(info[2], "length");
  auto access = c.u32(info[3], "access");
  std::optional<uint64_t> iova;
  if (!info[4].IsUndefined() && !info[4].IsNull()) iova = c.u64(info[4], "iova");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->reg_mr(pd, addr, len, access, iova), [&](const vl::MrInfo& m) { return MrObj(env, m); });
}
Napi::Value ReregMr(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto mr = c.u32(info[0], "mr");
  auto flags = c.u32(info[1], "flags");
  auto pd = c.u32(info[2], "pd", 0, true);
  auto addr = c.u64(info[3], "addr", 0, true);
  auto len = c.u64(info[4], "length", 0, true);
  auto access = c.u32(info[5], "access", 0, true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->rereg_mr(mr, flags, pd, addr, len, access), [&](const vl::MrInfo& m) { return MrObj(env, m); });
}
Napi::Value DeregMr(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "mr");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, s->dereg_mr(h));
}
Napi::Value AllocMr(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto pd = c.u32(info[0], "pd");
  auto n = c.u32(info[1], "max_num_sg");
  auto indirect = c.boolean(info[2], "indirect");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->alloc_mr(pd, n, indirect), [&](const vl::MrInfo& m) { return MrObj(env, m); });
}
Napi::Value MapMrSg(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto mr = c.u32(info[0], "mr");
  auto sg = c.sges(info[1], "sg", false);
  auto ps = c.u32(info[2], "page_size", 4096, true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->map_mr_sg(mr, sg, ps), [&](uint32_t n) { return Napi::Number::New(env, n); });
}
Napi::Value AllocMw(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto pd = c.u32(info[0], "pd");
  auto type = c.u32(info[1], "type");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->alloc_mw(pd, type), [&](const vl::MwInfo& w) { return MwObj(env, w); });
}
Napi::Value DeallocMw(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "mw");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, s->dealloc_mw(h));
}
Napi::Value BindMw(const Napi::CallbackInfo& info, SessionState& ss) {
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
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->bind_mw(qp, mw, wr_id, flags, mr, addr, len, access), [&](uint32_t k) { return Napi::Number::New(env, k); });
}
Napi::Value MrInfo(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "mr");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  auto r = s->mr_info(h);
  return r ? Napi::Value(MrObj(env, *r)) : env.Null();
}
Napi::Value MwInfo(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "mw");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  auto r = s->mw_info(h);
  return r ? Napi::Value(MwObj(env, *r)) : env.Null();
}

const SessionMethod kMethods[] = {
  {"reg_mr", RegMr},
  {"rereg_mr", ReregMr},
  {"dereg_mr", DeregMr},
  {"alloc_mr", AllocMr},
  {"map_mr_sg", MapMrSg},
  {"alloc_mw", AllocMw},
  {"dealloc_mw", DeallocMw},
  {"bind_mw", BindMw},
  {"mr_info", MrInfo},
  {"mw_info", MwInfo},
};

}  // namespace
}  // namespace vladdon

VLADDON_REGISTER(vladdon::kMethods, vladdon::kNoFunctions);
