// The GSI QP (QP1): a kernel-only UD QP with the fixed number 1, through which the RDMA CM's MADs travel
// (IBA 13.5.1; rxe gives IB_QPT_GSI QP number 1). Lab 4 sends CM REQ / REP / RTU through it.
#include "core_fixture.h"

namespace vlt {
namespace {
constexpr uint32_t kGsiQkey = 0x80010000;   // IBA 13.5.1: the well-known Q_Key of QP1

Handle gsi(Session& s, Side& x) {
  QpInitAttr ia; ia.pd = x.pd; ia.send_cq = x.scq; ia.recv_cq = x.rcq; ia.qp_type = QPT_UD; ia.gsi = true;
  ia.cap.max_send_wr = 4; ia.cap.max_recv_wr = 4;
  auto q = s.create_qp(x.pd, ia);
  EXPECT_TRUE(q.ok()) << q.msg;
  EXPECT_EQ(q.value.qp_num, 1u);
  QpAttr at; at.qp_state = QPS_INIT; at.qkey = kGsiQkey;
  EXPECT_TRUE(s.modify_qp(q.value.handle, at, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_QKEY).ok());
  at.qp_state = QPS_RTR;
  EXPECT_TRUE(s.modify_qp(q.value.handle, at, QP_STATE).ok());
  at.qp_state = QPS_RTS;
  EXPECT_TRUE(s.modify_qp(q.value.handle, at, QP_STATE | QP_SQ_PSN).ok());
  return q.value.handle;
}
}  // namespace

TEST(CoreGsi, OneQp1PerDeviceUdOnly) {
  Pair p("rxe", QPT_UD);
  QpInitAttr ia; ia.pd = p.a.pd; ia.send_cq = p.a.scq; ia.recv_cq = p.a.rcq; ia.qp_type = QPT_RC; ia.gsi = true;
  EXPECT_EQ(p.s.create_qp(p.a.pd, ia).err, EINVAL);            // GSI is UD
  Handle g = gsi(p.s, p.a);
  ia.qp_type = QPT_UD;
  EXPECT_EQ(p.s.create_qp(p.a.pd, ia).err, EEXIST);            // one QP1 per device
  ia.gsi = false;
  auto other = p.s.create_qp(p.a.pd, ia);
  ASSERT_TRUE(other.ok());
  EXPECT_GT(other.value.qp_num, 1u);                           // ordinary QPs keep their numbers
  gsi(p.s, p.b);                                               // the other device has its own QP1
  ASSERT_TRUE(p.s.destroy_qp(g).ok());
  ia.gsi = true;
  EXPECT_TRUE(p.s.create_qp(p.a.pd, ia).ok());                 // QP1 is free again once destroyed
}

TEST(CoreGsi, A256ByteMadFromQp1ToQp1) {
  Pair p("rxe", QPT_UD);
  Handle ga = gsi(p.s, p.a), gb = gsi(p.s, p.b);
  RecvWr r; r.wr_id = 9; r.sg_list = {{p.b.buf.addr, 40 + 256, p.b.mr.lkey}};
  ASSERT_TRUE(p.s.post_recv(gb, {r}).ok());
  pattern(p.s, p.a.buf.addr, 256, 3);
  auto ah = p.s.create_ah(p.a.pd, p.b.dev);
  ASSERT_TRUE(ah.ok());
  SendWr w; w.wr_id = 1; w.opcode = WR_SEND; w.send_flags = SEND_SIGNALED; w.sg_list = {{p.a.buf.addr, 256, p.a.mr.lkey}};
  w.ah = ah.value; w.remote_qpn = 1; w.remote_qkey = kGsiQkey;
  ASSERT_TRUE(p.s.post_send(ga, {w}).ok());
  p.s.run();
  auto wc = p.poll(p.b.rcq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(wc[0].src_qp, 1u);                                 // DETH source QP: the sender's QP1
  EXPECT_EQ(wc[0].qp_num, 1u);
  EXPECT_EQ(wc[0].byte_len, 40u + 256u);
  EXPECT_EQ(read(p.s, p.b.buf.addr + 40, 256), read(p.s, p.a.buf.addr, 256));
  // a MAD with another Q_Key is dropped at QP1 (the receive stays posted)
  w.remote_qkey = 0x11111111;
  ASSERT_TRUE(p.s.post_send(ga, {w}).ok());
  p.s.run();
  EXPECT_TRUE(p.poll(p.b.rcq).empty());
}
}  // namespace vlt
