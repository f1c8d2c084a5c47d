// The data path: post_send / post_recv / post_srq_recv, poll_cq, the load generator and the free-running runner.
#include <string>
#include <vector>

#include "binding.h"
#include "objects.h"

namespace vladdon {
namespace {

// PostResult as { err, msg, badWr } (badWr: index of the first WR not posted)
Napi::Object PostObj(Napi::Env env, const vl::PostResult& r) {
  auto o = StatusObj(env, r);
  o.Set("badWr", Napi::Number::New(env, static_cast<double>(r.bad_wr)));
  return o;
}
Napi::Value PostSend(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "qp");
  auto wrs = c.send_wrs(info[1], "wrs");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return PostObj(env, s->post_send(h, wrs));
}
Napi::Value PostRecv(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "qp");
  auto wrs = c.recv_wrs(info[1], "wrs");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return PostObj(env, s->post_recv(h, wrs));
}
Napi::Value PostSrqRecv(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "srq");
  auto wrs = c.recv_wrs(info[1], "wrs");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return PostObj(env, s->post_srq_recv(h, wrs));
}
Napi::Value PollCq(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "cq");
  auto max = c.u32(info[1], "max", 16, true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  auto wcs = s->poll_cq(h, max);
  auto a = Napi::Array::New(env, wcs.size());
  for (size_t i = 0; i < wcs.size(); ++i) {
    auto o = WcObj(env, wcs[i]);
    if (wcs[i].rule) o.Set("rule", wcs[i].rule);   // the profile rule that decided it (app/protocol/quirks.ts)
    a.Set(static_cast<uint32_t>(i), o);
  }
  return a;
}
// The load generator and the free-running runner (vl/traffic.h). ss.trafficstart(qp, cq, wrs) converts the WRs
// once; step_traffic(count) is engine.step with the generator; the ss.runner* calls drive the engine thread.
Napi::Value TrafficStart(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto qp = c.u32(info[0], "qp");
  auto cq = c.u32(info[1], "cq");
  auto wrs = c.send_wrs(info[2], "wrs");
  if (c.thrown()) return env.Undefined();
  if (!ss.S(env)) return env.Undefined();
  return StatusObj(env, ss.traffic.start(qp, cq, std::move(wrs)));
}
Napi::Value TrafficStop(const Napi::CallbackInfo& info, SessionState& ss) { ss.traffic.stop(); return info.Env().Undefined(); }
Napi::Value TrafficState(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env();
  const auto st = ss.traffic.state();
  auto o = Napi::Object::New(env);
  o.Set("on", Napi::Boolean::New(env, st.on));
  o.Set("qp", Napi::Number::New(env, st.qp));
  o.Set("cq", Napi::Number::New(env, st.cq));
  o.Set("wrs", Napi::Number::New(env, static_cast<double>(st.wrs)));
  o.Set("posted", U64(env, st.posted));
  o.Set("completed", U64(env, st.completed));
  if (!st.stopped.empty()) o.Set("stopped", Napi::String::New(env, st.stopped));
  return o;
}
Napi::Value StepTraffic(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto count = c.u64(info[0], "count");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  if (ss.runner->running()) { Napi::Error::New(env, "step_traffic: the runner thread is running (ss.runnerstop first)").ThrowAsJavaScriptException(); return env.Undefined(); }
  const auto r = vl::step_with_traffic(*s, &ss.traffic, count);
  auto o = Napi::Object::New(env);
  o.Set("steps", U64(env, r.steps));
  o.Set("idle", Napi::Boolean::New(env, r.idle));
  return o;
}
Napi::Value RunnerStart(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto rate = c.num(info[0], "steps_per_second");
  if (c.thrown()) return env.Undefined();
  if (!ss.S(env)) return env.Undefined();
  return StatusObj(env, ss.runner->start(rate));
}
Napi::Value RunnerStop(const Napi::CallbackInfo& info, SessionState& ss) { return U64(info.Env(), ss.runner->stop()); }
Napi::Value RunnerPause(const Napi::CallbackInfo& info, SessionState& ss) { return U64(info.Env(), ss.runner->pause()); }
Napi::Value RunnerResume(const Napi::CallbackInfo& info, SessionState& ss) { ss.runner->resume(); return info.Env().Undefined(); }
Napi::Value RunnerTake(const Napi::CallbackInfo& info, SessionState& ss) { return U64(info.Env(), ss.runner->take()); }
Napi::Value RunnerSetEventBudget(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto n = c.u32(info[0], "events");
  if (c.thrown()) return env.Undefined();
  ss.runner->set_event_budget(n);
  return env.Undefined();
}
Napi::Value RunnerRunning(const Napi::CallbackInfo& info, SessionState& ss) { return Napi::Boolean::New(info.Env(), ss.runner->running()); }

const SessionMethod kMethods[] = {
  {"post_send", PostSend},
  {"post_recv", PostRecv},
  {"post_srq_recv", PostSrqRecv},
  {"poll_cq", PollCq},
  {"traffic_start", TrafficStart},
  {"traffic_stop", TrafficStop},
  {"traffic_state", TrafficState},
  {"step_traffic", StepTraffic},
  {"runner_start", RunnerStart},
  {"runner_stop", RunnerStop},
  {"runner_pause", RunnerPause},
  {"runner_resume", RunnerResume},
  {"runner_take", RunnerTake},
  {"runner_set_event_budget", RunnerSetEventBudget},
  {"runner_running", RunnerRunning},
};

}  // namespace
}  // namespace vladdon

VLADDON_REGISTER(vladdon::kMethods, vladdon::kNoFunctions);
