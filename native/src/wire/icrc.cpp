// ICRC, exactly as docs/wire.md 1.8: CRC-32 over 8 x 0xFF, the IP header and UDP header with their variant fields set
// to ones, the BTH with byte 4 set to ones, then the rest of the packet up to (not including) the ICRC.
#include <cstring>

#include "vl/wire.h"
#include "wire/be.h"

namespace vl::wire {
using namespace detail;

namespace {

constexpr size_t kSmallIcrc = 512;              // packets up to this size take the single-buffer path

// Masked pseudo-header for a Framing: LRH stand-in + IP + UDP. Returns its length (36 for IPv4, 56 for IPv6).
size_t masked_prefix(const Framing& f, size_t udp_payload_len, uint8_t* b) {
  std::memset(b, 0xFF, 8);
  uint8_t* ip = b + 8;
  const uint16_t udp_len = uint16_t(8 + udp_payload_len);
  size_t iplen;
  if (!f.ipv6) {
    ip[0] = 0x45;
    ip[1] = 0xFF;                               // TOS masked
    put16(ip + 2, uint16_t(20 + udp_len));
    put16(ip + 4, f.ip_id);
    put16(ip + 6, f.df ? 0x4000 : 0);
    ip[8] = 0xFF;                               // TTL masked
    ip[9] = 17;
    ip[10] = ip[11] = 0xFF;                     // header checksum masked
    std::memcpy(ip + 12, f.src_ip, 4);
    std::memcpy(ip + 16, f.dst_ip, 4);
    iplen = 20;
  } else {
    ip[0] = 0x6F;                               // version 6, traffic class high nibble masked
    ip[1] = ip[2] = ip[3] = 0xFF;               // traffic class low nibble + flow label masked
    put16(ip + 4, udp_len);
    ip[6] = 17;
    ip[7] = 0xFF;                               // hop limit masked
    std::memcpy(ip + 8, f.src_ip, 16);
    std::memcpy(ip + 24, f.dst_ip, 16);
    iplen = 40;
  }
  uint8_t* udp = ip + iplen;
  put16(udp, f.src_port);
  put16(udp + 2, f.dst_port);
  put16(udp + 4, udp_len);
  udp[6] = udp[7] = 0xFF;                       // UDP checksum masked
  return 8 + iplen + 8;
}

}  // namespace

Crc32 icrc_begin(const Framing& f, size_t udp_payload_len, const uint8_t bth[12]) {
  uint8_t b[56 + 12];
  size_t n = masked_prefix(f, udp_payload_len, b);
  std::memcpy(b + n, bth, 12);
  b[n + 4] = 0xFF;                              // FECN/BECN/reserved masked
  Crc32 c;
  c.update(b, n + 12);
  return c;
}

uint32_t icrc(const Framing& f, const uint8_t* udp_payload, size_t len) {
  if (len < 16) return 0;                       // not a RoCEv2 packet; decode() rejects it too
  if (len <= kSmallIcrc) {
    // small packet: masked pseudo-header and packet in one buffer, one CRC call (no per-call reduction overhead)
    uint8_t b[56 + kSmallIcrc];
    size_t n = masked_prefix(f, len, b);
    std::memcpy(b + n, udp_payload, len - 4);
    b[n + 4] = 0xFF;                            // FECN/BECN/reserved masked
    return ~crc32_update(0xFFFFFFFFu, b, n + len - 4);
  }
  Crc32 c = icrc_begin(f, len, udp_payload);
  c.update(udp_payload + 12, len - 16);
  return c.value();
}

bool icrc_ok(const Framing& f, const uint8_t* udp_payload, size_t len) {
  return len >= 16 && icrc(f, udp_payload, len) == get32le(udp_payload + len - 4);
}

uint32_t icrc_from_ip(const uint8_t* ip, size_t len, std::string* err) {
  Framing f;
  const uint8_t* udp_payload = nullptr;
  size_t udp_len = 0;
  if (!parse_ip(ip, len, f, &udp_payload, &udp_len, err)) return 0;
  if (udp_len < 16) {
    if (err) *err = "udp.length: UDP payload of " + std::to_string(udp_len) + " bytes is too short for BTH + ICRC";
    return 0;
  }
  // Use the captured header bytes as they are (masked), not a re-synthesized header: every covered bit counts.
  const size_t iplen = size_t(udp_payload - 8 - ip);
  uint8_t b[8 + 40 + 8 + 12];
  std::memset(b, 0xFF, 8);
  std::memcpy(b + 8, ip, iplen);
  uint8_t* m = b + 8;
  if (iplen == 20) {
    m[1] = 0xFF; m[8] = 0xFF; m[10] = 0xFF; m[11] = 0xFF;
  } else {
    m[0] |= 0x0F; m[1] = m[2] = m[3] = 0xFF; m[7] = 0xFF;
  }
  std::memcpy(b + 8 + iplen, udp_payload - 8, 8);
  b[8 + iplen + 6] = b[8 + iplen + 7] = 0xFF;
  std::memcpy(b + 16 + iplen, udp_payload, 12);
  b[16 + iplen + 4] = 0xFF;
  Crc32 c;
  c.update(b, 16 + iplen + 12);
  c.update(udp_payload + 12, udp_len - 16);
  if (err) err->clear();
  return c.value();
}

}  // namespace vl::wire
