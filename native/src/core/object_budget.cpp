// The session's object budget: every object is charged what it holds (its structure, and its rings at the depth it
// was granted, since a ring's storage grows to its depth), checked before the object takes its handle, released when it
// is destroyed. The 1 GiB buffer limit (memory.cpp) covers buffer bytes only; this covers the rest, so 442 600 QPs
// across 254 devices fail with ENOMEM naming the limit instead of taking the host's RSS past 2.5 GB.
#include "core/impl.h"

namespace vl {

std::string SessionImpl::over_budget(uint64_t bytes, const char* what) const {
  if (bytes <= object_limit - std::min(object_bytes, object_limit)) return "";
  return std::string(what) + ": the session's objects would take more than " + std::to_string(object_limit >> 20) +
         " MiB (its object budget: devices, QPs, CQs, SRQs, MRs with their rings; " + std::to_string(object_bytes >> 20) +
         " MiB in use, this one " + std::to_string((bytes + 1023) >> 10) + " KiB)";
}

void Session::set_object_limit(uint64_t bytes) {
  auto lk_ = impl_->lock();
  impl_->object_limit = bytes;
}

uint64_t Session::object_bytes() const {
  auto lk_ = impl_->lock();
  return impl_->object_bytes;
}

}  // namespace vl
