// rdma_event_str, and what this library does not build (docs/librdmacm.md lists it): multicast (the device's CM
// has no multicast join / SA), ECE (no vendor options to exchange), and rsockets (rdma-core's socket API over
// RDMA, librdmacm/rsocket.c, a protocol of its own on top of the CM and verbs). Each answers -1 with errno:
// ENOSYS where rdma-core would need a kernel feature the device lacks, EOPNOTSUPP where the device lacks the
// capability.
#include <poll.h>
#include <rdma/rsocket.h>
#include <sys/select.h>

#include "lib.h"

using namespace vcm;

VL_EXPORT const char* rdma_event_str(rdma_cm_event_type event) {
  const unsigned n = sizeof vl::CM_EVENT_NAMES / sizeof vl::CM_EVENT_NAMES[0];
  return static_cast<unsigned>(event) < n ? vl::CM_EVENT_NAMES[event] : "UNKNOWN EVENT";
}

VL_EXPORT int rdma_join_multicast(rdma_cm_id*, sockaddr*, void*) { return fail(ENOSYS); }
VL_EXPORT int rdma_join_multicast_ex(rdma_cm_id*, rdma_cm_join_mc_attr_ex*, void*) { return fail(ENOSYS); }
VL_EXPORT int rdma_leave_multicast(rdma_cm_id*, sockaddr*) { return fail(ENOSYS); }

// ECE (enhanced connection establishment, vendor options in the REQ / REP): the device has none to offer
VL_EXPORT int rdma_set_local_ece(rdma_cm_id* id, ibv_ece* ece) {
  if (!id || id->qp || !ece || !ece->vendor_id || ece->comp_mask) return fail(EINVAL);   // rdma-core's checks
  return fail(EOPNOTSUPP);
}
VL_EXPORT int rdma_get_remote_ece(rdma_cm_id* id, ibv_ece* ece) {
  if (!id || id->qp || !ece) return fail(EINVAL);
  return fail(EOPNOTSUPP);
}
// REJ reason 35 (vendor option not supported): the device's CM sends CONSUMER_DEFINED only (vl/cm.h cm_reject)
VL_EXPORT int rdma_reject_ece(rdma_cm_id* id, const void*, uint8_t) { return id ? fail(EOPNOTSUPP) : fail(EINVAL); }

// ---- rsockets: not built
#define RS_NOSYS { return fail(ENOSYS); }
VL_EXPORT int rsocket(int, int, int) RS_NOSYS
VL_EXPORT int rbind(int, const sockaddr*, socklen_t) RS_NOSYS
VL_EXPORT int rlisten(int, int) RS_NOSYS
VL_EXPORT int raccept(int, sockaddr*, socklen_t*) RS_NOSYS
VL_EXPORT int rconnect(int, const sockaddr*, socklen_t) RS_NOSYS
VL_EXPORT int rshutdown(int, int) RS_NOSYS
VL_EXPORT int rclose(int) RS_NOSYS
VL_EXPORT ssize_t rrecv(int, void*, size_t, int) RS_NOSYS
VL_EXPORT ssize_t rrecvfrom(int, void*, size_t, int, sockaddr*, socklen_t*) RS_NOSYS
VL_EXPORT ssize_t rrecvmsg(int, msghdr*, int) RS_NOSYS
VL_EXPORT ssize_t rsend(int, const void*, size_t, int) RS_NOSYS
VL_EXPORT ssize_t rsendto(int, const void*, size_t, int, const sockaddr*, socklen_t) RS_NOSYS
VL_EXPORT ssize_t rsendmsg(int, const msghdr*, int) RS_NOSYS
VL_EXPORT ssize_t rread(int, void*, size_t) RS_NOSYS
VL_EXPORT ssize_t rreadv(int, const iovec*, int) RS_NOSYS
VL_EXPORT ssize_t rwrite(int, const void*, size_t) RS_NOSYS
VL_EXPORT ssize_t rwritev(int, const iovec*, int) RS_NOSYS
VL_EXPORT int rpoll(pollfd*, nfds_t, int) RS_NOSYS
VL_EXPORT int rselect(int, fd_set*, fd_set*, fd_set*, timeval*) RS_NOSYS
VL_EXPORT int rgetpeername(int, sockaddr*, socklen_t*) RS_NOSYS
VL_EXPORT int rgetsockname(int, sockaddr*, socklen_t*) RS_NOSYS
VL_EXPORT int rsetsockopt(int, int, int, const void*, socklen_t) RS_NOSYS
VL_EXPORT int rgetsockopt(int, int, int, void*, socklen_t*) RS_NOSYS
VL_EXPORT int rfcntl(int, int, ...) RS_NOSYS
VL_EXPORT off_t riomap(int, void*, size_t, int, int, off_t) RS_NOSYS
VL_EXPORT int riounmap(int, void*, size_t) RS_NOSYS
VL_EXPORT size_t riowrite(int, const void*, size_t, off_t, int) { errno = ENOSYS; return static_cast<size_t>(-1); }
VL_EXPORT const char verbslab_librdmacm[] = "Verbs Lab software device";
