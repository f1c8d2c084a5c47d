// The RDMA connection manager of a software device: the Communication Manager of IBA chapter 12 (what the kernel's
// ib_cm does) plus the RDMA IP CM service of IBA Annex A11 (what the kernel's rdma_cm adds: IP addresses, port
// spaces, the IP private-data header), running on the device's QP1 (GSI). Its MADs travel as UD SENDs to the
// peer's QP1 over the device's wire (in-session between two devices of one session, or RoCEv2/UDP once the device
// is on the network), byte for byte as the Linux kernel sends them.
//
// This header is the contract between the device (native/src/cm/) and its users: the libibverbs-compatible
// library's librdmacm (native/librdmacm/), the addon, the labs. Numeric values are rdma-core's / the kernel's
// (rdma/rdma_cma.h, rdma/ib_cm.h, include/rdma/ib_cm.h); names of every enum are in the *_NAMES arrays below.
//
// Changes since the first contract (additions only; no signature changed): CmIdInfo gained peer_dev and remote_guid
// (appended); CmCounters is new; Session gained cm_set_event_hook (a callback when a CmEvent is queued, for an
// event channel's fd), cm_counters and cm_set_option (+ enum CmOption); CmIdInfo gained tos and ack_timeout.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vl/types.h"

namespace vl {

// ---- enum rdma_port_space (rdma/rdma_cma.h): the service ID of a REQ is (ps << 16) | port (IBA A11.2.1)
enum CmPortSpace : uint32_t { CM_PS_IPOIB = 0x0002, CM_PS_IB = 0x013F, CM_PS_TCP = 0x0106, CM_PS_UDP = 0x0111 };

// ---- rdma_set_option's RDMA_OPTION_ID level (rdma/rdma_cma.h): the ones Session::cm_set_option takes
enum CmOption : uint32_t { CM_OPTION_ID_TOS = 0, CM_OPTION_ID_ACK_TIMEOUT = 3 };

// ---- enum rdma_cm_event_type (rdma/rdma_cma.h), values as rdma-core
enum CmEventType : uint32_t {
  CM_EVENT_ADDR_RESOLVED = 0, CM_EVENT_ADDR_ERROR = 1, CM_EVENT_ROUTE_RESOLVED = 2, CM_EVENT_ROUTE_ERROR = 3,
  CM_EVENT_CONNECT_REQUEST = 4, CM_EVENT_CONNECT_RESPONSE = 5, CM_EVENT_CONNECT_ERROR = 6, CM_EVENT_UNREACHABLE = 7,
  CM_EVENT_REJECTED = 8, CM_EVENT_ESTABLISHED = 9, CM_EVENT_DISCONNECTED = 10, CM_EVENT_DEVICE_REMOVAL = 11,
  CM_EVENT_MULTICAST_JOIN = 12, CM_EVENT_MULTICAST_ERROR = 13, CM_EVENT_ADDR_CHANGE = 14, CM_EVENT_TIMEWAIT_EXIT = 15,
};
inline constexpr const char* CM_EVENT_NAMES[] = {
  "RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR", "RDMA_CM_EVENT_ROUTE_RESOLVED", "RDMA_CM_EVENT_ROUTE_ERROR",
  "RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE", "RDMA_CM_EVENT_CONNECT_ERROR",
  "RDMA_CM_EVENT_UNREACHABLE", "RDMA_CM_EVENT_REJECTED", "RDMA_CM_EVENT_ESTABLISHED", "RDMA_CM_EVENT_DISCONNECTED",
  "RDMA_CM_EVENT_DEVICE_REMOVAL", "RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR",
  "RDMA_CM_EVENT_ADDR_CHANGE", "RDMA_CM_EVENT_TIMEWAIT_EXIT",
};

// ---- enum ib_cm_state (include/rdma/ib_cm.h): the IBA 12.9 state of one connection, per side
enum CmState : uint8_t {
  CM_IDLE = 0, CM_LISTEN, CM_REQ_SENT, CM_REQ_RCVD, CM_MRA_REQ_SENT, CM_MRA_REQ_RCVD, CM_REP_SENT, CM_REP_RCVD,
  CM_MRA_REP_SENT, CM_MRA_REP_RCVD, CM_ESTABLISHED, CM_DREQ_SENT, CM_DREQ_RCVD, CM_TIMEWAIT, CM_SIDR_REQ_SENT,
  CM_SIDR_REQ_RCVD,
};
inline constexpr const char* CM_STATE_NAMES[] = {
  "IB_CM_IDLE", "IB_CM_LISTEN", "IB_CM_REQ_SENT", "IB_CM_REQ_RCVD", "IB_CM_MRA_REQ_SENT", "IB_CM_MRA_REQ_RCVD",
  "IB_CM_REP_SENT", "IB_CM_REP_RCVD", "IB_CM_MRA_REP_SENT", "IB_CM_MRA_REP_RCVD", "IB_CM_ESTABLISHED",
  "IB_CM_DREQ_SENT", "IB_CM_DREQ_RCVD", "IB_CM_TIMEWAIT", "IB_CM_SIDR_REQ_SENT", "IB_CM_SIDR_REQ_RCVD",
};

// ---- CM MAD attribute IDs (IBA 12.6, Table 104; include/rdma/ib_cm.h CM_*_ATTR_ID)
enum CmAttr : uint16_t {
  CM_ATTR_REQ = 0x0010, CM_ATTR_MRA = 0x0011, CM_ATTR_REJ = 0x0012, CM_ATTR_REP = 0x0013, CM_ATTR_RTU = 0x0014,
  CM_ATTR_DREQ = 0x0015, CM_ATTR_DREP = 0x0016, CM_ATTR_SIDR_REQ = 0x0017, CM_ATTR_SIDR_REP = 0x0018,
  CM_ATTR_LAP = 0x0019, CM_ATTR_APR = 0x001A,
};

// ---- REJ reasons (IBA 12.6.7.2 Table 112; enum ib_cm_rej_reason), the ones the device sends or reports
enum CmRejReason : uint16_t {
  CM_REJ_NO_QP = 1, CM_REJ_NO_EEC = 2, CM_REJ_NO_RESOURCES = 3, CM_REJ_TIMEOUT = 4, CM_REJ_UNSUPPORTED = 5,
  CM_REJ_INVALID_COMM_ID = 6, CM_REJ_INVALID_COMM_INSTANCE = 7, CM_REJ_INVALID_SERVICE_ID = 8,
  CM_REJ_INVALID_TRANSPORT_TYPE = 9, CM_REJ_STALE_CONN = 10, CM_REJ_RDC_NOT_EXIST = 11, CM_REJ_INVALID_GID = 12,
  CM_REJ_INVALID_LID = 13, CM_REJ_INVALID_SL = 14, CM_REJ_INVALID_TRAFFIC_CLASS = 15, CM_REJ_INVALID_HOP_LIMIT = 16,
  CM_REJ_INVALID_PACKET_RATE = 17, CM_REJ_INVALID_ALT_GID = 18, CM_REJ_INVALID_ALT_LID = 19,
  CM_REJ_INVALID_ALT_SL = 20, CM_REJ_INVALID_ALT_TRAFFIC_CLASS = 21, CM_REJ_INVALID_ALT_HOP_LIMIT = 22,
  CM_REJ_INVALID_ALT_PACKET_RATE = 23, CM_REJ_PORT_CM_REDIRECT = 24, CM_REJ_PORT_REDIRECT = 25,
  CM_REJ_INVALID_MTU = 26, CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27, CM_REJ_CONSUMER_DEFINED = 28,
  CM_REJ_INVALID_RNR_RETRY = 29, CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30, CM_REJ_INVALID_CLASS_VERSION = 31,
  CM_REJ_INVALID_FLOW_LABEL = 32, CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
};

// ---- SIDR REP status (IBA 12.11.2 Table 120; enum ib_cm_sidr_status)
enum CmSidrStatus : uint8_t {
  CM_SIDR_SUCCESS = 0, CM_SIDR_UNSUPPORTED = 1, CM_SIDR_REJECT = 2, CM_SIDR_NO_QP = 3, CM_SIDR_REDIRECT = 4,
  CM_SIDR_UNSUPPORTED_VERSION = 5,
};

// An IP endpoint (struct sockaddr_in / sockaddr_in6 without the socket API): family AF_INET (2) or AF_INET6 (10);
// ip holds an IPv4 address as an IPv4-mapped IPv6 address (::ffff:a.b.c.d), so it is also the GID it maps to.
struct CmAddr {
  uint16_t family = 0;               // 0 = unspecified (any)
  uint8_t ip[16] = {};
  uint16_t port = 0;                 // host byte order; 0 = any (bind picks one, as the kernel does)
  uint32_t scope_id = 0;             // IPv6 link-local
};

// struct rdma_conn_param (rdma/rdma_cma.h) without the pointer
struct CmConnParam {
  std::vector<uint8_t> private_data; // REQ: at most 56 bytes after the 36-byte IP header; REP 196; REJ 148; ...
  uint8_t responder_resources = 0, initiator_depth = 0, flow_control = 1, retry_count = 7, rnr_retry_count = 7;
  uint8_t srq = 0;
  uint32_t qp_num = 0;               // the QP number to announce when no QP handle is attached (qp == 0)
};

// One event of a device's CM (what rdma_get_cm_event returns, plus the numbers a console shows)
struct CmEvent {
  Handle id = 0;                     // the CM ID the event is for (for CONNECT_REQUEST: the new ID)
  Handle listen_id = 0;              // CONNECT_REQUEST: the listening ID it arrived on
  uint32_t event = 0;                // CmEventType
  int32_t status = 0;                // 0, a negative errno (ETIMEDOUT, ECONNREFUSED...) or, for REJECTED, the REJ reason
  CmConnParam param;                 // CONNECT_REQUEST / CONNECT_RESPONSE / ESTABLISHED / REJECTED: the peer's values
                                     // and private data (the IP header stripped, as rdma_cm does)
  uint32_t remote_qpn = 0, remote_qkey = 0;   // UD (SIDR REP): the peer's QP and Q_Key
};

// What a console shows of one CM ID (and what rdma_cm_id's route / addresses hold)
struct CmIdInfo {
  Handle id = 0, dev = 0, qp = 0, listen_id = 0;
  uint32_t port_space = 0, qp_type = 0;       // CmPortSpace; IBV_QPT_RC / IBV_QPT_UD
  uint8_t state = CM_IDLE;                    // CmState (ib_cm's); IDLE before a connect / after TimeWait
  bool bound = false, addr_resolved = false, route_resolved = false, listening = false;
  CmAddr src, dst;
  uint32_t sgid_index = 0; uint8_t sgid[16] = {}, dgid[16] = {};
  uint32_t local_comm_id = 0, remote_comm_id = 0, local_qpn = 0, remote_qpn = 0, starting_psn = 0;
  uint32_t path_mtu = 0;                      // enum ibv_mtu
  uint64_t service_id = 0;
  // added after the first contract (appended): the in-session device that owns dst (0: a host on the network, by
  // dgid) -- what an address handle to the peer of a UD ID needs (Session::create_ah); the CA GUID of the peer
  Handle peer_dev = 0;
  uint64_t remote_guid = 0;
  uint8_t tos = 0, ack_timeout = 0;           // the ID's options (cm_set_option); ack_timeout 0 = the path's
};

// Added: what a device's QP1 agent counted (the kernel's /sys/class/infiniband/*/ports/1/cm_{rx,tx}_* counters
// grouped; docs/cm.md)
struct CmCounters {
  uint64_t tx = 0, rx = 0;                    // MADs sent (retries included) / received on QP1
  uint64_t tx_retries = 0;                    // resent after a response timeout
  uint64_t rx_duplicates = 0;                 // duplicate REQ / REP / RTU / DREQ (answered or ignored as IBA 12.9 says)
  uint64_t rx_dropped = 0;                    // malformed, not for this CM, unknown comm ID, wrong state
  uint64_t rej_sent = 0;                      // REJ sent in answer to a REQ / REP (no listener, stale, ...)
  uint64_t rx_stale = 0;                      // REQs refused as stale connections (remote QPN still connected / in TimeWait)
};

}  // namespace vl
