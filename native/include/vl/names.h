// Verbs Lab: the names of every enum the device publishes, one table per enum (rxe style: the enum in types.h /
// session.h, its names here, explicit values in both). rdma-core enums carry rdma-core's spelling
// (infiniband/verbs.h; kernel-only REG_MR values from include/rdma/ib_verbs.h); the device's own enums (event
// kinds, key states, change reasons, timer reasons, fault kinds) carry the names the protocol uses.
//   - native/tests/verbs_h_test.cpp checks, at compile time, every rdma-core name and value here against
//     <infiniband/verbs.h> (libibverbs-dev);
//   - native/tools/vl_tables.cpp prints all of kEnumTables as JSON and app/protocol/tables.test.ts checks that
//     app/protocol/enums.ts (and the frame layout's kind tables) say the same.
// No Node dependency.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "vl/nvmf.h"
#include "vl/session.h"
#include "vl/types.h"

namespace vl {

struct EnumName {
  uint64_t value;
  const char* name;
};

// ---- rdma-core enums (types.h)
inline constexpr EnumName kWcStatusNames[] = {
    {WC_SUCCESS, "IBV_WC_SUCCESS"}, {WC_LOC_LEN_ERR, "IBV_WC_LOC_LEN_ERR"}, {WC_LOC_QP_OP_ERR, "IBV_WC_LOC_QP_OP_ERR"},
    {WC_LOC_EEC_OP_ERR, "IBV_WC_LOC_EEC_OP_ERR"}, {WC_LOC_PROT_ERR, "IBV_WC_LOC_PROT_ERR"},
    {WC_WR_FLUSH_ERR, "IBV_WC_WR_FLUSH_ERR"}, {WC_MW_BIND_ERR, "IBV_WC_MW_BIND_ERR"},
    {WC_BAD_RESP_ERR, "IBV_WC_BAD_RESP_ERR"}, {WC_LOC_ACCESS_ERR, "IBV_WC_LOC_ACCESS_ERR"},
    {WC_REM_INV_REQ_ERR, "IBV_WC_REM_INV_REQ_ERR"}, {WC_REM_ACCESS_ERR, "IBV_WC_REM_ACCESS_ERR"},
    {WC_REM_OP_ERR, "IBV_WC_REM_OP_ERR"}, {WC_RETRY_EXC_ERR, "IBV_WC_RETRY_EXC_ERR"},
    {WC_RNR_RETRY_EXC_ERR, "IBV_WC_RNR_RETRY_EXC_ERR"}, {WC_LOC_RDD_VIOL_ERR, "IBV_WC_LOC_RDD_VIOL_ERR"},
    {WC_REM_INV_RD_REQ_ERR, "IBV_WC_REM_INV_RD_REQ_ERR"}, {WC_REM_ABORT_ERR, "IBV_WC_REM_ABORT_ERR"},
    {WC_INV_EECN_ERR, "IBV_WC_INV_EECN_ERR"}, {WC_INV_EEC_STATE_ERR, "IBV_WC_INV_EEC_STATE_ERR"},
    {WC_FATAL_ERR, "IBV_WC_FATAL_ERR"}, {WC_RESP_TIMEOUT_ERR, "IBV_WC_RESP_TIMEOUT_ERR"},
    {WC_GENERAL_ERR, "IBV_WC_GENERAL_ERR"},
};
inline constexpr EnumName kWcOpcodeNames[] = {
    {WC_SEND, "IBV_WC_SEND"}, {WC_RDMA_WRITE, "IBV_WC_RDMA_WRITE"}, {WC_RDMA_READ, "IBV_WC_RDMA_READ"},
    {WC_COMP_SWAP, "IBV_WC_COMP_SWAP"}, {WC_FETCH_ADD, "IBV_WC_FETCH_ADD"}, {WC_BIND_MW, "IBV_WC_BIND_MW"},
    {WC_LOCAL_INV, "IBV_WC_LOCAL_INV"}, {WC_REG_MR, "IB_WC_REG_MR"}, {WC_RECV, "IBV_WC_RECV"},
    {WC_RECV_RDMA_WITH_IMM, "IBV_WC_RECV_RDMA_WITH_IMM"}, {WC_DRIVER1, "IBV_WC_DRIVER1"},
};
inline constexpr EnumName kWcFlagNames[] = {
    {WC_GRH, "IBV_WC_GRH"}, {WC_WITH_IMM, "IBV_WC_WITH_IMM"}, {WC_IP_CSUM_OK, "IBV_WC_IP_CSUM_OK"},
    {WC_WITH_INV, "IBV_WC_WITH_INV"},
};
inline constexpr EnumName kWrOpcodeNames[] = {
    {WR_RDMA_WRITE, "IBV_WR_RDMA_WRITE"}, {WR_RDMA_WRITE_WITH_IMM, "IBV_WR_RDMA_WRITE_WITH_IMM"},
    {WR_SEND, "IBV_WR_SEND"}, {WR_SEND_WITH_IMM, "IBV_WR_SEND_WITH_IMM"}, {WR_RDMA_READ, "IBV_WR_RDMA_READ"},
    {WR_ATOMIC_CMP_AND_SWP, "IBV_WR_ATOMIC_CMP_AND_SWP"}, {WR_ATOMIC_FETCH_AND_ADD, "IBV_WR_ATOMIC_FETCH_AND_ADD"},
    {WR_LOCAL_INV, "IBV_WR_LOCAL_INV"}, {WR_BIND_MW, "IBV_WR_BIND_MW"}, {WR_SEND_WITH_INV, "IBV_WR_SEND_WITH_INV"},
    {WR_RDMA_READ_WITH_INV, "IB_WR_RDMA_READ_WITH_INV"}, {WR_REG_MR, "IB_WR_REG_MR"},
};
inline constexpr EnumName kSendFlagNames[] = {
    {SEND_FENCE, "IBV_SEND_FENCE"}, {SEND_SIGNALED, "IBV_SEND_SIGNALED"}, {SEND_SOLICITED, "IBV_SEND_SOLICITED"},
    {SEND_INLINE, "IBV_SEND_INLINE"},
};
inline constexpr EnumName kAccessNames[] = {
    {ACCESS_LOCAL_WRITE, "IBV_ACCESS_LOCAL_WRITE"}, {ACCESS_REMOTE_WRITE, "IBV_ACCESS_REMOTE_WRITE"},
    {ACCESS_REMOTE_READ, "IBV_ACCESS_REMOTE_READ"}, {ACCESS_REMOTE_ATOMIC, "IBV_ACCESS_REMOTE_ATOMIC"},
    {ACCESS_MW_BIND, "IBV_ACCESS_MW_BIND"}, {ACCESS_ZERO_BASED, "IBV_ACCESS_ZERO_BASED"},
};
inline constexpr EnumName kQpStateNames[] = {
    {QPS_RESET, "IBV_QPS_RESET"}, {QPS_INIT, "IBV_QPS_INIT"}, {QPS_RTR, "IBV_QPS_RTR"}, {QPS_RTS, "IBV_QPS_RTS"},
    {QPS_SQD, "IBV_QPS_SQD"}, {QPS_SQE, "IBV_QPS_SQE"}, {QPS_ERR, "IBV_QPS_ERR"},
};
inline constexpr EnumName kQpTypeNames[] = {{QPT_RC, "IBV_QPT_RC"}, {QPT_UC, "IBV_QPT_UC"}, {QPT_UD, "IBV_QPT_UD"}};
inline constexpr EnumName kQpAttrMaskNames[] = {
    {QP_STATE, "IBV_QP_STATE"}, {QP_CUR_STATE, "IBV_QP_CUR_STATE"}, {QP_EN_SQD_ASYNC_NOTIFY, "IBV_QP_EN_SQD_ASYNC_NOTIFY"},
    {QP_ACCESS_FLAGS, "IBV_QP_ACCESS_FLAGS"}, {QP_PKEY_INDEX, "IBV_QP_PKEY_INDEX"}, {QP_PORT, "IBV_QP_PORT"},
    {QP_QKEY, "IBV_QP_QKEY"}, {QP_AV, "IBV_QP_AV"}, {QP_PATH_MTU, "IBV_QP_PATH_MTU"}, {QP_TIMEOUT, "IBV_QP_TIMEOUT"},
    {QP_RETRY_CNT, "IBV_QP_RETRY_CNT"}, {QP_RNR_RETRY, "IBV_QP_RNR_RETRY"}, {QP_RQ_PSN, "IBV_QP_RQ_PSN"},
    {QP_MAX_QP_RD_ATOMIC, "IBV_QP_MAX_QP_RD_ATOMIC"}, {QP_ALT_PATH, "IBV_QP_ALT_PATH"},
    {QP_MIN_RNR_TIMER, "IBV_QP_MIN_RNR_TIMER"}, {QP_SQ_PSN, "IBV_QP_SQ_PSN"},
    {QP_MAX_DEST_RD_ATOMIC, "IBV_QP_MAX_DEST_RD_ATOMIC"}, {QP_PATH_MIG_STATE, "IBV_QP_PATH_MIG_STATE"},
    {QP_CAP, "IBV_QP_CAP"}, {QP_DEST_QPN, "IBV_QP_DEST_QPN"},
};
inline constexpr EnumName kEventTypeNames[] = {
    {EVENT_CQ_ERR, "IBV_EVENT_CQ_ERR"}, {EVENT_QP_FATAL, "IBV_EVENT_QP_FATAL"}, {EVENT_QP_REQ_ERR, "IBV_EVENT_QP_REQ_ERR"},
    {EVENT_QP_ACCESS_ERR, "IBV_EVENT_QP_ACCESS_ERR"}, {EVENT_COMM_EST, "IBV_EVENT_COMM_EST"},
    {EVENT_SQ_DRAINED, "IBV_EVENT_SQ_DRAINED"}, {EVENT_PATH_MIG, "IBV_EVENT_PATH_MIG"},
    {EVENT_PATH_MIG_ERR, "IBV_EVENT_PATH_MIG_ERR"}, {EVENT_DEVICE_FATAL, "IBV_EVENT_DEVICE_FATAL"},
    {EVENT_PORT_ACTIVE, "IBV_EVENT_PORT_ACTIVE"}, {EVENT_PORT_ERR, "IBV_EVENT_PORT_ERR"},
    {EVENT_SRQ_ERR, "IBV_EVENT_SRQ_ERR"}, {EVENT_SRQ_LIMIT_REACHED, "IBV_EVENT_SRQ_LIMIT_REACHED"},
    {EVENT_QP_LAST_WQE_REACHED, "IBV_EVENT_QP_LAST_WQE_REACHED"},
};
inline constexpr EnumName kMwTypeNames[] = {{MW_TYPE_1, "IBV_MW_TYPE_1"}, {MW_TYPE_2, "IBV_MW_TYPE_2"}};
inline constexpr EnumName kMtuNames[] = {
    {MTU_256, "IBV_MTU_256"}, {MTU_512, "IBV_MTU_512"}, {MTU_1024, "IBV_MTU_1024"}, {MTU_2048, "IBV_MTU_2048"},
    {MTU_4096, "IBV_MTU_4096"},
};
inline constexpr EnumName kDeviceCapNames[] = {
    {DEVICE_RESIZE_MAX_WR, "IBV_DEVICE_RESIZE_MAX_WR"}, {DEVICE_BAD_PKEY_CNTR, "IBV_DEVICE_BAD_PKEY_CNTR"},
    {DEVICE_BAD_QKEY_CNTR, "IBV_DEVICE_BAD_QKEY_CNTR"}, {DEVICE_RAW_MULTI, "IBV_DEVICE_RAW_MULTI"},
    {DEVICE_AUTO_PATH_MIG, "IBV_DEVICE_AUTO_PATH_MIG"}, {DEVICE_CHANGE_PHY_PORT, "IBV_DEVICE_CHANGE_PHY_PORT"},
    {DEVICE_UD_AV_PORT_ENFORCE, "IBV_DEVICE_UD_AV_PORT_ENFORCE"}, {DEVICE_CURR_QP_STATE_MOD, "IBV_DEVICE_CURR_QP_STATE_MOD"},
    {DEVICE_SHUTDOWN_PORT, "IBV_DEVICE_SHUTDOWN_PORT"}, {DEVICE_INIT_TYPE, "IBV_DEVICE_INIT_TYPE"},
    {DEVICE_PORT_ACTIVE_EVENT, "IBV_DEVICE_PORT_ACTIVE_EVENT"}, {DEVICE_SYS_IMAGE_GUID, "IBV_DEVICE_SYS_IMAGE_GUID"},
    {DEVICE_RC_RNR_NAK_GEN, "IBV_DEVICE_RC_RNR_NAK_GEN"}, {DEVICE_SRQ_RESIZE, "IBV_DEVICE_SRQ_RESIZE"},
    {DEVICE_N_NOTIFY_CQ, "IBV_DEVICE_N_NOTIFY_CQ"}, {DEVICE_MEM_WINDOW, "IBV_DEVICE_MEM_WINDOW"},
    {DEVICE_UD_IP_CSUM, "IBV_DEVICE_UD_IP_CSUM"}, {DEVICE_XRC, "IBV_DEVICE_XRC"},
    {DEVICE_MEM_MGT_EXTENSIONS, "IBV_DEVICE_MEM_MGT_EXTENSIONS"}, {DEVICE_MEM_WINDOW_TYPE_2A, "IBV_DEVICE_MEM_WINDOW_TYPE_2A"},
    {DEVICE_MEM_WINDOW_TYPE_2B, "IBV_DEVICE_MEM_WINDOW_TYPE_2B"}, {DEVICE_RC_IP_CSUM, "IBV_DEVICE_RC_IP_CSUM"},
    {DEVICE_RAW_IP_CSUM, "IBV_DEVICE_RAW_IP_CSUM"}, {DEVICE_MANAGED_FLOW_STEERING, "IBV_DEVICE_MANAGED_FLOW_STEERING"},
};
inline constexpr EnumName kAtomicCapNames[] = {
    {ATOMIC_NONE, "IBV_ATOMIC_NONE"}, {ATOMIC_HCA, "IBV_ATOMIC_HCA"}, {ATOMIC_GLOB, "IBV_ATOMIC_GLOB"},
};

// ---- the device's own enums (session.h)
inline constexpr EnumName kEventKindNames[] = {
    {uint32_t(EventKind::ObjectCreated), "ObjectCreated"}, {uint32_t(EventKind::ObjectDestroyed), "ObjectDestroyed"},
    {uint32_t(EventKind::ObjectModified), "ObjectModified"}, {uint32_t(EventKind::WqePosted), "WqePosted"},
    {uint32_t(EventKind::WqeStarted), "WqeStarted"}, {uint32_t(EventKind::WqeCompleted), "WqeCompleted"},
    {uint32_t(EventKind::PacketSent), "PacketSent"}, {uint32_t(EventKind::PacketReceived), "PacketReceived"},
    {uint32_t(EventKind::PacketDropped), "PacketDropped"}, {uint32_t(EventKind::KeyCheck), "KeyCheck"},
    {uint32_t(EventKind::Cqe), "Cqe"}, {uint32_t(EventKind::CqArmed), "CqArmed"}, {uint32_t(EventKind::CompEvent), "CompEvent"},
    {uint32_t(EventKind::AsyncEvent), "AsyncEvent"}, {uint32_t(EventKind::QpState), "QpState"},
    {uint32_t(EventKind::MemWrite), "MemWrite"}, {uint32_t(EventKind::Timer), "Timer"}, {uint32_t(EventKind::Fault), "Fault"},
    {uint32_t(EventKind::Log), "Log"}, {uint32_t(EventKind::Offload), "Offload"},
    {uint32_t(EventKind::CmState), "CmState"}, {uint32_t(EventKind::CmMad), "CmMad"},
};
// Event::obj_kind values with their one-byte id in event frames (0: none)
inline constexpr EnumName kObjKindNames[] = {
    {0, ""}, {1, "device"}, {2, "pd"}, {3, "buffer"}, {4, "mr"}, {5, "mw"}, {6, "cq"}, {7, "qp"}, {8, "srq"}, {9, "ah"},
    {10, "packet"}, {11, "session"}, {12, "cm_id"},
};
inline constexpr EnumName kKeyStateNames[] = {
    {uint32_t(KeyState::Invalid), "invalid"}, {uint32_t(KeyState::Free), "free"}, {uint32_t(KeyState::Valid), "valid"},
};
inline constexpr EnumName kChangeNames[] = {
    {uint32_t(Change::Rereg), "REREG"}, {uint32_t(Change::MapMrSg), "MAP_MR_SG"}, {uint32_t(Change::RegMrWr), "REG_MR"},
    {uint32_t(Change::LocalInv), "LOCAL_INV"}, {uint32_t(Change::RemoteInv), "REMOTE_INV"}, {uint32_t(Change::Bind), "BIND"},
    {uint32_t(Change::QpDestroyed), "QP_DESTROYED"}, {uint32_t(Change::ModifyQp), "MODIFY_QP"},
    {uint32_t(Change::ModifySrq), "MODIFY_SRQ"}, {uint32_t(Change::NetAttach), "NET_ATTACH"},
    {uint32_t(Change::Unbind), "UNBIND"},
};
inline constexpr EnumName kTimerReasonNames[] = {
    {uint32_t(TimerReason::AckTimeout), "ACK_TIMEOUT"}, {uint32_t(TimerReason::RnrWait), "RNR_WAIT"},
    {uint32_t(TimerReason::RnrExpired), "RNR_EXPIRED"}, {uint32_t(TimerReason::Retransmit), "RETRANSMIT"},
};
inline constexpr EnumName kFaultKindNames[] = {
    {uint32_t(FaultKind::Loss), "LOSS"}, {uint32_t(FaultKind::Duplicate), "DUPLICATE"},
    {uint32_t(FaultKind::Reorder), "REORDER"}, {uint32_t(FaultKind::Delay), "DELAY"},
};
inline constexpr EnumName kCmMadDirNames[] = {
    {uint32_t(CmMadDir::Sent), "SENT"}, {uint32_t(CmMadDir::Received), "RECEIVED"},
    {uint32_t(CmMadDir::Dropped), "DROPPED"}, {uint32_t(CmMadDir::Resent), "RESENT"},
};
// ---- the connection manager (vl/cm.h): the kernel's / rdma-core's names
inline constexpr EnumName kCmStateNames[] = {
    {CM_IDLE, "IB_CM_IDLE"}, {CM_LISTEN, "IB_CM_LISTEN"}, {CM_REQ_SENT, "IB_CM_REQ_SENT"},
    {CM_REQ_RCVD, "IB_CM_REQ_RCVD"}, {CM_MRA_REQ_SENT, "IB_CM_MRA_REQ_SENT"}, {CM_MRA_REQ_RCVD, "IB_CM_MRA_REQ_RCVD"},
    {CM_REP_SENT, "IB_CM_REP_SENT"}, {CM_REP_RCVD, "IB_CM_REP_RCVD"}, {CM_MRA_REP_SENT, "IB_CM_MRA_REP_SENT"},
    {CM_MRA_REP_RCVD, "IB_CM_MRA_REP_RCVD"}, {CM_ESTABLISHED, "IB_CM_ESTABLISHED"}, {CM_DREQ_SENT, "IB_CM_DREQ_SENT"},
    {CM_DREQ_RCVD, "IB_CM_DREQ_RCVD"}, {CM_TIMEWAIT, "IB_CM_TIMEWAIT"}, {CM_SIDR_REQ_SENT, "IB_CM_SIDR_REQ_SENT"},
    {CM_SIDR_REQ_RCVD, "IB_CM_SIDR_REQ_RCVD"},
};
inline constexpr EnumName kCmEventNames[] = {
    {CM_EVENT_ADDR_RESOLVED, "RDMA_CM_EVENT_ADDR_RESOLVED"}, {CM_EVENT_ADDR_ERROR, "RDMA_CM_EVENT_ADDR_ERROR"},
    {CM_EVENT_ROUTE_RESOLVED, "RDMA_CM_EVENT_ROUTE_RESOLVED"}, {CM_EVENT_ROUTE_ERROR, "RDMA_CM_EVENT_ROUTE_ERROR"},
    {CM_EVENT_CONNECT_REQUEST, "RDMA_CM_EVENT_CONNECT_REQUEST"}, {CM_EVENT_CONNECT_RESPONSE, "RDMA_CM_EVENT_CONNECT_RESPONSE"},
    {CM_EVENT_CONNECT_ERROR, "RDMA_CM_EVENT_CONNECT_ERROR"}, {CM_EVENT_UNREACHABLE, "RDMA_CM_EVENT_UNREACHABLE"},
    {CM_EVENT_REJECTED, "RDMA_CM_EVENT_REJECTED"}, {CM_EVENT_ESTABLISHED, "RDMA_CM_EVENT_ESTABLISHED"},
    {CM_EVENT_DISCONNECTED, "RDMA_CM_EVENT_DISCONNECTED"}, {CM_EVENT_DEVICE_REMOVAL, "RDMA_CM_EVENT_DEVICE_REMOVAL"},
    {CM_EVENT_MULTICAST_JOIN, "RDMA_CM_EVENT_MULTICAST_JOIN"}, {CM_EVENT_MULTICAST_ERROR, "RDMA_CM_EVENT_MULTICAST_ERROR"},
    {CM_EVENT_ADDR_CHANGE, "RDMA_CM_EVENT_ADDR_CHANGE"}, {CM_EVENT_TIMEWAIT_EXIT, "RDMA_CM_EVENT_TIMEWAIT_EXIT"},
};
inline constexpr EnumName kCmAttrNames[] = {
    {CM_ATTR_REQ, "REQ"}, {CM_ATTR_MRA, "MRA"}, {CM_ATTR_REJ, "REJ"}, {CM_ATTR_REP, "REP"}, {CM_ATTR_RTU, "RTU"},
    {CM_ATTR_DREQ, "DREQ"}, {CM_ATTR_DREP, "DREP"}, {CM_ATTR_SIDR_REQ, "SIDR_REQ"}, {CM_ATTR_SIDR_REP, "SIDR_REP"},
    {CM_ATTR_LAP, "LAP"}, {CM_ATTR_APR, "APR"},
};
inline constexpr EnumName kNvmfStepNames[] = {
    {uint32_t(NvmfStep::Recv), "RECV"}, {uint32_t(NvmfStep::Parse), "PARSE"}, {uint32_t(NvmfStep::ToSoftware), "TO_SOFTWARE"},
    {uint32_t(NvmfStep::StagingAlloc), "STAGING_ALLOC"}, {uint32_t(NvmfStep::StagingWait), "STAGING_WAIT"},
    {uint32_t(NvmfStep::RdmaRead), "RDMA_READ"}, {uint32_t(NvmfStep::RdmaReadDone), "RDMA_READ_DONE"},
    {uint32_t(NvmfStep::IcdCopy), "ICD_COPY"}, {uint32_t(NvmfStep::SqeWrite), "SQE_WRITE"},
    {uint32_t(NvmfStep::SqDoorbell), "SQ_DOORBELL"}, {uint32_t(NvmfStep::Cqe), "CQE"},
    {uint32_t(NvmfStep::CqDoorbell), "CQ_DOORBELL"}, {uint32_t(NvmfStep::RdmaWrite), "RDMA_WRITE"},
    {uint32_t(NvmfStep::SendResponse), "SEND_RESPONSE"}, {uint32_t(NvmfStep::Done), "DONE"},
    {uint32_t(NvmfStep::BeforeConnect), "BEFORE_CONNECT"}, {uint32_t(NvmfStep::RdmaError), "RDMA_ERROR"},
    {uint32_t(NvmfStep::BackendTimeout), "BACKEND_TIMEOUT"}, {uint32_t(NvmfStep::BackendPciErr), "BACKEND_PCI_ERR"},
    {uint32_t(NvmfStep::UnsupportedOp), "UNSUPPORTED_OP"},
};
inline constexpr EnumName kNvmfPassNames[] = {
    {uint32_t(NvmfPass::NotEnabled), "NOT_ENABLED"}, {uint32_t(NvmfPass::AdminOrFabrics), "ADMIN_OR_FABRICS"},
    {uint32_t(NvmfPass::OpNotOffloaded), "OP_NOT_OFFLOADED"}, {uint32_t(NvmfPass::UnknownNsid), "UNKNOWN_NSID"},
    {uint32_t(NvmfPass::TooLarge), "TOO_LARGE"}, {uint32_t(NvmfPass::SglUnsupported), "SGL_UNSUPPORTED"},
    {uint32_t(NvmfPass::BackendDown), "BACKEND_DOWN"}, {uint32_t(NvmfPass::Malformed), "MALFORMED"},
};

// Every table by the name app/protocol uses for its mirror.
struct EnumTable {
  const char* name;
  const EnumName* entries;
  size_t count;
};
template <size_t N> constexpr EnumTable table_of(const char* name, const EnumName (&t)[N]) { return {name, t, N}; }
inline constexpr EnumTable kEnumTables[] = {
    table_of("WcStatus", kWcStatusNames), table_of("WcOpcode", kWcOpcodeNames), table_of("WcFlag", kWcFlagNames),
    table_of("WrOpcode", kWrOpcodeNames), table_of("SendFlag", kSendFlagNames), table_of("Access", kAccessNames),
    table_of("QpState", kQpStateNames), table_of("QpType", kQpTypeNames), table_of("QpAttrMask", kQpAttrMaskNames),
    table_of("EventType", kEventTypeNames), table_of("MwType", kMwTypeNames), table_of("Mtu", kMtuNames),
    table_of("DeviceCap", kDeviceCapNames), table_of("AtomicCap", kAtomicCapNames),
    table_of("EventKind", kEventKindNames), table_of("ObjKind", kObjKindNames), table_of("KeyState", kKeyStateNames),
    table_of("Change", kChangeNames), table_of("TimerReason", kTimerReasonNames), table_of("FaultKind", kFaultKindNames),
    table_of("NvmfStep", kNvmfStepNames), table_of("NvmfPass", kNvmfPassNames),
    table_of("CmMadDir", kCmMadDirNames), table_of("CmState", kCmStateNames), table_of("CmEvent", kCmEventNames),
    table_of("CmAttr", kCmAttrNames),
};

// The name of `value` in a table, or nullptr (callers say what an unknown value looks like).
template <size_t N> constexpr const char* name_of(const EnumName (&t)[N], uint64_t value) {
  for (const auto& e : t) if (e.value == value) return e.name;
  return nullptr;
}
// true when the table names `value` exactly `name` (native/tests/verbs_h_test.cpp: static_assert against verbs.h)
template <size_t N> constexpr bool names_value(const EnumName (&t)[N], uint64_t value, std::string_view name) {
  for (const auto& e : t) if (e.value == value) return name == e.name;
  return false;
}

}  // namespace vl
