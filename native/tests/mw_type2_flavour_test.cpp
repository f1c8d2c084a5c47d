// Type 2A and 2B memory windows (IBA 10.6.7; kernel ib_verbs.h IB_DEVICE_MEM_WINDOW_TYPE_2A / _2B and the commit
// that added them: "Type 2A - associated with QPN only, Type 2B - associated with PD and QPN"). rxe and mlx5 give
// 2B; the ib2a profile (modelled, no driver advertises 2A) gives 2A. ibv_mw_type has one IBV_MW_TYPE_2: which
// flavour a window is comes from the device.
//   bind:       2B needs the binding QP's PD to be the window's (C10-72, rxe_check_bind_mw); 2A does not
//   access:     2B checks the requester QP and its PD (the PD check cannot fail once the bind passed C10-72);
//               2A the QP only, so a window bound from a QP of another PD is reachable through that QP
//   invalidate: 2B needs the invalidating QP's PD to be the window's (as for MRs: not on rxe, invalidate_checks_pd);
//               2A has no PD to check
#include "core_fixture.h"

using namespace vlt;

namespace {

uint32_t inc(uint32_t k) { return (k & ~0xffu) | ((k + 1) & 0xff); }

// b's device gets a second PD with an MR over b's buffer and a type 2 window in it; b's QP (of b's first PD) binds it
struct OtherPdWindow {
  Pair p;
  Handle pd2 = 0;
  MrInfo mr2;
  MwInfo mw;
  explicit OtherPdWindow(const std::string& prof) : p(prof) {
    pd2 = p.s.alloc_pd(p.b.dev).value;
    mr2 = p.s.reg_mr(pd2, p.b.buf.addr, 8192, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_MW_BIND).value;
    auto m = p.s.alloc_mw(pd2, MW_TYPE_2);
    EXPECT_TRUE(m.ok()) << m.msg;
    mw = m.value;
  }
  Wc bind() {
    SendWr b; b.wr_id = 7; b.opcode = WR_BIND_MW; b.send_flags = SEND_SIGNALED; b.mw = mw.handle;
    b.bind_rkey = inc(mw.rkey); b.bind_mr = mr2.handle; b.bind_addr = p.b.buf.addr; b.bind_length = 256;
    b.bind_access = ACCESS_REMOTE_WRITE;
    return p.send_one(p.b, b);
  }
  uint32_t rkey() { return p.s.mw_info(mw.handle)->rkey; }
};

}  // namespace

TEST(MwType2Flavour, ProfilesAdvertiseOneFlavour) {
  for (const auto& pr : builtin_profiles()) {
    const bool a = pr.device_cap_flags & DEVICE_MEM_WINDOW_TYPE_2A, b = pr.device_cap_flags & DEVICE_MEM_WINDOW_TYPE_2B;
    EXPECT_FALSE(a && b) << pr.name;
    if (pr.name == "ib2a") { EXPECT_TRUE(a); }
    if (pr.name == "rxe" || pr.name == "cx") { EXPECT_TRUE(b) << pr.name; }
  }
}

TEST(MwType2Flavour, Type2BRefusesABindThroughAQpOfAnotherPd) {
  OtherPdWindow t("cx");
  Wc wc = t.bind();
  EXPECT_EQ(wc.status, WC_MW_BIND_ERR);                 // C10-72
  EXPECT_EQ(t.p.state(t.p.b), QPS_ERR);
  EXPECT_EQ(t.p.s.mw_info(t.mw.handle)->state, "free");
}

TEST(MwType2Flavour, Type2ABindsAndGrantsAccessThroughAQpOfAnotherPd) {
  OtherPdWindow t("ib2a");
  EXPECT_EQ(t.bind().status, WC_SUCCESS);
  auto info = *t.p.s.mw_info(t.mw.handle);
  EXPECT_EQ(info.state, "valid");
  EXPECT_EQ(info.qp, t.p.b.qp);
  // a WRITE through the window arrives on b's QP, whose PD is not the window's: 2A checks the QP only
  pattern(t.p.s, t.p.a.buf.addr, 64, 2);
  SendWr w; w.wr_id = 1; w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED;
  w.sg_list = {{t.p.a.buf.addr, 64, t.p.a.mr.lkey}}; w.remote_addr = t.p.b.buf.addr + 16; w.rkey = t.rkey();
  EXPECT_EQ(t.p.send_one(t.p.a, w).status, WC_SUCCESS);
  EXPECT_EQ(read(t.p.s, t.p.b.buf.addr + 16, 64), read(t.p.s, t.p.a.buf.addr, 64));
  // SEND_WITH_INV of the window, received on that QP: 2A has no PD to check, the window is FREE
  ASSERT_TRUE(t.p.recv(t.p.b, 4096, 64, 5).ok());
  SendWr inv; inv.wr_id = 2; inv.opcode = WR_SEND_WITH_INV; inv.send_flags = SEND_SIGNALED;
  inv.sg_list = {{t.p.a.buf.addr, 8, t.p.a.mr.lkey}}; inv.imm_data = t.rkey();
  EXPECT_EQ(t.p.send_one(t.p.a, inv).status, WC_SUCCESS);
  EXPECT_EQ(t.p.s.mw_info(t.mw.handle)->state, "free");
}

// LOCAL_INV of a bound type 2 window from a QP of another PD (a second connected pair whose b-side QP is in pd2)
static Wc local_inv_from_other_pd(const std::string& prof, bool* freed) {
  Pair p(prof);
  auto mw = p.s.alloc_mw(p.b.pd, MW_TYPE_2).value;
  auto mr = p.s.reg_mr(p.b.pd, p.b.buf.addr, 8192, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_MW_BIND).value;
  SendWr b; b.wr_id = 7; b.opcode = WR_BIND_MW; b.send_flags = SEND_SIGNALED; b.mw = mw.handle; b.bind_rkey = inc(mw.rkey);
  b.bind_mr = mr.handle; b.bind_addr = p.b.buf.addr; b.bind_length = 256; b.bind_access = ACCESS_REMOTE_WRITE;
  EXPECT_EQ(p.send_one(p.b, b).status, WC_SUCCESS);
  Side x = p.b, y = p.a;
  x.pd = p.s.alloc_pd(p.b.dev).value;
  for (Side* s : {&x, &y}) {
    QpInitAttr ia; ia.pd = s->pd; ia.send_cq = s->scq; ia.recv_cq = s->rcq;
    auto q = p.s.create_qp(s->pd, ia);
    EXPECT_TRUE(q.ok()) << q.msg;
    s->qp = q.value.handle; s->qpn = q.value.qp_num;
  }
  p.connect(x, y, 500, 600);
  p.connect(y, x, 600, 500);
  SendWr inv; inv.wr_id = 8; inv.opcode = WR_LOCAL_INV; inv.send_flags = SEND_SIGNALED; inv.imm_data = p.s.mw_info(mw.handle)->rkey;
  Wc wc = p.send_one(x, inv);
  *freed = p.s.mw_info(mw.handle)->state == "free";
  return wc;
}

TEST(MwType2Flavour, Type2BInvalidateChecksThePdExceptOnRxe) {
  bool freed = false;
  Wc cx = local_inv_from_other_pd("cx", &freed);
  EXPECT_NE(cx.status, WC_SUCCESS);
  EXPECT_FALSE(freed);
  ASSERT_NE(cx.rule, nullptr);
  EXPECT_STREQ(cx.rule, "invalidateChecksPd");
  Wc rxe = local_inv_from_other_pd("rxe", &freed);            // rxe_invalidate_mw: no PD check
  EXPECT_EQ(rxe.status, WC_SUCCESS);
  EXPECT_TRUE(freed);
  Wc a2 = local_inv_from_other_pd("ib2a", &freed);            // 2A: no PD association
  EXPECT_EQ(a2.status, WC_SUCCESS);
  EXPECT_TRUE(freed);
  EXPECT_EQ(a2.rule, nullptr);
}
