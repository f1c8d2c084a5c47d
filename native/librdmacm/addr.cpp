// The library's global state, the device it opens, and the addresses of an ID: socket addresses <-> the CM's CmAddr,
// rdma_cm_id.route from the CM's view of the ID (what rdma-core's ucma_query_route asks rdma_ucm for).
#include <arpa/inet.h>
#include <dlfcn.h>

#include <cstring>

#include "lib.h"

namespace vcm {

Global& g() {
  static Global* p = new Global;               // never destroyed: programs exit with IDs alive
  return *p;
}

int init() {
  Global& G = g();
  static std::once_flag once;
  std::call_once(once, [&] {
    const VerbslabRdmacm* abi = verbslab_private_rdmacm();
    if (!abi || abi->size != sizeof(VerbslabRdmacm)) return;
    G.s = abi->session;
    G.abi = abi;
    abi->set_cm_hook(cm_hook);
  });
  return G.abi ? 0 : fail(ENODEV);
}

int open_device() {
  Global& G = g();
  if (init()) return -1;
  std::lock_guard<std::mutex> lk(G.dev_mu);
  if (G.verbs) return 0;
  if (G.abi->attach(nullptr)) return fail(ENODEV);  // not on the network yet: the default address
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list || n < 1) { if (list) ibv_free_device_list(list); return fail(ENODEV); }
  ibv_context* ctx = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  if (!ctx) return -1;
  ibv_device_attr a;
  if (int e = ibv_query_device(ctx, &a)) { ibv_close_device(ctx); return fail(e); }
  ibv_pd* pd = ibv_alloc_pd(ctx);
  if (!pd) { ibv_close_device(ctx); return -1; }
  G.max_initiator_depth = static_cast<uint8_t>(a.max_qp_init_rd_atom);   // ucma_init_device
  G.max_responder_resources = static_cast<uint8_t>(a.max_qp_rd_atom);
  G.max_qp_wr = static_cast<uint32_t>(a.max_qp_wr);
  G.pd = pd;
  G.verbs = ctx;
  return 0;
}

// Any address (0.0.0.0, ::) or none: the device's default address; a given one: the device there.
int attach_for(const sockaddr* a) {
  Global& G = g();
  if (init()) return -1;
  if (G.abi->attached()) return 0;
  char text[INET6_ADDRSTRLEN] = "";
  vl::CmAddr c;
  if (a && to_cm_addr(a, c)) {
    static const uint8_t zero[16] = {};
    if (std::memcmp(c.ip, zero, 16)) {
      if (c.family == AF_INET) inet_ntop(AF_INET, c.ip + 12, text, sizeof text);
      else inet_ntop(AF_INET6, c.ip, text, sizeof text);
    }
  }
  if (int e = G.abi->attach(text)) {
    if (std::getenv("VERBSLAB_DEBUG")) fprintf(stderr, "verbslab librdmacm: %s\n", G.abi->error());
    // the address is not the host's (EADDRNOTAVAIL, as the kernel), or another device holds its RoCE port
    return fail(e);
  }
  return 0;
}

socklen_t addr_len(const sockaddr* a) {
  if (!a) return 0;
  switch (a->sa_family) {
    case AF_INET: return sizeof(sockaddr_in);
    case AF_INET6: return sizeof(sockaddr_in6);
    default: return 0;                         // AF_IB: no InfiniBand addressing on this device (ucma_addrlen)
  }
}

bool to_cm_addr(const sockaddr* a, vl::CmAddr& out) {
  out = vl::CmAddr{};
  if (!a) return false;
  if (a->sa_family == AF_INET) {
    auto* s = reinterpret_cast<const sockaddr_in*>(a);
    out.family = AF_INET;
    if (s->sin_addr.s_addr != htonl(INADDR_ANY)) {   // ::ffff:a.b.c.d (vl/cm.h); "any" stays all zeros
      out.ip[10] = out.ip[11] = 0xff;
      std::memcpy(out.ip + 12, &s->sin_addr, 4);
    }
    out.port = ntohs(s->sin_port);
    return true;
  }
  if (a->sa_family == AF_INET6) {
    auto* s = reinterpret_cast<const sockaddr_in6*>(a);
    out.family = AF_INET6;
    std::memcpy(out.ip, &s->sin6_addr, 16);
    out.port = ntohs(s->sin6_port);
    out.scope_id = s->sin6_scope_id;
    return true;
  }
  return false;
}

void from_cm_addr(const vl::CmAddr& a, sockaddr_storage& out) {
  std::memset(&out, 0, sizeof out);
  if (a.family == AF_INET) {
    auto* s = reinterpret_cast<sockaddr_in*>(&out);
    s->sin_family = AF_INET;
    std::memcpy(&s->sin_addr, a.ip + 12, 4);
    s->sin_port = htons(a.port);
  } else if (a.family == AF_INET6) {
    auto* s = reinterpret_cast<sockaddr_in6*>(&out);
    s->sin6_family = AF_INET6;
    std::memcpy(&s->sin6_addr, a.ip, 16);
    s->sin6_port = htons(a.port);
    s->sin6_scope_id = a.scope_id;
  }
}

// ucma_query_route: addresses, GIDs, P_Key; the device (verbs, default PD, port 1) once the ID has an address on
// it; the path record once the route is resolved (RoCE: built from the GIDs, as the kernel's cma_resolve_iboe_route).
int query_route(Id* id) {
  Global& G = g();
  auto info = G.s->cm_id_info(id->h);
  if (!info) return fail(EINVAL);
  rdma_addr& ra = id->id.route.addr;
  if (info->src.family) from_cm_addr(info->src, ra.src_storage);
  if (info->dst.family) from_cm_addr(info->dst, ra.dst_storage);
  std::memcpy(ra.addr.ibaddr.sgid.raw, info->sgid, 16);
  std::memcpy(ra.addr.ibaddr.dgid.raw, info->dgid, 16);
  ra.addr.ibaddr.pkey = htobe16(0xffff);
  static const uint8_t zero[16] = {};
  const bool on_device = info->addr_resolved || info->route_resolved || info->listen_id ||
                         (info->bound && std::memcmp(info->sgid, zero, 16) != 0);
  if (on_device && !id->id.verbs) {
    if (open_device()) return -1;
    id->id.verbs = G.verbs;
    id->id.port_num = 1;
    if (!id->id.pd) { id->id.pd = G.pd; id->own_pd = true; }
  }
  if (info->route_resolved && !id->id.route.path_rec) {
    auto* p = static_cast<ibv_sa_path_rec*>(calloc(1, sizeof(ibv_sa_path_rec)));
    if (!p) return fail(ENOMEM);
    std::memcpy(p->dgid.raw, info->dgid, 16);
    std::memcpy(p->sgid.raw, info->sgid, 16);
    p->hop_limit = 64;                         // IPv4 TTL / IPv6 hop limit of the RoCEv2 packets (cma_resolve_iboe_route)
    p->reversible = 1;
    p->numb_path = 1;
    p->pkey = htobe16(0xffff);
    p->mtu_selector = 2;                       // exactly
    p->mtu = static_cast<uint8_t>(info->path_mtu);
    p->rate_selector = 2;
    p->rate = IBV_RATE_MAX;                    // 0, "port current": a loopback link has no speed (iboe_get_rate)
    p->packet_life_time_selector = 2;
    p->packet_life_time = 16;                  // the kernel's CMA_IBOE_PACKET_LIFETIME
    id->id.route.path_rec = p;
    id->id.route.num_paths = 1;
  }
  return 0;
}

}  // namespace vcm
