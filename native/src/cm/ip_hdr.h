// The RDMA IP CM service (IBA Annex A11; the kernel's rdma_cm, drivers/infiniband/core/cma.c): the service ID of a
// port space and port, and the 36-byte IP header at the start of a REQ's / SIDR REQ's private data
// (struct cma_hdr: version, IP version, source port, source and destination address).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "vl/cm.h"

namespace vl::cm {

constexpr size_t kIpHdrLen = 36;                 // sizeof(struct cma_hdr)
constexpr uint8_t kIpHdrVersion = 0x00;          // CMA_VERSION
constexpr uint16_t kAfInet = 2, kAfInet6 = 10;   // AF_INET, AF_INET6 (Linux values)

// IBA A11.2.1 / cma_get_service_id: (port space << 16) | port
inline uint64_t service_id(uint32_t ps, uint16_t port) { return (uint64_t(ps) << 16) | port; }
inline uint32_t service_ps(uint64_t sid) { return uint32_t(sid >> 16) & 0xFFFF; }
inline uint16_t service_port(uint64_t sid) { return uint16_t(sid); }
// the IP CM service IDs are 0x0000000001PPpppp (IBA A11.2.1: the upper 40 bits hold 0x00000001 and the port space)
inline bool is_ip_service(uint64_t sid) { return (sid >> 32) == 0 && (sid >> 24) == 0x01; }

// cma_format_hdr: src is the connecting side (its port is the source port), dst the listener's address. IPv4
// addresses sit in the last 4 bytes of each 16-byte field (union cma_ip_addr: pad[3] + addr), IPv6 take all 16.
void put_ip_hdr(uint8_t out[kIpHdrLen], const CmAddr& src, const CmAddr& dst);
// cma_check_req_qp_type / cma_save_ip_info: false (why set) for a header rdma_cm refuses: version not 0, IP
// version not 4 or 6
bool get_ip_hdr(const uint8_t in[kIpHdrLen], CmAddr& src, CmAddr& dst, std::string* why);

// ::ffff:a.b.c.d (an IPv4 address as a GID / CmAddr.ip)
bool is_v4_mapped(const uint8_t ip[16]);
std::string addr_text(const CmAddr& a);          // "10.0.0.1:4420", "[fe80::1]:4420"

}  // namespace vl::cm
