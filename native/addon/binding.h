// The binding's seam: the state behind one JS `Session`, and the tables through which each binding file adds its
// methods. A binding file (device.cpp, memory.cpp, ..., sg_lab.cpp, a lab's own file) defines plain functions and
// registers them with ONE line at namespace scope:
//
//   VLADDON_REGISTER(kMethods, kFunctions);   // session.<name>(...) methods and module exports.<name> functions
//
// addon.cpp builds the `Session` class and the module exports from every registered table (no list to edit there).
// Conventions shared by all files are in addon.cpp's header comment; conversions in conv.h and objects.h.
#pragma once
#define NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED
#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>

#include "net/udp.h"
#include "vl/session.h"
#include "vl/traffic.h"

namespace vladdon {

// Everything one JS Session owns. Destruction order matters (Close and ~SessionWrap): the runner thread first, then
// the UDP transports (they refer to their devices), then the session.
struct SessionState {
  std::unique_ptr<vl::Session> s;
  vl::Traffic traffic;                   // the load generator (engine.traffic)
  std::unique_ptr<vl::Runner> runner;    // the free-running engine thread (created with the session)
  // UDP transports of devices put on the network (destroyed before the session, and before their device)
  std::map<uint32_t, std::unique_ptr<vl::net::UdpTransport>> nets;

  // Returns nullptr (with a pending JS error) when the session was closed.
  vl::Session* S(Napi::Env env) {
    if (!s) Napi::Error::New(env, "session is closed").ThrowAsJavaScriptException();
    return s.get();
  }
  void close() { runner.reset(); nets.clear(); s.reset(); }
};

using SessionFn = Napi::Value (*)(const Napi::CallbackInfo& info, SessionState& ss);
using ModuleFn = Napi::Value (*)(const Napi::CallbackInfo& info);

// session.<name>(...): an instance method of the JS Session class.
struct SessionMethod { const char* name; SessionFn fn; };
// exports.<name>(...) when on_class is false; Session.<name>(...) (a static method of the class) when true.
struct ModuleFunction { const char* name; ModuleFn fn; bool on_class = false; };

struct BindingTable {
  const SessionMethod* methods; size_t n_methods;
  const ModuleFunction* functions; size_t n_functions;
};

// Appends a file's table to the registry (called during static initialisation; see VLADDON_REGISTER).
int register_table(const BindingTable& t);

}  // namespace vladdon

#define VLADDON_CAT2(a, b) a##b
#define VLADDON_CAT(a, b) VLADDON_CAT2(a, b)
// One line per binding file. Either table may be empty: pass `vladdon::kNoMethods` / `vladdon::kNoFunctions`.
#define VLADDON_REGISTER(methods, functions)                                                       \
  [[maybe_unused]] static const int VLADDON_CAT(vladdon_registered_, __LINE__) =                   \
      ::vladdon::register_table({(methods), std::size(methods), (functions), std::size(functions)})

namespace vladdon {
inline constexpr SessionMethod kNoMethods[1] = {{nullptr, nullptr}};
inline constexpr ModuleFunction kNoFunctions[1] = {{nullptr, nullptr, false}};
}  // namespace vladdon
