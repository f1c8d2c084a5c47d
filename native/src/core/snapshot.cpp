// Session::queue_snapshot: what sits in each work and completion queue right now, for a console that cannot follow
// every WqePosted / WqeCompleted / Cqe event (it samples the stream) and redraws the rings from the device itself.
#include "core/impl.h"

namespace vl {

namespace {
// the newest `max` entries of queue q as r's slots; r.first is the absolute index of the first one kept
template <class Q, class F> void fill(RingSnapshot& r, const Q& q, size_t max, F&& slot) {
  const size_t skip = q.size() > max ? q.size() - max : 0;
  r.first = r.consumer + skip;
  r.slots.reserve(q.size() - skip);
  for (size_t i = skip; i < q.size(); i++) r.slots.push_back(slot(q[i]));
}
}  // namespace

std::vector<RingSnapshot> Session::queue_snapshot(size_t max_slots) const {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  std::vector<RingSnapshot> out;
  for (auto& [h, q] : S.qps) {
    RingSnapshot sq{h, q.dev, RingQueue::Sq, q.init.cap.max_send_wr, q.sq_posted, q.sq_posted - q.sq.size()};
    fill(sq, q.sq, max_slots, [](const SendWqe& w) {
      RingSlot s{w.wr.wr_id, w.wr.opcode, w.status, SlotState::Posted, 0};
      if (w.state == WqeState::Processing || w.state == WqeState::Pending) s.state = SlotState::Started;
      if (w.state == WqeState::Done || w.state == WqeState::Error) s.state = SlotState::Done;
      return s;
    });
    out.push_back(std::move(sq));
    if (q.init.srq) continue;                      // its receive WRs are the SRQ's
    RingSnapshot rq{h, q.dev, RingQueue::Rq, q.init.cap.max_recv_wr, q.rq_posted, q.rq_posted - q.rq.size()};
    fill(rq, q.rq, max_slots, [](const RecvWr& w) { return RingSlot{w.wr_id, 0, 0, SlotState::Posted, 0}; });
    out.push_back(std::move(rq));
  }
  for (auto& [h, c] : S.cqs) {
    RingSnapshot r{h, c.dev, RingQueue::Cq, c.cqe, c.produced, c.produced - c.q.size()};
    fill(r, c.q, max_slots, [](const Wc& w) { return RingSlot{w.wr_id, w.opcode, w.status, SlotState::Done, w.qp_num}; });
    out.push_back(std::move(r));
  }
  for (auto& [h, s] : S.srqs) {
    RingSnapshot r{h, s.dev, RingQueue::Srq, s.max_wr, s.posted, s.posted - s.q.size()};
    fill(r, s.q, max_slots, [](const RecvWr& w) { return RingSlot{w.wr_id, 0, 0, SlotState::Posted, 0}; });
    out.push_back(std::move(r));
  }
  return out;
}

uint64_t Session::last_seq() const {
  auto lk_ = impl_->lock();
  return impl_->next_seq - 1;
}

}  // namespace vl
