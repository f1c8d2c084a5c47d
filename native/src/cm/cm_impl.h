// Internal state of the devices' connection managers (vl/cm.h; docs/cm.md). Not a public header.
//   mad.h       the MAD codec (IBA 13.4.2 header, IBA 12.6 message layouts)
//   ip_hdr.h    the RDMA IP CM service header and service IDs (IBA Annex A11)
//   agent.cpp   the QP1 agent: MADs in (checks, counters, routing to the state machine) and out (UD SEND to QP1)
//   addr.cpp    bind / address and route resolution over the devices' GID tables
//   conn.cpp    the connection state machine, both sides (IBA 12.9; kernel cm.c), REQ attributes to the QP
//   sidr.cpp    SIDR REQ / REP for UD IDs (IBA 12.11)
//   timer.cpp   response timeouts, retries and TimeWait on the engine's timer heap
//   api.cpp     Session::cm_*
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "cm/ip_hdr.h"
#include "cm/mad.h"
#include "core/impl.h"

namespace vl::cm {

// rdma_cm's constants (cma.c) and the device's CA ACK delay (rxe: RXE_LOCAL_CA_ACK_DELAY)
constexpr uint8_t kCmResponseTimeout = 20;       // CMA_CM_RESPONSE_TIMEOUT (4.096 us * 2^20 ~ 4 s)
constexpr uint8_t kMaxCmRetries = 15;            // CMA_MAX_CM_RETRIES
constexpr uint8_t kMraServiceTimeout = 24;       // CMA_CM_MRA_SETTING without IB_CM_MRA_FLAG_DELAY
constexpr uint8_t kPacketLifeTime = 18;          // CMA_IBOE_PACKET_LIFETIME
constexpr uint8_t kCaAckDelay = 15;              // ibv_device_attr.local_ca_ack_delay of rxe
constexpr uint32_t kUdpQkey = 0x01234567;        // RDMA_UDP_QKEY
constexpr uint32_t kHiTid = 1;                   // the CM agent's hi_tid (ib_mad: one per registered agent)
constexpr size_t kMaxBacklog = 1024;

// cm.c cm_convert_to_ms: 4.096 us * 2^t, approximated as 2^(t-8) ms
inline uint64_t iba_time_ms(unsigned t) { return 1ull << (t > 8 ? t - 8 : 0); }
// cm.c cm_ack_timeout: the local ACK timeout of a path of this packet life time
uint8_t ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time);

// Where a MAD goes / came from: a device of this session, or a host on the network (dev 0) by GID
struct Peer {
  Handle dev = 0;
  uint8_t gid[16] = {};
  uint32_t sgid_index = 0;                       // our GID the MAD leaves from (on the network)
};

enum class Timer : uint8_t { None, Resend, TimeWait };

struct Id {
  Handle h = 0, dev = 0, qp = 0, listen_id = 0;
  uint32_t ps = CM_PS_TCP, qp_type = QPT_RC;
  uint8_t state = CM_IDLE;
  bool bound = false, addr_resolved = false, route_resolved = false, listening = false;
  bool from_listener = false;                    // made by a listener for a REQ / SIDR REQ: never holds its port
  int backlog = 0; uint32_t pending = 0;         // listener: CONNECT_REQUESTs not yet accepted / rejected
  CmAddr src, dst;
  uint32_t sgid_index = 0; uint8_t sgid[16] = {};
  Peer peer;                                     // peer.gid = the dgid
  uint32_t local_id = 0, remote_id = 0, local_qpn = 0, remote_qpn = 0, sq_psn = 0, rq_psn = 0;
  uint32_t path_mtu = MTU_1024;
  uint64_t service_id = 0, tid = 0, remote_guid = 0;
  uint8_t responder_resources = 0, initiator_depth = 0, retry_count = 7, rnr_retry_count = 7, flow_control = 1, srq = 0;
  uint8_t local_ack_timeout = 0;                 // the path's (QP IBV_QP_TIMEOUT)
  uint8_t packet_life_time = kPacketLifeTime;    // the route's (cma_resolve_iboe_route)
  uint8_t tos = 0; bool tos_set = false;         // RDMA_OPTION_ID_TOS (rdma_set_service_type): the path's traffic class
  uint8_t ack_timeout = 0; bool ack_timeout_set = false;   // RDMA_OPTION_ID_ACK_TIMEOUT (rdma_set_ack_timeout)
  uint32_t qkey = 0, remote_qkey = 0;            // UD
  // the timer of the message awaiting a response (IBA 12.7.4 / cm.c timeout_ms and max_cm_retries)
  uint64_t timeout_ms = 0; uint8_t max_cm_retries = 0, retries = 0;
  uint64_t timer_gen = 0; Timer timer = Timer::None;
  uint8_t sent[kMadLen] = {}; bool have_sent = false;  // the last message sent (resent on timeout / duplicate)
  uint8_t mra[kMadLen] = {}; bool have_mra = false;    // the MRA a duplicate REQ / REP is answered with
  bool disconnect_reported = false;              // rdma_cm reports DISCONNECTED once (DREQ / DREP / DREQ timeout)
  bool accepted = false;                         // passive: counted out of the listener's backlog
};

struct Dev {
  uint32_t psn = 0;                              // QP1's next send PSN (ib_mad sets QP1's sq_psn to 0)
  std::deque<CmEvent> events;
  CmCounters n;
};

// A connection recently closed: its remote (QPN, CA GUID) may not connect again until TimeWait ends (IBA 12.9.8.2
// stale connections; cm.c timewait_info kept past the ID)
struct TimeWaitEntry { Handle dev = 0; uint32_t local_id = 0, remote_id = 0, remote_qpn = 0; uint64_t remote_guid = 0, until = 0; };

struct Core {
  std::map<Handle, Id> ids;
  std::map<Handle, Dev> devs;
  std::vector<TimeWaitEntry> timewait;
  uint32_t next_id = 0, id_xor = 0;              // local comm IDs: a counter xor a random operand (cm.c cm_alloc_id_priv)
  uint16_t next_port = 0;                        // ephemeral ports (ip_local_port_range 32768..60999)
  bool seeded = false;
};

// ---- agent.cpp
Core& core(SessionImpl& S);
Dev& dev_state(SessionImpl& S, Handle dev);
void send(SessionImpl& S, Handle dev, const Peer& to, Msg& m, Id* id, bool remember = true);
void resend(SessionImpl& S, Id& id, const uint8_t* mad);
void emit_state(SessionImpl& S, Id& id, uint8_t to, const char* why);
void emit_mad(SessionImpl& S, Handle dev, Handle id, const Msg& m, uint8_t dir, const std::string& why = {});
void drop(SessionImpl& S, Handle dev, const uint8_t* mad, size_t n, const std::string& why);
void queue_event(SessionImpl& S, Handle dev, CmEvent e);
Id* find_local(SessionImpl& S, Handle dev, uint32_t local_id);

// ---- addr.cpp
int bind_port(SessionImpl& S, Id& id, const CmAddr& a);   // 0 or an errno
bool owner_of(SessionImpl& S, const uint8_t ip[16], Handle& dev, uint32_t& gid_index);
int gid_index_of(const Device& d, const uint8_t ip[16]);
int source_gid_for(const Device& d, const CmAddr& dst);

// ---- conn.cpp
void on_mad(SessionImpl& S, Handle dev, const Peer& from, const Msg& m);
Status connect(SessionImpl& S, Id& id, const CmConnParam& p);
Status accept(SessionImpl& S, Id& id, const CmConnParam& p);
Status reject(SessionImpl& S, Id& id, uint16_t reason, const std::vector<uint8_t>& pd);
Status disconnect(SessionImpl& S, Id& id);
Status establish(SessionImpl& S, Id& id);
void destroy(SessionImpl& S, Id& id);
void set_state(SessionImpl& S, Id& id, uint8_t st, const char* why);
void on_timeout(SessionImpl& S, Id& id);
void enter_timewait(SessionImpl& S, Id& id);
Status qp_init(SessionImpl& S, Id& id);
Status qp_rtr_rts(SessionImpl& S, Id& id);
QpAttr init_attr(const Id& id, uint32_t st, uint32_t& mask, int& err);

// ---- sidr.cpp
Status sidr_connect(SessionImpl& S, Id& id, const CmConnParam& p);
Status sidr_accept(SessionImpl& S, Id& id, const CmConnParam& p, uint8_t status);
void on_sidr(SessionImpl& S, Handle dev, const Peer& from, const Msg& m);

// ---- timer.cpp
void arm(SessionImpl& S, Id& id, Timer kind, uint64_t ms);
void disarm(Id& id);

}  // namespace vl::cm
