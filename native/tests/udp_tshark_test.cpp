// The real packets: while two sessions move data over UDP port 4791 on loopback (with injected loss, so
// retransmissions are on the wire too), an AF_PACKET socket on lo captures what the kernel actually sent. The
// transports send with UDP GSO, which lo carries unsegmented: the capture asks for the virtio_net_hdr
// (PACKET_VNET_HDR) and cuts a GSO frame into the datagrams Linux's software segmentation makes of it
// (inet_gso_segment / __udp_gso_segment: each gso_size bytes of payload, IP ID = the frame's ID + index, lengths and
// IP checksum per segment). Every datagram must be IPv4 with DF and ID 0 + its index in its GSO frame (what the
// ICRC was computed over), verify with our icrc_from_ip, and
// decode in tshark with our independent icrc_check.lua reporting "good" (docs/wire.md 2.2). The transports' own pcap (headers rebuilt
// from the socket addresses) must match too.
#include <arpa/inet.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <linux/if_ether.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <cstdio>
#include <sstream>
#include <thread>

#include "udp_fixture.h"

std::string vl_test_file(const std::string& rel, std::string* tried);

using namespace vlu;

namespace {

std::string lo_addr(int host) {
  unsigned p = static_cast<unsigned>(getpid());
  return "127." + std::to_string(1 + (p >> 8) % 250) + "." + std::to_string(p & 0xff) + "." + std::to_string(100 + host);
}

std::string run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) { *status = -1; return out; }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

// counts of tshark's icrc_check.status column (native/tests/tshark/icrc_check.lua: no code shared with the device)
std::map<std::string, int> tshark_status(const std::string& lua, const std::string& pcap, std::string* raw) {
  int st = 0;
  std::string out = run("tshark -X lua_script:'" + lua + "' -r '" + pcap + "' -Y infiniband -T fields -e icrc_check.status 2>/dev/null", &st);
  *raw = out;
  std::map<std::string, int> m;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) m[line]++;
  if (st != 0) m["<tshark exit " + std::to_string(st) + ">"]++;
  return m;
}

// struct virtio_net_hdr (linux/virtio_net.h; that header does not compile as C++ here), host byte order on x86
struct virtio_net_hdr { uint8_t flags, gso_type; uint16_t hdr_len, gso_size, csum_start, csum_offset; };
constexpr uint8_t VIRTIO_NET_HDR_GSO_UDP_L4 = 5;

// A frame captured with its virtio_net_hdr -> the IPv4/UDP datagrams it stands for: itself, or the segments of a
// UDP GSO frame as the kernel's software segmentation writes them. Empty when the frame is not Ethernet/IPv4/UDP.
std::vector<std::vector<uint8_t>> segments(const uint8_t* vh, const uint8_t* fr, size_t n, size_t* gso_frames) {
  virtio_net_hdr h;
  std::memcpy(&h, vh, sizeof h);
  const size_t l3 = 14, l4 = l3 + 20, pl = l4 + 8;
  if (n < pl || (fr[l3] & 0x0f) != 5) return {};
  if (h.gso_type != VIRTIO_NET_HDR_GSO_UDP_L4 || h.gso_size == 0 || n - pl <= h.gso_size) return {std::vector<uint8_t>(fr, fr + n)};
  (*gso_frames)++;
  std::vector<std::vector<uint8_t>> out;
  const uint16_t id0 = uint16_t(fr[l3 + 4] << 8 | fr[l3 + 5]);
  uint16_t k = 0;
  for (size_t off = pl; off < n; off += h.gso_size, k++) {
    const size_t m = std::min<size_t>(h.gso_size, n - off);
    std::vector<uint8_t> s(fr, fr + pl);
    s.insert(s.end(), fr + off, fr + off + m);
    const uint16_t tot = uint16_t(20 + 8 + m), id = uint16_t(id0 + k), ulen = uint16_t(8 + m);
    s[l3 + 2] = uint8_t(tot >> 8); s[l3 + 3] = uint8_t(tot);
    s[l3 + 4] = uint8_t(id >> 8); s[l3 + 5] = uint8_t(id);
    s[l3 + 10] = s[l3 + 11] = 0;
    uint32_t sum = 0;
    for (size_t i = 0; i < 20; i += 2) sum += uint32_t(s[l3 + i] << 8 | s[l3 + i + 1]);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    s[l3 + 10] = uint8_t(~sum >> 8); s[l3 + 11] = uint8_t(~sum);
    s[l4 + 4] = uint8_t(ulen >> 8); s[l4 + 5] = uint8_t(ulen);
    s[l4 + 6] = s[l4 + 7] = 0;                       // UDP checksum: lo leaves it partial; 0 = none (RoCEv2 allows it)
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

TEST(UdpTshark, KernelWrittenPacketsHaveGoodIcrc) {
  ASSERT_EQ(std::system("command -v tshark >/dev/null 2>&1"), 0) << "tshark not found on PATH (apt-get install -y tshark)";
  std::string tried;
  const std::string lua = vl_test_file("native/tests/tshark/icrc_check.lua", &tried);
  ASSERT_FALSE(lua.empty()) << "icrc_check.lua not found in the repo; tried:\n" << tried;

  const std::string aa = lo_addr(2), ba = lo_addr(3);
  uint32_t a4, b4;
  inet_pton(AF_INET, aa.c_str(), &a4);
  inet_pton(AF_INET, ba.c_str(), &b4);
  // capture on lo before any packet flows
  int cap = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
  ASSERT_GE(cap, 0) << "AF_PACKET socket: " << std::strerror(errno) << " (needs CAP_NET_RAW)";
  sockaddr_ll ll{};
  ll.sll_family = AF_PACKET;
  ll.sll_protocol = htons(ETH_P_ALL);
  ll.sll_ifindex = static_cast<int>(if_nametoindex("lo"));
  ASSERT_EQ(bind(cap, reinterpret_cast<sockaddr*>(&ll), sizeof ll), 0);
  int one = 1;
  ASSERT_EQ(setsockopt(cap, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof one), 0) << std::strerror(errno);
  int big = 16 << 20;
  setsockopt(cap, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
  timeval tv{0, 20000};
  setsockopt(cap, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::vector<std::vector<uint8_t>> frames;
  std::atomic<bool> stop{false};
  std::atomic<size_t> captured{0};
  size_t gso_frames = 0;
  std::thread th([&] {
    std::vector<uint8_t> raw(70000 + sizeof(virtio_net_hdr));
    const size_t vh = sizeof(virtio_net_hdr);
    while (!stop.load()) {
      sockaddr_ll from{};
      socklen_t fl = sizeof from;
      ssize_t got = recvfrom(cap, raw.data(), raw.size(), 0, reinterpret_cast<sockaddr*>(&from), &fl);
      if (got <= ssize_t(vh) || from.sll_pkttype == PACKET_OUTGOING) continue;   // lo shows each packet twice
      const uint8_t* buf = raw.data() + vh;
      const size_t n = size_t(got) - vh;
      if (n < 14 + 20 + 8 || buf[12] != 0x08 || buf[13] != 0x00 || buf[14 + 9] != 17) continue;
      uint32_t s, d;
      std::memcpy(&s, &buf[14 + 12], 4);
      std::memcpy(&d, &buf[14 + 16], 4);
      if (!((s == a4 && d == b4) || (s == b4 && d == a4))) continue;
      for (auto& seg : segments(raw.data(), buf, n, &gso_frames)) { frames.push_back(std::move(seg)); captured++; }
    }
  });
  struct Joiner {
    std::atomic<bool>& stop; std::thread& th; int fd;
    ~Joiner() { stop = true; if (th.joinable()) th.join(); if (fd >= 0) close(fd); }
  } joiner{stop, th, cap};

  Host a(3), b(4);
  ASSERT_TRUE(a.open(aa, 4791, 4791, 1 << 20));     // the real RoCEv2 port, on addresses unique to this process
  ASSERT_TRUE(b.open(ba, 4791, 4791, 1 << 20));
  a.t->set_capture(true);
  b.t->set_capture(true);
  a.psn = 0xfffffa; b.psn = 77;                     // a's PSNs wrap past 2^24
  ASSERT_TRUE(a.connect(b.gid(), b.qpn, b.psn, MTU_4096, 12));
  ASSERT_TRUE(b.connect(a.gid(), a.qpn, a.psn, MTU_4096, 12));
  FaultConfig f; f.loss = 0.01;
  a.s.set_faults(f);
  const uint32_t len = 200000;
  a.pattern(0, len, 9);
  ASSERT_TRUE(b.recv(0, len, 1).ok());
  ASSERT_TRUE(a.post(WR_SEND, 0, len, 0, 0, 1).ok());
  ASSERT_TRUE(a.post(WR_RDMA_WRITE, 0, len, b.buf.addr + 400000, b.mr.rkey, 2).ok());
  ASSERT_TRUE(a.post(WR_RDMA_READ, 600000, len, b.buf.addr + 400000, b.mr.rkey, 3).ok());
  std::vector<Wc> wc;
  ASSERT_TRUE(pump({&a, &b}, wait_cq(a, a.scq, wc, 3)));
  for (auto& w : wc) EXPECT_EQ(w.status, WC_SUCCESS) << w.wr_id;
  EXPECT_EQ(b.bytes(0, len), a.bytes(0, len));
  EXPECT_EQ(a.bytes(600000, len), a.bytes(0, len));
  pump({&a, &b}, [] { return false; }, 100);        // let the last ACKs land
  const uint64_t sent = a.t->stats().tx_packets + b.t->stats().tx_packets;
  ASSERT_TRUE(pump({}, [&] { return captured.load() >= sent; }, 5000)) << captured.load() << " of " << sent << " captured";
  stop = true;
  th.join();
  EXPECT_GT(a.t->stats().tx_injected_loss, 0u);

  EXPECT_GT(a.t->stats().tx_gso_sends, 0u);        // the WRITE / SEND / READ response bursts went out as GSO frames
  EXPECT_GT(gso_frames, 0u);
  // every datagram: IPv4 DF, ID = its index in its GSO frame, our ICRC verifies over the header as captured
  char dir[] = "/tmp/vl_udp_tshark_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string wire_pcap = std::string(dir) + "/wire.pcap", own_pcap = std::string(dir) + "/own.pcap";
  vl::wire::PcapWriter w;
  ASSERT_TRUE(w.open(wire_pcap));
  size_t n = 0;
  size_t nonzero_ids = 0;
  for (auto& fr : frames) {
    vl::wire::Framing fm;
    const uint8_t* pl = nullptr;
    size_t pn = 0;
    std::string err;
    ASSERT_TRUE(vl::wire::parse_frame(fr.data(), fr.size(), fm, &pl, &pn, &err)) << err;
    EXPECT_TRUE(fm.df);
    EXPECT_LT(fm.ip_id, 64);                          // at most 64 segments per GSO send (net/udp.cpp kGsoMaxSegs)
    nonzero_ids += fm.ip_id != 0;
    EXPECT_EQ(fm.dst_port, 4791);
    EXPECT_TRUE(vl::wire::icrc_ok(fm, pl, pn)) << "frame " << n;
    w.write(n++ * 1000, fr.data(), fr.size());
  }
  w.close();
  EXPECT_GT(nonzero_ids, 0u);
  ASSERT_TRUE(a.t->write_pcap(own_pcap).ok());
  std::string raw;
  auto m = tshark_status(lua, wire_pcap, &raw);
  EXPECT_EQ(m.size(), 1u) << raw.substr(0, 2000);
  EXPECT_EQ(m["good"], static_cast<int>(frames.size())) << raw.substr(0, 2000);
  auto own = tshark_status(lua, own_pcap, &raw);
  EXPECT_EQ(own.size(), 1u) << raw.substr(0, 2000);
  EXPECT_EQ(own["good"], static_cast<int>(a.t->stats().tx_packets + a.t->stats().rx_packets)) << raw.substr(0, 2000);
  std::printf("[ info ] %zu kernel-written frames captured on lo, all ICRC good in tshark\n", frames.size());
  std::remove(wire_pcap.c_str());
  std::remove(own_pcap.c_str());
  rmdir(dir);
}
