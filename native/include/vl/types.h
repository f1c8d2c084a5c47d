// Verbs Lab software RDMA device: public value types.
// Every enum below uses rdma-core's names and numeric values (infiniband/verbs.h, rdma-core v44+);
// kernel-only items (REG_MR) use the kernel's include/rdma/ib_verbs.h values and are marked so.
// No Node dependency anywhere under native/include or native/src.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vl {

using Handle = uint32_t;            // session-wide object handle (0 = none)

// ---- errno-style results of verbs (0 = ok; EINVAL, ENOMEM, EBUSY, EOPNOTSUPP, EPERM, ENOENT, EEXIST, EAGAIN ...)
struct Status {
  int err = 0;
  std::string msg;                  // human explanation naming the offending field/rule; empty when ok
  bool ok() const { return err == 0; }
};
template <class T> struct Result : Status {
  T value{};
};

// ---- enum ibv_wc_status
enum WcStatus : uint32_t {
  WC_SUCCESS = 0, WC_LOC_LEN_ERR = 1, WC_LOC_QP_OP_ERR = 2, WC_LOC_EEC_OP_ERR = 3, WC_LOC_PROT_ERR = 4,
  WC_WR_FLUSH_ERR = 5, WC_MW_BIND_ERR = 6, WC_BAD_RESP_ERR = 7, WC_LOC_ACCESS_ERR = 8, WC_REM_INV_REQ_ERR = 9,
  WC_REM_ACCESS_ERR = 10, WC_REM_OP_ERR = 11, WC_RETRY_EXC_ERR = 12, WC_RNR_RETRY_EXC_ERR = 13,
  WC_LOC_RDD_VIOL_ERR = 14, WC_REM_INV_RD_REQ_ERR = 15, WC_REM_ABORT_ERR = 16, WC_INV_EECN_ERR = 17,
  WC_INV_EEC_STATE_ERR = 18, WC_FATAL_ERR = 19, WC_RESP_TIMEOUT_ERR = 20, WC_GENERAL_ERR = 21,
};
// ---- enum ibv_wc_opcode (REG_MR: kernel IB_WC_REG_MR = 8, no libibverbs equivalent)
enum WcOpcode : uint32_t {
  WC_SEND = 0, WC_RDMA_WRITE = 1, WC_RDMA_READ = 2, WC_COMP_SWAP = 3, WC_FETCH_ADD = 4, WC_BIND_MW = 5,
  WC_LOCAL_INV = 6, WC_REG_MR = 8, WC_RECV = 128, WC_RECV_RDMA_WITH_IMM = 129, WC_DRIVER1 = 135,
};
// ---- enum ibv_wc_flags
enum WcFlags : uint32_t { WC_GRH = 1 << 0, WC_WITH_IMM = 1 << 1, WC_IP_CSUM_OK = 1 << 2, WC_WITH_INV = 1 << 3 };
// ---- enum ibv_wr_opcode (REG_MR: kernel IB_WR_REG_MR = 0x20, kernel-only; RDMA_READ_WITH_INV: kernel
// IB_WR_RDMA_READ_WITH_INV = IB_UVERBS_WR_RDMA_READ_WITH_INV = 11 (rdma/ib_user_verbs.h), iWARP only; rdma-core has
// no IBV_WR_ name for it, and its value 11 is IBV_WR_DRIVER1 there)
enum WrOpcode : uint32_t {
  WR_RDMA_WRITE = 0, WR_RDMA_WRITE_WITH_IMM = 1, WR_SEND = 2, WR_SEND_WITH_IMM = 3, WR_RDMA_READ = 4,
  WR_ATOMIC_CMP_AND_SWP = 5, WR_ATOMIC_FETCH_AND_ADD = 6, WR_LOCAL_INV = 7, WR_BIND_MW = 8,
  WR_SEND_WITH_INV = 9, WR_RDMA_READ_WITH_INV = 11, WR_REG_MR = 0x20,
};
// ---- enum ibv_send_flags
enum SendFlags : uint32_t { SEND_FENCE = 1, SEND_SIGNALED = 2, SEND_SOLICITED = 4, SEND_INLINE = 8 };
// ---- enum ibv_access_flags
enum Access : uint32_t {
  ACCESS_LOCAL_WRITE = 1, ACCESS_REMOTE_WRITE = 2, ACCESS_REMOTE_READ = 4, ACCESS_REMOTE_ATOMIC = 8,
  ACCESS_MW_BIND = 16, ACCESS_ZERO_BASED = 32,
};
// ---- enum ibv_qp_state / ibv_qp_type
enum QpState : uint32_t { QPS_RESET = 0, QPS_INIT = 1, QPS_RTR = 2, QPS_RTS = 3, QPS_SQD = 4, QPS_SQE = 5, QPS_ERR = 6 };
enum QpType : uint32_t { QPT_RC = 2, QPT_UC = 3, QPT_UD = 4 };
// ---- enum ibv_qp_attr_mask
enum QpAttrMask : uint32_t {
  QP_STATE = 1, QP_CUR_STATE = 1 << 1, QP_EN_SQD_ASYNC_NOTIFY = 1 << 2, QP_ACCESS_FLAGS = 1 << 3,
  QP_PKEY_INDEX = 1 << 4, QP_PORT = 1 << 5, QP_QKEY = 1 << 6, QP_AV = 1 << 7, QP_PATH_MTU = 1 << 8,
  QP_TIMEOUT = 1 << 9, QP_RETRY_CNT = 1 << 10, QP_RNR_RETRY = 1 << 11, QP_RQ_PSN = 1 << 12,
  QP_MAX_QP_RD_ATOMIC = 1 << 13, QP_ALT_PATH = 1 << 14, QP_MIN_RNR_TIMER = 1 << 15, QP_SQ_PSN = 1 << 16,
  QP_MAX_DEST_RD_ATOMIC = 1 << 17, QP_PATH_MIG_STATE = 1 << 18, QP_CAP = 1 << 19, QP_DEST_QPN = 1 << 20,
};
// ---- enum ibv_event_type
enum AsyncEventType : uint32_t {
  EVENT_CQ_ERR = 0, EVENT_QP_FATAL = 1, EVENT_QP_REQ_ERR = 2, EVENT_QP_ACCESS_ERR = 3, EVENT_COMM_EST = 4,
  EVENT_SQ_DRAINED = 5, EVENT_PATH_MIG = 6, EVENT_PATH_MIG_ERR = 7, EVENT_DEVICE_FATAL = 8,
  EVENT_PORT_ACTIVE = 9, EVENT_PORT_ERR = 10, EVENT_SRQ_ERR = 14, EVENT_SRQ_LIMIT_REACHED = 15,
  EVENT_QP_LAST_WQE_REACHED = 16,
};
// ---- enum ibv_mw_type
enum MwType : uint32_t { MW_TYPE_1 = 1, MW_TYPE_2 = 2 };
// ---- enum ibv_mtu
enum Mtu : uint32_t { MTU_256 = 1, MTU_512 = 2, MTU_1024 = 3, MTU_2048 = 4, MTU_4096 = 5 };
inline uint32_t mtu_bytes(uint32_t m) { return m >= 1 && m <= 5 ? 128u << m : 0; }
// ---- enum ibv_device_cap_flags (subset used by profiles)
enum DeviceCap : uint64_t {
  DEVICE_RESIZE_MAX_WR = 1, DEVICE_BAD_PKEY_CNTR = 1 << 1, DEVICE_BAD_QKEY_CNTR = 1 << 2,
  DEVICE_RAW_MULTI = 1 << 3, DEVICE_AUTO_PATH_MIG = 1 << 4, DEVICE_CHANGE_PHY_PORT = 1 << 5,
  DEVICE_UD_AV_PORT_ENFORCE = 1 << 6, DEVICE_CURR_QP_STATE_MOD = 1 << 7, DEVICE_SHUTDOWN_PORT = 1 << 8,
  DEVICE_INIT_TYPE = 1 << 9, DEVICE_PORT_ACTIVE_EVENT = 1 << 10, DEVICE_SYS_IMAGE_GUID = 1 << 11,
  DEVICE_RC_RNR_NAK_GEN = 1 << 12, DEVICE_SRQ_RESIZE = 1 << 13, DEVICE_N_NOTIFY_CQ = 1 << 14,
  DEVICE_MEM_WINDOW = 1 << 17, DEVICE_UD_IP_CSUM = 1 << 18, DEVICE_XRC = 1 << 20,
  DEVICE_MEM_MGT_EXTENSIONS = 1 << 21, DEVICE_MEM_WINDOW_TYPE_2A = 1 << 23, DEVICE_MEM_WINDOW_TYPE_2B = 1 << 24,
  DEVICE_RC_IP_CSUM = 1 << 25, DEVICE_RAW_IP_CSUM = 1 << 26, DEVICE_MANAGED_FLOW_STEERING = 1 << 29,
};
// ---- enum ibv_atomic_cap
enum AtomicCap : uint32_t { ATOMIC_NONE = 0, ATOMIC_HCA = 1, ATOMIC_GLOB = 2 };

}  // namespace vl
