// librdmacm.so.1-compatible library over the Verbs Lab software device's connection manager: internal state. Not a
// public header. docs/librdmacm.md.
//
// rdma-core's librdmacm (librdmacm/cma.c) talks to the kernel's rdma_ucm through /dev/infiniband/rdma_cm; here the
// same calls go to the process's vl::Session (reached through libibverbs.so.1's private interface,
// native/libibverbs/private_rdmacm.h), whose CM runs the IBA chapter 12 exchange on the device's QP1 (vl/cm.h).
//
// Shapes follow rdma-core: an Id starts with struct rdma_cm_id (container of the program's pointer, as
// cma_id_private), an Event with struct rdma_cm_event followed by its private data (cma_event), and an event channel
// is a file descriptor (here the read end of a socketpair carrying one byte per queued event, so poll / epoll /
// O_NONBLOCK behave as on rdma_ucm's fd). The CM's events (Session::cm_get_events) are moved to their channel's
// queue by a hook libibverbs calls at the end of each progress pass (progress thread, after posts, poll_cq);
// rdma_get_cm_event then does what rdma-core does in user space (new IDs for connection requests, addresses and
// route from the CM, sync IDs' own channels).
#pragma once
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "../libibverbs/private_rdmacm.h"
#include "vl/cm.h"

#define VL_EXPORT extern "C" __attribute__((visibility("default")))

namespace vcm {

struct Id;

// One CM event waiting in a channel (the CM's own event, with the ID it is for)
struct Pending {
  Id* id;
  vl::CmEvent ev;
};

struct Channel {
  rdma_event_channel ch;                       // ch.fd: the program's end (blocking unless the program sets O_NONBLOCK)
  int wfd = -1;                                // our end: one byte written per queued event
  std::deque<Pending> q;                       // under Global::mu
  std::atomic<int> readers{0};                 // threads inside rdma_get_cm_event on this channel
};

// cma_id_private
struct Id {
  rdma_cm_id id;
  vl::Handle h = 0;                            // the CM ID in the device
  bool sync = false;                           // created without a channel: calls wait for their outcome
  bool destroying = false;
  int events_reported = 0;                     // handed to the program (rdma_get_cm_event), under Global::mu
  int events_completed = 0;                    // acknowledged (rdma_ack_cm_event), under mu
  std::mutex mu;
  std::condition_variable cv;
  uint8_t initiator_depth = 0, responder_resources = 0;
  bool connect_error = false;
  std::vector<uint8_t> connect;                // rdma_create_ep: the rdma_addrinfo's ai_connect, sent with the REQ
  ibv_qp_init_attr* qp_init_attr = nullptr;    // rdma_create_ep (passive): the QP rdma_get_request makes
  bool own_pd = false;                         // id.pd is the device's default PD (Global::pd)
};

// cma_event
struct Event {
  rdma_cm_event event;
  uint8_t private_data[256];                   // RDMA_MAX_PRIVATE_DATA
  Id* id;
};

struct Global {
  const VerbslabRdmacm* abi = nullptr;
  vl::Session* s = nullptr;
  std::mutex mu;                               // taken inside the session lock (the hook), never around a Session call
  std::unordered_map<vl::Handle, Id*> ids;     // the device's CM ID -> ours
  std::mutex dev_mu;                           // open_device (it calls verbs, so never under mu)
  ibv_context* verbs = nullptr;                // the device's context, opened once (rdma-core: cma_device->verbs)
  ibv_pd* pd = nullptr;                        // its default PD (cma_device->pd)
  uint8_t max_initiator_depth = 0, max_responder_resources = 0;
  uint32_t max_qp_wr = 0;
};

Global& g();
// 0, or -1 with errno (ENODEV: no device). Loads the private interface and sets the hook; idempotent.
int init();
// The device's context (opened at the first use, after the device is on the network) and its default PD.
int open_device();
// The device on the network: at `a` when it is not there yet (the address the program binds or resolves from),
// else where it is. 0 or -1 with errno.
int attach_for(const sockaddr* a);
// After a cm_* call: the MADs it queued leave, its events reach their channels.
inline void progress() { g().abi->progress(); }

inline int fail(int e) { errno = e; return -1; }  // rdma-core's ERR(): -1 with errno
inline int fail_status(const vl::Status& st) { return fail(st.err == ENOENT ? EINVAL : st.err); }

// ---- addresses (addr.cpp)
socklen_t addr_len(const sockaddr* a);           // 0 for an unsupported family
bool to_cm_addr(const sockaddr* a, vl::CmAddr& out);
void from_cm_addr(const vl::CmAddr& a, sockaddr_storage& out);
// Copies the CM's view of the ID (addresses, GIDs, P_Key, port) into rdma_cm_id.route, and sets id.verbs / id.pd
// when the ID has an address (ucma_query_route). 0 or -1 with errno.
int query_route(Id* id);

// ---- channels and events (event.cpp)
Channel* new_channel(int* err);
void queue_event(Channel* c, Id* id, const vl::CmEvent& ev);   // with g().mu held
void cm_hook();                                // libibverbs' progress pass -> channel queues
// Removes the ID's queued events from its channel (destroy, migrate); with g().mu held. Returns them.
std::vector<Pending> take_events(Id* id);
// ucma_complete: for a sync ID, waits for the event the last call started and returns its outcome.
int complete(Id* id);
// rdma_migrate_id; to == nullptr: a new channel of the ID's own (sync). 0 or -1 with errno.
int migrate(Id* id, rdma_event_channel* to, bool sync);
Id* new_id(rdma_event_channel* ch, void* context, rdma_port_space ps, ibv_qp_type qpt);
void free_id(Id* id);
// rdma_create_id2: an ID of this port space and QP type (rdma_create_ep takes both from the address info)
int create_id(rdma_event_channel* ch, rdma_cm_id** out, void* context, rdma_port_space ps, ibv_qp_type qpt);

// ---- QPs (qp.cpp)
int modify_qp_err(Id* id);

}  // namespace vcm
