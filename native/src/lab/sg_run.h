// Internal to the SG lab (native/src/lab): the state of one run, shared by sg_lab.cpp (the exchange and the loop)
// and sg_strategies.cpp (what each strategy registers, sends and invalidates).
#pragma once
#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "core/impl.h"
#include "vl/sg_lab.h"

namespace vl::sglab {

using clk = std::chrono::steady_clock;
inline uint64_t ns_since(clk::time_point t0) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - t0).count());
}
struct Stopwatch {                                 // adds the time of its scope to `acc`
  uint64_t& acc;
  clk::time_point t0 = clk::now();
  explicit Stopwatch(uint64_t& a) : acc(a) {}
  ~Stopwatch() { acc += ns_since(t0); }
};

constexpr uint32_t kAcc = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;
// Messages. Command: {op, slot, entries, 0} then one Entry per key (SRP's srp_direct_buf is the same 16 bytes:
// va, key, len). Response: {status, slot, 0, 0}.
constexpr uint32_t kCmdHdr = 16, kEntry = 16, kRespLen = 16;
struct Entry { uint64_t addr; uint32_t rkey, len; };
static_assert(sizeof(Entry) == kEntry);
enum Op : uint32_t { OP_WRITE = 1, OP_READ = 2 };   // the I/O's direction as the initiator sees it
// wr_id: kind in the top byte, slot or receive index below
enum Tag : uint64_t { T_CMD_RECV = 1, T_RESP_RECV, T_SEND, T_REG, T_INV, T_RDMA, T_RDMA_LAST, T_RESP_SEND };
inline uint64_t tag(Tag t, uint64_t v) { return (uint64_t(t) << 56) | v; }

struct Slot {                                      // one I/O pair in flight
  uint32_t index = 0, pair = 0;
  uint32_t op = OP_WRITE;
  bool busy = false, waited = false;
  BufferInfo mem;                                  // the initiator's memory holding the list
  std::vector<Sge> sge;                            // the list at its addresses
  std::vector<Handle> held;                        // pool MRs this I/O holds until its LOCAL_INV completes
  Handle mr = 0;                                   // FastReg / Bounce / Indirect: the slot's own MR
  BufferInfo bounce;                               // Bounce
  MrInfo pre;                                      // Pool512: pre-registered over `mem`
};

extern const char* const kStrategyNames[kSgStrategies];

class Run {
 public:
  Run(Session& s, const std::vector<SgElem>& list, SgStrategy st, const SgLabConfig& cfg);
  bool setup();
  bool loop();
  void teardown();
  SgLabResult r;

 private:
  Session& s;
  SessionImpl& S;
  const std::vector<SgElem>& list;
  SgStrategy st;
  SgLabConfig cfg;
  Profile prof;
  uint64_t total = 0, span = 0, untimed = 0;
  uint32_t max_sg = 0, max_keys = 0, cmd_len = 0, runs = 0;
  uint32_t next_pair = 0, pairs_done = 0, active = 0;
  Handle di = 0, dt = 0, pi = 0, pt = 0, ci = 0, ct = 0, qi = 0, qt = 0;
  BufferInfo imsg, tmsg, tdata;
  MrInfo imsg_mr, tmsg_mr, tdata_mr;
  std::vector<Slot> slots;
  std::deque<uint32_t> ready;                      // slots whose next I/O waits to start
  std::vector<Handle> pool, mrs_all, bufs;

  bool refuse(int err, std::string msg);
  PostResult post(Handle qp, std::vector<SendWr>& wrs);
  void post_recv(Handle qp, uint64_t wr_id, uint64_t addr, uint32_t len, uint32_t lkey);
  bool connect(Handle q, Handle peer, uint32_t peer_qpn);
  Result<BufferInfo> buffer(uint64_t len);
  uint8_t* host(uint64_t va, uint64_t len);
  void fill(uint8_t* dst, uint64_t n, uint32_t pair, uint32_t dir) const;
  void prepare(Slot& sl);
  bool verify(const Slot& sl);
  bool start(Slot& sl);
  bool target_cmd(uint32_t j);
  SendWr response(uint32_t k);
  bool target_poll();
  bool initiator_poll();
  void finish(Slot& sl);
  void root_cause();
  void drive();
  // sg_strategies.cpp
  bool strategy_setup();
  bool strategy_can_start(const Slot& sl) const;
  bool strategy_map(Slot& sl, std::vector<SendWr>& wrs, std::vector<Entry>& ents);
  void strategy_done(Slot& sl, std::vector<SendWr>& inv);
  Result<MrInfo> alloc_mr(bool indirect);
  int map(Handle mr, const std::vector<Sge>& sg);
  void reg(Slot& sl, Handle mr, uint64_t len, std::vector<SendWr>& wrs, std::vector<Entry>& ents);
  bool refuse_break(const SgMapping& m, uint64_t page_size, const std::string& what);
  void copy(Slot& sl, bool to_bounce);
};

}  // namespace vl::sglab
