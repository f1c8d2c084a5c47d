// Shared receive queues (rxe_srq.c) with the one-shot limit event.
#include <cerrno>

#include "core/impl.h"

namespace vl {

Result<Handle> Session::create_srq(Handle pdh, uint32_t max_wr, uint32_t max_sge, uint32_t srq_limit) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Pd* p = S.pd(pdh);
  if (!p) return rfail<Handle>(ENOENT, "pd: no PD with handle " + std::to_string(pdh));
  Device& d = *S.dev(p->dev);
  if (d.profile.max_srq == 0) return rfail<Handle>(EOPNOTSUPP, "create_srq: " + d.name + " has no SRQ support");
  if (max_wr < 1 || max_wr > d.profile.max_srq_wr) return rfail<Handle>(EINVAL, "max_wr: must be 1.." + std::to_string(d.profile.max_srq_wr));
  if (max_sge < 1 || max_sge > d.profile.max_srq_sge) return rfail<Handle>(EINVAL, "max_sge: must be 1.." + std::to_string(d.profile.max_srq_sge));
  if (srq_limit > max_wr) return rfail<Handle>(EINVAL, "srq_limit: larger than max_wr");
  if (d.n_srq >= d.profile.max_srq) return rfail<Handle>(ENOMEM, "max_srq reached");
  const uint64_t cost = sizeof(Srq) + uint64_t(max_wr) * (sizeof(RecvWr) + max_sge * sizeof(Sge));
  if (auto m = S.over_budget(cost, "srq"); !m.empty()) return rfail<Handle>(ENOMEM, m);
  Srq s; s.h = S.new_handle(); s.pd = pdh; s.dev = p->dev; s.max_wr = max_wr; s.max_sge = max_sge; s.limit = srq_limit;
  S.srqs.emplace(s.h, s);
  S.charge(s.h, cost);
  d.n_srq++; p->users++;
  if (S.capture) { auto& e = S.emit(EventKind::ObjectCreated, p->dev, s.h, "srq"); e.a = max_wr; e.b = max_sge; e.c = srq_limit; }
  return rok(s.h);
}

Status Session::modify_srq(Handle srqh, uint32_t srq_limit) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Srq* s = S.srq(srqh);
  if (!s) return fail(ENOENT, "srq: no SRQ with handle " + std::to_string(srqh));
  if (srq_limit > s->max_wr) return fail(EINVAL, "srq_limit: larger than max_wr (" + std::to_string(s->max_wr) + ")");
  s->limit = srq_limit;
  if (S.capture) { auto& e = S.emit(EventKind::ObjectModified, s->dev, srqh, "srq", "srq_limit " + std::to_string(srq_limit) + " armed"); e.a = srq_limit; e.why(Change::ModifySrq); }
  return ok();
}

Status Session::destroy_srq(Handle srqh) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  Srq* s = S.srq(srqh);
  if (!s) return fail(ENOENT, "srq: no SRQ with handle " + std::to_string(srqh));
  for (auto& [h, q] : S.qps) if (q.init.srq == srqh) return fail(EBUSY, "srq: still used by QP " + hex(q.qpn));
  S.dev(s->dev)->n_srq--;
  S.pd(s->pd)->users--;
  S.emit_obj(EventKind::ObjectDestroyed, s->dev, srqh, "srq");
  S.srqs.erase(srqh);
  S.uncharge(srqh);
  return ok();
}

PostResult Session::post_srq_recv(Handle srqh, const std::vector<RecvWr>& wrs) {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  PostResult r;
  Srq* s = S.srq(srqh);
  if (!s) { r.err = ENOENT; r.msg = "srq: no SRQ with handle " + std::to_string(srqh); return r; }
  for (size_t i = 0; i < wrs.size(); i++) {
    const RecvWr& w = wrs[i];
    std::string idx = "wr[" + std::to_string(i) + "]";
    if (w.sg_list.size() > s->max_sge) { r.err = EINVAL; r.bad_wr = i; r.msg = idx + ".sg_list: " + std::to_string(w.sg_list.size()) + " SGEs > max_sge " + std::to_string(s->max_sge); return r; }
    if (s->q.size() >= s->max_wr) { r.err = ENOMEM; r.bad_wr = i; r.msg = idx + ": SRQ full (" + std::to_string(s->max_wr) + ")"; return r; }
    s->q.push_back(w);
    s->posted++;
    if (S.capture) { auto& e = S.emit(EventKind::WqePosted, s->dev, srqh, "srq"); e.a = w.wr_id; e.b = s->q.size(); }
  }
  if (S.inline_run) S.run_to_idle();
  return r;
}

}  // namespace vl
