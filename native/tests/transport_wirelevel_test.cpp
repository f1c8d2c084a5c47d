// Wire-level behaviour observed through the PacketSent events (decoded with the wire codec): A bit placement,
// coalesced ACKs, MSN, READ PSN reservation, segmentation sizes, pad, SE bit.
#include "core_fixture.h"
#include "vl/wire.h"

using namespace vlt;

namespace {
struct Seen { wire::Packet p; Handle dst; std::vector<uint8_t> bytes; };
std::vector<Seen> sent(Session& s) {
  std::vector<Seen> out;
  for (auto& e : s.drain_events()) {
    if (e.kind != EventKind::PacketSent) continue;
    Seen x; x.bytes = e.pkt; x.dst = e.d;
    EXPECT_TRUE(wire::decode(x.bytes.data(), x.bytes.size(), x.p));
    out.push_back(std::move(x));
  }
  return out;
}
}  // namespace

TEST(TransportWire, SegmentationAckRequestAndCoalescedAcks) {
  Pair p("rxe", QPT_RC, 1, 256 * 1024);
  p.s.drain_events();
  ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 100 * 1024 + 3).ok());   // 101 packets at MTU 1024
  p.s.run();
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  auto v = sent(p.s);
  std::vector<wire::Packet> req, acks;
  for (auto& x : v) (x.p.opcode == wire::RC_ACKNOWLEDGE ? acks : req).push_back(x.p);
  ASSERT_EQ(req.size(), 101u);
  EXPECT_EQ(req[0].opcode, wire::RC_RDMA_WRITE_FIRST);
  EXPECT_EQ(req[0].reth_dmalen, 100u * 1024 + 3);
  EXPECT_EQ(req[1].opcode, wire::RC_RDMA_WRITE_MIDDLE);
  EXPECT_EQ(req[100].opcode, wire::RC_RDMA_WRITE_LAST);
  EXPECT_EQ(req[100].payload_len, 3u);
  EXPECT_EQ(req[100].pad, 1);
  for (size_t i = 0; i < 100; i++) EXPECT_EQ(req[i].payload_len, 1024u);
  for (size_t i = 0; i < req.size(); i++) {
    EXPECT_EQ(req[i].psn, 100u + i);                   // sq_psn 100
    EXPECT_EQ(req[i].ack_req, i == 63 || i == 100) << i;   // every 64 packets and on the last
  }
  ASSERT_EQ(acks.size(), 2u);                          // one ACK per A bit, each covering everything before
  EXPECT_EQ(acks[0].psn, 163u);
  EXPECT_EQ(acks[1].psn, 200u);
  EXPECT_EQ(acks[1].aeth_syndrome, 0x1F);
  EXPECT_EQ(acks[1].aeth_msn, 1u);
}

TEST(TransportWire, ReadReservesPsnsAndMsnCounts) {
  Pair p;
  pattern(p.s, p.b.buf.addr, 3000, 1);
  p.s.drain_events();
  SendWr r; r.wr_id = 1; r.opcode = WR_RDMA_READ; r.send_flags = SEND_SIGNALED;
  r.sg_list = {{p.a.buf.addr, 3000, p.a.mr.lkey}}; r.remote_addr = p.b.buf.addr; r.rkey = p.b.mr.rkey;
  SendWr w; w.wr_id = 2; w.opcode = WR_SEND; w.send_flags = SEND_SIGNALED | SEND_SOLICITED; w.sg_list = {{p.a.buf.addr, 10, p.a.mr.lkey}};
  ASSERT_TRUE(p.recv(p.b, 4096, 64, 3).ok());
  ASSERT_TRUE(p.s.post_send(p.a.qp, {r, w}).ok());
  p.s.run();
  ASSERT_EQ(p.poll(p.a.scq).size(), 2u);
  auto v = sent(p.s);
  std::vector<wire::Packet> from_a, from_b;
  for (auto& x : v) (x.dst == p.b.dev ? from_a : from_b).push_back(x.p);
  ASSERT_EQ(from_a.size(), 2u);
  EXPECT_EQ(from_a[0].opcode, wire::RC_RDMA_READ_REQUEST);
  EXPECT_EQ(from_a[0].psn, 100u);
  EXPECT_EQ(from_a[1].opcode, wire::RC_SEND_ONLY);
  EXPECT_EQ(from_a[1].psn, 103u);                      // READ of 3000 bytes reserved PSNs 100..102
  EXPECT_TRUE(from_a[1].se);
  ASSERT_EQ(from_b.size(), 4u);
  EXPECT_EQ(from_b[0].opcode, wire::RC_RDMA_READ_RESPONSE_FIRST);
  EXPECT_EQ(from_b[1].opcode, wire::RC_RDMA_READ_RESPONSE_MIDDLE);
  EXPECT_EQ(from_b[2].opcode, wire::RC_RDMA_READ_RESPONSE_LAST);
  EXPECT_EQ(from_b[2].psn, 102u);
  EXPECT_EQ(from_b[2].payload_len, 3000u - 2048);
  EXPECT_EQ(from_b[0].aeth_msn, 1u);                   // MSN counts the READ on receipt
  EXPECT_EQ(from_b[3].opcode, wire::RC_ACKNOWLEDGE);
  EXPECT_EQ(from_b[3].psn, 103u);
  EXPECT_EQ(from_b[3].aeth_msn, 2u);
}

TEST(TransportWire, BadIcrcIsDropped) {
  // A receiver drops a packet whose ICRC does not match: simulate by comparing the codec's check on a
  // sent packet with one flipped bit (the device uses the same check on every received packet).
  Pair p;
  p.s.drain_events();
  ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 100).ok());
  p.s.run();
  auto v = sent(p.s);
  ASSERT_FALSE(v.empty());
  auto b = v[0].bytes;
  uint8_t fi[4] = {10, 0, 0, 1}, di[4] = {10, 0, 0, 2};
  wire::Framing f; std::memcpy(f.src_ip, fi, 4); std::memcpy(f.dst_ip, di, 4); f.ip_id = 0;
  uint32_t good = wire::icrc(f, b.data(), b.size());
  EXPECT_EQ(good, v[0].p.icrc);
  b[20] ^= 1;
  EXPECT_NE(wire::icrc(f, b.data(), b.size()), v[0].p.icrc);
}
