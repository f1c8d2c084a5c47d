// Wire* tests: CRC-32 kernels, ICRC, opcodes, encode/decode, framing, pcap, and the kernel-rxe capture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "vl/wire.h"
#include "wire/crc32_impl.h"

using namespace vl::wire;

std::string vl_test_file(const std::string& rel, std::string* tried);

namespace {

std::vector<uint8_t> random_bytes(std::mt19937_64& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng());
  return v;
}

uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }

// All opcodes the codec knows, from docs/wire.md 1.3.
std::vector<uint8_t> known_opcodes() {
  std::vector<uint8_t> v;
  for (int op = 0; op <= 0x17; op++)
    if (op != 0x15) v.push_back(uint8_t(op));
  for (int op = 0x20; op <= 0x2B; op++) v.push_back(uint8_t(op));
  v.push_back(0x64);
  v.push_back(0x65);
  return v;
}

Framing v4(uint8_t a, uint8_t b, uint16_t sport, uint16_t id) {
  Framing f;
  f.src_ip[0] = 10; f.src_ip[3] = a;
  f.dst_ip[0] = 10; f.dst_ip[3] = b;
  f.src_port = sport;
  f.ip_id = id;
  return f;
}

}  // namespace

// ---------------------------------------------------------------- CRC-32

TEST(WireCrc32, KnownVectors) {
  EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);
  EXPECT_EQ(crc32("", 0), 0u);
  EXPECT_EQ(crc32("a", 1), 0xE8B7BE43u);
  std::vector<uint8_t> zeros(4096, 0);
  EXPECT_EQ(crc32(zeros.data(), zeros.size()), 0xC71C0011u);  // zlib.crc32(bytes(4096))
  const std::string fox = "The quick brown fox jumps over the lazy dog";
  EXPECT_EQ(crc32(fox.data(), fox.size()), 0x414FA339u);
  const std::string impl = crc32_impl_name();
  if (detail::crc32_vpclmul_supported()) {
    EXPECT_EQ(impl, "vpclmulqdq-avx512-fold16");
  } else if (detail::crc32_vpclmul256_supported()) {
    EXPECT_EQ(impl, "vpclmulqdq-avx2-fold8");
  } else if (detail::crc32_pclmul_supported()) {
    EXPECT_EQ(impl, "pclmulqdq-fold4");
  } else {
    EXPECT_EQ(impl, "slice-by-8");
  }
}

TEST(WireCrc32, AllKernelsAgreeWithBitwiseOnRandomSpans) {
  std::mt19937_64 rng(42);
  auto buf = random_bytes(rng, 20000);
  const bool pcl = detail::crc32_pclmul_supported(), vpcl = detail::crc32_vpclmul_supported();
  const bool vpcl256 = detail::crc32_vpclmul256_supported();
  std::vector<uint8_t> dst(20000 + 64);
  for (int i = 0; i < 4000; i++) {
    const size_t off = rng() % 64;
    size_t n = (i < 1100) ? size_t(i) : size_t(rng() % (i % 4 == 0 ? 19000 : 1500));  // every length < 1100
    n = std::min(n, buf.size() - off);
    const uint32_t s = uint32_t(rng());
    const uint32_t ref = detail::crc32_update_bitwise(s, buf.data() + off, n);
    ASSERT_EQ(detail::crc32_update_table(s, buf.data() + off, n), ref) << "table n=" << n << " off=" << off;
    if (pcl) {
      ASSERT_EQ(detail::crc32_update_pclmul(s, buf.data() + off, n), ref) << "pclmul n=" << n << " off=" << off;
    }
    if (vpcl) {
      ASSERT_EQ(detail::crc32_update_vpclmul(s, buf.data() + off, n), ref) << "vpclmul n=" << n << " off=" << off;
    }
    if (vpcl256) {
      ASSERT_EQ(detail::crc32_update_vpclmul256(s, buf.data() + off, n), ref) << "vpclmul256 n=" << n << " off=" << off;
      const size_t doff = (off * 7) % 61;
      std::fill(dst.begin(), dst.end(), uint8_t(0xA5));
      ASSERT_EQ(detail::crc32_copy_update_vpclmul256(s, dst.data() + doff, buf.data() + off, n), ref) << "fused n=" << n;
      ASSERT_TRUE(std::equal(buf.begin() + off, buf.begin() + off + n, dst.begin() + doff)) << "fused copy n=" << n;
      if (doff) { ASSERT_EQ(dst[doff - 1], 0xA5) << "fused copy wrote before dst, n=" << n; }
      ASSERT_EQ(dst[doff + n], 0xA5) << "fused copy wrote past dst + n, n=" << n;
    }
    ASSERT_EQ(crc32_update(s, buf.data() + off, n), ref);
    std::vector<uint8_t> d2(n + 1, 0x5A);
    ASSERT_EQ(crc32_copy_update(s, d2.data(), buf.data() + off, n), ref);
    ASSERT_TRUE(std::equal(buf.begin() + off, buf.begin() + off + n, d2.begin()));
    ASSERT_EQ(d2[n], 0x5A);
  }
  if (!pcl || !vpcl || !vpcl256)
    GTEST_SKIP() << "CPU lacks " << (!pcl ? "PCLMULQDQ" : !vpcl256 ? "VPCLMULQDQ/AVX2" : "VPCLMULQDQ/AVX-512")
                 << ": that kernel could not be checked here (the others were)";
}

TEST(WireCrc32, IncrementalEqualsOneShot) {
  std::mt19937_64 rng(7);
  auto buf = random_bytes(rng, 9000);
  for (int i = 0; i < 300; i++) {
    const size_t n = rng() % buf.size();
    const uint32_t whole = crc32(buf.data(), n);
    Crc32 c;
    size_t pos = 0;
    while (pos < n) {
      size_t k = std::min(n - pos, size_t(rng() % 300));
      c.update(buf.data() + pos, k);
      pos += k;
    }
    ASSERT_EQ(c.value(), whole);
    const size_t cut = n ? rng() % n : 0;
    ASSERT_EQ(crc32(buf.data() + cut, n - cut, crc32(buf.data(), cut)), whole);
  }
}

// ---------------------------------------------------------------- opcodes, syndromes

TEST(WireOpcodes, NamesAndMasks) {
  EXPECT_STREQ(opcode_name(RC_RDMA_WRITE_ONLY), "RC RDMA Write Only");
  EXPECT_STREQ(opcode_name(RC_ACKNOWLEDGE), "RC Acknowledge");
  EXPECT_STREQ(opcode_name(UD_SEND_ONLY), "UD Send Only");
  EXPECT_STREQ(opcode_name(UC_BASE | 0x0B), "UC RDMA Write Only Immediate");
  EXPECT_STREQ(opcode_name(0x15), "Unknown opcode");
  EXPECT_STREQ(opcode_name(0x2C), "Unknown opcode");  // UC has no READ
  EXPECT_STREQ(opcode_name(0x60), "Unknown opcode");  // UD has only SEND ONLY [IMM]
  EXPECT_STREQ(opcode_name(0x81), "Unknown opcode");  // CNP: not implemented

  const auto known = known_opcodes();
  EXPECT_EQ(known.size(), 37u);  // 23 RC + 12 UC + 2 UD
  for (int op = 0; op < 256; op++) {
    bool is_known = std::find(known.begin(), known.end(), uint8_t(op)) != known.end();
    EXPECT_EQ(opcode_mask(uint8_t(op)) != 0, is_known) << "opcode " << op;
    EXPECT_EQ(header_len(uint8_t(op)) != 0, is_known) << "opcode " << op;
  }
  EXPECT_EQ(opcode_mask(RC_RDMA_WRITE_ONLY), unsigned(H_RETH | H_PAYLOAD | H_ONLY | H_REQ | H_WRITE));
  EXPECT_EQ(opcode_mask(RC_RDMA_READ_REQUEST) & H_PAYLOAD, 0u);
  EXPECT_EQ(opcode_mask(RC_RDMA_READ_RESPONSE_MIDDLE) & H_AETH, 0u);
  EXPECT_EQ(opcode_mask(UD_SEND_ONLY_WITH_IMMEDIATE), unsigned(H_DETH | H_IMMDT | H_PAYLOAD | H_ONLY | H_REQ | H_SEND));
  EXPECT_EQ(opcode_mask(0x28), opcode_mask(RC_RDMA_WRITE_LAST));  // UC shares RC's operation bits
  EXPECT_EQ(header_len(RC_SEND_MIDDLE), 12u);
  EXPECT_EQ(header_len(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE), 12u + 16 + 4);
  EXPECT_EQ(header_len(RC_ATOMIC_ACKNOWLEDGE), 12u + 4 + 8);
  EXPECT_EQ(header_len(RC_COMPARE_SWAP), 12u + 28);
  EXPECT_EQ(header_len(UD_SEND_ONLY_WITH_IMMEDIATE), 12u + 8 + 4);
  EXPECT_EQ(header_len(RC_SEND_ONLY_WITH_INVALIDATE), 12u + 4);
}

TEST(WireOpcodes, SyndromesAndRnrTimer) {
  EXPECT_EQ(syndrome_text(0x1F), "ACK credits=invalid");
  EXPECT_EQ(syndrome_text(0x00), "ACK credits=0");
  EXPECT_EQ(syndrome_text(0x05), "ACK credits=6");
  EXPECT_EQ(syndrome_text(0x1E), "ACK credits=32768");
  EXPECT_EQ(syndrome_text(0x20 | 14), "RNR NAK timer 1.28 ms");
  EXPECT_EQ(syndrome_text(0x20), "RNR NAK timer 655.36 ms");
  EXPECT_EQ(syndrome_text(0x60), "NAK PSN Sequence Error");
  EXPECT_EQ(syndrome_text(0x61), "NAK Invalid Request");
  EXPECT_EQ(syndrome_text(0x62), "NAK Remote Access Error");
  EXPECT_EQ(syndrome_text(0x63), "NAK Remote Operational Error");
  EXPECT_EQ(syndrome_text(0x65), "NAK reserved code 5");
  EXPECT_EQ(syndrome_text(0x40), "Reserved syndrome 0x40");
  EXPECT_EQ(syndrome_text(0x9F), "Reserved syndrome 0x9F");
  const double table[32] = {655.36, 0.01,  0.02,  0.03,  0.04,  0.06,  0.08,   0.12,   0.16,   0.24,   0.32,
                            0.48,   0.64,  0.96,  1.28,  1.92,  2.56,  3.84,   5.12,   7.68,   10.24,  15.36,
                            20.48,  30.72, 40.96, 61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52};
  for (int i = 0; i < 32; i++) EXPECT_DOUBLE_EQ(rnr_timer_ms(uint8_t(i)), table[i]) << i;
  // from code 2 on the series is 0.01 ms x {2,3,4,6,8,12,16,...}: each value doubles two codes later
  for (int i = 4; i < 32; i++) EXPECT_NEAR(rnr_timer_ms(uint8_t(i)) / rnr_timer_ms(uint8_t(i - 2)), 2.0, 1e-9) << i;
}

// ---------------------------------------------------------------- docs/wire.md 2.1 example

// The design doc's example frame. The doc fixes opcode, QP, PSN, A, RETH and the 13-byte length; the framing and
// payload it used were recovered by search and confirmed with tshark + icrc_check.lua (see WireTshark tests):
// 10.0.0.1 -> 10.0.0.2, IPv4 ID 0, DF, UDP source port 49443, payload "hello, rdma!\n".
TEST(WireExample, RdmaWriteOnlyIcrcMatchesDesignDoc) {
  Framing f = v4(1, 2, 49443, 0);
  const char* text = "hello, rdma!\n";
  Packet p;
  p.opcode = RC_RDMA_WRITE_ONLY;
  p.dest_qp = 0x11;
  p.psn = 256;
  p.ack_req = true;
  p.reth_va = 0x7f0000001000ull;
  p.reth_rkey = 0x1234;
  p.reth_dmalen = 13;
  p.payload = reinterpret_cast<const uint8_t*>(text);
  p.payload_len = 13;
  std::vector<uint8_t> udp;
  encode(p, f, udp);
  ASSERT_EQ(udp.size(), 12u + 16 + 13 + 3 + 4);
  EXPECT_EQ((udp[1] >> 4) & 3, 3);                          // PadCnt 3
  EXPECT_EQ(udp[12 + 16 + 13], 0); EXPECT_EQ(udp[12 + 16 + 14], 0); EXPECT_EQ(udp[12 + 16 + 15], 0);
  EXPECT_EQ(icrc(f, udp.data(), udp.size()), 0x93549C33u);
  const uint8_t wire[4] = {0x33, 0x9c, 0x54, 0x93};
  EXPECT_EQ(std::memcmp(udp.data() + udp.size() - 4, wire, 4), 0);

  std::vector<uint8_t> eth;
  frame(f, udp.data(), udp.size(), eth);
  ASSERT_EQ(eth.size(), 90u);                               // tshark: "RRoCE 90 RC RDMA Write Only"
  EXPECT_EQ(be16(eth.data() + 12), 0x0800);
  const uint8_t* ip = eth.data() + 14;
  EXPECT_EQ(ip[0], 0x45);
  EXPECT_EQ(be16(ip + 2), 76);
  EXPECT_EQ(be16(ip + 6), 0x4000);                          // DF
  EXPECT_EQ(ip[8], 64);
  uint32_t s = 0;
  for (int i = 0; i < 20; i += 2) s += be16(ip + i);
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  EXPECT_EQ(s, 0xFFFFu) << "IPv4 header checksum";
  EXPECT_EQ(be16(ip + 22), kRoceUdpPort);
  EXPECT_EQ(be16(ip + 26), 0) << "UDP checksum";
  std::string err;
  EXPECT_EQ(icrc_from_ip(ip, eth.size() - 14, &err), 0x93549C33u) << err;

  // ICRC coverage: masked fields do not change it, covered ones do
  Framing g = f;
  g.ttl = 1; g.tos = 0xB8;
  EXPECT_EQ(icrc(g, udp.data(), udp.size()), 0x93549C33u);
  g = f; g.ip_id = 1;
  EXPECT_NE(icrc(g, udp.data(), udp.size()), 0x93549C33u);
  g = f; g.src_port = 49441;
  EXPECT_NE(icrc(g, udp.data(), udp.size()), 0x93549C33u);
  auto u2 = udp;
  u2[4] = 0xC0;                                             // FECN/BECN: masked
  EXPECT_EQ(icrc(f, u2.data(), u2.size()), 0x93549C33u);
  u2 = udp;
  u2[udp.size() - 5] = 1;                                   // pad byte: covered
  EXPECT_NE(icrc(f, u2.data(), u2.size()), 0x93549C33u);
  EXPECT_TRUE(icrc_ok(f, udp.data(), udp.size()));
  EXPECT_FALSE(icrc_ok(f, u2.data(), u2.size()));
  EXPECT_FALSE(icrc_ok(g, udp.data(), udp.size()));         // framing differs (source port)
  EXPECT_FALSE(icrc_ok(f, udp.data(), 15));
  for (size_t bit = 0; bit < udp.size() * 8; bit++) {        // any single flipped bit outside byte 4 is caught
    u2 = udp;
    u2[bit / 8] ^= uint8_t(1u << (bit % 8));
    EXPECT_EQ(icrc_ok(f, u2.data(), u2.size()), bit / 8 == 4) << "bit " << bit;
  }
}

TEST(WireIcrc, IncrementalBeginEqualsWhole) {
  std::mt19937_64 rng(3);
  for (bool six : {false, true}) {
    Framing f = v4(5, 6, 0xC123, 77);
    if (six) {
      f.ipv6 = true;
      for (int i = 0; i < 16; i++) { f.src_ip[i] = uint8_t(rng()); f.dst_ip[i] = uint8_t(rng()); }
    }
    for (size_t plen : {0u, 1u, 13u, 1024u, 4096u}) {
      auto payload = random_bytes(rng, plen);
      Packet p;
      p.opcode = RC_RDMA_WRITE_FIRST;
      p.payload = payload.data();
      p.payload_len = plen;
      p.fecn_becn_resv = 0x40;
      std::vector<uint8_t> udp;
      encode(p, f, udp);
      Crc32 c = icrc_begin(f, udp.size(), udp.data());
      c.update(udp.data() + 12, 16);                        // RETH
      c.update(payload.data(), plen);
      const uint8_t zeros[3] = {};
      c.update(zeros, (4 - plen % 4) % 4);
      EXPECT_EQ(c.value(), icrc(f, udp.data(), udp.size()));
      uint32_t wire;
      std::memcpy(&wire, udp.data() + udp.size() - 4, 4);
      EXPECT_EQ(c.value(), wire);                           // x86: little-endian load == numeric value
    }
  }
}

// ---------------------------------------------------------------- encode/decode

namespace {
Packet random_packet(std::mt19937_64& rng, uint8_t op, const std::vector<uint8_t>& payload) {
  Packet p;
  p.opcode = op;
  p.se = rng() & 1; p.mig = rng() & 1; p.pkey = uint16_t(rng());
  p.fecn_becn_resv = uint8_t(rng()); p.dest_qp = uint32_t(rng()) & 0xFFFFFF; p.ack_req = rng() & 1;
  p.psn = uint32_t(rng()) & 0xFFFFFF;
  const uint32_t m = opcode_mask(op);
  if (m & H_RETH) { p.reth_va = rng(); p.reth_rkey = uint32_t(rng()); p.reth_dmalen = uint32_t(rng()); }
  if (m & H_AETH) { p.aeth_syndrome = uint8_t(rng()); p.aeth_msn = uint32_t(rng()) & 0xFFFFFF; }
  if (m & H_ATOMICETH) { p.atomic_va = rng(); p.atomic_rkey = uint32_t(rng()); p.atomic_swap_add = rng(); p.atomic_compare = rng(); }
  if (m & H_ATOMICACKETH) p.atomic_ack_orig = rng();
  if (m & H_IMMDT) p.immdt = uint32_t(rng());
  if (m & H_IETH) p.ieth_rkey = uint32_t(rng());
  if (m & H_DETH) { p.deth_qkey = uint32_t(rng()); p.deth_src_qp = uint32_t(rng()) & 0xFFFFFF; }
  p.payload = payload.empty() ? nullptr : payload.data();
  p.payload_len = payload.size();
  return p;
}

void expect_same(const Packet& a, const Packet& b) {
  EXPECT_EQ(a.opcode, b.opcode); EXPECT_EQ(a.se, b.se); EXPECT_EQ(a.mig, b.mig); EXPECT_EQ(a.tver, b.tver);
  EXPECT_EQ(a.pkey, b.pkey); EXPECT_EQ(a.fecn_becn_resv, b.fecn_becn_resv); EXPECT_EQ(a.dest_qp, b.dest_qp);
  EXPECT_EQ(a.ack_req, b.ack_req); EXPECT_EQ(a.psn, b.psn);
  EXPECT_EQ(a.reth_va, b.reth_va); EXPECT_EQ(a.reth_rkey, b.reth_rkey); EXPECT_EQ(a.reth_dmalen, b.reth_dmalen);
  EXPECT_EQ(a.aeth_syndrome, b.aeth_syndrome); EXPECT_EQ(a.aeth_msn, b.aeth_msn);
  EXPECT_EQ(a.atomic_va, b.atomic_va); EXPECT_EQ(a.atomic_rkey, b.atomic_rkey);
  EXPECT_EQ(a.atomic_swap_add, b.atomic_swap_add); EXPECT_EQ(a.atomic_compare, b.atomic_compare);
  EXPECT_EQ(a.atomic_ack_orig, b.atomic_ack_orig); EXPECT_EQ(a.immdt, b.immdt); EXPECT_EQ(a.ieth_rkey, b.ieth_rkey);
  EXPECT_EQ(a.deth_qkey, b.deth_qkey); EXPECT_EQ(a.deth_src_qp, b.deth_src_qp);
  ASSERT_EQ(a.payload_len, b.payload_len);
  if (a.payload_len) {
    EXPECT_EQ(std::memcmp(a.payload, b.payload, a.payload_len), 0);
  }
}
}  // namespace

TEST(WireCodec, RoundTripEveryOpcodeEveryPad) {
  std::mt19937_64 rng(11);
  Framing f = v4(1, 2, 0xD000, 9);
  int checked = 0;
  for (uint8_t op : known_opcodes()) {
    const bool has_payload = opcode_mask(op) & H_PAYLOAD;
    std::vector<size_t> lens = has_payload ? std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7, 255, 1024, 4093}
                                           : std::vector<size_t>{0};
    for (size_t len : lens) {
      auto payload = random_bytes(rng, len);
      Packet p = random_packet(rng, op, payload);
      std::vector<uint8_t> wire;
      encode(p, f, wire);
      const size_t pad = (4 - len % 4) % 4;
      ASSERT_EQ(wire.size(), header_len(op) + len + pad + 4) << opcode_name(op);
      Packet d;
      std::string err;
      ASSERT_TRUE(decode(wire.data(), wire.size(), d, &err)) << opcode_name(op) << " len " << len << ": " << err;
      EXPECT_EQ(d.pad, pad);
      expect_same(p, d);
      if (len) {
        EXPECT_EQ(d.payload, wire.data() + header_len(op)) << "payload is a view into the input";
      }
      EXPECT_EQ(d.icrc, icrc(f, wire.data(), wire.size()));
      for (size_t i = 0; i < pad; i++) EXPECT_EQ(wire[header_len(op) + len + i], 0) << "pad byte";
      std::vector<uint8_t> again;
      encode(d, f, again);
      EXPECT_EQ(again, wire) << opcode_name(op);
      checked++;
    }
  }
  EXPECT_EQ(checked, 32 * 11 + 5);  // 32 opcodes carry payload; READ request, ACK, atomic ACK, CmpSwap, FetchAdd don't
}

TEST(WireCodec, HeaderFieldPositions) {
  // A UD SEND ONLY with immediate, checked byte by byte against docs/wire.md 1.2/1.4.
  Packet p;
  p.opcode = UD_SEND_ONLY_WITH_IMMEDIATE;
  p.se = true; p.pkey = 0x8001; p.dest_qp = 0xABCDEF; p.ack_req = true; p.psn = 0x123456;
  p.deth_qkey = 0x80010000; p.deth_src_qp = 0x000001; p.immdt = 0xDEADBEEF;
  const uint8_t data[5] = {1, 2, 3, 4, 5};
  p.payload = data; p.payload_len = 5;
  std::vector<uint8_t> w;
  encode(p, Framing{}, w);
  const std::vector<uint8_t> expect = {0x65, 0x80 | 0x30, 0x80, 0x01, 0x00, 0xAB, 0xCD, 0xEF, 0x80, 0x12, 0x34, 0x56,
                                       0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,  // DETH
                                       0xDE, 0xAD, 0xBE, 0xEF,                          // ImmDt
                                       1, 2, 3, 4, 5, 0, 0, 0};
  ASSERT_EQ(w.size(), expect.size() + 4);
  EXPECT_EQ(std::vector<uint8_t>(w.begin(), w.end() - 4), expect);
  // AETH / AtomicAckETH
  Packet a;
  a.opcode = RC_ATOMIC_ACKNOWLEDGE; a.aeth_syndrome = 0x1F; a.aeth_msn = 0x000102; a.atomic_ack_orig = 0x0102030405060708ull;
  encode(a, Framing{}, w);
  ASSERT_EQ(w.size(), 12u + 4 + 8 + 4);
  const std::vector<uint8_t> ack = {0x1F, 0x00, 0x01, 0x02, 1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(std::vector<uint8_t>(w.begin() + 12, w.end() - 4), ack);
  // AtomicETH: VA, R_Key, swap/add, compare
  Packet c;
  c.opcode = RC_COMPARE_SWAP; c.atomic_va = 0x1000; c.atomic_rkey = 0x42; c.atomic_swap_add = 7; c.atomic_compare = 9;
  encode(c, Framing{}, w);
  ASSERT_EQ(w.size(), 12u + 28 + 4);
  EXPECT_EQ(w[12 + 6], 0x10); EXPECT_EQ(w[12 + 11], 0x42); EXPECT_EQ(w[12 + 19], 7); EXPECT_EQ(w[12 + 27], 9);
}

TEST(WireCodec, DecodeRejectsBadInput) {
  Packet p, d;
  std::string err;
  std::vector<uint8_t> w;
  const uint8_t pay[8] = {1, 2, 3, 4, 5, 6, 7, 8};

  EXPECT_FALSE(decode(nullptr, 0, d, &err));
  EXPECT_NE(err.find("too short"), std::string::npos) << err;
  uint8_t b15[15] = {RC_SEND_ONLY};
  EXPECT_FALSE(decode(b15, sizeof b15, d, &err));
  EXPECT_NE(err.find("too short: 15 bytes"), std::string::npos) << err;

  p.opcode = RC_SEND_ONLY; p.payload = pay; p.payload_len = 8;
  encode(p, Framing{}, w);
  w[1] |= 0x01;                                             // TVer 1
  EXPECT_FALSE(decode(w.data(), w.size(), d, &err));
  EXPECT_NE(err.find("bth.tver"), std::string::npos) << err;

  for (uint8_t bad : {uint8_t(0x15), uint8_t(0x18), uint8_t(0x1F), uint8_t(0x2C), uint8_t(0x40), uint8_t(0x64 - 1),
                      uint8_t(0x81), uint8_t(0xFF)}) {
    encode(p, Framing{}, w);
    w[0] = bad;
    EXPECT_FALSE(decode(w.data(), w.size(), d, &err)) << int(bad);
    EXPECT_NE(err.find("bth.opcode"), std::string::npos) << err;
  }

  p.opcode = RC_SEND_ONLY; p.payload_len = 2;               // 2 payload + 2 pad
  encode(p, Framing{}, w);
  w.erase(w.begin() + 12, w.begin() + 14);                  // keep only the 2 pad bytes: pad 2 of 2 is fine
  EXPECT_TRUE(decode(w.data(), w.size(), d, &err)) << err;
  EXPECT_EQ(d.payload_len, 0u);
  w.erase(w.begin() + 12);                                  // 1 byte left but pad count says 2
  EXPECT_FALSE(decode(w.data(), w.size(), d, &err));
  EXPECT_NE(err.find("bth.padcnt"), std::string::npos) << err;

  p = Packet{}; p.opcode = RC_RDMA_WRITE_FIRST;              // RETH truncated
  encode(p, Framing{}, w);
  w.erase(w.begin() + 20, w.begin() + 24);
  EXPECT_FALSE(decode(w.data(), w.size(), d, &err));
  EXPECT_NE(err.find("too short for RC RDMA Write First"), std::string::npos) << err;

  p = Packet{}; p.opcode = RC_ACKNOWLEDGE; p.payload = pay; p.payload_len = 4;  // ACK with a payload
  encode(p, Framing{}, w);
  EXPECT_FALSE(decode(w.data(), w.size(), d, &err));
  EXPECT_NE(err.find("carries no payload"), std::string::npos) << err;
  p.payload_len = 0;
  encode(p, Framing{}, w);
  w[1] |= 0x10;                                             // ACK with pad count 1 and no bytes
  EXPECT_FALSE(decode(w.data(), w.size(), d, &err));
  EXPECT_NE(err.find("carries no payload"), std::string::npos) << err;
}

TEST(WireCodec, NeverReadsOutOfBounds) {
  // Every prefix of every valid packet, plus random garbage: decode must not crash or read past the end
  // (the ASan build checks the reads; each buffer is its own heap allocation of exactly that size).
  std::mt19937_64 rng(5);
  int accepted = 0, rejected = 0;
  for (uint8_t op : known_opcodes()) {
    auto payload = random_bytes(rng, (opcode_mask(op) & H_PAYLOAD) ? 9 : 0);
    Packet p = random_packet(rng, op, payload);
    std::vector<uint8_t> w;
    encode(p, Framing{}, w);
    for (size_t n = 0; n <= w.size(); n++) {
      std::vector<uint8_t> cut(w.begin(), w.begin() + ptrdiff_t(n));
      cut.shrink_to_fit();
      Packet d;
      std::string err;
      bool ok = decode(cut.empty() ? nullptr : cut.data(), n, d, &err);
      if (n < header_len(op) + 4) {
        EXPECT_FALSE(ok) << opcode_name(op) << " n=" << n;
      }
      ok ? accepted++ : rejected++;
      if (!ok) {
        EXPECT_FALSE(err.empty());
      }
      if (ok && d.payload_len) {
        ASSERT_GE(d.payload, cut.data());
        ASSERT_LE(d.payload + d.payload_len + d.pad + 4, cut.data() + n);
      }
    }
  }
  for (int i = 0; i < 20000; i++) {
    auto g = random_bytes(rng, rng() % 80);
    if (g.size() > 1 && (i & 1)) g[1] &= 0x3F;            // TVer 0 half the time so deeper checks run
    Packet d;
    std::string err;
    bool ok = decode(g.empty() ? nullptr : g.data(), g.size(), d, &err);
    if (ok && d.payload_len) {
      ASSERT_LE(d.payload + d.payload_len + d.pad + 4, g.data() + g.size());
    }
    ok ? accepted++ : rejected++;
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(rejected, 100);
}

// ---------------------------------------------------------------- framing / parsing

TEST(WireFrame, Ipv6FrameParsesAndIcrcMatches) {
  Framing f;
  f.ipv6 = true;
  const uint8_t s[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0, 0, 1};
  const uint8_t t[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0, 0, 2};
  std::memcpy(f.src_ip, s, 16);
  std::memcpy(f.dst_ip, t, 16);
  f.src_port = 54099; f.tos = 0x12; f.flow_label = 0xABCDE; f.ttl = 3;
  Packet p;
  p.opcode = RC_SEND_ONLY;
  const uint8_t pay[7] = {7, 6, 5, 4, 3, 2, 1};
  p.payload = pay; p.payload_len = 7;
  std::vector<uint8_t> udp, eth;
  encode(p, f, udp);
  frame(f, udp.data(), udp.size(), eth);
  ASSERT_EQ(eth.size(), 14u + 40 + 8 + udp.size());
  EXPECT_EQ(be16(eth.data() + 12), 0x86DD);
  Framing g;
  const uint8_t* up = nullptr;
  size_t ul = 0;
  std::string err;
  ASSERT_TRUE(parse_frame(eth.data(), eth.size(), g, &up, &ul, &err)) << err;
  EXPECT_TRUE(g.ipv6);
  EXPECT_EQ(std::memcmp(g.src_ip, s, 16), 0);
  EXPECT_EQ(std::memcmp(g.dst_ip, t, 16), 0);
  EXPECT_EQ(g.src_port, 54099); EXPECT_EQ(g.dst_port, kRoceUdpPort);
  EXPECT_EQ(g.tos, 0x12); EXPECT_EQ(g.flow_label, 0xABCDEu); EXPECT_EQ(g.ttl, 3);
  ASSERT_EQ(ul, udp.size());
  EXPECT_EQ(up, eth.data() + 62);
  const uint32_t want = icrc(f, udp.data(), udp.size());
  EXPECT_EQ(icrc_from_ip(eth.data() + 14, eth.size() - 14, &err), want) << err;
  f.tos = 0; f.flow_label = 0; f.ttl = 64;                  // masked in IPv6
  EXPECT_EQ(icrc(f, udp.data(), udp.size()), want);
}

TEST(WireFrame, ParseRejectsNonRoce) {
  Framing f;
  const uint8_t* up;
  size_t ul;
  std::string err;
  std::vector<uint8_t> arp(42, 0);
  arp[12] = 0x08; arp[13] = 0x06;
  EXPECT_FALSE(parse_frame(arp.data(), arp.size(), f, &up, &ul, &err));
  EXPECT_NE(err.find("eth.type"), std::string::npos) << err;
  EXPECT_FALSE(parse_frame(arp.data(), 10, f, &up, &ul, &err));
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;

  Framing v = v4(1, 2, 1000, 1);
  std::vector<uint8_t> udp(20, 0), eth;
  frame(v, udp.data(), udp.size(), eth);
  ASSERT_TRUE(parse_frame(eth.data(), eth.size(), f, &up, &ul, &err)) << err;
  auto bad = eth;
  bad[14] = 0x46;                                           // IHL 6: options
  EXPECT_FALSE(parse_frame(bad.data(), bad.size(), f, &up, &ul, &err));
  EXPECT_NE(err.find("options"), std::string::npos) << err;
  bad = eth;
  bad[14 + 9] = 6;                                          // TCP
  EXPECT_FALSE(parse_frame(bad.data(), bad.size(), f, &up, &ul, &err));
  EXPECT_NE(err.find("ip.proto"), std::string::npos) << err;
  bad = eth;
  bad[14 + 3] += 1;                                         // IP length beyond the capture
  EXPECT_FALSE(parse_frame(bad.data(), bad.size(), f, &up, &ul, &err));
  EXPECT_NE(err.find("ip.len"), std::string::npos) << err;
  bad = eth;
  bad[14 + 25] = 0xFF;                                      // UDP length beyond IP
  EXPECT_FALSE(parse_frame(bad.data(), bad.size(), f, &up, &ul, &err));
  EXPECT_NE(err.find("udp.length"), std::string::npos) << err;
  bad = eth;
  bad[14 + 6] = 0x20;                                       // MF: fragment
  EXPECT_FALSE(parse_frame(bad.data(), bad.size(), f, &up, &ul, &err));
  EXPECT_NE(err.find("fragment"), std::string::npos) << err;
  std::vector<uint8_t> padded = eth;                        // Ethernet padding after the IP packet is ignored
  padded.resize(padded.size() + 6, 0xEE);
  ASSERT_TRUE(parse_frame(padded.data(), padded.size(), f, &up, &ul, &err)) << err;
  EXPECT_EQ(ul, 20u);
  for (size_t n = 0; n < eth.size(); n++) {                // every truncation fails cleanly
    std::vector<uint8_t> cut(eth.begin(), eth.begin() + ptrdiff_t(n));
    EXPECT_FALSE(parse_frame(cut.data(), n, f, &up, &ul, &err)) << n;
  }
}

// ---------------------------------------------------------------- pcap

namespace {
std::string tmp_path(const char* name) {
  const char* d = std::getenv("TMPDIR");
  return std::string(d && *d ? d : "/tmp") + "/vl_wire_" + std::to_string(getpid()) + "_" + name;
}
void put_file(const std::string& p, const std::vector<uint8_t>& b) {
  FILE* f = std::fopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(b.data(), 1, b.size(), f);
  std::fclose(f);
}
std::vector<uint8_t> get_file(const std::string& p) {
  std::vector<uint8_t> b;
  FILE* f = std::fopen(p.c_str(), "rb");
  if (!f) return b;
  int c;
  while ((c = std::fgetc(f)) != EOF) b.push_back(uint8_t(c));
  std::fclose(f);
  return b;
}
void push32(std::vector<uint8_t>& b, uint32_t v, bool big) {
  for (int i = 0; i < 4; i++) b.push_back(uint8_t(big ? v >> (24 - 8 * i) : v >> (8 * i)));
}
void push16(std::vector<uint8_t>& b, uint16_t v, bool big) {
  b.push_back(uint8_t(big ? v >> 8 : v));
  b.push_back(uint8_t(big ? v : v >> 8));
}
std::vector<uint8_t> handmade_pcap(bool big, bool nsec, uint32_t snaplen, uint32_t linktype,
                                   const std::vector<std::pair<uint64_t, std::vector<uint8_t>>>& recs) {
  std::vector<uint8_t> b;
  push32(b, nsec ? 0xA1B23C4D : 0xA1B2C3D4, big);
  push16(b, 2, big); push16(b, 4, big);
  push32(b, 0, big); push32(b, 0, big); push32(b, snaplen, big); push32(b, linktype, big);
  for (auto& [t, d] : recs) {
    push32(b, uint32_t(t / 1000000000), big);
    push32(b, uint32_t(nsec ? t % 1000000000 : t % 1000000000 / 1000), big);
    push32(b, uint32_t(d.size()), big); push32(b, uint32_t(d.size()), big);
    b.insert(b.end(), d.begin(), d.end());
  }
  return b;
}
}  // namespace

TEST(WirePcap, WriteThenReadBack) {
  const std::string path = tmp_path("rw.pcap");
  std::vector<std::vector<uint8_t>> frames = {std::vector<uint8_t>(60, 0xAB), std::vector<uint8_t>(1082, 0x7B), {}};
  {
    PcapWriter w;
    std::string err;
    ASSERT_TRUE(w.open(path, &err)) << err;
    EXPECT_TRUE(w.is_open());
    w.write(1500000000ull * 1000000000ull + 123456789, frames[0].data(), frames[0].size());
    w.write(2000, frames[1].data(), frames[1].size());
    w.write(0, nullptr, 0);
    w.close();
    EXPECT_FALSE(w.failed());
    EXPECT_FALSE(w.is_open());
    w.write(0, frames[0].data(), 1);                        // after close: ignored
  }
  auto raw = get_file(path);
  ASSERT_GE(raw.size(), 24u);
  EXPECT_EQ(raw[0], 0xD4); EXPECT_EQ(raw[1], 0xC3); EXPECT_EQ(raw[2], 0xB2); EXPECT_EQ(raw[3], 0xA1);  // usec, LE
  EXPECT_EQ(raw[20], 1);                                    // LINKTYPE_ETHERNET
  EXPECT_EQ(raw.size(), 24u + 3 * 16 + 60 + 1082);
  std::vector<PcapRecord> recs;
  std::string err;
  ASSERT_TRUE(read_pcap(path, recs, &err)) << err;
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].time_ns, 1500000000ull * 1000000000ull + 123456000);  // microsecond resolution
  EXPECT_EQ(recs[1].time_ns, 2000u);
  for (int i = 0; i < 3; i++) EXPECT_EQ(recs[i].data, frames[i]);
  std::remove(path.c_str());

  PcapWriter bad;
  EXPECT_FALSE(bad.open("/nonexistent-dir/x.pcap", &err));
  EXPECT_NE(err.find("cannot create"), std::string::npos) << err;
  bad.write(0, frames[0].data(), 4);                        // not open: no crash
}

TEST(WirePcap, ReadsBothByteOrdersAndNanoseconds) {
  const std::string path = tmp_path("bo.pcap");
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> recs = {{5000000001ull, {1, 2, 3}}, {7ull * 1000000000 + 999999999, {9}}};
  for (bool big : {false, true})
    for (bool nsec : {false, true}) {
      put_file(path, handmade_pcap(big, nsec, 65535, 1, recs));
      std::vector<PcapRecord> out;
      std::string err;
      ASSERT_TRUE(read_pcap(path, out, &err)) << err;
      ASSERT_EQ(out.size(), 2u);
      EXPECT_EQ(out[0].data, recs[0].second);
      EXPECT_EQ(out[1].data, recs[1].second);
      EXPECT_EQ(out[0].time_ns, nsec ? 5000000001ull : 5000000000ull) << big;
      EXPECT_EQ(out[1].time_ns, nsec ? 7999999999ull : 7999999000ull) << big;
    }
  std::remove(path.c_str());
}

TEST(WirePcap, RefusesBadFiles) {
  const std::string path = tmp_path("bad.pcap");
  std::vector<PcapRecord> out;
  std::string err;
  auto expect_err = [&](const std::vector<uint8_t>& bytes, const std::string& what) {
    put_file(path, bytes);
    EXPECT_FALSE(read_pcap(path, out, &err)) << what;
    EXPECT_NE(err.find(what), std::string::npos) << err;
  };
  auto good = handmade_pcap(false, false, 100, 1, {{1, std::vector<uint8_t>(50, 1)}, {2, std::vector<uint8_t>(60, 2)}});
  expect_err(std::vector<uint8_t>(good.begin(), good.begin() + 10), "file header needs 24");
  expect_err(std::vector<uint8_t>(good.begin(), good.end() - 1), "record 2 at offset 90: truncated record data");
  expect_err(std::vector<uint8_t>(good.begin(), good.begin() + 24 + 16 + 50 + 7), "truncated record header");
  auto ng = good;
  ng[0] = 0x0A; ng[1] = 0x0D; ng[2] = 0x0D; ng[3] = 0x0A;  // pcapng section header
  expect_err(ng, "bad magic");
  expect_err(handmade_pcap(false, false, 100, 1, {{1, std::vector<uint8_t>(101, 0)}}), "oversized record");
  expect_err(handmade_pcap(true, false, 0, 1, {{1, std::vector<uint8_t>(262145, 0)}}), "oversized record");
  expect_err(handmade_pcap(false, false, 100, 113, {}), "link type 113");
  std::remove(path.c_str());
  EXPECT_FALSE(read_pcap(path, out, &err));
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
  // a huge incl_len in a tiny file must be refused, not allocated
  auto huge = handmade_pcap(false, false, 0, 1, {});
  push32(huge, 0, false); push32(huge, 0, false); push32(huge, 0xFFFFFFF0u, false); push32(huge, 0, false);
  expect_err(huge, "oversized record");
  std::remove(path.c_str());
}

// ---------------------------------------------------------------- kernel rxe capture

TEST(WireFixture, KernelRxeCaptureDecodesAndEveryIcrcReproduces) {
  std::string tried;
  const std::string path = vl_test_file("native/tests/fixtures/rocev2/rxe-rc-pingpong-ipv4.pcap", &tried);
  ASSERT_FALSE(path.empty()) << "fixture native/tests/fixtures/rocev2/rxe-rc-pingpong-ipv4.pcap not found. Tried:\n"
                             << tried;
  std::vector<PcapRecord> recs;
  std::string err;
  ASSERT_TRUE(read_pcap(path, recs, &err)) << err;
  EXPECT_EQ(recs.size(), 78u);
  int roce = 0, matched = 0, acks = 0, sends = 0;
  for (size_t i = 0; i < recs.size(); i++) {
    const auto& r = recs[i];
    Framing f;
    const uint8_t* up = nullptr;
    size_t ul = 0;
    size_t ipoff = 0;
    if (!parse_frame(r.data.data(), r.data.size(), f, &up, &ul, &err, &ipoff)) continue;  // ARP, TCP-over-v6...
    if (f.dst_port != kRoceUdpPort) continue;
    roce++;
    Packet p;
    ASSERT_TRUE(decode(up, ul, p, &err)) << "frame " << i + 1 << ": " << err;
    EXPECT_TRUE(p.opcode == RC_SEND_ONLY || p.opcode == RC_ACKNOWLEDGE || (opcode_mask(p.opcode) & H_SEND))
        << opcode_name(p.opcode);
    if (p.opcode == RC_ACKNOWLEDGE) {
      acks++;
      EXPECT_EQ(p.aeth_syndrome, kAckCreditsInvalid);      // rxe always sends 0x1F
    } else {
      sends++;
    }
    EXPECT_FALSE(f.ipv6);
    EXPECT_TRUE(f.df);
    EXPECT_NE(f.ip_id, 0) << "rxe IPv4 IDs are non-zero";
    const uint32_t from_ip = icrc_from_ip(r.data.data() + ipoff, r.data.size() - ipoff, &err);
    const uint32_t from_framing = icrc(f, up, ul);
    EXPECT_EQ(from_ip, p.icrc) << "frame " << i + 1;
    EXPECT_EQ(from_framing, p.icrc) << "frame " << i + 1;
    // our encoder reproduces kernel rxe's UDP payload byte for byte
    std::vector<uint8_t> again;
    encode(p, f, again);
    EXPECT_EQ(again, std::vector<uint8_t>(up, up + ul)) << "frame " << i + 1 << " " << opcode_name(p.opcode);
    // and the whole frame, IPv4 header checksum included (MACs taken from the capture)
    std::vector<uint8_t> fr;
    frame(f, up, ul, fr, r.data.data() + 6, r.data.data());
    EXPECT_EQ(fr, std::vector<uint8_t>(r.data.begin(), r.data.begin() + ptrdiff_t(fr.size()))) << "frame " << i + 1;
    if (from_ip == p.icrc && from_framing == p.icrc) matched++;
  }
  EXPECT_EQ(roce, 50);
  EXPECT_EQ(matched, roce);
  EXPECT_GT(acks, 0);
  EXPECT_GT(sends, 0);
  std::printf("[ info ] %d RoCE frames (%d data, %d ACK), %d ICRCs reproduced\n", roce, sends, acks, matched);
}

TEST(WireCodec, EncodeSplitIsEncodeWithoutTheCopy) {
  // headers + payload (left in place) + pad/ICRC are byte for byte what encode() writes, for every header layout
  Framing f;
  f.src_ip[0] = 10; f.dst_ip[0] = 10; f.dst_ip[3] = 2; f.ip_id = 7;
  std::vector<uint8_t> pay(4096);
  for (size_t i = 0; i < pay.size(); i++) pay[i] = static_cast<uint8_t>(i * 13 + 5);
  const uint8_t ops[] = {RC_RDMA_WRITE_ONLY, RC_RDMA_WRITE_MIDDLE, RC_SEND_LAST_WITH_IMMEDIATE, RC_SEND_ONLY_WITH_INVALIDATE,
                         RC_RDMA_READ_RESPONSE_FIRST, UD_SEND_ONLY_WITH_IMMEDIATE, 0x1f /* reserved: bare BTH */};
  for (uint8_t op : ops)
    for (size_t n : {size_t(0), size_t(1), size_t(3), size_t(1024), size_t(4093), size_t(4096)}) {
      Packet p;
      p.opcode = op; p.dest_qp = 0x123456; p.psn = 0xabcdef; p.ack_req = true; p.se = true;
      p.reth_va = 0x1122334455667788ull; p.reth_rkey = 0x99; p.reth_dmalen = 70000;
      p.aeth_syndrome = 0x1f; p.aeth_msn = 5; p.immdt = 0xdeadbeef; p.ieth_rkey = 0xdeadbeef;
      p.deth_qkey = 0x11111111; p.deth_src_qp = 0x42;
      p.payload = pay.data(); p.payload_len = n;
      std::vector<uint8_t> whole;
      encode(p, f, whole);
      uint8_t hdr[kMaxHeaderLen], tail[8];
      size_t tl = 0;
      const size_t hl = encode_split(p, f, hdr, tail, &tl);
      std::vector<uint8_t> joined(hdr, hdr + hl);
      joined.insert(joined.end(), pay.begin(), pay.begin() + n);
      joined.insert(joined.end(), tail, tail + tl);
      EXPECT_EQ(joined, whole) << "opcode " << int(op) << " payload " << n;
      EXPECT_EQ(tl, 4 + ((4 - (n & 3)) & 3));
      EXPECT_TRUE(icrc_ok(f, joined.data(), joined.size()));
    }
}
