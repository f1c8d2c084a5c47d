// Session::use_process_memory (native/src/core/process_memory.cpp): the session's addresses are the process's own,
// as the libibverbs-compatible library (native/libibverbs) needs for a program's malloc'd buffers.
#include <cstdlib>

#include "core_fixture.h"

using namespace vlt;

TEST(CoreProcessMemory, RefusedOnceTheSessionHasBuffers) {
  Session s(3);
  auto b = s.alloc_buffer(4096);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(s.use_process_memory().err, EBUSY);
  ASSERT_TRUE(s.free_buffer(b.value.handle).ok());
  EXPECT_TRUE(s.use_process_memory().ok());
  EXPECT_EQ(s.alloc_buffer(4096).err, EBUSY);           // the two address spaces do not mix
}

TEST(CoreProcessMemory, WriteAndReadBetweenTheProcesssOwnBuffers) {
  Session s(5);
  ASSERT_TRUE(s.use_process_memory().ok());
  Handle da = s.create_device("rxe").value, db = s.create_device("rxe").value;
  Handle pa = s.alloc_pd(da).value, pb = s.alloc_pd(db).value;
  std::vector<uint8_t> src(10000), dst(10000, 0xee);
  for (size_t i = 0; i < src.size(); i++) src[i] = static_cast<uint8_t>(i * 13);
  const uint32_t acc = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;
  auto ma = s.reg_mr(pa, reinterpret_cast<uint64_t>(src.data()), src.size(), acc);
  auto mb = s.reg_mr(pb, reinterpret_cast<uint64_t>(dst.data()), dst.size(), acc);
  ASSERT_TRUE(ma.ok() && mb.ok()) << ma.msg << mb.msg;
  EXPECT_EQ(s.reg_mr(pa, 0, 16, ACCESS_LOCAL_WRITE).err, EFAULT);   // address 0 is never memory
  Handle qa = 0, qb = 0;
  uint32_t na = 0, nb = 0;
  for (auto [dev, pd, q, n] : {std::tuple{da, pa, &qa, &na}, std::tuple{db, pb, &qb, &nb}}) {
    QpInitAttr ia;
    ia.pd = pd; ia.send_cq = ia.recv_cq = s.create_cq(dev, 16).value;
    auto r = s.create_qp(pd, ia);
    ASSERT_TRUE(r.ok()) << r.msg;
    *q = r.value.handle; *n = r.value.qp_num;
  }
  for (auto [q, dest, qpn] : {std::tuple{qa, db, nb}, std::tuple{qb, da, na}}) {
    QpAttr at;
    at.qp_state = QPS_INIT; at.qp_access_flags = acc;
    ASSERT_TRUE(s.modify_qp(q, at, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS).ok());
    at.qp_state = QPS_RTR; at.dest_device = dest; at.dest_qp_num = qpn;
    ASSERT_TRUE(s.modify_qp(q, at, QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER).ok());
    at.qp_state = QPS_RTS;
    ASSERT_TRUE(s.modify_qp(q, at, QP_STATE | QP_SQ_PSN | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC).ok());
  }
  SendWr w;
  w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED;
  w.sg_list = {{reinterpret_cast<uint64_t>(src.data()), 9000, ma.value.lkey}};
  w.remote_addr = reinterpret_cast<uint64_t>(dst.data()) + 7; w.rkey = mb.value.rkey;
  ASSERT_TRUE(s.post_send(qa, {w}).ok());
  s.run();
  auto cq = s.query_qp(qa)->init.send_cq;
  auto wc = s.poll_cq(cq, 4);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_SUCCESS);
  EXPECT_EQ(0, std::memcmp(src.data(), dst.data() + 7, 9000));        // the bytes are in the vector's own memory
  EXPECT_EQ(dst[6], 0xee);
  EXPECT_EQ(dst[9007], 0xee);
  // an access beyond the MR is still refused by the key check, whatever the process has mapped there
  w.remote_addr = reinterpret_cast<uint64_t>(dst.data()) + 9990; w.sg_list[0].length = 100;
  ASSERT_TRUE(s.post_send(qa, {w}).ok());
  s.run();
  wc = s.poll_cq(cq, 4);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WC_REM_ACCESS_ERR);
  // read_memory / write_memory take process addresses too
  uint8_t b[4] = {1, 2, 3, 4};
  ASSERT_TRUE(s.write_memory(reinterpret_cast<uint64_t>(dst.data()), b, 4).ok());
  EXPECT_EQ(dst[3], 4);
}
