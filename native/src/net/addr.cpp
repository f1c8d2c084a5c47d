// Addresses, GIDs and host interfaces for the UDP transport (see udp.h): numeric parsing, getifaddrs, the
// soft-RoCE GID table.
#include "net/addr.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netpacket/packet.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace vl::net {

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

}  // namespace vl::net
