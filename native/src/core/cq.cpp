// Completion queues (rxe_cq.c): poll, overflow -> IBV_EVENT_CQ_ERR, one-shot arming (next / solicited),
// completion-channel events with ack accounting, kernel IB_CQ_REPORT_MISSED_EVENTS.
#include <cerrno>

#include "core/impl.h"

namespace vl {

void SessionImpl::async_event(Handle devh, Handle obj, const char* kind, uint32_t type, std::string text) {
  if (async_hook) async_hook(devh, obj, type);
  if (!capture) return;
  auto& e = emit(EventKind::AsyncEvent, devh, obj, kind, std::move(text));
  e.a = type;
}

bool SessionImpl::cq_post(Cq& c, const Wc& wc, bool solicited, Handle qp_for_err) {
  if (c.q.size() >= c.cqe) {
    c.error = true;
    async_event(c.dev, c.h, "cq", EVENT_CQ_ERR, "IBV_EVENT_CQ_ERR: CQ overrun (" + std::to_string(c.cqe) + " entries)");
    return false;
  }
  c.q.push_back(wc);
  c.produced++;
  if (threaded.load(std::memory_order_relaxed)) cqe_count.fetch_add(1, std::memory_order_release);
  if (capture) {
    auto& e = emit(EventKind::Cqe, c.dev, c.h, "cq", std::string(wc_status_name(wc.status)) + " wr_id " + std::to_string(wc.wr_id));
    e.wc = wc; e.a = wc.status; e.b = wc.opcode; e.c = wc.qp_num; e.d = c.q.size();
  }
  // ibv_req_notify_cq(3): a solicited-only arm fires on a receive completion of a message with the SE bit, or on
  // an unsuccessful completion; send completions are unsolicited (callers pass solicited = false for them). rxe's
  // rxe_cq_post looks at its `solicited` argument only (profile flag error_wc_not_solicited).
  const bool sol = solicited || (wc.status != WC_SUCCESS && !profile_of(c.dev).error_wc_not_solicited);
  if (c.notify == 2 || (c.notify == 1 && sol)) cq_fire(c, solicited, "completion event");
  return true;
}

// One-shot: the arm is consumed and, with a completion channel, the CQ is queued on the device's channel for
// ibv_get_cq_event (the comp_handler of rxe_cq_post / the HCA's completion EQE).
void SessionImpl::cq_fire(Cq& c, bool solicited, const char* why) {
  c.notify = 0;
  if (!c.channel) return;
  if (Device* d = dev(c.dev)) d->channel.push_back(c.h);
  if (capture) { auto& e = emit(EventKind::CompEvent, c.dev, c.h, "cq", why); e.a = solicited; }
}

std::optional<CqInfo> Session::cq_info(Handle cqh) const {
  auto lk_ = impl_->lock();
  auto it = impl_->cqs.find(cqh);
  if (it == impl_->cqs.end()) return std::nullopt;
  const Cq& c = it->second;
  return CqInfo{c.h, c.dev, c.cqe, c.channel};
}

Result<Handle> Session::create_cq(Handle devh, uint32_t cqe, bool with_channel) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Device* d = S.dev(devh);
  if (!d) return rfail<Handle>(ENOENT, "dev: no device with handle " + std::to_string(devh));
  if (cqe < 1 || cqe > d->profile.max_cqe) return rfail<Handle>(EINVAL, "cqe: must be 1.." + std::to_string(d->profile.max_cqe));
  if (d->profile.round_queue_depths) cqe = round_depth(cqe);   // rxe_cq_from_init -> rxe_queue_init
  if (d->n_cq >= d->profile.max_cq) return rfail<Handle>(ENOMEM, "max_cq reached");
  const uint64_t cost = sizeof(Cq) + uint64_t(cqe) * sizeof(Wc);   // its ring at depth
  if (auto m = S.over_budget(cost, "cq"); !m.empty()) return rfail<Handle>(ENOMEM, m);
  Cq c; c.h = S.new_handle(); c.dev = devh; c.cqe = cqe; c.channel = with_channel;
  S.cqs.emplace(c.h, c);
  S.charge(c.h, cost);
  d->n_cq++;
  if (S.capture) { auto& e = S.emit(EventKind::ObjectCreated, devh, c.h, "cq", "CQ of " + std::to_string(cqe) + " entries"); e.a = cqe; e.b = with_channel; }
  return rok(c.h);
}

Status Session::destroy_cq(Handle cqh) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Cq* c = S.cq(cqh);
  if (!c) return fail(ENOENT, "cq: no CQ with handle " + std::to_string(cqh));
  for (auto& [h, q] : S.qps)
    if (q.init.send_cq == cqh || q.init.recv_cq == cqh) return fail(EBUSY, "cq: still used by QP " + hex(q.qpn));
  if (c->events_unacked) return fail(EBUSY, "cq: " + std::to_string(c->events_unacked) + " completion event(s) not acknowledged");
  if (Device* d = S.dev(c->dev)) {
    d->n_cq--;
    std::erase(d->channel, cqh);
  }
  S.emit_obj(EventKind::ObjectDestroyed, c->dev, cqh, "cq");
  S.cqs.erase(cqh);
  S.uncharge(cqh);
  return ok();
}

Status Session::req_notify_cq(Handle cqh, bool solicited_only) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Cq* c = S.cq(cqh);
  if (!c) return fail(ENOENT, "cq: no CQ with handle " + std::to_string(cqh));
  c->notify |= solicited_only ? 1 : 2;
  if (c->notify & 2) c->notify = 2;
  if (S.capture) { auto& e = S.emit(EventKind::CqArmed, c->dev, cqh, "cq", solicited_only ? "armed (solicited)" : "armed (next completion)"); e.a = solicited_only; }
  // A device that never reports missed events (Profile::notify_reports_missed false, mlx4/mlx5-like) raises the
  // event at once when armed for the next completion over entries not yet polled: nothing can slip between the
  // consumer's last empty poll and its arm. rxe's arm only watches for the next CQE (rxe_req_notify_cq).
  // A solicited-only arm over queued entries does not fire here (the queue does not keep the solicited bit).
  if (!S.profile_of(c->dev).notify_reports_missed && c->notify == 2 && !c->q.empty()) S.cq_fire(*c, false, "completion event (armed over unpolled entries)");
  return ok();
}

Result<int> Session::req_notify_cq_report_missed(Handle cqh, bool solicited_only) {
  auto lk_ = impl_->lock();
  auto st = req_notify_cq(cqh, solicited_only);
  if (!st.ok()) return rfail<int>(st.err, st.msg);
  const Cq* c = impl_->cq(cqh);
  if (!impl_->profile_of(c->dev).notify_reports_missed) return rok(0);   // mlx4_ib_arm_cq: never > 0 (the arm fired instead)
  return rok(c->q.empty() ? 0 : 1);   // rxe_req_notify_cq: > 0 iff the CQ is not empty
}

std::vector<Wc> Session::poll_cq(Handle cqh, uint32_t max) {
  std::vector<Wc> out;
  auto lk_ = impl_->lock();                        // held across both calls: the engine thread adds nothing between
  if (impl_->inline_run && impl_->cq(cqh)) impl_->run_to_idle();   // as the poll below would, before sizing out
  const Cq* c = impl_->cq(cqh);
  out.resize(std::min<uint64_t>(max, c ? c->q.size() : 0));
  out.resize(poll_cq(cqh, static_cast<uint32_t>(out.size()), out.data()));
  return out;
}

uint32_t Session::poll_cq(Handle cqh, uint32_t max, Wc* out) {
  auto& S = *impl_;
  // Threads mode: a CQ found empty stays empty until some CQE is posted (cqe_count moves), so a busy-polling caller
  // does not take the session lock away from the engine thread on every empty poll.
  struct EmptySeen { uint64_t serial = 0; Handle cq = 0; uint64_t count = 0; };
  static thread_local EmptySeen seen;
  const bool threaded = S.threaded.load(std::memory_order_relaxed);
  if (threaded && seen.serial == S.serial && seen.cq == cqh && S.cqe_count.load(std::memory_order_acquire) == seen.count)
    return 0;
  auto lk_ = S.lock();
  const uint64_t count = S.cqe_count.load(std::memory_order_relaxed);
  Cq* c = S.cq(cqh);
  if (!c || c->q.empty()) {
    if (threaded) seen = {S.serial, cqh, count};
    if (!c) return 0;
  }
  if (S.inline_run) S.run_to_idle();
  uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(max, c->q.size()));
  for (uint32_t i = 0; i < n; i++) { out[i] = c->q.front(); c->q.pop_front(); }
  return n;
}

Result<Handle> Session::get_cq_event(Handle devh) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Device* d = S.dev(devh);
  if (!d) return rfail<Handle>(ENOENT, "dev: no device with handle " + std::to_string(devh));
  if (d->channel.empty()) return rfail<Handle>(ENOENT, "no completion event pending");
  Handle h = d->channel.front();
  d->channel.pop_front();
  if (Cq* c = S.cq(h)) c->events_unacked++;
  return rok(h);
}

Status Session::ack_cq_events(Handle cqh, uint32_t n) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Cq* c = S.cq(cqh);
  if (!c) return fail(ENOENT, "cq: no CQ with handle " + std::to_string(cqh));
  if (n > c->events_unacked) return fail(EINVAL, "n: only " + std::to_string(c->events_unacked) + " event(s) to acknowledge");
  c->events_unacked -= n;
  return ok();
}

}  // namespace vl
