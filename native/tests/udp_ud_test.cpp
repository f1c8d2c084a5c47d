// UD over the UDP transport: address handles that name the remote host by GID (Session::create_ah_remote), the
// datagram's real IP header in the receive buffer's 40-byte GRH slot, destroy_ah, and the refusals.
#include "udp_fixture.h"

using namespace vlu;

namespace {
// A UD QP on h (INIT with the Q_Key, RTR, RTS); returns its handle and QPN.
std::pair<Handle, uint32_t> ud_qp(Host& h) {
  QpInitAttr ia;
  ia.pd = h.pd; ia.send_cq = h.scq; ia.recv_cq = h.rcq; ia.qp_type = QPT_UD;
  auto q = h.s.create_qp(h.pd, ia);
  EXPECT_TRUE(q.ok()) << q.msg;
  QpAttr at;
  at.qp_state = QPS_INIT; at.qkey = 0x11111111;
  EXPECT_TRUE(h.s.modify_qp(q.value.handle, at, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_QKEY).ok());
  at.qp_state = QPS_RTR;
  EXPECT_TRUE(h.s.modify_qp(q.value.handle, at, QP_STATE).ok());
  at.qp_state = QPS_RTS;
  EXPECT_TRUE(h.s.modify_qp(q.value.handle, at, QP_STATE | QP_SQ_PSN).ok());
  return {q.value.handle, q.value.qp_num};
}
}  // namespace

TEST(UdpUd, SendThroughAnAhByGidWithTheRealIpHeaderInTheGrh) {
  Host a(1), b(2);
  ASSERT_TRUE(a.open("127.0.0.1", 0, 0));
  ASSERT_TRUE(b.open("127.0.0.1", 0, a.t->port()));
  a.t->set_peer_port(b.t->port());
  auto [qa, na] = ud_qp(a);
  auto [qb, nb] = ud_qp(b);
  const uint8_t zero[16] = {};
  EXPECT_EQ(a.s.create_ah_remote(a.pd, zero, 1).err, EINVAL);            // the zero GID names no host
  EXPECT_EQ(a.s.create_ah_remote(a.pd, b.gid(), 7).err, EINVAL);         // outside the GID table
  EXPECT_EQ(a.s.create_ah_remote(999, b.gid(), 1).err, ENOENT);
  auto ah = a.s.create_ah_remote(a.pd, b.gid(), 1);
  ASSERT_TRUE(ah.ok()) << ah.msg;
  RecvWr r;
  r.wr_id = 7; r.sg_list = {{b.buf.addr, 40 + 500, b.mr.lkey}};
  ASSERT_TRUE(b.s.post_recv(qb, {r}).ok());                               // on the UD QP (b.recv posts to b's RC QP)
  a.pattern(4096, 500, 3);
  SendWr w;
  w.wr_id = 8; w.opcode = WR_SEND; w.send_flags = SEND_SIGNALED;
  w.sg_list = {{a.buf.addr + 4096, 500, a.mr.lkey}};
  w.ah = ah.value; w.remote_qpn = nb; w.remote_qkey = 0x11111111;
  ASSERT_TRUE(a.s.post_send(qa, {w}).ok());
  std::vector<Wc> rw, sw;
  ASSERT_TRUE(pump({&a, &b}, [&] { wait_cq(b, b.rcq, rw, 1)(); wait_cq(a, a.scq, sw, 1)(); return rw.size() >= 1 && sw.size() >= 1; }, 10000));
  EXPECT_EQ(sw[0].status, WC_SUCCESS);
  EXPECT_EQ(rw[0].status, WC_SUCCESS);
  EXPECT_EQ(rw[0].byte_len, 540u);
  EXPECT_TRUE(rw[0].wc_flags & WC_GRH);
  EXPECT_EQ(rw[0].src_qp, na);
  EXPECT_EQ(b.bytes(40, 500), a.bytes(4096, 500));
  auto grh = b.bytes(0, 40);
  EXPECT_EQ(grh[20], 0x45);                                               // IPv4 in the slot's last 20 bytes (rxe)
  EXPECT_EQ(0, std::memcmp(grh.data() + 32, a.gid() + 12, 4));            // source: a's address
  EXPECT_EQ(0, std::memcmp(grh.data() + 36, b.gid() + 12, 4));            // destination: b's
  EXPECT_EQ(a.s.dealloc_pd(a.pd).err, EBUSY);
  EXPECT_TRUE(a.s.destroy_ah(ah.value).ok());
  EXPECT_EQ(a.s.destroy_ah(ah.value).err, ENOENT);
}

TEST(UdpUd, AnAhByGidNeedsTheNetwork) {
  Session s(4);
  Handle d = s.create_device("rxe").value;
  Handle pd = s.alloc_pd(d).value;
  uint8_t g[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
  auto r = s.create_ah_remote(pd, g, 1);
  EXPECT_EQ(r.err, EINVAL);
  EXPECT_NE(r.msg.find("not on the network"), std::string::npos);
}
