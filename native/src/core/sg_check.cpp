// The page-list rule of fast registration (ib_sg_to_pages) and the entry rule of indirect registration, per
// element. Session::map_mr_sg (mr.cpp) maps with these; the SG lab and the console show their verdicts.
#include "vl/sg.h"

namespace vl {

const char* sg_break_name(uint32_t why) {
  switch (why) {
    case SG_OK: return "ok";
    case SG_BREAK_START: return "start";
    case SG_BREAK_PREV_END: return "prev_end";
    case SG_BREAK_START | SG_BREAK_PREV_END: return "start+prev_end";
    case SG_BREAK_PAGE_LIST_FULL: return "page_list_full";
    case SG_BREAK_ENTRY_LIMIT: return "entry_limit";
    case SG_BREAK_NOT_REACHED: return "not_reached";
    default: return "?";
  }
}

std::string sg_break_text(uint32_t why, uint64_t page_size) {
  const std::string ps = std::to_string(page_size);
  switch (why) {
    case SG_OK: return "mapped";
    case SG_BREAK_START: return "starts inside a " + ps + "-byte page and does not continue the previous element (a gap)";
    case SG_BREAK_PREV_END: return "the previous element ends inside a " + ps + "-byte page and this one does not continue it (a gap)";
    case SG_BREAK_START | SG_BREAK_PREV_END:
      return "the previous element ends inside a " + ps + "-byte page and this one starts inside another (a gap on both sides)";
    case SG_BREAK_PAGE_LIST_FULL: return "its pages do not fit in the MR's page list (max_num_sg)";
    case SG_BREAK_ENTRY_LIMIT: return "beyond the indirect key's entry limit (max_num_sg)";
    case SG_BREAK_NOT_REACHED: return "not reached: mapping stopped at an earlier element";
    default: return "?";
  }
}

static void not_reached(SgMapping& m, size_t from) {
  for (size_t i = from; i < m.elements.size(); i++) m.elements[i].why = SG_BREAK_NOT_REACHED;
}

static void add_seg(SgMapping& m, const Sge& s) {
  if (!m.segs.empty() && m.segs.back().va + m.segs.back().len == s.addr) m.segs.back().len += s.length;
  else m.segs.push_back({s.addr, s.length});
  m.length += s.length;
}

// ib_sg_to_pages (drivers/infiniband/core/verbs.c). For element i > 0: if the previous element's end
// (last_page_off) or this element's start is not page aligned, the two must be contiguous (they are coalesced:
// the shared page is not set again), else mapping stops ("Stop mapping if there is a gap"). set_page failing
// (page list full) stops it too; the return value counts the elements mapped whole.
SgMapping sg_to_pages(const std::vector<Sge>& sg, uint64_t page_size, uint32_t max_pages) {
  SgMapping m;
  m.elements.resize(sg.size());
  const uint64_t mask = ~(page_size - 1);
  uint64_t last_end = 0;
  for (size_t i = 0; i < sg.size(); i++) {
    const Sge& s = sg[i];
    SgVerdict& v = m.elements[i];
    const uint64_t end = s.addr + s.length, page_addr = s.addr & mask;
    // the do/while of ib_sg_to_pages sets at least one page, even for a zero-length element
    uint64_t pages = s.length ? (((end - 1) & mask) - page_addr) / page_size + 1 : 1;
    if (i > 0) {
      v.contiguous = s.addr == last_end;
      const bool prev_mid = (last_end & ~mask) != 0, start_mid = page_addr != s.addr;
      if (prev_mid || start_mid) {
        if (!v.contiguous) {
          v.why = (start_mid ? uint32_t(SG_BREAK_START) : 0u) | (prev_mid ? uint32_t(SG_BREAK_PREV_END) : 0u);
          m.first_break = static_cast<uint32_t>(i);
          not_reached(m, i + 1);
          return m;
        }
        pages--;                                   // "goto next_page": the first page is the previous element's last
      }
    }
    if (m.entries + pages > max_pages) {
      v.why = SG_BREAK_PAGE_LIST_FULL;
      m.first_break = static_cast<uint32_t>(i);
      not_reached(m, i + 1);
      return m;
    }
    v.pages = static_cast<uint32_t>(pages);
    m.entries += v.pages;
    m.mapped++;
    add_seg(m, s);
    last_end = end;
  }
  return m;
}

// mlx5_ib_sg_to_klms (drivers/infiniband/hw/mlx5/mr.c): one KLM entry per element, any byte alignment; stops
// at the MR's max_descs.
SgMapping sg_to_entries(const std::vector<Sge>& sg, uint32_t max_entries) {
  SgMapping m;
  m.elements.resize(sg.size());
  for (size_t i = 0; i < sg.size(); i++) {
    SgVerdict& v = m.elements[i];
    v.contiguous = i > 0 && sg[i].addr == sg[i - 1].addr + sg[i - 1].length;
    if (m.entries >= max_entries) {
      v.why = SG_BREAK_ENTRY_LIMIT;
      if (m.first_break == UINT32_MAX) m.first_break = static_cast<uint32_t>(i);
      continue;
    }
    v.pages = 1;
    m.entries++;
    m.mapped++;
    add_seg(m, sg[i]);
  }
  return m;
}

}  // namespace vl
