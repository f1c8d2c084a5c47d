// The process's software device, its network attachment and its progress (see lib.h).
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>

#include "lib.h"

namespace vlib {

Global& g() {
  static Global* p = new Global;               // never destroyed: see lib.h
  return *p;
}

static const char* env_or(const char* name, const char* dflt) {
  const char* v = std::getenv(name);
  return v && *v ? v : dflt;
}

std::unique_lock<std::recursive_mutex> lock() { return g().S->lock(); }

// Each process's device is a new adapter, as if another NIC were plugged in: its MAC (hence node GUID and link-local
// GID 0) and its first QP number come from the process ID instead of the embedded device's fixed 02:56:4c:00:00:NN
// and 0x11. A peer's CM remembers a connection by the remote CA GUID and comm ID, and by the remote QPN and GID
// (kernel cm.c: the stale-connection checks of cm_insert_remote_id / cm_insert_remote_qpn, held through TimeWait):
// two programs run one after the other from one address must not look like the same connection again. Kernel rxe
// gets the same effect from its QPN pool, which goes on increasing on the one device every process shares.
static void personalize_device(vl::SessionImpl& S, vl::Handle h, uint32_t pid) {
  vl::Device* d = S.dev(h);
  if (!d) return;
  d->mac[3] = uint8_t(pid >> 16); d->mac[4] = uint8_t(pid >> 8); d->mac[5] = uint8_t(pid);
  const uint8_t eui[8] = {uint8_t(d->mac[0] ^ 2), d->mac[1], d->mac[2], 0xff, 0xfe, d->mac[3], d->mac[4], d->mac[5]};
  d->node_guid = 0;
  for (int i = 0; i < 8; i++) d->node_guid = (d->node_guid << 8) | eui[i];
  if (!d->gids.empty() && d->gids[0].gid[0] == 0xfe && d->gids[0].gid[1] == 0x80) std::memcpy(d->gids[0].gid + 8, eui, 8);
  d->next_qpn = 0x11 + ((pid & 0xfff) << 4);    // 16 .. 0x10001: the QPN table stays small (index_map.h)
}

bool init_session() {
  Global& G = g();
  std::lock_guard<std::mutex> lk(G.mu);
  if (G.s) return true;
  if (!G.error.empty()) return false;
  G.profile = env_or("VERBSLAB_PROFILE", "rxe");
  G.name = env_or("VERBSLAB_DEVICE", ("vl" + G.profile + "0").c_str());
  auto s = std::make_unique<vl::Session>(static_cast<uint64_t>(getpid()));
  G.debug = std::getenv("VERBSLAB_DEBUG") != nullptr;
  s->set_event_capture(G.debug);               // nothing drains the event stream in a program, unless debugging
  if (auto st = s->use_process_memory(); !st.ok()) { G.error = st.msg; return false; }
  auto d = s->create_device(G.profile, G.name);
  if (!d.ok()) { G.error = "VERBSLAB_PROFILE=" + G.profile + ": " + d.msg; return false; }
  G.dev = d.value;
  G.S = &s->internals();
  personalize_device(*G.S, G.dev, static_cast<uint32_t>(getpid()));
  G.S->async_hook = [](vl::Handle, vl::Handle obj, uint32_t type) { g().async_pending.push_back({obj, type}); };
  G.s = std::move(s);
  console_init();                              // VERBSLAB_CONSOLE: stream to a running console (console.cpp)
  ibv_device& dev = G.device.dev;
  dev.node_type = IBV_NODE_CA;
  dev.transport_type = IBV_TRANSPORT_IB;       // RoCE devices report IB transport, Ethernet link layer
  snprintf(dev.name, sizeof dev.name, "%s", G.name.c_str());
  snprintf(dev.dev_name, sizeof dev.dev_name, "uverbs0");
  snprintf(dev.dev_path, sizeof dev.dev_path, "/sys/class/infiniband_verbs/uverbs0");   // no such file: no sysfs
  snprintf(dev.ibdev_path, sizeof dev.ibdev_path, "/sys/class/infiniband/%s", G.name.c_str());
  return true;
}

static void progress_main();

// VERBSLAB_ADDR=a.b.c.d binds that address; VERBSLAB_IFACE=name an interface (GID table as rxe builds it);
// neither: `address` when librdmacm names one (the program's rdma_bind_addr / rdma_resolve_addr source), else the
// first of 127.0.0.1, 127.0.0.2, ... whose UDP port is free, so several programs on one host each get their own
// address (GID 1 = ::ffff:127.0.0.N). VERBSLAB_UDP_PORT (default 4791) and VERBSLAB_PEER_UDP_PORT.
int attach_network(const char* address) {
  Global& G = g();
  std::lock_guard<std::mutex> lk(G.mu);
  if (G.udp) return 0;
  vl::net::UdpOptions o;
  o.port = static_cast<uint16_t>(std::atoi(env_or("VERBSLAB_UDP_PORT", "4791")));
  o.peer_port = static_cast<uint16_t>(std::atoi(env_or("VERBSLAB_PEER_UDP_PORT", "0")));
  const char* ifc = std::getenv("VERBSLAB_IFACE");
  const char* addr = std::getenv("VERBSLAB_ADDR");
  // Which IPv4 IDs the received ICRC may cover (net/ipv4_id.h): VERBSLAB_IPV4_ID=any (a peer whose IP stack picks
  // them: kernel rxe), =framing (only the IDs this device's own framing writes), unset = auto: framing on loopback
  // (the peers there are other Verbs Lab programs), any on a host interface or a non-loopback address, where the
  // peer may be the kernel's Soft-RoCE.
  const std::string idmode = env_or("VERBSLAB_IPV4_ID", "");
  const std::string where = ifc && *ifc ? std::string("iface") : addr && *addr ? std::string(addr) : std::string(address ? address : "");
  const bool loopback = where.empty() || where.rfind("127.", 0) == 0 || where == "::1";
  o.any_ipv4_id = idmode == "any" || (idmode != "framing" && !loopback);
  vl::Result<std::unique_ptr<vl::net::UdpTransport>> r;
  const bool chosen = (ifc && *ifc) || (addr && *addr);   // the user's choice wins over the program's
  if (address && *address && !chosen) {        // librdmacm: the address the program binds / resolves from
    o.address = address;
    r = vl::net::UdpTransport::attach(*G.s, G.dev, o);
    G.address = address;
  } else if (ifc && *ifc) {
    o.interface = ifc;
    r = vl::net::UdpTransport::attach(*G.s, G.dev, o);
    G.address = ifc;
  } else if (addr && *addr) {
    o.address = addr;
    r = vl::net::UdpTransport::attach(*G.s, G.dev, o);
    G.address = addr;
  } else {
    for (int n = 1; n < 255; n++) {
      o.address = "127.0.0." + std::to_string(n);
      r = vl::net::UdpTransport::attach(*G.s, G.dev, o);
      if (r.err != EADDRINUSE) break;
    }
    G.address = o.address;
  }
  if (!r.ok()) {
    G.error = "network: " + r.msg;
    return r.err ? r.err : EIO;
  }
  G.udp = std::move(r.value);
  G.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  G.progress = std::thread(progress_main);
  G.progress.detach();                         // never joined: a program may exit with its resources alive
  return 0;
}

// ibv_async_event into the pipe of the context the object belongs to (rdma-core reads a kernel event from async_fd;
// here the pipe carries the struct itself).
static void send_async(const Global::Async& a) {
  Global& G = g();
  ibv_async_event ev{};
  ev.event_type = static_cast<ibv_event_type>(a.type);
  ibv_context* ctx = nullptr;
  std::lock_guard<std::mutex> lk(G.mu);
  switch (a.type) {
    case IBV_EVENT_CQ_ERR:
      if (auto it = G.cqs.find(a.obj); it != G.cqs.end()) { ev.element.cq = &it->second->cq; ctx = it->second->cq.context; }
      break;
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      if (auto it = G.srqs.find(a.obj); it != G.srqs.end()) { ev.element.srq = &it->second->srq; ctx = it->second->srq.context; }
      break;
    default:                                   // QP events
      if (auto it = G.qps.find(a.obj); it != G.qps.end()) { ev.element.qp = &it->second->qp; ctx = it->second->qp.context; }
      break;
  }
  if (!ctx || ctx_of(ctx)->async_wfd < 0) return;   // the object is gone, or its context closed
  ssize_t w = write(ctx_of(ctx)->async_wfd, &ev, sizeof ev);
  (void)w;
}

// VERBSLAB_DEBUG: what a NIC's counters would only count: dropped packets, failed key checks, async events, with the
// device's explanation.
void debug_print(const std::vector<vl::Event>& evs) {
  for (auto& e : evs) {
    const bool show = e.kind == vl::EventKind::PacketDropped || (e.kind == vl::EventKind::KeyCheck && !e.ok) ||
                      e.kind == vl::EventKind::AsyncEvent || e.kind == vl::EventKind::QpState;
    if (show) fprintf(stderr, "verbslab: %s %s\n", e.obj_kind.c_str(), e.text.c_str());
  }
}

void progress_locked() {
  Global& G = g();
  if (console_enabled()) console_collect_locked();   // attached to a console: the events go there (console.cpp)
  else if (G.debug) debug_print(G.s->drain_events());
  if (!G.async_pending.empty()) {
    std::vector<Global::Async> todo;
    todo.swap(G.async_pending);
    for (auto& a : todo) send_async(a);
  }
  if (!G.udp) return;
  G.udp->poll(0);
  if (!G.async_pending.empty()) {
    std::vector<Global::Async> todo;
    todo.swap(G.async_pending);
    for (auto& a : todo) send_async(a);
  }
  for (;;) {                                   // completion events -> the CQ's channel (a pipe carrying the CQ)
    auto ev = G.s->get_cq_event(G.dev);
    if (!ev.ok()) break;
    std::lock_guard<std::mutex> lk(G.mu);
    auto it = G.cqs.find(ev.value);
    if (it == G.cqs.end() || !it->second->ch) continue;
    Cq* c = it->second;
    ssize_t w = write(c->ch->wfd, &c, sizeof c);
    (void)w;                                   // a pipe of 64 KiB holds 8192 unread events
  }
  if (auto hook = G.cm_hook.load(std::memory_order_acquire)) hook();   // librdmacm: the CM's events to their channels
}

void kick() {
  Global& G = g();
  if (!G.udp) return;
  progress_locked();
  if (G.sleeping.load(std::memory_order_acquire)) {
    uint64_t one = 1;
    ssize_t w = write(G.wake_fd, &one, sizeof one);
    (void)w;
  }
}

static void progress_main() {
  Global& G = g();
  std::vector<pollfd> pf;
  for (int fd : G.udp->fds()) pf.push_back({fd, POLLIN, 0});
  pf.push_back({G.wake_fd, POLLIN, 0});
  while (!G.stop.load()) {
    int64_t wait_ns = 1'000'000;               // at most 1 ms between two looks at the timers
    {
      auto lk = lock();
      progress_locked();
      if (!G.S->idle()) {
        int64_t d = int64_t(G.S->next_time()) - int64_t(G.S->now);
        wait_ns = std::max<int64_t>(0, std::min(wait_ns, d));
      }
    }
    if (wait_ns == 0) continue;
    G.sleeping.store(true, std::memory_order_release);
    timespec ts{0, static_cast<long>(wait_ns)};
    ppoll(pf.data(), pf.size(), &ts, nullptr);
    G.sleeping.store(false, std::memory_order_release);
    uint64_t v;
    while (read(G.wake_fd, &v, sizeof v) > 0) {}
  }
}

}  // namespace vlib
