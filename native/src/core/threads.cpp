// Free running on an engine thread: the application thread only posts (doorbell) and polls; the device works
// asynchronously, as a NIC does. The session mutex guards every object: Session calls take it, and the engine
// thread holds it while it runs a batch of actions, then drops it so posts and polls interleave. Time is real
// (steady clock) in this mode: deliveries are due at once, ACK / RNR timers and delay / reorder faults wait in real
// time. The engine spins briefly on the doorbell before it sleeps on the condition variable.
#include <cerrno>
#include <chrono>

#include "core/impl.h"


namespace vl {

namespace {
constexpr int kBatch = 256;                      // actions per lock hold
constexpr int64_t kSpinNs = 200000;              // spin on the doorbell this long before sleeping
constexpr int64_t kYieldAfterNs = 20000;         // ... yielding the CPU between checks after this long

int64_t mono_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

std::unique_lock<std::recursive_mutex> SessionImpl::lock() const {
  std::unique_lock<std::recursive_mutex> lk(mu, std::defer_lock);
  for (int i = 0; i < 20000; i++) {
    if (!engine_wants.load(std::memory_order_relaxed) && lk.try_lock()) return lk;
    cpu_relax();
  }
  lock_waiters.fetch_add(1, std::memory_order_relaxed);
  lk.lock();
  lock_waiters.fetch_sub(1, std::memory_order_relaxed);
  return lk;
}

void SessionImpl::sync_real_clock() {
  int64_t t = mono_ns() - clock_base;
  if (t > int64_t(now)) now = uint64_t(t);
}

// An action is due when its time is within one wire latency of real time: in-order deliveries (t = send time +
// latency) are due at once; timers and faulted (delayed / reordered) packets wait for the clock.
bool SessionImpl::due() const {
  if (idle()) return false;
  return int64_t(next_time()) <= mono_ns() - clock_base + int64_t(wire_latency_ns);
}

void SessionImpl::engine_main() {
  std::unique_lock<std::recursive_mutex> lk(mu);
  auto relock = [&] {
    engine_wants.store(true, std::memory_order_relaxed);
    bool got = false;
    for (int i = 0; i < 20000 && !(got = lk.try_lock()); i++) cpu_relax();
    if (!got) lk.lock();
    engine_wants.store(false, std::memory_order_relaxed);
  };
  while (!stop_req) {
    sync_real_clock();
    int n = 0;
    while (n < kBatch && !stop_req && due()) {
      sync_real_clock();                         // timers armed by this action count from the real time
      step();
      n++;
    }
    if (n) {                                     // let posters and pollers in between batches
      lk.unlock();
      for (int i = 0; i < 64; i++) cpu_relax();  // a caller spinning on try_lock gets its turn
      for (int i = 0; i < 2000 && lock_waiters.load(std::memory_order_relaxed); i++) cpu_relax();
      relock();
      continue;
    }
    // nothing due: spin on the doorbell (without the lock), then sleep until a push or the next timer
    const uint64_t bell = doorbell.load(std::memory_order_acquire);
    const bool have_timer = !idle();
    const int64_t next = have_timer ? int64_t(next_time()) - int64_t(wire_latency_ns) + clock_base : 0;
    lk.unlock();
    const int64_t spin_until = mono_ns() + kSpinNs;
    bool rang = false;
    for (;;) {
      if (doorbell.load(std::memory_order_acquire) != bell) { rang = true; break; }
      int64_t t = mono_ns();
      if (t >= spin_until || (have_timer && t >= next)) break;
      for (int i = 0; i < 32; i++) cpu_relax();
      if (t >= spin_until - kSpinNs + kYieldAfterNs) std::this_thread::yield();   // cores are shared: let a runnable thread in
    }
    relock();
    if (rang || stop_req || doorbell.load(std::memory_order_acquire) != bell || due()) continue;
    engine_sleeping = true;
    auto woken = [&] { return stop_req || doorbell.load(std::memory_order_acquire) != bell; };
    if (idle()) cv.wait(lk, woken);
    else {
      const int64_t wake = int64_t(next_time()) - int64_t(wire_latency_ns) + clock_base;
      cv.wait_until(lk, std::chrono::steady_clock::time_point(std::chrono::nanoseconds(wake)), woken);
    }
    engine_sleeping = false;
  }
}

Status SessionImpl::start_engine() {
  if (engine.joinable()) return ok();
  stop_req = false;
  clock_base = mono_ns() - int64_t(now);         // real time continues from the current (virtual) time
  try {
    engine = std::thread([this] { engine_main(); });
  } catch (const std::system_error& e) {
    return fail(EAGAIN, std::string("engine thread: ") + e.what());
  }
  return ok();
}

// Called without mu held: the engine thread needs it to see stop_req and leave.
void SessionImpl::stop_engine() {
  if (!engine.joinable()) return;
  {
    auto lk = lock();
    stop_req = true;
    cv.notify_all();
  }
  engine.join();
  stop_req = false;
}

Status Session::set_free_run_mode(FreeRunMode m) {
  auto& S = *impl_;
  if (m != FreeRunMode::Off && m != FreeRunMode::Inline && m != FreeRunMode::Threads)
    return fail(EINVAL, "mode: unknown free-run mode " + std::to_string(static_cast<uint32_t>(m)));
  {
    auto lk = S.lock();
    if (m != FreeRunMode::Off)
      for (auto& [h, d] : S.devs)
        if (d.port) return fail(EBUSY, "mode: device " + d.name + " is attached to a UDP transport, which drives the engine itself");
    if (m == S.mode) return ok();
  }
  if (S.mode == FreeRunMode::Threads) S.stop_engine();
  auto lk = S.lock();
  S.mode = m;
  S.threaded.store(m == FreeRunMode::Threads, std::memory_order_relaxed);
  S.cqe_count.fetch_add(1, std::memory_order_release);   // CQEs posted while not threaded did not count: forget
                                                          // every poll_cq "found empty" note
  S.free_running = m != FreeRunMode::Off;
  S.inline_run = m == FreeRunMode::Inline;
  if (m == FreeRunMode::Threads) {
    Status st = S.start_engine();
    if (!st.ok()) { S.mode = FreeRunMode::Off; S.threaded = false; S.free_running = S.inline_run = false; return st; }
  }
  if (m == FreeRunMode::Inline) S.run_to_idle();
  return ok();
}

FreeRunMode Session::free_run_mode() const {
  auto lk = impl_->lock();
  return impl_->mode;
}

Status Session::set_engine_threads(unsigned n) {
  if (n > 1) return fail(EINVAL, "n: " + std::to_string(n) + " engine threads requested; one is implemented (0 = deterministic)");
  return set_free_run_mode(n ? FreeRunMode::Threads : FreeRunMode::Off);
}

}  // namespace vl
