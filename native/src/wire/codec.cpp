// Encode/decode of the RoCEv2 UDP payload: BTH, extension headers, payload, pad, ICRC (docs/wire.md 1.2-1.4, 1.7).
#include <cstring>
#include <string>

#include "vl/wire.h"
#include "wire/be.h"

namespace vl::wire {
using namespace detail;

namespace {

bool fail(std::string* err, std::string msg) {
  if (err) *err = std::move(msg);
  return false;
}
std::string hex2(uint8_t v) {
  static const char d[] = "0123456789abcdef";
  return std::string("0x") + d[v >> 4] + d[v & 15];
}

// Writes BTH + extension headers for p.opcode at out; returns the bytes written. Unknown opcodes get a bare BTH.
size_t put_headers(const Packet& p, uint8_t pad, uint8_t* out) {
  const uint32_t m = opcode_mask(p.opcode);
  uint8_t* q = out;
  q[0] = p.opcode;
  q[1] = uint8_t((p.se ? 0x80 : 0) | (p.mig ? 0x40 : 0) | (pad & 3) << 4 | (p.tver & 0x0F));
  put16(q + 2, p.pkey);
  q[4] = p.fecn_becn_resv;
  put24(q + 5, p.dest_qp);
  q[8] = p.ack_req ? 0x80 : 0;
  put24(q + 9, p.psn);
  q += 12;
  // order on the wire: RETH | AETH | AtomicETH | AtomicAckETH | DETH | ImmDt | IETH (only legal combinations exist)
  if (m & H_DETH) { put32(q, p.deth_qkey); q[4] = 0; put24(q + 5, p.deth_src_qp); q += 8; }
  if (m & H_RETH) { put64(q, p.reth_va); put32(q + 8, p.reth_rkey); put32(q + 12, p.reth_dmalen); q += 16; }
  if (m & H_AETH) { q[0] = p.aeth_syndrome; put24(q + 1, p.aeth_msn); q += 4; }
  if (m & H_ATOMICETH) {
    put64(q, p.atomic_va); put32(q + 8, p.atomic_rkey); put64(q + 12, p.atomic_swap_add); put64(q + 20, p.atomic_compare);
    q += 28;
  }
  if (m & H_ATOMICACKETH) { put64(q, p.atomic_ack_orig); q += 8; }
  if (m & H_IMMDT) { put32(q, p.immdt); q += 4; }
  if (m & H_IETH) { put32(q, p.ieth_rkey); q += 4; }
  return size_t(q - out);
}

}  // namespace

// the headers encode() writes: those the opcode carries, a bare BTH for an unknown opcode
static size_t encoded_header_len(uint8_t opcode) { return opcode_mask(opcode) ? header_len(opcode) : 12; }

size_t encoded_len(const Packet& p) { return encoded_header_len(p.opcode) + p.payload_len + pad_len(p.payload_len) + 4; }

void encode(const Packet& p, const Framing& f, std::vector<uint8_t>& out) {
  const uint8_t pad = pad_len(p.payload_len);
  const size_t hl = encoded_header_len(p.opcode);
  const size_t total = encoded_len(p);
  out.resize(total);
  uint8_t* b = out.data();
  put_headers(p, pad, b);
  std::memset(b + hl + p.payload_len, 0, pad);
  if (p.payload_len < 1024) {
    if (p.payload_len) std::memcpy(b + hl, p.payload, p.payload_len);
    put32le(b + total - 4, icrc(f, b, total));
    return;
  }
  // large payload: copy it into the packet and fold it into the ICRC in the same pass over the (cache-hot) bytes
  Crc32 c = icrc_begin(f, total, b);
  c.update(b + 12, hl - 12);
  c.state = crc32_copy_update(c.state, b + hl, p.payload, p.payload_len);
  c.update(b + hl + p.payload_len, pad);
  put32le(b + total - 4, c.value());
}

size_t encode_split(const Packet& p, const Framing& f, uint8_t* hdr, uint8_t* tail, size_t* tail_len) {
  const uint8_t pad = pad_len(p.payload_len);
  const size_t hl = put_headers(p, pad, hdr);
  std::memset(tail, 0, pad);
  put32le(tail + pad, icrc_split(f, hdr, hl, p.payload, p.payload_len, tail, pad));
  *tail_len = size_t(pad) + 4;
  return hl;
}

uint32_t icrc_split(const Framing& f, const uint8_t* hdr, size_t hl, const uint8_t* payload, size_t payload_len,
                    const uint8_t* pad_bytes, size_t npad) {
  Crc32 c = icrc_begin(f, hl + payload_len + npad + 4, hdr);
  c.update(hdr + 12, hl - 12);
  if (payload_len) c.update(payload, payload_len);
  c.update(pad_bytes, npad);
  return c.value();
}

bool decode(const uint8_t* d, size_t len, Packet& p, std::string* err) {
  p = Packet{};
  if (len < 16) return fail(err, "too short: " + std::to_string(len) + " bytes, a RoCEv2 packet needs at least 16 (BTH + ICRC)");
  p.opcode = d[0];
  p.se = d[1] & 0x80;
  p.mig = d[1] & 0x40;
  p.pad = (d[1] >> 4) & 3;
  p.tver = d[1] & 0x0F;
  p.pkey = get16(d + 2);
  p.fecn_becn_resv = d[4];
  p.dest_qp = get24(d + 5);
  p.ack_req = d[8] & 0x80;
  p.psn = get24(d + 9);
  p.icrc = get32le(d + len - 4);
  if (p.tver != 0) return fail(err, "bth.tver: header version " + std::to_string(p.tver) + ", only 0 is defined");
  const uint32_t m = opcode_mask(p.opcode);
  if (!m) return fail(err, "bth.opcode: unknown or unsupported opcode " + hex2(p.opcode));
  const size_t hl = header_len(p.opcode);
  if (len < hl + 4)
    return fail(err, std::string("too short for ") + opcode_name(p.opcode) + ": " + std::to_string(len) +
                         " bytes, headers and ICRC need " + std::to_string(hl + 4));
  const uint8_t* q = d + 12;
  if (m & H_DETH) { p.deth_qkey = get32(q); p.deth_src_qp = get24(q + 5); q += 8; }
  if (m & H_RETH) { p.reth_va = get64(q); p.reth_rkey = get32(q + 8); p.reth_dmalen = get32(q + 12); q += 16; }
  if (m & H_AETH) { p.aeth_syndrome = q[0]; p.aeth_msn = get24(q + 1); q += 4; }
  if (m & H_ATOMICETH) {
    p.atomic_va = get64(q); p.atomic_rkey = get32(q + 8); p.atomic_swap_add = get64(q + 12); p.atomic_compare = get64(q + 20);
    q += 28;
  }
  if (m & H_ATOMICACKETH) { p.atomic_ack_orig = get64(q); q += 8; }
  if (m & H_IMMDT) { p.immdt = get32(q); q += 4; }
  if (m & H_IETH) { p.ieth_rkey = get32(q); q += 4; }
  const size_t body = len - hl - 4;  // payload + pad
  if (!(m & H_PAYLOAD) && (body != 0 || p.pad != 0))
    return fail(err, std::string(opcode_name(p.opcode)) + " carries no payload, but " + std::to_string(body) +
                         " bytes follow the headers (pad count " + std::to_string(p.pad) + ")");
  if (p.pad > body)
    return fail(err, "bth.padcnt: pad count " + std::to_string(p.pad) + " exceeds the " + std::to_string(body) +
                         " bytes of payload");
  p.payload = body ? q : nullptr;
  p.payload_len = body - p.pad;
  return true;
}

}  // namespace vl::wire
