// The process's own memory as the session's address space (libibverbs-compatible library, native/libibverbs):
// SessionImpl::host() then maps a VA to the same host address, so MRs cover a program's malloc'd buffers.
#include <cerrno>

#include "core/impl.h"

namespace vl {

Status Session::use_process_memory() {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  if (!S.buffers_by_va.empty())
    return fail(EBUSY, "session: holds " + std::to_string(S.buffers_by_va.size()) + " buffer(s) of its own");
  S.process_memory = true;
  return ok();
}

}  // namespace vl
