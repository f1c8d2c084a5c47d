// The SG lab (lab 1): one scatter list, five ways to put it under the key(s) a storage initiator sends, each run as
// real verbs between an initiator QP and a target QP on the software device, for one WRITE (the target pulls the
// list with RDMA READ) and one READ (the target pushes it with RDMA WRITE) per I/O pair. Costs are counted from
// the verbs the run posts and the device's own counters (packets, virtual time); every byte moved is compared.
//
// The exchange is the one block-storage RDMA protocols use (SRP, iSER, NVMe/RDMA): the initiator registers its
// buffers, SENDs a command carrying a descriptor of (addr, rkey, length) entries, the target issues one RDMA
// operation per entry against its own memory and SENDs a response; the initiator then invalidates the keys it
// registered for the I/O (LOCAL_INV, as srp_inv_rkey / iser_inv_rkey do) before their MRs go back to the pool.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vl/sg.h"

namespace vl {

enum class SgStrategy : uint32_t {
  FastReg = 0,     // one fast-reg MR for the whole list (IB_WR_REG_MR); refused when the list has gaps
  Bounce = 1,      // copy into a page-aligned bounce buffer, fast-register it; copy back after a READ (iSER)
  MultiMr = 2,     // one fast-reg MR per gap-free run, several keys in an indirect descriptor (SRP)
  Pool512 = 3,     // pre-registered 512-byte-granular pool: sector-aligned elements sent as entries, no per-I/O registration
  Indirect = 4,    // one indirect MR (IB_MR_TYPE_SG_GAPS, mlx5 KLM/UMR): byte-granular entries, one key, zero copy
};
constexpr uint32_t kSgStrategies = 5;
const char* sg_strategy_name(SgStrategy s);
bool sg_strategy_from_name(const std::string& name, SgStrategy& out);

struct SgLabConfig {
  std::string profile = "cx";       // both devices
  uint32_t queue_depth = 1;         // I/O pairs in flight
  uint32_t ios = 1;                 // I/O pairs to run (one WRITE then one READ of the list each)
  uint32_t mr_pool = 128;           // MultiMr: fast-reg MRs in the initiator's pool
  uint32_t max_num_sg = 0;          // per fast-reg / indirect MR; 0: the profile's max_fast_reg_page_list_len
  uint64_t seed = 1;                // data patterns
  bool ignore_short_map = false;    // Indirect: send the key although map_mr_sg mapped fewer elements than the list
                                    // (the bug class where a key past its entry limit was used anyway)
};

struct SgCounters {
  uint64_t bytes_moved = 0;         // payload bytes of the I/Os (both directions)
  uint64_t bytes_copied = 0;        // copied by the initiator's CPU (bounce in and out)
  uint64_t registrations = 0;       // per-I/O registrations (IB_WR_REG_MR posted)
  uint64_t invalidations = 0;       // LOCAL_INV posted
  uint64_t keys_on_wire = 0;        // descriptor entries carried by the commands
  uint64_t remote_ops = 0;          // RDMA READ / WRITE the target posted
  uint64_t wrs_posted = 0;          // send + receive WRs, both sides
  uint64_t packets = 0;             // RoCEv2 packets the device sent (both directions, ACKs included)
  uint64_t device_ns = 0;           // the session's virtual time over the run
  uint64_t wall_ns = 0;             // measured: the I/O path (posting, the device, the target, completions)
  uint64_t initiator_ns = 0;        // measured: the initiator's own work (registering, copying, posting, reaping)
  uint32_t mrs_held = 0;            // MRs the strategy holds (pool, bounce, pre-registered)
  uint32_t max_in_flight = 0;       // I/Os in flight at once (below queue_depth when the MR pool runs dry)
  uint32_t pool_waits = 0;          // submissions that waited for MRs to come back
  uint32_t ios_done = 0;            // I/Os completed (2 per pair)
};

struct SgLabResult {
  SgStrategy strategy = SgStrategy::FastReg;
  int err = 0;                      // 0, or why the strategy refused the list (EINVAL, ENOMEM, EOPNOTSUPP, EIO)
  std::string msg;
  uint32_t wc_status = WC_SUCCESS;  // the first unsuccessful work completion (err == EIO)
  uint32_t mapped = 0;              // elements ib_map_mr_sg mapped (FastReg / Indirect; on refusal)
  uint32_t first_break = UINT32_MAX;
  uint32_t break_why = SG_OK;       // SgBreak of first_break
  bool verified = false;            // every byte of every I/O compared equal
  SgCounters c;
};

// Runs one strategy on `s`: creates an initiator and a target device (profile cfg.profile), their PD, CQ, RC QPs,
// buffers and MRs, runs cfg.ios pairs at cfg.queue_depth, and destroys what it created. The engine must be in
// deterministic mode (it is stepped to idle between the two sides' work, as a lab agent would).
SgLabResult sg_lab_run(Session& s, const std::vector<SgElem>& list, SgStrategy st, const SgLabConfig& cfg);

}  // namespace vl
