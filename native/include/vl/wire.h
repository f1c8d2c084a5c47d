// RoCEv2 wire codec: BTH + extension headers + payload + pad + ICRC (docs/wire.md; Linux drivers/infiniband/sw/rxe,
// include/rdma/ib_pack.h; checked against a kernel capture, native/tests/fixtures/rocev2).
// Pure functions, no allocation on the decode path beyond the output struct. No Node dependency.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vl::wire {

constexpr uint16_t kRoceUdpPort = 4791;

// BTH opcodes (byte 0): transport prefix | operation (docs/wire.md 1.3)
enum Opcode : uint8_t {
  RC_SEND_FIRST = 0x00, RC_SEND_MIDDLE = 0x01, RC_SEND_LAST = 0x02, RC_SEND_LAST_WITH_IMMEDIATE = 0x03,
  RC_SEND_ONLY = 0x04, RC_SEND_ONLY_WITH_IMMEDIATE = 0x05, RC_RDMA_WRITE_FIRST = 0x06,
  RC_RDMA_WRITE_MIDDLE = 0x07, RC_RDMA_WRITE_LAST = 0x08, RC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09,
  RC_RDMA_WRITE_ONLY = 0x0A, RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B, RC_RDMA_READ_REQUEST = 0x0C,
  RC_RDMA_READ_RESPONSE_FIRST = 0x0D, RC_RDMA_READ_RESPONSE_MIDDLE = 0x0E, RC_RDMA_READ_RESPONSE_LAST = 0x0F,
  RC_RDMA_READ_RESPONSE_ONLY = 0x10, RC_ACKNOWLEDGE = 0x11, RC_ATOMIC_ACKNOWLEDGE = 0x12,
  RC_COMPARE_SWAP = 0x13, RC_FETCH_ADD = 0x14, RC_SEND_LAST_WITH_INVALIDATE = 0x16,
  RC_SEND_ONLY_WITH_INVALIDATE = 0x17,
  UC_BASE = 0x20, UD_SEND_ONLY = 0x64, UD_SEND_ONLY_WITH_IMMEDIATE = 0x65,
};
// header presence bits for an opcode
enum HdrMask : uint32_t {
  H_RETH = 1, H_AETH = 2, H_ATOMICETH = 4, H_ATOMICACKETH = 8, H_IMMDT = 16, H_IETH = 32, H_DETH = 64,
  H_PAYLOAD = 128,                               // opcode may carry payload
  H_FIRST = 256, H_MIDDLE = 512, H_LAST = 1024, H_ONLY = H_FIRST | H_LAST,
  H_REQ = 2048, H_RESP = 4096, H_SEND = 8192, H_WRITE = 16384, H_READ = 32768, H_ATOMIC = 65536,
};
uint32_t opcode_mask(uint8_t opcode);            // 0 for unknown/reserved opcodes
const char* opcode_name(uint8_t opcode);         // Wireshark-like: "RC RDMA Write Only"

// AETH syndrome helpers (docs/wire.md 1.5)
enum AethType : uint8_t { AETH_ACK = 0, AETH_RNR_NAK = 1, AETH_RESERVED = 2, AETH_NAK = 3 };
enum NakCode : uint8_t { NAK_PSN_SEQ_ERR = 0, NAK_INVALID_REQUEST = 1, NAK_REMOTE_ACCESS_ERROR = 2, NAK_REMOTE_OP_ERROR = 3 };
constexpr uint8_t kAckCreditsInvalid = 0x1F;
std::string syndrome_text(uint8_t syndrome);    // "ACK credits=invalid", "RNR NAK timer 1.28 ms", "NAK Remote Access Error"
double rnr_timer_ms(uint8_t code);              // 0 -> 655.36

struct Packet {
  // BTH
  uint8_t opcode = 0; bool se = false, mig = false; uint8_t pad = 0; uint8_t tver = 0; uint16_t pkey = 0xFFFF;
  uint8_t fecn_becn_resv = 0; uint32_t dest_qp = 0; bool ack_req = false; uint32_t psn = 0;
  // extension headers (valid when opcode_mask says so)
  uint64_t reth_va = 0; uint32_t reth_rkey = 0, reth_dmalen = 0;
  uint8_t aeth_syndrome = 0; uint32_t aeth_msn = 0;
  uint64_t atomic_va = 0; uint32_t atomic_rkey = 0; uint64_t atomic_swap_add = 0, atomic_compare = 0;
  uint64_t atomic_ack_orig = 0;
  uint32_t immdt = 0; uint32_t ieth_rkey = 0;
  uint32_t deth_qkey = 0, deth_src_qp = 0;
  // payload (without pad); on decode, a view into the input buffer
  const uint8_t* payload = nullptr; size_t payload_len = 0;
  uint32_t icrc = 0;                            // numeric CRC value (wire bytes are little-endian)
};

// IP/UDP framing the ICRC covers (docs/wire.md 1.8). For in-process traffic the session uses synthetic but
// consistent addresses taken from the devices' IPv4-mapped GIDs.
struct Framing {
  bool ipv6 = false;
  uint8_t src_ip[16] = {}, dst_ip[16] = {};    // IPv4 in the first 4 bytes when !ipv6
  uint16_t src_port = 0xC000, dst_port = kRoceUdpPort;
  uint16_t ip_id = 0; uint8_t ttl = 64; uint8_t tos = 0; uint32_t flow_label = 0;
  bool df = true;                              // IPv4 Don't Fragment (covered by the ICRC); rxe sets it
};

// CRC-32, IEEE 802.3 / zlib parameters (docs/wire.md 1.8 step 2). crc32(p, n) == zlib.crc32(p); chaining works like
// zlib: crc32(b, nb, crc32(a, na)) == crc32(a+b). Picks at run time: VPCLMULQDQ+AVX-512 folding, else VPCLMULQDQ+AVX2, else PCLMULQDQ
// folding, else slice-by-8 tables.
uint32_t crc32(const void* data, size_t len, uint32_t crc = 0);
// Raw register form (no inversions): start at 0xFFFFFFFF, feed spans, the CRC is ~state.
uint32_t crc32_update(uint32_t state, const void* data, size_t len);
struct Crc32 {
  uint32_t state = 0xFFFFFFFFu;
  void update(const void* data, size_t len) { state = crc32_update(state, data, len); }
  uint32_t value() const { return ~state; }
};
const char* crc32_impl_name();  // the path crc32() takes: "vpclmulqdq-avx512-fold16", "vpclmulqdq-avx2-fold8", "pclmulqdq-fold4", "slice-by-8"
// Copy + CRC in one pass over the bytes (same result as memcpy then crc32_update); dst and src must not overlap.
uint32_t crc32_copy_update(uint32_t state, void* dst, const void* src, size_t len);

// Bytes of BTH + extension headers for an opcode (12 + ...), 0 for an unknown opcode.
size_t header_len(uint8_t opcode);
// Zero pad bytes after a payload of n bytes, (-n) mod 4 (the BTH PadCnt).
constexpr uint8_t pad_len(size_t n) { return uint8_t((4 - (n & 3)) & 3); }
// The bytes encode() writes for p: BTH + extension headers (a bare BTH for an unknown opcode), payload, pad, ICRC.
size_t encoded_len(const Packet& p);

// Encode BTH..ICRC (the UDP payload) into out (resized, capacity reused). Writes exactly the headers opcode_mask
// names, the payload, zero pad ((-payload_len) mod 4; Packet::pad is ignored) and the ICRC. It does not police
// semantics (an ACK with a payload, an unknown opcode as bare BTH + payload), so tests can build bad packets.
// Lengths go into 16-bit IP/UDP fields: keep payload_len <= 65000 (PMTU is at most 4096).
void encode(const Packet& p, const Framing& f, std::vector<uint8_t>& out);
// The same packet without copying the payload (a sender that gathers it with an iovec): BTH + extension headers into
// hdr (kMaxHeaderLen bytes of room), zero pad + ICRC into tail (8 bytes of room); the ICRC reads the payload in place.
// hdr, payload, tail in that order are the bytes encode() writes. Returns the header length; *tail_len = pad + 4.
constexpr size_t kMaxHeaderLen = 64;
size_t encode_split(const Packet& p, const Framing& f, uint8_t* hdr, uint8_t* tail, size_t* tail_len);
// The ICRC of a packet held in those three pieces: hdr (hl bytes), the payload, the pad (npad bytes, before the ICRC).
uint32_t icrc_split(const Framing& f, const uint8_t* hdr, size_t hl, const uint8_t* payload, size_t payload_len,
                    const uint8_t* pad_bytes, size_t npad);
// Decode a UDP payload (BTH..ICRC). Returns false with err set on a malformed packet. ICRC is not checked.
bool decode(const uint8_t* data, size_t len, Packet& p, std::string* err = nullptr);
// ICRC over IP/UDP/BTH.. as in docs/wire.md 1.8; udp_payload excludes nothing (the last 4 bytes, the ICRC, are skipped).
// Returns 0 when len < 16 (not a RoCEv2 packet).
uint32_t icrc(const Framing& f, const uint8_t* udp_payload, size_t len);
// True when the trailing 4 bytes (little-endian) equal icrc(f, udp_payload, len). rxe drops packets failing this.
bool icrc_ok(const Framing& f, const uint8_t* udp_payload, size_t len);
// Same, from a whole IPv4/IPv6 packet starting at the IP header (for parsing captures).
uint32_t icrc_from_ip(const uint8_t* ip, size_t len, std::string* err = nullptr);
// Incremental ICRC without a contiguous buffer: icrc_begin covers the LRH stand-in, the masked IP/UDP headers
// (lengths derived from udp_payload_len, which includes BTH..ICRC) and the 12-byte BTH with byte 4 masked. Then
// update() with the extension headers, payload and pad, in order, and take value(). Equals icrc(f, buf, len).
Crc32 icrc_begin(const Framing& f, size_t udp_payload_len, const uint8_t bth[12]);

// Parse an Ethernet frame (optionally one 802.1Q tag) / an IP packet down to the UDP payload. Fills the Framing
// (addresses, ports, ID, TTL/hop limit, TOS/traffic class, flow label, DF). The UDP payload is bounded by the UDP
// length (Ethernet padding is ignored). Returns false with err on anything that is not IPv4(no options)/IPv6 + UDP.
bool parse_ip(const uint8_t* ip, size_t len, Framing& f, const uint8_t** udp_payload, size_t* udp_len,
              std::string* err = nullptr);
bool parse_frame(const uint8_t* frame, size_t len, Framing& f, const uint8_t** udp_payload, size_t* udp_len,
                 std::string* err = nullptr, size_t* ip_offset = nullptr);

// Full Ethernet frame around a UDP payload (IPv4: DF per Framing, header checksum computed, UDP checksum 0).
// Without MACs: 02:00 followed by the last four bytes of the IP address (locally administered, deterministic).
void frame(const Framing& f, const uint8_t* udp_payload, size_t len, std::vector<uint8_t>& out,
           const uint8_t src_mac[6] = nullptr, const uint8_t dst_mac[6] = nullptr);

// pcap (LINKTYPE_ETHERNET, microsecond timestamps)
class PcapWriter {
 public:
  PcapWriter() = default;
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;
  bool open(const std::string& path, std::string* err = nullptr);
  void write(uint64_t time_ns, const uint8_t* frame, size_t len);   // no-op when not open
  void close();
  bool is_open() const { return f_ != nullptr; }
  bool failed() const { return failed_; }       // a write or the final flush failed (disk full...)
  ~PcapWriter();
 private:
  void* f_ = nullptr;
  bool failed_ = false;
};
// Reads classic pcap: both byte orders, microsecond (0xa1b2c3d4) and nanosecond (0xa1b23c4d) magic.
// LINKTYPE_ETHERNET only. Refuses truncated records and records larger than the snaplen or 256 KiB.
struct PcapRecord { uint64_t time_ns; std::vector<uint8_t> data; };
bool read_pcap(const std::string& path, std::vector<PcapRecord>& out, std::string* err = nullptr);

}  // namespace vl::wire
