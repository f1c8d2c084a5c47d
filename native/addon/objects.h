// vl:: results to plain JS values (camelCase fields; 64-bit values through U64). One converter per vl:: type, used
// by every binding file.
#pragma once
#include "conv.h"

namespace vladdon {

Napi::Object StatusObj(Napi::Env env, const vl::Status& s);
Napi::Object SgeObj(Napi::Env env, const vl::Sge& s);
Napi::Object ProfileObj(Napi::Env env, const vl::Profile& p);
Napi::Object DeviceObj(Napi::Env env, const vl::DeviceInfo& d);
Napi::Object MrObj(Napi::Env env, const vl::MrInfo& m);
Napi::Object MwObj(Napi::Env env, const vl::MwInfo& w);
Napi::Object QpObj(Napi::Env env, const vl::QpInfo& q);
Napi::Object WcObj(Napi::Env env, const vl::Wc& w);
Napi::Object PacketObj(Napi::Env env, const std::vector<uint8_t>& bytes);   // one RoCEv2 UDP payload, decoded
Napi::Object EventObj(Napi::Env env, const vl::Event& e);

// Result<T> as { err, msg, value }: value only when ok, converted by conv.
template <class T, class F>
Napi::Object ResultObj(Napi::Env env, const vl::Result<T>& r, F&& conv) {
  auto o = StatusObj(env, r);
  if (r.ok()) o.Set("value", conv(r.value));
  return o;
}

}  // namespace vladdon
