// DataPath::Fast and DataPath::Strict (fastpath.cpp, docs/perf.md) give the same completions, events (packet bytes
// included) and memory: the same workload runs in both, stepped and free running, with and without event capture.
// Free running without capture takes the by-reference path (the payload read from the source MR at delivery), which
// these tests also check is really taken, including a loopback WRITE whose source and target overlap.
#include "core/impl.h"
#include "core_fixture.h"

namespace vlt {
namespace {

std::string wc_text(const Wc& w) {
  return std::to_string(w.wr_id) + "/" + std::to_string(w.status) + "/" + std::to_string(w.opcode) + "/" +
         std::to_string(w.byte_len) + "/" + std::to_string(w.imm_data) + "/" + std::to_string(w.wc_flags) + "/" + std::to_string(w.qp_num);
}

struct Outcome {
  std::vector<std::string> wcs, events;
  std::vector<uint8_t> mem_a, mem_b;
  uint64_t refs_sent = 0, packets = 0;
  uint64_t now = 0, actions = 0, direct = 0, queued = 0;   // the engine's clock and action numbering at the end, hand-offs
                                                           // delivered / queued behind a due timer
  uint16_t ip_id = 0;
};

// Every kind of payload-carrying packet: multi-packet WRITE, WRITE_WITH_IMM, SEND over two SGEs, multi-response
// READ, an atomic, and a loopback WRITE from a's buffer into an overlapping range of the same buffer (through an MR
// of a's buffer registered on b's device).
Outcome workload(DataPath path, FreeRunMode mode, bool capture, bool handoff = true) {
  Pair p("rxe", QPT_RC, 7, 65536);
  Outcome o;
  p.s.internals().handoff = handoff;
  EXPECT_TRUE(p.s.set_data_path(path).ok());
  p.s.set_event_capture(capture);
  pattern(p.s, p.a.buf.addr, 65536, 1);
  pattern(p.s, p.b.buf.addr, 65536, 2);
  auto alias = p.s.reg_mr(p.b.pd, p.a.buf.addr, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ);
  EXPECT_TRUE(alias.ok()) << alias.msg;
  EXPECT_TRUE(p.s.set_free_run_mode(mode).ok());
  EXPECT_TRUE(p.recv(p.b, 40000, 8000, 77).ok());
  std::vector<SendWr> wrs;
  auto add = [&](uint32_t op, uint64_t loff, uint32_t len, uint64_t roff, uint32_t rkey, uint64_t id) {
    SendWr w; w.wr_id = id; w.opcode = op; w.send_flags = SEND_SIGNALED; w.imm_data = 0x1234 + uint32_t(id);
    w.sg_list = {{p.a.buf.addr + loff, len, p.a.mr.lkey}};
    w.remote_addr = (rkey == alias.value.rkey ? p.a.buf.addr : p.b.buf.addr) + roff; w.rkey = rkey;
    wrs.push_back(w);
  };
  add(WR_RDMA_WRITE, 0, 10000, 0, p.b.mr.rkey, 1);
  add(WR_RDMA_WRITE_WITH_IMM, 100, 3000, 12000, p.b.mr.rkey, 2);
  add(WR_SEND, 200, 2500, 0, 0, 3);
  wrs.back().sg_list.push_back({p.a.buf.addr + 9000, 1500, p.a.mr.lkey});
  add(WR_RDMA_READ, 20000, 5000, 30000, p.b.mr.rkey, 4);
  add(WR_ATOMIC_FETCH_AND_ADD, 26000, 8, 50000, p.b.mr.rkey, 5);
  wrs.back().compare_add = 5;
  add(WR_RDMA_WRITE, 30000, 6000, 30100, alias.value.rkey, 6);   // overlaps its own source (a's buffer)
  EXPECT_TRUE(p.recv(p.b, 48000, 8000, 78).ok());                // for the WRITE_WITH_IMM
  for (auto& w : wrs) EXPECT_TRUE(p.s.post_send(p.a.qp, {w}).ok());
  if (mode == FreeRunMode::Off) p.s.run();
  for (Handle cq : {p.a.scq, p.b.rcq})
    for (auto& w : p.poll(cq, 64)) o.wcs.push_back(wc_text(w));
  for (auto& e : p.s.drain_events()) {
    std::string t = std::to_string(int(e.kind)) + " " + std::to_string(e.device) + " " + std::to_string(e.obj) + " " + e.text + " " +
                    std::to_string(e.a) + " " + std::to_string(e.b) + " " + std::to_string(e.c) + " " + std::to_string(e.d) + " " +
                    std::to_string(e.ok) + " " + wc_text(e.wc) + " ";
    for (uint8_t b : e.pkt) t += "0123456789abcdef"[b >> 4], t += "0123456789abcdef"[b & 15];
    o.events.push_back(t);
  }
  o.mem_a = read(p.s, p.a.buf.addr, 65536);
  o.mem_b = read(p.s, p.b.buf.addr, 65536);
  o.refs_sent = p.s.internals().refs_sent;
  o.packets = p.s.internals().packets_sent;
  o.now = p.s.internals().now; o.actions = p.s.internals().action_seq; o.ip_id = p.s.internals().ip_id;
  o.direct = p.s.internals().direct_delivered; o.queued = p.s.internals().direct_queued;
  return o;
}

std::vector<uint8_t> read_pattern(uint32_t seed, size_t n) {   // what pattern() writes
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i++) v[i] = static_cast<uint8_t>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
  return v;
}

void same(const Outcome& fast, const Outcome& strict) {
  EXPECT_EQ(fast.wcs, strict.wcs);
  EXPECT_EQ(fast.wcs.size(), 8u);                  // 6 send completions + 2 receives
  EXPECT_EQ(fast.events, strict.events);
  EXPECT_TRUE(fast.mem_a == strict.mem_a);
  EXPECT_TRUE(fast.mem_b == strict.mem_b);
  EXPECT_EQ(fast.packets, strict.packets);
  EXPECT_EQ(strict.refs_sent, 0u);
}

TEST(DataPath, DefaultIsFastAndStrictCanBeChosen) {
  Session s(1);
  EXPECT_EQ(s.data_path(), DataPath::Fast);
  EXPECT_TRUE(s.set_data_path(DataPath::Strict).ok());
  EXPECT_EQ(s.data_path(), DataPath::Strict);
  auto st = s.set_data_path(static_cast<DataPath>(9));
  EXPECT_EQ(st.err, EINVAL);
  EXPECT_NE(st.msg.find("Strict"), std::string::npos) << st.msg;
  EXPECT_EQ(s.data_path(), DataPath::Strict);
}

TEST(DataPath, SteppedSameEventsAndBytes) {
  for (bool capture : {true, false}) {
    auto f = workload(DataPath::Fast, FreeRunMode::Off, capture), s = workload(DataPath::Strict, FreeRunMode::Off, capture);
    same(f, s);
    EXPECT_EQ(f.refs_sent, 0u);                    // stepped: a payload is never read later from the source MR
    if (capture) { EXPECT_GT(f.events.size(), 50u); }
  }
}

TEST(DataPath, FreeRunningSameEventsAndBytes) {
  auto f = workload(DataPath::Fast, FreeRunMode::Inline, true), s = workload(DataPath::Strict, FreeRunMode::Inline, true);
  same(f, s);
  EXPECT_EQ(f.refs_sent, 0u);                      // captured: the packets' bytes are built for the events
}

TEST(DataPath, FreeRunningByReferenceSameBytes) {
  auto f = workload(DataPath::Fast, FreeRunMode::Inline, false), s = workload(DataPath::Strict, FreeRunMode::Inline, false);
  same(f, s);
  EXPECT_GT(f.refs_sent, 10u);                     // the WRITEs' and the READ's payloads went by reference
}

TEST(DataPath, HandOffDecidesAsTheFifo) {
  // a packet handed off (no FIFO round trip) is delivered exactly when the FIFO would have delivered it: the same
  // completions and bytes, and the engine ends at the same clock, action number and IP ID as with every packet queued
  auto on = workload(DataPath::Fast, FreeRunMode::Inline, false, true), off = workload(DataPath::Fast, FreeRunMode::Inline, false, false);
  EXPECT_EQ(on.wcs, off.wcs);
  EXPECT_TRUE(on.mem_a == off.mem_a);
  EXPECT_TRUE(on.mem_b == off.mem_b);
  EXPECT_EQ(on.now, off.now);
  EXPECT_EQ(on.actions, off.actions);
  EXPECT_EQ(on.ip_id, off.ip_id);
  EXPECT_EQ(on.packets, off.packets);
  EXPECT_GT(on.direct, 20u);                       // requests, ACKs and READ responses were handed off
  EXPECT_EQ(off.direct, 0u);
  auto strict = workload(DataPath::Strict, FreeRunMode::Inline, false);
  EXPECT_EQ(strict.direct, 0u);                    // only the fast path hands off
  EXPECT_EQ(on.now, strict.now);
  EXPECT_EQ(on.actions, strict.actions);
}

TEST(DataPath, HandOffQueuedBehindAnEarlierAction) {
  // White-box: in the single-stream runs above a hand-off always finds the engine's queues empty of anything due
  // before it. Here another QP's requester run is due (queued while stepped) when a WRITE packet is handed off inside
  // a batch; the hand-off must then be queued behind it, as the FIFO would have ordered the packet. The engine then
  // runs both and the end state equals the one with hand-offs off.
  // push_after: x's requester run is queued after the hand-off was made (a heap push does not queue a hand-off)
  auto run = [](bool handoff, bool push_after) {
    Pair p("rxe", QPT_RC, 9, 65536);
    SessionImpl& S = p.s.internals();
    S.handoff = handoff;
    p.s.set_event_capture(false);
    Side x, y;
    p.fresh(x, y, p.a.scq, p.a.rcq, p.b.scq, p.b.rcq);
    pattern(p.s, p.a.buf.addr, 65536, 5);
    if (!push_after) { EXPECT_TRUE(p.write(x, y, 1000, 1000, 64, 2).ok()); }   // stepped: x's run waits in the heap, due now
    // a's requester batch sends a WRITE ONLY of 64 bytes from a's MR (what req_run builds for a 64-byte WR)
    S.free_running = true;
    S.batching_qp = p.a.qp;
    wire::Packet pk;
    pk.opcode = wire::RC_RDMA_WRITE_ONLY; pk.dest_qp = p.b.qpn; pk.psn = 100; pk.ack_req = true;
    pk.reth_va = p.b.buf.addr; pk.reth_rkey = p.b.mr.rkey; pk.reth_dmalen = 64;
    pk.payload = S.host(p.a.buf.addr, 64); pk.payload_len = 64;
    S.send_fast(p.a.dev, p.b.dev, pk, true);
    if (push_after) { EXPECT_TRUE(p.write(x, y, 1000, 1000, 64, 2).ok()); }
    if (S.direct.pending) S.deliver_direct();
    Outcome o;
    o.queued = S.direct_queued;
    o.actions = S.fifo.size();                       // the packet waits in the FIFO behind the due run
    S.batching_qp = 0;
    S.free_running = false;
    p.s.run();
    o.mem_b = read(p.s, p.b.buf.addr, 65536);
    for (auto& w : p.poll(y.rcq)) o.wcs.push_back(wc_text(w));
    o.now = S.now; o.packets = S.packets_sent; o.direct = S.direct_delivered;
    return o;
  };
  for (bool after : {false, true}) {
    auto on = run(true, after), off = run(false, after);
    EXPECT_EQ(on.queued, 1u) << after;
    EXPECT_EQ(on.actions, 1u) << after;
    EXPECT_EQ(on.direct, 0u) << after;
    EXPECT_EQ(off.queued, 0u) << after;
    EXPECT_EQ(on.now, off.now) << after;
    EXPECT_EQ(on.packets, off.packets) << after;
    EXPECT_EQ(on.wcs, off.wcs) << after;
    EXPECT_TRUE(on.mem_b == off.mem_b) << after;
    const auto want = read_pattern(5, 65536);
    EXPECT_TRUE(std::equal(on.mem_b.begin(), on.mem_b.begin() + 64, want.begin()));   // a's 64 bytes landed in b
  }
}

TEST(DataPath, FaultsUseTheStrictPath) {
  // with a fault configured every packet is built, checked and drawn against the fault RNG as in strict mode
  auto run = [](DataPath path) {
    Pair p("rxe", QPT_RC, 3, 65536);
    EXPECT_TRUE(p.s.set_data_path(path).ok());
    FaultConfig fc; fc.loss = 0.2;
    p.s.set_faults(fc);
    pattern(p.s, p.a.buf.addr, 65536, 4);
    EXPECT_TRUE(p.write(p.a, p.b, 0, 0, 20000).ok());
    p.s.run(200000);
    std::vector<std::string> ev;
    for (auto& e : p.s.drain_events()) ev.push_back(std::to_string(int(e.kind)) + e.text + std::to_string(e.pkt.size()));
    auto wc = p.poll(p.a.scq);
    EXPECT_EQ(wc.size(), 1u);
    return std::make_pair(ev, read(p.s, p.b.buf.addr, 65536));
  };
  auto f = run(DataPath::Fast), s = run(DataPath::Strict);
  EXPECT_EQ(f.first, s.first);
  EXPECT_TRUE(f.second == s.second);
}

TEST(DataPath, CaptureTurnedOnInFlightCarriesTheBytes) {
  // a packet sent while capture was off and delivered after it was turned on: its PacketReceived event carries the
  // same bytes in both modes
  auto run = [](DataPath path) {
    Pair p("rxe", QPT_RC, 5, 65536);
    EXPECT_TRUE(p.s.set_data_path(path).ok());
    pattern(p.s, p.a.buf.addr, 65536, 6);
    p.s.set_event_capture(false);
    EXPECT_TRUE(p.write(p.a, p.b, 0, 0, 3000).ok());
    p.s.step();                                     // the requester sends the first packet
    p.s.set_event_capture(true);
    p.s.run();
    std::vector<std::vector<uint8_t>> pk;
    for (auto& e : p.s.drain_events()) if (e.kind == EventKind::PacketReceived) pk.push_back(e.pkt);
    return pk;
  };
  auto f = run(DataPath::Fast), s = run(DataPath::Strict);
  ASSERT_FALSE(s.empty());
  EXPECT_FALSE(s[0].empty());
  EXPECT_EQ(f, s);
}

}  // namespace
}  // namespace vlt
