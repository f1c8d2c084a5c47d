// session.set_data_path('fast' | 'strict') and session.data_path(): the session's data path (vl::DataPath,
// docs/perf.md). Same conventions as the other binding files: { err, msg } results, TypeError for wrong argument types.
#include <cerrno>
#include <string>

#include "binding.h"

namespace vladdon {
namespace {

const char* path_name(vl::DataPath p) { return p == vl::DataPath::Strict ? "strict" : "fast"; }

Napi::Value SetDataPath(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    Napi::TypeError::New(env, "path: expected 'fast' or 'strict'").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  auto* s = ss.S(env);
  if (!s) return env.Undefined();
  const std::string name = info[0].As<Napi::String>().Utf8Value();
  vl::Status st;
  if (name == "fast") st = s->set_data_path(vl::DataPath::Fast);
  else if (name == "strict") st = s->set_data_path(vl::DataPath::Strict);
  else st = vl::Status{EINVAL, "path: '" + name + "' is not a data path (fast | strict)"};
  auto o = Napi::Object::New(env);
  o.Set("err", Napi::Number::New(env, st.err));
  o.Set("msg", Napi::String::New(env, st.msg));
  return o;
}

Napi::Value GetDataPath(const Napi::CallbackInfo& info, SessionState& ss) {
  auto* s = ss.S(info.Env());
  if (!s) return info.Env().Undefined();
  return Napi::String::New(info.Env(), path_name(s->data_path()));
}

const SessionMethod kMethods[] = {
  {"set_data_path", SetDataPath},
  {"data_path", GetDataPath},
};

}  // namespace
}  // namespace vladdon

VLADDON_REGISTER(vladdon::kMethods, vladdon::kNoFunctions);
