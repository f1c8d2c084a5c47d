// RDMA READ with invalidate (kernel IB_WR_RDMA_READ_WITH_INV, iWARP only): the requester invalidates the sink STag
// (the one SGE's lkey) when the READ completes (siw_qp_rx.c siw_rdmap_complete, iw_cxgb4 post_send; core rw.c uses
// it where rdma_cap_read_inv()). The request on the wire is an ordinary RDMA Read Request. Other profiles: rxe
// accepts it and fails it in the requester (IBV_WC_LOC_QP_OP_ERR), cx / minimal refuse it at post_send (EINVAL).
#include "core_fixture.h"

using namespace vlt;

namespace {

// a fast-registration MR of a's PD over a's buffer at +16 KiB (8 KiB), registered VALID through the send queue
struct Sink {
  MrInfo f;
  uint32_t key = 0;
  Sink(Pair& p, uint32_t access) {
    f = p.s.alloc_mr(p.a.pd, 4).value;
    EXPECT_EQ(p.s.map_mr_sg(f.handle, {{p.a.buf.addr + 16384, 8192, 0}}).value, 1u);
    key = (f.rkey & ~0xffu) | ((f.rkey + 1) & 0xff);
    SendWr reg; reg.wr_id = 1; reg.opcode = WR_REG_MR; reg.reg_mr = f.handle; reg.reg_key = key; reg.reg_access = access;
    EXPECT_TRUE(p.s.post_send(p.a.qp, {reg}).ok());
    p.s.run();
    EXPECT_EQ(p.s.mr_info(f.handle)->state, "valid");
  }
};

SendWr read_inv(Pair& p, uint32_t lkey, uint64_t wr_id = 2, uint32_t len = 4000) {
  SendWr r; r.wr_id = wr_id; r.opcode = WR_RDMA_READ_WITH_INV; r.send_flags = SEND_SIGNALED;
  r.sg_list = {{p.a.buf.addr + 16384, len, lkey}}; r.remote_addr = p.b.buf.addr; r.rkey = p.b.mr.rkey;
  return r;
}

}  // namespace

TEST(IwarpReadWithInv, InvalidatesTheSinkWhenTheReadCompletes) {
  Pair p("iwarp");
  Sink k(p, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE);   // an iWARP READ sink needs REMOTE_WRITE
  pattern(p.s, p.b.buf.addr, 4000, 9);
  p.s.drain_events();
  auto wc = p.send_one(p.a, read_inv(p, k.key));
  EXPECT_EQ(wc.status, WC_SUCCESS);
  EXPECT_EQ(wc.opcode, WC_RDMA_READ);                   // siw_cq.c map_wc_opcode: READ_LOCAL_INV -> IB_WC_RDMA_READ
  EXPECT_EQ(wc.byte_len, 4000u);
  EXPECT_EQ(read(p.s, p.a.buf.addr + 16384, 4000), read(p.s, p.b.buf.addr, 4000));
  EXPECT_EQ(p.s.mr_info(k.f.handle)->state, "free");
  EXPECT_EQ(p.state(p.a), QPS_RTS);
  // the wire carried an ordinary READ request; the invalidation is a typed MR event, after the last response
  bool saw_request = false, saw_inv = false;
  for (const auto& e : p.s.drain_events()) {
    if (e.kind == EventKind::PacketSent && !e.pkt.empty() && e.pkt[0] == 0x0C) saw_request = true;
    if (e.kind == EventKind::ObjectModified && e.obj == k.f.handle && e.change == uint8_t(Change::LocalInv)) {
      saw_inv = true;
      EXPECT_EQ(e.key_state, uint8_t(KeyState::Free));
      EXPECT_NE(e.text.find("read with invalidate"), std::string::npos) << e.text;
    }
  }
  EXPECT_TRUE(saw_request);
  EXPECT_TRUE(saw_inv);
  // the key is gone: a second READ into it fails on the sink key
  SendWr again = read_inv(p, k.key, 3);
  again.opcode = WR_RDMA_READ;
  EXPECT_EQ(p.send_one(p.a, again).status, WC_LOC_PROT_ERR);
}

TEST(IwarpReadWithInv, AFailedInvalidationCompletesWithGeneralErr) {
  // the sink is a user MR: the bytes land, the invalidation is refused (not a fast-registration MR), and the READ
  // completes with IBV_WC_GENERAL_ERR (siw_rdmap_complete), the QP to error
  Pair p("iwarp");
  pattern(p.s, p.b.buf.addr, 4000, 3);
  auto wc = p.send_one(p.a, read_inv(p, p.a.mr.lkey));
  EXPECT_EQ(wc.status, WC_GENERAL_ERR);
  EXPECT_EQ(wc.opcode, WC_RDMA_READ);
  EXPECT_EQ(read(p.s, p.a.buf.addr + 16384, 4000), read(p.s, p.b.buf.addr, 4000));
  EXPECT_EQ(p.s.mr_info(p.a.mr.handle)->state, "valid");
  EXPECT_EQ(p.state(p.a), QPS_ERR);
}

TEST(IwarpReadWithInv, PostRules) {
  Pair p("iwarp");
  Sink k(p, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE);
  SendWr none = read_inv(p, k.key);
  none.sg_list.clear();                                  // nothing to invalidate
  auto r = p.s.post_send(p.a.qp, {none});
  EXPECT_EQ(r.err, EINVAL);
  EXPECT_NE(r.msg.find("one SGE"), std::string::npos) << r.msg;
  SendWr two = read_inv(p, k.key);
  two.sg_list.push_back({p.a.buf.addr, 100, k.key});
  EXPECT_EQ(p.s.post_send(p.a.qp, {two}).err, EINVAL);
  EXPECT_EQ(p.s.mr_info(k.f.handle)->state, "valid");   // nothing ran
  // the sink without REMOTE_WRITE: the response is refused before anything is invalidated
  Pair q("iwarp");
  Sink lw(q, ACCESS_LOCAL_WRITE);
  EXPECT_EQ(q.send_one(q.a, read_inv(q, lw.key)).status, WC_LOC_PROT_ERR);
  EXPECT_EQ(q.s.mr_info(lw.f.handle)->state, "valid");
}

TEST(IwarpReadWithInv, RefusedAtPostOnCx) {
  Pair p("cx");
  Sink k(p, ACCESS_LOCAL_WRITE);
  auto r = p.s.post_send(p.a.qp, {read_inv(p, k.key)});
  EXPECT_EQ(r.err, EINVAL);
  EXPECT_EQ(r.bad_wr, 0u);
  EXPECT_NE(r.msg.find("iWARP only"), std::string::npos) << r.msg;
  p.s.run();
  EXPECT_TRUE(p.poll(p.a.scq).empty());
  EXPECT_EQ(p.state(p.a), QPS_RTS);
  EXPECT_EQ(p.s.mr_info(k.f.handle)->state, "valid");
}

TEST(IwarpReadWithInv, RxeTakesItAndFailsItInTheRequester) {
  Pair p("rxe");
  Sink k(p, ACCESS_LOCAL_WRITE);
  p.s.drain_events();
  ASSERT_TRUE(p.s.post_send(p.a.qp, {read_inv(p, k.key)}).ok());
  p.s.run();
  auto wc = p.s.poll_cq(p.a.scq, 4);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_LOC_QP_OP_ERR);             // rxe_req.c: next_opcode -EINVAL
  ASSERT_NE(wc[0].rule, nullptr);
  EXPECT_STREQ(wc[0].rule, "readWithInvLocQpOpErr");
  EXPECT_EQ(p.state(p.a), QPS_ERR);
  EXPECT_EQ(p.s.mr_info(k.f.handle)->state, "valid");
  for (const auto& e : p.s.drain_events()) EXPECT_NE(e.kind, EventKind::PacketSent) << "no packet is sent";
}

TEST(IwarpReadWithInv, NotValidOnUc) {
  Pair p("rxe", QPT_UC);
  auto r = p.s.post_send(p.a.qp, {read_inv(p, p.a.mr.lkey)});
  EXPECT_EQ(r.err, EINVAL);
  EXPECT_NE(r.msg.find("UC"), std::string::npos) << r.msg;
}
