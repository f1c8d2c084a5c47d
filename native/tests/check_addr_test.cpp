// The receive-side address check of connected QPs (native/src/core/check_addr.cpp, rxe_recv.c check_addr), in one
// session: a third device's QP that knows the right QPN and PSN cannot write into a QP connected to another device.
// (Over UDP: UdpTransport.SpoofedWriteFromAnotherSourceIsDropped.)
#include "core_fixture.h"

using namespace vlt;

TEST(CheckAddr, RcPacketFromADeviceThatIsNotThePeerIsDropped) {
  Pair p;
  fill(p.s, p.b.buf.addr, 64, 0);
  Side x;                                          // a third device, its QP aimed at b's QP with b's expected PSN
  x.dev = p.s.create_device("rxe").value;
  x.pd = p.s.alloc_pd(x.dev).value;
  x.scq = x.rcq = p.s.create_cq(x.dev, 64).value;
  QpInitAttr ia;
  ia.pd = x.pd; ia.send_cq = x.scq; ia.recv_cq = x.rcq; ia.qp_type = QPT_RC;
  auto q = p.s.create_qp(x.pd, ia);
  ASSERT_TRUE(q.ok()) << q.msg;
  x.qp = q.value.handle; x.qpn = q.value.qp_num;
  x.buf = p.s.alloc_buffer(4096).value;
  x.mr = p.s.reg_mr(x.pd, x.buf.addr, 4096, ACCESS_LOCAL_WRITE).value;
  pattern(p.s, x.buf.addr, 64, 9);
  p.connect(x, p.b, 100, 200);                     // b expects PSN 100 from a: x sends PSN 100 too
  p.s.drain_events();
  ASSERT_TRUE(p.write(x, p.b, 0, 0, 64, 5, WR_RDMA_WRITE, 0).ok());
  p.s.run();
  std::string why;
  for (auto& e : p.s.drain_events())
    if (e.kind == EventKind::PacketDropped && e.obj == p.b.qp) why = e.text;
  EXPECT_NE(why.find("address check"), std::string::npos) << why;
  EXPECT_EQ(read(p.s, p.b.buf.addr, 64), std::vector<uint8_t>(64, 0));
  EXPECT_EQ(p.s.query_qp(p.b.qp)->attr.qp_state, uint32_t(QPS_RTS));
  // b's real peer still writes with PSN 100: the spoofed packet consumed nothing
  pattern(p.s, p.a.buf.addr, 64, 3);
  ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 64, 6).ok());
  p.s.run();
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, uint32_t(WC_SUCCESS));
  EXPECT_EQ(read(p.s, p.b.buf.addr, 64), read(p.s, p.a.buf.addr, 64));
}
