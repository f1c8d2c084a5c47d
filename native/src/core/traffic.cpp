// The load generator, the deterministic step with it, and the free-running runner thread (vl/traffic.h).
#include "vl/traffic.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <system_error>

#include "core/impl.h"

namespace vl {

namespace {
constexpr uint32_t kPollMax = 4096;
constexpr size_t kPostMax = 64;
constexpr uint64_t kRefillPeriod = 256;
constexpr uint64_t kBatch = 512;                   // a multiple of kRefillPeriod: batches sum to one replayable count
double epoch_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
}
}  // namespace

Status Traffic::start(Handle qp, Handle cq, std::vector<SendWr> wrs) {
  if (wrs.empty()) return Status{EINVAL, "wrs: the load generator needs at least one WR"};
  std::lock_guard<std::mutex> g(mu_);
  st_ = TrafficState{true, qp, cq, wrs.size(), 0, 0, {}};
  wrs_ = std::move(wrs);
  cursor_ = 0;
  return {};
}

void Traffic::stop() { std::lock_guard<std::mutex> g(mu_); st_.on = false; }
TrafficState Traffic::state() const { std::lock_guard<std::mutex> g(mu_); return st_; }
bool Traffic::on() const { std::lock_guard<std::mutex> g(mu_); return st_.on; }

size_t Traffic::pump(Session& s) {
  std::lock_guard<std::mutex> g(mu_);
  if (!st_.qp) return 0;
  for (;;) {
    auto wcs = s.poll_cq(st_.cq, kPollMax);
    for (const Wc& w : wcs) {
      st_.completed++;
      if (w.status != WC_SUCCESS && st_.on) {
        st_.on = false;
        st_.stopped = std::string("a completion with ") + wc_status_name(w.status) + " (wr_id " + std::to_string(w.wr_id) + ")";
      }
    }
    if (wcs.size() < kPollMax) break;
  }
  if (!st_.on) return 0;
  const size_t n = std::min(kPostMax, wrs_.size() - cursor_);
  const std::vector<SendWr> slice(wrs_.begin() + cursor_, wrs_.begin() + cursor_ + n);
  auto r = s.post_send(st_.qp, slice);
  const size_t posted = r.err ? r.bad_wr : n;
  cursor_ = (cursor_ + posted) % wrs_.size();
  st_.posted += posted;
  if (r.err && r.err != ENOMEM) { st_.on = false; st_.stopped = "post_send: " + r.msg; }
  return posted;
}

StepResult step_with_traffic(Session& s, Traffic* t, uint64_t count) {
  StepResult r;
  while (r.steps < count) {
    const bool gen = t && t->on();
    if (gen && r.steps % kRefillPeriod == 0) t->pump(s);
    const uint64_t want = gen ? std::min(count - r.steps, kRefillPeriod - r.steps % kRefillPeriod) : count - r.steps;
    const uint64_t n = s.run(want);
    r.steps += n;
    if (n < want) {
      if (gen && t->on() && t->pump(s) > 0) continue;
      r.idle = true;
      break;
    }
  }
  return r;
}

// ---------------------------------------------------------------- runner

Status Runner::start(double steps_per_second) {
  if (!(steps_per_second > 0)) return Status{EINVAL, "steps_per_second: must be > 0"};
  {
    std::lock_guard<std::mutex> g(mu_);
    rate_ = steps_per_second;
    rate_gen_++;
  }
  if (th_.joinable()) return {};
  stop_ = false;
  try {
    th_ = std::thread([this] { main(); });
  } catch (const std::system_error& e) {
    return Status{EAGAIN, std::string("runner thread: ") + e.what()};
  }
  return {};
}

uint64_t Runner::stop() {
  if (!th_.joinable()) return take();
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  th_.join();
  return take();
}

std::unique_lock<std::mutex> Runner::enter() const {
  want_.fetch_add(1);
  std::unique_lock<std::mutex> g(mu_);
  want_.fetch_sub(1);
  cv_.notify_all();                                // the thread may wait for want_ to fall
  return g;
}

uint64_t Runner::take_locked() {
  const uint64_t n = total_ - taken_;
  taken_ = total_;
  return n;
}

uint64_t Runner::pause() {
  auto g = enter();
  paused_++;
  return take_locked();
}

void Runner::resume() {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (paused_) paused_--;
  }
  cv_.notify_all();
}

uint64_t Runner::take() {
  auto g = enter();
  return take_locked();
}

void Runner::set_event_budget(size_t n) { auto g = enter(); budget_ = n; }

uint64_t Runner::total_steps() const { auto g = enter(); return total_; }
bool Runner::idle() const { auto g = enter(); return idle_; }

double Runner::produced_at_ms(uint64_t seq) const {
  auto g = enter();
  auto it = std::lower_bound(marks_.begin(), marks_.end(), seq, [](const Mark& m, uint64_t q) { return m.last_seq < q; });
  return it == marks_.end() ? 0 : it->start_ms;
}

void Runner::main() {
  using clk = std::chrono::steady_clock;
  std::unique_lock<std::mutex> lk(mu_);
  auto t0 = clk::now();
  uint64_t since = 0, gen = rate_gen_;
  while (!stop_) {
    if (want_.load()) { cv_.wait(lk, [&] { return stop_ || !want_.load(); }); continue; }
    if (paused_) { cv_.wait(lk, [&] { return stop_ || !paused_; }); t0 = clk::now(); since = 0; continue; }
    if (gen != rate_gen_) { gen = rate_gen_; t0 = clk::now(); since = 0; }
    const double start = epoch_ms();
    const StepResult r = step_with_traffic(s_, &t_, kBatch);   // under mu_: pause() waits for it
    if (r.steps) {
      marks_.push_back({s_.last_seq(), start});
      if (marks_.size() > 4096) marks_.pop_front();
    }
    if (budget_) s_.sample_events(budget_);
    total_ += r.steps;
    since += r.steps;
    idle_ = r.idle;
    if (r.idle) {                                  // nothing to do: look again in a millisecond
      cv_.wait_for(lk, std::chrono::milliseconds(1), [&] { return stop_; });
      t0 = clk::now(); since = 0;
      continue;
    }
    // pace: `since` steps are due at t0 + since / rate; a runner that fell behind does not catch up in a burst
    const double due = double(since) / rate_;
    const double el = std::chrono::duration<double>(clk::now() - t0).count();
    if (due > el) cv_.wait_for(lk, std::chrono::duration<double>(due - el), [&] { return stop_ || paused_ || gen != rate_gen_; });
    else if (el - due > 0.05) { t0 = clk::now(); since = 0; }
  }
}

}  // namespace vl
