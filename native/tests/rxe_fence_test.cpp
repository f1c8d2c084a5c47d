// Fencing per profile (rxe_req.c rxe_wqe_is_fenced, upstream since the 2022 fix; IBA 10.8.3.3 and 10.6.5.1).
#include "core_fixture.h"

using namespace vlt;

namespace {

// A READ of 8 KiB from b into a's fast-reg MR, then a LOCAL_INV of that MR (no fence flag).
struct ReadThenInv {
  Pair p;
  MrInfo f;
  uint32_t key = 0;
  explicit ReadThenInv(const std::string& prof) : p(prof) {
    pattern(p.s, p.b.buf.addr, 8192, 5);
    f = p.s.alloc_mr(p.a.pd, 4).value;
    EXPECT_EQ(p.s.map_mr_sg(f.handle, {{p.a.buf.addr + 16384, 8192, 0}}).value, 1u);
    key = (f.rkey & ~0xffu) | ((f.rkey + 1) & 0xff);
    SendWr reg; reg.wr_id = 1; reg.opcode = WR_REG_MR; reg.reg_mr = f.handle; reg.reg_key = key;
    reg.reg_access = ACCESS_LOCAL_WRITE;
    EXPECT_TRUE(p.s.post_send(p.a.qp, {reg}).ok());
    p.s.run();
    EXPECT_EQ(p.s.mr_info(f.handle)->state, "valid");
  }
  std::vector<Wc> run(uint32_t inv_flags) {
    SendWr r; r.wr_id = 2; r.opcode = WR_RDMA_READ; r.send_flags = SEND_SIGNALED;
    r.sg_list = {{p.a.buf.addr + 16384, 8192, key}}; r.remote_addr = p.b.buf.addr; r.rkey = p.b.mr.rkey;
    SendWr inv; inv.wr_id = 3; inv.opcode = WR_LOCAL_INV; inv.send_flags = SEND_SIGNALED | inv_flags; inv.imm_data = key;
    EXPECT_TRUE(p.s.post_send(p.a.qp, {r, inv}).ok());
    p.s.run();
    return p.poll(p.a.scq);
  }
};

}  // namespace

TEST(RxeFence, UnfencedLocalInvWaitsForEarlierReadOnRxe) {
  ReadThenInv t("rxe");
  auto wc = t.run(0);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].wr_id, 2u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);              // the READ landed before the MR was invalidated
  EXPECT_EQ(wc[1].status, WC_SUCCESS);
  EXPECT_EQ(wc[1].opcode, WC_LOCAL_INV);
  EXPECT_EQ(read(t.p.s, t.p.a.buf.addr + 16384, 8192), read(t.p.s, t.p.b.buf.addr, 8192));
  EXPECT_EQ(t.p.s.mr_info(t.f.handle)->state, "free");
}

TEST(RxeFence, UnfencedLocalInvOvertakesReadOnCx) {
  ReadThenInv t("cx");
  auto wc = t.run(0);
  ASSERT_GE(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 2u);
  EXPECT_EQ(wc[0].status, WC_LOC_PROT_ERR);          // the READ response found its sink MR already FREE
  EXPECT_EQ(t.p.state(t.p.a), QPS_ERR);
}

TEST(RxeFence, FencedLocalInvWaitsForReadOnCx) {
  ReadThenInv t("cx");
  auto wc = t.run(SEND_FENCE);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(wc[1].status, WC_SUCCESS);
  EXPECT_EQ(wc[1].opcode, WC_LOCAL_INV);
}

// (A fenced WRITE after a READ is held until the READ completes: TransportReliability.FenceWaitsForEarlierRead.)
// A fenced WRITE waits for outstanding READ / atomic only: posted after an unacknowledged WRITE it is sent at once
// (both profiles; IBA 10.8.3.3). Observed on the wire: with the ACK of the first WRITE not yet received, the second
// WRITE is already sent.
TEST(RxeFence, FencedWriteDoesNotWaitForEarlierWrite) {
  for (const char* prof : {"rxe", "cx"}) {
    Pair p(prof);
    p.s.drain_events();
    ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 64, 1).ok());
    ASSERT_TRUE(p.write(p.a, p.b, 64, 64, 64, 2, WR_RDMA_WRITE, SEND_SIGNALED | SEND_FENCE).ok());
    // run until a's second WRITE leaves or b's first ACK reaches a, whichever comes first
    int writes = 0;
    bool ack_first = false;
    for (int i = 0; i < 100 && writes < 2 && !ack_first && p.s.step(); i++)
      for (auto& e : p.s.drain_events()) {
        if (e.kind == EventKind::PacketSent && e.device == p.a.dev && !e.pkt.empty() && e.pkt[0] == 0x0a) writes++;
        if (e.kind == EventKind::PacketReceived && e.device == p.a.dev && !e.pkt.empty() && e.pkt[0] == 0x11) ack_first = true;
      }
    EXPECT_EQ(writes, 2) << prof;
    EXPECT_FALSE(ack_first) << prof;
    p.s.run();
    auto wc = p.poll(p.a.scq);
    ASSERT_EQ(wc.size(), 2u) << prof;
    EXPECT_EQ(wc[1].status, WC_SUCCESS) << prof;
  }
}
