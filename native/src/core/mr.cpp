// Memory regions: registration, re-registration, fast-registration MRs (ib_alloc_mr / ib_map_mr_sg),
// key allocation and local (lkey) translation. Behaviour follows rxe_mr.c and core verbs.c.
#include <cerrno>

#include "core/impl.h"
#include "vl/sg.h"

namespace vl {

static constexpr uint32_t kKnownAccess = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ |
                                         ACCESS_REMOTE_ATOMIC | ACCESS_MW_BIND | ACCESS_ZERO_BASED;
static constexpr uint32_t kOptionalAccess = 0xFFF00000u;   // IBV_ACCESS_OPTIONAL_RANGE: ignored

uint8_t SessionImpl::new_key_byte(Device& d, uint8_t old, bool first) {
  const std::string& pol = d.profile.key_byte_policy;
  if (pol == "random") {
    for (;;) {                                     // rxe_get_next_key: random, never the previous value
      uint8_t b = static_cast<uint8_t>(rng() & 0xff);
      if (first || b != old) return b;
    }
  }
  if (pol == "increment") return first ? d.key_counter++ : static_cast<uint8_t>(old + 1);
  return first ? 0 : static_cast<uint8_t>(old + 1);  // "zero": starts at 0, ib_inc_rkey on reuse
}

Mr* SessionImpl::mr_by_key(Handle devh, uint32_t key) {
  Device* d = dev(devh);
  if (!d) return nullptr;
  const Handle h = d->mr_by_index.get(key >> 8);
  return h ? mr(h) : nullptr;
}
Mw* SessionImpl::mw_by_key(Handle devh, uint32_t key) {
  Device* d = dev(devh);
  if (!d) return nullptr;
  const Handle h = d->mw_by_index.get(key >> 8);
  return h ? mw(h) : nullptr;
}

MrInfo SessionImpl::mr_info(const Mr& m) const {
  MrInfo i;
  i.handle = m.h; i.pd = m.pd; i.lkey = m.lkey; i.rkey = m.rkey; i.addr = m.addr; i.length = m.length;
  i.iova = m.iova; i.access = m.access; i.kind = mr_kind_name(m.kind); i.state = key_state_name(m.state); i.sg = m.sg;
  return i;
}

static std::string check_access(const Profile& p, uint32_t access) {
  uint32_t a = access & ~kOptionalAccess;
  if (a & ~kKnownAccess) return "access: unsupported bits " + hex(a & ~kKnownAccess);
  if ((a & (ACCESS_REMOTE_WRITE | ACCESS_REMOTE_ATOMIC)) && !(a & ACCESS_LOCAL_WRITE))
    return std::string("access: ") + ((a & ACCESS_REMOTE_WRITE) ? "REMOTE_WRITE" : "REMOTE_ATOMIC") +
           " requires LOCAL_WRITE";
  return {};
}

Result<MrInfo> Session::reg_mr(Handle pdh, uint64_t addr, uint64_t length, uint32_t access, std::optional<uint64_t> iova) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Pd* p = S.pd(pdh);
  if (!p) return rfail<MrInfo>(ENOENT, "pd: no PD with handle " + std::to_string(pdh));
  Device& d = *S.dev(p->dev);
  if (auto e = check_access(d.profile, access); !e.empty()) return rfail<MrInfo>(EINVAL, e);
  if ((access & ACCESS_MW_BIND) && !(d.profile.device_cap_flags & DEVICE_MEM_WINDOW))
    return rfail<MrInfo>(EOPNOTSUPP, "access: MW_BIND needs IBV_DEVICE_MEM_WINDOW, which " + d.name + " lacks");
  if ((access & ACCESS_ZERO_BASED) && !d.profile.zero_based_mr)
    return rfail<MrInfo>(EOPNOTSUPP, "access: ZERO_BASED MRs are not supported by profile " + d.profile.name);
  if (length == 0) return rfail<MrInfo>(EINVAL, "length: must be > 0");
  if (length > d.profile.max_mr_size) return rfail<MrInfo>(EINVAL, "length: larger than max_mr_size");
  if (!S.host(addr, length))
    return rfail<MrInfo>(EFAULT, "addr: range " + hex(addr) + "+" + std::to_string(length) + " is not inside one buffer");
  // core ib_uverbs_reg_mr (every device): the iova must sit at the same offset in its page as the address
  if (iova && !(access & ACCESS_ZERO_BASED) && (*iova & (kPage - 1)) != (addr & (kPage - 1)))
    return rfail<MrInfo>(EINVAL, "iova: page offset " + hex(*iova & (kPage - 1)) + " differs from the address's " +
                                     hex(addr & (kPage - 1)) + " (ib_uverbs_reg_mr)");
  if (d.n_mr >= d.profile.max_mr) return rfail<MrInfo>(ENOMEM, "max_mr (" + std::to_string(d.profile.max_mr) + ") reached");
  if (d.next_mr_index >= kMwIndexBase) return rfail<MrInfo>(ENOMEM, "MR key index space exhausted");
  if (auto msg = S.over_budget(sizeof(Mr), "mr"); !msg.empty()) return rfail<MrInfo>(ENOMEM, msg);
  Mr m;
  m.h = S.new_handle(); m.pd = pdh; m.dev = p->dev; m.index = d.next_mr_index++;
  uint8_t kb = S.new_key_byte(d, 0, true);
  m.lkey = m.rkey = (m.index << 8) | kb;
  m.addr = addr; m.length = length; m.access = access & kKnownAccess;
  m.zero_based = access & ACCESS_ZERO_BASED;
  m.iova = m.zero_based ? 0 : iova.value_or(addr);
  m.state = KeyState::Valid; m.kind = MrKind::User; m.mem = S.host(addr, length);
  d.mr_by_index.set(m.index, m.h);
  d.n_mr++; p->users++;
  MrInfo info = S.mr_info(m);
  if (S.capture) {
    auto& e = S.emit(EventKind::ObjectCreated, m.dev, m.h, "mr",
                     "MR lkey " + key_text(m.lkey) + " rkey " + key_text(m.rkey) + " [" + hex(addr) + ", +" + std::to_string(length) + ")");
    e.a = m.lkey; e.b = m.rkey; e.c = addr; e.d = length; e.state(KeyState::Valid);
  }
  S.charge(m.h, sizeof(Mr));
  S.mrs.emplace(m.h, std::move(m));
  return rok(info);
}

Result<MrInfo> Session::rereg_mr(Handle mrh, uint32_t flags, Handle pdh, uint64_t addr, uint64_t length, uint32_t access) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Mr* m = S.mr(mrh);
  if (!m) return rfail<MrInfo>(ENOENT, "mr: no MR with handle " + std::to_string(mrh));
  Device& d = *S.dev(m->dev);
  constexpr uint32_t kTrans = 1, kPd = 2, kAcc = 4;
  if (flags == 0 || (flags & ~7u)) return rfail<MrInfo>(EINVAL, "flags: must be a non-empty subset of CHANGE_TRANSLATION|CHANGE_PD|CHANGE_ACCESS");
  if (m->kind != MrKind::User) return rfail<MrInfo>(EINVAL, "mr: only user MRs can be re-registered");
  if (m->bound_mws) return rfail<MrInfo>(EBUSY, "mr: " + std::to_string(m->bound_mws) + " memory window(s) bound");
  if ((flags & kTrans) && d.profile.rereg_pd_access_only)
    return rfail<MrInfo>(EOPNOTSUPP, "flags: rxe supports only CHANGE_PD and CHANGE_ACCESS (rxe_rereg_user_mr)");
  Pd* np = nullptr;
  if (flags & kPd) {
    np = S.pd(pdh);
    if (!np) return rfail<MrInfo>(ENOENT, "pd: no PD with handle " + std::to_string(pdh));
    if (np->dev != m->dev) return rfail<MrInfo>(EINVAL, "pd: PD belongs to another device");
  }
  uint32_t nacc = m->access;
  if (flags & kAcc) {
    if (auto e = check_access(d.profile, access); !e.empty()) return rfail<MrInfo>(EINVAL, e);
    if ((access & ACCESS_ZERO_BASED) && !d.profile.zero_based_mr)
      return rfail<MrInfo>(EOPNOTSUPP, "access: ZERO_BASED MRs are not supported by profile " + d.profile.name);
    if ((access & ACCESS_MW_BIND) && !(d.profile.device_cap_flags & DEVICE_MEM_WINDOW))
      return rfail<MrInfo>(EOPNOTSUPP, "access: MW_BIND needs IBV_DEVICE_MEM_WINDOW");
    nacc = access & kKnownAccess;
  }
  if (flags & kTrans) {
    if (length == 0) return rfail<MrInfo>(EINVAL, "length: must be > 0");
    if (!S.host(addr, length)) return rfail<MrInfo>(EFAULT, "addr: range " + hex(addr) + "+" + std::to_string(length) + " is not inside one buffer");
  }
  // commit
  if (np) { S.pd(m->pd)->users--; np->users++; m->pd = pdh; }
  m->access = nacc;
  m->zero_based = nacc & ACCESS_ZERO_BASED;
  if (flags & kTrans) { m->addr = addr; m->length = length; m->iova = addr; m->mem = S.host(addr, length); }
  if (m->zero_based) m->iova = 0;
  else if (flags & kAcc && m->iova == 0) m->iova = m->addr;
  // rxe_rereg_user_mr changes the PD / access in place: the keys stay. Otherwise the key byte advances
  // (ibv_rereg_mr(3): the lkey and rkey may change; the caller must use the new ones).
  const bool new_key = !d.profile.rereg_pd_access_only;
  if (new_key) m->lkey = m->rkey = (m->index << 8) | S.new_key_byte(d, m->lkey & 0xff, false);
  m->state = KeyState::Valid;
  if (S.capture) {
    auto& e = S.emit(EventKind::ObjectModified, m->dev, m->h, "mr",
                     std::string("MR re-registered, key ") + (new_key ? "now " : "kept ") + key_text(m->lkey));
    e.a = m->lkey; e.b = m->rkey; e.c = flags; e.why(Change::Rereg).state(KeyState::Valid);
  }
  return rok(S.mr_info(*m));
}

Status Session::dereg_mr(Handle mrh) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Mr* m = S.mr(mrh);
  if (!m) return fail(ENOENT, "mr: no MR with handle " + std::to_string(mrh));
  Device& d = *S.dev(m->dev);
  // IBA 10.6.7.2.6: an MR with bound windows cannot be deregistered; rxe_dereg_mr says so with EINVAL
  if (m->bound_mws)
    return fail(static_cast<int>(d.profile.dereg_bound_mr_errno),
                "mr: " + std::to_string(m->bound_mws) + " memory window(s) still bound to MR " + key_text(m->lkey));
  d.mr_by_index.erase(m->index);
  d.n_mr--;
  S.pd(m->pd)->users--;
  if (S.capture) { auto& e = S.emit(EventKind::ObjectDestroyed, m->dev, mrh, "mr", "MR " + key_text(m->lkey)); e.a = m->lkey; e.state(KeyState::Invalid); }
  S.mrs.erase(mrh);
  S.uncharge(mrh);
  return ok();
}

Result<MrInfo> Session::alloc_mr(Handle pdh, uint32_t max_num_sg, bool indirect) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Pd* p = S.pd(pdh);
  if (!p) return rfail<MrInfo>(ENOENT, "pd: no PD with handle " + std::to_string(pdh));
  Device& d = *S.dev(p->dev);
  if (!(d.profile.device_cap_flags & DEVICE_MEM_MGT_EXTENSIONS))
    return rfail<MrInfo>(EOPNOTSUPP, "alloc_mr: fast registration needs IBV_DEVICE_MEM_MGT_EXTENSIONS, which " + d.name + " lacks");
  if (indirect && !d.profile.indirect_reg)
    return rfail<MrInfo>(EOPNOTSUPP, "indirect: IB_MR_TYPE_SG_GAPS is not supported by profile " + d.profile.name);
  if (max_num_sg == 0 || max_num_sg > d.profile.max_fast_reg_page_list_len)
    return rfail<MrInfo>(EINVAL, "max_num_sg: must be 1.." + std::to_string(d.profile.max_fast_reg_page_list_len));
  if (d.n_mr >= d.profile.max_mr) return rfail<MrInfo>(ENOMEM, "max_mr reached");
  const uint64_t cost = sizeof(Mr) + uint64_t(max_num_sg) * 16;   // its page / SG list at full length
  if (auto msg = S.over_budget(cost, "mr"); !msg.empty()) return rfail<MrInfo>(ENOMEM, msg);
  Mr m;
  m.h = S.new_handle(); m.pd = pdh; m.dev = p->dev; m.index = d.next_mr_index++;
  m.lkey = m.rkey = (m.index << 8) | S.new_key_byte(d, 0, true);
  m.kind = indirect ? MrKind::Indirect : MrKind::FastReg;
  m.state = KeyState::Free;
  m.max_num_sg = max_num_sg;
  d.mr_by_index.set(m.index, m.h);
  d.n_mr++; p->users++;
  MrInfo info = S.mr_info(m);
  if (S.capture) {
    auto& e = S.emit(EventKind::ObjectCreated, m.dev, m.h, "mr", std::string(mr_kind_name(m.kind)) + " MR " + key_text(m.lkey) + " (free)");
    e.a = m.lkey; e.b = m.rkey; e.c = max_num_sg; e.state(KeyState::Free);
  }
  S.charge(m.h, cost);
  S.mrs.emplace(m.h, std::move(m));
  return rok(info);
}

Result<uint32_t> Session::map_mr_sg(Handle mrh, const std::vector<Sge>& sg, uint32_t page_size) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Mr* m = S.mr(mrh);
  if (!m) return rfail<uint32_t>(ENOENT, "mr: no MR with handle " + std::to_string(mrh));
  if (m->kind == MrKind::User) return rfail<uint32_t>(EINVAL, "mr: not a fast-registration MR (use alloc_mr)");
  Device& d = *S.dev(m->dev);
  if (sg.empty()) return rfail<uint32_t>(EINVAL, "sg: empty list");
  bool indirect = m->kind == MrKind::Indirect;
  if (!indirect) {
    if (page_size < 4096 || (page_size & (page_size - 1)) || !(d.profile.page_size_cap & page_size))
      return rfail<uint32_t>(EINVAL, "page_size: " + std::to_string(page_size) + " not in page_size_cap");
  }
  for (size_t i = 0; i < sg.size(); i++) {
    if (sg[i].length == 0) return rfail<uint32_t>(EINVAL, "sg[" + std::to_string(i) + "].length: zero");
    if (!S.host(sg[i].addr, sg[i].length))
      return rfail<uint32_t>(EFAULT, "sg[" + std::to_string(i) + "]: range " + hex(sg[i].addr) + "+" + std::to_string(sg[i].length) + " is not inside one buffer");
  }
  // one rule for the device, the lab and the console: vl/sg.h (ib_sg_to_pages / the indirect entry rule)
  const SgMapping map = indirect ? sg_to_entries(sg, m->max_num_sg) : sg_to_pages(sg, page_size, m->max_num_sg);
  const uint32_t n = map.mapped;
  std::vector<Seg> segs;
  for (auto& g : map.segs) segs.push_back({g.va, g.len});
  std::vector<Sge> used(sg.begin(), sg.begin() + n);
  if (n) {
    m->segs = std::move(segs); m->sg = std::move(used); m->mapped = true;
    m->iova = sg[0].addr; m->addr = sg[0].addr;
    m->length = 0;
    for (auto& s : m->segs) m->length += s.len;
  }
  if (S.capture) {
    auto& e = S.emit(EventKind::ObjectModified, m->dev, m->h, "mr",
                     "map_mr_sg: " + std::to_string(n) + " of " + std::to_string(sg.size()) + " element(s) mapped");
    e.a = n; e.b = sg.size(); e.c = m->iova; e.d = m->length; e.why(Change::MapMrSg).state(m->state);
  }
  return rok(n);
}

std::optional<MrInfo> Session::mr_info(Handle mrh) const {
  auto lk_ = impl_->lock();
  auto it = impl_->mrs.find(mrh);
  if (it == impl_->mrs.end()) return std::nullopt;
  return impl_->mr_info(it->second);
}

bool SessionImpl::mr_translate(Mr& m, uint64_t iova, uint64_t len, std::vector<Piece>& out) {
  if (iova < m.iova || iova - m.iova > m.length || len > m.length - (iova - m.iova)) return false;
  uint64_t off = iova - m.iova;
  if (len == 0) return true;
  if (m.kind == MrKind::User) {
    out.push_back({m.mem + off, len, m.addr + off});   // mem: set by reg_mr / rereg_mr once host() found the range
    return true;
  }
  for (auto& s : m.segs) {
    if (off >= s.len) { off -= s.len; continue; }
    uint64_t n = std::min(len, s.len - off);
    uint8_t* p = host(s.va + off, n);
    if (!p) return false;
    out.push_back({p, n, s.va + off});
    len -= n; off = 0;
    if (!len) return true;
  }
  return len == 0;
}

bool SessionImpl::sge_pieces(Handle pdh, const Sge& s, bool need_write, std::vector<Piece>& out, std::string& why) {
  if (s.length == 0) return true;
  Pd* p = pd(pdh);
  Mr* m = p ? mr_by_key(p->dev, s.lkey) : nullptr;
  if (!m) { why = "lkey " + key_text(s.lkey) + ": no MR with index " + hex(s.lkey >> 8); return false; }
  if (m->lkey != s.lkey) { why = "lkey " + key_text(s.lkey) + ": key byte " + hex(s.lkey & 0xff, 2) + " != " + hex(m->lkey & 0xff, 2); return false; }
  if (m->state != KeyState::Valid) { why = "lkey " + key_text(s.lkey) + ": MR is " + key_state_name(m->state); return false; }
  if (m->pd != pdh) { why = "lkey " + key_text(s.lkey) + ": PD mismatch"; return false; }
  if (need_write && !(m->access & ACCESS_LOCAL_WRITE)) { why = "lkey " + key_text(s.lkey) + ": needs LOCAL_WRITE"; return false; }
  if (!mr_translate(*m, s.addr, s.length, out)) { why = "lkey " + key_text(s.lkey) + ": range " + hex(s.addr) + "+" + std::to_string(s.length) + " outside MR"; return false; }
  return true;
}

bool SessionImpl::copy_from_sges(Handle pdh, const std::vector<Sge>& sg, uint64_t off, uint8_t* dst, uint64_t len, std::string& why) {
  std::vector<Piece> pieces;
  for (auto& s : sg) {
    if (!len) break;
    if (off >= s.length) { off -= s.length; continue; }
    uint64_t n = std::min<uint64_t>(len, s.length - off);
    pieces.clear();
    Sge part{s.addr + off, static_cast<uint32_t>(n), s.lkey};
    if (!sge_pieces(pdh, part, false, pieces, why)) return false;
    for (auto& pc : pieces) { std::memcpy(dst, pc.p, pc.n); dst += pc.n; }
    len -= n; off = 0;
  }
  if (len) { why = "SGE list shorter than the message"; return false; }
  return true;
}

int SessionImpl::copy_to_sges(Handle pdh, Handle devh, const std::vector<Sge>& sg, uint64_t off, const uint8_t* src, uint64_t len, std::string& why) {
  uint64_t total = 0;
  for (auto& s : sg) total += s.length;
  if (off + len > total) { why = "message longer than the receive buffers (" + std::to_string(total) + " bytes)"; return -2; }
  std::vector<Piece> pieces;
  for (auto& s : sg) {
    if (!len) break;
    if (off >= s.length) { off -= s.length; continue; }
    uint64_t n = std::min<uint64_t>(len, s.length - off);
    pieces.clear();
    Sge part{s.addr + off, static_cast<uint32_t>(n), s.lkey};
    if (!sge_pieces(pdh, part, true, pieces, why)) return -1;
    src = unaliased(src, len, pieces);             // the bytes still to copy may lie under this SGE (fastpath.cpp)
    for (auto& pc : pieces) { std::memcpy(pc.p, src, pc.n); src += pc.n; note_write(devh, pc.va, pc.n); }
    len -= n; off = 0;
  }
  return 0;
}

}  // namespace vl
