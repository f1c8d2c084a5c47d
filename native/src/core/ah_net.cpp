// Address handles that name a remote host by GID (UD over the UDP transport, native/src/net), and destroy_ah.
#include <arpa/inet.h>

#include <cerrno>

#include "core/impl.h"

namespace vl {

std::string gid_family_mismatch(const uint8_t sgid[16], const uint8_t dgid[16]) {
  const bool s4 = gid_is_v4mapped(sgid), d4 = gid_is_v4mapped(dgid);
  if (s4 == d4) return {};
  char st[INET6_ADDRSTRLEN] = {}, dt[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, sgid, st, sizeof st);
  inet_ntop(AF_INET6, dgid, dt, sizeof dt);
  return std::string("dgid: ") + dt + " is an " + (d4 ? "IPv4" : "IPv6") + " GID but the source GID " + st + " is " +
         (s4 ? "IPv4" : "IPv6") + " (RoCEv2 sends one IP version: ib_core's rdma_resolve_ip refuses mixed families)";
}

Result<Handle> Session::create_ah_remote(Handle pdh, const uint8_t dgid[16], uint32_t sgid_index) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Pd* p = S.pd(pdh);
  if (!p) return rfail<Handle>(ENOENT, "pd: no PD with handle " + std::to_string(pdh));
  Device& d = *S.dev(p->dev);
  if (!d.port) return rfail<Handle>(EINVAL, "pd: device " + d.name + " is not on the network (an AH by GID needs it)");
  static const uint8_t zero[16] = {};
  if (!dgid || !std::memcmp(dgid, zero, 16)) return rfail<Handle>(EINVAL, "dgid: the zero GID names no host");
  if (sgid_index >= d.gids.size()) return rfail<Handle>(EINVAL, "sgid_index: outside the GID table (" + std::to_string(d.gids.size()) + " entries)");
  if (auto why = gid_family_mismatch(d.gids[sgid_index].gid, dgid); !why.empty()) return rfail<Handle>(EINVAL, why);   // rdma_create_user_ah -> ib_resolve_eth_dmac
  if (auto m = S.over_budget(sizeof(Ah), "ah"); !m.empty()) return rfail<Handle>(ENOMEM, m);
  Ah a;
  a.h = S.new_handle(); a.pd = pdh; a.dev = p->dev; a.dest_device = 0; a.sgid_index = sgid_index;
  a.remote = true; std::memcpy(a.dgid, dgid, 16);
  S.ahs.emplace(a.h, a);
  S.charge(a.h, sizeof(Ah));
  p->users++;
  if (S.capture) { auto& e = S.emit(EventKind::ObjectCreated, p->dev, a.h, "ah", "AH to a remote host"); e.a = 0; e.b = sgid_index; }
  return rok(a.h);
}

Status Session::destroy_ah(Handle ah) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  auto it = S.ahs.find(ah);
  if (it == S.ahs.end()) return fail(ENOENT, "ah: no AH with handle " + std::to_string(ah));
  if (Pd* p = S.pd(it->second.pd)) p->users--;
  S.emit_obj(EventKind::ObjectDestroyed, it->second.dev, ah, "ah");
  S.ahs.erase(ah);
  S.uncharge(ah);
  return ok();
}

}  // namespace vl
