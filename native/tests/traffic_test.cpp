// The load generator (Traffic), the deterministic step with it, the free-running Runner thread, and the ring
// snapshot a sampling console redraws its queues from (vl/traffic.h, Session::queue_snapshot).
#include <chrono>
#include <thread>

#include "core_fixture.h"
#include "vl/traffic.h"

namespace vlt {
namespace {

// n 64-byte RDMA WRITEs from a to b, every 16th signaled
std::vector<SendWr> writes(Pair& p, size_t n, uint32_t rkey_xor = 0) {
  std::vector<SendWr> v(n);
  for (size_t i = 0; i < n; i++) {
    SendWr& w = v[i];
    w.wr_id = i; w.opcode = WR_RDMA_WRITE; w.send_flags = i % 16 == 15 ? uint32_t(SEND_SIGNALED) : 0u;
    w.sg_list = {{p.a.buf.addr + (i % 64) * 64, 64, p.a.mr.lkey}};
    w.remote_addr = p.b.buf.addr + (i % 64) * 64; w.rkey = p.b.mr.rkey ^ rkey_xor;
  }
  return v;
}

// a connected pair with the load generator set up on a's QP (n WRITEs), its setup events drained
struct Loaded {
  Pair p;
  Traffic t;
  explicit Loaded(size_t n = 40) {
    EXPECT_TRUE(t.start(p.a.qp, p.a.scq, writes(p, n)).ok());
    p.s.drain_events();
  }
};

struct Seen { uint64_t seq; EventKind kind; uint64_t a, b, c, d; };
std::vector<Seen> seen(Session& s) {
  std::vector<Seen> out;
  for (auto& e : s.drain_events()) out.push_back({e.seq, e.kind, e.a, e.b, e.c, e.d});
  return out;
}
bool same(const std::vector<Seen>& x, const std::vector<Seen>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); i++)
    if (x[i].seq != y[i].seq || x[i].kind != y[i].kind || x[i].a != y[i].a || x[i].b != y[i].b || x[i].c != y[i].c || x[i].d != y[i].d) return false;
  return true;
}

TEST(Traffic, RefusesAnEmptyList) {
  Traffic t;
  auto st = t.start(1, 2, {});
  EXPECT_EQ(st.err, EINVAL);
  EXPECT_NE(st.msg.find("wrs"), std::string::npos);
  EXPECT_FALSE(t.on());
}

TEST(Traffic, KeepsTheSendQueueFullAndCountsCompletions) {
  Pair p("rxe", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE, false, 128);
  Traffic t;
  ASSERT_TRUE(t.start(p.a.qp, p.a.scq, writes(p, 32)).ok());
  auto r = step_with_traffic(p.s, &t, 20000);
  EXPECT_EQ(r.steps, 20000u);
  EXPECT_FALSE(r.idle);
  auto st = t.state();
  EXPECT_TRUE(st.on) << st.stopped;
  EXPECT_GT(st.posted, 128u);                      // more than one queue's worth: it reposts as WRs complete
  EXPECT_GT(st.completed, 0u);
  EXPECT_LE(st.completed, st.posted / 16 + 1);     // one CQE per 16 WRs (every 16th is signaled)
  // the target got the source's bytes (the 32 WRs cover the first 2 KiB)
  pattern(p.s, p.a.buf.addr, 4096, 3);
  step_with_traffic(p.s, &t, 20000);
  EXPECT_EQ(read(p.s, p.a.buf.addr, 2048), read(p.s, p.b.buf.addr, 2048));
  EXPECT_NE(read(p.s, p.a.buf.addr + 2048, 2048), read(p.s, p.b.buf.addr + 2048, 2048));
}

TEST(Traffic, StopsAtTheFirstErrorCompletionWithTheReason) {
  Pair p("rxe", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE);
  Traffic t;
  auto wrs = writes(p, 16, 0xff);                  // wrong key byte: the responder NAKs, IBV_WC_REM_ACCESS_ERR
  for (auto& w : wrs) w.send_flags = SEND_SIGNALED;
  ASSERT_TRUE(t.start(p.a.qp, p.a.scq, wrs).ok());
  auto r = step_with_traffic(p.s, &t, 100000);
  EXPECT_TRUE(r.idle);
  auto st = t.state();
  EXPECT_FALSE(st.on);
  EXPECT_NE(st.stopped.find("IBV_WC_REM_ACCESS_ERR"), std::string::npos) << st.stopped;
}

TEST(Traffic, StopsWhenAPostIsRefused) {
  Pair p;
  Traffic t;
  auto wrs = writes(p, 4);
  wrs[2].opcode = 0x99;                            // not an ibv_wr_opcode
  ASSERT_TRUE(t.start(p.a.qp, p.a.scq, wrs).ok());
  t.pump(p.s);
  auto st = t.state();
  EXPECT_FALSE(st.on);
  EXPECT_EQ(st.posted, 2u);                        // the two WRs before the bad one went
  EXPECT_NE(st.stopped.find("post_send"), std::string::npos) << st.stopped;
}

TEST(Traffic, AFullSendQueueOnlyWaits) {
  Pair p("rxe", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE, false, 8);
  Traffic t;
  ASSERT_TRUE(t.start(p.a.qp, p.a.scq, writes(p, 64)).ok());
  EXPECT_EQ(t.pump(p.s), 15u);                     // max_send_wr 8, granted 15 by rxe (2^n - 1): ENOMEM after 15
  EXPECT_TRUE(t.on());
  EXPECT_EQ(t.pump(p.s), 0u);
  EXPECT_TRUE(t.on());
}

TEST(Traffic, StepsInOneCallOrInBatchesGiveTheSameEvents) {
  // the journal records a free run as one "N steps" entry: replaying it in one call must give the same events
  Loaded x, y;
  for (int i = 0; i < 10; i++) step_with_traffic(x.p.s, &x.t, 512);
  step_with_traffic(y.p.s, &y.t, 5120);
  auto ex = seen(x.p.s), ey = seen(y.p.s);
  EXPECT_GT(ex.size(), 5000u);
  EXPECT_TRUE(same(ex, ey));
}

TEST(Runner, RefusesARateThatIsNotPositive) {
  Pair p;
  Traffic t;
  Runner r(p.s, t);
  EXPECT_EQ(r.start(0).err, EINVAL);
  EXPECT_EQ(r.start(-5).err, EINVAL);
  EXPECT_FALSE(r.running());
}

TEST(Runner, FreeRunOnItsThreadEqualsTheSameStepsRunByHand) {
  Loaded x, y;
  Runner r(x.p.s, x.t);
  ASSERT_TRUE(r.start(2e6).ok());
  EXPECT_TRUE(r.running());
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (r.total_steps() < 20000 && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const uint64_t steps = r.stop();
  EXPECT_FALSE(r.running());
  ASSERT_GE(steps, 20000u);
  EXPECT_EQ(r.take(), 0u);                         // stop() handed them all over
  step_with_traffic(y.p.s, &y.t, steps);
  auto ex = seen(x.p.s), ey = seen(y.p.s);
  EXPECT_TRUE(same(ex, ey)) << ex.size() << " vs " << ey.size() << " events";
  EXPECT_EQ(x.t.state().posted, y.t.state().posted);
}

TEST(Runner, PauseHoldsItBetweenBatchesAndCountsTheStepsOnce) {
  Loaded l;
  Pair& p = l.p;
  Traffic& t = l.t;
  Runner r(p.s, t);
  ASSERT_TRUE(r.start(1e6).ok());
  while (r.total_steps() < 2048) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const uint64_t a = r.pause();
  const uint64_t held = r.total_steps();
  EXPECT_EQ(held % 512, 0u);                       // whole batches only
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(r.total_steps(), held);                // nothing ran while paused
  // a caller's own verb at this point lands between two batches
  EXPECT_TRUE(p.write(p.a, p.b, 0, 0, 8, 777).ok());
  r.resume();
  while (r.total_steps() < held + 2048) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const uint64_t b = r.stop();
  EXPECT_EQ(a + b, r.total_steps());
}

TEST(Runner, RemembersWhenEachBatchStarted) {
  Loaded l;
  Pair& p = l.p;
  Traffic& t = l.t;
  p.s.drain_events();
  const uint64_t before = p.s.last_seq();
  Runner r(p.s, t);
  EXPECT_EQ(r.produced_at_ms(before + 1), 0);     // no batch yet
  const double t0 = std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
  ASSERT_TRUE(r.start(1e6).ok());
  while (r.total_steps() < 4096) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  r.stop();
  const double t1 = std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double first = r.produced_at_ms(before + 1), last = r.produced_at_ms(p.s.last_seq());
  EXPECT_GE(first, t0);
  EXPECT_LE(first, last);
  EXPECT_LE(last, t1);
  EXPECT_EQ(r.produced_at_ms(p.s.last_seq() + 1), 0);   // not produced yet
}

TEST(Runner, AnIdleEngineWaitsAndStopsCleanly) {
  Pair p;
  Traffic t;                                       // no generator: nothing to do
  p.s.run();                                       // (what the setup left)
  Runner r(p.s, t);
  ASSERT_TRUE(r.start(1e6).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(r.idle());
  EXPECT_EQ(r.stop(), 0u);
  // a WR posted while it runs is carried out
  ASSERT_TRUE(r.start(1e6).ok());
  fill(p.s, p.a.buf.addr, 64, 0x5a);
  ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 64, 9).ok());
  std::vector<Wc> wc;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (wc.empty() && std::chrono::steady_clock::now() < end) { wc = p.poll(p.a.scq); std::this_thread::sleep_for(std::chrono::milliseconds(1)); }
  r.stop();
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(read(p.s, p.b.buf.addr, 64), std::vector<uint8_t>(64, 0x5a));
}

TEST(Runner, AnEventBudgetSamplesAtTheSourceKeepingStateEventsAndCountingTheRest) {
  Loaded l;
  Pair& p = l.p;
  Traffic& t = l.t;
  p.s.drain_events();
  const uint64_t first = p.s.last_seq() + 1;
  Runner r(p.s, t);
  r.set_event_budget(100);
  ASSERT_TRUE(r.start(1e6).ok());
  while (r.total_steps() < 20000) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // a state event in the middle of the flood (a QP created between two batches) survives the sampling
  r.pause();
  QpInitAttr ia; ia.pd = p.a.pd; ia.send_cq = p.a.scq; ia.recv_cq = p.a.rcq;
  auto q = p.s.create_qp(p.a.pd, ia);
  ASSERT_TRUE(q.ok());
  r.resume();
  while (r.total_steps() < 40000) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  r.stop();
  uint64_t out = 0;
  auto evs = p.s.drain_events(SIZE_MAX, &out);
  EXPECT_GT(out, 10000u);
  EXPECT_EQ(p.s.take_sampled_out(), 0u);           // taken by the drain
  EXPECT_EQ(evs.size() + out, p.s.last_seq() - first + 1);   // every event is either here or counted
  size_t other = 0, created = 0;
  for (auto& e : evs) {
    if (e.kind == EventKind::ObjectCreated && e.obj == q.value.handle) created++;
    if (!is_state_event(e.kind)) other++;
  }
  EXPECT_EQ(created, 1u);
  EXPECT_LE(other, 100u);
  EXPECT_EQ(evs.back().seq, p.s.last_seq());       // the newest are the ones kept
}

TEST(Events, SampleEventsKeepsTheNewestAndTheStateEvents) {
  Pair p;
  p.s.drain_events();
  for (uint64_t i = 0; i < 5; i++) ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 8, i).ok());
  QpInitAttr ia; ia.pd = p.a.pd; ia.send_cq = p.a.scq; ia.recv_cq = p.a.rcq;
  ASSERT_TRUE(p.s.create_qp(p.a.pd, ia).ok());
  p.s.run();
  const uint64_t last = p.s.last_seq();
  EXPECT_EQ(p.s.sample_events(1000), 0u);          // fewer than that: nothing removed
  const size_t removed = p.s.sample_events(3);
  EXPECT_GT(removed, 5u);
  EXPECT_EQ(p.s.take_sampled_out(), removed);
  EXPECT_EQ(p.s.take_sampled_out(), 0u);
  auto evs = p.s.drain_events();
  ASSERT_EQ(evs.size(), 4u);                       // ObjectCreated (qp) + the newest 3
  EXPECT_EQ(evs[0].kind, EventKind::ObjectCreated);
  EXPECT_EQ(evs[3].seq, last);
  EXPECT_EQ(evs[1].seq + 2, last);
}

// ---------------------------------------------------------------- queue snapshot

const RingSnapshot* ring(const std::vector<RingSnapshot>& v, Handle owner, RingQueue q) {
  for (auto& r : v) if (r.owner == owner && r.queue == q) return &r;
  return nullptr;
}

// a ring's indices and how many slots it holds
void expect_ring(const RingSnapshot* r, uint32_t depth, uint64_t producer, uint64_t consumer, uint64_t first, size_t slots) {
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->depth, depth);
  EXPECT_EQ(r->producer, producer);
  EXPECT_EQ(r->consumer, consumer);
  EXPECT_EQ(r->first, first);
  EXPECT_EQ(r->slots.size(), slots);
}

TEST(QueueSnapshot, ShowsPostedStartedAndRetiredWqesWithTheirIndices) {
  Pair p;
  for (uint64_t i = 0; i < 3; i++) ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 3000, 10 + i).ok());   // 3 packets each
  auto v = p.s.queue_snapshot();
  auto* sq = ring(v, p.a.qp, RingQueue::Sq);
  expect_ring(sq, 127, 3, 0, 0, 3);                // depths as rxe grants them: 64 -> 127, 1024 -> 2047
  ASSERT_EQ(sq->slots.size(), 3u);
  EXPECT_EQ(sq->slots[0].wr_id, 10u);
  EXPECT_EQ(sq->slots[0].opcode, uint32_t(WR_RDMA_WRITE));
  EXPECT_EQ(sq->slots[0].state, SlotState::Posted);
  p.s.step();                                      // the requester sends the first packet of the first WQE
  v = p.s.queue_snapshot();
  EXPECT_EQ(ring(v, p.a.qp, RingQueue::Sq)->slots[0].state, SlotState::Started);
  p.s.run();
  v = p.s.queue_snapshot();
  expect_ring(ring(v, p.a.qp, RingQueue::Sq), 127, 3, 3, 3, 0);   // all retired
  auto* cq = ring(v, p.a.scq, RingQueue::Cq);
  expect_ring(cq, 2047, 3, 0, 0, 3);
  ASSERT_EQ(cq->slots.size(), 3u);
  EXPECT_EQ(cq->slots[2].wr_id, 12u);
  EXPECT_EQ(cq->slots[2].status, uint32_t(WC_SUCCESS));
  EXPECT_EQ(cq->slots[2].opcode, uint32_t(WC_RDMA_WRITE));
  EXPECT_EQ(cq->slots[2].qp_num, p.a.qpn);
  EXPECT_EQ(p.poll(p.a.scq, 2).size(), 2u);
  v = p.s.queue_snapshot();
  cq = ring(v, p.a.scq, RingQueue::Cq);
  expect_ring(cq, 2047, 3, 2, 2, 1);
  ASSERT_EQ(cq->slots.size(), 1u);
  EXPECT_EQ(cq->slots[0].wr_id, 12u);
}

TEST(QueueSnapshot, ReceiveQueuesSrqsAndTheNewestSlotsOnly) {
  Pair p("rxe", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE, false, 64);
  for (uint64_t i = 0; i < 10; i++) ASSERT_TRUE(p.recv(p.b, i * 64, 64, 100 + i).ok());
  auto v = p.s.queue_snapshot(4);
  auto* rq = ring(v, p.b.qp, RingQueue::Rq);
  expect_ring(rq, 127, 10, 0, 6, 4);                // the newest 4 of 10
  ASSERT_EQ(rq->slots.size(), 4u);
  EXPECT_EQ(rq->slots[0].wr_id, 106u);
  EXPECT_EQ(rq->slots[3].wr_id, 109u);

  Pair q("rxe", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE, true);
  for (uint64_t i = 0; i < 5; i++) ASSERT_TRUE(q.recv(q.b, 0, 64, 200 + i).ok());
  v = q.s.queue_snapshot();
  EXPECT_EQ(ring(v, q.b.qp, RingQueue::Rq), nullptr);   // receives go through the SRQ
  auto* srq = ring(v, q.b.srq, RingQueue::Srq);
  expect_ring(srq, 256, 5, 0, 0, 5);
  ASSERT_EQ(srq->slots.size(), 5u);
  EXPECT_EQ(srq->slots[4].wr_id, 204u);
}

TEST(QueueSnapshot, LastSeqFollowsTheEventStream) {
  Pair p;
  const uint64_t before = p.s.last_seq();
  EXPECT_GT(before, 0u);
  ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 8).ok());
  p.s.run();
  auto evs = p.s.drain_events();
  ASSERT_FALSE(evs.empty());
  EXPECT_EQ(p.s.last_seq(), evs.back().seq);
}

}  // namespace
}  // namespace vlt
