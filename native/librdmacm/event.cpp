// Event channels and CM events: rdma_create_event_channel / destroy, rdma_get_cm_event, rdma_ack_cm_event, the
// progress hook that moves the device's CM events to their channels, and the waits of sync IDs (rdma-core
// librdmacm/cma.c: ucma_complete, rdma_get_cm_event's per-event processing, ucma_process_conn_req / conn_resp).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "lib.h"

namespace vcm {

Channel* new_channel(int* err) {
  if (init()) { *err = errno; return nullptr; }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) { *err = errno; return nullptr; }
  fcntl(sv[1], F_SETFL, O_NONBLOCK);           // the hook never waits for the program
  auto* c = new Channel{};
  c->ch.fd = sv[0];
  c->wfd = sv[1];
  return c;
}

static Channel* chan(rdma_event_channel* ch) { return reinterpret_cast<Channel*>(ch); }

void queue_event(Channel* c, Id* id, const vl::CmEvent& ev) {
  c->q.push_back({id, ev});
  const char one = 1;
  ssize_t w = write(c->wfd, &one, 1);          // a socket buffer holds ~200 000 unread events
  (void)w;
}

// The tokens of events removed from a queue: taken back without waiting (MSG_DONTWAIT whatever the program's
// O_NONBLOCK), so poll() no longer reports them; a reader that took one first just finds the queue shorter.
static void drop_tokens(Channel* c, size_t n) {
  char buf[64];
  while (n) {
    ssize_t r = recv(c->ch.fd, buf, std::min(n, sizeof buf), MSG_DONTWAIT);
    if (r <= 0) break;
    n -= static_cast<size_t>(r);
  }
}

std::vector<Pending> take_events(Id* id) {
  std::vector<Pending> out;
  Channel* c = chan(id->id.channel);
  for (auto it = c->q.begin(); it != c->q.end();) {
    if (it->id == id) { out.push_back(*it); it = c->q.erase(it); } else ++it;
  }
  drop_tokens(c, out.size());
  return out;
}

// The progress pass (session lock held): each CM event to the channel of its ID. A connection request makes the new
// ID now (on the listener's channel, as rdma_ucm's ucma_req_handler does), so the events that follow it find it.
void cm_hook() {
  Global& G = g();
  std::vector<vl::CmEvent> evs = G.s->cm_get_events(G.abi->dev);
  if (evs.empty()) return;
  std::vector<vl::Handle> orphans;             // requests to an ID the program already destroyed
  {
    std::lock_guard<std::mutex> lk(G.mu);
    for (auto& e : evs) {
      const bool req = e.event == vl::CM_EVENT_CONNECT_REQUEST;
      auto it = G.ids.find(req ? e.listen_id : e.id);
      if (it == G.ids.end() || it->second->destroying) {
        if (req) orphans.push_back(e.id);
        continue;
      }
      Id* owner = it->second;
      if (req) {
        Id* child = new Id{};
        child->h = e.id;
        child->id.channel = owner->id.channel;
        child->id.context = owner->id.context;
        child->id.ps = owner->id.ps;
        child->id.qp_type = owner->id.qp_type;
        G.ids[e.id] = child;
      }
      queue_event(chan(owner->id.channel), owner, e);   // a request counts against the listener (rdma-core)
    }
  }
  for (vl::Handle h : orphans) G.s->cm_destroy_id(h);   // REJ to the requester
}

static void copy_private(Event* e, const std::vector<uint8_t>& pd, const void** ptr, uint8_t* len) {
  size_t n = std::min(pd.size(), sizeof e->private_data);
  *len = static_cast<uint8_t>(n);
  *ptr = nullptr;
  if (n) { std::memcpy(e->private_data, pd.data(), n); *ptr = e->private_data; }
}

// ucma_copy_conn_event
static void copy_conn(Event* e, const vl::CmEvent& ev) {
  rdma_conn_param& d = e->event.param.conn;
  copy_private(e, ev.param.private_data, &d.private_data, &d.private_data_len);
  d.responder_resources = ev.param.responder_resources;
  d.initiator_depth = ev.param.initiator_depth;
  d.flow_control = ev.param.flow_control;
  d.retry_count = ev.param.retry_count;
  d.rnr_retry_count = ev.param.rnr_retry_count;
  d.srq = ev.param.srq;
  d.qp_num = ev.param.qp_num;
}

// ucma_copy_ud_event: the address handle attributes that reach the peer (RoCE: its GID by the route), its QP, Q_Key
static void copy_ud(Event* e, const vl::CmEvent& ev, Id* id) {
  rdma_ud_param& d = e->event.param.ud;
  copy_private(e, ev.param.private_data, &d.private_data, &d.private_data_len);
  if (auto info = g().s->cm_id_info(id->h)) {
    d.ah_attr.is_global = 1;
    std::memcpy(d.ah_attr.grh.dgid.raw, info->dgid, 16);
    d.ah_attr.grh.sgid_index = static_cast<uint8_t>(info->sgid_index);
    d.ah_attr.grh.hop_limit = 64;
    d.ah_attr.port_num = 1;
  }
  d.qp_num = ev.remote_qpn;
  d.qkey = ev.remote_qkey;
}

// What rdma-core does in user space on each event; false: the event is consumed here (the caller reads the next).
static bool process(Event* e, const vl::CmEvent& ev) {
  Global& G = g();
  Id* id = e->id;
  const bool ud = id->id.qp_type == IBV_QPT_UD;
  e->event.id = &id->id;
  e->event.event = static_cast<rdma_cm_event_type>(ev.event);
  e->event.status = ev.status;
  switch (ev.event) {
    case vl::CM_EVENT_ADDR_RESOLVED:
      if (query_route(id)) { e->event.event = RDMA_CM_EVENT_ADDR_ERROR; e->event.status = -errno; }
      return true;
    case vl::CM_EVENT_ROUTE_RESOLVED:
      if (query_route(id)) { e->event.event = RDMA_CM_EVENT_ROUTE_ERROR; e->event.status = -errno; }
      return true;
    case vl::CM_EVENT_CONNECT_REQUEST: {     // ucma_process_conn_req
      Id* child;
      {
        std::lock_guard<std::mutex> lk(G.mu);
        auto it = G.ids.find(ev.id);
        child = it == G.ids.end() ? nullptr : it->second;
      }
      if (!child) return false;              // the program destroyed the listener meanwhile
      e->event.listen_id = &id->id;
      e->event.id = &child->id;
      if (ud) copy_ud(e, ev, child); else copy_conn(e, ev);
      child->initiator_depth = ev.param.initiator_depth;
      child->responder_resources = ev.param.responder_resources;
      if (id->sync && migrate(child, nullptr, true)) { rdma_destroy_id(&child->id); return false; }
      if (query_route(child)) { rdma_destroy_id(&child->id); return false; }
      return true;
    }
    case vl::CM_EVENT_CONNECT_RESPONSE:
      // ucma_process_conn_resp: the CM reports a REP this way only for an ID it has no QP for; a QP the program put
      // in id->qp itself is moved here as rdma-core moves it (INIT, RTR, RTS from rdma_init_qp_attr), then the RTU
      // and ESTABLISHED
      copy_conn(e, ev);
      if (id->id.qp) {
        int err = 0;
        for (int st = IBV_QPS_INIT; st <= IBV_QPS_RTS && !err; st++) {
          ibv_qp_attr a{};
          int mask = 0;
          a.qp_state = static_cast<ibv_qp_state>(st);
          if (rdma_init_qp_attr(&id->id, &a, &mask)) err = errno;
          else err = ibv_modify_qp(id->id.qp, &a, mask);
        }
        if (!err) {
          auto st = G.s->cm_establish(id->h);
          progress();
          err = st.ok() ? 0 : st.err;
        }
        if (!err) e->event.event = RDMA_CM_EVENT_ESTABLISHED;
        else { modify_qp_err(id); e->event.event = RDMA_CM_EVENT_CONNECT_ERROR; e->event.status = -err; id->connect_error = true; }
      }
      return true;
    case vl::CM_EVENT_ESTABLISHED:
      if (ud) copy_ud(e, ev, id); else copy_conn(e, ev);
      return true;
    case vl::CM_EVENT_REJECTED:
      if (id->connect_error) return false;
      copy_conn(e, ev);
      modify_qp_err(id);
      return true;
    case vl::CM_EVENT_DISCONNECTED:
      if (id->connect_error) return false;
      copy_conn(e, ev);
      return true;
    default:
      if (ud) copy_ud(e, ev, id); else copy_conn(e, ev);
      return true;
  }
}

static void complete_event(Id* id) {           // ucma_complete_event
  std::lock_guard<std::mutex> lk(id->mu);
  id->events_completed++;
  id->cv.notify_all();
}

}  // namespace vcm

using namespace vcm;

VL_EXPORT rdma_event_channel* rdma_create_event_channel(void) {
  int err = 0;
  Channel* c = new_channel(&err);
  if (!c) { errno = err; return nullptr; }
  return &c->ch;
}

// rdma-core closes the fd (the kernel drops the channel's unread events); the IDs still on it are the program's
// mistake there as here. A thread blocked in rdma_get_cm_event on it stays blocked, as in a read of rdma_ucm's fd
// that another thread closed (rping's CM thread while main returns): so our end is closed only when no thread reads
// (closing it would wake that reader with end-of-file), else the channel is left to that reader until exit.
VL_EXPORT void rdma_destroy_event_channel(rdma_event_channel* ch) {
  if (!ch) return;
  Channel* c = chan(ch);
  bool reading;
  {
    std::lock_guard<std::mutex> lk(g().mu);
    c->q.clear();
    reading = c->readers.load() > 0;
  }
  close(c->ch.fd);
  if (reading) return;
  close(c->wfd);
  delete c;
}

VL_EXPORT int rdma_get_cm_event(rdma_event_channel* ch, rdma_cm_event** event) {
  if (init()) return -1;
  if (!ch || !event) return fail(EINVAL);
  Channel* c = chan(ch);
  struct Reading {                             // rdma_destroy_event_channel looks at it
    Channel* c;
    explicit Reading(Channel* x) : c(x) { c->readers++; }
    ~Reading() { c->readers--; }
  } reading(c);
  for (;;) {
    char token;
    ssize_t n = read(c->ch.fd, &token, 1);     // blocks unless the program made the fd non-blocking (EAGAIN)
    if (n == 0) return fail(ENODATA);
    if (n < 0) return -1;
    Pending p;
    {
      std::lock_guard<std::mutex> lk(g().mu);
      if (c->q.empty()) continue;             // its event was taken back by a destroy or migrate
      p = c->q.front();
      c->q.pop_front();
      p.id->events_reported++;
    }
    auto* e = static_cast<Event*>(calloc(1, sizeof(Event)));
    if (!e) { complete_event(p.id); return fail(ENOMEM); }
    e->id = p.id;
    if (!process(e, p.ev)) {                   // consumed here: acknowledged for the program
      complete_event(p.id);
      free(e);
      continue;
    }
    *event = &e->event;
    return 0;
  }
}

VL_EXPORT int rdma_ack_cm_event(rdma_cm_event* event) {
  if (!event) return fail(EINVAL);
  Event* e = reinterpret_cast<Event*>(event);
  complete_event(e->id);
  free(e);
  return 0;
}

namespace vcm {

// ucma_complete: a sync ID's call waits for its outcome on the ID's own channel; the event stays in id.event until
// the next call (or rdma_destroy_id) acknowledges it.
int complete(Id* id) {
  if (!id->sync) return 0;
  if (id->id.event) { rdma_ack_cm_event(id->id.event); id->id.event = nullptr; }
  if (rdma_get_cm_event(id->id.channel, &id->id.event)) return -1;
  const rdma_cm_event* e = id->id.event;
  if (!e->status) return 0;
  if (e->event == RDMA_CM_EVENT_REJECTED) return fail(ECONNREFUSED);
  return fail(e->status < 0 ? -e->status : e->status);
}

// rdma_migrate_id: the ID's queued events move with it (as rdma_ucm's ucma_migrate_id moves them); then it waits
// until the program acknowledged those it already got.
int migrate(Id* id, rdma_event_channel* to, bool sync) {
  Global& G = g();
  int err = 0;
  Channel* fresh = nullptr;
  if (!to) {
    fresh = new_channel(&err);
    if (!fresh) return fail(err);
    to = &fresh->ch;
  }
  rdma_event_channel* old = id->id.channel;
  const bool old_sync = id->sync;
  int reported;
  {
    std::lock_guard<std::mutex> lk(G.mu);
    for (auto& p : take_events(id)) queue_event(chan(to), p.id, p.ev);
    id->id.channel = to;
    id->sync = sync;
    reported = id->events_reported;
  }
  if (old_sync) {
    if (id->id.event) { rdma_ack_cm_event(id->id.event); id->id.event = nullptr; }
    rdma_destroy_event_channel(old);
  }
  std::unique_lock<std::mutex> lk(id->mu);
  id->cv.wait(lk, [&] { return id->events_completed >= reported; });
  return 0;
}

}  // namespace vcm

VL_EXPORT int rdma_migrate_id(rdma_cm_id* id, rdma_event_channel* channel) {
  if (!id) return fail(EINVAL);
  Id* p = reinterpret_cast<Id*>(id);
  if (p->sync && !channel) return fail(EINVAL);
  return migrate(p, channel, channel == nullptr);
}
