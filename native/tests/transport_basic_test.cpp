#include "core_fixture.h"

using namespace vlt;

TEST(TransportBasic, RcWriteSingleAndMulti) {
  Pair p;
  pattern(p.s, p.a.buf.addr, 5000, 3);
  ASSERT_TRUE(p.write(p.a, p.b, 0, 100, 5000).ok());
  p.s.run();
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(wc[0].opcode, WC_RDMA_WRITE);
  EXPECT_EQ(read(p.s, p.a.buf.addr, 5000), read(p.s, p.b.buf.addr + 100, 5000));
  EXPECT_EQ(read(p.s, p.b.buf.addr + 99, 1)[0], 0);
  EXPECT_EQ(read(p.s, p.b.buf.addr + 5100, 1)[0], 0);
}

TEST(TransportBasic, RcSendRecvReadAtomic) {
  Pair p;
  pattern(p.s, p.a.buf.addr, 3000, 5);
  ASSERT_TRUE(p.recv(p.b, 8192, 4096, 77).ok());
  SendWr w; w.wr_id = 9; w.opcode = WR_SEND_WITH_IMM; w.send_flags = SEND_SIGNALED; w.imm_data = 0xabcd;
  w.sg_list = {{p.a.buf.addr, 3000, p.a.mr.lkey}};
  ASSERT_TRUE(p.s.post_send(p.a.qp, {w}).ok());
  p.s.run();
  auto rwc = p.poll(p.b.rcq);
  ASSERT_EQ(rwc.size(), 1u);
  EXPECT_EQ(rwc[0].status, WC_SUCCESS);
  EXPECT_EQ(rwc[0].wr_id, 77u);
  EXPECT_EQ(rwc[0].byte_len, 3000u);
  EXPECT_EQ(rwc[0].imm_data, 0xabcdu);
  EXPECT_EQ(rwc[0].wc_flags & WC_WITH_IMM, (uint32_t)WC_WITH_IMM);
  EXPECT_EQ(read(p.s, p.a.buf.addr, 3000), read(p.s, p.b.buf.addr + 8192, 3000));
  ASSERT_EQ(p.poll(p.a.scq).size(), 1u);
  // READ 2500 bytes from b into a at 20000
  pattern(p.s, p.b.buf.addr + 30000, 2500, 9);
  SendWr r; r.wr_id = 10; r.opcode = WR_RDMA_READ; r.send_flags = SEND_SIGNALED;
  r.sg_list = {{p.a.buf.addr + 20000, 2500, p.a.mr.lkey}}; r.remote_addr = p.b.buf.addr + 30000; r.rkey = p.b.mr.rkey;
  ASSERT_TRUE(p.s.post_send(p.a.qp, {r}).ok());
  p.s.run();
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(wc[0].opcode, WC_RDMA_READ);
  EXPECT_EQ(read(p.s, p.a.buf.addr + 20000, 2500), read(p.s, p.b.buf.addr + 30000, 2500));
  // atomics
  uint64_t v = 40;
  ASSERT_TRUE(p.s.write_memory(p.b.buf.addr + 64, reinterpret_cast<uint8_t*>(&v), 8).ok());
  SendWr f; f.wr_id = 11; f.opcode = WR_ATOMIC_FETCH_AND_ADD; f.send_flags = SEND_SIGNALED; f.compare_add = 2;
  f.sg_list = {{p.a.buf.addr + 40000, 8, p.a.mr.lkey}}; f.remote_addr = p.b.buf.addr + 64; f.rkey = p.b.mr.rkey;
  SendWr c = f; c.wr_id = 12; c.opcode = WR_ATOMIC_CMP_AND_SWP; c.compare_add = 42; c.swap = 1000; c.sg_list[0].addr += 8;
  ASSERT_TRUE(p.s.post_send(p.a.qp, {f, c}).ok());
  p.s.run();
  wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(wc[0].opcode, WC_FETCH_ADD);
  EXPECT_EQ(wc[1].opcode, WC_COMP_SWAP);
  uint64_t o1, o2, now;
  p.s.read_memory(p.a.buf.addr + 40000, reinterpret_cast<uint8_t*>(&o1), 8);
  p.s.read_memory(p.a.buf.addr + 40008, reinterpret_cast<uint8_t*>(&o2), 8);
  p.s.read_memory(p.b.buf.addr + 64, reinterpret_cast<uint8_t*>(&now), 8);
  EXPECT_EQ(o1, 40u);
  EXPECT_EQ(o2, 42u);
  EXPECT_EQ(now, 1000u);
}

// ibv_post_send semantics: a WR that does not fit stops the post (ENOMEM, bad_wr), and the WRs before it are
// posted and executed, also when nothing else is posted afterwards (the requester is scheduled for them).
TEST(TransportBasic, PartialPostExecutesTheWrsBeforeTheBadOne) {
  Pair p("cx",   // cx grants max_send_wr 8 exactly (rxe: 15)
          QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC, false, 8);
  pattern(p.s, p.a.buf.addr, 1024, 5);
  for (int round = 0; round < 3; round++) {
    std::vector<SendWr> wrs(12);
    for (uint32_t i = 0; i < wrs.size(); i++) {
      SendWr& w = wrs[i];
      w.wr_id = round * 100 + i; w.opcode = WR_RDMA_WRITE; w.send_flags = i == 7 ? uint32_t(SEND_SIGNALED) : 0u;
      w.sg_list = {{p.a.buf.addr + i * 64, 64, p.a.mr.lkey}};
      w.remote_addr = p.b.buf.addr + round * 1024 + i * 64; w.rkey = p.b.mr.rkey;
    }
    auto r = p.s.post_send(p.a.qp, wrs);
    EXPECT_EQ(r.err, ENOMEM);
    EXPECT_EQ(r.bad_wr, 8u);                               // max_send_wr 8: WRs 0..7 posted
    p.s.run();
    auto wc = p.poll(p.a.scq);
    ASSERT_EQ(wc.size(), 1u) << "round " << round;        // WR 7 (signaled) completed: 0..7 ran
    EXPECT_EQ(wc[0].wr_id, round * 100 + 7u);
    EXPECT_EQ(wc[0].status, WC_SUCCESS);
    EXPECT_EQ(read(p.s, p.a.buf.addr, 512), read(p.s, p.b.buf.addr + round * 1024, 512));
  }
}
