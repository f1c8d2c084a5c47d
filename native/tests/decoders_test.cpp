// The payload decoder registry (vl/decoders.h): registration order, replacement by id, removal, and the packet
// events' text naming a claimed payload. The NVMe/RDMA decoder's field-by-field agreement with the TypeScript one
// is app/protocol/decoders-native.test.ts.
#include <cstring>

#include "core_fixture.h"
#include "vl/decoders.h"
#include "vl/wire.h"

using namespace vlt;
namespace d = vl::decode;

namespace {
bool mine(const d::Input& in, d::Decoded& out) {
  if (in.len < 4 || std::memcmp(in.payload, "LAB!", 4) != 0) return false;
  out.summary = "lab message"; out.fields = {{"magic", "LAB!"}};
  return true;
}
bool mine2(const d::Input& in, d::Decoded& out) {
  if (in.len < 4 || std::memcmp(in.payload, "LAB!", 4) != 0) return false;
  out.summary = "lab message v2";
  return true;
}
// a 64-byte NVMe Read SQE (keyed SGL, 8 blocks at LBA 16)
std::vector<uint8_t> read_sqe() {
  std::vector<uint8_t> s(64, 0);
  s[0] = 0x02; s[1] = 0x40; s[2] = 9; s[4] = 1; s[39] = 0x40; s[33] = 0x10; s[35] = 0x34; s[36] = 0x12;
  s[40] = 16; s[48] = 7;
  return s;
}
}  // namespace

TEST(Decoders, RegistryOrderReplaceAndRemove) {
  const auto before = d::decoders().size();
  ASSERT_GE(before, 1u);
  EXPECT_STREQ(d::decoders()[0].id, "nvme-rdma");
  EXPECT_EQ(d::register_decoder({"lab-test", "a test protocol", mine}), before + 1);
  const uint8_t msg[] = {'L', 'A', 'B', '!', 1, 2};
  d::Input in; in.opcode = vl::wire::RC_SEND_ONLY; in.payload = msg; in.len = sizeof msg;
  d::Decoded out;
  ASSERT_TRUE(d::decode_payload(in, out));
  EXPECT_EQ(out.protocol, "lab-test");
  EXPECT_EQ(out.summary, "lab message");
  ASSERT_NE(out.get("magic"), nullptr);
  EXPECT_EQ(d::register_decoder({"lab-test", "v2", mine2}), before + 1);   // same id: replaced in place
  ASSERT_TRUE(d::decode_payload(in, out));
  EXPECT_EQ(out.summary, "lab message v2");
  EXPECT_TRUE(d::unregister_decoder("lab-test"));
  EXPECT_FALSE(d::unregister_decoder("lab-test"));
  EXPECT_FALSE(d::decode_payload(in, out));
  in.len = 0;
  EXPECT_FALSE(d::decode_payload(in, out));                                // empty payloads are nobody's
}

TEST(Decoders, NvmeCommandCapsuleAndResponseNeedsTheProtocol) {
  auto s = read_sqe();
  d::Input in; in.opcode = vl::wire::RC_SEND_ONLY; in.payload = s.data(); in.len = s.size();
  d::Decoded out;
  ASSERT_TRUE(d::decode_payload(in, out));
  EXPECT_EQ(out.summary, "NVMe Read (I/O queue) | Get Log Page (admin queue) CID 9 NSID 1");   // 0x02: both sets
  in.protocol = "nvme-rdma/io";
  ASSERT_TRUE(d::decode_payload(in, out));
  EXPECT_EQ(out.summary, "NVMe Read CID 9 NSID 1 SLBA 16 NLB 8");
  EXPECT_EQ(*out.get("sgl1.key"), "0x00001234");
  EXPECT_EQ(*out.get("sgl1.length"), "4096");
  in.opcode = vl::wire::RC_RDMA_WRITE_ONLY;                                // not the start of a SEND
  EXPECT_FALSE(d::decode_payload(in, out));
  uint8_t cqe[16] = {};
  cqe[12] = 9;
  d::Input r; r.opcode = vl::wire::RC_SEND_ONLY; r.payload = cqe; r.len = 16;
  EXPECT_FALSE(d::decode_payload(r, out));                                 // 16 bytes say nothing by themselves
  r.protocol = "nvme-rdma";
  ASSERT_TRUE(d::decode_payload(r, out));
  EXPECT_EQ(out.summary, "NVMe CQE CID 9 SQHD 0 success");
}

TEST(Decoders, PacketEventTextNamesTheCapsule) {
  Pair p;
  auto s = read_sqe();
  ASSERT_TRUE(p.s.write_memory(p.a.buf.addr, s.data(), s.size()).ok());
  ASSERT_TRUE(p.recv(p.b, 0, 128).ok());
  p.s.drain_events();
  SendWr w; w.wr_id = 1; w.opcode = WR_SEND; w.send_flags = SEND_SIGNALED; w.sg_list = {{p.a.buf.addr, 64, p.a.mr.lkey}};
  EXPECT_EQ(p.send_one(p.a, w).status, WC_SUCCESS);
  std::string text;
  for (const auto& e : p.s.drain_events())
    if (e.kind == EventKind::PacketSent && !e.pkt.empty() && e.pkt[0] == vl::wire::RC_SEND_ONLY) text = e.text;
  EXPECT_EQ(text, std::string(vl::wire::opcode_name(vl::wire::RC_SEND_ONLY)) + ": NVMe Read (I/O queue) | Get Log Page (admin queue) CID 9 NSID 1");
}
