// The real-device backend (realdev.h): loading the library, opening the device, its attributes and GID table, the
// async-event thread, closing, and the session's buffers (the only host memory the console can read, write or
// register).
#include "realdev.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "realdev_lib.h"

namespace vl::ibverbs {

namespace {
std::mutex libs_mu;
std::map<std::string, std::unique_ptr<Lib>>& libs() { static std::map<std::string, std::unique_ptr<Lib>> m; return m; }

template <class F> bool sym(void* h, const char* name, F& out, bool required, std::string& missing) {
  out = reinterpret_cast<F>(dlsym(h, name));
  if (!out && required && missing.empty()) missing = name;
  return out != nullptr;
}

uint64_t now_ns() { timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec); }

std::string gid_text(const uint8_t* raw) {
  char b[40];
  std::snprintf(b, sizeof b, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", raw[0], raw[1], raw[2], raw[3],
                raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]);
  return b;
}
}  // namespace

const Lib* load_lib(const std::string& path, std::string& error) {
  const std::string name = path.empty() ? "libibverbs.so.1" : path;
  std::lock_guard<std::mutex> g(libs_mu);
  if (auto it = libs().find(name); it != libs().end()) return it->second.get();
  dlerror();
  void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) { const char* e = dlerror(); error = e ? e : (name + ": dlopen failed"); return nullptr; }
  auto lib = std::make_unique<Lib>();
  lib->handle = h;
  lib->software = dlsym(h, "verbslab_libibverbs") != nullptr;
  std::string missing;
  sym(h, "ibv_get_device_list", lib->get_device_list, true, missing);
  sym(h, "ibv_free_device_list", lib->free_device_list, true, missing);
  sym(h, "ibv_get_device_name", lib->get_device_name, true, missing);
  sym(h, "ibv_get_device_guid", lib->get_device_guid, true, missing);
  sym(h, "ibv_open_device", lib->open_device, true, missing);
  sym(h, "ibv_close_device", lib->close_device, true, missing);
  sym(h, "ibv_query_device", lib->query_device, true, missing);
  sym(h, "ibv_query_port", lib->query_port_compat, true, missing);
  sym(h, "ibv_query_gid", lib->query_gid, true, missing);
  sym(h, "_ibv_query_gid_ex", lib->query_gid_ex, false, missing);
  sym(h, "ibv_alloc_pd", lib->alloc_pd, true, missing);
  sym(h, "ibv_dealloc_pd", lib->dealloc_pd, true, missing);
  sym(h, "ibv_reg_mr", lib->reg_mr, true, missing);
  sym(h, "ibv_reg_mr_iova", lib->reg_mr_iova, false, missing);
  sym(h, "ibv_rereg_mr", lib->rereg_mr, false, missing);
  sym(h, "ibv_dereg_mr", lib->dereg_mr, true, missing);
  sym(h, "ibv_create_comp_channel", lib->create_comp_channel, true, missing);
  sym(h, "ibv_destroy_comp_channel", lib->destroy_comp_channel, true, missing);
  sym(h, "ibv_create_cq", lib->create_cq, true, missing);
  sym(h, "ibv_destroy_cq", lib->destroy_cq, true, missing);
  sym(h, "ibv_get_cq_event", lib->get_cq_event, true, missing);
  sym(h, "ibv_ack_cq_events", lib->ack_cq_events, true, missing);
  sym(h, "ibv_create_srq", lib->create_srq, true, missing);
  sym(h, "ibv_modify_srq", lib->modify_srq, true, missing);
  sym(h, "ibv_destroy_srq", lib->destroy_srq, true, missing);
  sym(h, "ibv_create_qp", lib->create_qp, true, missing);
  sym(h, "ibv_modify_qp", lib->modify_qp, true, missing);
  sym(h, "ibv_query_qp", lib->query_qp, true, missing);
  sym(h, "ibv_destroy_qp", lib->destroy_qp, true, missing);
  sym(h, "ibv_create_ah", lib->create_ah, true, missing);
  sym(h, "ibv_destroy_ah", lib->destroy_ah, true, missing);
  sym(h, "ibv_get_async_event", lib->get_async_event, true, missing);
  sym(h, "ibv_ack_async_event", lib->ack_async_event, true, missing);
  if (!missing.empty()) { error = name + " is not a libibverbs.so.1: it does not export " + missing; return nullptr; }   // kept loaded (see above)
  return (libs()[name] = std::move(lib)).get();
}

Listing list_devices(const std::string& library) {
  Listing out;
  out.path = library.empty() ? "libibverbs.so.1" : library;
  const Lib* lib = load_lib(library, out.error);
  if (!lib) return out;
  out.library = true;
  out.software = lib->software;
  int n = 0;
  ibv_device** list = lib->get_device_list(&n);
  if (!list) { out.error = std::string("ibv_get_device_list failed: ") + std::strerror(errno) + " (no RDMA subsystem?)"; return out; }
  for (int i = 0; i < n; ++i) {
    const char* nm = lib->get_device_name(list[i]);
    out.devices.push_back({nm ? nm : "?", lib->get_device_guid(list[i])});
  }
  lib->free_device_list(list);
  return out;
}

Status RealDevice::errno_status(const char* verb, int e) {
  if (e <= 0) e = EINVAL;   // a provider that failed without setting errno
  return {e, std::string(verb) + " on " + info_.name + ": " + std::strerror(e) + " (the library refused it)"};
}

std::unique_ptr<RealDevice> RealDevice::open(const std::string& library, const std::string& device, Status& st) {
  std::string err;
  const Lib* lib = load_lib(library, err);
  if (!lib) {
    // ENOENT when dlopen found no such file, ENOEXEC when it is not a (usable) libibverbs.so.1; the text is dlerror()'s
    const int e = err.find("No such file") != std::string::npos ? ENOENT : ENOEXEC;
    st = {e, "dlopen " + (library.empty() ? std::string("libibverbs.so.1") : library) + ": " + err};
    return nullptr;
  }
  int n = 0;
  ibv_device** list = lib->get_device_list(&n);
  if (!list) { st = {errno ? errno : ENODEV, std::string("ibv_get_device_list: ") + std::strerror(errno ? errno : ENODEV)}; return nullptr; }
  ibv_device* found = nullptr;
  std::string names;
  for (int i = 0; i < n; ++i) {
    const char* nm = lib->get_device_name(list[i]);
    names += (names.empty() ? "" : ", ") + std::string(nm ? nm : "?");
    if (!found && nm && (device.empty() || device == nm)) found = list[i];
  }
  if (!found) {
    lib->free_device_list(list);
    st = {ENODEV, "no RDMA device \"" + device + "\" in " + (library.empty() ? std::string("libibverbs.so.1") : library) +
                      " (it lists: " + (names.empty() ? "none" : names) + ")"};
    return nullptr;
  }
  std::unique_ptr<RealDevice> d(new RealDevice());
  d->lib_ = lib;
  d->info_.name = lib->get_device_name(found);
  d->info_.library = library.empty() ? "libibverbs.so.1" : library;
  d->info_.software = lib->software;
  d->info_.node_guid_be = lib->get_device_guid(found);
  d->ctx_ = lib->open_device(found);
  const int oe = errno;
  lib->free_device_list(list);   // an opened context stays valid (ibv_free_device_list(3))
  if (!d->ctx_) { st = {oe ? oe : ENODEV, "ibv_open_device " + d->info_.name + ": " + std::strerror(oe ? oe : ENODEV)}; d->closed_ = true; return nullptr; }
  if (int e = lib->query_device(d->ctx_, &d->info_.attr)) { st = d->errno_status("ibv_query_device", e); d->close(); return nullptr; }
  d->info_.fw_ver = d->info_.attr.fw_ver;
  d->refresh();
  // ibv_get_async_event blocks on the context's async_fd; the thread polls it with an eventfd to stop it
  fcntl(d->ctx_->async_fd, F_SETFL, fcntl(d->ctx_->async_fd, F_GETFL) | O_NONBLOCK);
  d->stop_fd_ = eventfd(0, EFD_CLOEXEC);
  d->async_thread_ = std::thread([p = d.get()] { p->async_loop(); });
  st = okst();
  return d;
}

void RealDevice::refresh() {
  // ibv_query_port is a static inline of verbs.h: the extended op when the context has one, else the exported symbol
  ibv_port_attr pa{};
  verbs_context* vctx = verbs_get_ctx_op(ctx_, query_port);
  const int e = vctx ? vctx->query_port(ctx_, 1, &pa, sizeof pa) : lib_->query_port_compat(ctx_, 1, &pa);
  if (!e) info_.port = pa;
  info_.gids.clear();
  const int len = info_.port.gid_tbl_len > 256 ? 256 : info_.port.gid_tbl_len;
  for (int i = 0; i < len; ++i) {
    if (lib_->query_gid_ex) {
      ibv_gid_entry ge{};
      if (lib_->query_gid_ex(ctx_, 1, i, &ge, 0, sizeof ge)) continue;   // ENODATA: an empty entry
      const char* t = ge.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : ge.gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1" : "IB";
      info_.gids.push_back({uint32_t(i), gid_text(ge.gid.raw), t});
    } else {
      ibv_gid g{};
      if (lib_->query_gid(ctx_, 1, i, &g)) continue;
      static const uint8_t zero[16] = {};
      if (!std::memcmp(g.raw, zero, 16)) continue;
      info_.gids.push_back({uint32_t(i), gid_text(g.raw), info_.port.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE (type not reported)" : "IB"});
    }
  }
}

void RealDevice::async_loop() {
  pollfd fds[2] = {{ctx_->async_fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  for (;;) {
    if (poll(fds, 2, -1) < 0) { if (errno == EINTR) continue; return; }
    if (fds[1].revents) return;
    ibv_async_event ev{};
    if (lib_->get_async_event(ctx_, &ev)) continue;   // EAGAIN: another reader, or a spurious wake-up
    AsyncEvent a{ev.event_type, kDevice, "device", now_ns()};
    {
      std::lock_guard<std::mutex> g(mu_);
      switch (ev.event_type) {
        case IBV_EVENT_CQ_ERR:
          a.obj_kind = "cq";
          for (auto& [h, c] : cqs_) if (c.cq == ev.element.cq) a.obj = h;
          break;
        case IBV_EVENT_SRQ_ERR: case IBV_EVENT_SRQ_LIMIT_REACHED:
          a.obj_kind = "srq";
          for (auto& [h, s] : srqs_) if (s.srq == ev.element.srq) a.obj = h;
          break;
        case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR: case IBV_EVENT_QP_ACCESS_ERR: case IBV_EVENT_COMM_EST:
        case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG: case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED:
          a.obj_kind = "qp";
          for (auto& [h, q] : qps_) if (q.qp == ev.element.qp) a.obj = h;
          break;
        default: break;   // port and device events name the device
      }
      async_.push_back(a);
    }
    lib_->ack_async_event(&ev);   // at once: ibv_destroy_* waits for the events of its object to be acknowledged
  }
}

std::vector<AsyncEvent> RealDevice::take_async() {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<AsyncEvent> out;
  out.swap(async_);
  return out;
}

void RealDevice::close() {
  if (closed_) return;
  closed_ = true;
  if (async_thread_.joinable()) {
    const uint64_t one = 1;
    if (write(stop_fd_, &one, sizeof one) < 0) { /* the eventfd cannot be full */ }
    async_thread_.join();
  }
  if (stop_fd_ >= 0) ::close(stop_fd_);
  stop_fd_ = -1;
  if (!ctx_) return;
  // children before parents: QPs (they hold CQs, SRQs, type 2 windows), AHs, SRQs, windows, MRs, CQs, the channel, PDs
  for (auto& [h, q] : qps_) lib_->destroy_qp(q.qp);
  for (auto& [h, a] : ahs_) lib_->destroy_ah(a.ah);
  for (auto& [h, s] : srqs_) lib_->destroy_srq(s.srq);
  for (auto& [h, w] : mws_) if (ctx_->ops.dealloc_mw) ctx_->ops.dealloc_mw(w.mw);
  for (auto& [h, m] : mrs_) lib_->dereg_mr(m.mr);
  for (auto& [h, c] : cqs_) lib_->destroy_cq(c.cq);   // EBUSY when completion events were not acknowledged: the context goes anyway
  if (channel_) lib_->destroy_comp_channel(channel_);
  for (auto& [h, p] : pds_) lib_->dealloc_pd(p.pd);
  lib_->close_device(ctx_);
  ctx_ = nullptr;
  std::lock_guard<std::mutex> g(mu_);
  qps_.clear(); ahs_.clear(); srqs_.clear(); mws_.clear(); mrs_.clear(); cqs_.clear(); pds_.clear();
  for (auto& [h, b] : bufs_) std::free(b.p);
  bufs_.clear();
}

RealDevice::~RealDevice() { close(); }

// ---- the session's buffers: page-aligned host memory, zeroed, the only memory the console's commands touch
Status RealDevice::alloc_buffer(uint64_t length, BufferInfo& out) {
  if (length == 0 || length > (1ull << 30)) return {EINVAL, "buffer.alloc: length must be 1 .. 1 GiB"};
  void* p = nullptr;
  if (posix_memalign(&p, 4096, length)) return {ENOMEM, "buffer.alloc: out of memory"};
  std::memset(p, 0, length);
  std::lock_guard<std::mutex> g(mu_);
  const uint32_t h = next();
  bufs_[h] = {p, length};
  out = {h, reinterpret_cast<uint64_t>(p), length};
  return okst();
}

Status RealDevice::free_buffer(uint32_t buf) {
  auto* b = find(bufs_, buf);
  if (!b) return {ENOENT, "no buffer with handle " + std::to_string(buf)};
  const uint64_t lo = reinterpret_cast<uint64_t>(b->p), hi = lo + b->length;
  for (auto& [h, m] : mrs_)
    if (reinterpret_cast<uint64_t>(m.mr->addr) < hi && reinterpret_cast<uint64_t>(m.mr->addr) + m.mr->length > lo)
      return {EBUSY, "buffer " + std::to_string(buf) + " is registered (mr " + std::to_string(h) + "): the device may still write it; deregister first"};
  std::free(b->p);
  std::lock_guard<std::mutex> g(mu_);
  bufs_.erase(buf);
  return okst();
}

bool RealDevice::covered(uint64_t addr, uint64_t len) const {
  for (auto& [h, b] : bufs_) {
    const uint64_t lo = reinterpret_cast<uint64_t>(b.p);
    if (addr >= lo && len <= b.length && addr - lo <= b.length - len) return true;
  }
  return false;
}

Status RealDevice::write_memory(uint64_t addr, const uint8_t* data, size_t len) {
  if (!covered(addr, len)) return {EFAULT, "memory.write: the range is not inside a buffer of this session (buffer.alloc); no other host memory is written"};
  std::memcpy(reinterpret_cast<void*>(addr), data, len);
  return okst();
}

Status RealDevice::read_memory(uint64_t addr, size_t len, std::vector<uint8_t>& out) {
  if (!covered(addr, len)) return {EFAULT, "memory.read: the range is not inside a buffer of this session (buffer.alloc)"};
  out.assign(reinterpret_cast<const uint8_t*>(addr), reinterpret_cast<const uint8_t*>(addr) + len);
  return okst();
}

}  // namespace vl::ibverbs
