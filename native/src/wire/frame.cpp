// Ethernet + IPv4/IPv6 + UDP framing around a RoCEv2 UDP payload, and the matching parsers (docs/wire.md 1.1).
#include <cstdio>
#include <cstring>

#include "vl/wire.h"
#include "wire/be.h"

namespace vl::wire {
using namespace detail;

namespace {

bool fail(std::string* err, std::string msg) {
  if (err) *err = std::move(msg);
  return false;
}

uint16_t ipv4_checksum(const uint8_t* h) {
  uint32_t s = 0;
  for (int i = 0; i < 20; i += 2) s += get16(h + i);
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return uint16_t(~s);
}

void default_mac(const Framing& f, const uint8_t* ip, uint8_t mac[6]) {
  const size_t n = f.ipv6 ? 16 : 4;
  mac[0] = 0x02;
  mac[1] = 0x00;
  std::memcpy(mac + 2, ip + n - 4, 4);
}

}  // namespace

void frame(const Framing& f, const uint8_t* udp_payload, size_t len, std::vector<uint8_t>& out,
           const uint8_t src_mac[6], const uint8_t dst_mac[6]) {
  const size_t iplen = f.ipv6 ? 40 : 20;
  out.resize(14 + iplen + 8 + len);
  uint8_t* e = out.data();
  uint8_t smac[6], dmac[6];
  if (dst_mac) std::memcpy(dmac, dst_mac, 6); else default_mac(f, f.dst_ip, dmac);
  if (src_mac) std::memcpy(smac, src_mac, 6); else default_mac(f, f.src_ip, smac);
  std::memcpy(e, dmac, 6);
  std::memcpy(e + 6, smac, 6);
  put16(e + 12, f.ipv6 ? 0x86DD : 0x0800);
  uint8_t* ip = e + 14;
  const uint16_t udp_len = uint16_t(8 + len);
  if (!f.ipv6) {
    ip[0] = 0x45;
    ip[1] = f.tos;
    put16(ip + 2, uint16_t(20 + udp_len));
    put16(ip + 4, f.ip_id);
    put16(ip + 6, f.df ? 0x4000 : 0);
    ip[8] = f.ttl;
    ip[9] = 17;
    ip[10] = ip[11] = 0;
    std::memcpy(ip + 12, f.src_ip, 4);
    std::memcpy(ip + 16, f.dst_ip, 4);
    put16(ip + 10, ipv4_checksum(ip));
  } else {
    put32(ip, 0x60000000u | uint32_t(f.tos) << 20 | (f.flow_label & 0xFFFFF));
    put16(ip + 4, udp_len);
    ip[6] = 17;
    ip[7] = f.ttl;
    std::memcpy(ip + 8, f.src_ip, 16);
    std::memcpy(ip + 24, f.dst_ip, 16);
  }
  uint8_t* udp = ip + iplen;
  put16(udp, f.src_port);
  put16(udp + 2, f.dst_port);
  put16(udp + 4, udp_len);
  put16(udp + 6, 0);                            // rxe sends UDP checksum 0 on IPv4 and IPv6 (docs/wire.md 1.1)
  if (len) std::memcpy(udp + 8, udp_payload, len);
}

bool parse_ip(const uint8_t* ip, size_t len, Framing& f, const uint8_t** udp_payload, size_t* udp_len,
              std::string* err) {
  f = Framing{};
  if (len < 1) return fail(err, "ip: empty packet");
  const uint8_t version = ip[0] >> 4;
  size_t iplen, ip_total;
  if (version == 4) {
    if (len < 20) return fail(err, "ip: IPv4 header truncated (" + std::to_string(len) + " of 20 bytes)");
    if ((ip[0] & 0x0F) != 5)
      return fail(err, "ip.hdr_len: IPv4 options are not supported (IHL " + std::to_string(ip[0] & 0x0F) + ")");
    if (ip[9] != 17) return fail(err, "ip.proto: " + std::to_string(ip[9]) + " is not UDP (17)");
    const uint16_t flags = get16(ip + 6);
    if (flags & 0x3FFF) return fail(err, "ip.flags: fragmented IPv4 packets are not supported");
    ip_total = get16(ip + 2);
    iplen = 20;
    f.ipv6 = false;
    f.tos = ip[1];
    f.ip_id = get16(ip + 4);
    f.df = flags & 0x4000;
    f.ttl = ip[8];
    std::memcpy(f.src_ip, ip + 12, 4);
    std::memcpy(f.dst_ip, ip + 16, 4);
  } else if (version == 6) {
    if (len < 40) return fail(err, "ipv6: header truncated (" + std::to_string(len) + " of 40 bytes)");
    if (ip[6] != 17) return fail(err, "ipv6.nxt: next header " + std::to_string(ip[6]) + " is not UDP (17)");
    ip_total = 40 + size_t(get16(ip + 4));
    iplen = 40;
    f.ipv6 = true;
    const uint32_t w = get32(ip);
    f.tos = uint8_t(w >> 20);
    f.flow_label = w & 0xFFFFF;
    f.ttl = ip[7];
    std::memcpy(f.src_ip, ip + 8, 16);
    std::memcpy(f.dst_ip, ip + 24, 16);
  } else {
    return fail(err, "ip.version: " + std::to_string(version) + " is neither 4 nor 6");
  }
  if (ip_total > len)
    return fail(err, "ip.len: IP length " + std::to_string(ip_total) + " exceeds the " + std::to_string(len) +
                         " captured bytes");
  if (ip_total < iplen + 8) return fail(err, "ip.len: IP length " + std::to_string(ip_total) + " leaves no room for UDP");
  const uint8_t* udp = ip + iplen;
  const size_t ulen = get16(udp + 4);
  if (ulen < 8 || ulen > ip_total - iplen)
    return fail(err, "udp.length: " + std::to_string(ulen) + " is inconsistent with the IP length " + std::to_string(ip_total));
  f.src_port = get16(udp);
  f.dst_port = get16(udp + 2);
  if (udp_payload) *udp_payload = udp + 8;
  if (udp_len) *udp_len = ulen - 8;
  return true;
}

bool parse_frame(const uint8_t* fr, size_t len, Framing& f, const uint8_t** udp_payload, size_t* udp_len,
                 std::string* err, size_t* ip_offset) {
  f = Framing{};
  if (len < 14) return fail(err, "eth: frame truncated (" + std::to_string(len) + " bytes)");
  size_t off = 12;
  uint16_t type = get16(fr + off);
  if (type == 0x8100) {
    if (len < 18) return fail(err, "vlan: tag truncated");
    off += 4;
    type = get16(fr + off);
  }
  off += 2;
  if (type != 0x0800 && type != 0x86DD) {
    char b[64];
    std::snprintf(b, sizeof b, "eth.type: 0x%04x is neither IPv4 nor IPv6", type);
    return fail(err, b);
  }
  if (!parse_ip(fr + off, len - off, f, udp_payload, udp_len, err)) return false;
  if ((type == 0x86DD) != f.ipv6) return fail(err, "eth.type does not match the IP version");
  if (ip_offset) *ip_offset = off;
  return true;
}

}  // namespace vl::wire
