// RoCEv2 over UDP sockets: see udp.h.
#include "net/udp.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <netinet/udp.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace vl::net {

namespace {

constexpr size_t kTxBatch = 64;
constexpr size_t kRxBatch = 64;
constexpr size_t kRxSlot = 9216;               // > 4096 PMTU + headers; bigger datagrams are refused as truncated
constexpr size_t kRxSlotGro = 65536;           // a UDP GRO buffer: up to a 64 KiB IP datagram of coalesced segments
constexpr int64_t kSpinNs = 50000;             // keep polling this long after the last datagram before sleeping
// UDP GSO limits (net/ipv4/udp.c udp_send_skb): at most UDP_MAX_SEGMENTS segments (64 before Linux 5.x raised it to
// 128: the older bound is used), and the whole super-buffer is one UDP datagram, <= 65535 - 20 - 8 bytes of payload.
constexpr size_t kGsoMaxSegs = 64;
constexpr size_t kGsoMaxBytes = 65507;

int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string err_text(int e) { return std::strerror(e); }

socklen_t to_sockaddr(const IpAddr& ip, uint16_t port, sockaddr_storage& ss) {
  std::memset(&ss, 0, sizeof ss);
  if (ip.v6) {
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(port);
    std::memcpy(&s6->sin6_addr, ip.a, 16);
    s6->sin6_scope_id = ip.scope_id;
    return sizeof(sockaddr_in6);
  }
  auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
  s4->sin_family = AF_INET;
  s4->sin_port = htons(port);
  std::memcpy(&s4->sin_addr, ip.a, 4);
  return sizeof(sockaddr_in);
}

bool from_sockaddr(const sockaddr* sa, IpAddr& ip, uint16_t& port) {
  ip = IpAddr{};
  if (sa->sa_family == AF_INET) {
    auto* s4 = reinterpret_cast<const sockaddr_in*>(sa);
    std::memcpy(ip.a, &s4->sin_addr, 4);
    port = ntohs(s4->sin_port);
    return true;
  }
  if (sa->sa_family == AF_INET6) {
    auto* s6 = reinterpret_cast<const sockaddr_in6*>(sa);
    ip.v6 = true;
    std::memcpy(ip.a, &s6->sin6_addr, 16);
    ip.scope_id = s6->sin6_scope_id;
    port = ntohs(s6->sin6_port);
    return true;
  }
  return false;
}

bool link_local(const IpAddr& ip) { return ip.v6 && ip.a[0] == 0xfe && (ip.a[1] & 0xc0) == 0x80; }

bool same_ip(const IpAddr& x, const IpAddr& y) {
  return x.v6 == y.v6 && std::memcmp(x.a, y.a, x.v6 ? 16 : 4) == 0;
}

}  // namespace

// ---------------------------------------------------------------- addresses

bool gid_to_ip(const uint8_t gid[16], IpAddr& out) {
  static const uint8_t zero[16] = {};
  static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  out = IpAddr{};
  if (std::memcmp(gid, zero, 16) == 0) return false;
  if (std::memcmp(gid, mapped, 12) == 0) {
    std::memcpy(out.a, gid + 12, 4);
    return true;
  }
  out.v6 = true;
  std::memcpy(out.a, gid, 16);
  return true;
}

void ip_to_gid(const IpAddr& ip, uint8_t gid[16]) {
  std::memset(gid, 0, 16);
  if (ip.v6) { std::memcpy(gid, ip.a, 16); return; }
  gid[10] = gid[11] = 0xff;
  std::memcpy(gid + 12, ip.a, 4);
}

std::string gid_text(const uint8_t gid[16]) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid, buf, sizeof buf);
  return buf;
}

std::string ip_text(const IpAddr& ip) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(ip.v6 ? AF_INET6 : AF_INET, ip.a, buf, sizeof buf);
  std::string s = buf;
  if (ip.v6 && ip.scope_id) {
    char name[IF_NAMESIZE] = {};
    s += "%" + std::string(if_indextoname(ip.scope_id, name) ? name : std::to_string(ip.scope_id).c_str());
  }
  return s;
}

Result<IpAddr> parse_ip(const std::string& text) {
  if (text.empty() || text.size() > 100) return rfail<IpAddr>(EINVAL, "address: empty or too long");
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(text.c_str(), nullptr, &hints, &res);
  if (rc != 0 || !res) return rfail<IpAddr>(EINVAL, "address: '" + text + "' is not a numeric IPv4 or IPv6 address (" + gai_strerror(rc) + ")");
  IpAddr ip;
  uint16_t port;
  bool okay = from_sockaddr(res->ai_addr, ip, port);
  freeaddrinfo(res);
  if (!okay) return rfail<IpAddr>(EINVAL, "address: '" + text + "' has an unsupported family");
  if (ip.v6) {
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(ip.a, mapped, 12) == 0) { IpAddr v4; std::memcpy(v4.a, ip.a + 12, 4); ip = v4; }   // ::ffff:a.b.c.d
  }
  return rok(ip);
}

// ---------------------------------------------------------------- interfaces

std::vector<Interface> interfaces() {
  std::vector<Interface> out;
  ifaddrs* ifa = nullptr;
  if (getifaddrs(&ifa) != 0) return out;
  auto get = [&](const char* name) -> Interface& {
    for (auto& i : out) if (i.name == name) return i;
    Interface i;
    i.name = name;
    i.index = if_nametoindex(name);
    out.push_back(i);
    return out.back();
  };
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  for (ifaddrs* p = ifa; p; p = p->ifa_next) {
    if (!p->ifa_name) continue;
    Interface& i = get(p->ifa_name);
    i.up = p->ifa_flags & IFF_UP;
    i.loopback = p->ifa_flags & IFF_LOOPBACK;
    if (!p->ifa_addr) continue;
    if (p->ifa_addr->sa_family == AF_PACKET) {
      auto* ll = reinterpret_cast<const sockaddr_ll*>(p->ifa_addr);
      if (ll->sll_halen == 6) std::memcpy(i.mac, ll->sll_addr, 6);
    } else if (p->ifa_addr->sa_family == AF_INET || p->ifa_addr->sa_family == AF_INET6) {
      IpAddr ip;
      uint16_t port;
      if (from_sockaddr(p->ifa_addr, ip, port)) {
        if (ip.v6 && !link_local(ip)) ip.scope_id = 0;
        i.addrs.push_back(ip);
      }
    }
  }
  freeifaddrs(ifa);
  for (auto& i : out) {
    if (fd >= 0) {
      ifreq r{};
      std::snprintf(r.ifr_name, IF_NAMESIZE, "%s", i.name.c_str());
      if (ioctl(fd, SIOCGIFMTU, &r) == 0) i.mtu = r.ifr_mtu;
    }
  }
  if (fd >= 0) close(fd);
  return out;
}

Result<Interface> find_interface(const std::string& name) {
  if (name.empty() || name.size() >= IF_NAMESIZE) return rfail<Interface>(EINVAL, "interface: name '" + name + "' is empty or too long");
  std::string names;
  for (auto& i : interfaces()) {
    if (i.name == name) return rok(i);
    names += (names.empty() ? "" : ", ") + i.name;
  }
  return rfail<Interface>(ENODEV, "interface: no host interface named '" + name + "' (have: " + names + ")");
}

Result<Interface> interface_with_address(const IpAddr& ip) {
  auto all = interfaces();
  for (auto& i : all)
    for (auto& a : i.addrs)
      if (same_ip(a, ip)) return rok(i);
  // 127.0.0.0/8 is all local on Linux though only 127.0.0.1 is listed
  if (!ip.v6 && ip.a[0] == 127)
    for (auto& i : all) if (i.loopback) return rok(i);
  return rfail<Interface>(EADDRNOTAVAIL, "address: " + ip_text(ip) + " is not an address of any host interface");
}

std::vector<GidEntry> roce_gid_table(const Interface& ifc) {
  std::vector<GidEntry> g;
  GidEntry d{0, {}, "RoCE v2"};
  d.gid[0] = 0xfe; d.gid[1] = 0x80;
  const uint8_t* m = ifc.mac;
  uint8_t eui[8] = {static_cast<uint8_t>(m[0] ^ 2), m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]};
  std::memcpy(d.gid + 8, eui, 8);
  g.push_back(d);
  auto add = [&](const IpAddr& ip) {
    GidEntry e{static_cast<uint32_t>(g.size()), {}, "RoCE v2"};
    ip_to_gid(ip, e.gid);
    for (auto& x : g) if (std::memcmp(x.gid, e.gid, 16) == 0) return;
    g.push_back(e);
  };
  for (auto& a : ifc.addrs) if (!a.v6) add(a);
  for (auto& a : ifc.addrs) if (a.v6) add(a);
  return g;
}

uint32_t roce_active_mtu(uint32_t netdev_mtu) {
  // rxe: eth_mtu_int_to_enum(mtu - RXE_MAX_HDR_LENGTH (80)), at least 256, at most 4096
  int64_t m = int64_t(netdev_mtu) - 80;
  if (m >= 4096) return MTU_4096;
  if (m >= 2048) return MTU_2048;
  if (m >= 1024) return MTU_1024;
  if (m >= 512) return MTU_512;
  return MTU_256;
}

// ---------------------------------------------------------------- IPv4 ID recovery

namespace {

uint32_t trailing_icrc(const uint8_t* p, size_t n) {
  return uint32_t(p[n - 4]) | uint32_t(p[n - 3]) << 8 | uint32_t(p[n - 2]) << 16 | uint32_t(p[n - 1]) << 24;
}

// What each bit of the IPv4 ID flips in the ICRC of an n-byte packet: icrc(id) = icrc(0) ^ sum of col[i] over the
// set bits i of id (the CRC is linear, and only the packet length decides how far the ID field is from the end).
// c0 = icrc with ID 0 of this packet. Cached per length, so the 16 extra CRC passes are paid once per length.
const uint32_t* ipv4_id_basis(const wire::Framing& f, const uint8_t* p, size_t n, uint32_t c0) {
  struct Basis { size_t len = 0; uint32_t col[16]; };
  static thread_local Basis cache[8];
  static thread_local unsigned next = 0;
  for (auto& c : cache) if (c.len == n) return c.col;
  Basis* b = &cache[next++ % 8];
  wire::Framing g = f;
  for (int i = 0; i < 16; i++) { g.ip_id = static_cast<uint16_t>(1u << i); b->col[i] = wire::icrc(g, p, n) ^ c0; }
  b->len = n;
  return b->col;
}

uint32_t ipv4_id_delta(const uint32_t* col, uint16_t id) {
  uint32_t d = 0;
  for (int i = 0; i < 16; i++) if (id >> i & 1) d ^= col[i];
  return d;
}

// solve sum(x_i * col_i) = target over GF(2): Gaussian elimination on 32-bit columns. False: no ID explains it.
bool solve_ipv4_id(const uint32_t* basis, uint32_t target, uint16_t& x) {
  uint32_t col[16];
  uint16_t comb[16];
  for (int i = 0; i < 16; i++) { col[i] = basis[i]; comb[i] = static_cast<uint16_t>(1u << i); }
  x = 0;
  int rank = 0;
  for (int bit = 31; bit >= 0 && rank < 16; bit--) {
    int piv = -1;
    for (int i = rank; i < 16; i++) if (col[i] >> bit & 1) { piv = i; break; }
    if (piv < 0) continue;
    std::swap(col[piv], col[rank]);
    std::swap(comb[piv], comb[rank]);
    for (int i = 0; i < 16; i++)
      if (i != rank && (col[i] >> bit & 1)) { col[i] ^= col[rank]; comb[i] ^= comb[rank]; }
    if (target >> bit & 1) { target ^= col[rank]; x ^= comb[rank]; }
    rank++;
  }
  return target == 0;
}

// The ICRC check of one received IPv4 datagram whose ID recvmsg does not tell: ID 0 (what Linux writes for DF on an
// unconnected socket), else hint (the datagram's index in a UDP GRO buffer: Linux's GSO segmentation, inet_gso_segment,
// writes ID + index into each segment), else any ID (kernel rxe increments the ID per packet). Sets f.ip_id to the ID
// that fits and returns the ICRC for that ID; with no fit, returns the ICRC for ID 0 (!= the packet's). c0: the ICRC
// with ID 0, already computed by the caller.
uint32_t ipv4_icrc_any_id(wire::Framing& f, const uint8_t* p, size_t n, uint16_t hint, uint32_t c0) {
  f.ip_id = 0;
  const uint32_t got = trailing_icrc(p, n);
  if (c0 == got || f.ipv6 || n < 16) return c0;
  const uint32_t* col = ipv4_id_basis(f, p, n, c0);
  uint16_t x = hint;
  if ((c0 ^ ipv4_id_delta(col, hint)) != got && !solve_ipv4_id(col, got ^ c0, x)) return c0;
  f.ip_id = x;
  return got;                                      // exact: icrc(x) = c0 ^ delta(x) by linearity
}

}  // namespace

bool recover_ipv4_id(wire::Framing& f, const uint8_t* p, size_t n) {
  if (f.ipv6 || n < 16) return false;
  wire::Framing g = f;
  g.ip_id = 0;
  const uint32_t c = ipv4_icrc_any_id(g, p, n, 0, wire::icrc(g, p, n));
  if (c != trailing_icrc(p, n)) return false;
  f.ip_id = g.ip_id;
  return true;
}

// ---------------------------------------------------------------- transport

// GSO is usable on this socket when the kernel knows UDP_SEGMENT; GRO is on when setsockopt(UDP_GRO) is accepted.
static Result<int> open_socket(const IpAddr& ip, uint16_t port, bool& gso, bool& gro) {
  int fd = socket(ip.v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
  if (fd < 0) return rfail<int>(errno, std::string("socket: ") + err_text(errno));
  int one = 1;
  if (ip.v6) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    int pmtu = IPV6_PMTUDISC_DO;
    setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof pmtu);
    setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof one);   // link-local may still be tentative (DAD)
  } else {
    int pmtu = IP_PMTUDISC_DO;                       // DF set: Linux writes IPv4 ID 0 on unconnected sockets
    if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu) != 0) {
      int e = errno; close(fd);
      return rfail<int>(e, std::string("setsockopt IP_MTU_DISCOVER: ") + err_text(e));
    }
  }
  if (gso) {
    int seg = 0;
    socklen_t sl = sizeof seg;
    gso = getsockopt(fd, SOL_UDP, UDP_SEGMENT, &seg, &sl) == 0;
  }
  if (gro) gro = setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one) == 0;
  int sz = 8 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof sz) != 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof sz) != 0) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
  sockaddr_storage ss;
  socklen_t len = to_sockaddr(ip, port, ss);
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    int e = errno; close(fd);
    return rfail<int>(e, "bind [" + ip_text(ip) + "]:" + std::to_string(port) + ": " + err_text(e));
  }
  return rok(fd);
}

Result<std::unique_ptr<UdpTransport>> UdpTransport::attach(Session& s, Handle devh, const UdpOptions& o) {
  using R = Result<std::unique_ptr<UdpTransport>>;
  SessionImpl& S = s.internals();
  Device* d = S.dev(devh);
  if (!d) return rfail<std::unique_ptr<UdpTransport>>(ENOENT, "dev: no device with handle " + std::to_string(devh));
  if (d->port) return rfail<std::unique_ptr<UdpTransport>>(EBUSY, "dev: device " + d->name + " is already on the network");
  if (S.free_running) return rfail<std::unique_ptr<UdpTransport>>(EINVAL, "session: free-running mode is on; the UDP transport drives the engine in real time through poll()");
  if (o.interface.empty() == o.address.empty()) return rfail<std::unique_ptr<UdpTransport>>(EINVAL, "options: give exactly one of interface or address");
  std::unique_ptr<UdpTransport> t(new UdpTransport(s, devh));
  t->port_ = o.port;
  t->peer_port_ = o.peer_port ? o.peer_port : o.port;
  t->busy_ = o.busy_poll;
  t->zero_copy_ = o.zero_copy;
  std::vector<GidEntry> gids;
  std::vector<IpAddr> bind_to;                     // per gid index; !bindable -> no socket
  std::vector<bool> bindable;
  uint32_t mtu = 0;
  if (!o.interface.empty()) {
    auto ifc = find_interface(o.interface);
    if (!ifc.ok()) return rfail<std::unique_ptr<UdpTransport>>(ifc.err, ifc.msg);
    if (!ifc.value.up) return rfail<std::unique_ptr<UdpTransport>>(ENETDOWN, "interface: " + o.interface + " is down");
    t->ifname_ = ifc.value.name;
    mtu = ifc.value.mtu;
    gids = roce_gid_table(ifc.value);
    for (auto& g : gids) {
      IpAddr ip;
      gid_to_ip(g.gid, ip);
      if (link_local(ip)) ip.scope_id = ifc.value.index;
      bool assigned = false;
      for (auto& a : ifc.value.addrs) assigned |= same_ip(a, ip);
      bind_to.push_back(ip);
      bindable.push_back(assigned);
    }
  } else {
    auto ip = parse_ip(o.address);
    if (!ip.ok()) return rfail<std::unique_ptr<UdpTransport>>(ip.err, ip.msg);
    auto ifc = interface_with_address(ip.value);
    if (!ifc.ok()) return rfail<std::unique_ptr<UdpTransport>>(ifc.err, ifc.msg);
    if (link_local(ip.value) && !ip.value.scope_id) ip.value.scope_id = ifc.value.index;
    t->ifname_ = ifc.value.name;
    mtu = ifc.value.mtu;
    GidEntry g0 = roce_gid_table(ifc.value)[0];
    GidEntry g1{1, {}, "RoCE v2"};
    ip_to_gid(ip.value, g1.gid);
    gids = {g0, g1};
    IpAddr none;
    bind_to = {none, ip.value};
    bindable = {false, true};
  }
  bool gso = o.gso, gro = o.gro;
  for (size_t i = 0; i < gids.size(); i++) {
    t->sock_of_gid_.push_back(-1);
    if (!bindable[i]) continue;
    auto fd = open_socket(bind_to[i], t->port_, gso, gro);   // one socket without them turns them off for all
    if (!fd.ok()) {
      for (auto& k : t->socks_) close(k.fd);
      t->socks_.clear();
      return rfail<std::unique_ptr<UdpTransport>>(fd.err, "GID " + std::to_string(i) + ": " + fd.msg);
    }
    if (t->port_ == 0) {                           // ephemeral: every other GID's socket takes the same port
      sockaddr_storage ss;
      socklen_t len = sizeof ss;
      getsockname(fd.value, reinterpret_cast<sockaddr*>(&ss), &len);
      IpAddr dummy;
      from_sockaddr(reinterpret_cast<sockaddr*>(&ss), dummy, t->port_);
      if (!o.peer_port) t->peer_port_ = t->port_;
    }
    t->sock_of_gid_.back() = static_cast<int>(t->socks_.size());
    t->socks_.push_back({fd.value, bind_to[i], static_cast<uint32_t>(i)});
  }
  if (t->socks_.empty()) return rfail<std::unique_ptr<UdpTransport>>(EADDRNOTAVAIL, "interface: " + t->ifname_ + " has no IPv4/IPv6 address to bind");
  t->gids_ = gids;
  d->gids = gids;
  if (mtu) d->profile.active_mtu = std::min<uint32_t>(roce_active_mtu(mtu), MTU_4096);
  d->port = t.get();
  t->base_ = mono_ns() - int64_t(S.now);
  t->txq_.resize(kTxBatch + 2);
  t->gso_ = t->stats_.gso = gso;
  t->gro_ = t->stats_.gro = gro;
  t->rx_slot_ = o.gro ? kRxSlotGro : kRxSlot;     // a socket that took UDP_GRO may hand over up to 64 KiB
  t->rxbuf_.resize(kRxBatch * t->rx_slot_);
  t->rxh_.resize(kRxBatch);
  t->rxiov_.resize(kRxBatch);
  t->rxfrom_.resize(kRxBatch);
  t->rxctl_.resize(kRxBatch);
  t->rx_dirty_ = kRxBatch;
  if (S.capture) {
    std::string where;
    for (auto& k : t->socks_) where += (where.empty() ? "" : ", ") + std::string("[") + ip_text(k.ip) + "]:" + std::to_string(t->port_);
    auto& e = S.emit(EventKind::ObjectModified, devh, devh, "device", "device " + d->name + " on the network: " + t->ifname_ + " " + where);
    e.a = t->port_; e.b = t->peer_port_; e.c = gids.size(); e.d = mtu; e.why(Change::NetAttach);
  }
  R r;
  r.value = std::move(t);
  return r;
}

UdpTransport::~UdpTransport() {
  if (Device* d = S_.dev(dev_); d && d->port == this) d->port = nullptr;
  for (auto& k : socks_) close(k.fd);
}

wire::Framing UdpTransport::framing_for(const Sock& k, const IpAddr& peer, uint16_t sport, uint16_t dport) const {
  wire::Framing f;
  f.ipv6 = k.ip.v6;
  std::memcpy(f.src_ip, k.ip.a, k.ip.v6 ? 16 : 4);
  std::memcpy(f.dst_ip, peer.a, peer.v6 ? 16 : 4);
  f.src_port = sport;
  f.dst_port = dport;
  f.ip_id = 0;                                     // DF + unconnected socket: Linux writes ID 0
  f.df = true;
  return f;
}

void UdpTransport::drop_tx(Qp& q, const wire::Packet& p, const std::string& why) {
  stats_.tx_dropped++;
  if (!S_.capture) return;
  auto& e = S_.emit(EventKind::PacketDropped, dev_, q.h, "qp", std::string("not sent: ") + why);
  e.a = p.opcode; e.b = p.dest_qp; e.c = p.psn; e.d = 0;
}

void UdpTransport::drop_rx(const std::string& why, const uint8_t* p, size_t n) {
  stats_.rx_dropped++;
  if (!S_.capture) return;
  auto& e = S_.emit(EventKind::PacketDropped, dev_, 0, "packet", why);
  e.pkt.assign(p, p + std::min<size_t>(n, 65536));
}

void UdpTransport::transmit(Qp& q, wire::Packet& p, bool payload_in_memory) {
  // RC / UC: the QP's address vector; UD: the address handle of the WQE being sent (req_run sends sq[req_idx])
  uint32_t gi = q.attr.sgid_index;
  const uint8_t* dgid = q.attr.dgid;
  if (q.init.qp_type == QPT_UD) {
    const Ah* a = nullptr;
    if (q.req_idx < q.sq.size()) if (auto it = S_.ahs.find(q.sq[q.req_idx].wr.ah); it != S_.ahs.end()) a = &it->second;
    if (!a || !a->remote) return drop_tx(q, p, "UD: the address handle names no remote GID (Session::create_ah_remote)");
    gi = a->sgid_index;
    dgid = a->dgid;
  }
  if (gi >= sock_of_gid_.size() || sock_of_gid_[gi] < 0)
    return drop_tx(q, p, "sgid_index " + std::to_string(gi) + " has no socket (GID not assigned to " + ifname_ + ")");
  IpAddr peer;
  if (!gid_to_ip(dgid, peer)) return drop_tx(q, p, "the QP has no remote GID (modify_qp to RTR with IBV_QP_AV and a dgid)");
  const Sock& k = socks_[sock_of_gid_[gi]];
  if (peer.v6 != k.ip.v6)
    return drop_tx(q, p, "dgid " + gid_text(dgid) + " and sgid " + gid_text(gids_[gi].gid) + " are not the same IP version");
  if (link_local(peer)) peer.scope_id = k.ip.scope_id;
  int copies = 1;
  if (S_.faults.loss > 0 || S_.faults.duplicate > 0) {
    std::uniform_real_distribution<double> u(0, 1);
    double r_loss = u(S_.fault_rng), r_dup = u(S_.fault_rng);
    if (r_loss < S_.faults.loss) {
      stats_.tx_injected_loss++;
      if (S_.capture) {
        auto& e = S_.emit(EventKind::Fault, dev_, 0, "packet", std::string("loss: ") + wire::opcode_name(p.opcode) + " PSN " + std::to_string(p.psn));
        e.a = uint64_t(FaultKind::Loss); e.b = p.dest_qp; e.c = p.psn; e.d = 0;
      }
      return;
    }
    if (r_dup < S_.faults.duplicate) {
      copies = 2;
      stats_.tx_injected_dup++;
      if (S_.capture) { auto& e = S_.emit(EventKind::Fault, dev_, 0, "packet", "duplicate: PSN " + std::to_string(p.psn)); e.a = uint64_t(FaultKind::Duplicate); e.c = p.psn; e.d = 0; }
    }
  }
  const wire::Framing f0 = framing_for(k, peer, port_, peer_port_);
  sockaddr_storage to;
  const socklen_t tolen = to_sockaddr(peer, peer_port_, to);
  const size_t hl = wire::opcode_mask(p.opcode) ? wire::header_len(p.opcode) : 12;   // as encode(): unknown = bare BTH
  const size_t len = hl + p.payload_len + ((4 - (p.payload_len & 3)) & 3) + 4;           // the bytes encode() writes
  for (int c = 0; c < copies; c++) {
    if (ntx_ >= kTxBatch) flush();                 // flush() keeps the slots' bytes, only the count resets
    Tx& t = txq_[ntx_];
    t.sock = sock_of_gid_[gi];
    t.to = to;
    t.tolen = tolen;
    t.f = f0;
    t.seg = 0;
    t.closed = false;
    t.rec = SIZE_MAX;
    if (gso_ && ntx_ > 0) {
      // joins the group before it: same socket and peer, not longer than the group's segment size (a shorter one
      // is the group's last; only after two equal ones, so a first packet with a RETH does not end a run of middles)
      const Tx& prev = txq_[ntx_ - 1];
      const size_t seg = txq_[ntx_ - 1 - prev.seg].len;
      if (!prev.closed && prev.sock == t.sock && prev.tolen == tolen && std::memcmp(&prev.to, &to, tolen) == 0 &&
          (len == seg || (len < seg && prev.seg > 0)) && prev.seg + 1u < kGsoMaxSegs && (prev.seg + 2u) * seg <= kGsoMaxBytes) {
        t.seg = static_cast<uint16_t>(prev.seg + 1);
        t.closed = len < seg;
        if (!t.f.ipv6) t.f.ip_id = t.seg;           // inet_gso_segment: segment k gets the super-buffer's ID (0) + k
      }
    }
    ntx_++;
    t.len = len;
    t.zc = nullptr;
    if (zero_copy_ && payload_in_memory && p.payload_len >= 1024 && !capture_ && !S_.capture) {
      // the MR's bytes stay put until flush(): it runs before this poll() returns, and no packet is delivered into
      // memory in between (run_due sends, then flush; receive flushes after each buffer it delivers)
      t.hl = wire::encode_split(p, t.f, t.hdr, t.tail, &t.tl);
      t.zc = p.payload;
      t.zc_len = p.payload_len;
      stats_.tx_zero_copy++;
      continue;
    }
    wire::encode(p, t.f, t.buf);
    if (capture_) { t.rec = recs_.size(); recs_.push_back({S_.now, t.f, t.buf}); }
    if (S_.capture && c == 0) {
      auto& e = S_.emit(EventKind::PacketSent, dev_, q.h, "qp", wire::opcode_name(p.opcode));
      e.a = p.opcode; e.b = p.dest_qp; e.c = p.psn; e.d = 0;
      e.pkt = t.buf;
    }
  }
}

void UdpTransport::flush() {
  size_t i = 0;
  while (i < ntx_) {                               // runs of one socket's packets (a GSO group never spans two)
    size_t j = i + 1;
    while (j < ntx_ && txq_[j].sock == txq_[i].sock) j++;
    send_run(txq_[i].sock, i, j);
    i = j;
  }
  ntx_ = 0;
}

void UdpTransport::send_run(int sk, size_t first, size_t end) {
  mmsghdr hdr[kTxBatch + 2];
  iovec iov[3 * (kTxBatch + 2)];                   // a zero-copy packet takes three: headers, payload in the MR, pad + ICRC
  size_t start[kTxBatch + 2], count[kTxBatch + 2];   // per message: first packet, packets in it
  alignas(cmsghdr) char ctl[kTxBatch + 2][CMSG_SPACE(sizeof(uint16_t))];
  size_t nm = 0, ni = 0;
  for (size_t i = first; i < end;) {               // one message per GSO group (or single packet)
    size_t n = 1;
    while (i + n < end && txq_[i + n].seg > 0) n++;
    hdr[nm] = {};
    msghdr& h = hdr[nm].msg_hdr;
    h.msg_iov = &iov[ni];
    for (size_t m = 0; m < n; m++) {
      Tx& t = txq_[i + m];
      if (!t.zc) { iov[ni++] = {t.buf.data(), t.buf.size()}; continue; }
      iov[ni++] = {t.hdr, t.hl};
      iov[ni++] = {const_cast<uint8_t*>(t.zc), t.zc_len};
      iov[ni++] = {t.tail, t.tl};
    }
    h.msg_iovlen = size_t(&iov[ni] - h.msg_iov);
    h.msg_name = &txq_[i].to;
    h.msg_namelen = txq_[i].tolen;
    if (n > 1) {                                   // UDP_SEGMENT cmsg: the kernel cuts the iovecs' bytes every gso_size
      h.msg_control = ctl[nm];
      h.msg_controllen = sizeof ctl[nm];
      cmsghdr* cm = CMSG_FIRSTHDR(&h);
      cm->cmsg_level = SOL_UDP;
      cm->cmsg_type = UDP_SEGMENT;
      cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
      const uint16_t gs = static_cast<uint16_t>(txq_[i].len);
      std::memcpy(CMSG_DATA(cm), &gs, sizeof gs);
    }
    start[nm] = i;
    count[nm] = n;
    nm++;
    i += n;
  }
  size_t done = 0;
  while (done < nm) {
    int r = sendmmsg(socks_[sk].fd, hdr + done, static_cast<unsigned>(nm - done), 0);
    stats_.syscalls_tx++;
    if (r > 0) {
      for (size_t m = done; m < done + size_t(r); m++) {
        for (size_t x = 0; x < count[m]; x++) stats_.tx_bytes += txq_[start[m] + x].len;
        stats_.tx_packets += count[m];
        if (count[m] > 1) { stats_.tx_gso_sends++; stats_.tx_gso_segments += count[m]; }
      }
      done += r;
      continue;
    }
    int e = errno;
    if (e == EINTR) continue;
    if (e == EAGAIN || e == ENOBUFS) {
      pollfd pf{socks_[sk].fd, POLLOUT, 0};
      ::poll(&pf, 1, 1);
      continue;
    }
    if (count[done] > 1 && (e == EINVAL || e == ENOPROTOOPT || e == EIO || e == EOPNOTSUPP)) {
      // the kernel refuses UDP GSO here (no checksum offload on the route's device, xfrm, ...): off for good, and
      // these packets go one per datagram, their IPv4 IDs (so ICRCs) now those of single datagrams
      gso_off(start[done], end, e);
      return send_run(sk, start[done], end);
    }
    // this datagram (or group) cannot go (EMSGSIZE with DF, unreachable...): report it and go on with the rest
    stats_.tx_dropped += count[done];
    if (S_.capture) {
      const Tx& t = txq_[start[done]];
      auto& ev = S_.emit(EventKind::PacketDropped, dev_, 0, "packet", "send to " + std::to_string(t.tolen) + "-byte address failed: " + err_text(e));
      if (!t.zc) ev.pkt = t.buf;                   // (a zero-copy packet is never sent while events are recorded)
    }
    done++;
  }
}

void UdpTransport::gso_off(size_t first, size_t end, int e) {
  gso_ = stats_.gso = false;
  stats_.gso_fallback_errno = e;
  for (size_t i = first; i < end; i++) {
    Tx& t = txq_[i];
    t.seg = 0;
    t.closed = false;
    if (t.f.ipv6 || t.f.ip_id == 0) continue;
    t.f.ip_id = 0;                                 // re-frame: a single DF datagram from an unconnected socket has ID 0
    uint32_t c;
    if (t.zc) {
      wire::Crc32 x = wire::icrc_begin(t.f, t.len, t.hdr);
      x.update(t.hdr + 12, t.hl - 12);
      x.update(t.zc, t.zc_len);
      x.update(t.tail, t.tl - 4);
      c = x.value();
    } else {
      c = wire::icrc(t.f, t.buf.data(), t.buf.size());
    }
    uint8_t* q = t.zc ? t.tail + t.tl - 4 : t.buf.data() + t.buf.size() - 4;
    q[0] = uint8_t(c); q[1] = uint8_t(c >> 8); q[2] = uint8_t(c >> 16); q[3] = uint8_t(c >> 24);
    if (t.rec < recs_.size()) { recs_[t.rec].f = t.f; recs_[t.rec].pkt = t.buf; }
  }
}

size_t UdpTransport::receive(Sock& k) {
  mmsghdr* hdr = rxh_.data();
  sockaddr_storage* from = rxfrom_.data();
  size_t total = 0;
  for (int round = 0; round < 8; round++) {
    for (size_t i = 0; i < rx_dirty_; i++) {
      rxiov_[i] = {rxbuf_.data() + i * rx_slot_, rx_slot_};
      hdr[i] = {};
      hdr[i].msg_hdr.msg_name = &from[i];
      hdr[i].msg_hdr.msg_namelen = sizeof from[i];
      hdr[i].msg_hdr.msg_iov = &rxiov_[i];
      hdr[i].msg_hdr.msg_iovlen = 1;
      if (gro_) { hdr[i].msg_hdr.msg_control = rxctl_[i].b; hdr[i].msg_hdr.msg_controllen = sizeof rxctl_[i].b; }
    }
    int r = recvmmsg(k.fd, hdr, kRxBatch, MSG_DONTWAIT, nullptr);
    rx_dirty_ = r > 0 ? size_t(r) : 1;              // (an error: the first header may have been written, cheap to redo)
    stats_.syscalls_rx++;
    if (r <= 0) break;
    for (int i = 0; i < r; i++) {
      const uint8_t* data = rxbuf_.data() + i * rx_slot_;
      const msghdr& h = hdr[i].msg_hdr;
      size_t n = hdr[i].msg_len;
      size_t seg = n;                              // UDP GRO: n bytes of datagrams of seg bytes each, the last shorter
      for (cmsghdr* cm = h.msg_controllen ? CMSG_FIRSTHDR(&h) : nullptr; cm; cm = CMSG_NXTHDR(const_cast<msghdr*>(&h), cm))
        if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
          int gs = 0;
          std::memcpy(&gs, CMSG_DATA(cm), sizeof gs);
          if (gs > 0 && size_t(gs) < n) seg = size_t(gs);
        }
      if ((h.msg_flags & MSG_TRUNC) || seg > kRxSlot) {   // no RoCE packet is this big (a GRO buffer may be)
        stats_.rx_packets++; stats_.rx_bytes += n; total++;
        drop_rx("malformed: datagram larger than " + std::to_string(kRxSlot) + " bytes", data, n);
        continue;
      }
      IpAddr src;
      uint16_t sport = 0;
      const bool from_ok = from_sockaddr(reinterpret_cast<const sockaddr*>(&from[i]), src, sport) && src.v6 == k.ip.v6;
      if (seg < n) { stats_.rx_gro_buffers++; stats_.rx_gro_segments += (n + seg - 1) / seg; }
      size_t off = 0;
      uint16_t idx = 0;
      do {                                         // (an empty datagram too: refused as too short)
        const size_t m = std::min(seg, n - off);
        stats_.rx_packets++;
        stats_.rx_bytes += m;
        total++;
        if (!from_ok) drop_rx("malformed: unexpected source address family", data + off, m);
        else receive_datagram(k, src, sport, data + off, m, idx);
        off += m;
        idx++;
      } while (off < n);
      // an ACK (or read response) this buffer produced goes out now: the peer's requester may be waiting for it
      // (RC: at most 128 unacknowledged PSNs, an ACK requested every 64 packets, rxe_req.c / rxe_resp.c)
      if (ntx_) flush();
    }
    flush();                                       // ACKs / read responses out now, not after the whole burst
    if (size_t(r) < kRxBatch) break;
  }
  return total;
}

// One datagram (or one segment of a GRO buffer, idx its index there), checked against the IP/UDP header it had on
// the wire: lengths from its own size, addresses from recvmsg and the bound socket, the IPv4 ID as ipv4_icrc_any_id finds it.
void UdpTransport::receive_datagram(Sock& k, const IpAddr& src, uint16_t sport, const uint8_t* data, size_t n, uint16_t idx) {
  if (n < 16) return drop_rx("malformed: " + std::to_string(n) + "-byte datagram is shorter than BTH + ICRC", data, n);
  wire::Framing f = framing_for(k, src, sport, port_);
  std::memcpy(f.src_ip, src.a, 16);                // the peer sent it: src = peer, dst = our bound address
  std::memcpy(f.dst_ip, k.ip.a, 16);
  // the copy the session needs (deliver_framed takes a vector) and the ICRC with ID 0 in one pass over the bytes
  uint32_t crc;
  if (n < 1024) {
    pktbuf_.assign(data, data + n);
    crc = wire::icrc(f, data, n);
  } else {
    pktbuf_.resize(n);
    wire::Crc32 c = wire::icrc_begin(f, n, data);
    std::memcpy(pktbuf_.data(), data, 12);
    c.state = wire::crc32_copy_update(c.state, pktbuf_.data() + 12, data + 12, n - 16);
    std::memcpy(pktbuf_.data() + n - 4, data + n - 4, 4);
    crc = c.value();
  }
  if (!f.ipv6) crc = ipv4_icrc_any_id(f, data, n, idx, crc);
  if (capture_) recs_.push_back({S_.now, f, std::vector<uint8_t>(data, data + n)});
  S_.deliver_framed(0, dev_, f, 0, pktbuf_, &crc);  // the ICRC is compared (and a mismatch dropped) there
}

void UdpTransport::sync_clock() {
  int64_t t = mono_ns() - base_;
  if (t > int64_t(S_.now)) S_.now = uint64_t(t);
}

size_t UdpTransport::run_due() {
  size_t n = 0;
  while (!S_.idle() && S_.next_time() <= S_.now) {
    S_.step();
    n++;
  }
  return n;
}

size_t UdpTransport::poll(int64_t timeout_ns) {
  const int64_t deadline = mono_ns() + std::max<int64_t>(0, timeout_ns);
  for (;;) {
    size_t work = 0;
    sync_clock();
    work += run_due();
    flush();
    for (auto& k : socks_) work += receive(k);
    if (work) {
      last_work_ = mono_ns();
      sync_clock();
      work += run_due();
      flush();
      return work;
    }
    int64_t now = mono_ns();
    if (now >= deadline) return 0;
    int64_t wait = deadline - now;
    if (!S_.idle()) wait = std::min<int64_t>(wait, std::max<int64_t>(0, int64_t(S_.next_time()) - int64_t(S_.now)));
    if (busy_ || wait == 0) continue;
    if (now - last_work_ < kSpinNs) continue;      // a burst is likely still arriving: spin briefly, no sleep
    pollfd pf[16];
    nfds_t nf = 0;
    for (auto& k : socks_) if (nf < 16) pf[nf++] = {k.fd, POLLIN, 0};
    timespec ts{static_cast<time_t>(wait / 1000000000), static_cast<long>(wait % 1000000000)};
    ppoll(pf, nf, &ts, nullptr);
  }
}

Status UdpTransport::write_pcap(const std::string& path) const {
  wire::PcapWriter w;
  std::string err;
  if (!w.open(path, &err)) return fail(EIO, "path: " + err);
  std::vector<uint8_t> fr;
  for (auto& r : recs_) {
    wire::frame(r.f, r.pkt.data(), r.pkt.size(), fr);
    w.write(r.t, fr.data(), fr.size());
  }
  w.close();
  if (w.failed()) return fail(EIO, "path: write failed");
  return ok();
}

void UdpTransport::take_capture(std::vector<std::pair<uint64_t, std::vector<uint8_t>>>& out) {
  for (size_t i = 0; i < ntx_; i++) txq_[i].rec = SIZE_MAX;   // their records leave now
  for (auto& r : recs_) {
    out.emplace_back(r.t, std::vector<uint8_t>{});
    wire::frame(r.f, r.pkt.data(), r.pkt.size(), out.back().second);
  }
  recs_.clear();
}

}  // namespace vl::net
