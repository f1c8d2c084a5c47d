// Temporary: methods not built yet.
#include <cerrno>

#include "core/impl.h"

namespace vl {
#define NOSYS(T) return rfail<T>(ENOSYS, "not built yet")
#define NOSYS_S return fail(ENOSYS, "not built yet")

Result<MrInfo> Session::reg_mr(Handle, uint64_t, uint64_t, uint32_t, std::optional<uint64_t>) { NOSYS(MrInfo); }
Result<MrInfo> Session::rereg_mr(Handle, uint32_t, Handle, uint64_t, uint64_t, uint32_t) { NOSYS(MrInfo); }
Status Session::dereg_mr(Handle) { NOSYS_S; }
Result<MrInfo> Session::alloc_mr(Handle, uint32_t, bool) { NOSYS(MrInfo); }
Result<uint32_t> Session::map_mr_sg(Handle, const std::vector<Sge>&, uint32_t) { NOSYS(uint32_t); }
Result<MwInfo> Session::alloc_mw(Handle, uint32_t) { NOSYS(MwInfo); }
Status Session::dealloc_mw(Handle) { NOSYS_S; }
Result<uint32_t> Session::bind_mw(Handle, Handle, uint64_t, uint32_t, Handle, uint64_t, uint64_t, uint32_t) { NOSYS(uint32_t); }
std::optional<MrInfo> Session::mr_info(Handle) const { return {}; }
std::optional<MwInfo> Session::mw_info(Handle) const { return {}; }
Result<Handle> Session::create_cq(Handle, uint32_t, bool) { NOSYS(Handle); }
Status Session::destroy_cq(Handle) { NOSYS_S; }
Status Session::req_notify_cq(Handle, bool) { NOSYS_S; }
Result<int> Session::req_notify_cq_report_missed(Handle, bool) { NOSYS(int); }
std::vector<Wc> Session::poll_cq(Handle, uint32_t) { return {}; }
Result<Handle> Session::get_cq_event(Handle) { NOSYS(Handle); }
Status Session::ack_cq_events(Handle, uint32_t) { NOSYS_S; }
Result<Handle> Session::create_srq(Handle, uint32_t, uint32_t, uint32_t) { NOSYS(Handle); }
Status Session::modify_srq(Handle, uint32_t) { NOSYS_S; }
Status Session::destroy_srq(Handle) { NOSYS_S; }
PostResult Session::post_srq_recv(Handle, const std::vector<RecvWr>&) { PostResult r; r.err = ENOSYS; r.msg = "not built yet"; return r; }
Result<QpInfo> Session::create_qp(Handle, const QpInitAttr&) { NOSYS(QpInfo); }
Status Session::modify_qp(Handle, const QpAttr&, uint32_t) { NOSYS_S; }
std::optional<QpInfo> Session::query_qp(Handle) const { return {}; }
Status Session::destroy_qp(Handle) { NOSYS_S; }
Result<Handle> Session::create_ah(Handle, Handle, uint32_t) { NOSYS(Handle); }
PostResult Session::post_send(Handle, const std::vector<SendWr>&) { PostResult r; r.err = ENOSYS; r.msg = "not built yet"; return r; }
PostResult Session::post_recv(Handle, const std::vector<RecvWr>&) { PostResult r; r.err = ENOSYS; r.msg = "not built yet"; return r; }
void Session::set_faults(const FaultConfig&) {}
bool Session::step() { return false; }
uint64_t Session::run(uint64_t) { return 0; }
uint64_t Session::now_ns() const { return impl_->now; }
Status Session::write_pcap(const std::string&) const { NOSYS_S; }

}  // namespace vl
