// See event_json.h. Written for speed: one growing buffer, a raw write cursor, keys as literals with their
// lengths, numbers with std::to_chars (the autorun flood formats hundreds of thousands of events a second).
#include "event_json.h"

#include <charconv>
#include <cstring>
#include <utility>

#include "vl/names.h"
#include "vl/wire.h"

namespace vl::json {
namespace {

constexpr uint64_t kMaxSafe = (1ull << 53) - 1;
constexpr char kHex[] = "0123456789abcdef";

// Appends to a std::string through a cursor; finish() trims the string to what was written.
class Writer {
 public:
  explicit Writer(std::string& s) : s_(s), used0_(s.size()) {
    s_.resize(used0_ + 1024);
    p_ = s_.data() + used0_;
    e_ = s_.data() + s_.size();
  }
  ~Writer() { s_.resize(static_cast<size_t>(p_ - s_.data())); }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void need(size_t k) { if (static_cast<size_t>(e_ - p_) < k) grow(k); }
  void ch(char c) { need(1); *p_++ = c; }
  void raw(const char* x, size_t n) { need(n); std::memcpy(p_, x, n); p_ += n; }
  template <size_t N> void lit(const char (&x)[N]) { raw(x, N - 1); }
  void num(uint64_t v) { need(24); p_ = std::to_chars(p_, p_ + 24, v).ptr; }
  void u64(uint64_t v) {          // a number up to 2^53-1, else a "0x..." string (as the object path's U64)
    if (v <= kMaxSafe) return num(v);
    need(24); *p_++ = '"'; *p_++ = '0'; *p_++ = 'x'; p_ = std::to_chars(p_, p_ + 18, v, 16).ptr; *p_++ = '"';
  }
  void boolean(bool b) { if (b) lit("true"); else lit("false"); }
  void str(const char* x, size_t n) {
    need(n + 2);
    *p_++ = '"';
    for (size_t i = 0; i < n; i++) {
      unsigned char c = static_cast<unsigned char>(x[i]);
      if (c >= 0x20 && c != '"' && c != '\\') { need(2); *p_++ = static_cast<char>(c); continue; }
      need(8);
      *p_++ = '\\';
      switch (c) {
        case '"': *p_++ = '"'; break;
        case '\\': *p_++ = '\\'; break;
        case '\n': *p_++ = 'n'; break;
        case '\r': *p_++ = 'r'; break;
        case '\t': *p_++ = 't'; break;
        case '\b': *p_++ = 'b'; break;
        case '\f': *p_++ = 'f'; break;
        default: *p_++ = 'u'; *p_++ = '0'; *p_++ = '0'; *p_++ = kHex[c >> 4]; *p_++ = kHex[c & 15];
      }
    }
    ch('"');
  }
  void str(const std::string& x) { str(x.data(), x.size()); }
  void str(const char* x) { str(x, std::strlen(x)); }
  void hex(const uint8_t* b, size_t n) {
    need(2 * n + 2);
    *p_++ = '"';
    for (size_t i = 0; i < n; i++) { *p_++ = kHex[b[i] >> 4]; *p_++ = kHex[b[i] & 15]; }
    *p_++ = '"';
  }

 private:
  void grow(size_t k) {
    const size_t used = static_cast<size_t>(p_ - s_.data());
    size_t want = s_.size() * 2;
    if (want < used + k + 1024) want = used + k + 1024;
    s_.resize(want);
    p_ = s_.data() + used;
    e_ = s_.data() + s_.size();
  }
  std::string& s_;
  size_t used0_;
  char* p_ = nullptr;
  char* e_ = nullptr;
};

// ,"key":  (the leading comma: every field but an object's first)
#define KEY(w, k) (w).lit("," "\"" k "\":")

// a value's name in one of vl/names.h's tables, "UNKNOWN(n)" when it has none (as app/protocol/enums.ts table().name)
template <size_t N> std::string name_or_unknown(const EnumName (&t)[N], uint64_t v) {
  const char* n = name_of(t, v);
  return n ? std::string(n) : "UNKNOWN(" + std::to_string(v) + ")";
}

void wc(Writer& w, const Wc& c) {
  w.lit("{\"wrId\":"); w.u64(c.wr_id);
  KEY(w, "status"); w.num(c.status); KEY(w, "opcode"); w.num(c.opcode); KEY(w, "vendorErr"); w.num(c.vendor_err);
  KEY(w, "byteLen"); w.num(c.byte_len); KEY(w, "immData"); w.num(c.imm_data); KEY(w, "invalidatedRkey"); w.num(c.invalidated_rkey);
  KEY(w, "qpNum"); w.num(c.qp_num); KEY(w, "srcQp"); w.num(c.src_qp); KEY(w, "wcFlags"); w.num(c.wc_flags);
  KEY(w, "pkeyIndex"); w.num(c.pkey_index); KEY(w, "slid"); w.num(c.slid); KEY(w, "sl"); w.num(c.sl);
  KEY(w, "dlidPathBits"); w.num(c.dlid_path_bits);
  KEY(w, "statusName"); w.str(name_or_unknown(kWcStatusNames, c.status));
  KEY(w, "opcodeName"); w.str(name_or_unknown(kWcOpcodeNames, c.opcode));
  KEY(w, "wcFlagsNames"); w.ch('[');
  if (c.wc_flags & 2) w.lit("\"IBV_WC_WITH_IMM\"");
  if (c.wc_flags & 8) { if (c.wc_flags & 2) w.ch(','); w.lit("\"IBV_WC_WITH_INV\""); }
  w.lit("]}");
}

void packet(Writer& w, const std::vector<uint8_t>& bytes, bool with_hex = true) {
  w.lit("{\"len\":"); w.num(bytes.size());
  if (with_hex) { KEY(w, "hex"); w.hex(bytes.data(), bytes.size()); }
  wire::Packet p;
  std::string err;
  if (!wire::decode(bytes.data(), bytes.size(), p, &err)) {
    KEY(w, "error"); w.str(err.empty() ? std::string("malformed packet") : err);
    w.ch('}');
    return;
  }
  const uint32_t m = wire::opcode_mask(p.opcode);
  KEY(w, "opcode"); w.num(p.opcode);
  const char* name = wire::opcode_name(p.opcode);
  KEY(w, "opcodeName"); w.str(name ? name : "unknown");
  KEY(w, "se"); w.boolean(p.se); KEY(w, "mig"); w.boolean(p.mig); KEY(w, "pad"); w.num(p.pad);
  KEY(w, "tver"); w.num(p.tver); KEY(w, "pkey"); w.num(p.pkey); KEY(w, "fecnBecnResv"); w.num(p.fecn_becn_resv);
  KEY(w, "destQp"); w.num(p.dest_qp); KEY(w, "ackReq"); w.boolean(p.ack_req); KEY(w, "psn"); w.num(p.psn);
  if (m & wire::H_RETH) {
    KEY(w, "reth"); w.lit("{\"va\":"); w.u64(p.reth_va); KEY(w, "rkey"); w.num(p.reth_rkey); KEY(w, "dmaLen"); w.num(p.reth_dmalen); w.ch('}');
  }
  if (m & wire::H_AETH) {
    KEY(w, "aeth"); w.lit("{\"syndrome\":"); w.num(p.aeth_syndrome);
    KEY(w, "text"); w.str(wire::syndrome_text(p.aeth_syndrome)); KEY(w, "msn"); w.num(p.aeth_msn); w.ch('}');
  }
  if (m & wire::H_ATOMICETH) {
    KEY(w, "atomicEth"); w.lit("{\"va\":"); w.u64(p.atomic_va); KEY(w, "rkey"); w.num(p.atomic_rkey);
    KEY(w, "swapAdd"); w.u64(p.atomic_swap_add); KEY(w, "compare"); w.u64(p.atomic_compare); w.ch('}');
  }
  if (m & wire::H_ATOMICACKETH) { KEY(w, "atomicAckEth"); w.lit("{\"orig\":"); w.u64(p.atomic_ack_orig); w.ch('}'); }
  if (m & wire::H_IMMDT) { KEY(w, "immdt"); w.num(p.immdt); }
  if (m & wire::H_IETH) { KEY(w, "iethRkey"); w.num(p.ieth_rkey); }
  if (m & wire::H_DETH) { KEY(w, "deth"); w.lit("{\"qkey\":"); w.num(p.deth_qkey); KEY(w, "srcQp"); w.num(p.deth_src_qp); w.ch('}'); }
  KEY(w, "payloadLen"); w.num(p.payload_len);
  KEY(w, "icrc"); w.num(p.icrc);
  w.ch('}');
}

void event(Writer& w, const Event& e) {
  w.lit("{\"seq\":"); w.u64(e.seq);
  KEY(w, "t"); w.u64(e.time_ns);
  KEY(w, "kind"); w.str(event_kind_name(e.kind));
  KEY(w, "device"); w.num(e.device); KEY(w, "obj"); w.num(e.obj);
  KEY(w, "objKind"); w.str(e.obj_kind);
  KEY(w, "a"); w.u64(e.a); KEY(w, "b"); w.u64(e.b); KEY(w, "c"); w.u64(e.c); KEY(w, "d"); w.u64(e.d);
  if (!e.text.empty()) { KEY(w, "text"); w.str(e.text); }
  else if (e.kind == EventKind::AsyncEvent) { KEY(w, "text"); w.str(async_event_text(e)); }
  if (e.kind == EventKind::KeyCheck) { KEY(w, "ok"); w.boolean(e.ok); }
  if (e.change != Event::kNone) { KEY(w, "change"); w.num(e.change); }
  if (e.key_state != Event::kNone) { KEY(w, "keyState"); w.num(e.key_state); }
  if (!e.pkt.empty()) { KEY(w, "pkt"); packet(w, e.pkt); }
  if (e.kind == EventKind::Cqe || e.kind == EventKind::WqeCompleted) { KEY(w, "wc"); wc(w, e.wc); }
  w.ch('}');
}

#undef KEY

}  // namespace

std::string async_event_text(const Event& e) { return name_or_unknown(kEventTypeNames, e.a); }

void append_packet_headers(std::string& out, const std::vector<uint8_t>& bytes) {
  Writer w(out);
  packet(w, bytes, false);
}
const char* event_kind_name(EventKind k) {
  const char* n = name_of(kEventKindNames, static_cast<uint32_t>(k));
  return n ? n : "Unknown";
}

void append_events(std::string& out, const std::vector<Event>& evs) {
  Writer w(out);
  for (size_t i = 0; i < evs.size(); i++) { if (i) w.ch(','); event(w, evs[i]); }
}

}  // namespace vl::json
