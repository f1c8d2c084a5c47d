// rdma_getaddrinfo / rdma_freeaddrinfo (rdma-core librdmacm/addrinfo.c: getaddrinfo(3) with the RDMA hints mapped to
// socket hints, the answer's first address as source (passive) or destination) and rdma_get_devices.
#include <netdb.h>

#include <cstring>

#include "lib.h"

using namespace vcm;

namespace {

// ucma_convert_to_ai: QP type -> socket type, port space -> protocol, RAI_ flags -> AI_ flags
void to_ai_hints(const rdma_addrinfo* h, addrinfo& ai) {
  std::memset(&ai, 0, sizeof ai);
  if (h->ai_flags & RAI_PASSIVE) ai.ai_flags |= AI_PASSIVE;
  if (h->ai_flags & RAI_NUMERICHOST) ai.ai_flags |= AI_NUMERICHOST;
  if (h->ai_family != AF_IB) ai.ai_family = h->ai_family;
  switch (h->ai_qp_type) {
    case IBV_QPT_RC: case IBV_QPT_UC: ai.ai_socktype = SOCK_STREAM; break;
    case IBV_QPT_UD: ai.ai_socktype = SOCK_DGRAM; break;
    default: break;
  }
  switch (h->ai_port_space) {
    case RDMA_PS_TCP: ai.ai_protocol = IPPROTO_TCP; break;
    case RDMA_PS_IPOIB: case RDMA_PS_UDP: ai.ai_protocol = IPPROTO_UDP; break;
    case RDMA_PS_IB:
      if (ai.ai_socktype == SOCK_STREAM) ai.ai_protocol = IPPROTO_TCP;
      else if (ai.ai_socktype == SOCK_DGRAM) ai.ai_protocol = IPPROTO_UDP;
      break;
    default: break;
  }
}

int copy_addr(sockaddr** dst, socklen_t* dst_len, const sockaddr* src, socklen_t len) {
  *dst = static_cast<sockaddr*>(malloc(len));
  if (!*dst) return fail(ENOMEM);
  std::memcpy(*dst, src, len);
  *dst_len = len;
  return 0;
}

}  // namespace

VL_EXPORT void rdma_freeaddrinfo(rdma_addrinfo* res) {
  while (res) {
    rdma_addrinfo* r = res;
    res = res->ai_next;
    free(r->ai_connect);
    free(r->ai_route);
    free(r->ai_src_canonname);
    free(r->ai_dst_canonname);
    free(r->ai_src_addr);
    free(r->ai_dst_addr);
    free(r);
  }
}

// Returns 0, -1 with errno, or getaddrinfo's EAI_* code (as rdma-core).
VL_EXPORT int rdma_getaddrinfo(const char* node, const char* service, const rdma_addrinfo* hints, rdma_addrinfo** res) {
  if ((!service && !node && !hints) || !res) return fail(EINVAL);
  static const rdma_addrinfo nohints{};
  if (!hints) hints = &nohints;
  auto* rai = static_cast<rdma_addrinfo*>(calloc(1, sizeof(rdma_addrinfo)));
  if (!rai) return fail(ENOMEM);
  int ret = 0;
  if (node || service) {
    addrinfo ah, *ai = nullptr;
    to_ai_hints(hints, ah);
    ret = getaddrinfo(node, service, hints == &nohints ? nullptr : &ah, &ai);
    if (!ret) {                                // ucma_convert_to_rai
      rai->ai_qp_type = hints->ai_qp_type ? hints->ai_qp_type
                        : ai->ai_socktype == SOCK_DGRAM ? IBV_QPT_UD : IBV_QPT_RC;
      rai->ai_port_space = hints->ai_port_space ? hints->ai_port_space
                           : ai->ai_protocol == IPPROTO_UDP ? RDMA_PS_UDP : RDMA_PS_TCP;
      rai->ai_family = ai->ai_family;
      if (ai->ai_flags & AI_PASSIVE) {
        rai->ai_flags = RAI_PASSIVE;
        if (ai->ai_canonname) rai->ai_src_canonname = strdup(ai->ai_canonname);
        ret = copy_addr(&rai->ai_src_addr, &rai->ai_src_len, ai->ai_addr, ai->ai_addrlen);
      } else {
        if (ai->ai_canonname) rai->ai_dst_canonname = strdup(ai->ai_canonname);
        ret = copy_addr(&rai->ai_dst_addr, &rai->ai_dst_len, ai->ai_addr, ai->ai_addrlen);
      }
      freeaddrinfo(ai);
    }
  } else {
    rai->ai_flags = hints->ai_flags;
    rai->ai_family = hints->ai_family;
    rai->ai_qp_type = hints->ai_qp_type;
    rai->ai_port_space = hints->ai_port_space;
    if (hints->ai_dst_len) ret = copy_addr(&rai->ai_dst_addr, &rai->ai_dst_len, hints->ai_dst_addr, hints->ai_dst_len);
  }
  if (!ret && !rai->ai_src_len && hints->ai_src_len)
    ret = copy_addr(&rai->ai_src_addr, &rai->ai_src_len, hints->ai_src_addr, hints->ai_src_len);
  if (ret) { rdma_freeaddrinfo(rai); return ret; }
  // ucma_ib_resolve asks ib_acm for a route; there is none here (RAI_NOROUTE or not): no ai_route
  *res = rai;
  return 0;
}

// The device's context (opened, and the device put on the network at its default address, by the first call)
VL_EXPORT ibv_context** rdma_get_devices(int* num) {
  if (num) *num = 0;
  if (open_device()) return nullptr;
  auto** list = static_cast<ibv_context**>(calloc(2, sizeof(ibv_context*)));
  if (!list) { errno = ENOMEM; return nullptr; }
  list[0] = g().verbs;
  if (num) *num = 1;
  return list;
}

VL_EXPORT void rdma_free_devices(ibv_context** list) { free(list); }
