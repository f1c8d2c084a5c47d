// Two software devices in two network namespaces made by this test, joined by a veth pair: each device is
// attached to its veth interface and takes its GID table from it the soft-RoCE way (GID 0 = link-local from the
// MAC, then IPv4-mapped, then IPv6), active_mtu from the 1500-byte MTU (1024), and RC traffic crosses the veth
// over IPv4 and IPv6 with every byte intact. The addresses exist only inside these namespaces.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>

#include "udp_fixture.h"

using namespace vlu;

namespace {

int sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

struct Netns {
  std::string a, b, va, vb;
  bool made = false;
  std::string why;
  Netns() {
    unsigned p = static_cast<unsigned>(getpid());
    a = "vlnsA" + std::to_string(p); b = "vlnsB" + std::to_string(p);
    va = "vla" + std::to_string(p % 1000000); vb = "vlb" + std::to_string(p % 1000000);
    const char* steps[][2] = {
        {"ip netns add A", "ip netns add"}, {"ip netns add B", "ip netns add"},
        {"ip link add VA type veth peer name VB", "veth"},
        {"ip link set VA netns A", "move veth"}, {"ip link set VB netns B", "move veth"},
        {"ip -n A addr add 192.168.77.1/24 dev VA", "address"}, {"ip -n B addr add 192.168.77.2/24 dev VB", "address"},
        {"ip -n A addr add fd00:77::1/64 dev VA nodad", "address"}, {"ip -n B addr add fd00:77::2/64 dev VB nodad", "address"},
        {"ip -n A link set lo up", "up"}, {"ip -n B link set lo up", "up"},
        {"ip -n A link set VA up", "up"}, {"ip -n B link set VB up", "up"}};
    for (auto& s : steps) {
      std::string c = s[0];
      for (auto [k, v] : {std::pair<std::string, std::string>{"VA", va}, {"VB", vb}, {" A", " " + a}, {" B", " " + b}}) {
        for (size_t i; (i = c.find(k)) != std::string::npos;) c.replace(i, k.size(), v);
      }
      if (sh(c) != 0) { why = c; return; }
    }
    made = true;
  }
  ~Netns() { sh("ip netns del " + a); sh("ip netns del " + b); }
};

// run f with this thread inside network namespace ns (sockets made there stay there), then come back
template <class F> ::testing::AssertionResult in_ns(const std::string& ns, F f) {
  int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  int fd = open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
  if (self < 0 || fd < 0) { if (self >= 0) close(self); if (fd >= 0) close(fd); return ::testing::AssertionFailure() << "open netns " << ns; }
  if (setns(fd, CLONE_NEWNET) != 0) { close(fd); close(self); return ::testing::AssertionFailure() << "setns " << ns << ": " << std::strerror(errno); }
  auto r = f();
  setns(self, CLONE_NEWNET);
  close(fd); close(self);
  return r;
}

int gid_index_of(Host& h, const std::string& text) {
  for (auto& g : h.t->gids()) if (vl::net::gid_text(g.gid) == text) return static_cast<int>(g.index);
  return -1;
}

void transfer(Host& a, Host& b, uint32_t len) {
  a.pattern(0, len, 5);
  ASSERT_TRUE(a.post(WR_RDMA_WRITE, 0, len, b.buf.addr + 100, b.mr.rkey, 1).ok());
  b.pattern(2 * len, len, 6);
  ASSERT_TRUE(a.recv(3 * len, len, 2).ok());
  ASSERT_TRUE(b.post(WR_SEND, 2 * len, len, 0, 0, 3).ok());
  std::vector<Wc> as, ar, bs;
  ASSERT_TRUE(pump({&a, &b}, [&] { wait_cq(a, a.scq, as, 1)(); wait_cq(a, a.rcq, ar, 1)(); wait_cq(b, b.scq, bs, 1)(); return as.size() && ar.size() && bs.size(); }));
  EXPECT_EQ(as[0].status, WC_SUCCESS);
  EXPECT_EQ(ar[0].status, WC_SUCCESS);
  EXPECT_EQ(bs[0].status, WC_SUCCESS);
  EXPECT_EQ(b.bytes(100, len), a.bytes(0, len));
  EXPECT_EQ(a.bytes(3 * len, len), b.bytes(2 * len, len));
}

}  // namespace

TEST(UdpNetns, VethPairBetweenTwoNamespacesIPv4AndIPv6) {
  Netns ns;
  ASSERT_TRUE(ns.made) << "could not build the namespaces (needs root and iproute2): " << ns.why;
  Host a4(1), b4(2), a6(3), b6(4);
  ASSERT_TRUE(in_ns(ns.a, [&] { auto r = a4.open(ns.va, 4791, 4791, 1 << 20, true); return r ? a6.open(ns.va, 4792, 4792, 1 << 20, true) : r; }));
  ASSERT_TRUE(in_ns(ns.b, [&] { auto r = b4.open(ns.vb, 4791, 4791, 1 << 20, true); return r ? b6.open(ns.vb, 4792, 4792, 1 << 20, true) : r; }));
  EXPECT_EQ(a4.t->interface_name(), ns.va);
  // GID table as rxe builds it
  auto& g = a4.t->gids();
  ASSERT_GE(g.size(), 3u);
  EXPECT_EQ(g[0].gid[0], 0xfe);
  EXPECT_EQ(g[0].gid[1], 0x80);
  EXPECT_EQ(g[0].gid[11], 0xff);                     // EUI-64 from the veth MAC: ..:xx:ff:fe:xx:..
  EXPECT_EQ(g[0].gid[12], 0xfe);
  EXPECT_EQ(vl::net::gid_text(g[1].gid), "::ffff:192.168.77.1");
  EXPECT_GT(gid_index_of(a4, "fd00:77::1"), 1);
  EXPECT_EQ(a4.s.devices()[0].profile.active_mtu, MTU_1024);   // veth MTU 1500 -> 1024
  EXPECT_EQ(a4.s.devices()[0].gids.size(), g.size());
  // IPv4 across the veth
  a4.gid_index = 1; b4.gid_index = 1;
  a4.psn = 10; b4.psn = 20;
  ASSERT_TRUE(a4.connect(b4.gid(), b4.qpn, b4.psn, MTU_1024));
  ASSERT_TRUE(b4.connect(a4.gid(), a4.qpn, a4.psn, MTU_1024));
  transfer(a4, b4, 200000);
  // IPv6 across the veth (global addresses; GID index as in the table)
  a6.gid_index = gid_index_of(a6, "fd00:77::1");
  b6.gid_index = gid_index_of(b6, "fd00:77::2");
  ASSERT_GT(a6.gid_index, 1u);
  ASSERT_GT(b6.gid_index, 1u);
  a6.psn = 30; b6.psn = 40;
  ASSERT_TRUE(a6.connect(b6.gid(), b6.qpn, b6.psn, MTU_1024));
  ASSERT_TRUE(b6.connect(a6.gid(), a6.qpn, a6.psn, MTU_1024));
  transfer(a6, b6, 200000);
  EXPECT_EQ(a4.t->stats().rx_dropped + b4.t->stats().rx_dropped + a6.t->stats().rx_dropped + b6.t->stats().rx_dropped, 0u);
}
