// See event_json.h.
#include "event_json.h"

#include <charconv>
#include <utility>

#include "vl/wire.h"

namespace vl::json {
namespace {

Names g_names;
bool g_have = false;
constexpr uint64_t kMaxSafe = (1ull << 53) - 1;

void str(std::string& o, const std::string& s) {
  static const char* hex = "0123456789abcdef";
  o += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      case '\b': o += "\\b"; break;
      case '\f': o += "\\f"; break;
      default:
        if (c < 0x20) { o += "\\u00"; o += hex[c >> 4]; o += hex[c & 15]; }
        else o += static_cast<char>(c);
    }
  }
  o += '"';
}
void num(std::string& o, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  o.append(buf, r.ptr);
}
// 64-bit values: a number up to 2^53-1, else a "0x..." string (as the object path's U64)
void u64(std::string& o, uint64_t v) {
  if (v <= kMaxSafe) return num(o, v);
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
  o += "\"0x"; o.append(buf, r.ptr); o += '"';
}
void key(std::string& o, const char* k) { o += '"'; o += k; o += "\":"; }
void kv(std::string& o, const char* k, uint64_t v) { o += ','; key(o, k); num(o, v); }
void kb(std::string& o, const char* k, bool v) { o += ','; key(o, k); o += v ? "true" : "false"; }
std::string name_of(const std::unordered_map<uint32_t, std::string>& t, uint32_t v) {
  auto it = t.find(v);
  return it != t.end() ? it->second : "UNKNOWN(" + std::to_string(v) + ")";
}

void append_wc(std::string& o, const Wc& w) {
  o += '{'; key(o, "wrId"); u64(o, w.wr_id);
  kv(o, "status", w.status); kv(o, "opcode", w.opcode); kv(o, "vendorErr", w.vendor_err); kv(o, "byteLen", w.byte_len);
  kv(o, "immData", w.imm_data); kv(o, "invalidatedRkey", w.invalidated_rkey); kv(o, "qpNum", w.qp_num);
  kv(o, "srcQp", w.src_qp); kv(o, "wcFlags", w.wc_flags); kv(o, "pkeyIndex", w.pkey_index); kv(o, "slid", w.slid);
  kv(o, "sl", w.sl); kv(o, "dlidPathBits", w.dlid_path_bits);
  o += ','; key(o, "statusName"); str(o, name_of(g_names.wc_status, w.status));
  o += ','; key(o, "opcodeName"); str(o, name_of(g_names.wc_opcode, w.opcode));
  o += ','; key(o, "wcFlagsNames"); o += '[';
  bool first = true;
  if (w.wc_flags & 2) { o += "\"IBV_WC_WITH_IMM\""; first = false; }
  if (w.wc_flags & 8) { if (!first) o += ','; o += "\"IBV_WC_WITH_INV\""; }
  o += "]}";
}

}  // namespace

void set_names(Names n) { g_names = std::move(n); g_have = true; }
bool have_names() { return g_have; }

const char* event_kind_name(EventKind k) {
  static const char* names[] = {
      "ObjectCreated", "ObjectDestroyed", "ObjectModified", "WqePosted", "WqeStarted", "WqeCompleted",
      "PacketSent", "PacketReceived", "PacketDropped", "KeyCheck", "Cqe", "CqArmed", "CompEvent",
      "AsyncEvent", "QpState", "MemWrite", "Timer", "Fault", "Log"};
  auto i = static_cast<uint32_t>(k);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "Unknown";
}

void append_packet(std::string& o, const std::vector<uint8_t>& bytes) {
  static const char* d = "0123456789abcdef";
  o += '{'; key(o, "len"); num(o, bytes.size());
  o += ','; key(o, "hex"); o += '"';
  const size_t at = o.size();
  o.resize(at + 2 * bytes.size());
  char* h = &o[at];
  for (uint8_t b : bytes) { *h++ = d[b >> 4]; *h++ = d[b & 15]; }
  o += '"';
  wire::Packet p;
  std::string err;
  if (!wire::decode(bytes.data(), bytes.size(), p, &err)) {
    o += ','; key(o, "error"); str(o, err.empty() ? std::string("malformed packet") : err);
    o += '}';
    return;
  }
  const uint32_t m = wire::opcode_mask(p.opcode);
  kv(o, "opcode", p.opcode);
  const char* name = wire::opcode_name(p.opcode);
  o += ','; key(o, "opcodeName"); str(o, name ? name : "unknown");
  kb(o, "se", p.se); kb(o, "mig", p.mig); kv(o, "pad", p.pad); kv(o, "tver", p.tver); kv(o, "pkey", p.pkey);
  kv(o, "fecnBecnResv", p.fecn_becn_resv); kv(o, "destQp", p.dest_qp); kb(o, "ackReq", p.ack_req); kv(o, "psn", p.psn);
  if (m & wire::H_RETH) {
    o += ','; key(o, "reth"); o += '{'; key(o, "va"); u64(o, p.reth_va); kv(o, "rkey", p.reth_rkey); kv(o, "dmaLen", p.reth_dmalen); o += '}';
  }
  if (m & wire::H_AETH) {
    o += ','; key(o, "aeth"); o += '{'; key(o, "syndrome"); num(o, p.aeth_syndrome);
    o += ','; key(o, "text"); str(o, wire::syndrome_text(p.aeth_syndrome)); kv(o, "msn", p.aeth_msn); o += '}';
  }
  if (m & wire::H_ATOMICETH) {
    o += ','; key(o, "atomicEth"); o += '{'; key(o, "va"); u64(o, p.atomic_va); kv(o, "rkey", p.atomic_rkey);
    o += ','; key(o, "swapAdd"); u64(o, p.atomic_swap_add); o += ','; key(o, "compare"); u64(o, p.atomic_compare); o += '}';
  }
  if (m & wire::H_ATOMICACKETH) { o += ','; key(o, "atomicAckEth"); o += '{'; key(o, "orig"); u64(o, p.atomic_ack_orig); o += '}'; }
  if (m & wire::H_IMMDT) kv(o, "immdt", p.immdt);
  if (m & wire::H_IETH) kv(o, "iethRkey", p.ieth_rkey);
  if (m & wire::H_DETH) {
    o += ','; key(o, "deth"); o += '{'; key(o, "qkey"); num(o, p.deth_qkey); kv(o, "srcQp", p.deth_src_qp); o += '}';
  }
  kv(o, "payloadLen", p.payload_len);
  kv(o, "icrc", p.icrc);
  o += '}';
}

void append_event(std::string& o, const Event& e) {
  o += '{'; key(o, "seq"); u64(o, e.seq);
  o += ','; key(o, "t"); u64(o, e.time_ns);
  o += ','; key(o, "kind"); o += '"'; o += event_kind_name(e.kind); o += '"';
  kv(o, "device", e.device); kv(o, "obj", e.obj);
  o += ','; key(o, "objKind"); str(o, e.obj_kind);
  o += ','; key(o, "a"); u64(o, e.a); o += ','; key(o, "b"); u64(o, e.b);
  o += ','; key(o, "c"); u64(o, e.c); o += ','; key(o, "d"); u64(o, e.d);
  if (!e.text.empty()) { o += ','; key(o, "text"); str(o, e.text); }
  else if (e.kind == EventKind::AsyncEvent) { o += ','; key(o, "text"); str(o, name_of(g_names.event_type, static_cast<uint32_t>(e.a))); }
  if (e.kind == EventKind::KeyCheck) kb(o, "ok", e.ok);
  if (!e.pkt.empty()) { o += ','; key(o, "pkt"); append_packet(o, e.pkt); }
  if (e.kind == EventKind::Cqe || e.kind == EventKind::WqeCompleted) { o += ','; key(o, "wc"); append_wc(o, e.wc); }
  o += '}';
}

}  // namespace vl::json
