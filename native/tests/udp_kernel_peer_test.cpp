// What Linux Soft-RoCE (rdma_rxe) does on the wire and at modify_qp, and the device matching it (docs/interop.md):
// rxe sends RoCEv2 over IPv6 with UDP checksum 0 (rxe_net.c prepare_udp_hdr), which an ordinary IPv6 socket drops;
// ib_core refuses an address vector whose source and destination GIDs are of different IP versions (EINVAL from
// rdma_resolve_ip, drivers/infiniband/core/addr.c). The interop suite (scripts/interop) checks both against the
// kernel itself; these tests pin them on loopback.
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "udp_fixture.h"

using namespace vlu;

namespace {

int udp6_socket(bool no_check_tx, bool no_check_rx, uint16_t* port) {
  int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  if (no_check_tx) setsockopt(fd, SOL_UDP, UDP_NO_CHECK6_TX, &one, sizeof one);
  if (no_check_rx) setsockopt(fd, SOL_UDP, UDP_NO_CHECK6_RX, &one, sizeof one);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) { close(fd); return -1; }
  socklen_t l = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &l);
  if (port) *port = ntohs(a.sin6_port);
  return fd;
}

// true when a datagram arrives on fd within ms
bool arrives(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, ms) <= 0) return false;
  char b[64];
  return recv(fd, b, sizeof b, MSG_DONTWAIT) > 0;
}

bool send_to(int fd, uint16_t port) {
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  a.sin6_port = htons(port);
  return sendto(fd, "rxe", 3, 0, reinterpret_cast<sockaddr*>(&a), sizeof a) == 3;
}

}  // namespace

// The kernel's rule the fix relies on: a zero-checksum IPv6 datagram (UDP_NO_CHECK6_TX, as rxe writes it) is dropped
// by a socket without UDP_NO_CHECK6_RX and delivered to one with it.
TEST(UdpKernelPeer, ZeroChecksumIPv6IsDroppedWithoutNoCheck6Rx) {
  uint16_t plain_port = 0, tolerant_port = 0;
  int tx = udp6_socket(true, false, nullptr);
  int plain = udp6_socket(false, false, &plain_port);
  int tolerant = udp6_socket(false, true, &tolerant_port);
  ASSERT_GE(tx, 0);
  ASSERT_GE(plain, 0);
  ASSERT_GE(tolerant, 0);
  ASSERT_TRUE(send_to(tx, plain_port));
  EXPECT_FALSE(arrives(plain, 300)) << "a zero UDP checksum over IPv6 reached a socket without UDP_NO_CHECK6_RX";
  ASSERT_TRUE(send_to(tx, tolerant_port));
  EXPECT_TRUE(arrives(tolerant, 2000));
  close(tx); close(plain); close(tolerant);
}

// Device b sends as rxe does (UDP checksum 0 on every IPv6 datagram); a must take every one of them: an RC WRITE and a
// SEND each way complete with the bytes intact and nothing dropped.
TEST(UdpKernelPeer, RxeStyleZeroChecksumIPv6TrafficIsReceived) {
  Host a{31}, b{32};
  ASSERT_TRUE(a.open("::1", 0, 0));
  ASSERT_TRUE(b.open("::1", 0, a.t->port()));
  a.t->set_peer_port(b.t->port());
  int one = 1;
  for (int fd : b.t->fds()) ASSERT_EQ(setsockopt(fd, SOL_UDP, UDP_NO_CHECK6_TX, &one, sizeof one), 0);
  a.psn = 0x10; b.psn = 0x20;
  ASSERT_TRUE(a.connect(b.gid(), b.qpn, b.psn, MTU_1024, 8));
  ASSERT_TRUE(b.connect(a.gid(), a.qpn, a.psn, MTU_1024, 8));
  const uint32_t len = 10000;                        // 10 packets at MTU 1024
  // b -> a: WRITE, then SEND into a posted receive
  b.pattern(0, len, 3);
  ASSERT_TRUE(b.post(WR_RDMA_WRITE, 0, len, a.buf.addr + 64, a.mr.rkey, 1).ok());
  std::vector<Wc> wc;
  ASSERT_TRUE(pump({&a, &b}, wait_cq(b, b.scq, wc, 1), 20000));
  ASSERT_EQ(wc[0].status, WC_SUCCESS) << wc_status_name(wc[0].status);
  EXPECT_EQ(a.bytes(64, len), b.bytes(0, len));
  ASSERT_TRUE(a.recv(1 << 20, len, 5).ok());
  ASSERT_TRUE(b.post(WR_SEND, 0, len, 0, 0, 2).ok());
  std::vector<Wc> rc;
  ASSERT_TRUE(pump({&a, &b}, wait_cq(a, a.rcq, rc, 1), 20000));
  ASSERT_EQ(rc[0].status, WC_SUCCESS);
  EXPECT_EQ(rc[0].byte_len, len);
  EXPECT_EQ(a.bytes(1 << 20, len), b.bytes(0, len));
  // a -> b: a READ of what b wrote (the responses come back with checksum 0)
  wc.clear();
  ASSERT_TRUE(a.post(WR_RDMA_READ, 2 << 20, len, b.buf.addr, b.mr.rkey, 3).ok());
  ASSERT_TRUE(pump({&a, &b}, wait_cq(a, a.scq, wc, 1), 20000));
  ASSERT_EQ(wc[0].status, WC_SUCCESS) << wc_status_name(wc[0].status);
  EXPECT_EQ(a.bytes(2 << 20, len), b.bytes(0, len));
  EXPECT_EQ(a.t->stats().rx_dropped, 0u);
  EXPECT_GE(a.t->stats().rx_packets, 20u);
}

// ib_core's rule at modify_qp (RTR) and create_ah on RoCE: the source GID (sgid_index) and the dgid must be of the
// same IP version; otherwise EINVAL (rdma_resolve_ip). The device on "lo" has both: ::ffff:127.0.0.1 and ::1.
TEST(UdpKernelPeer, MixedFamilyAddressVectorIsRefusedWithEinval) {
  Host h{41};
  ASSERT_TRUE(h.open("lo", 0, 0, 1 << 16, true));
  int v4 = -1, v6 = -1;
  for (auto& g : h.t->gids()) {
    std::string t = vl::net::gid_text(g.gid);
    if (t == "::ffff:127.0.0.1") v4 = int(g.index);
    if (t == "::1") v6 = int(g.index);
  }
  if (v4 < 0 || v6 < 0) GTEST_SKIP() << "lo has no 127.0.0.1 or no ::1";
  const uint8_t* g4 = h.t->gids()[v4].gid;
  const uint8_t* g6 = h.t->gids()[v6].gid;
  auto rtr = [&](int sgid, const uint8_t* dgid) {
    QpAttr at;
    at.qp_state = QPS_RTR; at.path_mtu = MTU_1024; at.dest_qp_num = 0x11; at.rq_psn = 1; at.max_dest_rd_atomic = 1;
    at.min_rnr_timer = 1; at.sgid_index = uint32_t(sgid);
    std::memcpy(at.dgid, dgid, 16);
    return h.s.modify_qp(h.qp, at, QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER);
  };
  auto st = rtr(v4, g6);                             // IPv4-mapped source, IPv6 destination
  EXPECT_EQ(st.err, EINVAL) << st.msg;
  EXPECT_NE(st.msg.find("IPv6 GID"), std::string::npos) << st.msg;
  st = rtr(v6, g4);                                  // and the other way round
  EXPECT_EQ(st.err, EINVAL) << st.msg;
  EXPECT_EQ(h.s.query_qp(h.qp)->attr.qp_state, QPS_INIT);   // a refused modify changes nothing
  auto ah = h.s.create_ah_remote(h.pd, g6, uint32_t(v4));  // UD: the same rule at create_ah
  EXPECT_EQ(ah.err, EINVAL) << ah.msg;
  EXPECT_TRUE(h.s.create_ah_remote(h.pd, g6, uint32_t(v6)).ok());
  st = rtr(v6, g6);                                  // same family: accepted
  EXPECT_TRUE(st.ok()) << st.msg;
}
