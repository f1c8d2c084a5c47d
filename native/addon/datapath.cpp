// session.set_data_path / session.data_path (datapath.h).
#include "datapath.h"

#include <cerrno>
#include <string>

namespace vladdon {

static const char* path_name(vl::DataPath p) { return p == vl::DataPath::Strict ? "strict" : "fast"; }

Napi::Value SetDataPath(const Napi::CallbackInfo& info, vl::Session& s) {
  auto env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    Napi::TypeError::New(env, "path: expected 'fast' or 'strict'").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const std::string name = info[0].As<Napi::String>().Utf8Value();
  vl::Status st;
  if (name == "fast") st = s.set_data_path(vl::DataPath::Fast);
  else if (name == "strict") st = s.set_data_path(vl::DataPath::Strict);
  else st = vl::Status{EINVAL, "path: '" + name + "' is not a data path (fast | strict)"};
  auto o = Napi::Object::New(env);
  o.Set("err", Napi::Number::New(env, st.err));
  o.Set("msg", Napi::String::New(env, st.msg));
  return o;
}

Napi::Value GetDataPath(const Napi::CallbackInfo& info, vl::Session& s) {
  return Napi::String::New(info.Env(), path_name(s.data_path()));
}

}  // namespace vladdon
