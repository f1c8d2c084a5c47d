// The load generator and the free-running autorun, beside the device (no Node here; the addon binds them).
//
// Traffic keeps one QP's send queue full: it posts a fixed list of WRs in turn (a ring: each pump posts the next
// at most 64 from where the last post stopped) and polls that QP's send CQ, counting completions. It stops, with the
// reason, at the first error completion or refused post (ENOMEM, the send queue is full, only waits).
//
// step_with_traffic() is the deterministic engine step with the generator: up to `count` engine actions, the
// generator refilling every 256 steps (counted from the call's start) and whenever the engine runs dry. The same
// counts give the same events, which is what lets a journal entry "N steps" replay a free run exactly.
//
// Runner runs step_with_traffic on its own thread, 512 steps at a time, paced to a rate in steps per second: the
// free-running engine of the console. Session calls are thread-safe (the session mutex); a caller that needs a
// point between two batches (to journal the steps run so far, then issue its own call) pauses the runner.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "vl/session.h"

namespace vl {

struct TrafficState {
  bool on = false;
  Handle qp = 0, cq = 0;
  size_t wrs = 0;
  uint64_t posted = 0, completed = 0;
  std::string stopped;                             // why it stopped by itself (empty: it did not)
};

class Traffic {
 public:
  // Replaces any previous generator. EINVAL: empty WR list. The QP and CQ are checked by the first post / poll.
  Status start(Handle qp, Handle cq, std::vector<SendWr> wrs);
  void stop();
  // Polls the CQ, then posts the next WRs while on. Returns the number of WRs posted.
  size_t pump(Session& s);
  TrafficState state() const;
  bool on() const;

 private:
  mutable std::mutex mu_;
  TrafficState st_;
  std::vector<SendWr> wrs_;
  size_t cursor_ = 0;
};

struct StepResult { uint64_t steps = 0; bool idle = false; };
StepResult step_with_traffic(Session& s, Traffic* t, uint64_t count);

class Runner {
 public:
  Runner(Session& s, Traffic& t) : s_(s), t_(t) {}
  ~Runner() { stop(); }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Starts the thread (or changes the rate of a running one). EINVAL: rate not positive. EAGAIN: no thread.
  Status start(double steps_per_second);
  // Stops and joins the thread; returns the steps not yet taken.
  uint64_t stop();
  bool running() const { return th_.joinable(); }
  // Waits for the batch in progress, then keeps the runner between batches until resume(); returns the steps run
  // since the last take (pause + take in one, so nothing runs between them).
  uint64_t pause();
  void resume();
  // Steps run since the last take.
  uint64_t take();
  uint64_t total_steps() const;
  // After each batch keep at most `n` queued events besides the state ones (Session::sample_events, on this thread,
  // where they were allocated); 0: keep all (the default).
  void set_event_budget(size_t n);
  bool idle() const;                               // the last batch found nothing to do
  // When the batch that produced event `seq` started (Unix epoch ms; a conservative production time: the event came
  // later within the batch). 0 when no batch the runner remembers (its last 4096) produced it.
  double produced_at_ms(uint64_t seq) const;

 private:
  void main();
  std::unique_lock<std::mutex> enter() const;      // takes mu_ ahead of the thread's next batch
  uint64_t take_locked();                          // (mu_ held) the steps since the last take
  Session& s_;
  Traffic& t_;
  mutable std::mutex mu_;                          // held by the thread while it runs a batch
  mutable std::condition_variable cv_;
  mutable std::atomic<int> want_{0};               // callers waiting for mu_: the thread lets them in first
  std::thread th_;
  bool stop_ = false, idle_ = false;
  size_t budget_ = 0;
  unsigned paused_ = 0;
  double rate_ = 0;
  uint64_t rate_gen_ = 0;
  uint64_t total_ = 0, taken_ = 0;
  struct Mark { uint64_t last_seq; double start_ms; };
  std::deque<Mark> marks_;                         // per batch: the last event seq it reached, when it started
};

}  // namespace vl
