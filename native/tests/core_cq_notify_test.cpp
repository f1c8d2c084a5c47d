// Completion notification, both kernel semantics of ib_req_notify_cq (include/rdma/ib_verbs.h):
//  - "may report missed events" (rxe_req_notify_cq; Profile::notify_reports_missed, the rxe profile): the arm
//    watches for the next CQE only; IB_CQ_REPORT_MISSED_EVENTS returns > 0 while the CQ holds entries;
//  - "never reports" (mlx4_ib_arm_cq / mlx5_ib_arm_cq; the cx profile): the arm returns 0 and, armed over
//    unpolled entries, the device raises the event at once.
// Plus the lost-wakeup race (drain, completion, arm), overrun, and ibv_destroy_cq's ack-before-destroy rule.
#include "core_fixture.h"

using namespace vlt;

namespace {

size_t count_kind(const std::vector<Event>& ev, EventKind k, Handle obj) {
  size_t n = 0;
  for (auto& e : ev) n += e.kind == k && e.obj == obj;
  return n;
}

// What the CQ holds right now, read from the ring snapshot (no poll: polling would change it).
uint64_t cq_entries(Session& s, Handle cq) {
  for (auto& r : s.queue_snapshot(0))
    if (r.queue == RingQueue::Cq && r.owner == cq) return r.producer - r.consumer;
  ADD_FAILURE() << "no CQ ring " << cq;
  return 0;
}

// b's receive CQ has a completion channel; one SEND from a completes one receive into it.
struct NotifyPair {
  Pair p;
  Side x, y;
  Handle cq = 0;
  uint64_t next_wr = 1;
  explicit NotifyPair(const std::string& profile, uint32_t cqe = 16) : p(profile) {
    cq = p.s.create_cq(p.b.dev, cqe, true).value;
    p.fresh(x, y, p.a.scq, p.a.rcq, p.b.scq, cq);
  }
  // one receive completion lands in `cq` (the engine runs to idle)
  void complete_one() {
    ASSERT_TRUE(p.recv(y, 0, 64, next_wr).ok());
    SendWr w; w.wr_id = next_wr++; w.opcode = WR_SEND; w.sg_list = {{x.buf.addr, 8, x.mr.lkey}};
    ASSERT_TRUE(p.s.post_send(x.qp, {w}).ok());
    p.s.run();
  }
};

}  // namespace

TEST(CqNotify, ProfilesNameTheirSemantics) {
  // ib2a is the cx profile with type 2A windows (modelled): mlx5's notification semantics too
  for (auto& pr : builtin_profiles()) EXPECT_EQ(pr.notify_reports_missed, pr.name != "cx" && pr.name != "ib2a") << pr.name;
}

// The classic bug (libfabric, perftest): poll until empty, a completion slips in, then arm. On rxe the arm only
// watches for the *next* CQE: the entry sits in the CQ and no event ever comes.
TEST(CqNotify, LostWakeupOnReportsMissedDevice) {
  NotifyPair n("rxe");
  EXPECT_TRUE(n.p.poll(n.cq).empty());                      // drained
  n.complete_one();                                         // slipped in before the arm
  ASSERT_TRUE(n.p.s.req_notify_cq(n.cq, false).ok());
  n.p.s.run();
  EXPECT_EQ(n.p.s.get_cq_event(n.p.b.dev).err, ENOENT);     // the stall: no event ...
  EXPECT_EQ(cq_entries(n.p.s, n.cq), 1u);                   // ... while an entry waits
  // with IB_CQ_REPORT_MISSED_EVENTS the arm says so: > 0, re-poll
  auto rm = n.p.s.req_notify_cq_report_missed(n.cq, false);
  ASSERT_TRUE(rm.ok());
  EXPECT_GT(rm.value, 0);
  EXPECT_EQ(n.p.poll(n.cq).size(), 1u);
  EXPECT_EQ(n.p.s.req_notify_cq_report_missed(n.cq, false).value, 0);
  // still armed: the next completion fires exactly one event
  n.complete_one();
  auto ev = n.p.s.get_cq_event(n.p.b.dev);
  ASSERT_TRUE(ev.ok());
  EXPECT_EQ(ev.value, n.cq);
  EXPECT_EQ(n.p.s.get_cq_event(n.p.b.dev).err, ENOENT);
  EXPECT_TRUE(n.p.s.ack_cq_events(n.cq, 1).ok());
}

// mlx-like: the same sequence cannot stall. Arming over an unpolled entry raises the event at once, and
// IB_CQ_REPORT_MISSED_EVENTS never returns > 0.
TEST(CqNotify, ArmOverUnpolledEntriesFiresOnNeverReportsDevice) {
  NotifyPair n("cx");
  EXPECT_TRUE(n.p.poll(n.cq).empty());
  n.complete_one();
  EXPECT_EQ(n.p.s.get_cq_event(n.p.b.dev).err, ENOENT);     // not armed yet: nothing
  n.p.s.drain_events();
  auto rm = n.p.s.req_notify_cq_report_missed(n.cq, false);
  ASSERT_TRUE(rm.ok());
  EXPECT_EQ(rm.value, 0);                                   // never reports ...
  auto evs = n.p.s.drain_events();
  EXPECT_EQ(count_kind(evs, EventKind::CqArmed, n.cq), 1u);
  EXPECT_EQ(count_kind(evs, EventKind::CompEvent, n.cq), 1u);   // ... because the arm fired
  auto ev = n.p.s.get_cq_event(n.p.b.dev);
  ASSERT_TRUE(ev.ok());
  EXPECT_EQ(ev.value, n.cq);
  EXPECT_TRUE(n.p.s.ack_cq_events(n.cq, 1).ok());
  EXPECT_EQ(n.p.poll(n.cq).size(), 1u);
  // the arm was consumed (one shot): the next completion raises nothing until re-armed
  n.complete_one();
  EXPECT_EQ(n.p.s.get_cq_event(n.p.b.dev).err, ENOENT);
  EXPECT_EQ(cq_entries(n.p.s, n.cq), 1u);
  // plain ibv_req_notify_cq behaves the same way (the doorbell, not the flag, carries the rule)
  ASSERT_TRUE(n.p.s.req_notify_cq(n.cq, false).ok());
  EXPECT_TRUE(n.p.s.get_cq_event(n.p.b.dev).ok());
  EXPECT_TRUE(n.p.s.ack_cq_events(n.cq, 1).ok());
  EXPECT_EQ(n.p.poll(n.cq).size(), 1u);
  // armed over an empty CQ: no event until a completion comes, then exactly one
  EXPECT_EQ(n.p.s.req_notify_cq_report_missed(n.cq, false).value, 0);
  EXPECT_EQ(n.p.s.get_cq_event(n.p.b.dev).err, ENOENT);
  n.complete_one();
  EXPECT_TRUE(n.p.s.get_cq_event(n.p.b.dev).ok());
  EXPECT_EQ(n.p.s.get_cq_event(n.p.b.dev).err, ENOENT);
  EXPECT_TRUE(n.p.s.ack_cq_events(n.cq, 1).ok());
}

// A solicited-only arm over queued (unsolicited) entries does not fire on either device.
TEST(CqNotify, SolicitedArmOverEntriesDoesNotFire) {
  for (const char* prof : {"rxe", "cx"}) {
    NotifyPair n(prof);
    n.complete_one();
    ASSERT_TRUE(n.p.s.req_notify_cq(n.cq, true).ok());
    EXPECT_EQ(n.p.s.get_cq_event(n.p.b.dev).err, ENOENT) << prof;
    EXPECT_EQ(cq_entries(n.p.s, n.cq), 1u) << prof;
  }
}

// Overrun (rxe_cq_post: queue full -> IB_EVENT_CQ_ERR): the CQ keeps what fits, the completion that does not fit
// is lost, the QP that completed into it goes to ERR; same on both notify semantics. An armed CQ does not raise a
// completion event for the CQE it could not queue.
TEST(CqNotify, OverrunOnBothSemantics) {
  for (const char* prof : {"rxe", "cx"}) {
    NotifyPair n(prof, 3);                                    // 3: exact on rxe too (its queues hold 2^n - 1)
    n.complete_one();
    n.complete_one();
    n.complete_one();
    ASSERT_TRUE(n.p.s.req_notify_cq(n.cq, false).ok());
    const bool fired_on_arm = n.p.s.get_cq_event(n.p.b.dev).ok();   // cx: armed over 3 unpolled entries
    EXPECT_EQ(fired_on_arm, std::string(prof) == "cx") << prof;
    if (fired_on_arm) { ASSERT_TRUE(n.p.s.ack_cq_events(n.cq, 1).ok()); }
    n.p.s.drain_events();
    n.complete_one();                                         // the fourth does not fit
    auto evs = n.p.s.drain_events();
    size_t cq_err = 0;
    for (auto& e : evs) cq_err += e.kind == EventKind::AsyncEvent && e.a == EVENT_CQ_ERR && e.obj == n.cq;
    EXPECT_EQ(cq_err, 1u) << prof;
    EXPECT_EQ(n.p.state(n.y), QPS_ERR) << prof;
    EXPECT_EQ(count_kind(evs, EventKind::CompEvent, n.cq), 0u) << prof;   // the lost CQE fired nothing
    EXPECT_EQ(n.p.s.get_cq_event(n.p.b.dev).err, ENOENT) << prof;
    auto wc = n.p.poll(n.cq);
    ASSERT_EQ(wc.size(), 3u) << prof;
    EXPECT_EQ(wc[0].wr_id, 1u);
    EXPECT_EQ(wc[2].wr_id, 3u);
  }
}

// ibv_destroy_cq(3): destroying a CQ whose events were not all acknowledged (ibv_ack_cq_events) fails (the
// library would block); EBUSY here.
TEST(CqNotify, AckBeforeDestroy) {
  for (const char* prof : {"rxe", "cx"}) {
    NotifyPair n(prof);
    for (int i = 0; i < 2; i++) {
      ASSERT_TRUE(n.p.s.req_notify_cq(n.cq, false).ok());
      n.complete_one();
      ASSERT_TRUE(n.p.s.get_cq_event(n.p.b.dev).ok());
      EXPECT_EQ(n.p.poll(n.cq).size(), 1u);
    }
    ASSERT_TRUE(n.p.s.destroy_qp(n.y.qp).ok());
    EXPECT_EQ(n.p.s.destroy_cq(n.cq).err, EBUSY) << prof;    // two events got, none acked
    EXPECT_EQ(n.p.s.ack_cq_events(n.cq, 3).err, EINVAL);      // more than were got
    ASSERT_TRUE(n.p.s.ack_cq_events(n.cq, 1).ok());
    EXPECT_EQ(n.p.s.destroy_cq(n.cq).err, EBUSY) << prof;    // one still unacked
    ASSERT_TRUE(n.p.s.ack_cq_events(n.cq, 1).ok());
    ASSERT_TRUE(n.p.s.destroy_cq(n.cq).ok()) << prof;
    EXPECT_EQ(n.p.s.ack_cq_events(n.cq, 1).err, ENOENT);
  }
}

TEST(CqNotify, DestroyDropsEventsNotYetGot) {
  NotifyPair n("rxe");
  ASSERT_TRUE(n.p.s.req_notify_cq(n.cq, false).ok());
  n.complete_one();                                          // event on the channel, not got
  ASSERT_TRUE(n.p.s.destroy_qp(n.y.qp).ok());
  EXPECT_TRUE(n.p.s.destroy_cq(n.cq).ok());                  // nothing got, nothing to ack
  EXPECT_EQ(n.p.s.get_cq_event(n.p.b.dev).err, ENOENT);      // the event went with the CQ
}
