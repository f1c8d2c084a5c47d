// The engine: a clock and a priority queue of actions (requester runs, packet deliveries, ACK and RNR timers).
// step() runs exactly one action; run() until idle. Free running: Inline runs to completion on the posting thread
// (post_send / post_recv / poll_cq drive the engine); Threads runs on an engine thread (threads.cpp).
#include <algorithm>

#include "core/impl.h"

namespace vl {

static bool later(const Action& a, const Action& b) { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }

// Threads mode only: wake the engine thread (spinning on the doorbell or asleep on cv). Inline and stepped sessions
// have no engine thread to wake, and a locked add per queued action is a measurable share of a small operation.
void SessionImpl::ring_doorbell() {
  if (!threaded.load(std::memory_order_relaxed)) return;
  doorbell.fetch_add(1, std::memory_order_release);
  if (engine_sleeping) cv.notify_one();
}

void SessionImpl::push(Action a) {
  // (a pending hand-off stays pending: a heap action due no later than it makes deliver_direct queue it, and one due
  // after it cannot come first)
  a.seq = action_seq++;
  heap.push_back(std::move(a));
  std::push_heap(heap.begin(), heap.end(), later);
  ring_doorbell();
}

void SessionImpl::push_delivery(Action a) {
  if (a.t != now + wire_latency_ns || (!fifo.empty() && fifo.back().t > a.t)) return push(std::move(a));
  push_fifo(std::move(a));
}

void SessionImpl::push_fifo(Action a) {
  if (direct.pending) queue_direct();
  a.seq = action_seq++;
  fifo.push_back(std::move(a));
  ring_doorbell();
}

uint64_t SessionImpl::next_time() const {
  if (heap.empty()) return fifo.front().t;
  if (fifo.empty()) return heap.front().t;
  return std::min(heap.front().t, fifo.front().t);
}

// The clock when a delivery due at t runs (exec, and fastpath.cpp's hand-off). Threads mode runs in real time
// (threads.cpp sets now from the clock before each action, and runs a delivery as soon as it is due within one wire
// latency): there a delivery does not move the clock to its arrival time, or every hop of a request / ACK exchange
// would add one wire latency ahead of real time and the engine would then wait for the clock to catch up, pacing the
// device at one packet per wire latency. Other actions (timers) always move it to their deadline.
void SessionImpl::delivery_clock(uint64_t t) {
  if (t > now && mode != FreeRunMode::Threads) now = t;
}

void SessionImpl::exec(Action& a) {
  if (a.kind == Action::Deliver) delivery_clock(a.t);
  else if (a.t > now) now = a.t;
  switch (a.kind) {
    case Action::ReqRun:
      if (Qp* q = qp(a.qp)) {
        q->req_scheduled = false;
        if (!free_running) { req_run(*q); break; }
        // free running: the requester emits up to 64 packets in this action instead of re-queuing itself, and each
        // packet is delivered (and its ACK handled) right after it is built, while its bytes are still in cache
        batching_qp = q->h;
        for (int i = 0; i < 64; i++) {
          q->req_scheduled = false;
          req_run(*q);
          if (direct.pending) deliver_direct();   // fastpath.cpp
          deliver_pending();
          if (refs_in_flight) own_refs();          // fastpath.cpp: a ref delivery never outlives its batch step
          q = qp(a.qp);
          if (!q || !q->req_scheduled) break;
        }
        if (direct.pending) queue_direct();        // (none is left: deliver_direct resolves each; kept as a guard)
        batching_qp = 0;
        if (q && q->req_scheduled) { q->req_scheduled = false; schedule_req(*q); }
      }
      break;
    case Action::Deliver:
      if (a.carried) deliver_carried(a);           // DataPath::Fast (fastpath.cpp)
      else deliver(a.src_dev, a.dst_dev, a.ip_id, a.pkt);
      if (pkt_pool.size() < 4096 && a.pkt.capacity()) pkt_pool.push_back(std::move(a.pkt));   // a by-reference delivery has no buffer
      break;
    case Action::AckTimer:
      if (Qp* q = qp(a.qp)) on_ack_timer(*q, a.gen);
      break;
    case Action::RnrTimer:
      if (Qp* q = qp(a.qp)) on_rnr_timer(*q, a.gen);
      break;
    case Action::Nvmf:
      nvmf_action(a);
      break;
    case Action::Cm:
      cm_action(a);
      break;
  }
}

bool SessionImpl::step() {
  if (idle()) return false;
  Action a;
  if (!fifo.empty() && (heap.empty() || later(heap.front(), fifo.front()))) {
    a = std::move(fifo.front());
    fifo.pop_front();
  } else {
    std::pop_heap(heap.begin(), heap.end(), later);
    a = std::move(heap.back());
    heap.pop_back();
  }
  exec(a);
  return true;
}

// Free running only (inside a batching ReqRun action): deliver every in-order packet that comes before whatever
// else is queued; their ACKs / responses land in the FIFO too and are handled in the same loop.
void SessionImpl::deliver_pending() {
  while (!fifo.empty() && (heap.empty() || later(heap.front(), fifo.front()))) {
    Action d = std::move(fifo.front());
    fifo.pop_front();
    exec(d);
    if (direct.pending) deliver_direct();         // an ACK / response the delivery sent
  }
}

// Free-running: run until idle, but never hang the caller on an endless exchange (e.g. RNR retry 7 =
// infinite against a QP that never posts a receive): stop after 2 s of virtual time or 200k actions; the rest
// stays queued and continues on the next call.
void SessionImpl::run_to_idle() {
  static thread_local int depth = 0;
  if (depth) return;                               // no re-entry from inside an action
  depth++;
  const uint64_t start = now;
  for (uint64_t n = 0; n < 200000; n++) {
    if (idle() || next_time() > start + 2000000000ull) break;
    step();
  }
  depth--;
}

void Session::set_faults(const FaultConfig& f) {
  auto lk = impl_->lock();
  auto& S = *impl_;
  FaultConfig c = f;
  auto clamp = [](double v) { return v < 0 ? 0 : v > 1 ? 1 : v; };
  c.loss = clamp(c.loss); c.duplicate = clamp(c.duplicate); c.reorder = clamp(c.reorder); c.delay = clamp(c.delay);
  S.faults = c;
  if (S.capture) {
    auto& e = S.emit(EventKind::Log, 0, 0, "session", "faults: loss " + std::to_string(c.loss) + " dup " + std::to_string(c.duplicate) +
                                                          " reorder " + std::to_string(c.reorder) + " delay " + std::to_string(c.delay));
    e.a = static_cast<uint64_t>(c.loss * 1e6); e.b = static_cast<uint64_t>(c.duplicate * 1e6);
    e.c = static_cast<uint64_t>(c.reorder * 1e6); e.d = c.delay_ns;
  }
}

bool Session::step() {
  auto lk = impl_->lock();
  if (impl_->mode == FreeRunMode::Threads) return false;
  return impl_->step();
}

uint64_t Session::run(uint64_t max_steps) {
  auto lk = impl_->lock();
  if (impl_->mode == FreeRunMode::Threads) return 0;
  uint64_t n = 0;
  while (n < max_steps && impl_->step()) n++;
  return n;
}

uint64_t Session::now_ns() const {
  auto lk = impl_->lock();
  return impl_->now;
}

void Session::set_free_running(bool on) { set_free_run_mode(on ? FreeRunMode::Inline : FreeRunMode::Off); }

}  // namespace vl
