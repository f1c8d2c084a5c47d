// libibverbs.so.1-compatible library over the Verbs Lab software device: internal state. Not a public header.
//
// One vl::Session per process holds one software device (profile and name from VERBSLAB_PROFILE /
// VERBSLAB_DEVICE, default rxe / vlrxe0) working on the process's own memory (Session::use_process_memory), so an
// unmodified program's ibv_reg_mr covers its own malloc'd buffers. The first ibv_open_device puts the device on the
// network (native/src/net UdpTransport: RoCEv2 over UDP port 4791) and starts the progress thread.
//
// Progress (docs/libibverbs.md): a progress thread receives datagrams and runs the engine's due actions
// (requester, ACK / RNR timers), sleeping in ppoll() on the sockets and a wake-up eventfd; post_send / post_recv /
// post_srq_recv run the engine once on the calling thread too (the packets leave at once), and a poll_cq that
// finds its CQ empty does the same when the session lock is free, so a program spinning on ibv_poll_cq drives its
// own device without a thread hand-off.
//
// Structures handed to the program start with the rdma-core structure (struct ibv_cq first in Cq, ...), so the
// static-inline fast paths of <infiniband/verbs.h> (ibv_post_send -> qp->context->ops.post_send, ...) land here.
#pragma once
#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/impl.h"
#include "net/udp.h"
#include "vl/session.h"

#define VL_EXPORT extern "C" __attribute__((visibility("default")))

namespace vlib {

// rdma-core's struct verbs_device (libibverbs/driver.h) starts with struct ibv_device and goes on with a pointer
// to the provider's ops: provider libraries that are loaded beside this one (perftest links libmlx5 / libefa)
// compare that pointer with their own ops (is_mlx5_dev), so the memory after ibv_device exists and holds zeros.
struct Device {
  ibv_device dev;
  void* verbs_device_tail[16] = {};
};

struct CompChannel { ibv_comp_channel ch; int wfd = -1; };
struct Pd { ibv_pd pd; vl::Handle h = 0; };
struct Mr { ibv_mr mr; vl::Handle h = 0; };
struct Mw { ibv_mw mw; vl::Handle h = 0; };
struct Cq { ibv_cq cq; vl::Handle h = 0; CompChannel* ch = nullptr; };
// The caps the device granted, kept beside the object so the post verbs check every count against them before
// they read one element of a list (rxe_post_send / validate_send_wr, rxe_post_recv / post_one_recv; mlx5's
// post_send checks num_sge against max_gs the same way): a program's num_sge is not a length we may trust. A chain
// is translated for at most max_wr + 1 WRs: the queue cannot take more, so the device refuses one of them (ENOMEM,
// *bad_wr) exactly as it would the same WR of a longer chain, and a cyclic list cannot run away.
struct Srq { ibv_srq srq; vl::Handle h = 0; uint32_t max_wr = 0, max_sge = 0; };
struct Qp {
  ibv_qp qp;
  vl::Handle h = 0;
  uint32_t max_send_wr = 0, max_recv_wr = 0, max_send_sge = 0, max_recv_sge = 0, max_inline_data = 0;
};
struct Ah { ibv_ah ah; vl::Handle h = 0; };
struct Context {
  verbs_context vctx;                          // ibv_context is its last member (verbs_get_ctx)
  int async_wfd = -1;
};

struct Global {
  std::mutex mu;                               // taken after the session lock, never before it
  std::unique_ptr<vl::Session> s;
  vl::SessionImpl* S = nullptr;
  vl::Handle dev = 0;
  std::string profile, name, error;
  Device device{};
  std::unique_ptr<vl::net::UdpTransport> udp;  // set by the first ibv_open_device
  std::string address;                         // the local address the device is bound to
  std::thread progress;
  std::atomic<bool> stop{false}, sleeping{false};
  int wake_fd = -1;                            // eventfd: wakes the progress thread
  std::unordered_map<vl::Handle, Cq*> cqs;     // completion events -> the CQ's channel
  std::unordered_map<vl::Handle, Qp*> qps;     // asynchronous events -> the object's context
  std::unordered_map<vl::Handle, Srq*> srqs;
  struct Async { vl::Handle obj; uint32_t type; };
  std::vector<Async> async_pending;
  bool debug = false;                          // VERBSLAB_DEBUG: device diagnostics on stderr (progress.cpp)
  std::atomic<void (*)()> cm_hook{nullptr};    // librdmacm's: takes the CM's events (private_rdmacm.h)
};
Global& g();                                   // created on first use, never destroyed (programs exit with
                                               // resources alive; the progress thread may still run)
bool init_session();                           // false + g().error when the device cannot be created
// 0 or errno; idempotent. address: bind this numeric address (librdmacm: the one the program binds or resolves
// from) instead of the default (VERBSLAB_ADDR / VERBSLAB_IFACE / the first free 127.0.0.N).
int attach_network(const char* address = nullptr);
// With the session lock held: run the transport once and hand completion events to their channels.
void progress_locked();
// After a post: run the engine on this thread and wake the progress thread for the timers it armed.
void kick();
std::unique_lock<std::recursive_mutex> lock();
// VERBSLAB_DEBUG: the device's explanations of what a NIC would only count, on stderr (progress.cpp)
void debug_print(const std::vector<vl::Event>& evs);

// ---- live in the console (console.cpp): VERBSLAB_CONSOLE streams the device to a running console
void console_init();                           // from init_session: starts the exporter thread when asked for
bool console_enabled();
// With the session lock held (progress_locked): the events, datagrams and (now and then) state into the exporter's
// bounded queue; past the bound they are counted as dropped. No I/O.
void console_collect_locked();

inline Context* ctx_of(ibv_context* c) { return reinterpret_cast<Context*>(verbs_get_ctx(c)); }
inline int set_errno(int e) { errno = e; return e; }
// vl::Status -> errno value; ENOENT on a handle becomes EINVAL (an object the program passed is not ours)
inline int err_of(const vl::Status& s) { return s.err == ENOENT ? EINVAL : s.err; }

// ---- conversions (datapath.cpp)
void to_ibv_wc(const vl::Wc& w, ibv_wc& out);

// ---- context ops (objects.cpp / datapath.cpp / device.cpp)
void fill_ops(Context& c);
int op_query_port(ibv_context* c, uint8_t port, ibv_port_attr* a, size_t len);
int op_query_device_ex(ibv_context* c, const ibv_query_device_ex_input* in, ibv_device_attr_ex* a, size_t len);
int op_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
int op_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
int op_post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad);
int op_poll_cq(ibv_cq* cq, int n, ibv_wc* wc);
int op_req_notify_cq(ibv_cq* cq, int solicited_only);
ibv_mw* op_alloc_mw(ibv_pd* pd, ibv_mw_type type);
int op_bind_mw(ibv_qp* qp, ibv_mw* mw, ibv_mw_bind* bind);
int op_dealloc_mw(ibv_mw* mw);

}  // namespace vlib
