// Memory windows (rxe_mw.c): alloc/dealloc, type-1 bind verb, BIND_MW execution, invalidation (LOCAL_INV,
// SEND_WITH_INV), fast registration (IB_WR_REG_MR), and the responder's rkey check chain.
#include <cerrno>

#include "core/impl.h"

namespace vl {

MwInfo SessionImpl::mw_info(const Mw& w) const {
  MwInfo i;
  i.handle = w.h; i.pd = w.pd; i.rkey = w.rkey; i.type = w.type; i.state = key_state_name(w.state);
  i.mr = w.mr; i.qp = w.qp; i.addr = w.addr; i.length = w.length; i.access = w.access;
  return i;
}

Result<MwInfo> Session::alloc_mw(Handle pdh, uint32_t type) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Pd* p = S.pd(pdh);
  if (!p) return rfail<MwInfo>(ENOENT, "pd: no PD with handle " + std::to_string(pdh));
  Device& d = *S.dev(p->dev);
  if (!(d.profile.device_cap_flags & DEVICE_MEM_WINDOW))
    return rfail<MwInfo>(EOPNOTSUPP, "alloc_mw: " + d.name + " lacks IBV_DEVICE_MEM_WINDOW");
  if (type != MW_TYPE_1 && type != MW_TYPE_2) return rfail<MwInfo>(EINVAL, "type: must be IBV_MW_TYPE_1 (1) or IBV_MW_TYPE_2 (2)");
  if (type == MW_TYPE_2 && !(d.profile.device_cap_flags & (DEVICE_MEM_WINDOW_TYPE_2A | DEVICE_MEM_WINDOW_TYPE_2B)))
    return rfail<MwInfo>(EOPNOTSUPP, "type: " + d.name + " lacks MEM_WINDOW_TYPE_2A/2B");
  if (d.n_mw >= d.profile.max_mw) return rfail<MwInfo>(ENOMEM, "max_mw reached");
  if (auto msg = S.over_budget(sizeof(Mw), "mw"); !msg.empty()) return rfail<MwInfo>(ENOMEM, msg);
  Mw w;
  w.h = S.new_handle(); w.pd = pdh; w.dev = p->dev; w.type = type; w.index = d.next_mw_index++;
  w.rkey = (w.index << 8) | S.new_key_byte(d, 0, true);
  w.state = type == MW_TYPE_1 ? KeyState::Valid : KeyState::Free;   // rxe: type 1 valid (length 0), type 2 free
  d.mw_by_index.set(w.index, w.h);
  d.n_mw++; p->users++;
  MwInfo info = S.mw_info(w);
  if (S.capture) {
    auto& e = S.emit(EventKind::ObjectCreated, w.dev, w.h, "mw", "MW type " + std::to_string(type) + " rkey " + key_text(w.rkey));
    e.a = w.rkey; e.b = type; e.state(w.state);
  }
  S.charge(w.h, sizeof(Mw));
  S.mws.emplace(w.h, std::move(w));
  return rok(info);
}

Status Session::dealloc_mw(Handle mwh) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Mw* w = S.mw(mwh);
  if (!w) return fail(ENOENT, "mw: no MW with handle " + std::to_string(mwh));
  if (w->mr) if (Mr* m = S.mr(w->mr)) m->bound_mws--;
  Device& d = *S.dev(w->dev);
  d.mw_by_index.erase(w->index);
  d.n_mw--;
  S.pd(w->pd)->users--;
  if (S.capture) { auto& e = S.emit(EventKind::ObjectDestroyed, w->dev, mwh, "mw", "MW rkey " + key_text(w->rkey)); e.a = w->rkey; e.state(KeyState::Invalid); }
  S.mws.erase(mwh);
  S.uncharge(mwh);
  return ok();
}

std::optional<MwInfo> Session::mw_info(Handle mwh) const {
  auto lk_ = impl_->lock();
  auto it = impl_->mws.find(mwh);
  if (it == impl_->mws.end()) return std::nullopt;
  return impl_->mw_info(it->second);
}

Result<uint32_t> Session::bind_mw(Handle qph, Handle mwh, uint64_t wr_id, uint32_t send_flags, Handle mrh, uint64_t addr,
                                  uint64_t length, uint32_t access) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Qp* q = S.qp(qph);
  if (!q) return rfail<uint32_t>(ENOENT, "qp: no QP with handle " + std::to_string(qph));
  Mw* w = S.mw(mwh);
  if (!w) return rfail<uint32_t>(ENOENT, "mw: no MW with handle " + std::to_string(mwh));
  if (w->type != MW_TYPE_1) return rfail<uint32_t>(EINVAL, "mw: ibv_bind_mw binds type 1 windows only (use a BIND_MW work request)");
  // rdma-core rxe_bind_mw (and mlx5_bind_mw): refused before anything is posted
  if (!mrh && (addr || length)) return rfail<uint32_t>(EINVAL, "mr: a bind with an address or a length needs an MR");
  if (access & ACCESS_ZERO_BASED)
    return rfail<uint32_t>(EINVAL, "access: ibv_bind_mw refuses IBV_ACCESS_ZERO_BASED (type 1 windows are never zero-based)");
  if (mrh) {
    Mr* m = S.mr(mrh);
    if (!m) return rfail<uint32_t>(ENOENT, "mr: no MR with handle " + std::to_string(mrh));
    if (m->pd != w->pd) return rfail<uint32_t>(EPERM, "mr: MR PD differs from the MW PD");
  }
  uint32_t new_rkey = (w->rkey & ~0xffu) | ((w->rkey + 1) & 0xff);   // ibv_inc_rkey
  SendWr wr;
  wr.wr_id = wr_id; wr.opcode = WR_BIND_MW; wr.send_flags = send_flags;
  wr.mw = mwh; wr.bind_rkey = new_rkey; wr.bind_mr = mrh; wr.bind_addr = addr; wr.bind_length = length; wr.bind_access = access;
  PostResult r = S.post_send_impl(qph, {wr}, true);
  if (!r.ok()) { Result<uint32_t> f; f.err = r.err; f.msg = r.msg; return f; }
  return rok(new_rkey);
}

Status SessionImpl::do_bind_mw(Qp& q, Mw& w, uint32_t new_rkey, Handle mrh, uint64_t addr, uint64_t length, uint32_t access) {
  Mr* m = nullptr;
  if (length) {
    m = mr(mrh);
    if (!m || m->state != KeyState::Valid) return fail(EINVAL, "bind: MR is not valid");
  }
  constexpr uint32_t kMwAccess = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC | ACCESS_ZERO_BASED;
  if (access & ~kMwAccess) return fail(EOPNOTSUPP, "bind: access bits " + hex(access & ~kMwAccess) + " not supported on windows");
  bool zb = access & ACCESS_ZERO_BASED;
  if (w.type == MW_TYPE_1) {
    if (w.state != KeyState::Valid) return fail(EINVAL, "bind: type 1 window is not valid");
    if (zb) return fail(EINVAL, "bind: type 1 windows cannot be zero-based (o10-36.2.2)");
  } else {
    if (w.state != KeyState::Free) return fail(EINVAL, "bind: type 2 window must be FREE to bind (o10-37.2.30)");
    // type 2B (rxe, mlx5): the binding QP's PD must be the window's (C10-72, rxe_mw.c rxe_check_bind_mw); type 2A
    // windows are associated with a QP number only, so a QP of another PD may bind them
    if (!mw_type_2a(w) && q.pd != w.pd) return fail(EINVAL, "bind: QP PD differs from the MW PD (C10-72, type 2B)");
    if (!m || length == 0) return fail(EINVAL, "bind: type 2 windows need an MR and a non-zero length (o10-37.2.40)");
  }
  if (m) {
    if (m->pd != w.pd) return fail(EINVAL, "bind: MR PD differs from the MW PD");
    if (m->zero_based) return fail(EINVAL, "bind: MR is zero-based");
    if (!(m->access & ACCESS_MW_BIND)) return fail(EINVAL, "bind: MR lacks MW_BIND (C10-73)");
    if ((access & (ACCESS_REMOTE_WRITE | ACCESS_REMOTE_ATOMIC)) && !(m->access & ACCESS_LOCAL_WRITE))
      return fail(EINVAL, "bind: writable/atomic window needs LOCAL_WRITE on the MR (C10-74)");
    if (zb ? length > m->length : (addr < m->iova || addr - m->iova > m->length || length > m->length - (addr - m->iova)))
      return fail(EINVAL, "bind: window [" + hex(addr) + ", +" + std::to_string(length) + ") outside the MR (C10-75)");
  }
  // commit
  if (w.mr) if (Mr* old = mr(w.mr)) old->bound_mws--;
  w.rkey = (w.index << 8) | (new_rkey & 0xff);
  w.access = access; w.zero_based = zb; w.addr = addr; w.length = length;
  w.mr = m ? m->h : 0;
  if (m) m->bound_mws++;
  w.qp = w.type == MW_TYPE_2 ? q.h : 0;
  w.state = KeyState::Valid;
  if (capture) {
    auto& e = emit(EventKind::ObjectModified, w.dev, w.h, "mw",
                   "MW bound: rkey " + key_text(w.rkey) + " [" + hex(addr) + ", +" + std::to_string(length) + ")" +
                       (w.type == MW_TYPE_2 ? " to QP " + hex(q.qpn) : ""));
    e.a = w.rkey; e.b = addr; e.c = length; e.d = access; e.why(length ? Change::Bind : Change::Unbind).state(KeyState::Valid);
  }
  return ok();
}

Status SessionImpl::invalidate_key(Qp& q, uint32_t key, bool remote, const char* how) {
  const std::string by = how ? how : remote ? "remote invalidate" : "local invalidate";
  Device& d = *dev(q.dev);
  if ((key >> 8) > kMwIndexBase) {
    Mw* w = mw_by_key(q.dev, key);
    if (!w) return fail(EINVAL, "invalidate " + key_text(key) + ": no MW with that index");
    if (w->rkey != key) return fail(EINVAL, "invalidate " + key_text(key) + ": key byte " + hex(key & 0xff, 2) + " != " + hex(w->rkey & 0xff, 2));
    if (w->state == KeyState::Invalid) return fail(EINVAL, "invalidate " + key_text(key) + ": MW is invalid");
    if (w->type == MW_TYPE_1) return fail(EINVAL, "invalidate " + key_text(key) + ": type 1 windows cannot be invalidated (o10-37.2.26)");
    // type 2B is associated with a PD as well as a QP: the invalidating QP's PD must be the window's, as for MRs
    // (rxe_invalidate_mw has no such check: profile flag invalidate_checks_pd off); type 2A has no PD association
    if (!mw_type_2a(*w) && w->pd != q.pd) {
      op_rule = "invalidateChecksPd";
      if (d.profile.invalidate_checks_pd) return fail(EINVAL, "invalidate " + key_text(key) + ": PD mismatch (type 2B window)");
    }
    if (w->mr) if (Mr* m = mr(w->mr)) m->bound_mws--;
    w->mr = 0; w->qp = 0; w->access = 0; w->addr = 0; w->length = 0; w->state = KeyState::Free;
    if (capture) { auto& e = emit(EventKind::ObjectModified, w->dev, w->h, "mw", by + ": MW " + key_text(key) + " free"); e.a = key; e.why(remote ? Change::RemoteInv : Change::LocalInv).state(KeyState::Free); }
    return ok();
  }
  Mr* m = mr_by_key(q.dev, key);
  if (!m) return fail(EINVAL, "invalidate " + key_text(key) + ": no MR with that index");
  if (m->rkey != key && m->lkey != key) return fail(EINVAL, "invalidate " + key_text(key) + ": key byte " + hex(key & 0xff, 2) + " != " + hex(m->rkey & 0xff, 2));
  if (m->bound_mws) return fail(EINVAL, "invalidate " + key_text(key) + ": MR has bound windows");
  if (m->kind == MrKind::User) return fail(EINVAL, "invalidate " + key_text(key) + ": user MRs cannot be invalidated (not a fast-reg MR)");
  // rxe_invalidate_mr has no PD check (profile flag invalidate_checks_pd off); the IBA requires the QP's PD
  if (m->pd != q.pd) {
    op_rule = "invalidateChecksPd";                // the outcome (refused or not) is this profile rule's
    if (d.profile.invalidate_checks_pd) return fail(EINVAL, "invalidate " + key_text(key) + ": PD mismatch");
  }
  // siw (iWARP profile) has no state check: invalidating a FREE STag succeeds; rxe does the same for MRs
  m->state = KeyState::Free;
  if (capture) { auto& e = emit(EventKind::ObjectModified, m->dev, m->h, "mr", by + ": MR " + key_text(key) + " free"); e.a = key; e.why(remote ? Change::RemoteInv : Change::LocalInv).state(KeyState::Free); }
  return ok();
}

Status SessionImpl::do_reg_mr_wr(Qp& q, Handle mrh, uint32_t key, uint32_t access) {
  Mr* m = mr(mrh);
  if (!m) return fail(EINVAL, "reg_mr: no MR with handle " + std::to_string(mrh));
  if (m->kind == MrKind::User) return fail(EINVAL, "reg_mr: not a fast-registration MR");
  if (m->state != KeyState::Free) return fail(EINVAL, "reg_mr: MR " + key_text(m->lkey) + " is not FREE");
  if (m->pd != q.pd) return fail(EINVAL, "reg_mr: QP PD differs from the MR PD");
  if ((key >> 8) != m->index) return fail(EINVAL, "reg_mr: key " + key_text(key) + " index differs from the MR index " + hex(m->index));
  if (!m->mapped) return fail(EINVAL, "reg_mr: MR was not mapped (map_mr_sg)");
  // remote write / atomic need local write (the rule ib_check_mr_access applies to ibv_reg_mr, IBA 10.6.3.1); rxe's
  // rxe_reg_fast_mr takes any access (profile flag reg_mr_wr_checks_access off)
  if ((access & (ACCESS_REMOTE_WRITE | ACCESS_REMOTE_ATOMIC)) && !(access & ACCESS_LOCAL_WRITE)) {
    op_rule = "regMrWrChecksAccess";
    if (profile_of(q.dev).reg_mr_wr_checks_access) return fail(EINVAL, "reg_mr: REMOTE_WRITE/REMOTE_ATOMIC require LOCAL_WRITE");
  }
  m->lkey = m->rkey = key;
  m->access = access & (ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC | ACCESS_MW_BIND);
  m->state = KeyState::Valid;
  if (capture) {
    auto& e = emit(EventKind::ObjectModified, m->dev, m->h, "mr", "REG_MR: MR " + key_text(key) + " valid [" + hex(m->iova) + ", +" + std::to_string(m->length) + ")");
    e.a = key; e.b = m->iova; e.c = m->length; e.d = access; e.why(Change::RegMrWr).state(KeyState::Valid);
  }
  return ok();
}

static const char* access_name(uint32_t a) {
  return a == ACCESS_REMOTE_WRITE ? "REMOTE_WRITE" : a == ACCESS_REMOTE_READ ? "REMOTE_READ" : "REMOTE_ATOMIC";
}

SessionImpl::RkeyResult SessionImpl::check_rkey(Qp& q, uint32_t rkey, uint64_t va, uint64_t len, uint32_t need, const char* what) {
  RkeyResult r;
  auto bad = [&](std::string why) { r.ok = false; r.reason = "rkey " + key_text(rkey) + ": " + why; return r; };
  if ((rkey >> 8) > kMwIndexBase) {
    Mw* w = mw_by_key(q.dev, rkey);
    if (!w) return bad("no MW with index " + hex(rkey >> 8));
    if (w->rkey != rkey) return bad("key byte " + hex(rkey & 0xff, 2) + " != " + hex(w->rkey & 0xff, 2));
    if (w->state != KeyState::Valid) return bad(std::string("MW is ") + key_state_name(w->state));
    // type 1 and 2B windows: the requester's QP must be of the window's PD; 2A: associated with a QP number only
    if (w->pd != q.pd && !mw_type_2a(*w)) return bad("PD mismatch");
    if (w->type == MW_TYPE_2 && w->qp != q.h) {
      Qp* bq = qp(w->qp);
      return bad("MW bound to QP " + hex(bq ? bq->qpn : 0) + ", request on QP " + hex(q.qpn));
    }
    if (w->length == 0) return bad("MW is not bound (length 0)");
    if (!(w->access & need)) return bad(std::string("needs ") + access_name(need));
    uint64_t eva = w->zero_based ? w->addr + va : va;
    if ((w->zero_based ? va : va - w->addr) > w->length || va < (w->zero_based ? 0 : w->addr) ||
        len > w->length - (w->zero_based ? va : va - w->addr))
      return bad("range outside MW: " + hex(va) + "+" + std::to_string(len) + " not in [" + hex(w->zero_based ? 0 : w->addr) + ", +" + std::to_string(w->length) + ")");
    Mr* m = mr(w->mr);
    if (!m || m->state != KeyState::Valid) return bad("MW's MR is not valid");
    r.ok = true; r.m = m; r.va = eva; r.mw = w->h;
    return r;
  }
  Mr* m = mr_by_key(q.dev, rkey);
  if (!m) return bad("no MR with index " + hex(rkey >> 8));
  if (m->rkey != rkey) return bad("key byte " + hex(rkey & 0xff, 2) + " != " + hex(m->rkey & 0xff, 2));
  if (m->state != KeyState::Valid) return bad(std::string("MR is ") + key_state_name(m->state));
  if (m->pd != q.pd) return bad("PD mismatch");
  if (!(m->access & need)) return bad(std::string("needs ") + access_name(need));
  if (va < m->iova || va - m->iova > m->length || len > m->length - (va - m->iova))
    return bad("range outside MR: " + hex(va) + "+" + std::to_string(len) + " not in [" + hex(m->iova) + ", +" + std::to_string(m->length) + ")");
  (void)what;
  r.ok = true; r.m = m; r.va = va;
  return r;
}

}  // namespace vl
