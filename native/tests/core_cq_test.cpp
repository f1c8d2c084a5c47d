#include "core_fixture.h"

using namespace vlt;

static size_t count(std::vector<Event> ev, EventKind k, uint64_t a) {
  size_t n = 0;
  for (auto& e : ev) n += e.kind == k && e.a == a;
  return n;
}

TEST(CoreCq, CreateValidation) {
  Session s;
  auto d = s.create_device("minimal").value;
  EXPECT_EQ(s.create_cq(d, 0).err, EINVAL);
  EXPECT_EQ(s.create_cq(d, 1025).err, EINVAL);
  EXPECT_EQ(s.create_cq(999, 4).err, ENOENT);
  auto c = s.create_cq(d, 4);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(s.poll_cq(c.value, 10).empty());
  EXPECT_EQ(s.ack_cq_events(c.value, 1).err, EINVAL);
  EXPECT_EQ(s.get_cq_event(d).err, ENOENT);
  EXPECT_TRUE(s.destroy_cq(c.value).ok());
  EXPECT_EQ(s.destroy_cq(c.value).err, ENOENT);
}

TEST(CoreCq, OverflowRaisesCqErrAndQpError) {
  Pair p("cx");                                    // rxe keeps the QP in RTS: RxeCqQuirks.SendCqOverrunKeepsRtsOnRxeOnly
  // a dedicated 2-entry send CQ
  Handle small = p.s.create_cq(p.a.dev, 2).value;
  Side x, y;
  p.fresh(x, y, small, p.a.rcq, p.b.scq, p.b.rcq);
  p.s.drain_events();
  for (int i = 0; i < 3; i++) ASSERT_TRUE(p.write(x, y, 0, 0, 8, i).ok());
  p.s.run();
  auto ev = p.s.drain_events();
  EXPECT_EQ(count(ev, EventKind::AsyncEvent, EVENT_CQ_ERR), 1u);
  EXPECT_EQ(p.state(x), QPS_ERR);
  EXPECT_EQ(p.poll(small).size(), 2u);
  EXPECT_EQ(p.s.destroy_cq(small).err, EBUSY);      // still used by the QP
}

TEST(CoreCq, ArmNextSolicitedAndChannel) {
  Session s;
  Pair p;
  Handle cq = p.s.create_cq(p.b.dev, 16, true).value;
  Side x, y;
  p.fresh(x, y, p.a.scq, p.a.rcq, cq, cq);
  // not armed: no event
  ASSERT_TRUE(p.recv(y, 0, 64, 1).ok());
  SendWr w; w.wr_id = 1; w.opcode = WR_SEND; w.sg_list = {{x.buf.addr, 8, x.mr.lkey}};
  ASSERT_TRUE(p.s.post_send(x.qp, {w}).ok());
  p.s.run();
  EXPECT_EQ(p.s.get_cq_event(p.b.dev).err, ENOENT);
  // report-missed variant: > 0 because the CQ holds an entry
  auto rm = p.s.req_notify_cq_report_missed(cq, false);
  ASSERT_TRUE(rm.ok());
  EXPECT_EQ(rm.value, 1);
  EXPECT_EQ(p.s.get_cq_event(p.b.dev).err, ENOENT);   // arming over a non-empty CQ does not fire (rxe)
  EXPECT_EQ(p.poll(cq).size(), 1u);
  // armed (next): the next completion fires exactly one event
  ASSERT_TRUE(p.recv(y, 0, 64, 2).ok());
  ASSERT_TRUE(p.recv(y, 64, 64, 3).ok());
  ASSERT_TRUE(p.s.post_send(x.qp, {w, w}).ok());
  p.s.run();
  auto ev = p.s.get_cq_event(p.b.dev);
  ASSERT_TRUE(ev.ok());
  EXPECT_EQ(ev.value, cq);
  EXPECT_EQ(p.s.get_cq_event(p.b.dev).err, ENOENT);   // one-shot
  EXPECT_EQ(p.poll(cq).size(), 2u);
  EXPECT_EQ(p.s.destroy_qp(y.qp).ok(), true);
  EXPECT_EQ(p.s.destroy_cq(cq).err, EBUSY);           // event not acked
  EXPECT_EQ(p.s.ack_cq_events(cq, 2).err, EINVAL);
  EXPECT_TRUE(p.s.ack_cq_events(cq, 1).ok());
  auto rm2 = p.s.req_notify_cq_report_missed(cq, false);
  EXPECT_EQ(rm2.value, 0);                             // empty CQ
  EXPECT_TRUE(p.s.destroy_cq(cq).ok());
}

TEST(CoreCq, SolicitedOnly) {
  Pair p;
  Handle cq = p.s.create_cq(p.b.dev, 16, true).value;
  Side x, y;
  p.fresh(x, y, p.a.scq, p.a.rcq, cq, cq);
  ASSERT_TRUE(p.s.req_notify_cq(cq, true).ok());
  ASSERT_TRUE(p.recv(y, 0, 64, 1).ok());
  ASSERT_TRUE(p.recv(y, 64, 64, 2).ok());
  SendWr w; w.wr_id = 1; w.opcode = WR_SEND; w.sg_list = {{x.buf.addr, 8, x.mr.lkey}};
  ASSERT_TRUE(p.s.post_send(x.qp, {w}).ok());
  p.s.run();
  EXPECT_EQ(p.s.get_cq_event(p.b.dev).err, ENOENT);   // not solicited
  w.send_flags = SEND_SOLICITED;
  ASSERT_TRUE(p.s.post_send(x.qp, {w}).ok());
  p.s.run();
  EXPECT_TRUE(p.s.get_cq_event(p.b.dev).ok());
  auto wc = p.poll(cq);
  EXPECT_EQ(wc.size(), 2u);
}

TEST(CoreSrq, ReceiveAndLimitEvent) {
  Pair p("rxe", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE, true);
  EXPECT_EQ(p.s.create_srq(p.b.pd, 0, 1, 0).err, EINVAL);
  EXPECT_EQ(p.s.create_srq(p.b.pd, 4, 28, 0).err, EINVAL);
  EXPECT_EQ(p.s.modify_srq(p.b.srq, 300).err, EINVAL);
  Pair m("minimal");
  EXPECT_TRUE(m.s.create_srq(m.b.pd, 4, 1, 0).ok());
  RecvWr r; r.sg_list = {{p.b.buf.addr, 64, p.b.mr.lkey}};
  for (int i = 0; i < 4; i++) { r.wr_id = 100 + i; ASSERT_TRUE(p.s.post_srq_recv(p.b.srq, {r}).ok()); }
  RecvWr bad = r; bad.sg_list.assign(5, r.sg_list[0]);
  auto pr = p.s.post_srq_recv(p.b.srq, {r, bad});
  EXPECT_EQ(pr.err, EINVAL);
  EXPECT_EQ(pr.bad_wr, 1u);
  EXPECT_EQ(p.s.post_recv(p.b.qp, {r}).err, EINVAL);  // QP uses an SRQ
  ASSERT_TRUE(p.s.modify_srq(p.b.srq, 3).ok());
  p.s.drain_events();
  SendWr w; w.wr_id = 1; w.opcode = WR_SEND; w.sg_list = {{p.a.buf.addr, 8, p.a.mr.lkey}};
  ASSERT_TRUE(p.s.post_send(p.a.qp, {w, w, w}).ok());
  p.s.run();
  auto ev = p.s.drain_events();
  EXPECT_EQ(count(ev, EventKind::AsyncEvent, EVENT_SRQ_LIMIT_REACHED), 1u);   // fires once (5 -> 4 -> 3 -> 2: below 3), then disarmed
  auto wc = p.poll(p.b.rcq);
  ASSERT_EQ(wc.size(), 3u);
  EXPECT_EQ(wc[0].wr_id, 100u);
  EXPECT_EQ(wc[2].wr_id, 102u);
  EXPECT_EQ(p.s.destroy_srq(p.b.srq).err, EBUSY);
}
