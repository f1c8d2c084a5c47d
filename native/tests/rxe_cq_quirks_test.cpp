// Completion behaviour per profile where Linux rxe and the IBA / ConnectX differ (issue 22: CQ overruns, solicited
// arms, wc_flags, queue depths). Each test runs both profiles where they differ.
#include "core_fixture.h"

using namespace vlt;

namespace {

SendWr send_wr(Side& x, uint64_t wr_id, uint64_t off, uint32_t len, uint32_t op = WR_SEND, uint32_t flags = SEND_SIGNALED) {
  SendWr w; w.wr_id = wr_id; w.opcode = op; w.send_flags = flags;
  w.sg_list = {{x.buf.addr + off, len, x.mr.lkey}};
  return w;
}

size_t count_acks_from(Session& s, Handle dev) {
  size_t n = 0;
  for (auto& e : s.drain_events())
    if (e.kind == EventKind::PacketSent && e.device == dev && e.pkt.size() > 12 && e.pkt[0] == 0x11 && (e.pkt[12] >> 5) == 0) n++;
  return n;
}

}  // namespace

// rxe_resp.c do_complete: a receive completion that does not fit the CQ returns RESPST_ERR_CQ_OVERFLOW before the
// ACK; the sender retries into a QP in error and ends with RETRY_EXC_ERR. The cx profile ACKs.
TEST(RxeCqQuirks, RecvCqOverrunWithholdsTheAck) {
  for (const char* prof : {"rxe", "cx"}) {
    Pair p(prof);
    Handle small = p.s.create_cq(p.b.dev, 1).value;
    Side x, y;
    p.fresh(x, y, p.a.scq, p.a.rcq, p.b.scq, small);
    ASSERT_TRUE(p.recv(y, 0, 64, 60).ok());
    ASSERT_TRUE(p.recv(y, 64, 64, 61).ok());
    p.s.drain_events();
    ASSERT_TRUE(p.s.post_send(x.qp, {send_wr(x, 1, 0, 64), send_wr(x, 2, 64, 64)}).ok());
    p.s.run();
    const bool rxe = std::string(prof) == "rxe";
    EXPECT_EQ(count_acks_from(p.s, y.dev), rxe ? 1u : 2u) << prof;
    auto wc = p.poll(x.scq);
    ASSERT_EQ(wc.size(), 2u) << prof;
    EXPECT_EQ(wc[0].status, WC_SUCCESS) << prof;
    EXPECT_EQ(wc[1].status, rxe ? WC_RETRY_EXC_ERR : WC_SUCCESS) << prof;
    EXPECT_EQ(p.state(y), QPS_ERR) << prof;
    auto rw = p.poll(small);
    ASSERT_EQ(rw.size(), 1u) << prof;
    EXPECT_EQ(rw[0].wr_id, 60u) << prof;
  }
}

// rxe_comp.c do_complete ignores rxe_cq_post's failure: the QP stays in RTS; the cx profile moves it to ERR.
TEST(RxeCqQuirks, SendCqOverrunKeepsRtsOnRxeOnly) {
  for (const char* prof : {"rxe", "cx"}) {
    Pair p(prof);
    Handle small = p.s.create_cq(p.a.dev, 3).value;
    EXPECT_EQ(p.s.cq_info(small)->cqe, 3u) << prof;   // 3 = 2^2 - 1 on rxe too
    Side x, y;
    p.fresh(x, y, small, p.a.rcq, p.b.scq, p.b.rcq);
    p.s.drain_events();
    for (uint64_t i = 1; i <= 4; i++) ASSERT_TRUE(p.write(x, y, 0, 0, 8, i).ok());
    p.s.run();
    bool cq_err = false;
    for (auto& e : p.s.drain_events()) cq_err |= e.kind == EventKind::AsyncEvent && e.obj == small && e.a == EVENT_CQ_ERR;
    EXPECT_TRUE(cq_err) << prof;
    const bool rxe = std::string(prof) == "rxe";
    EXPECT_EQ(p.state(x), rxe ? QPS_RTS : QPS_ERR) << prof;
    EXPECT_EQ(p.poll(small).size(), 3u) << prof;
    ASSERT_TRUE(p.write(x, y, 0, 0, 8, 5).ok());
    p.s.run();
    auto wc = p.poll(small);
    ASSERT_EQ(wc.size(), 1u) << prof;
    EXPECT_EQ(wc[0].status, rxe ? WC_SUCCESS : WC_WR_FLUSH_ERR) << prof;
    EXPECT_STREQ(wc[0].rule, rxe ? nullptr : "sendCqOverflowKeepsRts") << prof;
  }
}

// ibv_req_notify_cq(3): send completions are unsolicited on every profile; an error completion is solicited on cx
// (the man page) and not on rxe (rxe_cq_post looks at its solicited argument only).
TEST(RxeCqQuirks, SolicitedArmAndSendCompletions) {
  for (const char* prof : {"rxe", "cx"}) {
    Pair p(prof);
    Handle ch = p.s.create_cq(p.a.dev, 64, true).value;
    Side x, y;
    p.fresh(x, y, ch, p.a.rcq, p.b.scq, p.b.rcq);
    ASSERT_TRUE(p.recv(y, 0, 64, 60).ok());
    ASSERT_TRUE(p.s.req_notify_cq(ch, true).ok());
    ASSERT_TRUE(p.s.post_send(x.qp, {send_wr(x, 1, 0, 64, WR_SEND, SEND_SIGNALED | SEND_SOLICITED)}).ok());
    p.s.run();
    EXPECT_EQ(p.poll(ch).size(), 1u) << prof;
    EXPECT_EQ(p.s.get_cq_event(p.a.dev).err, ENOENT) << prof << ": a successful send completion fired a solicited arm";
    // still armed: a failing WRITE (bad rkey)
    SendWr w = send_wr(x, 2, 0, 8, WR_RDMA_WRITE);
    w.remote_addr = y.buf.addr; w.rkey = y.mr.rkey ^ 1;
    ASSERT_TRUE(p.s.post_send(x.qp, {w}).ok());
    p.s.run();
    auto wc = p.poll(ch);
    ASSERT_EQ(wc.size(), 1u) << prof;
    EXPECT_EQ(wc[0].status, WC_REM_ACCESS_ERR) << prof;
    auto ev = p.s.get_cq_event(p.a.dev);
    if (std::string(prof) == "rxe") EXPECT_EQ(ev.err, ENOENT) << prof;
    else { EXPECT_TRUE(ev.ok()) << prof; EXPECT_EQ(ev.value, ch); EXPECT_TRUE(p.s.ack_cq_events(ch, 1).ok()); }
  }
}

// rxe_resp.c do_complete sets IBV_WC_GRH on user receive completions; rxe_comp.c make_send_cqe sets IBV_WC_WITH_IMM
// on the sender's WRITE_WITH_IMM / SEND_WITH_IMM completion. The cx profile sets neither.
TEST(RxeCqQuirks, WcFlags) {
  for (const char* prof : {"rxe", "cx"}) {
    Pair p(prof);
    const bool rxe = std::string(prof) == "rxe";
    ASSERT_TRUE(p.recv(p.b, 0, 64, 60).ok());
    ASSERT_TRUE(p.recv(p.b, 64, 64, 61).ok());
    ASSERT_TRUE(p.recv(p.b, 128, 64, 62).ok());
    SendWr si = send_wr(p.a, 1, 0, 16, WR_SEND_WITH_IMM); si.imm_data = 0x1234;
    SendWr wi = send_wr(p.a, 2, 0, 16, WR_RDMA_WRITE_WITH_IMM); wi.imm_data = 0x5678;
    wi.remote_addr = p.b.buf.addr + 1024; wi.rkey = p.b.mr.rkey;
    SendWr pl = send_wr(p.a, 3, 0, 16);
    ASSERT_TRUE(p.s.post_send(p.a.qp, {si, wi, pl}).ok());
    p.s.run();
    auto s = p.poll(p.a.scq);
    ASSERT_EQ(s.size(), 3u) << prof;
    EXPECT_EQ(s[0].wc_flags, rxe ? uint32_t(WC_WITH_IMM) : 0u) << prof;
    EXPECT_EQ(s[1].wc_flags, rxe ? uint32_t(WC_WITH_IMM) : 0u) << prof;
    EXPECT_EQ(s[2].wc_flags, 0u) << prof;
    EXPECT_STREQ(s[0].rule, rxe ? "wcFlagsRxe" : nullptr) << prof;
    EXPECT_STREQ(s[2].rule, nullptr) << prof;
    auto r = p.poll(p.b.rcq);
    ASSERT_EQ(r.size(), 3u) << prof;
    const uint32_t grh = rxe ? uint32_t(WC_GRH) : 0u;
    EXPECT_EQ(r[0].wc_flags, grh | WC_WITH_IMM) << prof;
    EXPECT_EQ(r[0].imm_data, 0x1234u) << prof;
    EXPECT_EQ(r[1].opcode, WC_RECV_RDMA_WITH_IMM) << prof;
    EXPECT_EQ(r[1].wc_flags, grh | WC_WITH_IMM) << prof;
    EXPECT_EQ(r[2].wc_flags, grh) << prof;
  }
}

// rxe_queue_init: 2^n - 1 entries; the cx profile grants exactly what was asked.
TEST(RxeCqQuirks, CqDepthGranted) {
  Session s;
  Handle rx = s.create_device("rxe").value, cx = s.create_device("cx").value;
  for (auto [n, want] : {std::pair<uint32_t, uint32_t>{1, 1}, {2, 3}, {4, 7}, {7, 7}, {8, 15}, {100, 127}}) {
    EXPECT_EQ(s.cq_info(s.create_cq(rx, n).value)->cqe, want) << n;
    EXPECT_EQ(s.cq_info(s.create_cq(cx, n).value)->cqe, n) << n;
  }
  EXPECT_EQ(s.create_cq(rx, 0).err, EINVAL);
  EXPECT_EQ(s.create_cq(rx, (1u << 15)).err, EINVAL);   // above max_cqe before rounding
  EXPECT_FALSE(s.cq_info(9999).has_value());
  // 5 completions fit a CQ asked for 4 on rxe
  Pair p("rxe");
  Handle c4 = p.s.create_cq(p.a.dev, 4).value;
  Side x, y;
  p.fresh(x, y, c4, p.a.rcq, p.b.scq, p.b.rcq);
  for (uint64_t i = 1; i <= 5; i++) ASSERT_TRUE(p.write(x, y, 0, 0, 8, i).ok());
  p.s.run();
  EXPECT_EQ(p.poll(c4).size(), 5u);
  EXPECT_EQ(p.state(x), QPS_RTS);
}
