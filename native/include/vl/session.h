// Verbs Lab software RDMA device: the session façade.
// A Session owns devices, memory and every verbs object, the wire between devices, the virtual clock and
// the event stream. It is plain C++ (no Node); the addon, the gtest suite and the benchmarks all use it.
//
// Addresses: every buffer is real page-aligned host memory, but it is given a *deterministic* virtual
// address inside the session's address space (starting at 0x7f0000000000, page aligned, with an unmapped
// guard page between buffers) so recorded scenarios, events and pcaps are identical from run to run.
// MRs, SGEs and RETH addresses use these virtual addresses.
#pragma once
#include <cerrno>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vl/cm.h"

#include "vl/types.h"

namespace vl {

// ---------------------------------------------------------------- device profiles
// NVMe-oF target offload caps (the 2018 RFC's ibv_device_attr_ex.nvmf_caps, mlx5 nvmf_cap_bits made absolute; vl/nvmf.h).
// All zero: the device has no offload (nvmf::create_srq refuses with EOPNOTSUPP).
struct NvmfCaps {
  uint32_t offload_type_rc = 0, offload_type_dc = 0;   // NvmfOffloadOp bits (WRITE 1, READ 2, FLUSH 4)
  uint32_t max_backend_ctrls_total = 0, max_srq_backend_ctrls = 0, max_srq_namespaces = 0;
  uint64_t min_staging_buf_size = 0, max_staging_buf_size = 0;
  uint32_t max_io_sz = 0;
  uint32_t max_nvme_queue_depth = 0, min_nvme_queue_depth = 0;
  uint32_t max_ioccsz = 0, min_ioccsz = 0, max_icdoff = 0;   // 16-byte units
  uint32_t lba_data_sizes = 0;                             // NvmfLbaSize bits (512, 520, 4096, 4104, 4160)
  uint32_t min_cmd_timeout_ms = 0, max_cmd_timeout_ms = 0;
};
struct Profile {
  std::string name;                  // "rxe", "cx", "iwarp", "minimal"
  std::string description;
  std::string transport;             // "RoCEv2" or "iWARP"
  uint64_t device_cap_flags = 0;     // DeviceCap bits
  uint32_t atomic_cap = ATOMIC_NONE;
  uint32_t max_qp = 0, max_qp_wr = 0, max_sge = 0, max_cq = 0, max_cqe = 0, max_mr = 0, max_pd = 0;
  uint32_t max_mw = 0, max_srq = 0, max_srq_wr = 0, max_srq_sge = 0, max_qp_rd_atom = 0, max_qp_init_rd_atom = 0;
  uint32_t max_fast_reg_page_list_len = 0, max_inline_data = 0;
  uint64_t max_mr_size = 0;
  uint64_t page_size_cap = 0;        // bit mask of supported page sizes
  uint32_t active_mtu = MTU_1024;
  bool indirect_reg = false;         // byte-aligned SGE lists under one key (mlx5 KLM-like; SG_GAPS)
  bool zero_based_mr = false;        // IBV_ACCESS_ZERO_BASED accepted on MRs
  bool read_with_inv = false;        // iWARP RDMA READ with invalidate
  bool lkey_eq_rkey = true;          // rxe: lkey == rkey
  // Completion-notification semantics (kernel ib_req_notify_cq, include/rdma/ib_verbs.h). true: arming only
  // watches for the *next* CQE and IB_CQ_REPORT_MISSED_EVENTS returns > 0 while the CQ holds entries
  // (rxe_req_notify_cq), so a consumer must re-poll after a positive return. false: the arm never reports missed
  // events (always 0, as mlx4_ib_arm_cq / mlx5_ib_arm_cq for hardware CQEs); instead arming a CQ that still
  // holds unpolled entries raises the completion event at once (the arm doorbell carries the consumer index and
  // the HCA compares it with its producer index: modelled, not published as a rule by vendors).
  bool notify_reports_missed = true;
  std::string key_byte_policy;       // "random" (rxe), "increment", "zero" (mlx5 mkey / siw)
  // Quirks: where Linux rxe (upstream, after the 2022 fencing fix) and the IBA / ConnectX behave differently. The
  // defaults are the IBA / ConnectX behaviour; the rxe profile sets every flag as rxe does (docs/rxe-conformance.md;
  // app/protocol/quirks.ts holds the console's words for each, and a test checks the two name the same flags).
  bool local_inv_waits_all = false;        // rxe_req.c rxe_wqe_is_fenced: LOCAL_INV waits for every earlier WQE
  bool recv_cq_overflow_no_ack = false;    // rxe_resp.c do_complete: CQ overflow returns before the ACK
  bool send_cq_overflow_keeps_rts = false; // rxe_comp.c do_complete ignores rxe_cq_post's error (QP stays RTS)
  bool error_wc_not_solicited = false;     // rxe_cq_post fires a solicited arm only on its `solicited` argument
  bool rereg_pd_access_only = false;       // rxe_rereg_user_mr: PD / access only (translation EOPNOTSUPP), keys stay
  bool round_queue_depths = false;         // rxe_queue_init: 2^n - 1 entries; rxe_qp_init_req: WQE size sets
                                           // max_send_sge and max_inline_data together
  bool wc_flags_rxe = false;               // rxe_resp.c do_complete: IBV_WC_GRH on user receive completions;
                                           // rxe_comp.c make_send_cqe: IBV_WC_WITH_IMM on the sender's *_WITH_IMM
  uint32_t dereg_bound_mr_errno = EBUSY;   // rxe_dereg_mr: EINVAL when windows are bound (IBA 10.6.7.2.6)
  uint32_t local_key_error_status = WC_LOC_PROT_ERR;   // rxe_req.c: -EINVAL from copy_data -> IBV_WC_LOC_QP_OP_ERR
  bool recv_too_small_is_malformed = false;// rxe_resp.c send_data_in: copy_data -EINVAL -> ERR_MALFORMED_WQE
                                           // (NAK remote operational error, receive IBV_WC_LOC_QP_OP_ERR)
  bool invalidate_checks_pd = true;        // rxe_invalidate_mr has no PD check
  bool reg_mr_wr_checks_access = true;     // rxe_reg_fast_mr takes any access (REMOTE_WRITE without LOCAL_WRITE)
  // IB_WR_RDMA_READ_WITH_INV on a device without read_with_inv: rxe lists it in rxe_wr_opcode_info (posting works)
  // but its requester has no packet opcode for it (rxe_req.c next_opcode -EINVAL -> IBV_WC_LOC_QP_OP_ERR, QP to
  // error); the other profiles refuse it at post_send with EINVAL (modelled: no ConnectX WQE opcode for it)
  bool read_with_inv_loc_qp_op_err = false;
  NvmfCaps nvmf;                           // NVMe-oF target offload (modelled on ConnectX; none on rxe / siw)
};
const std::vector<Profile>& builtin_profiles();

struct GidEntry { uint32_t index; uint8_t gid[16]; std::string type; };   // type "RoCE v2"
struct DeviceInfo {
  Handle handle = 0;
  std::string name;                  // e.g. "vlrxe0"
  Profile profile;
  uint64_t node_guid = 0;
  std::vector<GidEntry> gids;        // port 1
  uint32_t port_state = 4;           // IBV_PORT_ACTIVE
};

// ---------------------------------------------------------------- objects
struct BufferInfo { Handle handle = 0; uint64_t addr = 0; uint64_t length = 0; };
struct Sge { uint64_t addr = 0; uint32_t length = 0; uint32_t lkey = 0; };
struct MrInfo {
  Handle handle = 0; Handle pd = 0; uint32_t lkey = 0, rkey = 0; uint64_t addr = 0, length = 0, iova = 0;
  uint32_t access = 0;
  std::string kind;                  // "user", "fast_reg", "indirect"
  std::string state;                 // "valid", "free", "invalid"
  std::vector<Sge> sg;               // segments when built from an SG list (fast-reg / indirect)
};
struct MwInfo {
  Handle handle = 0; Handle pd = 0; uint32_t rkey = 0; uint32_t type = MW_TYPE_1;
  std::string state; Handle mr = 0; Handle qp = 0; uint64_t addr = 0, length = 0; uint32_t access = 0;
};
struct CqInfo { Handle handle = 0; Handle device = 0; uint32_t cqe = 0; bool channel = false; };   // cqe as granted
struct QpCap { uint32_t max_send_wr = 16, max_recv_wr = 16, max_send_sge = 4, max_recv_sge = 4, max_inline_data = 0; };
struct QpInitAttr {
  Handle pd = 0, send_cq = 0, recv_cq = 0, srq = 0;
  uint32_t qp_type = QPT_RC; QpCap cap; bool sq_sig_all = false;
  // kernel-only: the port's GSI QP, QP1 (what ib_mad creates with IB_QPT_GSI; the RDMA CM's MADs go through it).
  // It has UD semantics; qp_type must be QPT_UD; one per device (EEXIST).
  bool gsi = false;
};
struct QpAttr {                      // ibv_qp_attr subset; meaning of each field as in rdma-core
  uint32_t qp_state = QPS_RESET, cur_qp_state = QPS_RESET, path_mtu = MTU_1024, qp_access_flags = 0;
  uint32_t qkey = 0, rq_psn = 0, sq_psn = 0, dest_qp_num = 0, pkey_index = 0, port_num = 1;
  uint32_t max_rd_atomic = 1, max_dest_rd_atomic = 1, min_rnr_timer = 12, timeout = 14, retry_cnt = 7, rnr_retry = 7;
  uint8_t dgid[16] = {}; uint32_t sgid_index = 0; Handle dest_device = 0;   // address vector (in-session peer)
};
struct QpInfo { Handle handle = 0; uint32_t qp_num = 0; Handle device = 0; QpInitAttr init; QpAttr attr; };

struct SendWr {
  uint64_t wr_id = 0; uint32_t opcode = WR_SEND; uint32_t send_flags = 0;
  std::vector<Sge> sg_list;
  std::vector<uint8_t> inline_data;  // used with SEND_INLINE (copied at post time)
  uint32_t imm_data = 0;             // also invalidate_rkey for SEND_WITH_INV, rkey for LOCAL_INV
  uint64_t remote_addr = 0; uint32_t rkey = 0;
  uint64_t compare_add = 0, swap = 0;
  // UD
  Handle ah = 0; uint32_t remote_qpn = 0, remote_qkey = 0;
  // BIND_MW
  Handle mw = 0; uint32_t bind_rkey = 0; Handle bind_mr = 0; uint64_t bind_addr = 0, bind_length = 0; uint32_t bind_access = 0;
  // REG_MR (kernel IB_WR_REG_MR): mr + new key + access; the MR must have been mapped with map_mr_sg()
  Handle reg_mr = 0; uint32_t reg_key = 0; uint32_t reg_access = 0;
};
struct RecvWr { uint64_t wr_id = 0; std::vector<Sge> sg_list; };
struct Wc {                          // struct ibv_wc
  uint64_t wr_id = 0; uint32_t status = WC_SUCCESS, opcode = WC_SEND, vendor_err = 0, byte_len = 0;
  uint32_t imm_data = 0, invalidated_rkey = 0, qp_num = 0, src_qp = 0, wc_flags = 0, pkey_index = 0, slid = 0;
  uint32_t sl = 0, dlid_path_bits = 0;
  // Verbs Lab, not ibv_wc: the profile rule that decided this completion where Linux rxe and the IBA / ConnectX differ
  // (the name of a quirk flag of struct Profile, as in app/protocol/quirks.ts), or nullptr
  const char* rule = nullptr;
};
struct PostResult : Status { size_t bad_wr = 0; };   // index of the failing WR when err != 0

// ---------------------------------------------------------------- events (the observable stream)
enum class EventKind : uint32_t {
  ObjectCreated, ObjectDestroyed, ObjectModified,  // obj kinds: device pd buffer mr mw cq qp srq ah
  WqePosted, WqeStarted, WqeCompleted,
  PacketSent, PacketReceived, PacketDropped,       // "pkt" holds the UDP payload (BTH..ICRC)
  KeyCheck,                                        // passed or failed, with the reason in text
  Cqe, CqArmed, CompEvent,                         // completion queued; CQ armed; completion-channel event
  AsyncEvent, QpState, MemWrite,                   // memory bytes changed: obj = buffer, a = addr, b = len
  Timer, Fault, Log,
  Offload,                                         // NVMe-oF target offload engine step: a = vl::NvmfStep (vl/nvmf.h)
  CmState,                                         // a CM ID changed state (vl/cm.h CmState): a = from, b = to
  CmMad,                                           // a CM MAD sent / received / dropped: a = attribute, b = vl::CmMadDir
};
// Typed facts of an event (Event::change, Event::key_state, and a of Timer / Fault); names in vl/names.h, mirrored in app/protocol/enums.ts.
// MR / MW key state: rxe's enum rxe_mr_state / rxe_mw_state (rxe_verbs.h), same order and values.
enum class KeyState : uint8_t { Invalid = 0, Free = 1, Valid = 2 };
// What modified an object (Event::change of ObjectModified).
enum class Change : uint8_t {
  Rereg = 0,        // ibv_rereg_mr: a new key byte (a = lkey, b = rkey)
  MapMrSg = 1,      // ib_map_mr_sg on a fast-registration MR
  RegMrWr = 2,      // IB_WR_REG_MR executed (rxe_reg_fast_mr)
  LocalInv = 3,     // IBV_WR_LOCAL_INV executed (rxe_invalidate_mr / rxe_invalidate_mw)
  RemoteInv = 4,    // SEND_WITH_INV received: the IETH's key invalidated by the responder
  Bind = 5,         // ibv_bind_mw / IBV_WR_BIND_MW (rxe_bind_mw)
  QpDestroyed = 6,  // a type 2 window freed with the QP it was bound to
  ModifyQp = 7,     // ibv_modify_qp without a state change
  ModifySrq = 8,    // ibv_modify_srq (srq_limit armed)
  NetAttach = 9,    // a device bound to UDP sockets (on the network)
  Unbind = 10,      // a type 1 window bound with length 0: a new rkey that grants nothing (IBA 10.6.7.2)
};
// a of Timer events: which transport timer did what (rxe_comp.c, rxe_req.c).
enum class TimerReason : uint8_t { AckTimeout = 0, RnrWait = 1, RnrExpired = 2, Retransmit = 3 };
// b of CmMad events: what happened to the MAD.
enum class CmMadDir : uint8_t { Sent = 0, Received = 1, Dropped = 2, Resent = 3 };
// a of Fault events: the fault set_faults injected.
enum class FaultKind : uint8_t { Loss = 0, Duplicate = 1, Reorder = 2, Delay = 3 };

struct Event {
  static constexpr uint8_t kNone = 0xff;           // change / key_state not given
  uint64_t seq = 0; uint64_t time_ns = 0;          // virtual time in deterministic mode
  EventKind kind = EventKind::Log;
  Handle device = 0; Handle obj = 0;
  std::string obj_kind;                            // "qp", "mr", ...
  uint64_t a = 0, b = 0, c = 0, d = 0;             // kind-specific numbers (documented per kind in events.md)
  std::string text;                                // human explanation ("rkey 0x1234 key byte 0x34 != 0x35")
  std::vector<uint8_t> pkt;                        // packet bytes for Packet* events
  Wc wc;                                           // for Cqe / WqeCompleted
  bool ok = true;                                  // for KeyCheck
  uint8_t change = kNone;                          // ObjectModified: a Change
  uint8_t key_state = kNone;                       // mr / mw life-cycle events: the key's KeyState after the event
  Event& why(Change c) { change = static_cast<uint8_t>(c); return *this; }
  Event& state(KeyState s) { key_state = static_cast<uint8_t>(s); return *this; }
};

// What sits in a work or completion queue right now (Session::queue_snapshot): the ring's producer and consumer
// indices (absolute counts since the queue was created) and its occupied slots, oldest first (the slot at absolute
// index first + i). Send queues hold the WQEs not yet retired, receive queues / SRQs the receive WRs not yet
// consumed, CQs the CQEs not yet polled.
enum class RingQueue : uint32_t { Sq, Rq, Cq, Srq };
enum class SlotState : uint32_t { Posted, Started, Done };   // Started: the requester has sent some of it
struct RingSlot {
  uint64_t wr_id = 0;
  uint32_t opcode = 0;                             // SQ: ibv_wr_opcode; CQ: ibv_wc_opcode; RQ / SRQ: 0
  uint32_t status = 0;                             // SQ (Done) and CQ: ibv_wc_status
  SlotState state = SlotState::Posted;             // CQ slots are Done
  uint32_t qp_num = 0;                             // CQ: the CQE's qp_num
};
struct RingSnapshot {
  Handle owner = 0;                                // QP, CQ or SRQ handle
  Handle device = 0;
  RingQueue queue = RingQueue::Sq;
  uint32_t depth = 0;                              // max_send_wr / max_recv_wr / cqe / max_wr
  uint64_t producer = 0, consumer = 0;
  uint64_t first = 0;                              // absolute index of slots[0]
  std::vector<RingSlot> slots;                     // at most the newest max_slots of them
};

// Events a sampling console must never miss: object life cycle (created / destroyed / modified), QP state changes,
// asynchronous events, CQ arming and completion-channel events.
bool is_state_event(EventKind k);
// Keeps, in order, the state events and the newest `keep` events (of any kind) of `evs` (a vector or deque of
// Event); removes the others and returns how many. Session::sample_events applies it to the session's queue.
template <class Events> size_t keep_state_and_newest(Events& evs, size_t keep) {
  if (evs.size() <= keep) return 0;
  const size_t from = evs.size() - keep;
  size_t out = 0;
  for (size_t i = 0; i < evs.size(); i++) {
    if (i < from && !is_state_event(evs[i].kind)) continue;
    if (out != i) evs[out] = std::move(evs[i]);
    out++;
  }
  const size_t removed = evs.size() - out;
  evs.resize(out);
  return removed;
}

struct FaultConfig { double loss = 0, duplicate = 0, reorder = 0, delay = 0; uint64_t delay_ns = 0; };

// How the engine runs.
//   Off      deterministic: virtual time, nothing happens until step() / run() (the default).
//   Inline   free running, run-to-completion: post_send / post_recv / post_srq_recv / poll_cq run the engine to
//            idle on the calling thread (virtual time still advances).
//   Threads  free running on an engine thread (a doorbell wakes it, as on a NIC): verbs calls only queue work and
//            read completions; time is real (monotonic clock), so ACK / RNR timers fire in real time.
enum class FreeRunMode : uint32_t { Off, Inline, Threads };

// What the in-process wire does with a packet between two devices of the session (docs/perf.md says exactly what
// each checks). Packets that leave on UDP, and every packet while faults are configured, are always Strict.
//   Fast    (the default) the header fields travel as the receiver would decode them; the packet's bytes and ICRC
//           are built only when something reads them (event capture / pcap); the receiver does not decode or
//           re-check a packet the sender's codec built (verified by construction). The payload is copied from the
//           source MR to the target MR once when free running and nothing can touch the source in between.
//   Strict  every packet encoded with its ICRC by the sender, decoded and ICRC-checked by the receiver.
// Both give the same events, completions and memory (app/scenario/datapath.test.ts runs the library in both).
enum class DataPath : uint32_t { Fast, Strict };

// ---------------------------------------------------------------- the session
class SessionImpl;
class Session {
 public:
  explicit Session(uint64_t seed = 1);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // devices
  Result<Handle> create_device(const std::string& profile, const std::string& name = "");
  Status destroy_device(Handle dev);
  std::vector<DeviceInfo> devices() const;

  // memory and keys
  Result<Handle> alloc_pd(Handle dev);
  Status dealloc_pd(Handle pd);
  Result<BufferInfo> alloc_buffer(uint64_t length);   // ENOMEM past the session's memory limit
  // Host memory all the session's buffers may take together (page-rounded); default kDefaultMemoryLimit. A client
  // cannot exhaust the machine one 64 MiB buffer at a time.
  static constexpr uint64_t kDefaultMemoryLimit = 1ull << 30;
  void set_memory_limit(uint64_t bytes);
  Status free_buffer(Handle buf);
  // The process's own memory, identity-mapped (native/libibverbs: a program's buffers): from now on MR, SGE and RETH
  // addresses are the process's virtual addresses and the device reads and writes them directly, as a NIC DMAs to
  // pinned pages. The caller checks a range is mapped before registering it (the kernel's ib_umem_get does);
  // memory unmapped under a live MR faults the process (SIGSEGV), as a use-after-free would.
  // EBUSY once the session holds buffers of its own (alloc_buffer); the two address spaces do not mix.
  Status use_process_memory();
  Status write_memory(uint64_t addr, const uint8_t* data, size_t len);   // by virtual address
  Status read_memory(uint64_t addr, uint8_t* out, size_t len) const;
  Result<MrInfo> reg_mr(Handle pd, uint64_t addr, uint64_t length, uint32_t access, std::optional<uint64_t> iova = {});
  Result<MrInfo> rereg_mr(Handle mr, uint32_t flags, Handle pd, uint64_t addr, uint64_t length, uint32_t access);
  Status dereg_mr(Handle mr);
  Result<MrInfo> alloc_mr(Handle pd, uint32_t max_num_sg, bool indirect = false);  // fast-reg MR, no memory, FREE
  Result<uint32_t> map_mr_sg(Handle mr, const std::vector<Sge>& sg, uint32_t page_size = 4096); // returns #mapped (ib_map_mr_sg)
  Result<MwInfo> alloc_mw(Handle pd, uint32_t type);
  Status dealloc_mw(Handle mw);
  Result<uint32_t> bind_mw(Handle qp, Handle mw, uint64_t wr_id, uint32_t send_flags, Handle mr, uint64_t addr, uint64_t length, uint32_t access);  // type 1, returns new rkey
  std::optional<MrInfo> mr_info(Handle mr) const;
  std::optional<MwInfo> mw_info(Handle mw) const;

  // queues
  Result<Handle> create_cq(Handle dev, uint32_t cqe, bool with_channel = false);
  Status destroy_cq(Handle cq);
  std::optional<CqInfo> cq_info(Handle cq) const;                            // the depth the device granted
  Status req_notify_cq(Handle cq, bool solicited_only);
  Result<int> req_notify_cq_report_missed(Handle cq, bool solicited_only);  // kernel IB_CQ_REPORT_MISSED_EVENTS
  std::vector<Wc> poll_cq(Handle cq, uint32_t max);
  // ibv_poll_cq's form: up to max completions into out[], returns how many (0 also for an unknown CQ); no allocation
  uint32_t poll_cq(Handle cq, uint32_t max, Wc* out);
  Result<Handle> get_cq_event(Handle dev);                                   // from completion channel; ENOENT if none
  Status ack_cq_events(Handle cq, uint32_t n);
  Result<Handle> create_srq(Handle pd, uint32_t max_wr, uint32_t max_sge, uint32_t srq_limit);
  Status modify_srq(Handle srq, uint32_t srq_limit);
  Status destroy_srq(Handle srq);
  PostResult post_srq_recv(Handle srq, const std::vector<RecvWr>& wrs);
  Result<QpInfo> create_qp(Handle pd, const QpInitAttr& attr);             // init.cap: the caps granted
  Status modify_qp(Handle qp, const QpAttr& attr, uint32_t attr_mask);
  std::optional<QpInfo> query_qp(Handle qp) const;
  Status destroy_qp(Handle qp);
  Result<Handle> create_ah(Handle pd, Handle dest_device, uint32_t sgid_index = 0);
  // An address handle naming a host on the network by GID (device attached to a UDP transport; native/src/net):
  // UD sends through it leave from the socket of sgid_index to the address in dgid. EINVAL while the PD's device is
  // not on the network, for a zero dgid or an sgid_index outside the GID table.
  Result<Handle> create_ah_remote(Handle pd, const uint8_t dgid[16], uint32_t sgid_index);
  Status destroy_ah(Handle ah);
  PostResult post_send(Handle qp, const std::vector<SendWr>& wrs);
  PostResult post_recv(Handle qp, const std::vector<RecvWr>& wrs);

  // engine: deterministic (virtual time, step) or free running (threads)
  void set_faults(const FaultConfig& f);
  bool step();                                     // run one engine action; false when idle (or Threads mode)
  uint64_t run(uint64_t max_steps = UINT64_MAX);   // run until idle (or max); returns steps taken
  uint64_t now_ns() const;
  // free running: post_send / post_recv / post_srq_recv / poll_cq run the engine to idle on the calling thread
  // (run-to-completion; virtual time still advances). Off by default (deterministic stepping).
  // Same as set_free_run_mode(on ? Inline : Off).
  void set_free_running(bool on);
  // Switches between the modes above. Leaving Threads stops and joins the engine thread (queued work stays queued).
  // Errors: EINVAL unknown mode; EBUSY a device is attached to a UDP transport (it drives the engine itself).
  Status set_free_run_mode(FreeRunMode m);
  FreeRunMode free_run_mode() const;
  // n = 0: back to deterministic (Off); n = 1: Threads with one engine thread. EINVAL for n > 1 (only one engine
  // thread is implemented). While Threads runs, step() and run() do nothing (they return false / 0).
  Status set_engine_threads(unsigned n);
  // Fast or Strict (above); takes effect for packets sent from now on. EINVAL for an unknown value.
  Status set_data_path(DataPath p);
  DataPath data_path() const;

  // observation
  // sampled_out: also takes take_sampled_out() under the same lock (the count of events removed before these)
  std::vector<Event> drain_events(size_t max = SIZE_MAX, uint64_t* sampled_out = nullptr);
  // Sampling at the source (a console that cannot draw every event): removes the queued events older than the newest
  // `keep` unless is_state_event(); returns how many were removed, which take_sampled_out() reports (once) unless
  // `count` is false (the caller reports them).
  size_t sample_events(size_t keep, bool count = true);
  uint64_t take_sampled_out();
  // Every SQ, RQ, CQ and SRQ of the session, with at most max_slots slots each (the newest).
  std::vector<RingSnapshot> queue_snapshot(size_t max_slots = 256) const;
  // seq of the last event captured (0: none yet)
  uint64_t last_seq() const;
  void set_event_capture(bool on);                 // off for benchmarks
  Status write_pcap(const std::string& path) const;

  // ---- the connection manager of a device (vl/cm.h; native/src/cm/): IBA chapter 12 + the RDMA IP CM service on
  // the device's QP1. Asynchronous outcomes (address / route resolved, REQ received, REP, RTU, REJ, DREQ, timeouts)
  // are CmEvents queued per device and taken by cm_get_events; the engine runs the MADs and their timers as any
  // other device action. A QP attached with cm_set_qp is moved INIT -> RTR -> RTS by the CM itself (as the
  // kernel's rdma_cm does for a QP made with rdma_create_qp): with the REQ's / REP's attributes (remote QPN,
  // starting PSN, path MTU, ACK timeout, retry and RNR retry counts, responder resources / initiator depth).
  Result<Handle> cm_create_id(Handle dev, uint32_t port_space, uint32_t qp_type);  // CmPortSpace; IBV_QPT_RC/UD
  Status cm_destroy_id(Handle id);             // sends DREQ / REJ as the state needs, frees the ID
  Status cm_bind_addr(Handle id, const CmAddr& a);         // EADDRNOTAVAIL: not the device's; EADDRINUSE: taken
  Status cm_resolve_addr(Handle id, const CmAddr* src, const CmAddr& dst, uint32_t timeout_ms);  // -> ADDR_RESOLVED
  Status cm_resolve_route(Handle id, uint32_t timeout_ms);                                        // -> ROUTE_RESOLVED
  Status cm_listen(Handle id, int backlog);
  Status cm_set_qp(Handle id, Handle qp);      // the QP to INIT now (P_Key index, port, access / Q_Key)
  Status cm_connect(Handle id, const CmConnParam& p);      // REQ (RC) or SIDR REQ (UD)
  Status cm_accept(Handle id, const CmConnParam& p);       // REP (RC; QP to RTR, RTS) or SIDR REP (UD)
  Status cm_reject(Handle id, const std::vector<uint8_t>& private_data);   // REJ, reason CONSUMER_DEFINED
  Status cm_disconnect(Handle id);             // DREQ (or DREP to a DREQ received); the QP to ERR
  Status cm_establish(Handle id);              // rdma_establish: as if the RTU had arrived (first packet on the QP)
  Status cm_notify(Handle id, uint32_t ib_event);          // rdma_notify (IBV_EVENT_COMM_EST)
  // rdma_init_qp_attr: the attributes and IBV_QP_* mask for INIT, RTR or RTS of this ID's connection
  Result<QpAttr> cm_init_qp_attr(Handle id, uint32_t qp_state, uint32_t* attr_mask);
  std::vector<CmEvent> cm_get_events(Handle dev, size_t max = SIZE_MAX);
  std::optional<CmIdInfo> cm_id_info(Handle id) const;
  std::vector<CmIdInfo> cm_ids(Handle dev) const;          // every ID of the device (the console's CM table)
  // Added: called with the session lock held each time a CmEvent is queued on a device (an event channel's fd can
  // be signalled from it; do not call into the Session from the hook). Empty function: none.
  void cm_set_event_hook(std::function<void(Handle dev)> fn);
  // Added: rdma_set_option's per-ID options: CM_OPTION_ID_TOS (the path's traffic class in the REQ) and
  // CM_OPTION_ID_ACK_TIMEOUT (the QP's local ACK timeout; set before cm_resolve_route it also sets the path's packet
  // life time, timeout - 1). EOPNOTSUPP for the others; EINVAL for an ACK timeout on a UD ID or a value out of range.
  Status cm_set_option(Handle id, uint32_t option, uint32_t value);
  // Added: the device's CM counters (MADs sent / received / resent / dropped...), for tests and the console
  CmCounters cm_counters(Handle dev) const;

  // the device model itself, for in-tree extensions that live beside the core (native/src/net: UDP transport)
  SessionImpl& internals() const { return *impl_; }

 private:
  std::unique_ptr<SessionImpl> impl_;
};

}  // namespace vl
