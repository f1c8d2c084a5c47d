// The rest of libibverbs' public ABI: enum strings, rate conversions, and the verbs this device does not have
// (each answers EOPNOTSUPP / ENOSYS the way rdma-core does for a provider without the op). Strings and values are
// rdma-core's (libibverbs/enum_strs.c, verbs.c).
#include <cstring>

#include "lib.h"

using namespace vlib;

VL_EXPORT const char* ibv_wc_status_str(ibv_wc_status s) {
  static const char* const t[] = {
      "success", "local length error", "local QP operation error", "local EE context operation error",
      "local protection error", "Work Request Flushed Error", "memory management operation error",
      "bad response error", "local access error", "remote invalid request error", "remote access error",
      "remote operation error", "transport retry counter exceeded", "RNR retry counter exceeded",
      "local RDD violation error", "remote invalid RD request", "aborted error", "invalid EE context number",
      "invalid EE context state", "fatal error", "response timeout error", "general error", "TM error",
      "TM rendezvous error"};
  return s >= 0 && size_t(s) < sizeof t / sizeof t[0] ? t[s] : "unknown";
}

VL_EXPORT const char* ibv_node_type_str(ibv_node_type n) {
  static const char* const t[] = {"unknown", "InfiniBand channel adapter", "InfiniBand switch", "InfiniBand router",
                                  "iWARP NIC", "usNIC", "usNIC UDP", "unspecified"};
  int i = n + 1;                               // IBV_NODE_UNKNOWN = -1
  return i >= 0 && size_t(i) < sizeof t / sizeof t[0] ? t[i] : "unknown";
}

VL_EXPORT const char* ibv_port_state_str(ibv_port_state s) {
  static const char* const t[] = {"no state change (NOP)", "down", "init", "armed", "active", "active deferred"};
  return s >= 0 && size_t(s) < sizeof t / sizeof t[0] ? t[s] : "unknown";
}

VL_EXPORT const char* ibv_event_type_str(ibv_event_type e) {
  static const char* const t[] = {
      "CQ error", "local work queue catastrophic error", "invalid request local work queue error",
      "local access violation work queue error", "communication established", "send queue drained",
      "path migrated", "path migration request error", "local catastrophic error", "port active", "port error",
      "LID change", "P_Key change", "SM change", "SRQ catastrophic error", "SRQ limit reached",
      "last WQE reached", "client reregistration", "GID table change", "WQ fatal"};
  return e >= 0 && size_t(e) < sizeof t / sizeof t[0] ? t[e] : "unknown";
}

// ---- rates: enum ibv_rate, its multiple of 2.5 Gb/s (-1 for the FDR/EDR/HDR rates that are none) and Mb/s
namespace {
struct Rate { ibv_rate r; int mult; int mbps; };
constexpr Rate kRates[] = {
    {IBV_RATE_2_5_GBPS, 1, 2500},     {IBV_RATE_5_GBPS, 2, 5000},       {IBV_RATE_10_GBPS, 4, 10000},
    {IBV_RATE_20_GBPS, 8, 20000},     {IBV_RATE_30_GBPS, 12, 30000},    {IBV_RATE_40_GBPS, 16, 40000},
    {IBV_RATE_60_GBPS, 24, 60000},    {IBV_RATE_80_GBPS, 32, 80000},    {IBV_RATE_120_GBPS, 48, 120000},
    {IBV_RATE_14_GBPS, -1, 14062},    {IBV_RATE_56_GBPS, -1, 56250},    {IBV_RATE_112_GBPS, -1, 112500},
    {IBV_RATE_168_GBPS, -1, 168750},  {IBV_RATE_25_GBPS, -1, 25781},    {IBV_RATE_100_GBPS, -1, 103125},
    {IBV_RATE_200_GBPS, -1, 206250},  {IBV_RATE_300_GBPS, -1, 309375},  {IBV_RATE_28_GBPS, -1, 28125},
    {IBV_RATE_50_GBPS, -1, 53125},    {IBV_RATE_400_GBPS, -1, 425000},  {IBV_RATE_600_GBPS, -1, 637500},
    {IBV_RATE_800_GBPS, -1, 850000},  {IBV_RATE_1200_GBPS, -1, 1275000}};
}  // namespace

VL_EXPORT int ibv_rate_to_mult(ibv_rate r) {
  for (auto& x : kRates) if (x.r == r) return x.mult;
  return -1;
}
VL_EXPORT ibv_rate mult_to_ibv_rate(int m) {
  for (auto& x : kRates) if (x.mult == m) return x.r;
  return IBV_RATE_MAX;
}
VL_EXPORT int ibv_rate_to_mbps(ibv_rate r) {
  for (auto& x : kRates) if (x.r == r) return x.mbps;
  return -1;
}
VL_EXPORT ibv_rate mbps_to_ibv_rate(int mbps) {
  for (auto& x : kRates) if (x.mbps == mbps) return x.r;
  return IBV_RATE_MAX;
}

// ---- fork: the device is in the process (device.cpp, ibv_is_fork_initialized), nothing to protect
VL_EXPORT int ibv_dontfork_range(void* base, size_t size) { return 0; }
VL_EXPORT int ibv_dofork_range(void* base, size_t size) { return 0; }

// ---- not built in the device
VL_EXPORT int ibv_attach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) { return EOPNOTSUPP; }
VL_EXPORT int ibv_detach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) { return EOPNOTSUPP; }
VL_EXPORT ibv_context* ibv_import_device(int cmd_fd) { errno = EOPNOTSUPP; return nullptr; }
VL_EXPORT ibv_pd* ibv_import_pd(ibv_context* c, uint32_t h) { errno = EOPNOTSUPP; return nullptr; }
VL_EXPORT void ibv_unimport_pd(ibv_pd* pd) {}
VL_EXPORT ibv_mr* ibv_import_mr(ibv_pd* pd, uint32_t h) { errno = EOPNOTSUPP; return nullptr; }
VL_EXPORT void ibv_unimport_mr(ibv_mr* mr) {}
VL_EXPORT ibv_dm* ibv_import_dm(ibv_context* c, uint32_t h) { errno = EOPNOTSUPP; return nullptr; }
VL_EXPORT void ibv_unimport_dm(ibv_dm* dm) {}
VL_EXPORT ibv_mr* ibv_reg_dmabuf_mr(ibv_pd* pd, uint64_t off, size_t len, uint64_t iova, int fd, int access) {
  errno = EOPNOTSUPP;
  return nullptr;
}
VL_EXPORT int ibv_set_ece(ibv_qp* qp, ibv_ece* ece) { return EOPNOTSUPP; }
VL_EXPORT int ibv_query_ece(ibv_qp* qp, ibv_ece* ece) { return EOPNOTSUPP; }
// The responder places a message's bytes in order and before its completion (resp.cpp): data in order, as rxe.
VL_EXPORT int ibv_query_qp_data_in_order(ibv_qp* qp, ibv_wr_opcode op, uint32_t flags) { return flags ? 0 : 1; }
VL_EXPORT int ibv_resolve_eth_l2_from_gid(ibv_context* c, ibv_ah_attr* a, uint8_t eth_mac[6], uint16_t* vid) {
  return EOPNOTSUPP;
}

// ---- kernel ABI copies (infiniband/marshall.h): no kernel, nothing to copy to or from
VL_EXPORT void ibv_copy_ah_attr_from_kern(void* dst, void* src) {}
VL_EXPORT void ibv_copy_qp_attr_from_kern(void* dst, void* src) {}
VL_EXPORT void ibv_copy_path_rec_from_kern(void* dst, void* src) {}
VL_EXPORT void ibv_copy_path_rec_to_kern(void* dst, void* src) {}

// Old provider registration (IBVERBS_1.1): providers are not loaded by this library.
VL_EXPORT void ibv_register_driver(const char* name, void* init_func) {}
