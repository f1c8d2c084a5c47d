// rdma-core's enum values, checked at compile time: every name and value of vl/names.h's rdma-core tables must be
// the one <infiniband/verbs.h> (libibverbs-dev) gives. A table entry without a check here fails the size assert.
// Kernel-only values (REG_MR) are not in verbs.h: include/rdma/ib_verbs.h has IB_WR_REG_MR = 0x20 and
// IB_WC_REG_MR = 8 (checked by value below); IB_WR_RDMA_READ_WITH_INV is checked against the uapi header.
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include <iterator>

#include <gtest/gtest.h>

#include "vl/names.h"

// the table names `value` as `name` (the stringized verbs.h identifier)
#define VL_SAME(table, id) static_assert(vl::names_value(vl::table, id, #id), #table ": " #id " differs from infiniband/verbs.h")

// kWcStatusNames: 22 from verbs.h
VL_SAME(kWcStatusNames, IBV_WC_SUCCESS);
VL_SAME(kWcStatusNames, IBV_WC_LOC_LEN_ERR);
VL_SAME(kWcStatusNames, IBV_WC_LOC_QP_OP_ERR);
VL_SAME(kWcStatusNames, IBV_WC_LOC_EEC_OP_ERR);
VL_SAME(kWcStatusNames, IBV_WC_LOC_PROT_ERR);
VL_SAME(kWcStatusNames, IBV_WC_WR_FLUSH_ERR);
VL_SAME(kWcStatusNames, IBV_WC_MW_BIND_ERR);
VL_SAME(kWcStatusNames, IBV_WC_BAD_RESP_ERR);
VL_SAME(kWcStatusNames, IBV_WC_LOC_ACCESS_ERR);
VL_SAME(kWcStatusNames, IBV_WC_REM_INV_REQ_ERR);
VL_SAME(kWcStatusNames, IBV_WC_REM_ACCESS_ERR);
VL_SAME(kWcStatusNames, IBV_WC_REM_OP_ERR);
VL_SAME(kWcStatusNames, IBV_WC_RETRY_EXC_ERR);
VL_SAME(kWcStatusNames, IBV_WC_RNR_RETRY_EXC_ERR);
VL_SAME(kWcStatusNames, IBV_WC_LOC_RDD_VIOL_ERR);
VL_SAME(kWcStatusNames, IBV_WC_REM_INV_RD_REQ_ERR);
VL_SAME(kWcStatusNames, IBV_WC_REM_ABORT_ERR);
VL_SAME(kWcStatusNames, IBV_WC_INV_EECN_ERR);
VL_SAME(kWcStatusNames, IBV_WC_INV_EEC_STATE_ERR);
VL_SAME(kWcStatusNames, IBV_WC_FATAL_ERR);
VL_SAME(kWcStatusNames, IBV_WC_RESP_TIMEOUT_ERR);
VL_SAME(kWcStatusNames, IBV_WC_GENERAL_ERR);
static_assert(std::size(vl::kWcStatusNames) == 22, "kWcStatusNames: an entry without a check here");

// kWcOpcodeNames: 10 from verbs.h, 1 kernel-only (below)
VL_SAME(kWcOpcodeNames, IBV_WC_SEND);
VL_SAME(kWcOpcodeNames, IBV_WC_RDMA_WRITE);
VL_SAME(kWcOpcodeNames, IBV_WC_RDMA_READ);
VL_SAME(kWcOpcodeNames, IBV_WC_COMP_SWAP);
VL_SAME(kWcOpcodeNames, IBV_WC_FETCH_ADD);
VL_SAME(kWcOpcodeNames, IBV_WC_BIND_MW);
VL_SAME(kWcOpcodeNames, IBV_WC_LOCAL_INV);
VL_SAME(kWcOpcodeNames, IBV_WC_RECV);
VL_SAME(kWcOpcodeNames, IBV_WC_RECV_RDMA_WITH_IMM);
VL_SAME(kWcOpcodeNames, IBV_WC_DRIVER1);
static_assert(std::size(vl::kWcOpcodeNames) == 11, "kWcOpcodeNames: an entry without a check here");

// kWcFlagNames: 4 from verbs.h
VL_SAME(kWcFlagNames, IBV_WC_GRH);
VL_SAME(kWcFlagNames, IBV_WC_WITH_IMM);
VL_SAME(kWcFlagNames, IBV_WC_IP_CSUM_OK);
VL_SAME(kWcFlagNames, IBV_WC_WITH_INV);
static_assert(std::size(vl::kWcFlagNames) == 4, "kWcFlagNames: an entry without a check here");

// kWrOpcodeNames: 10 from verbs.h, 2 kernel-only (below)
VL_SAME(kWrOpcodeNames, IBV_WR_RDMA_WRITE);
VL_SAME(kWrOpcodeNames, IBV_WR_RDMA_WRITE_WITH_IMM);
VL_SAME(kWrOpcodeNames, IBV_WR_SEND);
VL_SAME(kWrOpcodeNames, IBV_WR_SEND_WITH_IMM);
VL_SAME(kWrOpcodeNames, IBV_WR_RDMA_READ);
VL_SAME(kWrOpcodeNames, IBV_WR_ATOMIC_CMP_AND_SWP);
VL_SAME(kWrOpcodeNames, IBV_WR_ATOMIC_FETCH_AND_ADD);
VL_SAME(kWrOpcodeNames, IBV_WR_LOCAL_INV);
VL_SAME(kWrOpcodeNames, IBV_WR_BIND_MW);
VL_SAME(kWrOpcodeNames, IBV_WR_SEND_WITH_INV);
static_assert(std::size(vl::kWrOpcodeNames) == 12, "kWrOpcodeNames: an entry without a check here");

// kSendFlagNames: 4 from verbs.h
VL_SAME(kSendFlagNames, IBV_SEND_FENCE);
VL_SAME(kSendFlagNames, IBV_SEND_SIGNALED);
VL_SAME(kSendFlagNames, IBV_SEND_SOLICITED);
VL_SAME(kSendFlagNames, IBV_SEND_INLINE);
static_assert(std::size(vl::kSendFlagNames) == 4, "kSendFlagNames: an entry without a check here");

// kAccessNames: 6 from verbs.h
VL_SAME(kAccessNames, IBV_ACCESS_LOCAL_WRITE);
VL_SAME(kAccessNames, IBV_ACCESS_REMOTE_WRITE);
VL_SAME(kAccessNames, IBV_ACCESS_REMOTE_READ);
VL_SAME(kAccessNames, IBV_ACCESS_REMOTE_ATOMIC);
VL_SAME(kAccessNames, IBV_ACCESS_MW_BIND);
VL_SAME(kAccessNames, IBV_ACCESS_ZERO_BASED);
static_assert(std::size(vl::kAccessNames) == 6, "kAccessNames: an entry without a check here");

// kQpStateNames: 7 from verbs.h
VL_SAME(kQpStateNames, IBV_QPS_RESET);
VL_SAME(kQpStateNames, IBV_QPS_INIT);
VL_SAME(kQpStateNames, IBV_QPS_RTR);
VL_SAME(kQpStateNames, IBV_QPS_RTS);
VL_SAME(kQpStateNames, IBV_QPS_SQD);
VL_SAME(kQpStateNames, IBV_QPS_SQE);
VL_SAME(kQpStateNames, IBV_QPS_ERR);
static_assert(std::size(vl::kQpStateNames) == 7, "kQpStateNames: an entry without a check here");

// kQpTypeNames: 3 from verbs.h
VL_SAME(kQpTypeNames, IBV_QPT_RC);
VL_SAME(kQpTypeNames, IBV_QPT_UC);
VL_SAME(kQpTypeNames, IBV_QPT_UD);
static_assert(std::size(vl::kQpTypeNames) == 3, "kQpTypeNames: an entry without a check here");

// kQpAttrMaskNames: 21 from verbs.h
VL_SAME(kQpAttrMaskNames, IBV_QP_STATE);
VL_SAME(kQpAttrMaskNames, IBV_QP_CUR_STATE);
VL_SAME(kQpAttrMaskNames, IBV_QP_EN_SQD_ASYNC_NOTIFY);
VL_SAME(kQpAttrMaskNames, IBV_QP_ACCESS_FLAGS);
VL_SAME(kQpAttrMaskNames, IBV_QP_PKEY_INDEX);
VL_SAME(kQpAttrMaskNames, IBV_QP_PORT);
VL_SAME(kQpAttrMaskNames, IBV_QP_QKEY);
VL_SAME(kQpAttrMaskNames, IBV_QP_AV);
VL_SAME(kQpAttrMaskNames, IBV_QP_PATH_MTU);
VL_SAME(kQpAttrMaskNames, IBV_QP_TIMEOUT);
VL_SAME(kQpAttrMaskNames, IBV_QP_RETRY_CNT);
VL_SAME(kQpAttrMaskNames, IBV_QP_RNR_RETRY);
VL_SAME(kQpAttrMaskNames, IBV_QP_RQ_PSN);
VL_SAME(kQpAttrMaskNames, IBV_QP_MAX_QP_RD_ATOMIC);
VL_SAME(kQpAttrMaskNames, IBV_QP_ALT_PATH);
VL_SAME(kQpAttrMaskNames, IBV_QP_MIN_RNR_TIMER);
VL_SAME(kQpAttrMaskNames, IBV_QP_SQ_PSN);
VL_SAME(kQpAttrMaskNames, IBV_QP_MAX_DEST_RD_ATOMIC);
VL_SAME(kQpAttrMaskNames, IBV_QP_PATH_MIG_STATE);
VL_SAME(kQpAttrMaskNames, IBV_QP_CAP);
VL_SAME(kQpAttrMaskNames, IBV_QP_DEST_QPN);
static_assert(std::size(vl::kQpAttrMaskNames) == 21, "kQpAttrMaskNames: an entry without a check here");

// kEventTypeNames: 14 from verbs.h
VL_SAME(kEventTypeNames, IBV_EVENT_CQ_ERR);
VL_SAME(kEventTypeNames, IBV_EVENT_QP_FATAL);
VL_SAME(kEventTypeNames, IBV_EVENT_QP_REQ_ERR);
VL_SAME(kEventTypeNames, IBV_EVENT_QP_ACCESS_ERR);
VL_SAME(kEventTypeNames, IBV_EVENT_COMM_EST);
VL_SAME(kEventTypeNames, IBV_EVENT_SQ_DRAINED);
VL_SAME(kEventTypeNames, IBV_EVENT_PATH_MIG);
VL_SAME(kEventTypeNames, IBV_EVENT_PATH_MIG_ERR);
VL_SAME(kEventTypeNames, IBV_EVENT_DEVICE_FATAL);
VL_SAME(kEventTypeNames, IBV_EVENT_PORT_ACTIVE);
VL_SAME(kEventTypeNames, IBV_EVENT_PORT_ERR);
VL_SAME(kEventTypeNames, IBV_EVENT_SRQ_ERR);
VL_SAME(kEventTypeNames, IBV_EVENT_SRQ_LIMIT_REACHED);
VL_SAME(kEventTypeNames, IBV_EVENT_QP_LAST_WQE_REACHED);
static_assert(std::size(vl::kEventTypeNames) == 14, "kEventTypeNames: an entry without a check here");

// kMwTypeNames: 2 from verbs.h
VL_SAME(kMwTypeNames, IBV_MW_TYPE_1);
VL_SAME(kMwTypeNames, IBV_MW_TYPE_2);
static_assert(std::size(vl::kMwTypeNames) == 2, "kMwTypeNames: an entry without a check here");

// kMtuNames: 5 from verbs.h
VL_SAME(kMtuNames, IBV_MTU_256);
VL_SAME(kMtuNames, IBV_MTU_512);
VL_SAME(kMtuNames, IBV_MTU_1024);
VL_SAME(kMtuNames, IBV_MTU_2048);
VL_SAME(kMtuNames, IBV_MTU_4096);
static_assert(std::size(vl::kMtuNames) == 5, "kMtuNames: an entry without a check here");

// kDeviceCapNames: 24 from verbs.h
VL_SAME(kDeviceCapNames, IBV_DEVICE_RESIZE_MAX_WR);
VL_SAME(kDeviceCapNames, IBV_DEVICE_BAD_PKEY_CNTR);
VL_SAME(kDeviceCapNames, IBV_DEVICE_BAD_QKEY_CNTR);
VL_SAME(kDeviceCapNames, IBV_DEVICE_RAW_MULTI);
VL_SAME(kDeviceCapNames, IBV_DEVICE_AUTO_PATH_MIG);
VL_SAME(kDeviceCapNames, IBV_DEVICE_CHANGE_PHY_PORT);
VL_SAME(kDeviceCapNames, IBV_DEVICE_UD_AV_PORT_ENFORCE);
VL_SAME(kDeviceCapNames, IBV_DEVICE_CURR_QP_STATE_MOD);
VL_SAME(kDeviceCapNames, IBV_DEVICE_SHUTDOWN_PORT);
VL_SAME(kDeviceCapNames, IBV_DEVICE_INIT_TYPE);
VL_SAME(kDeviceCapNames, IBV_DEVICE_PORT_ACTIVE_EVENT);
VL_SAME(kDeviceCapNames, IBV_DEVICE_SYS_IMAGE_GUID);
VL_SAME(kDeviceCapNames, IBV_DEVICE_RC_RNR_NAK_GEN);
VL_SAME(kDeviceCapNames, IBV_DEVICE_SRQ_RESIZE);
VL_SAME(kDeviceCapNames, IBV_DEVICE_N_NOTIFY_CQ);
VL_SAME(kDeviceCapNames, IBV_DEVICE_MEM_WINDOW);
VL_SAME(kDeviceCapNames, IBV_DEVICE_UD_IP_CSUM);
VL_SAME(kDeviceCapNames, IBV_DEVICE_XRC);
VL_SAME(kDeviceCapNames, IBV_DEVICE_MEM_MGT_EXTENSIONS);
VL_SAME(kDeviceCapNames, IBV_DEVICE_MEM_WINDOW_TYPE_2A);
VL_SAME(kDeviceCapNames, IBV_DEVICE_MEM_WINDOW_TYPE_2B);
VL_SAME(kDeviceCapNames, IBV_DEVICE_RC_IP_CSUM);
VL_SAME(kDeviceCapNames, IBV_DEVICE_RAW_IP_CSUM);
VL_SAME(kDeviceCapNames, IBV_DEVICE_MANAGED_FLOW_STEERING);
static_assert(std::size(vl::kDeviceCapNames) == 24, "kDeviceCapNames: an entry without a check here");

// kAtomicCapNames: 3 from verbs.h
VL_SAME(kAtomicCapNames, IBV_ATOMIC_NONE);
VL_SAME(kAtomicCapNames, IBV_ATOMIC_HCA);
VL_SAME(kAtomicCapNames, IBV_ATOMIC_GLOB);
static_assert(std::size(vl::kAtomicCapNames) == 3, "kAtomicCapNames: an entry without a check here");

static_assert(vl::names_value(vl::kWrOpcodeNames, 0x20, "IB_WR_REG_MR"), "IB_WR_REG_MR is 0x20 (include/rdma/ib_verbs.h)");
// the kernel's IB_WR_RDMA_READ_WITH_INV is IB_UVERBS_WR_RDMA_READ_WITH_INV (uapi rdma/ib_user_verbs.h, shipped by rdma-core)
static_assert(vl::names_value(vl::kWrOpcodeNames, IB_UVERBS_WR_RDMA_READ_WITH_INV, "IB_WR_RDMA_READ_WITH_INV"),
              "IB_WR_RDMA_READ_WITH_INV differs from rdma/ib_user_verbs.h");
static_assert(vl::names_value(vl::kWcOpcodeNames, 8, "IB_WC_REG_MR"), "IB_WC_REG_MR is 8 (include/rdma/ib_verbs.h)");

// The device's own event enums: rxe's key state values (rxe_verbs.h: enum rxe_mr_state INVALID, FREE, VALID).
static_assert(static_cast<int>(vl::KeyState::Invalid) == 0 && static_cast<int>(vl::KeyState::Free) == 1 &&
              static_cast<int>(vl::KeyState::Valid) == 2);

// A name lookup misses cleanly.
TEST(EnumNames, LookupAndMiss) {
  EXPECT_STREQ(vl::name_of(vl::kWcStatusNames, IBV_WC_REM_ACCESS_ERR), "IBV_WC_REM_ACCESS_ERR");
  EXPECT_EQ(vl::name_of(vl::kWcStatusNames, 999), nullptr);
  EXPECT_FALSE(vl::names_value(vl::kQpStateNames, IBV_QPS_RTS, "IBV_QPS_RTR"));
}
