// Thin node-addon-api binding of vl::Session (Node-API 8, no C++ exceptions).
//
// One JS class `Session` with one method per vl::Session method (same snake_case names), converting
// arguments and results to plain JS values (camelCase fields). Rules:
//  - Status results come back as { err, msg }, Result<T> as { err, msg, value }; the binding never
//    interprets them (the executor in app/host/executor.ts does).
//  - 64-bit values: accepted as Number, BigInt or decimal/0x-hex string; returned as Number when
//    <= 2^53-1, otherwise as a "0x..." hex string (lossless and JSON-friendly).
//  - Bytes are always *copied* into new Buffers: no external ArrayBuffers (Electron's V8 memory cage
//    forbids them); NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED turns any accidental use into a compile error.
//  - Programming errors (wrong JS argument types) throw a TypeError naming the argument.
//
// The methods live in one file per domain (device.cpp, memory.cpp, queues.cpp, post.cpp, events.cpp, net.cpp, and a
// lab's own file such as sg_lab.cpp), each registering its table with one VLADDON_REGISTER line (binding.h). This
// file only builds the class and the module exports from the registry: a new binding file never edits it.
#include <cstdlib>
#include <vector>

#include "binding.h"
#include "conv.h"
#include "realdev.h"

namespace vladdon {

namespace {
std::vector<BindingTable>& registry() {
  static std::vector<BindingTable> tables;   // filled during static initialisation, read once by Init
  return tables;
}
}  // namespace

int register_table(const BindingTable& t) {
  registry().push_back(t);
  return static_cast<int>(registry().size());
}

namespace {

class SessionWrap : public Napi::ObjectWrap<SessionWrap> {
 public:
  static Napi::Function Init(Napi::Env env) {
    std::vector<PropertyDescriptor> props;
    for (const auto& t : registry()) {
      for (size_t i = 0; i < t.n_methods; ++i)
        if (t.methods[i].name)   // the method's table entry rides along as the callback's data (Call)
          props.push_back(InstanceMethod(t.methods[i].name, &SessionWrap::Call, napi_default,
                                         const_cast<SessionMethod*>(&t.methods[i])));
      for (size_t i = 0; i < t.n_functions; ++i)
        if (t.functions[i].name && t.functions[i].on_class) props.push_back(StaticMethod(t.functions[i].name, t.functions[i].fn));
    }
    return DefineClass(env, "Session", props);
  }

  explicit SessionWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<SessionWrap>(info) {
    Conv c(info.Env());
    uint64_t seed = c.u64(info[0], "seed", 1, true);
    if (c.thrown()) return;
    st_.s = std::make_unique<vl::Session>(seed);
    // the host's budgets (docs/hardening.md): VERBSLAB_MEMORY_LIMIT_MB (buffers), VERBSLAB_OBJECT_LIMIT_MB (objects)
    if (const char* v = std::getenv("VERBSLAB_MEMORY_LIMIT_MB"); v && std::atoll(v) > 0) st_.s->set_memory_limit(uint64_t(std::atoll(v)) << 20);
    if (const char* v = std::getenv("VERBSLAB_OBJECT_LIMIT_MB"); v && std::atoll(v) > 0) st_.s->set_object_limit(uint64_t(std::atoll(v)) << 20);
    st_.runner = std::make_unique<vl::Runner>(*st_.s, st_.traffic);
  }
  ~SessionWrap() override { st_.runner.reset(); }

 private:
  SessionState st_;

  Napi::Value Call(const Napi::CallbackInfo& info) {
    const auto* m = static_cast<const SessionMethod*>(info.Data());
    return m->fn(info, st_);
  }
};

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("Session", SessionWrap::Init(env));
  RealdevInit(env, exports);   // the real-device backend (realdev.cpp): RealDevice, realdevList
  for (const auto& t : registry())
    for (size_t i = 0; i < t.n_functions; ++i)
      if (t.functions[i].name && !t.functions[i].on_class)
        exports.Set(t.functions[i].name, Napi::Function::New(env, t.functions[i].fn, t.functions[i].name));
  exports.Set("napiVersion", Napi::Number::New(env, NAPI_VERSION));
  return exports;
}

}  // namespace
}  // namespace vladdon

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return vladdon::Init(env, exports); }

NODE_API_MODULE(verbslab, InitModule)
