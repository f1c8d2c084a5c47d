// The bad-key matrix: RDMA WRITE / READ / ATOMIC against every kind of bad rkey. Each case checks the exact
// requester WC status, the flush of the following WR, both QP states, the KeyCheck reason and that no byte
// changed anywhere on either side.
#include "core_fixture.h"

using namespace vlt;

namespace {
enum Case { WrongKeyByte, Invalidated, Deregistered, WrongPd, MissingAccess, OutOfBounds, MwOtherQp };
const char* case_name(Case c) {
  static const char* n[] = {"wrong key byte", "invalidated", "deregistered", "wrong PD", "missing access", "out of bounds", "MW bound to another QP"};
  return n[c];
}

struct Target { uint32_t rkey; uint64_t addr; std::string reason; };

Target setup(Pair& p, Case c, uint32_t op) {
  Session& s = p.s;
  const uint64_t base = p.b.buf.addr + 8192;
  const uint32_t all = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
  const char* need = op == WR_RDMA_WRITE ? "needs REMOTE_WRITE" : op == WR_RDMA_READ ? "needs REMOTE_READ" : "needs REMOTE_ATOMIC";
  switch (c) {
    case WrongKeyByte: {
      auto m = s.reg_mr(p.b.pd, base, 256, all).value;
      uint32_t k = (m.rkey & ~0xffu) | ((m.rkey + 1) & 0xff);
      char buf[80];
      std::snprintf(buf, sizeof buf, "rkey 0x%08x: key byte 0x%02x != 0x%02x", k, k & 0xff, m.rkey & 0xff);
      return {k, base, buf};
    }
    case Invalidated: {
      auto f = s.alloc_mr(p.b.pd, 4).value;
      EXPECT_EQ(s.map_mr_sg(f.handle, {{base, 256, 0}}).value, 1u);
      SendWr reg; reg.opcode = WR_REG_MR; reg.reg_mr = f.handle; reg.reg_key = f.rkey; reg.reg_access = all;
      SendWr inv; inv.opcode = WR_LOCAL_INV; inv.imm_data = f.rkey;
      EXPECT_TRUE(s.post_send(p.b.qp, {reg, inv}).ok());
      s.run();
      EXPECT_EQ(s.mr_info(f.handle)->state, "free");
      return {f.rkey, base, "MR is free"};
    }
    case Deregistered: {
      auto m = s.reg_mr(p.b.pd, base, 256, all).value;
      EXPECT_TRUE(s.dereg_mr(m.handle).ok());
      return {m.rkey, base, "no MR with index"};
    }
    case WrongPd: {
      auto pd2 = s.alloc_pd(p.b.dev).value;
      auto m = s.reg_mr(pd2, base, 256, all).value;
      return {m.rkey, base, "PD mismatch"};
    }
    case MissingAccess: {
      uint32_t acc = op == WR_RDMA_WRITE ? (ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC)
                     : op == WR_RDMA_READ ? (ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_ATOMIC)
                                          : (ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ);
      auto m = s.reg_mr(p.b.pd, base, 256, acc).value;
      return {m.rkey, base, need};
    }
    case OutOfBounds: {
      auto m = s.reg_mr(p.b.pd, base, 256, all).value;
      return {m.rkey, base + 256, "outside MR"};
    }
    case MwOtherQp: {
      auto m = s.reg_mr(p.b.pd, base, 256, all | ACCESS_MW_BIND).value;
      // a second connected pair; its b-side QP binds the window
      Side x, y;
      p.fresh(x, y, p.a.scq, p.a.rcq, p.b.scq, p.b.rcq);
      auto mw = s.alloc_mw(p.b.pd, MW_TYPE_2).value;
      SendWr bind; bind.opcode = WR_BIND_MW; bind.mw = mw.handle; bind.bind_rkey = mw.rkey; bind.bind_mr = m.handle;
      bind.bind_addr = base; bind.bind_length = 256; bind.bind_access = ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
      EXPECT_TRUE(s.post_send(y.qp, {bind}).ok());
      s.run();
      EXPECT_EQ(s.mw_info(mw.handle)->state, "valid");
      char buf[80];
      std::snprintf(buf, sizeof buf, "MW bound to QP 0x%x, request on QP 0x%x", y.qpn, p.b.qpn);
      return {mw.rkey, base, buf};
    }
  }
  return {};
}
}  // namespace

class KeyMatrix : public ::testing::TestWithParam<std::tuple<uint32_t, int>> {};

TEST_P(KeyMatrix, ExactStatusStatesAndCanaries) {
  auto [op, ci] = GetParam();
  Case c = static_cast<Case>(ci);
  Pair p;
  Target t = setup(p, c, op);
  p.poll(p.b.scq);
  fill(p.s, p.b.buf.addr, 65536, 0xCC);
  fill(p.s, p.a.buf.addr, 65536, 0xAA);
  uint64_t v = 0x1122334455667788ull;
  if (op == WR_RDMA_WRITE) pattern(p.s, p.a.buf.addr, 16, 1);
  SendWr w; w.wr_id = 1; w.opcode = op; w.send_flags = SEND_SIGNALED; w.rkey = t.rkey; w.remote_addr = t.addr;
  w.sg_list = {{p.a.buf.addr + (op == WR_RDMA_WRITE ? 0 : 1024), op == WR_RDMA_WRITE || op == WR_RDMA_READ ? 16u : 8u, p.a.mr.lkey}};
  w.compare_add = 5; w.swap = v;
  SendWr next = w; next.wr_id = 2;
  auto before_a = read(p.s, p.a.buf.addr, 65536);
  p.s.drain_events();
  ASSERT_TRUE(p.s.post_send(p.a.qp, {w, next}).ok());
  p.s.run();
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 2u) << case_name(c);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, WC_REM_ACCESS_ERR) << case_name(c) << " got " << wc[0].status;
  EXPECT_EQ(wc[1].status, WC_WR_FLUSH_ERR);
  EXPECT_EQ(p.state(p.a), QPS_ERR);
  EXPECT_EQ(p.state(p.b), QPS_ERR);
  auto after_b = read(p.s, p.b.buf.addr, 65536);
  for (size_t i = 0; i < after_b.size(); i++) ASSERT_EQ(after_b[i], 0xCC) << case_name(c) << " byte " << i;
  EXPECT_EQ(read(p.s, p.a.buf.addr, 65536), before_a) << case_name(c);
  bool found = false;
  for (auto& e : p.s.drain_events())
    if (e.kind == EventKind::KeyCheck && !e.ok) {
      found = true;
      EXPECT_NE(e.text.find(t.reason), std::string::npos) << e.text << " vs " << t.reason;
    }
  EXPECT_TRUE(found) << case_name(c);
}

INSTANTIATE_TEST_SUITE_P(AllOps, KeyMatrix,
                         ::testing::Combine(::testing::Values(WR_RDMA_WRITE, WR_RDMA_READ, WR_ATOMIC_FETCH_AND_ADD),
                                            ::testing::Range(0, 7)));

TEST(TransportKeys, ZeroLengthSkipsKeyCheck) {
  Pair p;
  SendWr w; w.wr_id = 1; w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED; w.rkey = 0xdeadbeef; w.remote_addr = 0x1234;
  SendWr r = w; r.wr_id = 2; r.opcode = WR_RDMA_READ;
  ASSERT_TRUE(p.s.post_send(p.a.qp, {w, r}).ok());
  p.s.run();
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(wc[1].status, WC_SUCCESS);
  EXPECT_EQ(p.state(p.b), QPS_RTS);
}

TEST(TransportKeys, QpAccessFlagsAndMisalignedAtomic) {
  // QP without REMOTE_WRITE -> NAK invalid request -> REM_INV_REQ_ERR
  Pair p;
  QpAttr a; a.qp_access_flags = ACCESS_REMOTE_READ;
  ASSERT_TRUE(p.s.modify_qp(p.b.qp, a, QP_ACCESS_FLAGS).ok());
  ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 16).ok());
  p.s.run();
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_REM_INV_REQ_ERR);
  EXPECT_EQ(p.state(p.b), QPS_ERR);
  // local lkey failure -> rxe: LOC_QP_OP_ERR (copy_data -EINVAL; RxeKeyQuirks.LocalKeyFailureStatus), no packet
  Pair q;
  SendWr w; w.wr_id = 1; w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED; w.rkey = q.b.mr.rkey; w.remote_addr = q.b.buf.addr;
  w.sg_list = {{q.a.buf.addr, 16, q.a.mr.lkey ^ 1}};
  ASSERT_TRUE(q.s.post_send(q.a.qp, {w}).ok());
  q.s.run();
  wc = q.poll(q.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_LOC_QP_OP_ERR);
  EXPECT_EQ(q.state(q.b), QPS_RTS);
  // receive WQE with a bad lkey: NAK remote operational error; responder recv WC LOC_QP_OP_ERR
  Pair r;
  RecvWr rw; rw.wr_id = 3; rw.sg_list = {{r.b.buf.addr, 64, r.b.mr.lkey ^ 2}};
  ASSERT_TRUE(r.s.post_recv(r.b.qp, {rw}).ok());
  SendWr s; s.wr_id = 4; s.opcode = WR_SEND; s.sg_list = {{r.a.buf.addr, 16, r.a.mr.lkey}};
  ASSERT_TRUE(r.s.post_send(r.a.qp, {s}).ok());
  r.s.run();
  wc = r.poll(r.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_REM_OP_ERR);
  auto rwc = r.poll(r.b.rcq);
  ASSERT_EQ(rwc.size(), 1u);
  EXPECT_EQ(rwc[0].status, WC_LOC_QP_OP_ERR);
  // message longer than the receive buffer: rxe treats it as a malformed WQE, REM_OP_ERR (RxeKeyQuirks.SendLongerThanReceive)
  Pair t;
  RecvWr small; small.wr_id = 3; small.sg_list = {{t.b.buf.addr, 8, t.b.mr.lkey}};
  ASSERT_TRUE(t.s.post_recv(t.b.qp, {small}).ok());
  s.sg_list = {{t.a.buf.addr, 16, t.a.mr.lkey}};
  ASSERT_TRUE(t.s.post_send(t.a.qp, {s}).ok());
  t.s.run();
  wc = t.poll(t.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_REM_OP_ERR);
}
