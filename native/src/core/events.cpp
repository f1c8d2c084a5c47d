// The observable event stream and small formatting helpers.
#include <cerrno>
#include <cstdio>

#include "core/impl.h"

namespace vl {

static constexpr size_t kMaxQueuedEvents = 1u << 20;

std::string hex(uint64_t v, int width) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%0*llx", width, static_cast<unsigned long long>(v));
  return b;
}
std::string key_text(uint32_t key) { return hex(key, 8); }

const char* qp_state_name(uint32_t s) {   // the short form people read: "RTS" for IBV_QPS_RTS
  const char* n = name_of(kQpStateNames, s);
  return n ? n + sizeof("IBV_QPS_") - 1 : "UNKNOWN";
}
const char* wc_status_name(uint32_t s) {
  const char* n = name_of(kWcStatusNames, s);
  return n ? n : "IBV_WC_UNKNOWN";
}

Event& SessionImpl::emit(EventKind k, Handle dev, Handle obj, const char* obj_kind, std::string text) {
  Event e;
  e.seq = next_seq++;
  e.time_ns = now;
  e.kind = k; e.device = dev; e.obj = obj; e.obj_kind = obj_kind ? obj_kind : ""; e.text = std::move(text);
  events.push_back(std::move(e));
  if (events.size() > kMaxQueuedEvents) events.pop_front();   // bounded: undrained oldest events are dropped (seq shows the gap)
  return events.back();
}

std::vector<Event> Session::drain_events(size_t max, uint64_t* sampled_out) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  if (sampled_out) { *sampled_out = S.sampled_out; S.sampled_out = 0; }
  std::vector<Event> out;
  size_t n = std::min(max, S.events.size());
  out.reserve(n);
  for (size_t i = 0; i < n; i++) { out.push_back(std::move(S.events.front())); S.events.pop_front(); }
  return out;
}

bool is_state_event(EventKind k) {
  switch (k) {
    case EventKind::ObjectCreated: case EventKind::ObjectDestroyed: case EventKind::ObjectModified:
    case EventKind::QpState: case EventKind::AsyncEvent: case EventKind::CqArmed: case EventKind::CompEvent:
    case EventKind::CmState:
      return true;
    default:
      return false;
  }
}

size_t Session::sample_events(size_t keep, bool count) {
  auto lk_ = impl_->lock();
  const size_t removed = keep_state_and_newest(impl_->events, keep);
  if (count) impl_->sampled_out += removed;
  return removed;
}

uint64_t Session::take_sampled_out() {
  auto lk_ = impl_->lock();
  const uint64_t n = impl_->sampled_out;
  impl_->sampled_out = 0;
  return n;
}

void Session::set_event_capture(bool on) {
  auto lk_ = impl_->lock();
  impl_->capture = on;
}

}  // namespace vl
