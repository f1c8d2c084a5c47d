// The RDMA IP CM service private-data header (ip_hdr.h; IBA Annex A11.6.2, cma.c cma_format_hdr / cma_save_ip_info).
#include "cm/ip_hdr.h"

#include <arpa/inet.h>

#include <cstring>

namespace vl::cm {

bool is_v4_mapped(const uint8_t ip[16]) {
  static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(ip, pre, 12) == 0;
}

static void put_ip(uint8_t* o, const CmAddr& a, bool v4) {
  std::memset(o, 0, 16);
  if (v4) std::memcpy(o + 12, a.ip + 12, 4); else std::memcpy(o, a.ip, 16);
}

void put_ip_hdr(uint8_t* o, const CmAddr& src, const CmAddr& dst) {
  const bool v4 = src.family == kAfInet;
  o[0] = kIpHdrVersion;
  o[1] = uint8_t((v4 ? 4 : 6) << 4);                 // cma_set_ip_ver: IP version in bits 7:4
  o[2] = uint8_t(src.port >> 8); o[3] = uint8_t(src.port);
  put_ip(o + 4, src, v4);
  put_ip(o + 20, dst, v4);
}

bool get_ip_hdr(const uint8_t* in, CmAddr& src, CmAddr& dst, std::string* why) {
  if (in[0] != kIpHdrVersion) { if (why) *why = "IP CM header version " + std::to_string(in[0]) + " (not 0)"; return false; }
  const int ver = in[1] >> 4;
  if (ver != 4 && ver != 6) { if (why) *why = "IP CM header IP version " + std::to_string(ver); return false; }
  src = CmAddr{}; dst = CmAddr{};
  src.family = dst.family = ver == 4 ? kAfInet : kAfInet6;
  src.port = uint16_t(in[2] << 8 | in[3]);
  for (int k = 0; k < 2; k++) {
    CmAddr& a = k ? dst : src;
    const uint8_t* p = in + 4 + 16 * k;
    if (ver == 4) { a.ip[10] = a.ip[11] = 0xff; std::memcpy(a.ip + 12, p + 12, 4); }
    else std::memcpy(a.ip, p, 16);
  }
  return true;
}

std::string addr_text(const CmAddr& a) {
  char b[INET6_ADDRSTRLEN] = "*";
  bool any = true;
  for (uint8_t x : a.ip) if (x) any = false;
  if (a.family == kAfInet || (!a.family && is_v4_mapped(a.ip) && !any)) inet_ntop(AF_INET, a.ip + 12, b, sizeof b);
  else if (!any) inet_ntop(AF_INET6, a.ip, b, sizeof b);
  const bool v6 = a.family == kAfInet6 && !any;
  return (v6 ? "[" : "") + std::string(b) + (v6 ? "]" : "") + ":" + std::to_string(a.port);
}

}  // namespace vl::cm
