// Session lifetime, devices (profiles, GIDs) and protection domains.
#include <cerrno>
#include <cstdlib>

#include "core/impl.h"

namespace vl {

static std::atomic<uint64_t> g_session_serial{0};

SessionImpl::SessionImpl(uint64_t s)
    : seed(s), rng(s), fault_rng(s ^ 0x9e3779b97f4a7c15ull), serial(g_session_serial.fetch_add(1) + 1) {}

SessionImpl::~SessionImpl() {
  stop_engine();
  for (auto& [va, b] : buffers_by_va) std::free(b.mem);
}

Session::Session(uint64_t seed) : impl_(std::make_unique<SessionImpl>(seed)) { impl_->self = this; }
Session::~Session() { impl_->stop_engine(); }   // join the engine thread before the objects go

Result<Handle> Session::create_device(const std::string& profile, const std::string& name) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  const Profile* p = nullptr;
  for (auto& pr : builtin_profiles()) if (pr.name == profile) p = &pr;
  if (!p) return rfail<Handle>(EINVAL, "profile: unknown profile '" + profile + "' (rxe, cx, ib2a, iwarp, minimal)");
  std::string nm = name;
  uint32_t ordinal = 1;
  for (auto& [h, d] : S.devs) ordinal = std::max(ordinal, d.ordinal + 1);
  if (nm.empty()) {
    for (uint32_t i = 0;; i++) {
      nm = "vl" + p->name + std::to_string(i);
      bool used = false;
      for (auto& [h, d] : S.devs) used |= d.name == nm;
      if (!used) break;
    }
  }
  if (nm.size() > 63) return rfail<Handle>(EINVAL, "name: longer than 63 characters");
  for (auto& [h, d] : S.devs)
    if (d.name == nm) return rfail<Handle>(EEXIST, "name: a device named '" + nm + "' already exists");
  if (ordinal > 254) return rfail<Handle>(ENOMEM, "too many devices (max 254)");
  Device d;
  d.h = S.new_handle();
  d.name = nm;
  d.profile = *p;
  d.ordinal = ordinal;
  // made-up locally administered MAC 02:56:4c:00:00:NN ("VL")
  uint8_t mac[6] = {0x02, 0x56, 0x4c, 0x00, static_cast<uint8_t>(ordinal >> 8), static_cast<uint8_t>(ordinal)};
  std::memcpy(d.mac, mac, 6);
  uint8_t eui[8] = {static_cast<uint8_t>(mac[0] ^ 2), mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
  for (int i = 0; i < 8; i++) d.node_guid = (d.node_guid << 8) | eui[i];
  GidEntry g0{0, {}, "RoCE v2"};
  g0.gid[0] = 0xfe; g0.gid[1] = 0x80;
  std::memcpy(g0.gid + 8, eui, 8);
  GidEntry g1{1, {}, "RoCE v2"};
  g1.gid[10] = 0xff; g1.gid[11] = 0xff; g1.gid[12] = 10; g1.gid[13] = 0; g1.gid[14] = 0; g1.gid[15] = static_cast<uint8_t>(ordinal);
  d.gids = {g0, g1};
  Handle h = d.h;
  S.devs.emplace(h, std::move(d));
  if (S.capture) {
    auto& e = S.emit(EventKind::ObjectCreated, h, h, "device", "device " + nm + " (" + p->name + ")");
    e.a = ordinal;
  }
  return rok(h);
}

Status Session::destroy_device(Handle dev) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Device* d = S.dev(dev);
  if (!d) return fail(ENOENT, "dev: no device with handle " + std::to_string(dev));
  if (d->n_pd || d->n_cq || d->n_qp || d->n_srq || d->n_mr || d->n_mw)
    return fail(EBUSY, "dev: device " + d->name + " still has objects (destroy QPs, CQs, MRs, PDs first)");
  S.emit_obj(EventKind::ObjectDestroyed, dev, dev, "device", "device " + d->name);
  S.devs.erase(dev);
  return ok();
}

std::vector<DeviceInfo> Session::devices() const {
  auto lk_ = impl_->lock();
  std::vector<DeviceInfo> out;
  for (auto& [h, d] : impl_->devs) {
    DeviceInfo i;
    i.handle = h; i.name = d.name; i.profile = d.profile; i.node_guid = d.node_guid; i.gids = d.gids;
    out.push_back(std::move(i));
  }
  return out;
}

Result<Handle> Session::alloc_pd(Handle dev) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Device* d = S.dev(dev);
  if (!d) return rfail<Handle>(ENOENT, "dev: no device with handle " + std::to_string(dev));
  if (d->n_pd >= d->profile.max_pd) return rfail<Handle>(ENOMEM, "max_pd (" + std::to_string(d->profile.max_pd) + ") reached");
  Pd p; p.h = S.new_handle(); p.dev = dev;
  S.pds.emplace(p.h, p);
  d->n_pd++;
  S.emit_obj(EventKind::ObjectCreated, dev, p.h, "pd", "pd on " + d->name);
  return rok(p.h);
}

Status Session::dealloc_pd(Handle pd) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Pd* p = S.pd(pd);
  if (!p) return fail(ENOENT, "pd: no PD with handle " + std::to_string(pd));
  if (p->users) return fail(EBUSY, "pd: still used by " + std::to_string(p->users) + " object(s) (MR, MW, QP, SRQ, AH)");
  Handle dev = p->dev;
  S.pds.erase(pd);
  if (Device* d = S.dev(dev)) d->n_pd--;
  S.emit_obj(EventKind::ObjectDestroyed, dev, pd, "pd");
  return ok();
}

}  // namespace vl
