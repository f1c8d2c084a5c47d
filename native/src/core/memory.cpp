// The session address space: real page-aligned host memory at deterministic virtual addresses
// (from 0x7f0000000000, one unmapped guard page between buffers).
#include <cerrno>
#include <cstdlib>

#include "core/impl.h"

namespace vl {

uint8_t* SessionImpl::host(uint64_t va, uint64_t len) {
  return const_cast<uint8_t*>(static_cast<const SessionImpl*>(this)->host(va, len));
}

const uint8_t* SessionImpl::host(uint64_t va, uint64_t len) const {
  if (process_memory) return va && len <= UINT64_MAX - va ? reinterpret_cast<const uint8_t*>(va) : nullptr;
  auto it = buffers_by_va.upper_bound(va);
  if (it == buffers_by_va.begin()) return nullptr;
  --it;
  const Buffer& b = it->second;
  if (va < b.va || va - b.va > b.len || len > b.len - (va - b.va)) return nullptr;
  return b.mem + (va - b.va);
}

Handle SessionImpl::buffer_of(uint64_t va) const {
  auto it = buffers_by_va.upper_bound(va);
  if (it == buffers_by_va.begin()) return 0;
  --it;
  return va - it->second.va < it->second.len ? it->second.h : 0;
}

void SessionImpl::note_write(Handle dev, uint64_t va, uint64_t len) {
  if (!capture || len == 0) return;
  auto& e = emit(EventKind::MemWrite, dev, buffer_of(va), "buffer");
  e.a = va; e.b = len;
}

Result<BufferInfo> Session::alloc_buffer(uint64_t length) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  if (length == 0) return rfail<BufferInfo>(EINVAL, "length: must be > 0");
  if (S.process_memory) return rfail<BufferInfo>(EBUSY, "session: uses the process's own memory (use_process_memory)");
  if (length > (256ull << 20)) return rfail<BufferInfo>(EINVAL, "length: larger than 256 MiB (the session's per-buffer limit)");
  uint64_t span = (length + kPage - 1) & ~(kPage - 1);
  if (span > S.memory_limit - std::min(S.buffer_bytes, S.memory_limit))
    return rfail<BufferInfo>(ENOMEM, "length: the session's buffers would take more than " +
                                         std::to_string(S.memory_limit >> 20) + " MiB (its memory limit; " +
                                         std::to_string(S.buffer_bytes >> 20) + " MiB in use)");
  void* mem = std::aligned_alloc(kPage, span);
  if (!mem) return rfail<BufferInfo>(ENOMEM, "length: out of host memory");
  std::memset(mem, 0, span);
  Buffer b;
  b.h = S.new_handle(); b.va = S.next_va; b.len = length; b.span = span; b.mem = static_cast<uint8_t*>(mem);
  S.next_va += span + kPage;   // guard page
  S.buffer_bytes += span;
  S.buffers_by_va.emplace(b.va, b);
  S.buffer_va[b.h] = b.va;
  if (S.capture) { auto& e = S.emit(EventKind::ObjectCreated, 0, b.h, "buffer"); e.a = b.va; e.b = length; }
  BufferInfo bi{b.h, b.va, length};
  return rok(bi);
}

void Session::set_memory_limit(uint64_t bytes) {
  auto lk_ = impl_->lock();
  impl_->memory_limit = bytes;
}

Status Session::free_buffer(Handle buf) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  auto it = S.buffer_va.find(buf);
  if (it == S.buffer_va.end()) return fail(ENOENT, "buf: no buffer with handle " + std::to_string(buf));
  Buffer& b = S.buffers_by_va.at(it->second);
  for (auto& [h, m] : S.mrs)
    if (m.state != KeyState::Invalid && m.kind == MrKind::User && m.addr < b.va + b.len && b.va < m.addr + m.length)
      return fail(EBUSY, "buf: still registered by MR lkey " + hex(m.lkey, 8));
  std::free(b.mem);
  S.buffer_bytes -= b.span;
  S.buffers_by_va.erase(it->second);
  S.buffer_va.erase(it);
  S.emit_obj(EventKind::ObjectDestroyed, 0, buf, "buffer");
  return ok();
}

Status Session::write_memory(uint64_t addr, const uint8_t* data, size_t len) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  if (len && !data) return fail(EINVAL, "data: null");
  uint8_t* p = S.host(addr, len);
  if (!p) return fail(EFAULT, "addr: range " + hex(addr) + "+" + std::to_string(len) + " is not inside one buffer");
  if (len) std::memcpy(p, data, len);
  S.note_write(0, addr, len);
  return ok();
}

Status Session::read_memory(uint64_t addr, uint8_t* out, size_t len) const {
  auto lk_ = impl_->lock();
  const auto& S = *impl_;
  if (len && !out) return fail(EINVAL, "out: null");
  const uint8_t* p = S.host(addr, len);
  if (!p) return fail(EFAULT, "addr: range " + hex(addr) + "+" + std::to_string(len) + " is not inside one buffer");
  if (len) std::memcpy(out, p, len);
  return ok();
}

}  // namespace vl
