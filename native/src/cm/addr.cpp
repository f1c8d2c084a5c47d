// Addresses of the CM (IBA Annex A11 over RoCE; cma.c rdma_bind_addr / rdma_resolve_addr / rdma_resolve_route):
// an IP address is a GID of a device (IPv4 a.b.c.d is the GID ::ffff:a.b.c.d, rxe's GID table); a destination
// owned by a device of the same session is reached in-session, any other only when the device is on the network
// (its MADs then go to that IP's QP1 over UDP). Ports are per device and port space, as on one host.
#include <cstring>

#include "cm/cm_impl.h"

namespace vl::cm {

int gid_index_of(const Device& d, const uint8_t ip[16]) {
  for (size_t i = 0; i < d.gids.size(); i++) if (std::memcmp(d.gids[i].gid, ip, 16) == 0) return int(i);
  return -1;
}

bool owner_of(SessionImpl& S, const uint8_t ip[16], Handle& dev, uint32_t& gid_index) {
  for (auto& [h, d] : S.devs) {
    const int gi = gid_index_of(d, ip);
    if (gi >= 0) { dev = h; gid_index = uint32_t(gi); return true; }
  }
  return false;
}

static bool link_local(const uint8_t ip[16]) { return ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80; }

// The source GID for a destination (rdma_resolve_addr without a source): same IP version, and for IPv6 the same
// scope (a link-local destination from the link-local GID, rxe's GID 0)
int source_gid_for(const Device& d, const CmAddr& dst) {
  const bool v4 = is_v4_mapped(dst.ip);
  int any6 = -1;
  for (size_t i = 0; i < d.gids.size(); i++) {
    const uint8_t* g = d.gids[i].gid;
    bool zero = true;
    for (int k = 0; k < 16; k++) if (g[k]) zero = false;
    if (zero) continue;
    if (v4) { if (is_v4_mapped(g)) return int(i); continue; }
    if (is_v4_mapped(g)) continue;
    if (link_local(g) == link_local(dst.ip)) return int(i);
    if (any6 < 0) any6 = int(i);
  }
  return any6;
}

static bool is_any(const uint8_t ip[16]) {
  for (int i = 0; i < 16; i++) if (ip[i]) return false;
  return true;
}

int bind_port(SessionImpl& S, Id& id, const CmAddr& a) {
  Core& c = core(S);
  auto clash = [&](uint16_t port) {
    for (auto& [h, x] : c.ids) {
      if (x.h == id.h || x.dev != id.dev || !x.bound || x.ps != id.ps || x.src.port != port) continue;
      // IDs made by a listener share its port and never block a bind, also once the listener is gone (the kernel's
      // cma_req_handler IDs are not in the bind list: perftest -R destroys its listener and binds the port again)
      if (x.listen_id || x.from_listener) continue;
      if (is_any(x.src.ip) || is_any(a.ip) || std::memcmp(x.src.ip, a.ip, 16) == 0) return true;
    }
    return false;
  };
  uint16_t port = a.port;
  if (port == 0) {                                 // an ephemeral port (inet_get_local_port_range: 32768..60999)
    for (int n = 0; n < 28232; n++) {
      uint16_t p = c.next_port++;
      if (c.next_port < 32768 || c.next_port > 60999) c.next_port = 32768;
      if (p >= 32768 && p <= 60999 && !clash(p)) { port = p; break; }
    }
    if (!port) return EADDRINUSE;
  } else if (clash(port)) {
    return EADDRINUSE;
  }
  id.src = a;
  id.src.port = port;
  if (!id.src.family) id.src.family = is_any(a.ip) || is_v4_mapped(a.ip) ? kAfInet : kAfInet6;
  id.bound = true;
  return 0;
}

}  // namespace vl::cm
