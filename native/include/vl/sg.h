// Scatter lists under one key: the page-list rule of fast registration, the entry rule of indirect (KLM-like)
// registration, and scatter-list generators. One implementation: Session::map_mr_sg applies sg_to_pages /
// sg_to_entries, and the lab, the addon and the tests read the same per-element verdicts.
//
// The page rule is the kernel's ib_sg_to_pages (drivers/infiniband/core/verbs.c), which ib_map_mr_sg drivers call
// (rxe_map_mr_sg, mlx5_ib_map_mr_sg for IB_MR_TYPE_MEM_REG): the first element may start inside a page, the last
// may end inside one, and every boundary in between must be page aligned on both sides unless the two elements are
// contiguous (then they coalesce and share the page). Mapping stops at the first element that breaks the rule or
// whose pages would not fit in the MR's page list (max_num_sg, the driver's set_page callback failing); the number
// of elements mapped is what ib_map_mr_sg returns, and a caller that gets fewer than it passed must not use the MR
// (nvme-rdma and iser fail the I/O with -EINVAL).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vl/session.h"

namespace vl {

// Why an element is not mapped. Flags: an element can break the page rule on both sides at once.
enum SgBreak : uint32_t {
  SG_OK = 0,                        // mapped
  SG_BREAK_START = 1,               // starts inside a page and does not continue the previous element
  SG_BREAK_PREV_END = 2,            // the previous element ends inside a page and this one does not continue it
  SG_BREAK_PAGE_LIST_FULL = 4,      // its pages would exceed max_num_sg (set_page fails)
  SG_BREAK_ENTRY_LIMIT = 8,         // indirect: more entries than max_num_sg
  SG_BREAK_NOT_REACHED = 16,        // mapping already stopped at an earlier element
};
const char* sg_break_name(uint32_t why);            // "start", "prev_end", "start+prev_end", "page_list_full", ...
std::string sg_break_text(uint32_t why, uint64_t page_size);   // one sentence for people

struct SgVerdict {
  uint32_t why = SG_OK;             // SgBreak flags
  uint32_t pages = 0;               // page-list (or indirect) entries this element added; 0 when not mapped
  bool contiguous = false;          // starts where the previous element ends (coalesced with it)
};
struct SgSeg { uint64_t va = 0, len = 0; };
struct SgMapping {
  uint32_t mapped = 0;              // elements mapped: ib_map_mr_sg's return value
  uint32_t entries = 0;             // page-list entries (fast-reg) or KLM entries (indirect) used
  uint64_t length = 0;              // bytes under the key
  uint32_t first_break = UINT32_MAX;   // index of the first element not mapped (UINT32_MAX: all mapped)
  std::vector<SgVerdict> elements;  // one per input element
  std::vector<SgSeg> segs;          // what the key translates, contiguous elements coalesced
};

// ib_sg_to_pages with a page list of max_pages entries. page_size: a power of two >= 512 (the caller checks it
// against the device's page_size_cap; the lab also asks the rule at 512 B).
SgMapping sg_to_pages(const std::vector<Sge>& sg, uint64_t page_size, uint32_t max_pages);
// Indirect registration (IB_MR_TYPE_SG_GAPS; mlx5_ib_sg_to_klms): byte granular, one entry per element, at most
// max_entries of them; the rest are not mapped (SG_BREAK_ENTRY_LIMIT).
SgMapping sg_to_entries(const std::vector<Sge>& sg, uint32_t max_entries);

// ---- scatter-list generators. Elements are (offset, length) inside one region that starts page aligned;
// discontiguous elements are separated by gaps, as pages of a request come from anywhere in memory.
enum class SgPattern : uint32_t {
  Random = 0,                       // byte-aligned starts and lengths (seeded): SG_IO with no minimum alignment
  Aligned4K = 1,                    // every element whole 4 KiB pages
  Sectors512 = 2,                   // every element 512-byte sectors at sector-aligned offsets
  OneByteOff = 3,                   // whole pages except one element that starts one byte into its page
  BlockLayer = 4,                   // a request of N segments: first starts at a sector offset, whole pages between,
                                    // the last ends early (what the block layer builds under a virt boundary)
};
const char* sg_pattern_name(SgPattern p);
bool sg_pattern_from_name(const std::string& name, SgPattern& out);
struct SgElem { uint64_t offset = 0; uint32_t length = 0; };
// n elements whose lengths sum to exactly `total` (total >= n, and >= n * 4096 for the page patterns, else EINVAL).
Result<std::vector<SgElem>> sg_generate(SgPattern p, uint32_t n, uint64_t total, uint64_t seed);
uint64_t sg_span(const std::vector<SgElem>& list);  // bytes of region the list needs (end of the last element)

}  // namespace vl
