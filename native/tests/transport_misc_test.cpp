// Exactly-once atomics under duplication, zero-based MR / MW addressing, dealloc_mw, delay faults, AH checks.
#include "core_fixture.h"

using namespace vlt;

TEST(TransportMisc, AtomicsExecuteOnceUnderDuplicationAndLoss) {
  Pair p;
  FaultConfig f; f.duplicate = 0.5; f.loss = 0.2; f.reorder = 0.2;
  p.s.set_faults(f);
  uint64_t zero = 0;
  ASSERT_TRUE(p.s.write_memory(p.b.buf.addr, reinterpret_cast<uint8_t*>(&zero), 8).ok());
  std::vector<SendWr> ws;
  for (int i = 0; i < 40; i++) {
    SendWr w; w.wr_id = i; w.opcode = WR_ATOMIC_FETCH_AND_ADD; w.send_flags = SEND_SIGNALED; w.compare_add = 1;
    w.sg_list = {{p.a.buf.addr + 8 * i, 8, p.a.mr.lkey}}; w.remote_addr = p.b.buf.addr; w.rkey = p.b.mr.rkey;
    ws.push_back(w);
  }
  ASSERT_TRUE(p.s.post_send(p.a.qp, ws).ok());
  p.s.run();
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 40u);
  for (auto& c : wc) ASSERT_EQ(c.status, WC_SUCCESS);
  uint64_t v;
  p.s.read_memory(p.b.buf.addr, reinterpret_cast<uint8_t*>(&v), 8);
  EXPECT_EQ(v, 40u);                                  // every add executed exactly once
  for (int i = 0; i < 40; i++) {
    uint64_t o;
    p.s.read_memory(p.a.buf.addr + 8 * i, reinterpret_cast<uint8_t*>(&o), 8);
    EXPECT_EQ(o, uint64_t(i));                         // originals in order (replays return the saved value)
  }
  size_t replays = 0;
  for (auto& e : p.s.drain_events()) replays += e.kind == EventKind::Log && e.text.find("duplicate request") == 0;
  EXPECT_GT(replays, 0u);
}

TEST(TransportMisc, DelayFaultStillDelivers) {
  Pair p;
  FaultConfig f; f.delay = 1.0; f.delay_ns = 50000;
  p.s.set_faults(f);
  pattern(p.s, p.a.buf.addr, 3000, 2);
  ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 3000).ok());
  p.s.run();
  ASSERT_EQ(p.poll(p.a.scq).size(), 1u);
  EXPECT_GE(p.s.now_ns(), 100000u);                   // request and ACK each delayed 50 us of virtual time
  EXPECT_EQ(read(p.s, p.a.buf.addr, 3000), read(p.s, p.b.buf.addr, 3000));
}

TEST(TransportMisc, ZeroBasedMrAndWindow) {
  Pair p("cx", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_MW_BIND);
  auto z = p.s.reg_mr(p.b.pd, p.b.buf.addr + 1000, 500, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_ZERO_BASED);
  ASSERT_TRUE(z.ok()) << z.msg;
  fill(p.s, p.a.buf.addr, 16, 0x77);
  SendWr w; w.wr_id = 1; w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED;
  w.sg_list = {{p.a.buf.addr, 16, p.a.mr.lkey}}; w.remote_addr = 100; w.rkey = z.value.rkey;   // offset 100
  ASSERT_TRUE(p.s.post_send(p.a.qp, {w}).ok());
  p.s.run();
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(read(p.s, p.b.buf.addr + 1100, 16), std::vector<uint8_t>(16, 0x77));
  EXPECT_EQ(read(p.s, p.b.buf.addr + 1099, 1)[0], 0);
  // zero-based type 2 window over the main MR at +4096
  auto mw = p.s.alloc_mw(p.b.pd, MW_TYPE_2).value;
  SendWr b; b.opcode = WR_BIND_MW; b.mw = mw.handle; b.bind_rkey = mw.rkey; b.bind_mr = p.b.mr.handle;
  b.bind_addr = p.b.buf.addr + 4096; b.bind_length = 64; b.bind_access = ACCESS_REMOTE_WRITE | ACCESS_ZERO_BASED;
  ASSERT_TRUE(p.s.post_send(p.b.qp, {b}).ok());
  p.s.run();
  w.remote_addr = 48; w.rkey = mw.rkey;
  EXPECT_EQ(p.send_one(p.a, w).status, WC_SUCCESS);
  EXPECT_EQ(read(p.s, p.b.buf.addr + 4096 + 48, 16), std::vector<uint8_t>(16, 0x77));
  // window bounds are enforced (strict, not rxe's MR-only check): 48 + 17 > 64
  w.sg_list[0].length = 17;
  EXPECT_EQ(p.send_one(p.a, w).status, WC_REM_ACCESS_ERR);
}

TEST(TransportMisc, DeallocMwReleasesMrAndKillsTheKey) {
  Pair p("rxe", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_MW_BIND);
  auto mw = p.s.alloc_mw(p.b.pd, MW_TYPE_2).value;
  SendWr b; b.opcode = WR_BIND_MW; b.mw = mw.handle; b.bind_rkey = mw.rkey; b.bind_mr = p.b.mr.handle;
  b.bind_addr = p.b.buf.addr; b.bind_length = 64; b.bind_access = ACCESS_REMOTE_WRITE;
  ASSERT_TRUE(p.s.post_send(p.b.qp, {b}).ok());
  p.s.run();
  EXPECT_EQ(p.s.dereg_mr(p.b.mr.handle).err, EINVAL);   // rxe_dereg_mr (cx: EBUSY)
  EXPECT_EQ(p.s.dealloc_pd(p.b.pd).err, EBUSY);
  ASSERT_TRUE(p.s.dealloc_mw(mw.handle).ok());
  EXPECT_EQ(p.s.dealloc_mw(mw.handle).err, ENOENT);
  EXPECT_FALSE(p.s.mw_info(mw.handle).has_value());
  SendWr w; w.wr_id = 1; w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED;
  w.sg_list = {{p.a.buf.addr, 16, p.a.mr.lkey}}; w.remote_addr = p.b.buf.addr; w.rkey = mw.rkey;
  EXPECT_EQ(p.send_one(p.a, w).status, WC_REM_ACCESS_ERR);
  EXPECT_TRUE(p.s.dereg_mr(p.b.mr.handle).ok());
}

TEST(TransportMisc, AhAndObjectLifetimes) {
  Pair p("rxe", QPT_UD);
  EXPECT_EQ(p.s.create_ah(p.a.pd, 999).err, EINVAL);
  EXPECT_EQ(p.s.create_ah(p.a.pd, p.b.dev, 5).err, EINVAL);
  EXPECT_EQ(p.s.create_ah(12345, p.b.dev).err, ENOENT);
  SendWr s; s.opcode = WR_SEND; s.ah = 4242; s.sg_list = {{p.a.buf.addr, 8, p.a.mr.lkey}};
  EXPECT_NE(p.s.post_send(p.a.qp, {s}).msg.find(".ah"), std::string::npos);
  EXPECT_EQ(p.s.destroy_qp(999).err, ENOENT);
  EXPECT_FALSE(p.s.query_qp(999).has_value());
  EXPECT_EQ(p.s.destroy_cq(p.a.scq).err, EBUSY);
  EXPECT_TRUE(p.s.destroy_qp(p.a.qp).ok());
  EXPECT_TRUE(p.s.destroy_cq(p.a.scq).ok());
}

TEST(TransportMisc, IwarpReadSinkRules) {
  // sink MR with REMOTE_WRITE: fine
  Pair p("iwarp");
  pattern(p.s, p.b.buf.addr, 2000, 4);
  SendWr r; r.wr_id = 1; r.opcode = WR_RDMA_READ; r.send_flags = SEND_SIGNALED;
  r.sg_list = {{p.a.buf.addr + 8192, 2000, p.a.mr.lkey}}; r.remote_addr = p.b.buf.addr; r.rkey = p.b.mr.rkey;
  ASSERT_TRUE(p.s.post_send(p.a.qp, {r}).ok());
  p.s.run();
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(read(p.s, p.a.buf.addr + 8192, 2000), read(p.s, p.b.buf.addr, 2000));
  // two sink SGEs: refused at post time
  SendWr r2 = r; r2.sg_list = {{p.a.buf.addr, 1000, p.a.mr.lkey}, {p.a.buf.addr + 4096, 1000, p.a.mr.lkey}};
  EXPECT_EQ(p.s.post_send(p.a.qp, {r2}).err, EINVAL);
  // a sink MR with LOCAL_WRITE only: LOC_PROT_ERR on iWARP (an IB/RoCE device accepts it)
  auto sink = p.s.reg_mr(p.a.pd, p.a.buf.addr, 4096, ACCESS_LOCAL_WRITE).value;
  SendWr r3 = r; r3.sg_list = {{p.a.buf.addr, 2000, sink.lkey}};
  EXPECT_EQ(p.send_one(p.a, r3).status, WC_LOC_PROT_ERR);
  Pair q("rxe");
  auto s2 = q.s.reg_mr(q.a.pd, q.a.buf.addr, 4096, ACCESS_LOCAL_WRITE).value;
  SendWr r4 = r; r4.sg_list = {{q.a.buf.addr, 2000, s2.lkey}}; r4.remote_addr = q.b.buf.addr; r4.rkey = q.b.mr.rkey;
  ASSERT_TRUE(q.s.post_send(q.a.qp, {r4}).ok());
  q.s.run();
  wc = q.poll(q.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
}

TEST(TransportMisc, FreeRunningNeverHangsOnEndlessRnr) {
  Pair p;
  p.s.set_event_capture(false);
  p.s.set_free_running(true);
  SendWr s; s.wr_id = 1; s.opcode = WR_SEND; s.send_flags = SEND_SIGNALED; s.sg_list = {{p.a.buf.addr, 10, p.a.mr.lkey}};
  ASSERT_TRUE(p.s.post_send(p.a.qp, {s}).ok());    // rnr_retry 7 = infinite, no receive posted: returns anyway
  EXPECT_TRUE(p.poll(p.a.scq).empty());
  ASSERT_TRUE(p.recv(p.b, 0, 64, 2).ok());         // the next call finishes the exchange
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
}
