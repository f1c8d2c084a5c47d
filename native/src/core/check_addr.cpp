// Receive stage: the address check of a connected QP (the kernel's rxe_recv.c check_addr). A packet for an RC or UC
// QP is taken only from the QP's peer and to the QP's own address: its IP source must be the address vector's dgid
// and its IP destination the address of the QP's sgid_index; otherwise it is dropped silently (no NAK, the QP state
// untouched) and shown as a PacketDropped event with the reason. IBA's connected services check the packet's source
// against the QP's path too (the packet header validation of 9.6.1.5, LRH:SLID / GRH:SGID for RC and UC), so every
// profile applies it; iWARP's connection is a TCP 4-tuple, which no foreign source can enter either. UD QPs take any
// source (check_addr returns 0 for them), and so does a QP before RTR (its address vector is not set; the
// state checks behind this one drop such packets).
#include <arpa/inet.h>

#include <cstring>

#include "core/impl.h"

namespace vl {

namespace {

// The 16-byte GID form of a framing address (IPv4 as ::ffff:a.b.c.d, rxe's rdma_gid2ip in reverse)
void gid_of(const wire::Framing& f, const uint8_t* ip, uint8_t out[16]) {
  if (f.ipv6) { std::memcpy(out, ip, 16); return; }
  std::memset(out, 0, 10);
  out[10] = out[11] = 0xff;
  std::memcpy(out + 12, ip, 4);
}

std::string gid_str(const uint8_t g[16]) {   // ::ffff:a.b.c.d for IPv4, as inet_ntop writes it
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, g, buf, sizeof buf);
  return buf;
}

}  // namespace

bool SessionImpl::check_addr(const Qp& q, Handle src, const wire::Framing* f, std::string& why) {
  if (q.init.qp_type != QPT_RC && q.init.qp_type != QPT_UC) return true;
  if (q.state < QPS_RTR || q.state == QPS_ERR) return true;
  if (src || !f) {                               // in-session: the sending device is known by its handle
    if (src == q.attr.dest_device) return true;
    why = "address check: from device " + std::to_string(src) + ", not the QP's peer (dest_device " +
          std::to_string(q.attr.dest_device) + ") (rxe check_addr)";
    return false;
  }
  const Device* d = dev(q.dev);
  uint8_t s[16], t[16];
  gid_of(*f, f->src_ip, s);
  gid_of(*f, f->dst_ip, t);
  const uint8_t* own = d && q.attr.sgid_index < d->gids.size() ? d->gids[q.attr.sgid_index].gid : nullptr;
  if (!std::memcmp(s, q.attr.dgid, 16) && own && !std::memcmp(t, own, 16)) return true;
  if (std::memcmp(s, q.attr.dgid, 16))
    why = "address check: source " + gid_str(s) + " is not the QP's peer " + gid_str(q.attr.dgid) + " (rxe check_addr)";
  else
    why = "address check: destination " + gid_str(t) + " is not the QP's address (sgid_index " +
          std::to_string(q.attr.sgid_index) + ") (rxe check_addr)";
  return false;
}

}  // namespace vl
