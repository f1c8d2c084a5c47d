// See event_frame.h; the byte layout is documented in app/protocol/eventframe.ts.
#include "event_frame.h"

#include <cstring>
#include <string>
#include <unordered_map>

#include "event_json.h"

namespace vl::frame {
namespace {

constexpr uint64_t kMaxSafe = (1ull << 53) - 1;
// object kinds with a one-byte id (index); others travel as text
const char* const kObjKinds[] = {"", "device", "pd", "buffer", "mr", "mw", "cq", "qp", "srq", "ah", "packet", "session"};
constexpr uint8_t kObjKindOther = 255;

uint8_t obj_kind_id(const std::string& s) {
  for (uint8_t i = 0; i < sizeof(kObjKinds) / sizeof(kObjKinds[0]); i++) if (s == kObjKinds[i]) return i;
  return kObjKindOther;
}

// little-endian appends to the extras area
void put_u16(std::string& x, uint32_t v) { char b[2] = {static_cast<char>(v), static_cast<char>(v >> 8)}; x.append(b, 2); }
void put_u32(std::string& x, uint32_t v) {
  char b[4] = {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
  x.append(b, 4);
}
void put_u64(std::string& x, uint64_t v) { put_u32(x, static_cast<uint32_t>(v)); put_u32(x, static_cast<uint32_t>(v >> 32)); }

template <typename T>
void put_col(uint8_t*& p, const T* v, size_t n) { std::memcpy(p, v, n * sizeof(T)); p += n * sizeof(T); }

}  // namespace

void append_frame(std::vector<uint8_t>& out, const std::vector<Event>& evs) {
  static_assert(sizeof(double) == 8, "IEEE doubles");
  const size_t n = evs.size();
  std::vector<double> f64(6 * n);
  std::vector<uint32_t> u32(3 * n);
  std::vector<uint8_t> u8(3 * n);
  std::string extras;
  // each distinct text once per frame (under a flood a few texts repeat in every frame)
  std::unordered_map<std::string, uint32_t> text_ids;
  std::string strings;
  uint32_t n_strings = 0;
  for (size_t i = 0; i < n; i++) {
    const Event& e = evs[i];
    const uint64_t nums[4] = {e.a, e.b, e.c, e.d};
    f64[i] = static_cast<double>(e.seq);
    f64[n + i] = static_cast<double>(e.time_ns);
    for (int k = 0; k < 4; k++) f64[(2 + k) * n + i] = static_cast<double>(nums[k]);
    u32[i] = e.device;
    u32[n + i] = e.obj;
    const uint8_t ok_id = obj_kind_id(e.obj_kind);
    uint8_t flags = (e.kind != EventKind::KeyCheck || e.ok) ? kOk : 0;
    const bool big = e.a > kMaxSafe || e.b > kMaxSafe || e.c > kMaxSafe || e.d > kMaxSafe;
    const std::string text = json::event_text(e);
    const bool wc = e.kind == EventKind::Cqe || e.kind == EventKind::WqeCompleted;
    if (big) flags |= kBig;
    if (ok_id == kObjKindOther) flags |= kObjKindText;
    if (!text.empty()) flags |= kText;
    if (!e.pkt.empty()) flags |= kPkt;
    if (wc) flags |= kWc;
    uint32_t off = 0xffffffffu;
    if (flags & ~kOk) {
      off = static_cast<uint32_t>(extras.size());
      if (big) for (uint64_t v : nums) put_u64(extras, v);
      if (flags & kObjKindText) { put_u16(extras, static_cast<uint32_t>(e.obj_kind.size())); extras += e.obj_kind; }
      if (flags & kText) {
        auto [it, fresh] = text_ids.try_emplace(text, n_strings);
        if (fresh) { n_strings++; put_u32(strings, static_cast<uint32_t>(text.size())); strings += text; }
        put_u32(extras, it->second);
      }
      if (flags & kPkt) {
        put_u32(extras, static_cast<uint32_t>(e.pkt.size()));
        extras.append(reinterpret_cast<const char*>(e.pkt.data()), e.pkt.size());
        const size_t at = extras.size();
        put_u32(extras, 0);
        json::append_packet_headers(extras, e.pkt);
        const uint32_t len = static_cast<uint32_t>(extras.size() - at - 4);
        for (int k = 0; k < 4; k++) extras[at + k] = static_cast<char>(len >> (8 * k));
      }
      if (wc) {
        const Wc& c = e.wc;
        put_u64(extras, c.wr_id);
        for (uint32_t v : {static_cast<uint32_t>(c.status), static_cast<uint32_t>(c.opcode), c.vendor_err, c.byte_len, c.imm_data,
                           c.invalidated_rkey, c.qp_num, c.src_qp, static_cast<uint32_t>(c.wc_flags), static_cast<uint32_t>(c.pkey_index),
                           static_cast<uint32_t>(c.slid), static_cast<uint32_t>(c.sl), static_cast<uint32_t>(c.dlid_path_bits)})
          put_u32(extras, v);
      }
    }
    u32[2 * n + i] = off;
    u8[i] = static_cast<uint8_t>(e.kind);
    u8[n + i] = ok_id;
    u8[2 * n + i] = flags;
  }
  auto pad8 = [](size_t v) { return (v + 7) & ~static_cast<size_t>(7); };
  const size_t cols = pad8(n * (6 * 8 + 3 * 4 + 3));
  const size_t total = kHeaderBytes + cols + pad8(extras.size()) + pad8(strings.size());
  const size_t base = out.size();
  out.resize(base + total, 0);
  uint8_t* p = out.data() + base;
  const double first = n ? static_cast<double>(evs.front().seq) : 0;
  const uint32_t head[8] = {kMagic, static_cast<uint32_t>(total), static_cast<uint32_t>(n), 0, 0, 0,
                            static_cast<uint32_t>(extras.size()), static_cast<uint32_t>(strings.size())};
  std::memcpy(p, head, sizeof head);   // host order: little-endian on every platform the addon builds for
  std::memcpy(p + 16, &first, 8);
  p += kHeaderBytes;
  put_col(p, f64.data(), f64.size());
  put_col(p, u32.data(), u32.size());
  put_col(p, u8.data(), u8.size());
  std::memcpy(out.data() + base + kHeaderBytes + cols, extras.data(), extras.size());
  std::memcpy(out.data() + base + kHeaderBytes + cols + pad8(extras.size()), strings.data(), strings.size());
}

}  // namespace vl::frame
