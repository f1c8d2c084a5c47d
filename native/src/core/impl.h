// Internal state of a Session: every object of the software RDMA device. Not a public header.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/handle_map.h"
#include "core/index_map.h"
#include "core/ring.h"
#include "vl/names.h"
#include "vl/session.h"
#include "vl/wire.h"

namespace vl {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

inline Status ok() { return {}; }
inline Status fail(int err, std::string msg) { return Status{err, std::move(msg)}; }
template <class T> Result<T> rfail(int err, std::string msg) { Result<T> r; r.err = err; r.msg = std::move(msg); return r; }
template <class T> Result<T> rok(T v) { Result<T> r; r.value = std::move(v); return r; }
std::string hex(uint64_t v, int width = 0);

constexpr uint64_t kVaBase = 0x7f0000000000ull;
constexpr uint64_t kPage = 4096;
constexpr uint32_t kMwIndexBase = 1u << 20;   // MR indices 1..2^20, MW indices above (rxe: disjoint ranges)

// rxe_queue_init: a ring of 2^n slots holds 2^n - 1 entries; asked for n entries the queue has the smallest such
// depth >= n (1 -> 1, 4 -> 7, 16 -> 31)
inline uint32_t round_depth(uint32_t n) {
  uint64_t slots = 1;
  while (slots < uint64_t(n) + 1) slots <<= 1;
  return static_cast<uint32_t>(slots - 1);
}

// PSN arithmetic (24 bit, docs/wire.md 1.6)
inline int32_t psn_cmp(uint32_t a, uint32_t b) { return static_cast<int32_t>((a - b) << 8); }
inline uint32_t psn_add(uint32_t a, uint32_t n) { return (a + n) & 0xFFFFFF; }

// RoCEv2 address family of a GID as ib_core's rdma_gid2ip reads it: ::ffff:a.b.c.d is IPv4, anything else
// (the zero GID included) IPv6.
inline bool gid_is_v4mapped(const uint8_t g[16]) {
  static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(g, pre, 12) == 0;
}
// A device on the network (RoCEv2 over UDP) cannot address an IPv6 GID from an IPv4 one or the other way round:
// ib_core resolves the destination MAC of a user QP's (and AH's) address vector with rdma_addr_find_l2_eth_by_grh ->
// rdma_resolve_ip, which fails with EINVAL when the source and destination sockaddr families differ
// (drivers/infiniband/core/addr.c; called from ib_resolve_eth_dmac in verbs.c at modify_qp and create_ah).
// An empty string when they agree, else the reason.
std::string gid_family_mismatch(const uint8_t sgid[16], const uint8_t dgid[16]);

struct Buffer { Handle h = 0; uint64_t va = 0, len = 0, span = 0; uint8_t* mem = nullptr; };

inline const char* key_state_name(KeyState s) { const char* n = name_of(kKeyStateNames, uint32_t(s)); return n ? n : "unknown"; }

struct Seg { uint64_t va; uint64_t len; };     // a piece of session memory (SG element of a fast-reg MR)
struct Piece { uint8_t* p; uint64_t n; uint64_t va; };   // host pointer, length, session VA

// What translates an MR's keys (MrInfo::kind carries the name): a user MR maps [addr, addr+length) directly; a
// fast-registration MR (ibv_alloc_mr / IB_WR_REG_MR) and an indirect one go through their segment list.
enum class MrKind : uint8_t { User, FastReg, Indirect };
inline constexpr const char* kMrKindNames[] = {"user", "fast_reg", "indirect"};
inline const char* mr_kind_name(MrKind k) { return kMrKindNames[uint8_t(k)]; }

struct Mr {
  Handle h = 0, pd = 0, dev = 0;
  uint32_t index = 0, lkey = 0, rkey = 0;
  uint64_t addr = 0, length = 0, iova = 0;
  uint32_t access = 0;
  MrKind kind = MrKind::User;
  uint8_t* mem = nullptr;                      // a user MR: host address of addr (its buffer cannot be freed while the
                                               // MR exists: free_buffer refuses), so translation needs no buffer lookup
  KeyState state = KeyState::Valid;
  uint32_t max_num_sg = 0;
  std::vector<Seg> segs;                       // fast_reg / indirect translation (iova-contiguous)
  std::vector<Sge> sg;                         // as given to map_mr_sg
  bool mapped = false;
  uint32_t bound_mws = 0;
  bool zero_based = false;
};

struct Mw {
  Handle h = 0, pd = 0, dev = 0;
  uint32_t index = 0, rkey = 0, type = MW_TYPE_1;
  KeyState state = KeyState::Valid;
  Handle mr = 0, qp = 0;
  uint64_t addr = 0, length = 0;
  uint32_t access = 0;
  bool zero_based = false;
};

struct Cq {
  Handle h = 0, dev = 0;
  uint32_t cqe = 0;
  Ring<Wc> q;
  uint64_t produced = 0;                       // CQEs ever queued (the ring's producer index; consumer = produced - q.size())
  bool channel = false;
  uint32_t notify = 0;                         // 0, 1 = solicited, 2 = next completion
  uint32_t events_unacked = 0;
  bool error = false;
};

struct Srq {
  Handle h = 0, pd = 0, dev = 0;
  uint32_t max_wr = 0, max_sge = 0, limit = 0;
  Ring<RecvWr> q;
  uint64_t posted = 0;                         // WRs ever posted (producer index)
};

struct Ah {
  Handle h = 0, pd = 0, dev = 0, dest_device = 0; uint32_t sgid_index = 0;
  bool remote = false; uint8_t dgid[16] = {};  // create_ah_remote: a host on the network (native/src/net), by GID
};

enum class WqeState { Posted, Processing, Pending, Done, Error };

struct SendWqe {
  SendWr wr;
  WqeState state = WqeState::Posted;
  uint32_t first_psn = 0, last_psn = 0, npkts = 0;
  uint64_t length = 0;                         // total message length
  uint64_t resp_offset = 0;                    // bytes of READ response placed
  bool local = false;                          // local op (no packets)
  uint32_t status = WC_SUCCESS;
  bool signaled = false;
  const char* rule = nullptr;                  // Wc::rule of its completion
  uint32_t offload = 0;                        // a WQE of the NVMe-oF offload engine: its command id (no CQE for software)
};

struct RespRes {                               // saved responder resource for READ / ATOMIC replay
  bool valid = false, atomic = false;
  uint32_t first_psn = 0, last_psn = 0;
  uint64_t va = 0; uint32_t rkey = 0; uint64_t length = 0;
  uint64_t orig = 0;                           // atomic original value
  uint8_t opcode = 0;
};

struct Qp {
  Handle h = 0, pd = 0, dev = 0;
  uint32_t qpn = 0;
  QpInitAttr init;
  QpAttr attr;
  uint32_t state = QPS_RESET;
  // send queue (absolute indices; ring of max_send_wr entries)
  Ring<SendWqe> sq;                      // sq[0] is the oldest uncompleted WQE
  uint64_t sq_posted = 0, rq_posted = 0;       // WRs ever posted to the SQ / RQ (producer indices; queue_snapshot)
  size_t req_idx = 0;                          // index in sq of the next WQE the requester works on
  uint64_t req_offset = 0;                     // bytes of the current WQE already sent
  uint32_t req_psn = 0;                        // next PSN to send
  uint32_t rd_atomic_outstanding = 0;
  uint32_t pkts_since_ack = 0;
  bool req_scheduled = false;
  uint32_t retry_left = 7, rnr_left = 7;
  uint64_t timer_gen = 0;                      // RNR timer generation (bumped to cancel)
  bool timer_armed = false;
  bool timer_pending = false;                   // an AckTimer action is queued (one per QP)
  uint64_t timer_deadline = 0;
  bool rnr_wait = false;
  uint32_t comp_psn = 0;                        // oldest unacknowledged PSN
  bool comm_est = false;
  bool started_retry = false;
  const char* flush_rule = nullptr;             // Wc::rule of the flush completions (the rule that moved the QP to ERR)
  bool sqd_notify = false;                      // IBV_QP_EN_SQD_ASYNC_NOTIFY: raise SQ_DRAINED once drained                   // rxe comp.started_retry: one NAK-driven retry at a time
  // receive queue
  Ring<RecvWr> rq;
  // responder
  uint32_t resp_psn = 0, msn = 0;
  uint8_t resp_last_opcode = 0xFF;             // last accepted request opcode (0xFF: none)
  bool nak_sent = false;
  bool uc_drop = false;                        // UC: dropping until FIRST/ONLY
  bool have_wqe = false; RecvWr cur_wqe; uint64_t cur_recv_off = 0; bool cur_from_srq = false;
  uint64_t w_va = 0; uint32_t w_rkey = 0; uint64_t w_remaining = 0; Handle w_mr = 0; Handle w_mw = 0;
  uint64_t w_len = 0;
  std::vector<RespRes> res; size_t res_next = 0;
  uint32_t recv_byte_len = 0;
};

class SessionImpl;
struct Qp;
// A device attached to a real network (native/src/net): its packets leave through transmit() instead of the
// in-process wire; received datagrams come in through SessionImpl::deliver_framed().
struct WirePort {
  virtual ~WirePort() = default;
  // payload_in_memory: p.payload points into session memory (an MR piece), so it may be sent from there (zero copy)
  virtual void transmit(Qp& q, wire::Packet& p, bool payload_in_memory) = 0;
  // a MAD of the device's connection manager (native/src/cm): a UD packet from QP1 to the QP1 of the host whose
  // GID is dgid, sent from the socket of GID sgid_index
  virtual void transmit_gmp(wire::Packet& p, uint32_t sgid_index, const uint8_t dgid[16]) = 0;
};

struct Device {
  WirePort* port = nullptr;                    // set while attached to a UDP transport
  Handle h = 0;
  std::string name;
  Profile profile;
  uint64_t node_guid = 0;
  uint8_t mac[6] = {};
  std::vector<GidEntry> gids;
  uint32_t ordinal = 0;                        // N in 10.0.0.N
  uint32_t next_mr_index = 1, next_mw_index = kMwIndexBase + 1, next_qpn = 0x11;
  uint8_t key_counter = 0;
  IndexMap mr_by_index{1}, mw_by_index{kMwIndexBase + 1}, qp_by_qpn{0};   // index_map.h
  std::deque<Handle> channel;                  // completion channel events (CQ handles)
  uint32_t n_pd = 0, n_mr = 0, n_mw = 0, n_cq = 0, n_qp = 0, n_srq = 0;
  bool cm_qp1 = false;                         // QP1 belongs to the device's connection manager (native/src/cm):
                                               // it took QP1 at the device's first cm_create_id (docs/cm.md)
};

struct Pd { Handle h = 0, dev = 0; uint32_t users = 0; };

// one pending engine action
struct Action {
  uint64_t t = 0, seq = 0;
  enum Kind : uint8_t { ReqRun, Deliver, AckTimer, RnrTimer, Nvmf, Cm } kind = ReqRun;   // Nvmf: nvmf_action(); Cm: cm_action()
  Handle qp = 0; uint64_t gen = 0;
  Handle src_dev = 0, dst_dev = 0; uint16_t ip_id = 0;
  std::vector<uint8_t> pkt;
  // DataPath::Fast (fastpath.cpp): the packet's header is SessionImpl::carried's entry for this action; its payload
  // points into pkt (the encoded packet when built, else the payload alone) or, when ref, into the source MR itself
  bool carried = false, ref = false, built = false;   // built: pkt holds the encoded packet
};

struct PcapRec { uint64_t t; Handle src, dst; uint16_t ip_id; std::vector<uint8_t> pkt; };

struct NvmfState;                              // NVMe-oF target offload (core/nvmf_offload.h)
namespace cm { struct Core; }                  // the connection manager (native/src/cm/cm_impl.h)

class SessionImpl {
 public:
  explicit SessionImpl(uint64_t seed);
  ~SessionImpl();

  uint64_t seed;
  std::mt19937_64 rng;                         // key bytes
  std::mt19937_64 fault_rng;                   // wire faults
  Handle next_handle = 1;
  uint64_t next_va = kVaBase;
  bool process_memory = false;                 // use_process_memory(): VA == host address (process_memory.cpp)
  std::map<uint64_t, Buffer> buffers_by_va;    // va -> buffer
  uint64_t buffer_bytes = 0;                   // sum of the buffers' spans
  uint64_t memory_limit = Session::kDefaultMemoryLimit;
  // the object budget (object_budget.cpp): what each live object was charged, by handle, and the sum
  uint64_t object_limit = Session::kDefaultObjectLimit, object_bytes = 0;
  std::unordered_map<Handle, uint64_t> object_charge;
  // "" when `bytes` more fit in the budget, else the error text naming the limit (checked before the handle is taken)
  std::string over_budget(uint64_t bytes, const char* what) const;
  void charge(Handle h, uint64_t bytes) { object_charge[h] = bytes; object_bytes += bytes; }
  void uncharge(Handle h) {
    auto it = object_charge.find(h);
    if (it == object_charge.end()) return;
    object_bytes -= it->second;
    object_charge.erase(it);
  }
  std::unordered_map<Handle, uint64_t> buffer_va;
  HandleMap<Device> devs;
  HandleMap<Pd> pds;
  HandleMap<Mr> mrs;
  HandleMap<Mw> mws;
  HandleMap<Cq> cqs;
  HandleMap<Srq> srqs;
  HandleMap<Ah> ahs;
  HandleMap<Qp> qps;

  // events
  bool capture = true;
  uint64_t next_seq = 1;
  std::deque<Event> events;
  uint64_t sampled_out = 0;                    // events removed by sample_events, not yet reported
  std::deque<PcapRec> pcap;                    // packets sent (for write_pcap), kept while capture is on (newest 256k)

  // engine
  uint64_t now = 0, action_seq = 0;
  std::vector<Action> heap;                    // actions ordered by (t, seq)
  // Deliveries that no fault moved in time have t = now + wire_latency_ns with a non-decreasing now, so they are
  // already in (t, seq) order: they wait in this FIFO instead of the heap. step() takes whichever of heap.front()
  // and fifo.front() comes first by (t, seq), which is exactly the order one heap would give.
  Ring<Action> fifo;
  FaultConfig faults;
  FreeRunMode mode = FreeRunMode::Off;
  bool free_running = false;                   // Inline or Threads: requester batches, deliveries follow each packet
  bool inline_run = false;                     // Inline: verbs calls run the engine to idle on the calling thread
  Handle batching_qp = 0;                      // free running: QP whose ReqRun action is looping

  // engine thread (threads.cpp). Every Session call holds mu; the engine thread holds it while it runs a batch of
  // actions and drops it between batches, so posts and polls interleave with the device's work.
  mutable std::recursive_mutex mu;
  std::condition_variable_any cv;
  std::thread engine;
  bool stop_req = false;
  bool engine_sleeping = false;
  std::atomic<uint64_t> doorbell{0};           // threads mode: bumped by every push(): wakes a spinning or sleeping engine
  void ring_doorbell();                        // engine.cpp
  std::atomic<bool> threaded{false};           // mode == Threads (readable without mu)
  std::atomic<uint64_t> cqe_count{0};          // threads mode: bumped by every cq_post (and by every mode change): a poll that found a CQ empty can skip the
                                               // lock until it changes (threads mode; the engine owns mu meanwhile)
  const uint64_t serial;                       // unique per session in the process (poll_cq's empty-CQ cache key)
  int64_t clock_base = 0;                      // threads: now == steady_clock ns - clock_base (never goes back)
  mutable std::atomic<int> lock_waiters{0};   // callers blocked on mu: the engine thread yields to them
  std::atomic<bool> engine_wants{false};       // the engine thread is taking mu: callers let it go first, so a
                                               // tight poll_cq loop cannot starve the device
  // Spins on try_lock first (critical sections are short; a futex sleep costs far more than the wait), then blocks.
  std::unique_lock<std::recursive_mutex> lock() const;   // threads.cpp
  void sync_real_clock();
  bool due() const;                            // threads: the next action's time has come (real time)
  void engine_main();
  Status start_engine();
  void stop_engine();
  uint64_t wire_latency_ns = 1000;
  uint16_t ip_id = 0;
  uint64_t packets_sent = 0;                   // every packet send_packet_raw put on the wire (the SG lab's counter)

  Handle new_handle() { return next_handle++; }

  // ---- events (events.cpp)
  Event& emit(EventKind k, Handle dev, Handle obj, const char* obj_kind, std::string text = {});
  void emit_obj(EventKind k, Handle dev, Handle obj, const char* obj_kind, std::string text = {}) { if (capture) emit(k, dev, obj, obj_kind, std::move(text)); }

  // ---- memory (memory.cpp)
  uint8_t* host(uint64_t va, uint64_t len);          // nullptr unless [va, va+len) inside one buffer
  const uint8_t* host(uint64_t va, uint64_t len) const;
  Handle buffer_of(uint64_t va) const;
  void note_write(Handle dev, uint64_t va, uint64_t len);

  // ---- keys (mr.cpp)
  Device* dev(Handle h) { return devs.get(h); }
  const Profile& profile_of(Handle devh) const { return devs.at(devh).profile; }   // the device must exist
  Pd* pd(Handle h) { return pds.get(h); }
  Mr* mr(Handle h) { return mrs.get(h); }
  Mw* mw(Handle h) { return mws.get(h); }
  Cq* cq(Handle h) { return cqs.get(h); }
  Srq* srq(Handle h) { return srqs.get(h); }
  Qp* qp(Handle h) { return qps.get(h); }
  Qp* qp_by_qpn(Handle dev, uint32_t qpn);
  uint8_t new_key_byte(Device& d, uint8_t old, bool first);
  Mr* mr_by_key(Handle dev, uint32_t key);
  Mw* mw_by_key(Handle dev, uint32_t key);
  MrInfo mr_info(const Mr& m) const;
  MwInfo mw_info(const Mw& w) const;
  // local access through an lkey (SGE): returns host pointer of each piece via callback; false + reason on failure
  struct KeyFail { uint32_t status = 0; std::string reason; };
  bool mr_translate(Mr& m, uint64_t iova, uint64_t len, std::vector<Piece>& out);
  bool sge_pieces(Handle pd, const Sge& s, bool need_write, std::vector<Piece>& out, std::string& why);
  bool copy_from_sges(Handle pd, const std::vector<Sge>& sg, uint64_t off, uint8_t* dst, uint64_t len, std::string& why);
  int copy_to_sges(Handle pd, Handle dev, const std::vector<Sge>& sg, uint64_t off, const uint8_t* src, uint64_t len, std::string& why);  // 0 ok, -1 key error, -2 too small
  // remote key check chain (resp.cpp uses); on success sets mr and translated va
  struct RkeyResult { bool ok = false; uint8_t nak = wire::NAK_REMOTE_ACCESS_ERROR; std::string reason; Mr* m = nullptr; uint64_t va = 0; Handle mw = 0; };
  RkeyResult check_rkey(Qp& q, uint32_t rkey, uint64_t va, uint64_t len, uint32_t need_access, const char* what);
  // local memory-management ops (mr.cpp / mw.cpp)
  Status do_bind_mw(Qp& q, Mw& w, uint32_t new_rkey, Handle mr_h, uint64_t addr, uint64_t length, uint32_t access);
  // how: the event text's "by" (default "local invalidate" / "remote invalidate"; "read with invalidate")
  // a type 2 window of a device whose profile has IB_DEVICE_MEM_WINDOW_TYPE_2A and not 2B: associated with a QP
  // number only (IBA 10.6.7; kernel commit "IB/core: Add type 2 memory windows support": 2A QPN, 2B QPN and PD)
  bool mw_type_2a(const Mw& w) const {
    const uint64_t caps = profile_of(w.dev).device_cap_flags;
    return w.type == MW_TYPE_2 && (caps & DEVICE_MEM_WINDOW_TYPE_2A) && !(caps & DEVICE_MEM_WINDOW_TYPE_2B);
  }
  Status invalidate_key(Qp& q, uint32_t key, bool remote, const char* how = nullptr);
  Status do_reg_mr_wr(Qp& q, Handle mr_h, uint32_t key, uint32_t access);

  // Called for every asynchronous event (CQ_ERR, QP_FATAL, SRQ_LIMIT_REACHED, ...), with the session lock held, whether
  // events are captured or not: the libibverbs-compatible library forwards them to the context's async_fd.
  std::function<void(Handle dev, Handle obj, uint32_t type)> async_hook;
  // Called (session lock held) whenever the CM queues a CmEvent on a device (Session::cm_set_event_hook)
  std::function<void(Handle dev)> cm_hook;
  const wire::Framing* rx_framing = nullptr;   // deliver_framed: the IP/UDP framing of the packet being handled

  // ---- CQ (cq.cpp)
  bool cq_post(Cq& c, const Wc& wc, bool solicited, Handle qp_for_err);
  void cq_fire(Cq& c, bool solicited, const char* why);   // consume the arm; queue a completion-channel event
  void async_event(Handle dev, Handle obj, const char* kind, uint32_t type, std::string text);

  // ---- QP (qp.cpp)
  void qp_to_error(Qp& q, const std::string& why);
  void set_qp_state(Qp& q, uint32_t st, const std::string& why);
  void flush_qp(Qp& q);
  void check_sq_drained(Qp& q);
  bool take_recv_wqe(Qp& q, RecvWr& out, bool& from_srq);

  // ---- transport (req.cpp / resp.cpp / comp.cpp)
  void schedule_req(Qp& q, uint64_t delay = 0);
  bool fenced(const Qp& q, const SendWqe& w) const;   // rxe_wqe_is_fenced
  void req_run(Qp& q);
  void req_retry(Qp& q, uint32_t from_psn);
  void arm_ack_timer(Qp& q);
  void on_ack_timer(Qp& q, uint64_t gen);
  void on_rnr_timer(Qp& q, uint64_t gen);
  // payload_in_memory: p.payload points into session memory (an MR piece), not into a scratch or WQE buffer
  void send_packet(Qp& q, wire::Packet& p, Handle dst_dev, bool payload_in_memory = false);
  void send_packet_raw(Handle src_dev, Handle dst_dev, wire::Packet& p, bool payload_in_memory = false);
  void deliver(Handle src, Handle dst, uint16_t ip_id, std::vector<uint8_t>& bytes);
  // src 0: from the network. icrc: the caller already computed the ICRC of these bytes under f (net/udp.cpp does, to
  // find the IPv4 ID), so it is compared instead of computed a second time.
  void deliver_framed(Handle src, Handle dst, const wire::Framing& f, uint16_t ip_id, std::vector<uint8_t>& bytes,
                      const uint32_t* icrc = nullptr);
  // after decode + ICRC (strict) or straight from the sender (fast): QP lookup, receive event, responder / completer
  void dispatch(Handle src, Handle dst, const wire::Framing* f, uint16_t ip_id, const wire::Packet& p, const std::vector<uint8_t>& bytes);
  // RC / UC: the packet comes from the QP's peer to the QP's address (check_addr.cpp); false with the reason
  bool check_addr(const Qp& q, Handle src, const wire::Framing* f, std::string& why);
  // ---- DataPath::Fast (fastpath.cpp)
  DataPath data_path = DataPath::Fast;
  // headers of the carried deliveries, in the order they sit in fifo (they always take the FIFO: t = now + latency),
  // kept out of Action so the heap and the FIFO move small structs. A delivery takes its header out before it runs
  // (the ring may grow while it runs)
  Ring<wire::Packet> carried;
  uint32_t refs_in_flight = 0;                   // queued deliveries whose payload points into the source MR
  uint64_t refs_sent = 0, refs_owned = 0;        // packets sent by reference / whose payload own_refs() copied
  // The hand-off (fastpath.cpp): free running, inside a requester batch, a packet sent while no delivery is queued
  // waits here instead of the FIFO; right after the code that sent it returns, it is delivered at once if it is still
  // the next action (the FIFO's own rule), else queued where the FIFO would have had it. A push to the FIFO first
  // queues it.
  struct Direct {
    bool pending = false;
    Handle src = 0, dst = 0; uint16_t ip_id = 0; uint64_t t = 0, seq = 0; bool ref = false;
    wire::Packet h[2]; uint8_t slot = 0;         // the pending header is h[slot]; the one being delivered the other
  } direct;
  uint64_t direct_delivered = 0;                 // packets handed off without the FIFO
  uint64_t direct_queued = 0;                    // hand-offs queued after all because a timer was due first
  bool handoff = true;                           // off: every packet takes the FIFO (tests compare the two)
  void deliver_direct();                         // deliver or queue the pending hand-off (after each batch step's code)
  void queue_direct();                           // queue the pending hand-off in the FIFO (before any other push)
  const std::vector<uint8_t> no_bytes;
  bool fast_ok(const wire::Packet& p) const;     // the packet may take the fast path
  void send_fast(Handle src, Handle dst, wire::Packet& p, bool payload_in_memory);
  // a PacketSent event's text: the opcode's name, and what a registered payload decoder (vl/decoders.h) says of the
  // payload ("RC Send Only: NVMe Write CID 4 ..."); both data paths (net.cpp, fastpath.cpp) use it
  static std::string packet_sent_text(const wire::Packet& p);
  void deliver_carried(Action& a);
  void own_refs();                               // copy the payload of every queued ref delivery into its own buffer
  const uint8_t* unaliased(const uint8_t* src, uint64_t len, const std::vector<Piece>& dst);   // src, or a copy if it overlaps dst
  std::vector<uint8_t> stage;
  void responder(Qp& q, const wire::Packet& p, Handle src_dev);
  void completer(Qp& q, const wire::Packet& p);
  void complete_wqe(Qp& q, SendWqe& w, uint32_t status);
  void comp_drain(Qp& q);
  void send_ack(Qp& q, uint8_t syndrome, uint32_t psn, Handle dst);
  wire::Framing framing(Handle src, Handle dst, uint16_t ip_id);
  void nak(Qp& q, uint8_t code, uint32_t psn, Handle dst, const std::string& why, uint32_t recv_status, const char* rule = nullptr);
  void send_read_responses(Qp& q, const RespRes& r, uint32_t from_psn, Handle dst);
  void duplicate(Qp& q, const wire::Packet& p, Handle src);
  void ud_receive(Qp& q, const wire::Packet& p, Handle src, uint16_t ip_id);
  bool complete_recv(Qp& q, uint32_t status, uint32_t opcode, uint32_t byte_len, uint32_t imm, uint32_t flags, uint32_t inv_rkey, bool solicited, uint32_t src_qp, const char* rule = nullptr);
  uint32_t comp_psn_of(const Qp& q) const;
  const char* op_rule = nullptr;                 // set by a local operation whose outcome a profile rule decided (req_run)
  std::vector<uint8_t> scratch;
  std::vector<std::vector<uint8_t>> pkt_pool;    // recycled packet buffers (no malloc/memset per packet)
  std::vector<Piece> pcs_scratch;
  wire::Packet rx;
  Handle peer_dev(const Qp& q) const { return q.attr.dest_device; }

  PostResult post_send_impl(Handle qp, const std::vector<SendWr>& wrs, bool internal);

  // ---- NVMe-oF target offload (nvmf_engine.cpp); null until the first offload SRQ
  std::shared_ptr<NvmfState> nvmf;
  bool nvmf_recv(Qp& q, const Wc& wc);         // a receive completion from an NVMF SRQ: true if the device took it
  void nvmf_wqe_done(Qp& q, const SendWqe& w, uint32_t status);
  void nvmf_action(const Action& a);
  void nvmf_qp_gone(Handle qp);                // the QP is reset or destroyed: its offloaded commands are dropped

  // ---- connection manager (native/src/cm); null until the first cm_create_id
  Session* self = nullptr;                     // the façade (the CM moves QPs through Session::modify_qp)
  std::shared_ptr<cm::Core> cm;
  // dispatch(): a packet for QP1 of a device whose CM owns QP1 (a MAD); src 0: from the network (rx_framing)
  void cm_receive(Handle src, Handle dst, const wire::Packet& p, const std::vector<uint8_t>& bytes);
  void cm_action(const Action& a);             // a CM timer (resend, TimeWait) came due

  // ---- engine (engine.cpp)
  void push(Action a);
  void push_delivery(Action a);                // t == now + wire_latency_ns (in order): FIFO, else heap
  void push_fifo(Action a);
  bool step();
  void exec(Action& a);
  void delivery_clock(uint64_t t);             // engine.cpp: the clock when a delivery due at t runs
  void deliver_pending();                      // free running: deliver queued packets that are due before the rest
  void run_to_idle();
  bool idle() const { return heap.empty() && fifo.empty(); }   // (a hand-off never outlives its batch step)
  uint64_t next_time() const;                  // time of the next action (idle() must be false)
};

// formatting helpers
std::string key_text(uint32_t key);
const char* qp_state_name(uint32_t s);
const char* wc_status_name(uint32_t s);

}  // namespace vl
