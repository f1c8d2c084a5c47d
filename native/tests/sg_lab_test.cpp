// The SG lab: the page rule (ib_sg_to_pages) on a table of cases, the device's map_mr_sg agreeing with it, the
// generators, and every strategy run as verbs with its data verified and its costs counted.
#include <gtest/gtest.h>

#include <cerrno>

#include "vl/sg.h"
#include "vl/sg_lab.h"

using namespace vl;

namespace {

struct Case {
  const char* name;
  std::vector<std::pair<uint64_t, uint32_t>> els;   // (offset from a page-aligned base, length)
  uint32_t page_size, max_pages;
  uint32_t mapped, entries;                          // what ib_sg_to_pages returns, page-list entries it set
  uint32_t why;                                      // SgBreak of the first element not mapped (SG_OK: none)
};

// Expected values worked out by hand from drivers/infiniband/core/verbs.c:ib_sg_to_pages.
const std::vector<Case> kCases = {
    {"one element at an offset", {{100, 5000}}, 4096, 256, 1, 2, SG_OK},
    {"two whole pages, discontiguous", {{0, 4096}, {8192, 4096}}, 4096, 256, 2, 2, SG_OK},
    {"second starts one byte into a page", {{0, 4096}, {8193, 4095}}, 4096, 256, 1, 1, SG_BREAK_START},
    {"first ends inside a page", {{0, 4000}, {8192, 4096}}, 4096, 256, 1, 1, SG_BREAK_PREV_END},
    {"gap on both sides", {{0, 4000}, {8193, 10}}, 4096, 256, 1, 1, SG_BREAK_START | SG_BREAK_PREV_END},
    {"contiguous mid-page: coalesced", {{0, 4000}, {4000, 4000}}, 4096, 256, 2, 2, SG_OK},
    {"contiguous chain over pages", {{0, 100}, {100, 5000}, {5100, 3092}}, 4096, 256, 3, 2, SG_OK},
    {"first at an offset, last short", {{100, 3996}, {4096, 8192}, {12288, 50}}, 4096, 256, 3, 4, SG_OK},
    {"short middle element", {{0, 4096}, {8192, 100}, {16384, 4096}}, 4096, 256, 2, 2, SG_BREAK_PREV_END},
    {"page list full", {{0, 4096}, {8192, 4096}, {16384, 4096}}, 4096, 2, 2, 2, SG_BREAK_PAGE_LIST_FULL},
    {"first element larger than the page list", {{0, 8192}}, 4096, 1, 0, 0, SG_BREAK_PAGE_LIST_FULL},
    {"sectors at 4 KiB pages", {{512, 512}, {2048, 1024}}, 4096, 256, 1, 1, SG_BREAK_START | SG_BREAK_PREV_END},
    {"sectors at 512 B pages", {{512, 512}, {2048, 1024}}, 512, 256, 2, 3, SG_OK},
    {"byte-aligned at 512 B pages", {{512, 512}, {2049, 1023}}, 512, 256, 1, 1, SG_BREAK_START},
    {"64 KiB pages", {{0, 65536}, {131072, 100}}, 65536, 256, 2, 2, SG_OK},
};

std::vector<Sge> at(uint64_t base, const std::vector<std::pair<uint64_t, uint32_t>>& els) {
  std::vector<Sge> v;
  for (auto& [off, len] : els) v.push_back({base + off, len, 0});
  return v;
}

}  // namespace

TEST(SgCheck, KernelRuleTable) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const SgMapping m = sg_to_pages(at(0x7f0000000000ull, c.els), c.page_size, c.max_pages);
    EXPECT_EQ(m.mapped, c.mapped);
    EXPECT_EQ(m.entries, c.entries);
    if (c.why == SG_OK) {
      EXPECT_EQ(m.first_break, UINT32_MAX);
    } else {
      ASSERT_EQ(m.first_break, c.mapped);
      EXPECT_EQ(m.elements[c.mapped].why, c.why) << sg_break_name(m.elements[c.mapped].why);
      for (size_t i = c.mapped + 1; i < c.els.size(); i++) EXPECT_EQ(m.elements[i].why, uint32_t(SG_BREAK_NOT_REACHED));
    }
    for (uint32_t i = 0; i < c.mapped; i++) EXPECT_EQ(m.elements[i].why, uint32_t(SG_OK));
  }
}

// The device's map_mr_sg returns the same count on a real fast-reg MR (page sizes the profile supports).
TEST(SgCheck, DeviceMapsWithTheSameRule) {
  Session s(3);
  const Handle dev = s.create_device("cx").value, pd = s.alloc_pd(dev).value;
  const BufferInfo b = s.alloc_buffer(1 << 18).value;
  for (const Case& c : kCases) {
    if (c.page_size < 4096) continue;
    SCOPED_TRACE(c.name);
    auto mr = s.alloc_mr(pd, c.max_pages);
    ASSERT_TRUE(mr.ok()) << mr.msg;
    auto n = s.map_mr_sg(mr.value.handle, at(b.addr, c.els), c.page_size);
    ASSERT_TRUE(n.ok()) << n.msg;
    EXPECT_EQ(n.value, c.mapped);
    auto info = s.mr_info(mr.value.handle);
    if (c.mapped) { EXPECT_EQ(info->sg.size(), c.mapped); }
    EXPECT_TRUE(s.dereg_mr(mr.value.handle).ok());
  }
}

TEST(SgCheck, IndirectEntryRule) {
  std::vector<Sge> sg;
  for (uint32_t i = 0; i < 10; i++) sg.push_back({0x7f0000000000ull + i * 8193, 7 + i, 0});
  const SgMapping m = sg_to_entries(sg, 4);
  EXPECT_EQ(m.mapped, 4u);
  EXPECT_EQ(m.entries, 4u);
  EXPECT_EQ(m.first_break, 4u);
  EXPECT_EQ(m.elements[4].why, uint32_t(SG_BREAK_ENTRY_LIMIT));
  EXPECT_EQ(m.length, 7u + 8 + 9 + 10);
  EXPECT_EQ(sg_to_entries(sg, 10).mapped, 10u);
}

TEST(SgGenerate, PatternsSumAndShape) {
  for (uint32_t p = 0; p <= uint32_t(SgPattern::BlockLayer); p++) {
    const auto pat = static_cast<SgPattern>(p);
    SCOPED_TRACE(sg_pattern_name(pat));
    auto g = sg_generate(pat, 16, 16 * 4096 + 3000, 42);
    ASSERT_TRUE(g.ok()) << g.msg;
    ASSERT_EQ(g.value.size(), 16u);
    uint64_t sum = 0;
    for (size_t i = 0; i < g.value.size(); i++) {
      sum += g.value[i].length;
      EXPECT_GT(g.value[i].length, 0u);
      if (i) { EXPECT_GE(g.value[i].offset, g.value[i - 1].offset + g.value[i - 1].length); }   // in order, no overlap
    }
    EXPECT_EQ(sum, 16u * 4096 + 3000);
    std::vector<Sge> sg;
    for (auto& e : g.value) sg.push_back({0x7f0000000000ull + e.offset, e.length, 0});
    const uint32_t mapped = sg_to_pages(sg, 4096, 1024).mapped;
    switch (pat) {
      case SgPattern::Random: EXPECT_LT(mapped, 16u); break;      // byte aligned: gapped
      case SgPattern::OneByteOff: EXPECT_EQ(mapped, 8u); break;   // element 8 starts one byte into its page
      case SgPattern::Sectors512:
        EXPECT_EQ(sg_to_pages(sg, 512, 1 << 20).mapped, 16u);      // whole sectors: fine at 512 B pages
        break;
      case SgPattern::Aligned4K:
      case SgPattern::BlockLayer: break;                          // the total's odd 3000 bytes end the last element
    }
  }
  auto a = sg_generate(SgPattern::BlockLayer, 8, 8 * 4096, 7);
  std::vector<Sge> sg;
  for (auto& e : a.value) sg.push_back({0x7f0000000000ull + e.offset, e.length, 0});
  EXPECT_EQ(sg_to_pages(sg, 4096, 1024).mapped, 8u);              // what the block layer builds maps whole
  auto al = sg_generate(SgPattern::Aligned4K, 8, 8 * 4096, 7);
  sg.clear();
  for (auto& e : al.value) sg.push_back({0x7f0000000000ull + e.offset, e.length, 0});
  EXPECT_EQ(sg_to_pages(sg, 4096, 1024).mapped, 8u);
  EXPECT_EQ(sg_generate(SgPattern::Random, 4, 4, 1).value.size(), 4u);
  EXPECT_EQ(sg_generate(SgPattern::Aligned4K, 4, 4096, 1).err, EINVAL);   // 4 whole pages do not fit in 4 KiB
  EXPECT_EQ(sg_generate(SgPattern::Random, 0, 100, 1).err, EINVAL);
  SgPattern back;
  EXPECT_TRUE(sg_pattern_from_name("one_byte_off", back));
  EXPECT_EQ(back, SgPattern::OneByteOff);
  EXPECT_FALSE(sg_pattern_from_name("nope", back));
}

namespace {
std::vector<SgElem> gen(SgPattern p, uint32_t n, uint64_t total, uint64_t seed = 5) {
  auto g = sg_generate(p, n, total, seed);
  EXPECT_TRUE(g.ok()) << g.msg;
  return g.value;
}
SgLabResult run(const std::vector<SgElem>& l, SgStrategy st, SgLabConfig cfg = {}) {
  Session s(9);
  s.set_event_capture(false);
  return sg_lab_run(s, l, st, cfg);
}
// A single-key, zero-copy strategy (fast-reg of a list that keeps the rule, indirect): per I/O one registration,
// one invalidation, one key, one remote operation, and the data verified.
void expect_one_key_zero_copy(const SgLabResult& r, uint32_t pairs, uint64_t total) {
  ASSERT_EQ(r.err, 0) << r.msg;
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.c.ios_done, 2 * pairs);
  for (uint64_t v : {r.c.registrations, r.c.invalidations, r.c.keys_on_wire, r.c.remote_ops}) EXPECT_EQ(v, 2u * pairs);
  EXPECT_EQ(r.c.bytes_copied, 0u);
  EXPECT_EQ(r.c.bytes_moved, 2 * pairs * total);
}
}  // namespace

TEST(SgLab, FastRegRefusesAGappedList) {
  const auto l = gen(SgPattern::OneByteOff, 8, 8 * 4096);
  SgLabResult r = run(l, SgStrategy::FastReg);
  EXPECT_EQ(r.err, EINVAL) << r.msg;
  EXPECT_EQ(r.mapped, 4u);
  EXPECT_EQ(r.first_break, 4u);
  EXPECT_EQ(r.break_why, uint32_t(SG_BREAK_START));
  EXPECT_NE(r.msg.find("mapped 4 of 8"), std::string::npos) << r.msg;
  EXPECT_FALSE(r.verified);
  EXPECT_EQ(r.c.ios_done, 0u);
  // the same strategy takes a list that keeps the rule, and moves it byte for byte
  SgLabConfig cfg;
  cfg.ios = 2;
  expect_one_key_zero_copy(run(gen(SgPattern::BlockLayer, 8, 8 * 4096), SgStrategy::FastReg, cfg), 2, 8 * 4096);
}

TEST(SgLab, EveryStrategyMovesAGappedListOrSaysWhyNot) {
  const auto l = gen(SgPattern::Random, 32, 32 * 4096);
  uint64_t total = 0;
  for (auto& e : l) total += e.length;
  SgLabConfig cfg;
  cfg.ios = 2;
  // bounce: two copies per pair (in before the WRITE, out after the READ), one key
  SgLabResult b = run(l, SgStrategy::Bounce, cfg);
  ASSERT_EQ(b.err, 0) << b.msg;
  EXPECT_TRUE(b.verified);
  EXPECT_EQ(b.c.bytes_copied, 2 * 2 * total);
  EXPECT_EQ(b.c.keys_on_wire, 4u);
  EXPECT_EQ(b.c.remote_ops, 4u);
  // several MRs: one key and one remote operation per gap-free run
  SgLabResult m = run(l, SgStrategy::MultiMr, cfg);
  ASSERT_EQ(m.err, 0) << m.msg;
  EXPECT_TRUE(m.verified);
  EXPECT_EQ(m.c.bytes_copied, 0u);
  EXPECT_GT(m.c.keys_on_wire, 4u);
  EXPECT_EQ(m.c.keys_on_wire, m.c.remote_ops);
  EXPECT_EQ(m.c.registrations, m.c.keys_on_wire);
  EXPECT_EQ(m.c.invalidations, m.c.keys_on_wire);
  EXPECT_EQ(m.c.keys_on_wire % 4, 0u);
  // indirect: one key per I/O, no copy, one remote operation
  SgLabResult i = run(l, SgStrategy::Indirect, cfg);
  expect_one_key_zero_copy(i, 2, total);
  EXPECT_GT(i.c.packets, 0u);
  EXPECT_GT(i.c.device_ns, 0u);
  EXPECT_LT(i.c.wrs_posted, m.c.wrs_posted);
  // a 512-byte pool cannot address byte-aligned elements
  SgLabResult p = run(l, SgStrategy::Pool512, cfg);
  EXPECT_EQ(p.err, EINVAL);
  EXPECT_NE(p.msg.find("512-byte page"), std::string::npos) << p.msg;
  // ... but takes whole sectors without registering anything per I/O
  p = run(gen(SgPattern::Sectors512, 32, 32 * 4096), SgStrategy::Pool512, cfg);
  ASSERT_EQ(p.err, 0) << p.msg;
  EXPECT_TRUE(p.verified);
  EXPECT_EQ(p.c.registrations, 0u);
  EXPECT_EQ(p.c.invalidations, 0u);
  EXPECT_EQ(p.c.keys_on_wire, 4u * 32);
}

TEST(SgLab, IndirectNeedsTheProfileAndEnforcesItsEntryLimit) {
  const auto l = gen(SgPattern::Random, 24, 24 * 1000);
  SgLabConfig cfg;
  cfg.profile = "rxe";
  SgLabResult r = run(l, SgStrategy::Indirect, cfg);
  EXPECT_EQ(r.err, EOPNOTSUPP);
  EXPECT_NE(r.msg.find("IB_MR_TYPE_SG_GAPS"), std::string::npos) << r.msg;
  cfg.profile = "cx";
  cfg.max_num_sg = 257;                            // above the cx profile's max_fast_reg_page_list_len
  r = run(l, SgStrategy::Indirect, cfg);
  EXPECT_EQ(r.err, EINVAL);
  EXPECT_NE(r.msg.find("max_num_sg: must be 1..256"), std::string::npos) << r.msg;
  cfg.max_num_sg = 16;                             // 24 elements, 16 entries: the ULP must refuse the I/O
  r = run(l, SgStrategy::Indirect, cfg);
  EXPECT_EQ(r.err, EINVAL);
  EXPECT_EQ(r.mapped, 16u);
  EXPECT_EQ(r.first_break, 16u);
  EXPECT_EQ(r.break_why, uint32_t(SG_BREAK_ENTRY_LIMIT));
  EXPECT_EQ(r.c.ios_done, 0u);
  // sent anyway (the short map ignored): the target's access past the key is refused, nothing lands silently
  cfg.ignore_short_map = true;
  r = run(l, SgStrategy::Indirect, cfg);
  EXPECT_EQ(r.err, EIO) << r.msg;
  EXPECT_EQ(r.wc_status, uint32_t(WC_REM_ACCESS_ERR)) << r.msg;
  EXPECT_FALSE(r.verified);
}

TEST(SgLab, MrPoolRunningDryShrinksTheQueue) {
  const auto l = gen(SgPattern::Random, 16, 16 * 4096);
  SgLabConfig cfg;
  cfg.queue_depth = 8;
  cfg.ios = 16;
  cfg.mr_pool = 1024;
  SgLabResult full = run(l, SgStrategy::MultiMr, cfg);
  ASSERT_EQ(full.err, 0) << full.msg;
  EXPECT_EQ(full.c.max_in_flight, 8u);
  EXPECT_EQ(full.c.pool_waits, 0u);
  const uint32_t runs = static_cast<uint32_t>(full.c.keys_on_wire / 32);
  cfg.mr_pool = 2 * runs;                          // room for two I/Os' keys
  SgLabResult dry = run(l, SgStrategy::MultiMr, cfg);
  ASSERT_EQ(dry.err, 0) << dry.msg;
  EXPECT_TRUE(dry.verified);
  EXPECT_EQ(dry.c.max_in_flight, 2u);
  EXPECT_GT(dry.c.pool_waits, 0u);
  EXPECT_GT(dry.c.device_ns, full.c.device_ns);   // the same work, less of it in flight
  cfg.mr_pool = runs - 1;                          // not even one I/O fits
  SgLabResult none = run(l, SgStrategy::MultiMr, cfg);
  EXPECT_EQ(none.err, ENOMEM);
}

TEST(SgLab, RefusesBadConfiguration) {
  const auto l = gen(SgPattern::Aligned4K, 2, 8192);
  SgLabConfig cfg;
  cfg.queue_depth = 0;
  EXPECT_EQ(run(l, SgStrategy::FastReg, cfg).err, EINVAL);
  cfg = {};
  cfg.profile = "nope";
  EXPECT_EQ(run(l, SgStrategy::FastReg, cfg).err, EINVAL);
  EXPECT_EQ(run({}, SgStrategy::FastReg).err, EINVAL);
  cfg = {};
  cfg.profile = "minimal";                         // no MEM_MGT_EXTENSIONS: no fast registration at all
  EXPECT_EQ(run(l, SgStrategy::FastReg, cfg).err, EOPNOTSUPP);
  Session s(1);
  s.set_free_running(true);
  EXPECT_EQ(sg_lab_run(s, l, SgStrategy::FastReg, {}).err, EBUSY);
}
