// Scatter-list generators for the SG lab (vl/sg.h): seeded, deterministic, lengths summing to the request size.
#include <algorithm>
#include <cerrno>
#include <random>

#include "vl/sg.h"

namespace vl {

static constexpr uint64_t kPage = 4096, kSector = 512;

static const char* const kPatternNames[] = {"random", "aligned4k", "sectors512", "one_byte_off", "block_layer"};

const char* sg_pattern_name(SgPattern p) {
  const auto i = static_cast<uint32_t>(p);
  return i < 5 ? kPatternNames[i] : "?";
}

bool sg_pattern_from_name(const std::string& name, SgPattern& out) {
  for (uint32_t i = 0; i < 5; i++)
    if (name == kPatternNames[i]) { out = static_cast<SgPattern>(i); return true; }
  return false;
}

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

// `units` units split into n parts of at least one unit each, seeded (each part within 1/4..7/4 of the mean).
static std::vector<uint64_t> split(uint64_t units, uint32_t n, std::mt19937_64& rng) {
  std::vector<uint64_t> w(n);
  uint64_t sum = 0;
  for (auto& x : w) { x = 1 + rng() % 7; sum += x; }
  std::vector<uint64_t> parts(n);
  uint64_t used = 0;
  for (uint32_t i = 0; i < n; i++) {
    parts[i] = 1 + (units - n) * w[i] / sum;
    used += parts[i];
  }
  for (uint32_t i = 0; used < units; i = (i + 1) % n) { parts[i]++; used++; }   // rounding remainder
  return parts;
}

Result<std::vector<SgElem>> sg_generate(SgPattern p, uint32_t n, uint64_t total, uint64_t seed) {
  Result<std::vector<SgElem>> r;
  if (n == 0 || n > 65536) { r.err = EINVAL; r.msg = "n: must be 1..65536"; return r; }
  const bool pages = p == SgPattern::Aligned4K || p == SgPattern::OneByteOff || p == SgPattern::BlockLayer;
  const uint64_t unit = pages ? kPage : p == SgPattern::Sectors512 ? kSector : 1;
  if (total < n * unit) {
    r.err = EINVAL; r.msg = "total: " + std::to_string(total) + " bytes cannot make " + std::to_string(n) + " elements of at least " +
                            std::to_string(unit) + " bytes";
    return r;
  }
  if (total > (64ull << 20)) { r.err = EINVAL; r.msg = "total: at most 64 MiB"; return r; }
  if (p > SgPattern::BlockLayer) { r.err = EINVAL; r.msg = "pattern: unknown"; return r; }
  std::mt19937_64 rng(seed);
  // lengths in units; a total that is not a whole number of units leaves the remainder on the last element
  std::vector<uint64_t> parts = split(total / unit, n, rng);
  std::vector<SgElem>& out = r.value;
  out.resize(n);
  for (uint32_t i = 0; i < n; i++) out[i].length = static_cast<uint32_t>(parts[i] * unit);
  out[n - 1].length += static_cast<uint32_t>(total % unit);
  uint64_t cursor = 0;
  const uint64_t first_off = p == SgPattern::BlockLayer ? kSector * (rng() % 8) : 0;
  for (uint32_t i = 0; i < n; i++) {
    SgElem& e = out[i];
    switch (p) {
      case SgPattern::Random:                      // a fresh page, any byte offset in it
        e.offset = align_up(cursor + 1, kPage) + rng() % kPage;
        break;
      case SgPattern::Aligned4K:
      case SgPattern::OneByteOff:
        e.offset = align_up(cursor, kPage) + kPage;   // one page of gap: discontiguous
        break;
      case SgPattern::Sectors512:
        e.offset = align_up(cursor, kSector) + kSector * (1 + rng() % 7);
        break;
      case SgPattern::BlockLayer:
        e.offset = i == 0 ? first_off : align_up(cursor, kPage) + kPage;
        break;
    }
    cursor = e.offset + e.length;
  }
  if (p == SgPattern::OneByteOff && n >= 2) out[n / 2].offset += 1;   // starts (and so ends) one byte into a page
  if (p == SgPattern::BlockLayer && first_off && n > 1) {   // the first ends on a page boundary, the last early
    out[0].length -= static_cast<uint32_t>(first_off);
    out[n - 1].length += static_cast<uint32_t>(first_off);
  }
  return r;
}

uint64_t sg_span(const std::vector<SgElem>& list) {
  uint64_t end = 0;
  for (auto& e : list) end = std::max(end, e.offset + e.length);
  return end;
}

}  // namespace vl
