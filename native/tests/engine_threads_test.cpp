// Free running on an engine thread (FreeRunMode::Threads): the test thread only posts and polls while the device
// works asynchronously. Data is verified byte for byte; faults still apply; stop / restart and destroying objects
// while the engine runs must be clean (these tests are also built under ThreadSanitizer: build.mjs tsan).
#include <chrono>
#include <thread>

#include "core_fixture.h"
#include "net/udp.h"

namespace vlt {
namespace {

using clk = std::chrono::steady_clock;

// Polls until n completions arrived or the deadline passed (the engine runs on its own thread).
std::vector<Wc> wait_cq(Session& s, Handle cq, size_t n, double secs = 20) {
  std::vector<Wc> out;
  const auto end = clk::now() + std::chrono::duration<double>(secs);
  while (out.size() < n && clk::now() < end) {
    auto w = s.poll_cq(cq, 64);
    if (w.empty()) { std::this_thread::yield(); continue; }
    out.insert(out.end(), w.begin(), w.end());
  }
  return out;
}

std::vector<uint8_t> pat(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i++) v[i] = static_cast<uint8_t>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
  return v;
}

TEST(EngineThreads, ModesAndErrors) {
  Pair p;
  EXPECT_EQ(p.s.free_run_mode(), FreeRunMode::Off);
  auto st = p.s.set_engine_threads(2);
  EXPECT_EQ(st.err, EINVAL) << st.msg;
  EXPECT_NE(st.msg.find("one is implemented"), std::string::npos) << st.msg;
  st = p.s.set_free_run_mode(static_cast<FreeRunMode>(7));
  EXPECT_EQ(st.err, EINVAL) << st.msg;
  EXPECT_EQ(p.s.free_run_mode(), FreeRunMode::Off);
  ASSERT_TRUE(p.s.set_engine_threads(1).ok());
  EXPECT_EQ(p.s.free_run_mode(), FreeRunMode::Threads);
  EXPECT_TRUE(p.s.set_engine_threads(1).ok());         // already running: no-op
  EXPECT_FALSE(p.s.step());                             // the engine thread owns the queue
  EXPECT_EQ(p.s.run(), 0u);
  ASSERT_TRUE(p.s.set_free_run_mode(FreeRunMode::Inline).ok());
  EXPECT_EQ(p.s.free_run_mode(), FreeRunMode::Inline);
  ASSERT_TRUE(p.s.set_engine_threads(0).ok());
  EXPECT_EQ(p.s.free_run_mode(), FreeRunMode::Off);
}

TEST(EngineThreads, RefusedWhileADeviceIsOnUdp) {
  Session s;
  Handle d = s.create_device("rxe").value;
  net::UdpOptions o; o.address = "127.0.0.1"; o.port = 0;
  auto t = net::UdpTransport::attach(s, d, o);
  if (!t.ok()) GTEST_SKIP() << "no UDP socket here: " << t.msg;
  auto st = s.set_engine_threads(1);
  EXPECT_EQ(st.err, EBUSY) << st.msg;
  EXPECT_EQ(s.free_run_mode(), FreeRunMode::Off);
  st = s.set_free_run_mode(FreeRunMode::Inline);
  EXPECT_EQ(st.err, EBUSY) << st.msg;
}

TEST(EngineThreads, WriteReadSendAtomicsWithDataVerified) {
  Pair p("rxe", QPT_RC, 3, 1 << 20);
  p.s.set_event_capture(false);
  auto src = pat(300000, 1);
  ASSERT_TRUE(p.s.write_memory(p.a.buf.addr, src.data(), src.size()).ok());
  ASSERT_TRUE(p.s.set_engine_threads(1).ok());
  // RDMA WRITE of 300000 bytes (293 packets at MTU 1024)
  ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 300000, 11).ok());
  auto wc = wait_cq(p.s, p.a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(wc[0].wr_id, 11u);
  EXPECT_EQ(read(p.s, p.b.buf.addr, 300000), src);
  // RDMA READ it back into another place on A
  ASSERT_TRUE(p.write(p.a, p.b, 400000, 0, 300000, 12, WR_RDMA_READ).ok());
  wc = wait_cq(p.s, p.a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(wc[0].opcode, WC_RDMA_READ);
  EXPECT_EQ(read(p.s, p.a.buf.addr + 400000, 300000), src);
  // SEND with immediate into a posted receive
  ASSERT_TRUE(p.recv(p.b, 800000, 5000, 21).ok());
  SendWr sw; sw.wr_id = 13; sw.opcode = WR_SEND_WITH_IMM; sw.send_flags = SEND_SIGNALED; sw.imm_data = 0x1234;
  sw.sg_list = {{p.a.buf.addr + 1000, 4000, p.a.mr.lkey}};
  ASSERT_TRUE(p.s.post_send(p.a.qp, {sw}).ok());
  auto rw = wait_cq(p.s, p.b.rcq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, WC_SUCCESS);
  EXPECT_EQ(rw[0].byte_len, 4000u);
  EXPECT_EQ(rw[0].imm_data, 0x1234u);
  EXPECT_EQ(read(p.s, p.b.buf.addr + 800000, 4000), std::vector<uint8_t>(src.begin() + 1000, src.begin() + 5000));
  ASSERT_EQ(wait_cq(p.s, p.a.scq, 1).size(), 1u);
  // atomics on an 8-byte word of B: fetch-add then compare-and-swap
  uint64_t v = 1000;
  ASSERT_TRUE(p.s.write_memory(p.b.buf.addr + 900000, reinterpret_cast<uint8_t*>(&v), 8).ok());
  SendWr fa; fa.wr_id = 14; fa.opcode = WR_ATOMIC_FETCH_AND_ADD; fa.send_flags = SEND_SIGNALED; fa.compare_add = 5;
  fa.sg_list = {{p.a.buf.addr + 900000, 8, p.a.mr.lkey}}; fa.remote_addr = p.b.buf.addr + 900000; fa.rkey = p.b.mr.rkey;
  SendWr cs = fa; cs.wr_id = 15; cs.opcode = WR_ATOMIC_CMP_AND_SWP; cs.compare_add = 1005; cs.swap = 77;
  cs.sg_list = {{p.a.buf.addr + 900008, 8, p.a.mr.lkey}};
  ASSERT_TRUE(p.s.post_send(p.a.qp, {fa, cs}).ok());
  wc = wait_cq(p.s, p.a.scq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(wc[1].status, WC_SUCCESS);
  uint64_t got[2], now_v;
  ASSERT_TRUE(p.s.read_memory(p.a.buf.addr + 900000, reinterpret_cast<uint8_t*>(got), 16).ok());
  ASSERT_TRUE(p.s.read_memory(p.b.buf.addr + 900000, reinterpret_cast<uint8_t*>(&now_v), 8).ok());
  EXPECT_EQ(got[0], 1000u);
  EXPECT_EQ(got[1], 1005u);
  EXPECT_EQ(now_v, 77u);
  EXPECT_GT(p.s.now_ns(), 0u);
}

TEST(EngineThreads, ManyMessagesUnderLossDuplicationReorder) {
  Pair p("rxe", QPT_RC, 9, 1 << 20, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC,
         false, 64);
  auto src = pat(1 << 19, 5);
  ASSERT_TRUE(p.s.write_memory(p.a.buf.addr, src.data(), src.size()).ok());
  FaultConfig f; f.loss = 0.03; f.duplicate = 0.03; f.reorder = 0.05;
  p.s.set_faults(f);
  ASSERT_TRUE(p.s.set_engine_threads(1).ok());
  // 200 writes of varying length to disjoint places, posted in windows of up to 32
  std::vector<std::pair<uint64_t, uint32_t>> msgs;
  uint64_t off = 0;
  for (int i = 0; i < 200; i++) {
    uint32_t len = 1 + (i * 977) % 2600;
    msgs.push_back({off, len});
    off += len;
  }
  ASSERT_LE(off, src.size());
  size_t posted = 0, done = 0;
  while (done < msgs.size()) {
    while (posted < msgs.size() && posted - done < 32) {
      auto [o, l] = msgs[posted];
      ASSERT_TRUE(p.write(p.a, p.b, o, o, l, posted).ok());
      posted++;
    }
    auto wc = wait_cq(p.s, p.a.scq, 1);
    ASSERT_FALSE(wc.empty()) << "no completion after " << done << " of " << msgs.size();
    for (auto& c : wc) {
      ASSERT_EQ(c.status, WC_SUCCESS) << "wr_id " << c.wr_id;
      ASSERT_EQ(c.wr_id, done) << "completions in order";
      done++;
    }
  }
  EXPECT_EQ(read(p.s, p.b.buf.addr, off), std::vector<uint8_t>(src.begin(), src.begin() + off));
  size_t loss = 0, dup = 0, reo = 0, retrans = 0;
  for (auto& e : p.s.drain_events()) {
    if (e.kind == EventKind::Fault) (e.a == uint64_t(FaultKind::Loss) ? loss : e.a == uint64_t(FaultKind::Duplicate) ? dup : reo)++;
    if (e.kind == EventKind::Timer && e.a == uint64_t(TimerReason::Retransmit)) retrans++;
  }
  EXPECT_GT(loss, 0u);
  EXPECT_GT(dup, 0u);
  EXPECT_GT(reo, 0u);
  EXPECT_GT(retrans, 0u) << "losses were recovered by retransmission";
}

// The same traffic in Inline mode: each packet is delivered right after it is built (in-order FIFO), faulted ones
// go through the heap; data and completion order must be exact.
TEST(EngineInline, ManyMessagesUnderLossDuplicationReorder) {
  Pair p("rxe", QPT_RC, 9, 1 << 20);
  p.s.set_event_capture(false);
  auto src = pat(1 << 19, 6);
  ASSERT_TRUE(p.s.write_memory(p.a.buf.addr, src.data(), src.size()).ok());
  FaultConfig f; f.loss = 0.03; f.duplicate = 0.03; f.reorder = 0.05; f.delay = 0.02; f.delay_ns = 30000;
  p.s.set_faults(f);
  ASSERT_TRUE(p.s.set_free_run_mode(FreeRunMode::Inline).ok());
  uint64_t off = 0;
  size_t done = 0;
  for (int i = 0; i < 200; i++) {
    uint32_t len = 1 + (i * 977) % 2600;
    ASSERT_TRUE(p.write(p.a, p.b, off, off, len, i).ok());
    off += len;
    for (auto& c : p.poll(p.a.scq)) {
      ASSERT_EQ(c.status, WC_SUCCESS);
      ASSERT_EQ(c.wr_id, done);
      done++;
    }
  }
  for (int k = 0; k < 100 && done < 200; k++)
    for (auto& c : p.poll(p.a.scq)) { ASSERT_EQ(c.wr_id, done); done++; }
  EXPECT_EQ(done, 200u);
  EXPECT_EQ(read(p.s, p.b.buf.addr, off), std::vector<uint8_t>(src.begin(), src.begin() + off));
}

TEST(EngineThreads, StopAndRestartKeepsQueuedWork) {
  Pair p;
  p.s.set_event_capture(false);
  pattern(p.s, p.a.buf.addr, 8192, 4);
  ASSERT_TRUE(p.s.set_engine_threads(1).ok());
  ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 4096, 1).ok());
  ASSERT_EQ(wait_cq(p.s, p.a.scq, 1).size(), 1u);
  ASSERT_TRUE(p.s.set_engine_threads(0).ok());           // joins the engine thread
  ASSERT_TRUE(p.write(p.a, p.b, 4096, 4096, 4096, 2).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(p.poll(p.a.scq).empty()) << "deterministic again: nothing runs until step()/run()";
  EXPECT_TRUE(p.s.step());                               // one action by hand
  ASSERT_TRUE(p.s.set_engine_threads(1).ok());           // the rest continues on a new engine thread
  auto wc = wait_cq(p.s, p.a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 2u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(read(p.s, p.b.buf.addr, 8192), read(p.s, p.a.buf.addr, 8192));
  for (int i = 0; i < 5; i++) {                          // repeated start / stop with work in flight
    ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 8192, 10 + i).ok());
    ASSERT_TRUE(p.s.set_engine_threads(0).ok());
    ASSERT_TRUE(p.s.set_engine_threads(1).ok());
    ASSERT_EQ(wait_cq(p.s, p.a.scq, 1).size(), 1u);
  }
}

TEST(EngineThreads, DestroyObjectsWhileTheEngineRuns) {
  Pair p("rxe", QPT_RC, 5, 1 << 20);
  p.s.set_event_capture(false);
  ASSERT_TRUE(p.s.set_engine_threads(1).ok());
  for (int i = 0; i < 30; i++) ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 30000, i).ok());
  // tear the responder side down under the running engine: its packets are dropped ("no QP"), nothing crashes
  ASSERT_TRUE(p.s.destroy_qp(p.b.qp).ok());
  ASSERT_TRUE(p.s.dereg_mr(p.b.mr.handle).ok());
  auto wc = wait_cq(p.s, p.a.scq, 1, 0.05);           // some may have completed before the QP went away
  (void)wc;
  ASSERT_TRUE(p.s.destroy_qp(p.a.qp).ok());              // with WQEs still outstanding
  ASSERT_TRUE(p.s.dereg_mr(p.a.mr.handle).ok());
  ASSERT_TRUE(p.s.free_buffer(p.a.buf.handle).ok());
  // a fresh pair on the same devices still works while the engine keeps running
  Handle ca = p.s.create_cq(p.a.dev, 64).value, cb = p.s.create_cq(p.b.dev, 64).value;
  Side x, y;
  p.fresh(x, y, ca, ca, cb, cb);
  auto m1 = p.s.alloc_buffer(4096).value;
  auto mx = p.s.reg_mr(x.pd, m1.addr, 4096, ACCESS_LOCAL_WRITE).value;
  auto m2 = p.s.alloc_buffer(4096).value;
  auto my = p.s.reg_mr(y.pd, m2.addr, 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE).value;
  pattern(p.s, m1.addr, 4096, 8);
  SendWr w; w.wr_id = 99; w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED;
  w.sg_list = {{m1.addr, 4096, mx.lkey}}; w.remote_addr = m2.addr; w.rkey = my.rkey;
  ASSERT_TRUE(p.s.post_send(x.qp, {w}).ok());
  auto c = wait_cq(p.s, ca, 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].status, WC_SUCCESS);
  EXPECT_EQ(read(p.s, m2.addr, 4096), read(p.s, m1.addr, 4096));
  // and the session is destroyed with work queued and the engine thread running (joins cleanly)
  for (int i = 0; i < 8; i++) ASSERT_TRUE(p.s.post_send(x.qp, {w}).ok());
}

TEST(EngineThreads, AckTimeoutRetriesInRealTime) {
  Pair p;
  p.s.set_event_capture(false);
  pattern(p.s, p.a.buf.addr, 2048, 6);
  FaultConfig f; f.loss = 1.0;                           // everything lost: the ACK timer (4.2 ms) must fire
  p.s.set_faults(f);
  ASSERT_TRUE(p.s.set_engine_threads(1).ok());
  ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 2048, 7).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(8));
  p.s.set_faults(FaultConfig{});                         // the network heals: a retry gets through
  auto wc = wait_cq(p.s, p.a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(read(p.s, p.b.buf.addr, 2048), read(p.s, p.a.buf.addr, 2048));
}

TEST(EngineThreads, EventsAreCapturedInOrder) {
  Pair p;
  p.s.drain_events();
  ASSERT_TRUE(p.s.set_engine_threads(1).ok());
  pattern(p.s, p.a.buf.addr, 3000, 2);
  ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 3000, 1).ok());
  ASSERT_EQ(wait_cq(p.s, p.a.scq, 1).size(), 1u);
  ASSERT_TRUE(p.s.set_engine_threads(0).ok());
  auto ev = p.s.drain_events();
  ASSERT_FALSE(ev.empty());
  size_t sent = 0, recv = 0;
  for (size_t i = 1; i < ev.size(); i++) {
    EXPECT_EQ(ev[i].seq, ev[i - 1].seq + 1);
    EXPECT_GE(ev[i].time_ns, ev[i - 1].time_ns);
  }
  for (auto& e : ev) {
    if (e.kind == EventKind::PacketSent) sent++;
    if (e.kind == EventKind::PacketReceived) recv++;
  }
  EXPECT_EQ(sent, 4u);                                   // 3 data packets + 1 ACK
  EXPECT_EQ(recv, 4u);
}

}  // namespace
}  // namespace vlt
