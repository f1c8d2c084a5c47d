// UDP GSO / GRO in the transport (net/udp.cpp): a peer that sends one UDP_SEGMENT super-buffer of RoCEv2 packets
// (equal size, a shorter last one, a bad ICRC in the middle one) to a device whose socket takes UDP_GRO gets it as
// one coalesced buffer, split into datagrams that are each ICRC-checked with their own IP/UDP lengths and the IPv4
// ID Linux's segmentation gives them (ID + index); without UDP_GRO the kernel segments it and the IDs are recovered.
// And the one-time fallback: a socket on which the kernel refuses GSO (SO_NO_CHECK: udp_send_skb returns EINVAL)
// sends the same packets one per datagram, re-framed for ID 0, without losing one.
#include <arpa/inet.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>

#include "udp_fixture.h"

using namespace vlu;

namespace {

std::string lo_addr(int host) {
  unsigned p = static_cast<unsigned>(getpid());
  return "127." + std::to_string(1 + (p >> 8) % 250) + "." + std::to_string(p & 0xff) + "." + std::to_string(200 + host);
}

// A peer with no device: a plain UDP socket (DF, unconnected, like the transport's) that writes RoCEv2 packets itself.
struct RawPeer {
  int fd = -1;
  sockaddr_in me{};
  ~RawPeer() { if (fd >= 0) close(fd); }
  ::testing::AssertionResult open(const std::string& addr) {
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return ::testing::AssertionFailure() << "socket: " << std::strerror(errno);
    int pmtu = IP_PMTUDISC_DO;
    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
    me.sin_family = AF_INET;
    inet_pton(AF_INET, addr.c_str(), &me.sin_addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&me), sizeof me) != 0) return ::testing::AssertionFailure() << "bind: " << std::strerror(errno);
    socklen_t l = sizeof me;
    getsockname(fd, reinterpret_cast<sockaddr*>(&me), &l);
    return ::testing::AssertionSuccess();
  }
  void gid(uint8_t g[16]) const {
    std::memset(g, 0, 16);
    g[10] = g[11] = 0xff;
    std::memcpy(g + 12, &me.sin_addr, 4);
  }
};

constexpr uint32_t kPeerQpn = 0x77, kPeerPsn = 100;
constexpr int kSegs = 5, kBad = 2;                  // five WRITE ONLY packets, the middle one with a bad ICRC
constexpr uint32_t kLen = 1024, kLastLen = 512;

// The five packets as the peer's kernel segments them: packet k framed with IP ID k. Returns their sizes.
std::vector<uint8_t> gso_buffer(const RawPeer& peer, const Host& b, std::vector<size_t>& sizes) {
  std::vector<uint8_t> all;
  vl::wire::Framing f;
  std::memcpy(f.src_ip, &peer.me.sin_addr, 4);
  std::memcpy(f.dst_ip, b.t->gids()[1].gid + 12, 4);
  f.src_port = ntohs(peer.me.sin_port);
  f.dst_port = b.t->port();
  f.df = true;
  for (int k = 0; k < kSegs; k++) {
    const uint32_t n = k == kSegs - 1 ? kLastLen : kLen;
    std::vector<uint8_t> pay(n);
    for (uint32_t i = 0; i < n; i++) pay[i] = static_cast<uint8_t>(k * 40 + i * 3 + 1);
    vl::wire::Packet p;
    p.opcode = vl::wire::RC_RDMA_WRITE_ONLY;
    p.dest_qp = b.qpn; p.psn = kPeerPsn + k; p.ack_req = true;
    p.reth_va = b.buf.addr + uint64_t(k) * 4096; p.reth_rkey = b.mr.rkey; p.reth_dmalen = n;
    p.payload = pay.data(); p.payload_len = n;
    f.ip_id = static_cast<uint16_t>(k);              // inet_gso_segment: the super-buffer's ID (0 for DF, unconnected) + k
    std::vector<uint8_t> pk;
    vl::wire::encode(p, f, pk);
    if (k == kBad) pk[pk.size() - 2] ^= 0x40;        // corrupt its ICRC
    sizes.push_back(pk.size());
    all.insert(all.end(), pk.begin(), pk.end());
  }
  return all;
}

::testing::AssertionResult send_gso(const RawPeer& peer, const Host& b, const std::vector<uint8_t>& buf, uint16_t gso_size) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(b.t->port());
  std::memcpy(&to.sin_addr, b.t->gids()[1].gid + 12, 4);
  iovec iov{const_cast<uint8_t*>(buf.data()), buf.size()};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(uint16_t))] = {};
  msghdr h{};
  h.msg_name = &to; h.msg_namelen = sizeof to; h.msg_iov = &iov; h.msg_iovlen = 1;
  h.msg_control = ctl; h.msg_controllen = sizeof ctl;
  cmsghdr* cm = CMSG_FIRSTHDR(&h);
  cm->cmsg_level = SOL_UDP; cm->cmsg_type = UDP_SEGMENT; cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
  std::memcpy(CMSG_DATA(cm), &gso_size, sizeof gso_size);
  if (sendmsg(peer.fd, &h, 0) != ssize_t(buf.size())) return ::testing::AssertionFailure() << "GSO sendmsg: " << std::strerror(errno);
  return ::testing::AssertionSuccess();
}

// b receives the super-buffer; checks which packets got through (events, memory) and the framing each was checked with.
void receive_and_check(Host& b, RawPeer& peer, bool expect_gro) {
  uint8_t pg[16];
  peer.gid(pg);
  ASSERT_TRUE(b.connect(pg, kPeerQpn, kPeerPsn));
  b.t->set_peer_port(ntohs(peer.me.sin_port));        // b's NAK goes back to the peer socket
  b.t->set_capture(true);
  b.s.drain_events();
  std::vector<size_t> sizes;
  const auto buf = gso_buffer(peer, b, sizes);
  ASSERT_TRUE(send_gso(peer, b, buf, static_cast<uint16_t>(sizes[0])));
  ASSERT_TRUE(pump({&b}, [&] { return b.t->stats().rx_packets >= kSegs; }, 10000));
  const auto& st = b.t->stats();
  EXPECT_EQ(st.rx_packets, uint64_t(kSegs));
  EXPECT_EQ(st.rx_bytes, uint64_t(buf.size()));
  EXPECT_EQ(st.rx_gro_buffers, expect_gro ? 1u : 0u);
  EXPECT_EQ(st.rx_gro_segments, expect_gro ? uint64_t(kSegs) : 0u);
  std::set<uint64_t> received;
  std::vector<std::vector<uint8_t>> refused;         // dropped before any QP saw them (the ICRC check)
  for (auto& e : b.s.drain_events()) {
    if (e.kind == EventKind::PacketReceived) received.insert(e.c);
    if (e.kind == EventKind::PacketDropped && e.obj_kind == "packet") refused.push_back(e.pkt);
  }
  EXPECT_EQ(received, (std::set<uint64_t>{kPeerPsn, kPeerPsn + 1, kPeerPsn + 3, kPeerPsn + 4}));   // all but the bad one
  size_t off = 0;
  for (int k = 0; k < kBad; k++) off += sizes[k];
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0], std::vector<uint8_t>(buf.begin() + off, buf.begin() + off + sizes[kBad]));
  // memory: the two before the bad one landed; the ones after it are out of sequence (PSN gap, NAK) and write nothing
  for (int k = 0; k < kSegs; k++) {
    const uint32_t n = k == kSegs - 1 ? kLastLen : kLen;
    const auto got = b.bytes(uint64_t(k) * 4096, n);
    std::vector<uint8_t> want(n, 0);
    if (k < kBad) for (uint32_t i = 0; i < n; i++) want[i] = static_cast<uint8_t>(k * 40 + i * 3 + 1);
    EXPECT_EQ(got, want) << "packet " << k;
  }
  // the capture: one frame per datagram, its own UDP length, and the ID its ICRC was checked with (0 for the bad one: none fits)
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> frames;
  b.t->take_capture(frames);
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> rx;
  for (auto& fr : frames) {
    vl::wire::Framing fm;
    const uint8_t* pl = nullptr;
    size_t pn = 0;
    ASSERT_TRUE(vl::wire::parse_frame(fr.second.data(), fr.second.size(), fm, &pl, &pn));
    if (fm.src_port == ntohs(peer.me.sin_port)) rx.emplace_back(fm.ip_id, std::vector<uint8_t>(pl, pl + pn));
  }
  ASSERT_EQ(rx.size(), size_t(kSegs));
  for (int k = 0; k < kSegs; k++) {
    EXPECT_EQ(rx[k].second.size(), sizes[k]) << "segment " << k;
    EXPECT_EQ(rx[k].first, k == kBad ? 0u : uint64_t(k)) << "segment " << k;
  }
}

}  // namespace

TEST(UdpGso, GroBufferSplitIntoDatagramsEachWithItsOwnIcrcCheck) {
  RawPeer peer;
  ASSERT_TRUE(peer.open(lo_addr(1)));
  Host b(5);
  ASSERT_TRUE(b.open(lo_addr(2), 0, 0));
  ASSERT_TRUE(b.t->stats().gro);
  receive_and_check(b, peer, true);
}

TEST(UdpGso, WithoutGroTheKernelSegmentsAndTheIdsAreFound) {
  RawPeer peer;
  ASSERT_TRUE(peer.open(lo_addr(3)));
  Host b(6);
  b.opts.gro = false;
  ASSERT_TRUE(b.open(lo_addr(4), 0, 0));
  ASSERT_FALSE(b.t->stats().gro);
  receive_and_check(b, peer, false);
}

TEST(UdpGso, RefusedGsoFallsBackOnceAndLosesNothing) {
  Host a(7), b(8);
  ASSERT_TRUE(a.open(lo_addr(5), 0, 0));
  ASSERT_TRUE(b.open(lo_addr(6), a.t->port(), 0));
  a.t->set_peer_port(b.t->port());
  ASSERT_TRUE(a.t->stats().gso);
  int one = 1;
  for (int fd : a.t->fds()) ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof one), 0);   // udp_send_skb: GSO -> EINVAL
  a.psn = 10; b.psn = 20;
  ASSERT_TRUE(a.connect(b.gid(), b.qpn, b.psn));
  ASSERT_TRUE(b.connect(a.gid(), a.qpn, a.psn));
  a.t->set_capture(true);
  const uint32_t len = 300000;
  a.pattern(0, len, 3);
  ASSERT_TRUE(a.post(WR_RDMA_WRITE, 0, len, b.buf.addr, b.mr.rkey, 1).ok());
  std::vector<Wc> wc;
  ASSERT_TRUE(pump({&a, &b}, wait_cq(a, a.scq, wc, 1)));
  ASSERT_EQ(wc[0].status, WC_SUCCESS) << wc_status_name(wc[0].status);
  EXPECT_EQ(b.bytes(0, len), a.bytes(0, len));
  const auto& st = a.t->stats();
  EXPECT_FALSE(st.gso);
  EXPECT_EQ(st.gso_fallback_errno, EINVAL);
  EXPECT_EQ(st.tx_gso_sends, 0u);
  EXPECT_EQ(st.tx_dropped, 0u);
  EXPECT_EQ(b.t->stats().rx_dropped, 0u);
  // every packet a sent (the re-framed group included) is what a single datagram is: ID 0, its ICRC good
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> frames;
  a.t->take_capture(frames);
  size_t sent = 0;
  for (auto& fr : frames) {
    vl::wire::Framing fm;
    const uint8_t* pl = nullptr;
    size_t pn = 0;
    ASSERT_TRUE(vl::wire::parse_frame(fr.second.data(), fr.second.size(), fm, &pl, &pn));
    if (fm.src_port != a.t->port() || std::memcmp(fm.src_ip, a.gid() + 12, 4) != 0) continue;
    sent++;
    EXPECT_EQ(fm.ip_id, 0);
    EXPECT_TRUE(vl::wire::icrc_ok(fm, pl, pn));
  }
  EXPECT_EQ(sent, st.tx_packets);
  EXPECT_GE(sent, size_t((len + 4095) / 4096));
  // no retransmission was needed: b took every packet at its first arrival (each PSN once)
  std::multiset<uint64_t> psns;
  for (auto& e : b.s.drain_events()) if (e.kind == EventKind::PacketReceived) psns.insert(e.c);
  for (auto x : psns) EXPECT_EQ(psns.count(x), 1u) << "PSN " << x;
}
