// WireTshark: frames written by our encoder/framer/pcap writer, decoded by Wireshark's dissector and checked by
// native/tests/tshark/icrc_check.lua, a post-dissector that computes the ICRC with no code shared with the device
// (rxe_icrc.c's formulation; docs/wire.md 2.2). Needs tshark on PATH: the test fails if it is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "vl/wire.h"

using namespace vl::wire;

std::string vl_test_file(const std::string& rel, std::string* tried);

namespace {

struct Case {
  std::string what;
  Packet p;
  Framing f;
  std::vector<uint8_t> payload;
  bool corrupt = false;
};

struct Row {
  std::vector<std::string> cols;
};

std::string run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

std::vector<std::vector<std::string>> split_rows(const std::string& s) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    size_t start = 0;
    for (;;) {
      size_t t = line.find('\t', start);
      cols.push_back(line.substr(start, t == std::string::npos ? std::string::npos : t - start));
      if (t == std::string::npos) break;
      start = t + 1;
    }
    rows.push_back(cols);
  }
  return rows;
}

Framing v4(uint16_t sport, uint16_t id) {
  Framing f;
  const uint8_t a[4] = {10, 0, 0, 1}, b[4] = {10, 0, 0, 2};
  std::memcpy(f.src_ip, a, 4);
  std::memcpy(f.dst_ip, b, 4);
  f.src_port = sport;
  f.ip_id = id;
  return f;
}

std::vector<Case> all_cases() {
  std::vector<Case> cs;
  // 1: the docs/wire.md 2.1 example frame
  {
    Case c;
    c.what = "docs/wire.md 2.1 example";
    c.f = v4(49443, 0);
    const char* t = "hello, rdma!\n";
    c.payload.assign(t, t + 13);
    c.p.opcode = RC_RDMA_WRITE_ONLY; c.p.dest_qp = 0x11; c.p.psn = 256; c.p.ack_req = true;
    c.p.reth_va = 0x7f0000001000ull; c.p.reth_rkey = 0x1234; c.p.reth_dmalen = 13;
    cs.push_back(c);
  }
  // one frame of every opcode, payload lengths cycling through every pad value
  std::vector<uint8_t> ops;
  for (int op = 0; op <= 0x17; op++) if (op != 0x15) ops.push_back(uint8_t(op));
  for (int op = 0x20; op <= 0x2B; op++) ops.push_back(uint8_t(op));
  ops.push_back(UD_SEND_ONLY);
  ops.push_back(UD_SEND_ONLY_WITH_IMMEDIATE);
  uint16_t id = 1;
  for (uint8_t op : ops) {
    Case c;
    c.what = opcode_name(op);
    c.f = v4(0xC000 + op, id++);
    const uint32_t m = opcode_mask(op);
    if (m & H_PAYLOAD) c.payload.assign(32 + id % 4, uint8_t(0x40 + op));
    c.p.opcode = op; c.p.dest_qp = 0x100 + op; c.p.psn = (0xFFFFF0u + op) & 0xFFFFFF;  // crosses the 24-bit wrap c.p.ack_req = (m & H_LAST) != 0;
    c.p.se = (m & H_LAST) && (m & H_SEND);
    c.p.reth_va = 0x10000; c.p.reth_rkey = 0xABC; c.p.reth_dmalen = 4096;
    c.p.aeth_syndrome = kAckCreditsInvalid; c.p.aeth_msn = 7;
    c.p.atomic_va = 0x2000; c.p.atomic_rkey = 0x55; c.p.atomic_swap_add = 1; c.p.atomic_compare = 2;
    c.p.atomic_ack_orig = 0x1122334455667788ull; c.p.immdt = 0xCAFEBABE; c.p.ieth_rkey = 0x99;
    c.p.deth_qkey = 0x11111111; c.p.deth_src_qp = 0x22;
    cs.push_back(c);
  }
  // AETH variants: RNR NAK timer 14, NAK PSN sequence error, NAK remote access
  for (uint8_t syn : {uint8_t(0x20 | 14), uint8_t(0x60), uint8_t(0x62)}) {
    Case c;
    c.what = "ACK " + syndrome_text(syn);
    c.f = v4(0xC100, id++);
    c.p.opcode = RC_ACKNOWLEDGE; c.p.dest_qp = 0x22; c.p.psn = 5; c.p.aeth_syndrome = syn; c.p.aeth_msn = 3;
    cs.push_back(c);
  }
  // IPv6 (link-local GIDs as rxe lists them), non-zero traffic class and flow label (masked)
  {
    Case c;
    c.what = "IPv6 RC Send Only";
    c.f.ipv6 = true;
    const uint8_t s[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0, 0, 1};
    const uint8_t d[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0, 0, 2};
    std::memcpy(c.f.src_ip, s, 16);
    std::memcpy(c.f.dst_ip, d, 16);
    c.f.src_port = 54099; c.f.tos = 0x20; c.f.flow_label = 0x12345;
    c.p.opcode = RC_SEND_ONLY; c.p.dest_qp = 0x123; c.p.psn = 1; c.p.ack_req = true;
    c.payload.assign(1025, 0x7b);
    cs.push_back(c);
  }
  // a PMTU-sized data packet at the IPv4 maximum the doc observed (1082-byte frame at PMTU 1024)
  {
    Case c;
    c.what = "RC Send Middle 1024";
    c.f = v4(49441, id++);
    c.p.opcode = RC_SEND_MIDDLE; c.p.dest_qp = 0x11; c.p.psn = 9;
    c.payload.assign(1024, 0x7b);
    cs.push_back(c);
  }
  // last: the 2.1 example with one ICRC bit flipped -> the checker must say "bad"
  {
    Case c = cs.front();
    c.what = "corrupted ICRC";
    c.corrupt = true;
    cs.push_back(c);
  }
  return cs;
}

}  // namespace

TEST(WireTshark, EveryFrameKindDecodesWithGoodIcrc) {
  int st = std::system("command -v tshark >/dev/null 2>&1");
  ASSERT_EQ(st, 0) << "tshark not found on PATH: install tshark (DEBIAN_FRONTEND=noninteractive apt-get install -y tshark)";
  std::string tried;
  const std::string lua = vl_test_file("native/tests/tshark/icrc_check.lua", &tried);
  ASSERT_FALSE(lua.empty()) << "icrc_check.lua not found in the repo. Tried:\n" << tried;

  const auto cases = all_cases();
  const char* tmpd = std::getenv("TMPDIR");
  const std::string base = std::string(tmpd && *tmpd ? tmpd : "/tmp") + "/vl_wire_tshark_" + std::to_string(getpid());
  const std::string pcap = base + ".pcap", errf = base + ".err";
  {
    PcapWriter w;
    std::string err;
    ASSERT_TRUE(w.open(pcap, &err)) << err;
    uint64_t t = 1000000000ull;
    for (const auto& c : cases) {
      Packet p = c.p;
      p.payload = c.payload.empty() ? nullptr : c.payload.data();
      p.payload_len = c.payload.size();
      std::vector<uint8_t> udp, eth;
      encode(p, c.f, udp);
      if (c.corrupt) udp[udp.size() - 4] ^= 0x01;
      frame(c.f, udp.data(), udp.size(), eth);
      w.write(t, eth.data(), eth.size());
      t += 1000000;
    }
    w.close();
    ASSERT_FALSE(w.failed());
  }
  const std::string cmd = "tshark -X lua_script:'" + lua + "' -r '" + pcap +
                          "' -T fields -E separator=/t -e frame.number -e infiniband.bth.opcode -e icrc_check.status"
                          " -e _ws.col.Info -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.bth.padcnt"
                          " -e infiniband.invariant.crc -e icrc_check.value -e icrc_check.expected -e infiniband.aeth.syndrome"
                          " -e frame.protocols 2>'" + errf + "'";
  const std::string out = run(cmd, &st);
  std::string errtext;
  if (FILE* e = std::fopen(errf.c_str(), "r")) {
    char b[512];
    while (std::fgets(b, sizeof b, e)) errtext += b;
    std::fclose(e);
  }
  ASSERT_EQ(st, 0) << "tshark failed:\n" << errtext;
  const auto rows = split_rows(out);
  ASSERT_EQ(rows.size(), cases.size()) << out << errtext;

  for (size_t i = 0; i < cases.size(); i++) {
    const auto& c = cases[i];
    const auto& r = rows[i];
    SCOPED_TRACE("frame " + std::to_string(i + 1) + " (" + c.what + ")");
    ASSERT_EQ(r.size(), 12u) << out;
    EXPECT_EQ(r[0], std::to_string(i + 1));
    EXPECT_EQ(r[1], std::to_string(c.p.opcode)) << "decoded as InfiniBand with our opcode";
    EXPECT_EQ(r[2], c.corrupt ? "bad" : "good") << "icrc_check.lua";
    EXPECT_EQ(r[3].rfind(opcode_name(c.p.opcode), 0), 0u) << "Info column '" << r[3] << "' vs opcode_name '"
                                                          << opcode_name(c.p.opcode) << "'";
    char qp[16];
    std::snprintf(qp, sizeof qp, "0x%06x", c.p.dest_qp);
    EXPECT_EQ(r[4], qp);
    EXPECT_EQ(r[5], std::to_string(c.p.psn));
    EXPECT_EQ(r[6], std::to_string((4 - c.payload.size() % 4) % 4));
    EXPECT_NE(r[11].find(":udp:infiniband"), std::string::npos) << r[11];
    if (!c.corrupt) EXPECT_EQ(r[9], r[7]) << "expected ICRC field vs tshark's Invariant CRC";
    if (opcode_mask(c.p.opcode) & H_AETH) {
      EXPECT_EQ(r[10], std::to_string(c.p.aeth_syndrome));
    }
  }
  // docs/wire.md 2.1: the RDMA WRITE ONLY example frame: CRC value 0x93549c33, on the wire 33 9c 54 93 ("Invariant CRC: 0x339c5493")
  EXPECT_EQ(rows[0][7], "0x339c5493");
  EXPECT_EQ(rows[0][8], "0x93549c33");
  EXPECT_EQ(rows[0][9], "0x339c5493");
  EXPECT_EQ(rows.back()[7], "0x329c5493");                // corrupted: tshark shows the flipped wire value
  EXPECT_EQ(rows.back()[9], "0x339c5493");                // and the checker still expects the right one
  std::printf("[ info ] tshark checked %zu frames\n", rows.size());
  std::remove(pcap.c_str());
  std::remove(errf.c_str());
}
