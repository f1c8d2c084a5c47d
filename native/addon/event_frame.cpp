// See event_frame.h; the byte layout is documented in app/protocol/eventframe.ts.
#include "event_frame.h"

#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "event_json.h"
#include "vl/names.h"

namespace vl::frame {
namespace {

constexpr uint64_t kMaxSafe = (1ull << 53) - 1;
// object kinds with a one-byte id (vl/names.h kObjKindNames); others travel as text
constexpr uint8_t kObjKindOther = 255;

uint8_t obj_kind_id(const std::string& s) {
  for (const auto& k : kObjKindNames) if (s == k.name) return static_cast<uint8_t>(k.value);
  return kObjKindOther;
}

// little-endian appends to the extras area
void put_u16(std::string& x, uint32_t v) { char b[2] = {static_cast<char>(v), static_cast<char>(v >> 8)}; x.append(b, 2); }
void put_u32(std::string& x, uint32_t v) {
  char b[4] = {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
  x.append(b, 4);
}
void put_u64(std::string& x, uint64_t v) { put_u32(x, static_cast<uint32_t>(v)); put_u32(x, static_cast<uint32_t>(v >> 32)); }

// The event's text as the protocol gives it (an async event without one: the ibv_event_type name), as a view
// into storage that outlives the frame being written.
std::string_view text_of(const Event& e, std::deque<std::string>& made) {
  if (!e.text.empty() || e.kind != EventKind::AsyncEvent) return e.text;
  if (const char* n = name_of(kEventTypeNames, e.a)) return n;
  return made.emplace_back(json::async_event_text(e));
}

template <typename T>
void put_col(uint8_t*& p, const T* v, size_t n) { std::memcpy(p, v, n * sizeof(T)); p += n * sizeof(T); }

}  // namespace

void append_frame(std::vector<uint8_t>& out, const std::vector<Event>& evs, double produced_at_ms) {
  static_assert(sizeof(double) == 8, "IEEE doubles");
  const size_t n = evs.size();
  std::vector<double> f64(6 * n);
  std::vector<uint32_t> u32(3 * n);
  std::vector<uint8_t> u8(3 * n);
  std::string extras;
  // blobs: each distinct text, packet and packet decode once per frame (under a flood a few texts repeat in every
  // frame, and a packet delivered in the same session is both a PacketSent and a PacketReceived event)
  std::unordered_map<std::string_view, uint32_t> blob_ids;   // texts (views into evs / the name tables) -> index
  std::unordered_map<std::string_view, uint32_t> packet_ids;   // packet bytes (views into evs) -> index of the pair
  std::deque<std::string> unnamed;                          // texts made here ("UNKNOWN(n)"), stable for the views
  std::string decode;
  std::string blobs;
  uint32_t n_blobs = 0;
  auto blob = [&](std::string_view b) {
    auto [it, fresh] = blob_ids.try_emplace(b, n_blobs);
    if (fresh) { n_blobs++; put_u32(blobs, static_cast<uint32_t>(b.size())); blobs.append(b.data(), b.size()); }
    return it->second;
  };
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
    const std::string_view text = text_of(e, unnamed);
    const bool wc = e.kind == EventKind::Cqe || e.kind == EventKind::WqeCompleted;
    if (big) flags |= kBig;
    if (ok_id == kObjKindOther) flags |= kObjKindText;
    if (!text.empty()) flags |= kText;
    if (!e.pkt.empty()) flags |= kPkt;
    if (wc) flags |= kWc;
    const bool detail = e.change != Event::kNone || e.key_state != Event::kNone;
    if (detail) flags |= kDetail;
    uint32_t off = 0xffffffffu;
    if (flags & ~kOk) {
      off = static_cast<uint32_t>(extras.size());
      if (big) for (uint64_t v : nums) put_u64(extras, v);
      if (flags & kObjKindText) { put_u16(extras, static_cast<uint32_t>(e.obj_kind.size())); extras += e.obj_kind; }
      if (flags & kText) put_u32(extras, blob(text));
      if (flags & kPkt) {
        // the packet's bytes and, in the next blob, its decoded headers (once per distinct packet)
        const std::string_view bytes(reinterpret_cast<const char*>(e.pkt.data()), e.pkt.size());
        auto found = packet_ids.find(bytes);
        if (found == packet_ids.end()) {
          put_u32(blobs, static_cast<uint32_t>(bytes.size())); blobs.append(bytes.data(), bytes.size());
          decode.clear();
          json::append_packet_headers(decode, e.pkt);
          put_u32(blobs, static_cast<uint32_t>(decode.size())); blobs += decode;
          found = packet_ids.emplace(bytes, n_blobs).first;
          n_blobs += 2;
        }
        put_u32(extras, found->second);
      }
      if (wc) {
        const Wc& c = e.wc;
        put_u64(extras, c.wr_id);
        for (uint32_t v : {static_cast<uint32_t>(c.status), static_cast<uint32_t>(c.opcode), c.vendor_err, c.byte_len, c.imm_data,
                           c.invalidated_rkey, c.qp_num, c.src_qp, static_cast<uint32_t>(c.wc_flags), static_cast<uint32_t>(c.pkey_index),
                           static_cast<uint32_t>(c.slid), static_cast<uint32_t>(c.sl), static_cast<uint32_t>(c.dlid_path_bits)})
          put_u32(extras, v);
      }
      if (detail) { extras += static_cast<char>(e.change); extras += static_cast<char>(e.key_state); }
    }
    u32[2 * n + i] = off;
    u8[i] = static_cast<uint8_t>(e.kind);
    u8[n + i] = ok_id;
    u8[2 * n + i] = flags;
  }
  auto pad8 = [](size_t v) { return (v + 7) & ~static_cast<size_t>(7); };
  const size_t cols = pad8(n * (6 * 8 + 3 * 4 + 3));
  const size_t total = kHeaderBytes + cols + pad8(extras.size()) + pad8(blobs.size());
  const size_t base = out.size();
  out.resize(base + total, 0);
  uint8_t* p = out.data() + base;
  const double first = n ? static_cast<double>(evs.front().seq) : 0;
  const uint32_t head[8] = {kMagic, static_cast<uint32_t>(total), static_cast<uint32_t>(n), 0, 0, 0,
                            static_cast<uint32_t>(extras.size()), static_cast<uint32_t>(blobs.size())};
  std::memcpy(p, head, sizeof head);   // host order: little-endian on every platform the addon builds for
  std::memcpy(p + 16, &first, 8);
  std::memcpy(p + 32, &produced_at_ms, 8);
  p += kHeaderBytes;
  put_col(p, f64.data(), f64.size());
  put_col(p, u32.data(), u32.size());
  put_col(p, u8.data(), u8.size());
  std::memcpy(out.data() + base + kHeaderBytes + cols, extras.data(), extras.size());
  std::memcpy(out.data() + base + kHeaderBytes + cols + pad8(extras.size()), blobs.data(), blobs.size());
}

}  // namespace vl::frame
