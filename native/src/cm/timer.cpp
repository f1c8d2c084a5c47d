// The CM's timers on the engine's heap (Action::Cm): a message's response timeout (resend up to Max CM Retries,
// IBA 12.7.4 / cm.c timeout_ms) and TimeWait (IBA 12.9.8.2; cm.c cm_enter_timewait / cm_timewait_handler). They run
// in virtual time in a deterministic session and in real time on a device attached to UDP (its poll() runs due
// actions). One timer per ID; arming again or disarming bumps the generation, so a stale action does nothing.
#include <algorithm>

#include "cm/cm_impl.h"

namespace vl::cm {

void arm(SessionImpl& S, Id& id, Timer kind, uint64_t ms) {
  id.timer_gen++;
  id.timer = kind;
  Action a;
  a.kind = Action::Cm;
  a.t = S.now + ms * 1000000ull;
  a.qp = id.h;
  a.gen = id.timer_gen;
  S.push(std::move(a));
}

void disarm(Id& id) {
  id.timer_gen++;
  id.timer = Timer::None;
}

}  // namespace vl::cm

namespace vl {

void SessionImpl::cm_action(const Action& a) {
  if (!cm) return;
  auto& tw = cm->timewait;
  tw.erase(std::remove_if(tw.begin(), tw.end(), [&](const cm::TimeWaitEntry& t) { return t.until <= now; }), tw.end());
  auto it = cm->ids.find(a.qp);
  if (it == cm->ids.end() || it->second.timer_gen != a.gen) return;
  cm::Id& id = it->second;
  const cm::Timer k = id.timer;
  id.timer = cm::Timer::None;
  if (k == cm::Timer::Resend) return cm::on_timeout(*this, id);
  if (k == cm::Timer::TimeWait) {
    cm::set_state(*this, id, CM_IDLE, "TimeWait over");
    CmEvent e; e.id = id.h; e.event = CM_EVENT_TIMEWAIT_EXIT;
    cm::queue_event(*this, id.dev, std::move(e));
  }
}

}  // namespace vl
