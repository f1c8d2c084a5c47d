// Local memory operations over a QP: REG_MR, LOCAL_INV, BIND_MW (type 1 verb, type 2 WR), SEND_WITH_INV.
#include "core_fixture.h"

using namespace vlt;

static uint32_t inc(uint32_t k) { return (k & ~0xffu) | ((k + 1) & 0xff); }

TEST(TransportMemOps, FastRegWriteThenLocalInv) {
  Pair p;
  auto b2 = p.s.alloc_buffer(8192).value;
  fill(p.s, b2.addr, 8192, 0xCC);
  fill(p.s, p.b.buf.addr, 8192, 0xCC);
  auto f = p.s.alloc_mr(p.b.pd, 4).value;
  // two page-aligned pieces in different buffers: 4096-100 bytes at the end of buf page 0, then b2 page 0
  ASSERT_EQ(p.s.map_mr_sg(f.handle, {{p.b.buf.addr + 100, 4096 - 100, 0}, {b2.addr, 4096, 0}}).value, 2u);
  uint32_t key = inc(f.rkey);
  SendWr reg; reg.wr_id = 5; reg.opcode = WR_REG_MR; reg.send_flags = SEND_SIGNALED; reg.reg_mr = f.handle; reg.reg_key = key;
  reg.reg_access = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE;
  ASSERT_TRUE(p.s.post_send(p.b.qp, {reg}).ok());
  p.s.run();
  auto wc = p.poll(p.b.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(wc[0].opcode, WC_REG_MR);
  EXPECT_EQ(p.s.mr_info(f.handle)->state, "valid");
  EXPECT_EQ(p.s.mr_info(f.handle)->rkey, key);
  // WRITE 4000 bytes at iova+3000: crosses from buf into b2
  pattern(p.s, p.a.buf.addr, 4000, 1);
  SendWr w; w.wr_id = 6; w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED;
  w.sg_list = {{p.a.buf.addr, 4000, p.a.mr.lkey}}; w.remote_addr = p.b.buf.addr + 100 + 3000; w.rkey = key;
  EXPECT_EQ(p.send_one(p.a, w).status, WC_SUCCESS);
  auto src = read(p.s, p.a.buf.addr, 4000);
  auto d1 = read(p.s, p.b.buf.addr + 3100, 996);
  auto d2 = read(p.s, b2.addr, 3004);
  EXPECT_TRUE(std::equal(d1.begin(), d1.end(), src.begin()));
  EXPECT_TRUE(std::equal(d2.begin(), d2.end(), src.begin() + 996));
  EXPECT_EQ(read(p.s, p.b.buf.addr + 3099, 1)[0], 0xCC);
  EXPECT_EQ(read(p.s, b2.addr + 3004, 1)[0], 0xCC);
  // REG_MR on a VALID MR fails with LOC_QP_OP_ERR (must be FREE) -- on a separate QP pair, later
  // LOCAL_INV -> free; the next WRITE gets REM_ACCESS_ERR
  SendWr inv; inv.wr_id = 7; inv.opcode = WR_LOCAL_INV; inv.send_flags = SEND_SIGNALED; inv.imm_data = key;
  ASSERT_TRUE(p.s.post_send(p.b.qp, {inv}).ok());
  p.s.run();
  wc = p.poll(p.b.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(wc[0].opcode, WC_LOCAL_INV);
  EXPECT_EQ(p.s.mr_info(f.handle)->state, "free");
  EXPECT_EQ(p.send_one(p.a, w).status, WC_REM_ACCESS_ERR);
  EXPECT_EQ(p.state(p.a), QPS_ERR);
  EXPECT_EQ(p.state(p.b), QPS_ERR);
}

TEST(TransportMemOps, RegMrFailures) {
  Pair p;
  auto f = p.s.alloc_mr(p.b.pd, 4).value;
  SendWr reg; reg.wr_id = 5; reg.opcode = WR_REG_MR; reg.reg_mr = f.handle; reg.reg_key = f.rkey; reg.reg_access = ACCESS_LOCAL_WRITE;
  SendWr after; after.wr_id = 6; after.opcode = WR_LOCAL_INV; after.imm_data = f.rkey; after.send_flags = SEND_SIGNALED;
  ASSERT_TRUE(p.s.post_send(p.b.qp, {reg, after}).ok());   // not mapped -> LOC_QP_OP_ERR (always reported)
  p.s.run();
  auto wc = p.poll(p.b.scq);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, WC_LOC_QP_OP_ERR);
  EXPECT_EQ(wc[0].wr_id, 5u);
  EXPECT_EQ(wc[1].status, WC_WR_FLUSH_ERR);
  EXPECT_EQ(p.state(p.b), QPS_ERR);
  // LOCAL_INV of a user MR -> LOC_QP_OP_ERR
  Pair q;
  SendWr inv; inv.wr_id = 1; inv.opcode = WR_LOCAL_INV; inv.imm_data = q.b.mr.rkey;
  ASSERT_TRUE(q.s.post_send(q.b.qp, {inv}).ok());
  q.s.run();
  wc = q.poll(q.b.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_LOC_QP_OP_ERR);
}

TEST(TransportMemOps, IndirectKeyWithByteGaps) {
  Pair p("cx");
  fill(p.s, p.b.buf.addr, 4096, 0xCC);
  auto ind = p.s.alloc_mr(p.b.pd, 4, true).value;
  ASSERT_EQ(p.s.map_mr_sg(ind.handle, {{p.b.buf.addr + 3, 8, 0}, {p.b.buf.addr + 67, 8, 0}}).value, 2u);
  SendWr reg; reg.wr_id = 1; reg.opcode = WR_REG_MR; reg.reg_mr = ind.handle; reg.reg_key = ind.rkey;
  reg.reg_access = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;
  ASSERT_TRUE(p.s.post_send(p.b.qp, {reg}).ok());
  pattern(p.s, p.a.buf.addr, 16, 4);
  SendWr w; w.wr_id = 2; w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED;
  w.sg_list = {{p.a.buf.addr, 16, p.a.mr.lkey}}; w.remote_addr = p.b.buf.addr + 3; w.rkey = ind.rkey;
  ASSERT_TRUE(p.s.post_send(p.a.qp, {w}).ok());
  p.s.run();
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  auto src = read(p.s, p.a.buf.addr, 16);
  auto got = read(p.s, p.b.buf.addr, 80);
  EXPECT_TRUE(std::equal(src.begin(), src.begin() + 8, got.begin() + 3));
  EXPECT_TRUE(std::equal(src.begin() + 8, src.end(), got.begin() + 67));
  for (int i = 11; i < 67; i++) EXPECT_EQ(got[i], 0xCC) << i;
  // 17 bytes: beyond the 16-byte key -> remote access error
  w.sg_list[0].length = 17;
  EXPECT_EQ(p.send_one(p.a, w).status, WC_REM_ACCESS_ERR);
}

TEST(TransportMemOps, MwType1BindVerbAndUnbind) {
  Pair p("rxe", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_MW_BIND);
  auto mw = p.s.alloc_mw(p.b.pd, MW_TYPE_1);
  ASSERT_TRUE(mw.ok()) << mw.msg;
  EXPECT_EQ(mw.value.state, "valid");
  EXPECT_EQ(mw.value.rkey >> 8, (1u << 20) + 1);
  EXPECT_EQ(p.s.alloc_mw(p.b.pd, 3).err, EINVAL);
  auto r = p.s.bind_mw(p.b.qp, mw.value.handle, 42, SEND_SIGNALED, p.b.mr.handle, p.b.buf.addr + 4096, 1024, ACCESS_REMOTE_WRITE);
  ASSERT_TRUE(r.ok()) << r.msg;
  EXPECT_EQ(r.value, inc(mw.value.rkey));
  p.s.run();
  auto wc = p.poll(p.b.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(wc[0].opcode, WC_BIND_MW);
  EXPECT_EQ(p.s.mw_info(mw.value.handle)->rkey, r.value);
  EXPECT_EQ(p.s.dereg_mr(p.b.mr.handle).err, EINVAL);   // rxe_dereg_mr (cx: EBUSY)
  fill(p.s, p.a.buf.addr, 64, 0x5A);
  SendWr w; w.wr_id = 1; w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED;
  w.sg_list = {{p.a.buf.addr, 64, p.a.mr.lkey}}; w.remote_addr = p.b.buf.addr + 4096 + 960; w.rkey = r.value;
  EXPECT_EQ(p.send_one(p.a, w).status, WC_SUCCESS);
  EXPECT_EQ(read(p.s, p.b.buf.addr + 4096 + 960, 1)[0], 0x5A);
  // type 1 cannot be invalidated with LOCAL_INV, and a type-2 handle is refused by the verb
  auto mw2 = p.s.alloc_mw(p.b.pd, MW_TYPE_2).value;
  EXPECT_EQ(p.s.bind_mw(p.b.qp, mw2.handle, 1, 0, p.b.mr.handle, p.b.buf.addr, 16, 0).err, EINVAL);
  auto pd2 = p.s.alloc_pd(p.b.dev).value;
  auto other = p.s.reg_mr(pd2, p.b.buf.addr, 64, ACCESS_MW_BIND).value;
  EXPECT_EQ(p.s.bind_mw(p.b.qp, mw.value.handle, 1, 0, other.handle, p.b.buf.addr, 16, 0).err, EPERM);
  // zero-length bind unbinds: the window no longer grants access
  auto r2 = p.s.bind_mw(p.b.qp, mw.value.handle, 43, SEND_SIGNALED, 0, 0, 0, 0);
  ASSERT_TRUE(r2.ok()) << r2.msg;
  p.s.run();
  wc = p.poll(p.b.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_TRUE(p.s.dereg_mr(other.handle).ok());
  w.rkey = r2.value;
  EXPECT_EQ(p.send_one(p.a, w).status, WC_REM_ACCESS_ERR);
  // minimal: no memory windows
  Pair m("minimal");
  EXPECT_EQ(m.s.alloc_mw(m.b.pd, MW_TYPE_1).err, EOPNOTSUPP);
}

TEST(TransportMemOps, MwType2BindInvalidateAndSendWithInv) {
  Pair p("rxe", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_MW_BIND);
  auto mw = p.s.alloc_mw(p.b.pd, MW_TYPE_2).value;
  EXPECT_EQ(mw.state, "free");
  SendWr bind; bind.wr_id = 3; bind.opcode = WR_BIND_MW; bind.send_flags = SEND_SIGNALED; bind.mw = mw.handle;
  bind.bind_rkey = inc(mw.rkey); bind.bind_mr = p.b.mr.handle; bind.bind_addr = p.b.buf.addr; bind.bind_length = 256;
  bind.bind_access = ACCESS_REMOTE_WRITE;
  EXPECT_EQ(p.send_one(p.b, bind).status, WC_SUCCESS);
  auto info = *p.s.mw_info(mw.handle);
  EXPECT_EQ(info.qp, p.b.qp);
  EXPECT_EQ(info.rkey, inc(mw.rkey));
  // binding again while VALID -> MW_BIND_ERR (o10-37.2.30), QP to error
  {
    Pair q("rxe", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_MW_BIND);
    auto m2 = q.s.alloc_mw(q.b.pd, MW_TYPE_2).value;
    SendWr b2 = bind; b2.mw = m2.handle; b2.bind_rkey = inc(m2.rkey); b2.bind_mr = q.b.mr.handle; b2.bind_addr = q.b.buf.addr;
    SendWr b3 = b2; b3.wr_id = 4; b3.bind_rkey = inc(b2.bind_rkey);
    ASSERT_TRUE(q.s.post_send(q.b.qp, {b2, b3}).ok());
    q.s.run();
    auto w2 = q.poll(q.b.scq);
    ASSERT_EQ(w2.size(), 2u);
    EXPECT_EQ(w2[0].status, WC_SUCCESS);
    EXPECT_EQ(w2[1].status, WC_MW_BIND_ERR);
    EXPECT_EQ(q.state(q.b), QPS_ERR);
    // MR without MW_BIND
    Pair r;
    auto m3 = r.s.alloc_mw(r.b.pd, MW_TYPE_2).value;
    SendWr b4 = bind; b4.mw = m3.handle; b4.bind_rkey = m3.rkey; b4.bind_mr = r.b.mr.handle; b4.bind_addr = r.b.buf.addr;
    ASSERT_TRUE(r.s.post_send(r.b.qp, {b4}).ok());
    r.s.run();
    auto w3 = r.poll(r.b.scq);
    ASSERT_EQ(w3.size(), 1u);
    EXPECT_EQ(w3[0].status, WC_MW_BIND_ERR);
  }
  // SEND_WITH_INV from a invalidates b's window
  ASSERT_TRUE(p.recv(p.b, 8192, 64, 9).ok());
  fill(p.s, p.a.buf.addr, 16, 0x11);
  SendWr s; s.wr_id = 8; s.opcode = WR_SEND_WITH_INV; s.send_flags = SEND_SIGNALED; s.imm_data = info.rkey;
  s.sg_list = {{p.a.buf.addr, 16, p.a.mr.lkey}};
  ASSERT_TRUE(p.s.post_send(p.a.qp, {s}).ok());
  p.s.run();
  auto rw = p.poll(p.b.rcq);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, WC_SUCCESS);
  EXPECT_EQ(rw[0].wc_flags & WC_WITH_INV, (uint32_t)WC_WITH_INV);
  EXPECT_EQ(rw[0].invalidated_rkey, info.rkey);
  EXPECT_EQ(p.s.mw_info(mw.handle)->state, "free");
  auto sw = p.poll(p.a.scq);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, WC_SUCCESS);
  EXPECT_EQ(sw[0].opcode, WC_SEND);
  EXPECT_TRUE(p.s.dereg_mr(p.b.mr.handle).err == EBUSY ? false : true);   // window released the MR
}

TEST(TransportMemOps, SendWithInvBadKeyIsClassJ) {
  Pair p;
  ASSERT_TRUE(p.recv(p.b, 8192, 64, 9).ok());
  SendWr s; s.wr_id = 8; s.opcode = WR_SEND_WITH_INV; s.send_flags = SEND_SIGNALED; s.imm_data = 0x00ffff00;
  s.sg_list = {{p.a.buf.addr, 16, p.a.mr.lkey}};
  ASSERT_TRUE(p.s.post_send(p.a.qp, {s}).ok());
  p.s.run();
  auto sw = p.poll(p.a.scq);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, WC_SUCCESS);            // the AETH stays ACK
  auto rw = p.poll(p.b.rcq);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, WC_REM_INV_REQ_ERR);
  EXPECT_EQ(p.state(p.b), QPS_ERR);
}
