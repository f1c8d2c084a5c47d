// The device's queue and table containers (core/ring.h, core/index_map.h) and what the session builds on them: the
// send queue reusing its slots, a QPN / key that was never handed out finding nothing, and the threads-mode
// "CQ found empty" note surviving a mode change.
#include <chrono>
#include <thread>

#include "core/index_map.h"
#include "core/ring.h"
#include "core_fixture.h"

namespace vlt {
namespace {

TEST(Ring, FifoOrderAcrossWrapAndGrowth) {
  Ring<int> r;
  EXPECT_TRUE(r.empty());
  int next_in = 0, next_out = 0;
  // wrap the 16-slot array several times with at most 10 queued, then grow it to 64 while wrapped
  for (int round = 0; round < 50; round++) {
    while (r.size() < 10) r.push_back(next_in++);
    for (int k = 0; k < 7; k++) { ASSERT_EQ(r.front(), next_out++); r.pop_front(); }
  }
  while (r.size() < 40) r.push_back(next_in++);
  ASSERT_EQ(r.size(), 40u);
  for (size_t i = 0; i < r.size(); i++) EXPECT_EQ(r[i], next_out + int(i));
  EXPECT_EQ(r.back(), next_in - 1);
  int k = next_out;
  for (int v : r) EXPECT_EQ(v, k++);                 // iteration from the oldest
  while (!r.empty()) { ASSERT_EQ(r.front(), next_out++); r.pop_front(); }
  EXPECT_EQ(next_out, next_in);
}

TEST(Ring, PushFrontPopBackClear) {
  Ring<int> r;
  r.push_back(2); r.push_back(3);
  r.push_front(1);                                   // a receive WQE handed back (ud_receive)
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], 1); EXPECT_EQ(r[1], 2); EXPECT_EQ(r[2], 3);
  r.pop_back();
  EXPECT_EQ(r.back(), 2);
  r.clear();
  EXPECT_TRUE(r.empty());
  r.emplace_back(9);
  EXPECT_EQ(r.front(), 9);
}

TEST(Ring, PushOfItsOwnElementWhileGrowing) {
  // as with std::deque, pushing a copy of an element of the ring works when the push makes the ring grow
  Ring<std::vector<int>> r;
  for (int i = 0; i < 16; i++) r.push_back(std::vector<int>(8, i));
  r.push_back(r.front());                            // 17th element: the ring grows while copying its first
  r.push_front(r.back());
  ASSERT_EQ(r.size(), 18u);
  EXPECT_EQ(r[0], std::vector<int>(8, 0));
  EXPECT_EQ(r[17], std::vector<int>(8, 0));
  EXPECT_EQ(r[16], std::vector<int>(8, 15));
}

TEST(Ring, NextBackIsNotQueuedUntilCommitted) {
  Ring<std::vector<int>> r;
  auto& s = r.next_back();
  s.assign(100, 7);
  EXPECT_TRUE(r.empty());                            // a refused post leaves nothing behind
  r.commit_back();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r.front().size(), 100u);
}

TEST(Ring, SlotsKeepTheirStorage) {
  // a popped slot keeps its element: the next push into it assigns over it, so a vector's buffer is reused
  Ring<std::vector<int>> r;
  for (int i = 0; i < 16; i++) { r.push_back(std::vector<int>(64, i)); r.pop_front(); }
  const int* before = r.next_back().data();
  const std::vector<int> v(32, 5);
  r.push_back(v);                                    // copy-assign into the slot: no new buffer
  EXPECT_EQ(r.front().data(), before);
  EXPECT_EQ(r.front(), v);
}

TEST(IndexMap, LookupsAndBounds) {
  IndexMap m(0x100);
  EXPECT_EQ(m.get(0x100), 0u);
  m.set(0x101, 7);
  EXPECT_EQ(m.get(0x101), 7u);
  EXPECT_EQ(m.count(0x101), 1u);
  EXPECT_EQ(m.get(0x100), 0u);
  EXPECT_EQ(m.get(0xFF), 0u);                        // below the base: nothing (no wrap-around index)
  EXPECT_EQ(m.get(0xFFFFFF), 0u);                    // a number from the wire never handed out
  EXPECT_EQ(m.get(0xFFFFFFFFu), 0u);
  m.erase(0x101);
  EXPECT_EQ(m.get(0x101), 0u);
  m.erase(0x5000);                                   // not there: no-op
}

TEST(Rings, SendQueueSlotsReusedWithManySges) {
  // the same slots carry WRs of 1, 3 and 2 SGEs in turn; every message arrives whole
  Pair p("rxe", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC, false, 8);
  pattern(p.s, p.a.buf.addr, 65536, 3);
  for (int round = 0; round < 40; round++) {
    const uint32_t nsge = 1 + round % 3;
    SendWr w;
    w.wr_id = round; w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED;
    for (uint32_t k = 0; k < nsge; k++) w.sg_list.push_back({p.a.buf.addr + 1000 * round + 100 * k, 100, p.a.mr.lkey});
    w.remote_addr = p.b.buf.addr + 1000 * round; w.rkey = p.b.mr.rkey;
    auto r = p.s.post_send(p.a.qp, {w});
    ASSERT_TRUE(r.ok()) << r.msg;
    if (round % 5 == 4) p.s.run();                   // five at a time: the 15-slot queue wraps several times
  }
  p.s.run();
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 40u);
  for (size_t i = 0; i < wc.size(); i++) { EXPECT_EQ(wc[i].wr_id, i); EXPECT_EQ(wc[i].status, WC_SUCCESS); }
  for (int round = 0; round < 40; round++) {
    const uint32_t n = 100 * (1 + round % 3);
    EXPECT_EQ(read(p.s, p.b.buf.addr + 1000 * round, n), read(p.s, p.a.buf.addr + 1000 * round, n)) << "round " << round;
  }
}

TEST(Rings, UnknownQpnAndKeyFromTheWire) {
  // a WRITE to a QPN the device never handed out is dropped; one with an rkey index never handed out is NAKed
  Pair p;
  SendWr w;
  w.wr_id = 1; w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED;
  w.sg_list = {{p.a.buf.addr, 64, p.a.mr.lkey}};
  w.remote_addr = p.b.buf.addr; w.rkey = 0xFFFF00u | (p.b.mr.rkey & 0xFF);
  Wc wc = p.send_one(p.a, w);
  EXPECT_EQ(wc.status, WC_REM_ACCESS_ERR);
}

TEST(Rings, CqEmptyNoteForgottenAcrossModeChanges) {
  // threads mode remembers "this CQ was empty" until a CQE is counted; CQEs posted in inline mode are not counted,
  // so the mode change itself must make the next threads-mode poll look again
  Pair p;
  ASSERT_TRUE(p.s.set_free_run_mode(FreeRunMode::Threads).ok());
  EXPECT_TRUE(p.poll(p.a.scq).empty());              // noted empty
  ASSERT_TRUE(p.s.set_free_run_mode(FreeRunMode::Inline).ok());
  ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 64).ok());      // completes inline; the CQE stays queued
  ASSERT_TRUE(p.s.set_free_run_mode(FreeRunMode::Threads).ok());
  std::vector<Wc> wc;
  for (int i = 0; i < 2000 && wc.empty(); i++) {
    wc = p.poll(p.a.scq);
    if (wc.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  ASSERT_TRUE(p.s.set_free_run_mode(FreeRunMode::Off).ok());
}

}  // namespace
}  // namespace vlt
