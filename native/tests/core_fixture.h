// Shared helpers for the core tests: two devices, a connected QP pair, buffers with canaries.
#pragma once
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "vl/session.h"

namespace vlt {
using namespace vl;

struct Side {
  Handle dev = 0, pd = 0, scq = 0, rcq = 0, qp = 0, srq = 0;
  uint32_t qpn = 0;
  BufferInfo buf;
  MrInfo mr;
};

inline std::vector<uint8_t> read(Session& s, uint64_t addr, size_t n) {
  std::vector<uint8_t> v(n);
  EXPECT_TRUE(s.read_memory(addr, v.data(), n).ok());
  return v;
}
inline void fill(Session& s, uint64_t addr, size_t n, uint8_t b) {
  std::vector<uint8_t> v(n, b);
  ASSERT_TRUE(s.write_memory(addr, v.data(), n).ok());
}
inline void pattern(Session& s, uint64_t addr, size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i++) v[i] = static_cast<uint8_t>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
  ASSERT_TRUE(s.write_memory(addr, v.data(), n).ok());
}

struct Pair {
  Session s;
  Side a, b;
  uint32_t qpt;
  explicit Pair(const std::string& prof = "rxe", uint32_t qp_type = QPT_RC, uint64_t seed = 1, uint32_t buf_len = 65536,
                uint32_t access = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC,
                bool use_srq = false, uint32_t max_wr = 64)
      : s(seed), qpt(qp_type) {
    for (Side* x : {&a, &b}) {
      x->dev = s.create_device(prof).value;
      x->pd = s.alloc_pd(x->dev).value;
      x->scq = s.create_cq(x->dev, 1024).value;
      x->rcq = s.create_cq(x->dev, 1024).value;
      if (use_srq) x->srq = s.create_srq(x->pd, 256, 4, 0).value;
      QpInitAttr ia;
      ia.pd = x->pd; ia.send_cq = x->scq; ia.recv_cq = x->rcq; ia.qp_type = qp_type; ia.srq = x->srq;
      ia.cap.max_send_wr = max_wr; ia.cap.max_recv_wr = max_wr; ia.cap.max_inline_data = 64;
      auto q = s.create_qp(x->pd, ia);
      EXPECT_TRUE(q.ok()) << q.msg;
      x->qp = q.value.handle; x->qpn = q.value.qp_num;
      x->buf = s.alloc_buffer(buf_len).value;
      auto m = s.reg_mr(x->pd, x->buf.addr, buf_len, access);
      EXPECT_TRUE(m.ok()) << m.msg;
      x->mr = m.value;
    }
    connect(a, b, 100, 200);
    connect(b, a, 200, 100);
  }
  void connect(Side& x, Side& y, uint32_t my_psn, uint32_t peer_psn, uint32_t mtu = MTU_1024, uint32_t timeout = 10) {
    QpAttr at;
    at.qp_state = QPS_INIT; at.pkey_index = 0; at.port_num = 1;
    at.qp_access_flags = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
    at.qkey = 0x11111111;
    uint32_t m = QP_STATE | QP_PKEY_INDEX | QP_PORT | (qpt == QPT_UD ? QP_QKEY : QP_ACCESS_FLAGS);
    auto st = s.modify_qp(x.qp, at, m);
    ASSERT_TRUE(st.ok()) << st.msg;
    at.qp_state = QPS_RTR; at.path_mtu = mtu; at.dest_device = y.dev; at.dest_qp_num = y.qpn; at.rq_psn = peer_psn;
    at.max_dest_rd_atomic = 4; at.min_rnr_timer = 1;
    m = QP_STATE;
    if (qpt == QPT_UC) m |= QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN;
    if (qpt == QPT_RC) m |= QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER;
    st = s.modify_qp(x.qp, at, m);
    ASSERT_TRUE(st.ok()) << st.msg;
    at.qp_state = QPS_RTS; at.sq_psn = my_psn; at.timeout = timeout; at.retry_cnt = 7; at.rnr_retry = 7; at.max_rd_atomic = 4;
    m = QP_STATE | QP_SQ_PSN;
    if (qpt == QPT_RC) m |= QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC;
    st = s.modify_qp(x.qp, at, m);
    ASSERT_TRUE(st.ok()) << st.msg;
  }
  PostResult write(Side& x, Side& y, uint64_t loff, uint64_t roff, uint32_t len, uint64_t wr_id = 1,
                   uint32_t op = WR_RDMA_WRITE, uint32_t flags = SEND_SIGNALED) {
    SendWr w;
    w.wr_id = wr_id; w.opcode = op; w.send_flags = flags;
    if (len) w.sg_list = {{x.buf.addr + loff, len, x.mr.lkey}};
    w.remote_addr = y.buf.addr + roff; w.rkey = y.mr.rkey;
    return s.post_send(x.qp, {w});
  }
  PostResult recv(Side& x, uint64_t off, uint32_t len, uint64_t wr_id = 1) {
    RecvWr r; r.wr_id = wr_id; r.sg_list = {{x.buf.addr + off, len, x.mr.lkey}};
    if (x.srq) return s.post_srq_recv(x.srq, {r});
    return s.post_recv(x.qp, {r});
  }
  std::vector<Wc> poll(Handle cq, uint32_t n = 64) { return s.poll_cq(cq, n); }
  // Posts `w` on x's QP, runs the engine to idle and polls x's send CQ: the one completion (a failure, and a WC with
  // status 0xffffffff, when the post is refused or there is not exactly one).
  Wc send_one(Side& x, const SendWr& w) {
    auto r = s.post_send(x.qp, {w});
    EXPECT_TRUE(r.ok()) << r.msg;
    s.run();
    auto wc = poll(x.scq);
    EXPECT_EQ(wc.size(), 1u);
    if (wc.size() == 1) return wc[0];
    Wc none;
    none.status = 0xffffffffu;
    return none;
  }
  // a new connected QP pair on the same devices; x uses (xs, xr) CQs, y uses (ys, yr)
  void fresh(Side& x, Side& y, Handle xs, Handle xr, Handle ys, Handle yr) {
    x = a; y = b;
    for (auto [side, sc, rc] : {std::tuple<Side*, Handle, Handle>{&x, xs, xr}, {&y, ys, yr}}) {
      QpInitAttr ia; ia.pd = side->pd; ia.send_cq = sc; ia.recv_cq = rc; ia.qp_type = qpt;
      auto q = s.create_qp(side->pd, ia);
      EXPECT_TRUE(q.ok()) << q.msg;
      side->qp = q.value.handle; side->qpn = q.value.qp_num; side->scq = sc; side->rcq = rc;
    }
    connect(x, y, 1000, 2000);
    connect(y, x, 2000, 1000);
  }
  uint32_t state(Side& x) { return s.query_qp(x.qp)->attr.qp_state; }
};

}  // namespace vlt
