// VERBSLAB_PRIVATE_1.0: what librdmacm.so.1 (native/librdmacm) needs of this library (private_rdmacm.h).
#include "private_rdmacm.h"

#include <cerrno>

#include "lib.h"

using namespace vlib;

namespace {

int attach_at(const char* address) { return attach_network(address); }
bool attached() { return g().udp != nullptr; }
const char* error() { return g().error.c_str(); }
void set_cm_hook(void (*hook)()) { g().cm_hook.store(hook, std::memory_order_release); }
void progress() {
  auto lk = lock();
  kick();
}
vl::Handle qp_handle(ibv_qp* qp) { return qp ? reinterpret_cast<Qp*>(qp)->h : 0; }
vl::Handle pd_handle(ibv_pd* pd) { return pd ? reinterpret_cast<Pd*>(pd)->h : 0; }

}  // namespace

VL_EXPORT const VerbslabRdmacm* verbslab_private_rdmacm() {
  static VerbslabRdmacm abi;
  if (!init_session()) { errno = ENODEV; return nullptr; }
  abi.size = sizeof abi;
  abi.session = g().s.get();
  abi.dev = g().dev;
  abi.attach = attach_at;
  abi.attached = attached;
  abi.error = error;
  abi.set_cm_hook = set_cm_hook;
  abi.progress = progress;
  abi.qp_handle = qp_handle;
  abi.pd_handle = pd_handle;
  return &abi;
}
