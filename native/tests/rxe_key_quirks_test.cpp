// Keys, registration and queue caps per profile where Linux rxe and the IBA / ConnectX differ (issue 22).
#include "core_fixture.h"

using namespace vlt;

namespace {
bool is_rxe(const char* prof) { return std::string(prof) == "rxe"; }

// a fast-reg MR of `pd` mapped over `buf` and registered with `access` through `qp`; returns the REG_MR status
uint32_t fast_reg(Pair& p, Handle qp, Handle scq, Handle pd, const BufferInfo& buf, uint32_t access, MrInfo& out) {
  out = p.s.alloc_mr(pd, 4).value;
  EXPECT_EQ(p.s.map_mr_sg(out.handle, {{buf.addr, 4096, 0}}).value, 1u);
  SendWr reg; reg.wr_id = 77; reg.opcode = WR_REG_MR; reg.send_flags = SEND_SIGNALED; reg.reg_mr = out.handle;
  reg.reg_key = (out.rkey & ~0xffu) | 0x42; reg.reg_access = access;
  EXPECT_TRUE(p.s.post_send(qp, {reg}).ok());
  p.s.run();
  auto wc = p.poll(scq);
  EXPECT_EQ(wc.size(), 1u);
  out = *p.s.mr_info(out.handle);
  return wc.empty() ? 0xffffffffu : wc[0].status;
}
}  // namespace

// rdma-core providers/rxe rxe_bind_mw (and mlx5_bind_mw) refuse ZERO_BASED before posting: EINVAL, nothing queued.
TEST(RxeKeyQuirks, Type1BindZeroBasedRefusedAtTheVerb) {
  for (const char* prof : {"rxe", "cx"}) {
    Pair p(prof, QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_MW_BIND);
    auto w = p.s.alloc_mw(p.b.pd, MW_TYPE_1).value;
    auto r = p.s.bind_mw(p.b.qp, w.handle, 7, SEND_SIGNALED, p.b.mr.handle, p.b.buf.addr, 64, ACCESS_REMOTE_WRITE | ACCESS_ZERO_BASED);
    EXPECT_EQ(r.err, EINVAL) << prof;
    EXPECT_EQ(p.s.bind_mw(p.b.qp, w.handle, 8, SEND_SIGNALED, 0, p.b.buf.addr, 0, ACCESS_REMOTE_WRITE).err, EINVAL) << prof;   // address without an MR
    p.s.run();
    EXPECT_TRUE(p.poll(p.b.scq).empty()) << prof;
    EXPECT_EQ(p.state(p.b), QPS_RTS) << prof;
  }
}

// rxe_rereg_user_mr: PD / access only, keys kept; cx: new key byte.
TEST(RxeKeyQuirks, ReregKeys) {
  for (const char* prof : {"rxe", "cx"}) {
    Pair p(prof);
    auto before = p.b.mr;
    auto r = p.s.rereg_mr(before.handle, 4, 0, 0, 0, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ);
    ASSERT_TRUE(r.ok()) << r.msg;
    EXPECT_EQ(r.value.lkey == before.lkey, is_rxe(prof)) << prof;
    EXPECT_EQ(r.value.rkey == before.rkey, is_rxe(prof)) << prof;
    EXPECT_EQ(r.value.access, uint32_t(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ)) << prof;
    // translation: rxe EOPNOTSUPP, cx accepts
    auto t = p.s.rereg_mr(before.handle, 1, 0, p.b.buf.addr, 4096, 0);
    EXPECT_EQ(t.err, is_rxe(prof) ? EOPNOTSUPP : 0) << prof;
  }
}

// IBA 10.6.7.2.6; rxe_dereg_mr returns EINVAL, the cx profile EBUSY.
TEST(RxeKeyQuirks, DeregWithBoundWindow) {
  for (const char* prof : {"rxe", "cx"}) {
    Pair p(prof, QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_MW_BIND);
    auto w = p.s.alloc_mw(p.b.pd, MW_TYPE_1).value;
    ASSERT_TRUE(p.s.bind_mw(p.b.qp, w.handle, 7, SEND_SIGNALED, p.b.mr.handle, p.b.buf.addr, 64, ACCESS_REMOTE_WRITE).ok());
    p.s.run();
    EXPECT_EQ(p.s.dereg_mr(p.b.mr.handle).err, is_rxe(prof) ? EINVAL : EBUSY) << prof;
    ASSERT_TRUE(p.s.dealloc_mw(w.handle).ok());
    EXPECT_TRUE(p.s.dereg_mr(p.b.mr.handle).ok()) << prof;
  }
}

// core ib_uverbs_reg_mr: iova and address at different page offsets -> EINVAL on every device.
TEST(RxeKeyQuirks, RegMrIovaPageOffset) {
  Session s;
  for (const char* prof : {"rxe", "cx"}) {
    Handle d = s.create_device(prof).value, pd = s.alloc_pd(d).value;
    auto b = s.alloc_buffer(8192).value;
    EXPECT_EQ(s.reg_mr(pd, b.addr + 16, 4096, ACCESS_LOCAL_WRITE, 0x10000000ull).err, EINVAL) << prof;
    auto ok = s.reg_mr(pd, b.addr + 16, 4096, ACCESS_LOCAL_WRITE, 0x10000010ull);
    ASSERT_TRUE(ok.ok()) << ok.msg;
    EXPECT_EQ(ok.value.iova, 0x10000010ull);
  }
}

// rxe_req.c: copy_data's -EINVAL (bad lkey, PD mismatch, range) -> LOC_QP_OP_ERR on rxe; LOC_PROT_ERR on cx.
TEST(RxeKeyQuirks, LocalKeyFailureStatus) {
  for (const char* prof : {"rxe", "cx"}) {
    const uint32_t want = is_rxe(prof) ? WC_LOC_QP_OP_ERR : WC_LOC_PROT_ERR;
    for (int k = 0; k < 3; k++) {
      Pair p(prof);
      Handle pd2 = p.s.alloc_pd(p.a.dev).value;
      auto other = p.s.reg_mr(pd2, p.a.buf.addr, 4096, ACCESS_LOCAL_WRITE).value;
      SendWr w; w.wr_id = 1; w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED;
      w.remote_addr = p.b.buf.addr; w.rkey = p.b.mr.rkey;
      if (k == 0) w.sg_list = {{p.a.buf.addr, 64, p.a.mr.lkey ^ 1}};
      if (k == 1) w.sg_list = {{p.a.buf.addr, 64, other.lkey}};
      if (k == 2) w.sg_list = {{p.a.buf.addr + 65536 - 16, 64, p.a.mr.lkey}};
      Wc c = p.send_one(p.a, w);
      EXPECT_EQ(c.status, want) << prof << " case " << k;
      EXPECT_STREQ(c.rule, "localKeyErrorStatus") << prof;   // the completion names the rule that decided it
      EXPECT_EQ(p.state(p.a), QPS_ERR) << prof;
    }
    // UD gathers the same way
    Pair u(prof, QPT_UD);
    Handle ah = u.s.create_ah(u.a.pd, u.b.dev).value;
    SendWr w; w.wr_id = 2; w.opcode = WR_SEND; w.send_flags = SEND_SIGNALED; w.ah = ah; w.remote_qpn = u.b.qpn;
    w.remote_qkey = 0x11111111; w.sg_list = {{u.a.buf.addr, 64, u.a.mr.lkey ^ 1}};
    EXPECT_EQ(u.send_one(u.a, w).status, want) << prof << " UD";
  }
}

// rxe_resp.c send_data_in: copy_data -EINVAL -> malformed WQE (NAK remote op error, LOC_QP_OP_ERR); cx: NAK invalid
// request, LOC_LEN_ERR.
TEST(RxeKeyQuirks, SendLongerThanReceive) {
  for (const char* prof : {"rxe", "cx"}) {
    Pair p(prof);
    ASSERT_TRUE(p.recv(p.b, 0, 16, 60).ok());
    p.s.drain_events();
    SendWr w; w.wr_id = 1; w.opcode = WR_SEND; w.send_flags = SEND_SIGNALED; w.sg_list = {{p.a.buf.addr, 64, p.a.mr.lkey}};
    EXPECT_EQ(p.send_one(p.a, w).status, is_rxe(prof) ? WC_REM_OP_ERR : WC_REM_INV_REQ_ERR) << prof;
    uint8_t nak = 0;
    for (auto& e : p.s.drain_events())
      if (e.kind == EventKind::PacketSent && e.device == p.b.dev && e.pkt.size() > 12 && e.pkt[0] == 0x11) nak = e.pkt[12];
    EXPECT_EQ(nak, is_rxe(prof) ? 0x63 : 0x61) << prof;
    auto r = p.poll(p.b.rcq);
    ASSERT_EQ(r.size(), 1u) << prof;
    EXPECT_EQ(r[0].status, is_rxe(prof) ? WC_LOC_QP_OP_ERR : WC_LOC_LEN_ERR) << prof;
    EXPECT_STREQ(r[0].rule, "recvTooSmallIsMalformed") << prof;
    EXPECT_EQ(p.state(p.b), QPS_ERR) << prof;
  }
  // UC on rxe: the receive completes LOC_QP_OP_ERR and the QP goes to ERR (class A without the NAK)
  Pair u("rxe", QPT_UC);
  ASSERT_TRUE(u.recv(u.b, 0, 16, 60).ok());
  SendWr w; w.wr_id = 1; w.opcode = WR_SEND; w.send_flags = SEND_SIGNALED; w.sg_list = {{u.a.buf.addr, 64, u.a.mr.lkey}};
  EXPECT_EQ(u.send_one(u.a, w).status, WC_SUCCESS);
  auto r = u.poll(u.b.rcq);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, WC_LOC_QP_OP_ERR);
  EXPECT_EQ(u.state(u.b), QPS_ERR);
}

// rxe_invalidate_mr has no PD check; the cx profile refuses a LOCAL_INV from a QP of another PD.
TEST(RxeKeyQuirks, LocalInvFromAnotherPd) {
  for (const char* prof : {"rxe", "cx"}) {
    Pair p(prof);
    Handle pd2 = p.s.alloc_pd(p.a.dev).value;
    Handle cq2 = p.s.create_cq(p.a.dev, 16).value;
    QpInitAttr ia; ia.pd = pd2; ia.send_cq = cq2; ia.recv_cq = cq2;
    Side c = p.a;
    c.pd = pd2; c.qp = p.s.create_qp(pd2, ia).value.handle; c.scq = c.rcq = cq2;
    Side d = p.b;
    ia.pd = p.b.pd; ia.send_cq = ia.recv_cq = p.b.scq;
    auto dq = p.s.create_qp(p.b.pd, ia).value;
    d.qp = dq.handle; d.qpn = dq.qp_num;
    c.qpn = p.s.query_qp(c.qp)->qp_num;
    p.connect(c, d, 1000, 2000);
    p.connect(d, c, 2000, 1000);
    MrInfo f;
    ASSERT_EQ(fast_reg(p, c.qp, cq2, pd2, p.a.buf, ACCESS_LOCAL_WRITE, f), uint32_t(WC_SUCCESS)) << prof;
    SendWr inv; inv.wr_id = 3; inv.opcode = WR_LOCAL_INV; inv.send_flags = SEND_SIGNALED; inv.imm_data = f.rkey;
    Wc done = p.send_one(p.a, inv);
    EXPECT_EQ(done.status, is_rxe(prof) ? WC_SUCCESS : WC_LOC_QP_OP_ERR) << prof;
    EXPECT_STREQ(done.rule, "invalidateChecksPd") << prof;
    EXPECT_EQ(p.s.mr_info(f.handle)->state, is_rxe(prof) ? "free" : "valid") << prof;
  }
}

// rxe_reg_fast_mr takes any access; the cx profile refuses REMOTE_WRITE without LOCAL_WRITE.
TEST(RxeKeyQuirks, RegMrWrRemoteWriteWithoutLocalWrite) {
  for (const char* prof : {"rxe", "cx"}) {
    Pair p(prof);
    MrInfo f;
    EXPECT_EQ(fast_reg(p, p.a.qp, p.a.scq, p.a.pd, p.a.buf, ACCESS_REMOTE_WRITE, f), is_rxe(prof) ? WC_SUCCESS : WC_LOC_QP_OP_ERR) << prof;
    EXPECT_EQ(f.state, is_rxe(prof) ? "valid" : "free") << prof;
  }
}

// rxe_qp_init_req / rxe_qp_init_resp: depths 2^n - 1, max_send_sge and max_inline_data from one WQE size; the caps
// come back in create_qp's reply and bound the posts. The cx profile grants exactly what was asked.
TEST(RxeKeyQuirks, QpCapsGranted) {
  for (const char* prof : {"rxe", "cx"}) {
    Pair p(prof);
    QpInitAttr ia; ia.pd = p.a.pd; ia.send_cq = ia.recv_cq = p.a.scq;
    ia.cap.max_send_wr = 4; ia.cap.max_recv_wr = 4; ia.cap.max_send_sge = 1; ia.cap.max_recv_sge = 1; ia.cap.max_inline_data = 64;
    auto q = p.s.create_qp(p.a.pd, ia);
    ASSERT_TRUE(q.ok()) << q.msg;
    const QpCap& g = q.value.init.cap;
    EXPECT_EQ(g.max_send_wr, is_rxe(prof) ? 7u : 4u) << prof;
    EXPECT_EQ(g.max_recv_wr, is_rxe(prof) ? 7u : 4u) << prof;
    EXPECT_EQ(g.max_send_sge, is_rxe(prof) ? 4u : 1u) << prof;
    EXPECT_EQ(g.max_recv_sge, 1u) << prof;
    EXPECT_EQ(g.max_inline_data, 64u) << prof;
    EXPECT_EQ(p.s.query_qp(q.value.handle)->init.cap.max_send_wr, g.max_send_wr) << prof;
    // sge wins: 8 SGEs -> 128 bytes inline on rxe
    ia.cap.max_send_sge = 8; ia.cap.max_inline_data = 0;
    EXPECT_EQ(p.s.create_qp(p.a.pd, ia).value.init.cap.max_inline_data, is_rxe(prof) ? 128u : 0u) << prof;
    // the 5th WR and a WR of 3 SGEs: accepted on rxe, refused with their bad_wr index on cx
    Side x = p.a;
    x.qp = q.value.handle; x.qpn = q.value.qp_num;
    Side y = p.b;
    ia.pd = p.b.pd; ia.send_cq = ia.recv_cq = p.b.scq; ia.cap = QpCap{};
    auto yq = p.s.create_qp(p.b.pd, ia).value;
    y.qp = yq.handle; y.qpn = yq.qp_num;
    p.connect(x, y, 1, 2);
    p.connect(y, x, 2, 1);
    std::vector<SendWr> five(5);
    for (size_t i = 0; i < 5; i++) {
      five[i].wr_id = i + 1; five[i].opcode = WR_RDMA_WRITE; five[i].send_flags = SEND_SIGNALED;
      five[i].sg_list = {{x.buf.addr, 8, x.mr.lkey}}; five[i].remote_addr = y.buf.addr; five[i].rkey = y.mr.rkey;
    }
    auto r = p.s.post_send(x.qp, five);
    if (is_rxe(prof)) EXPECT_TRUE(r.ok()) << r.msg;
    else { EXPECT_EQ(r.err, ENOMEM); EXPECT_EQ(r.bad_wr, 4u); }
    p.s.run();
    p.poll(p.a.scq);
    SendWr three = five[0];
    three.sg_list = {{x.buf.addr, 8, x.mr.lkey}, {x.buf.addr + 8, 8, x.mr.lkey}, {x.buf.addr + 16, 8, x.mr.lkey}};
    r = p.s.post_send(x.qp, {three});
    if (is_rxe(prof)) EXPECT_TRUE(r.ok()) << r.msg;
    else { EXPECT_EQ(r.err, EINVAL); EXPECT_EQ(r.bad_wr, 0u); }
  }
}
