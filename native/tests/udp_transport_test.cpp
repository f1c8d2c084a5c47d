// UDP transport: two software devices in two sessions (and two processes) talking RoCEv2 over real UDP sockets
// on loopback, IPv4 and IPv6, with every byte checked, under injected loss and duplication, and against malformed
// datagrams; GID tables taken from host interfaces the soft-RoCE way.
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "net/ipv4_id.h"
#include "udp_fixture.h"

using namespace vlu;
using vl::net::IpAddr;

namespace {

// a loopback /8 address unique to this process, so parallel test runs never share a port
std::string lo_addr(int host) {
  unsigned p = static_cast<unsigned>(getpid());
  return "127." + std::to_string(1 + (p >> 8) % 250) + "." + std::to_string(p & 0xff) + "." + std::to_string(host);
}

struct Pair {
  Host a{11}, b{22};
  ::testing::AssertionResult open(bool v6 = false, uint32_t mtu = MTU_4096, uint32_t timeout = 10) {
    std::string aa = v6 ? "::1" : lo_addr(2), ba = v6 ? "::1" : lo_addr(3);
    auto r = a.open(aa, 0, 0);
    if (!r) return r;
    r = b.open(ba, v6 ? 0 : a.t->port(), v6 ? a.t->port() : 0);
    if (!r) return r;
    a.t->set_peer_port(b.t->port());
    a.psn = 0xabcdef; b.psn = 0x123;
    r = a.connect(b.gid(), b.qpn, b.psn, mtu, timeout);
    if (!r) return r;
    return b.connect(a.gid(), a.qpn, a.psn, mtu, timeout);
  }
};

void check_transfers(Pair& p, size_t len) {
  Host &a = p.a, &b = p.b;
  // RDMA WRITE a -> b
  a.pattern(0, len, 1);
  ASSERT_TRUE(a.post(WR_RDMA_WRITE, 0, static_cast<uint32_t>(len), b.buf.addr + 16, b.mr.rkey, 7).ok());
  std::vector<Wc> wc;
  ASSERT_TRUE(pump({&a, &b}, wait_cq(a, a.scq, wc, 1)));
  ASSERT_EQ(wc[0].status, WC_SUCCESS) << wc_status_name(wc[0].status);
  EXPECT_EQ(wc[0].wr_id, 7u);
  EXPECT_EQ(b.bytes(16, len), a.bytes(0, len));
  // SEND b -> a (multi-packet), RECV posted first
  b.pattern(len + 64, len / 2 + 3, 2);
  ASSERT_TRUE(a.recv(len + 4096, static_cast<uint32_t>(len), 99).ok());
  ASSERT_TRUE(b.post(WR_SEND_WITH_IMM, len + 64, static_cast<uint32_t>(len / 2 + 3), 0, 0, 8, 0x5eed).ok());
  std::vector<Wc> rc, sc;
  ASSERT_TRUE(pump({&a, &b}, [&] { wait_cq(a, a.rcq, rc, 1)(); wait_cq(b, b.scq, sc, 1)(); return rc.size() && sc.size(); }));
  ASSERT_EQ(rc[0].status, WC_SUCCESS);
  EXPECT_EQ(rc[0].opcode, WC_RECV);
  EXPECT_EQ(rc[0].byte_len, len / 2 + 3);
  EXPECT_EQ(rc[0].imm_data, 0x5eedu);
  EXPECT_EQ(rc[0].wr_id, 99u);
  EXPECT_EQ(a.bytes(len + 4096, len / 2 + 3), b.bytes(len + 64, len / 2 + 3));
  ASSERT_EQ(sc[0].status, WC_SUCCESS);
  // RDMA READ a <- b (reads back what a wrote)
  wc.clear();
  ASSERT_TRUE(a.post(WR_RDMA_READ, 2 * len + 8192, static_cast<uint32_t>(len), b.buf.addr + 16, b.mr.rkey, 9).ok());
  ASSERT_TRUE(pump({&a, &b}, wait_cq(a, a.scq, wc, 1)));
  ASSERT_EQ(wc[0].status, WC_SUCCESS) << wc_status_name(wc[0].status);
  EXPECT_EQ(wc[0].opcode, WC_RDMA_READ);
  EXPECT_EQ(a.bytes(2 * len + 8192, len), a.bytes(0, len));
  // atomics over the wire
  wc.clear();
  std::vector<uint8_t> v8 = {5, 0, 0, 0, 0, 0, 0, 0};
  ASSERT_TRUE(b.s.write_memory(b.buf.addr + 3 * len + 65536, v8.data(), 8).ok());
  SendWr w; w.wr_id = 10; w.opcode = WR_ATOMIC_FETCH_AND_ADD; w.send_flags = SEND_SIGNALED;
  w.sg_list = {{a.buf.addr + 3 * len + 65536, 8, a.mr.lkey}}; w.remote_addr = b.buf.addr + 3 * len + 65536; w.rkey = b.mr.rkey;
  w.compare_add = 37;
  ASSERT_TRUE(a.s.post_send(a.qp, {w}).ok());
  ASSERT_TRUE(pump({&a, &b}, wait_cq(a, a.scq, wc, 1)));
  ASSERT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(a.bytes(3 * len + 65536, 8)[0], 5);
  EXPECT_EQ(b.bytes(3 * len + 65536, 8)[0], 42);
}

}  // namespace

TEST(UdpTransport, GidHelpersAndMtu) {
  uint8_t g[16];
  auto v4 = vl::net::parse_ip("192.168.77.2");
  ASSERT_TRUE(v4.ok()) << v4.msg;
  vl::net::ip_to_gid(v4.value, g);
  EXPECT_EQ(vl::net::gid_text(g), "::ffff:192.168.77.2");
  IpAddr back;
  ASSERT_TRUE(vl::net::gid_to_ip(g, back));
  EXPECT_FALSE(back.v6);
  EXPECT_EQ(vl::net::ip_text(back), "192.168.77.2");
  auto mapped = vl::net::parse_ip("::ffff:10.1.2.3");
  ASSERT_TRUE(mapped.ok());
  EXPECT_FALSE(mapped.value.v6);
  uint8_t zero[16] = {};
  EXPECT_FALSE(vl::net::gid_to_ip(zero, back));
  EXPECT_FALSE(vl::net::parse_ip("localhost").ok());
  EXPECT_FALSE(vl::net::parse_ip("300.1.1.1").ok());
  EXPECT_FALSE(vl::net::parse_ip("").ok());
  EXPECT_EQ(vl::net::roce_active_mtu(1500), MTU_1024);   // docs/wire.md 1.7: Ethernet 1500 -> active_mtu 1024
  EXPECT_EQ(vl::net::roce_active_mtu(9000), MTU_4096);
  EXPECT_EQ(vl::net::roce_active_mtu(65536), MTU_4096);
  EXPECT_EQ(vl::net::roce_active_mtu(576), MTU_256);
  // rxe's default GID: fe80::/64 + EUI-64 of MAC 52:54:00:00:00:01 = fe80::5054:ff:fe00:1 (docs/wire.md 1.1)
  vl::net::Interface ifc;
  uint8_t mac[6] = {0x52, 0x54, 0, 0, 0, 1};
  std::memcpy(ifc.mac, mac, 6);
  ifc.addrs = {vl::net::parse_ip("fe80::5054:ff:fe00:1").value, vl::net::parse_ip("192.168.77.1").value,
               vl::net::parse_ip("fd00::1").value, vl::net::parse_ip("192.168.78.1").value};
  auto t = vl::net::roce_gid_table(ifc);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(vl::net::gid_text(t[0].gid), "fe80::5054:ff:fe00:1");
  EXPECT_EQ(vl::net::gid_text(t[1].gid), "::ffff:192.168.77.1");
  EXPECT_EQ(vl::net::gid_text(t[2].gid), "::ffff:192.168.78.1");
  EXPECT_EQ(vl::net::gid_text(t[3].gid), "fd00::1");
  for (uint32_t i = 0; i < t.size(); i++) { EXPECT_EQ(t[i].index, i); EXPECT_EQ(t[i].type, "RoCE v2"); }
}

TEST(UdpTransport, AttachToLoopbackInterfaceAndRefusals) {
  Session s;
  Handle d = s.create_device("rxe").value;
  net::UdpOptions o;
  o.interface = "lo";
  o.port = 0;
  auto t = net::UdpTransport::attach(s, d, o);
  ASSERT_TRUE(t.ok()) << t.msg;
  auto devs = s.devices();
  ASSERT_GE(devs[0].gids.size(), 2u);
  EXPECT_EQ(vl::net::gid_text(devs[0].gids[1].gid), "::ffff:127.0.0.1");   // lo: IPv4-mapped first after GID 0
  EXPECT_EQ(devs[0].profile.active_mtu, MTU_4096);                           // lo MTU 65536
  auto again = net::UdpTransport::attach(s, d, o);
  EXPECT_EQ(again.err, EBUSY);
  net::UdpOptions bad;
  bad.interface = "vlnosuch0";
  Handle d2 = s.create_device("rxe").value;
  net::UdpField field = net::UdpField::Session;
  EXPECT_EQ((net::UdpTransport::attach(s, d, o, &field).err), EBUSY);
  EXPECT_EQ(field, net::UdpField::Device);
  auto r = net::UdpTransport::attach(s, d2, bad, &field);
  EXPECT_EQ(r.err, ENODEV);
  EXPECT_EQ(field, net::UdpField::Interface);
  EXPECT_NE(r.msg.find("vlnosuch0"), std::string::npos);
  bad.interface.clear();
  r = net::UdpTransport::attach(s, d2, bad, &field);
  EXPECT_EQ(r.err, EINVAL);
  EXPECT_EQ(field, net::UdpField::Options);
  bad.address = "::1"; bad.interface = "lo";
  EXPECT_EQ(net::UdpTransport::attach(s, d2, bad).err, EINVAL);
  bad.interface.clear(); bad.address = "localhost";
  EXPECT_EQ(net::UdpTransport::attach(s, d2, bad, &field).err, EINVAL);
  EXPECT_EQ(field, net::UdpField::Address);
  bad.address = "192.0.2.250";                                  // not an address of this host
  EXPECT_NE(net::UdpTransport::attach(s, d2, bad, &field).err, 0);
  EXPECT_EQ(field, net::UdpField::Address);
  EXPECT_EQ(net::UdpTransport::attach(s, 999999, o, &field).err, ENOENT);
  EXPECT_EQ(field, net::UdpField::Device);
  // sgid_index beyond the table is refused at modify_qp
  Handle pd = s.alloc_pd(d).value, cq = s.create_cq(d, 16).value;
  QpInitAttr ia; ia.pd = pd; ia.send_cq = cq; ia.recv_cq = cq;
  Handle qp = s.create_qp(pd, ia).value.handle;
  QpAttr at; at.qp_state = QPS_INIT;
  ASSERT_TRUE(s.modify_qp(qp, at, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS).ok());
  at.qp_state = QPS_RTR; at.sgid_index = 200; at.dgid[15] = 1;
  auto st = s.modify_qp(qp, at, QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER);
  EXPECT_EQ(st.err, EINVAL);
  EXPECT_NE(st.msg.find("sgid_index"), std::string::npos);
}

TEST(UdpTransport, TwoSessionsIPv4EveryByteIntact) {
  Pair p;
  ASSERT_TRUE(p.open());
  check_transfers(p, 1 << 20);
  EXPECT_EQ(p.a.t->stats().rx_dropped, 0u);
  EXPECT_EQ(p.b.t->stats().rx_dropped, 0u);
  EXPECT_GT(p.a.t->stats().tx_packets, 256u);
  EXPECT_LT(p.a.t->stats().syscalls_tx, p.a.t->stats().tx_packets);   // batched sendmmsg
  // the 1 MiB WRITE's middle packets left as UDP GSO super-buffers and b took them as GRO buffers (Linux >= 5.0)
  EXPECT_TRUE(p.a.t->stats().gso);
  EXPECT_GT(p.a.t->stats().tx_gso_sends, 0u);
  EXPECT_GT(p.a.t->stats().tx_gso_segments, p.a.t->stats().tx_gso_sends);
  EXPECT_GT(p.b.t->stats().rx_gro_buffers, 0u);
  EXPECT_EQ(p.a.t->stats().gso_fallback_errno, 0);
  EXPECT_EQ(p.a.t->stats().tx_zero_copy, 0u);                         // off unless asked for
}

TEST(UdpTransport, TwoSessionsIPv4ZeroCopyEveryByteIntact) {
  // payloads handed to the kernel from the MR by their own iovec (events off: nothing needs the packet in one piece)
  Pair p;
  p.a.opts.zero_copy = p.b.opts.zero_copy = true;
  p.a.s.set_event_capture(false);
  p.b.s.set_event_capture(false);
  ASSERT_TRUE(p.open());
  check_transfers(p, 1 << 20);
  EXPECT_EQ(p.a.t->stats().rx_dropped + p.b.t->stats().rx_dropped, 0u);
  EXPECT_GE(p.a.t->stats().tx_zero_copy, 256u);                        // the WRITE's packets
  EXPECT_GT(p.b.t->stats().tx_zero_copy, 0u);                          // the READ responses and the SEND
  EXPECT_GT(p.a.t->stats().tx_gso_sends, 0u);                          // zero copy and GSO together
}

TEST(UdpTransport, ZeroCopyStepsAsideWhileEventsOrACaptureNeedTheBytes) {
  Pair p;
  p.a.opts.zero_copy = p.b.opts.zero_copy = true;
  ASSERT_TRUE(p.open());                             // events on (the default)
  p.b.s.set_event_capture(false);
  p.b.t->set_capture(true);                          // b: no events, but its own capture
  check_transfers(p, 100000);
  EXPECT_EQ(p.a.t->stats().tx_zero_copy, 0u);
  EXPECT_EQ(p.b.t->stats().tx_zero_copy, 0u);
  EXPECT_EQ(p.a.t->stats().rx_dropped + p.b.t->stats().rx_dropped, 0u);
}

TEST(UdpTransport, TwoSessionsIPv6EveryByteIntact) {
  Pair p;
  ASSERT_TRUE(p.open(true, MTU_1024));
  EXPECT_EQ(vl::net::gid_text(p.a.gid()), "::1");
  check_transfers(p, 300000);
  EXPECT_EQ(p.a.t->stats().rx_dropped + p.b.t->stats().rx_dropped, 0u);
  EXPECT_GT(p.a.t->stats().tx_gso_sends, 0u);       // IPv6: no ID, the segments' ICRCs differ only by length/payload
  EXPECT_GT(p.b.t->stats().rx_gro_buffers, 0u);
}

TEST(UdpTransport, InjectedLossAndDuplicationRecoverInRealTime) {
  // rxe counts retry_cnt per WQE (reset when a WQE completes), so a long message on a lossy link can exhaust
  // it; messages of 32 packets at 1% loss recover. Rounds repeat until both faults have really happened.
  Pair p;
  ASSERT_TRUE(p.open(false, MTU_4096, 10));        // ACK timeout 4.096 us * 2^10 ~ 4 ms
  FaultConfig f; f.loss = 0.01; f.duplicate = 0.02;
  p.a.s.set_faults(f);
  p.b.s.set_faults(f);
  size_t retransmits = 0;
  for (int round = 0; round < 30; round++) {
    check_transfers(p, 128 * 1024);
    if (::testing::Test::HasFatalFailure()) return;
    for (auto& e : p.a.s.drain_events())
      if (e.kind == EventKind::Timer && e.a == uint64_t(TimerReason::Retransmit)) retransmits++;
    for (auto& e : p.b.s.drain_events())
      if (e.kind == EventKind::Timer && e.a == uint64_t(TimerReason::Retransmit)) retransmits++;
    if (retransmits && p.a.t->stats().tx_injected_dup + p.b.t->stats().tx_injected_dup) break;
  }
  EXPECT_GT(p.a.t->stats().tx_injected_loss + p.b.t->stats().tx_injected_loss, 0u);
  EXPECT_GT(p.a.t->stats().tx_injected_dup + p.b.t->stats().tx_injected_dup, 0u);
  EXPECT_GT(retransmits, 0u);
}

TEST(UdpTransport, RnrNakThenRetryWhenTheReceiveIsPosted) {
  Pair p;
  ASSERT_TRUE(p.open());
  Host &a = p.a, &b = p.b;
  a.pattern(0, 5000, 3);
  ASSERT_TRUE(a.post(WR_SEND, 0, 5000, 0, 0, 1).ok());
  // no receive on b yet: b answers RNR NAK, a waits min_rnr_timer and retries (rnr_retry 7 = forever)
  size_t rnr = 0;
  std::string log;
  ASSERT_TRUE(pump({&a, &b}, [&] {
    for (auto& e : a.s.drain_events()) {
      if (log.size() < 4000) log += "a: " + e.text + "\n";
      if (e.kind == EventKind::Timer && (e.a == uint64_t(TimerReason::RnrWait) || e.a == uint64_t(TimerReason::RnrExpired))) rnr++;
    }
    for (auto& e : b.s.drain_events()) if (log.size() < 4000) log += "b: " + e.text + "\n";
    return rnr >= 2;
  }, 5000)) << log;
  ASSERT_TRUE(b.recv(65536, 8192, 5).ok());
  std::vector<Wc> rc, sc;
  ASSERT_TRUE(pump({&a, &b}, [&] { wait_cq(a, a.scq, sc, 1)(); wait_cq(b, b.rcq, rc, 1)(); return rc.size() && sc.size(); }));
  EXPECT_EQ(sc[0].status, WC_SUCCESS);
  EXPECT_EQ(rc[0].status, WC_SUCCESS);
  EXPECT_EQ(b.bytes(65536, 5000), a.bytes(0, 5000));
}

TEST(UdpTransport, MalformedDatagramsAreDroppedWithAnEvent) {
  Pair p;
  ASSERT_TRUE(p.open());
  Host &a = p.a, &b = p.b;
  a.s.drain_events();
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(a.t->port());
  inet_pton(AF_INET, lo_addr(2).c_str(), &to.sin_addr);
  auto send = [&](const std::vector<uint8_t>& d) { ASSERT_EQ(sendto(fd, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to), ssize_t(d.size())); };
  send({1, 2, 3});                                    // too short
  std::vector<uint8_t> big(20000, 0x41);
  send(big);                                          // larger than any RoCE packet
  // a well-formed SEND ONLY to a's QP, but the ICRC is for another header (wrong source): refused
  vl::wire::Packet pk; pk.opcode = vl::wire::RC_SEND_ONLY; pk.dest_qp = a.qpn; pk.psn = b.psn; pk.ack_req = true;
  uint8_t pay[8] = {1, 2, 3, 4, 5, 6, 7, 8}; pk.payload = pay; pk.payload_len = 8;
  vl::wire::Framing f; std::vector<uint8_t> bytes; vl::wire::encode(pk, f, bytes);
  send(bytes);
  std::vector<uint8_t> junk(64, 0xee);
  junk[0] = 0x1f;                                     // reserved RC opcode
  send(junk);
  send({});                                           // an empty datagram
  close(fd);
  size_t dropped = 0;
  std::vector<std::string> why;
  ASSERT_TRUE(pump({&a}, [&] {
    for (auto& e : a.s.drain_events())
      if (e.kind == EventKind::PacketDropped) { dropped++; why.push_back(e.text); }
    return dropped >= 5;
  }, 10000));
  EXPECT_NE(why[0].find("shorter"), std::string::npos) << why[0];
  EXPECT_NE(why[1].find("larger"), std::string::npos) << why[1];
  EXPECT_NE(why[2].find("ICRC"), std::string::npos) << why[2];
  EXPECT_NE(why[3].find("malformed"), std::string::npos) << why[3];
  EXPECT_NE(why[4].find("shorter"), std::string::npos) << why[4];
  // still working afterwards, and no request reached the responder
  check_transfers(p, 8192);
}

// Two processes: the child is the target of RDMA WRITEs and checks every byte when the WRITE_WITH_IMM arrives.
TEST(UdpTransport, TwoProcessesOverLoopback) {
  int up[2], down[2];
  ASSERT_EQ(pipe(up), 0);
  ASSERT_EQ(pipe(down), 0);
  const size_t len = 3 << 20;
  struct Info { uint32_t qpn, psn, rkey, port; uint64_t addr; uint8_t gid[16]; };
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(up[0]); close(down[1]);
    int rc = 1;
    {
      Host b(5);
      if (b.open(lo_addr(3), 0, 0, len + 4096)) {
        b.psn = 0x777;
        Info me{b.qpn, b.psn, b.mr.rkey, b.t->port(), b.buf.addr, {}};
        std::memcpy(me.gid, b.gid(), 16);
        Info peer{};
        if (write(up[1], &me, sizeof me) == sizeof me && read(down[0], &peer, sizeof peer) == sizeof peer) {
          b.t->set_peer_port(static_cast<uint16_t>(peer.port));
          if (b.connect(peer.gid, peer.qpn, peer.psn) && b.recv(0, 0, 1).ok()) {
            std::vector<Wc> wc;
            if (pump({&b}, wait_cq(b, b.rcq, wc, 1), 60000) && wc[0].status == WC_SUCCESS && wc[0].imm_data == 0xc0ffee) {
              auto got = b.bytes(0, len);
              rc = 0;
              for (size_t i = 0; i < len; i++)
                if (got[i] != static_cast<uint8_t>((i * 131 + 4 * 7 + (i >> 9)) & 0xff)) { rc = 2; break; }
              // keep answering retransmissions for a moment so the requester sees its ACK
              pump({&b}, [] { return false; }, 300);
            }
          }
        }
      }
    }
    _exit(rc);
  }
  close(up[1]); close(down[0]);
  Host a(6);
  ASSERT_TRUE(a.open(lo_addr(2), 0, 0, len + 4096));
  Info peer{};
  ASSERT_EQ(read(up[0], &peer, sizeof peer), ssize_t(sizeof peer));
  a.psn = 0xfffff0;                                   // wraps past 2^24 during the transfer
  Info me{a.qpn, a.psn, a.mr.rkey, a.t->port(), a.buf.addr, {}};
  std::memcpy(me.gid, a.gid(), 16);
  ASSERT_EQ(write(down[1], &me, sizeof me), ssize_t(sizeof me));
  a.t->set_peer_port(static_cast<uint16_t>(peer.port));
  ASSERT_TRUE(a.connect(peer.gid, peer.qpn, peer.psn));
  a.pattern(0, len, 4);
  ASSERT_TRUE(a.post(WR_RDMA_WRITE_WITH_IMM, 0, static_cast<uint32_t>(len), peer.addr, peer.rkey, 1, 0xc0ffee).ok());
  std::vector<Wc> wc;
  ASSERT_TRUE(pump({&a}, wait_cq(a, a.scq, wc, 1)));
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child: 1 = setup/transfer failed, 2 = a byte differed";
}

std::string vl_test_file(const std::string& rel, std::string* tried);

// Kernel rxe sends IPv4 with DF and a non-zero, incrementing IP ID: the ID is recovered from the ICRC. Frames of
// the kernel rxe capture (native/tests/fixtures/rocev2) all recover their real ID; a corrupted frame recovers none.
TEST(UdpTransport, RecoversTheIpv4IdOfKernelRxeFrames) {
  std::string tried;
  const std::string pcap = vl_test_file("native/tests/fixtures/rocev2/rxe-rc-pingpong-ipv4.pcap", &tried);
  ASSERT_FALSE(pcap.empty()) << "fixture not found; tried:\n" << tried;
  std::vector<vl::wire::PcapRecord> recs;
  std::string err;
  ASSERT_TRUE(vl::wire::read_pcap(pcap, recs, &err)) << err;
  size_t n = 0, nonzero = 0;
  for (auto& r : recs) {
    vl::wire::Framing f;
    const uint8_t* pl = nullptr;
    size_t len = 0;
    if (!vl::wire::parse_frame(r.data.data(), r.data.size(), f, &pl, &len, &err) || f.dst_port != 4791) continue;
    ASSERT_TRUE(vl::wire::icrc_ok(f, pl, len));
    const uint16_t real = f.ip_id;
    nonzero += real != 0;
    vl::wire::Framing g = f;
    g.ip_id = 0;
    ASSERT_TRUE(vl::net::recover_ipv4_id(g, pl, len)) << "frame " << n;
    EXPECT_EQ(g.ip_id, real);
    std::vector<uint8_t> bad(pl, pl + len);
    bad[len / 2] ^= 0x10;
    vl::wire::Framing h = f;
    h.ip_id = 0;
    EXPECT_FALSE(vl::net::recover_ipv4_id(h, bad.data(), bad.size())) << "frame " << n;
    n++;
  }
  EXPECT_GT(n, 20u);
  EXPECT_GT(nonzero, n / 2);
}

// A datagram written with our own IPv4 header (raw socket: DF, ID 0x1234, UDP checksum 0, source port 0xC123) as
// kernel rxe would send it reaches the QP of a transport told its peer picks IDs (UdpOptions::any_ipv4_id); by
// default that ID is not one our framing writes and the datagram is dropped on the ICRC check.
void send_rxe_style(Pair& p, const char* msg, size_t len, uint16_t id) {
  int fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
  ASSERT_GE(fd, 0) << "raw socket: " << std::strerror(errno);
  vl::wire::Packet pk;
  pk.opcode = vl::wire::RC_SEND_ONLY; pk.dest_qp = p.a.qpn; pk.psn = p.b.psn; pk.ack_req = true;
  pk.payload = reinterpret_cast<const uint8_t*>(msg); pk.payload_len = static_cast<uint32_t>(len);
  vl::wire::Framing f;
  inet_pton(AF_INET, lo_addr(3).c_str(), f.src_ip);
  inet_pton(AF_INET, lo_addr(2).c_str(), f.dst_ip);
  f.src_port = 0xC123; f.dst_port = p.a.t->port(); f.ip_id = id; f.df = true;
  std::vector<uint8_t> udp, frame;
  vl::wire::encode(pk, f, udp);
  vl::wire::frame(f, udp.data(), udp.size(), frame);          // Ethernet + IPv4 (checksum) + UDP (checksum 0)
  sockaddr_in to{};
  to.sin_family = AF_INET;
  std::memcpy(&to.sin_addr, f.dst_ip, 4);
  ASSERT_EQ(sendto(fd, frame.data() + 14, frame.size() - 14, 0, reinterpret_cast<sockaddr*>(&to), sizeof to), ssize_t(frame.size() - 14));
  close(fd);
}

TEST(UdpTransport, RefusesAnIpv4IdItsPeersFramingCannotWrite) {
  Pair p;
  ASSERT_TRUE(p.open());
  p.a.s.drain_events();
  const char msg[] = "hello from rxe";
  send_rxe_style(p, msg, sizeof msg, 0x1234);
  std::string why;
  ASSERT_TRUE(pump({&p.a}, [&] {
    for (auto& e : p.a.s.drain_events()) if (e.kind == EventKind::PacketDropped) why = e.text;
    return !why.empty();
  }, 10000));
  EXPECT_NE(why.find("bad ICRC"), std::string::npos) << why;
  // an ID a GSO send of ours writes (segment 5 received on its own) is taken
  ASSERT_TRUE(p.a.recv(0, 64, 42).ok());
  send_rxe_style(p, msg, sizeof msg, 5);
  std::vector<Wc> wc;
  ASSERT_TRUE(pump({&p.a, &p.b}, wait_cq(p.a, p.a.rcq, wc, 1), 10000));
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
}

TEST(UdpTransport, AcceptsRxeStyleIpv4HeaderWithNonZeroId) {
  Pair p;
  p.a.opts.any_ipv4_id = true;
  ASSERT_TRUE(p.open());
  Host &a = p.a, &b = p.b;
  ASSERT_TRUE(a.recv(0, 64, 42).ok());
  const char msg[] = "hello from rxe";
  send_rxe_style(p, msg, sizeof msg, 0x1234);
  std::vector<Wc> wc;
  ASSERT_TRUE(pump({&a, &b}, wait_cq(a, a.rcq, wc, 1), 10000));
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(wc[0].wr_id, 42u);
  EXPECT_EQ(wc[0].byte_len, sizeof msg);
  auto got = a.bytes(0, sizeof msg);
  EXPECT_EQ(std::string(got.begin(), got.end() - 1), "hello from rxe");
  EXPECT_EQ(a.t->stats().rx_dropped, 0u);
}

// take_capture (native/libibverbs/console.cpp streams a program's datagrams to a console): each datagram kept since
// the last call, framed as write_pcap frames it (Ethernet, IPv4, UDP to the peer's port), then forgotten.
TEST(UdpTransport, TakeCaptureHandsOverFramedDatagramsOnce) {
  Pair p;
  ASSERT_TRUE(p.open());
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> fr;
  p.a.t->take_capture(fr);
  EXPECT_TRUE(fr.empty());                          // capture off: nothing kept
  p.a.t->set_capture(true);
  p.a.pattern(0, 8192, 3);
  ASSERT_TRUE(p.a.post(WR_RDMA_WRITE, 0, 8192, p.b.buf.addr, p.b.mr.rkey, 1).ok());
  std::vector<Wc> wc;
  ASSERT_TRUE(pump({&p.a, &p.b}, wait_cq(p.a, p.a.scq, wc, 1)));
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  p.a.t->take_capture(fr);
  ASSERT_GE(fr.size(), 3u);                         // 8 KiB at MTU 4096: two WRITE packets out, their ACK in
  size_t out = 0, in = 0;
  for (auto& [t, f] : fr) {
    ASSERT_GE(f.size(), 14u + 20 + 8 + 12 + 4);
    EXPECT_EQ(f[12], 0x08); EXPECT_EQ(f[13], 0x00);   // IPv4
    EXPECT_EQ(f[14 + 9], 17);                          // UDP
    const uint16_t dport = static_cast<uint16_t>(f[14 + 20 + 2] << 8 | f[14 + 20 + 3]);
    EXPECT_EQ(dport, p.b.t->port());                   // both ends use one port on two addresses
    if (std::memcmp(&f[14 + 16], p.b.gid() + 12, 4) == 0) out++;   // IPv4 destination: b's address (its GID's last 4)
    if (std::memcmp(&f[14 + 16], p.a.gid() + 12, 4) == 0) in++;
  }
  EXPECT_GE(out, 2u);                               // the WRITE's packets (and any retransmission)
  EXPECT_GE(in, 1u);                                // the ACK
  EXPECT_EQ(out + in, fr.size());
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> again;
  p.a.t->take_capture(again);                       // handed over once
  EXPECT_TRUE(again.empty());
}

// The IPv4 IDs a received ICRC is checked with (net/ipv4_id.h): by default only those our framing writes (0, a GSO
// segment's index, the ID after the previous datagram's in one buffer); 400 000 random ICRCs on one packet: none is
// taken (about 64 / 2^32 each); with any ID (a kernel rxe peer) about 2^-16 each, which is why it is not the default.
TEST(UdpTransport, Ipv4IdCandidatesAreTheOnesTheSendersFramingWrites) {
  vl::wire::Packet pk;
  pk.opcode = vl::wire::RC_RDMA_WRITE_ONLY; pk.dest_qp = 0x11; pk.psn = 7; pk.reth_rkey = 0x1234; pk.reth_dmalen = 64;
  uint8_t pay[64];
  for (int i = 0; i < 64; i++) pay[i] = static_cast<uint8_t>(i);
  pk.payload = pay; pk.payload_len = 64;
  vl::wire::Framing f;
  inet_pton(AF_INET, "10.0.0.1", f.src_ip);
  inet_pton(AF_INET, "10.0.0.2", f.dst_ip);
  auto check = [&](uint16_t real, uint16_t pos, int prev, bool any) {
    vl::wire::Framing g = f;
    g.ip_id = real;
    std::vector<uint8_t> b;
    vl::wire::encode(pk, g, b);
    g.ip_id = 0;
    const uint32_t c0 = vl::wire::icrc(g, b.data(), b.size());
    const uint32_t c = vl::net::ipv4_icrc_check(g, b.data(), b.size(), pos, prev, any, c0);
    return c == vl::wire::icrc(g, b.data(), b.size()) && c != c0 ? int(g.ip_id) : (real == 0 ? 0 : -1);
  };
  EXPECT_EQ(check(0, 0, -1, false), 0);
  EXPECT_EQ(check(5, 0, -1, false), 5);            // GSO segment 5 received on its own
  EXPECT_EQ(check(63, 0, -1, false), 63);
  EXPECT_EQ(check(64, 0, -1, false), -1);          // no send of ours writes ID 64 at the start of a buffer
  EXPECT_EQ(check(70, 70, 69, false), 70);         // its position in the receive buffer
  EXPECT_EQ(check(101, 3, 100, false), 101);       // the ID after the previous datagram's
  EXPECT_EQ(check(0x1234, 0, -1, false), -1);      // kernel rxe's ID: refused by default
  EXPECT_EQ(check(0x1234, 0, -1, true), 0x1234);   // and found with any ID
  std::vector<uint8_t> b;
  vl::wire::encode(pk, f, b);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  int taken = 0, taken_any = 0;
  for (int i = 0; i < 400000; i++) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    const uint32_t r = static_cast<uint32_t>(x);
    std::memcpy(b.data() + b.size() - 4, &r, 4);
    vl::wire::Framing g = f;
    const uint32_t c0 = vl::wire::icrc(g, b.data(), b.size());
    int prev = -1;
    taken += vl::net::ipv4_icrc_check(g, b.data(), b.size(), 0, prev, false, c0) == r;
    prev = -1;
    taken_any += vl::net::ipv4_icrc_check(g, b.data(), b.size(), 0, prev, true, c0) == r;
  }
  EXPECT_EQ(taken, 0);
  EXPECT_LT(taken_any, 40);                        // about 400 000 / 65 536 = 6
  std::printf("random ICRCs taken: %d with the framing's IDs, %d with any ID (of 400 000)\n", taken, taken_any);
}

// rxe_recv.c check_addr: an RDMA WRITE with the right QPN and PSN and a good ICRC, but sent from an address that is
// not the QP's peer, is dropped (PacketDropped "address check"), writes nothing and leaves the QP in RTS.
TEST(UdpTransport, SpoofedWriteFromAnotherSourceIsDropped) {
  Pair p;
  ASSERT_TRUE(p.open());
  Host &a = p.a, &b = p.b;
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);   // the spoofer: another address on the same host
  ASSERT_GE(fd, 0);
  a.s.drain_events();
  int pmtu = IP_PMTUDISC_DO;                        // DF, ID 0: a frame our own receive check can verify
  setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
  sockaddr_in me{};
  me.sin_family = AF_INET;
  inet_pton(AF_INET, lo_addr(7).c_str(), &me.sin_addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&me), sizeof me), 0) << std::strerror(errno);
  socklen_t ml = sizeof me;
  getsockname(fd, reinterpret_cast<sockaddr*>(&me), &ml);
  vl::wire::Packet pk;
  pk.opcode = vl::wire::RC_RDMA_WRITE_ONLY; pk.dest_qp = a.qpn; pk.psn = b.psn; pk.ack_req = true;
  pk.reth_va = a.buf.addr; pk.reth_rkey = a.mr.rkey; pk.reth_dmalen = 16;
  uint8_t pay[16];
  std::memset(pay, 0xa5, sizeof pay);
  pk.payload = pay; pk.payload_len = sizeof pay;
  vl::wire::Framing f;
  std::memcpy(f.src_ip, &me.sin_addr, 4);
  inet_pton(AF_INET, lo_addr(2).c_str(), f.dst_ip);
  f.src_port = ntohs(me.sin_port); f.dst_port = a.t->port();
  std::vector<uint8_t> bytes;
  vl::wire::encode(pk, f, bytes);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(a.t->port());
  std::memcpy(&to.sin_addr, f.dst_ip, 4);
  ASSERT_EQ(sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to), ssize_t(bytes.size()));
  close(fd);
  std::string why;
  ASSERT_TRUE(pump({&a}, [&] {
    for (auto& e : a.s.drain_events()) if (e.kind == EventKind::PacketDropped) why = e.text;
    return !why.empty();
  }, 10000));
  EXPECT_NE(why.find("address check"), std::string::npos) << why;
  EXPECT_NE(why.find(lo_addr(7)), std::string::npos) << why;
  EXPECT_EQ(a.bytes(0, 16), std::vector<uint8_t>(16, 0));
  auto q = a.s.query_qp(a.qp);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->attr.qp_state, uint32_t(QPS_RTS));
  check_transfers(p, 8192);                        // the real peer's PSN was not consumed
}
