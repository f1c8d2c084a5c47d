#include "core_fixture.h"
#include "core/wr_info.h"

#include <iterator>

using namespace vlt;

namespace {
struct QpEnv {
  Session s;
  Handle dev, dev2, pd, cq;
  explicit QpEnv(const char* prof = "rxe") {
    dev = s.create_device(prof).value;
    dev2 = s.create_device(prof).value;
    pd = s.alloc_pd(dev).value;
    cq = s.create_cq(dev, 64).value;
  }
  Handle qp(uint32_t type = QPT_RC) {
    QpInitAttr ia; ia.pd = pd; ia.send_cq = cq; ia.recv_cq = cq; ia.qp_type = type; ia.cap.max_send_wr = 2; ia.cap.max_recv_wr = 2;
    ia.cap.max_inline_data = 16;
    auto r = s.create_qp(pd, ia);
    EXPECT_TRUE(r.ok()) << r.msg;
    return r.value.handle;
  }
};
QpAttr init_attr() { QpAttr a; a.qp_state = QPS_INIT; a.qp_access_flags = ACCESS_REMOTE_WRITE; return a; }
}  // namespace

TEST(CoreQp, CreateValidation) {
  QpEnv e;
  QpInitAttr ia; ia.pd = e.pd; ia.send_cq = e.cq; ia.recv_cq = e.cq;
  ia.qp_type = 9;
  EXPECT_EQ(e.s.create_qp(e.pd, ia).err, EINVAL);
  ia.qp_type = QPT_RC; ia.send_cq = 12345;
  EXPECT_NE(e.s.create_qp(e.pd, ia).msg.find("send_cq"), std::string::npos);
  ia.send_cq = e.cq; ia.cap.max_send_sge = 33;
  EXPECT_NE(e.s.create_qp(e.pd, ia).msg.find("max_send_sge"), std::string::npos);
  ia.cap.max_send_sge = 4; ia.cap.max_inline_data = 401;
  EXPECT_EQ(e.s.create_qp(e.pd, ia).err, EINVAL);
  ia.cap.max_inline_data = 0;
  auto q = e.s.create_qp(e.pd, ia);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q.value.qp_num, 0x11u);                  // rxe QPNs start at 17
  EXPECT_EQ(e.s.query_qp(q.value.handle)->attr.qp_state, QPS_RESET);
  QpEnv iw("iwarp");
  QpInitAttr ib; ib.pd = iw.pd; ib.send_cq = iw.cq; ib.recv_cq = iw.cq; ib.qp_type = QPT_UD;
  EXPECT_EQ(iw.s.create_qp(iw.pd, ib).err, EOPNOTSUPP);
  EXPECT_EQ(e.s.dealloc_pd(e.pd).err, EBUSY);
  EXPECT_TRUE(e.s.destroy_qp(q.value.handle).ok());
}

TEST(CoreQp, StateMachineMasks) {
  QpEnv e;
  Handle q = e.qp();
  QpAttr a = init_attr();
  auto st = e.s.modify_qp(q, a, QP_STATE | QP_PKEY_INDEX | QP_PORT);
  EXPECT_EQ(st.err, EINVAL);
  EXPECT_NE(st.msg.find("missing IBV_QP_ACCESS_FLAGS"), std::string::npos) << st.msg;
  st = e.s.modify_qp(q, a, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS | QP_QKEY);
  EXPECT_NE(st.msg.find("IBV_QP_QKEY not allowed"), std::string::npos) << st.msg;
  a.qp_state = QPS_RTR;
  EXPECT_NE(e.s.modify_qp(q, a, QP_STATE).msg.find("not allowed"), std::string::npos);   // RESET->RTR
  a = init_attr();
  a.port_num = 2;
  EXPECT_NE(e.s.modify_qp(q, a, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS).msg.find("port_num"), std::string::npos);
  a.port_num = 1;
  ASSERT_TRUE(e.s.modify_qp(q, a, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS).ok());
  a.qp_state = QPS_RTR; a.dest_device = e.dev2; a.dest_qp_num = 0x11; a.path_mtu = MTU_1024;
  uint32_t rtr = QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC;
  st = e.s.modify_qp(q, a, rtr);
  EXPECT_NE(st.msg.find("missing IBV_QP_MIN_RNR_TIMER"), std::string::npos) << st.msg;
  a.path_mtu = MTU_4096;
  EXPECT_NE(e.s.modify_qp(q, a, rtr | QP_MIN_RNR_TIMER).msg.find("path_mtu"), std::string::npos);
  a.path_mtu = MTU_1024; a.dest_device = 777;
  EXPECT_NE(e.s.modify_qp(q, a, rtr | QP_MIN_RNR_TIMER).msg.find("dest_device"), std::string::npos);
  a.dest_device = e.dev2; a.max_dest_rd_atomic = 129;
  EXPECT_NE(e.s.modify_qp(q, a, rtr | QP_MIN_RNR_TIMER).msg.find("max_dest_rd_atomic"), std::string::npos);
  a.max_dest_rd_atomic = 1;
  ASSERT_TRUE(e.s.modify_qp(q, a, rtr | QP_MIN_RNR_TIMER).ok());
  a.qp_state = QPS_RTS;
  st = e.s.modify_qp(q, a, QP_STATE | QP_SQ_PSN | QP_TIMEOUT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC);
  EXPECT_NE(st.msg.find("missing IBV_QP_RETRY_CNT"), std::string::npos) << st.msg;
  a.retry_cnt = 8;
  EXPECT_NE(e.s.modify_qp(q, a, QP_STATE | QP_SQ_PSN | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC).msg.find("retry_cnt"), std::string::npos);
  a.retry_cnt = 7;
  ASSERT_TRUE(e.s.modify_qp(q, a, QP_STATE | QP_SQ_PSN | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC).ok());
  EXPECT_EQ(e.s.query_qp(q)->attr.qp_state, QPS_RTS);
  // RTS->RTS with an optional attribute; then a required-only one is refused
  EXPECT_TRUE(e.s.modify_qp(q, a, QP_MIN_RNR_TIMER).ok());
  EXPECT_EQ(e.s.modify_qp(q, a, QP_SQ_PSN).err, EINVAL);
  a.cur_qp_state = QPS_RTR;
  EXPECT_NE(e.s.modify_qp(q, a, QP_CUR_STATE | QP_MIN_RNR_TIMER).msg.find("cur_qp_state"), std::string::npos);
  // any -> ERR, ERR -> RESET, RESET -> INIT again
  a.qp_state = QPS_ERR;
  EXPECT_TRUE(e.s.modify_qp(q, a, QP_STATE).ok());
  a.qp_state = QPS_RTS;
  EXPECT_EQ(e.s.modify_qp(q, a, QP_STATE).err, EINVAL);
  a.qp_state = QPS_RESET;
  EXPECT_TRUE(e.s.modify_qp(q, a, QP_STATE).ok());
  // UD: QKEY instead of ACCESS_FLAGS; RTR needs nothing else; RTS needs SQ_PSN only
  Handle u = e.qp(QPT_UD);
  QpAttr ua; ua.qp_state = QPS_INIT; ua.qkey = 0x1234;
  EXPECT_NE(e.s.modify_qp(u, ua, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS).msg.find("missing IBV_QP_QKEY"), std::string::npos);
  ASSERT_TRUE(e.s.modify_qp(u, ua, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_QKEY).ok());
  ua.qp_state = QPS_RTR;
  ASSERT_TRUE(e.s.modify_qp(u, ua, QP_STATE).ok());
  ua.qp_state = QPS_RTS;
  EXPECT_NE(e.s.modify_qp(u, ua, QP_STATE | QP_SQ_PSN | QP_TIMEOUT).msg.find("IBV_QP_TIMEOUT not allowed"), std::string::npos);
  ASSERT_TRUE(e.s.modify_qp(u, ua, QP_STATE | QP_SQ_PSN).ok());
  // UC INIT->RTR needs no MAX_DEST_RD_ATOMIC / MIN_RNR_TIMER (and they are not allowed)
  Handle c = e.qp(QPT_UC);
  QpAttr ca = init_attr();
  ASSERT_TRUE(e.s.modify_qp(c, ca, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS).ok());
  ca.qp_state = QPS_RTR; ca.dest_device = e.dev2;
  EXPECT_EQ(e.s.modify_qp(c, ca, QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MIN_RNR_TIMER).err, EINVAL);
  EXPECT_TRUE(e.s.modify_qp(c, ca, QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN).ok());
}

TEST(CoreQp, PostSendValidation) {
  // cx grants exactly max_send_wr 2 (rxe would grant 3: RxeKeyQuirks.QpCapsGranted)
  Pair p("cx", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE, false, 2);
  SendWr ok; ok.opcode = WR_RDMA_WRITE; ok.sg_list = {{p.a.buf.addr, 8, p.a.mr.lkey}}; ok.remote_addr = p.b.buf.addr; ok.rkey = p.b.mr.rkey;
  SendWr many = ok; many.sg_list.assign(5, ok.sg_list[0]);
  auto r = p.s.post_send(p.a.qp, {ok, many});
  EXPECT_EQ(r.err, EINVAL);
  EXPECT_EQ(r.bad_wr, 1u);
  EXPECT_NE(r.msg.find("wr[1].sg_list"), std::string::npos) << r.msg;
  r = p.s.post_send(p.a.qp, {ok, ok});                 // one already queued: the second overflows
  EXPECT_EQ(r.err, ENOMEM);
  EXPECT_EQ(r.bad_wr, 1u);
  p.s.run();
  SendWr in = ok; in.send_flags = SEND_INLINE; in.inline_data.assign(65, 1);
  r = p.s.post_send(p.a.qp, {in});
  EXPECT_EQ(r.err, EINVAL);
  EXPECT_NE(r.msg.find("max_inline_data"), std::string::npos);
  SendWr at = ok; at.opcode = WR_ATOMIC_FETCH_AND_ADD; at.remote_addr += 4;
  EXPECT_NE(p.s.post_send(p.a.qp, {at}).msg.find("8-byte aligned"), std::string::npos);
  SendWr bad = ok; bad.opcode = 17;
  EXPECT_NE(p.s.post_send(p.a.qp, {bad}).msg.find("opcode"), std::string::npos);
  SendWr bind; bind.opcode = WR_BIND_MW; bind.mw = 4242;
  EXPECT_NE(p.s.post_send(p.a.qp, {bind}).msg.find(".mw"), std::string::npos);
  // wrong state
  QpAttr e; e.qp_state = QPS_RESET;
  ASSERT_TRUE(p.s.modify_qp(p.a.qp, e, QP_STATE).ok());
  EXPECT_NE(p.s.post_send(p.a.qp, {ok}).msg.find("state RESET"), std::string::npos);
  EXPECT_EQ(p.s.post_recv(p.a.qp, {RecvWr{}}).err, EINVAL);
  // opcode not valid for the QP type
  Pair u("rxe", QPT_UC);
  SendWr rd = ok; rd.opcode = WR_RDMA_READ; rd.sg_list = {{u.a.buf.addr, 8, u.a.mr.lkey}};
  r = u.s.post_send(u.a.qp, {rd});
  EXPECT_EQ(r.err, EINVAL);
  EXPECT_NE(r.msg.find("not valid on a UC QP"), std::string::npos);
  // capabilities the profile lacks
  Pair m("minimal");
  SendWr fa = ok; fa.opcode = WR_ATOMIC_CMP_AND_SWP; fa.sg_list = {{m.a.buf.addr, 8, m.a.mr.lkey}};
  EXPECT_EQ(m.s.post_send(m.a.qp, {fa}).err, EOPNOTSUPP);
  SendWr li; li.opcode = WR_LOCAL_INV; li.imm_data = m.a.mr.rkey;
  EXPECT_EQ(m.s.post_send(m.a.qp, {li}).err, EOPNOTSUPP);
  SendWr sw; sw.opcode = WR_SEND_WITH_INV;
  EXPECT_EQ(m.s.post_send(m.a.qp, {sw}).err, EOPNOTSUPP);
  Pair iw("iwarp");
  EXPECT_EQ(iw.s.post_send(iw.a.qp, {fa}).err, EOPNOTSUPP);
  // post_recv: too many SGEs, full
  Pair q("rxe", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE, false, 1);
  RecvWr rw; rw.sg_list = {{q.b.buf.addr, 8, q.b.mr.lkey}};
  RecvWr rmany = rw; rmany.sg_list.assign(5, rw.sg_list[0]);
  EXPECT_EQ(q.s.post_recv(q.b.qp, {rmany}).err, EINVAL);
  auto rr = q.s.post_recv(q.b.qp, {rw, rw});
  EXPECT_EQ(rr.err, ENOMEM);
  EXPECT_EQ(rr.bad_wr, 1u);
}

TEST(CoreQp, ErrorFlushesBothQueues) {
  Pair p;
  ASSERT_TRUE(p.recv(p.b, 0, 64, 5).ok());
  ASSERT_TRUE(p.recv(p.b, 64, 64, 6).ok());
  QpAttr e; e.qp_state = QPS_ERR;
  ASSERT_TRUE(p.s.modify_qp(p.b.qp, e, QP_STATE).ok());
  auto wc = p.poll(p.b.rcq);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, WC_WR_FLUSH_ERR);
  EXPECT_EQ(wc[0].opcode, WC_RECV);
  EXPECT_EQ(wc[1].wr_id, 6u);
  // posting to an ERR QP completes with flush errors
  ASSERT_TRUE(p.write(p.b, p.a, 0, 0, 8, 9).ok());
  p.s.run();
  wc = p.poll(p.b.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_WR_FLUSH_ERR);
  EXPECT_EQ(wc[0].wr_id, 9u);
}

TEST(CoreQp, SqdDrainsThenResumes) {
  Pair p;
  pattern(p.s, p.a.buf.addr, 8192, 1);
  ASSERT_TRUE(p.write(p.a, p.b, 0, 0, 8192, 1).ok());
  ASSERT_TRUE(p.s.step());                             // the requester has started the WRITE
  QpAttr a; a.qp_state = QPS_SQD;
  ASSERT_TRUE(p.s.modify_qp(p.a.qp, a, QP_STATE | QP_EN_SQD_ASYNC_NOTIFY).ok());
  ASSERT_TRUE(p.write(p.a, p.b, 0, 16384, 100, 2).ok());   // posted while draining: not started
  p.s.drain_events();
  p.s.run();
  auto wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 1u);                            // the started WRITE finished, the new one waits
  EXPECT_EQ(wc[0].wr_id, 1u);
  size_t drained = 0;
  for (auto& e : p.s.drain_events()) drained += e.kind == EventKind::AsyncEvent && e.a == EVENT_SQ_DRAINED;
  EXPECT_EQ(drained, 1u);
  a.qp_state = QPS_RTS;
  ASSERT_TRUE(p.s.modify_qp(p.a.qp, a, QP_STATE).ok());
  p.s.run();
  wc = p.poll(p.a.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 2u);
  EXPECT_EQ(read(p.s, p.a.buf.addr, 8192), read(p.s, p.b.buf.addr, 8192));
}

// The WR opcode table (core/wr_info.h): one row per opcode rdma-core names (kWrOpcodeNames), and the QP types of
// IBA vol. 1 §10.7.3.1 (RDMA READ and atomics RC only; UD sends only).
TEST(WrOpInfo, OneRowPerNamedOpcodeWithTheIbaQpTypes) {
  ASSERT_EQ(std::size(kWrOpInfo), std::size(kWrOpcodeNames));
  for (const auto& n : kWrOpcodeNames) {
    const WrOpInfo* i = wr_op_info(static_cast<uint32_t>(n.value));
    ASSERT_NE(i, nullptr) << n.name;
    EXPECT_STREQ(wr_op_name(i->op), n.name);
    EXPECT_TRUE(i->qp_types & WRQ_RC) << n.name;   // every send opcode is valid on RC
    const bool ud = i->op == WR_SEND || i->op == WR_SEND_WITH_IMM;
    EXPECT_EQ(bool(i->qp_types & WRQ_UD), ud) << n.name;
    EXPECT_EQ(bool(i->qp_types & WRQ_UC), !(i->flags & (WRF_READ | WRF_ATOMIC))) << n.name;
  }
  // the solicited event bit goes with the operations that complete a receive (IBA 9.2.3)
  for (uint32_t op : {WR_SEND, WR_SEND_WITH_IMM, WR_SEND_WITH_INV, WR_RDMA_WRITE_WITH_IMM}) EXPECT_TRUE(wr_solicitable(op)) << wr_op_name(op);
  for (uint32_t op : {WR_RDMA_WRITE, WR_RDMA_READ, WR_ATOMIC_FETCH_AND_ADD, WR_LOCAL_INV, WR_BIND_MW, WR_REG_MR}) EXPECT_FALSE(wr_solicitable(op)) << wr_op_name(op);
  EXPECT_TRUE(wr_is_read_or_atomic(WR_RDMA_READ_WITH_INV));
  EXPECT_TRUE(wr_is_atomic(WR_ATOMIC_CMP_AND_SWP));
  EXPECT_FALSE(wr_is_read_or_atomic(WR_SEND));
  EXPECT_EQ(wr_op_info(10), nullptr);   // no opcode 10 (IBV_WR_TSO is not modelled)
  EXPECT_STREQ(wr_op_name(10), "unknown");
}
