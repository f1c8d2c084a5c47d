// The session's object budget (native/src/core/object_budget.cpp): objects charged with their rings, ENOMEM naming
// the limit past it, released when destroyed.
#include "core_fixture.h"

using namespace vlt;

TEST(ObjectBudget, QpsPastTheBudgetFailWithENOMEMNamingItAndDestroyReleases) {
  Session s(1);
  const uint64_t base0 = s.object_bytes();
  EXPECT_EQ(base0, 0u);
  Handle dev = s.create_device("rxe").value;
  Handle pd = s.alloc_pd(dev).value;
  Handle cq = s.create_cq(dev, 64).value;
  const uint64_t base = s.object_bytes();
  EXPECT_GT(base, 64u * sizeof(Wc));                   // the device and the CQ with its ring
  s.set_object_limit(base + (2ull << 20));              // 2 MiB for the QPs
  QpInitAttr ia;
  ia.pd = pd; ia.send_cq = cq; ia.recv_cq = cq; ia.qp_type = QPT_RC;
  ia.cap.max_send_wr = 256; ia.cap.max_recv_wr = 256;
  std::vector<Handle> qps;
  Result<QpInfo> r;
  for (int i = 0; i < 100000; i++) {
    r = s.create_qp(pd, ia);
    if (!r.ok()) break;
    qps.push_back(r.value.handle);
  }
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.err, ENOMEM);
  EXPECT_NE(r.msg.find("object budget"), std::string::npos) << r.msg;
  EXPECT_NE(r.msg.find(std::to_string((base + (2ull << 20)) >> 20) + " MiB"), std::string::npos) << r.msg;
  EXPECT_GT(qps.size(), 2u);
  EXPECT_LT(qps.size(), 1000u);                         // each QP charged its rings: 2 x 256 WQEs, rounded up
  EXPECT_LE(s.object_bytes(), base + (2ull << 20));
  // a failed create takes no handle: the next object's handle follows the last good one's
  ASSERT_TRUE(s.destroy_qp(qps.back()).ok());
  auto again = s.create_qp(pd, ia);
  ASSERT_TRUE(again.ok()) << again.msg;
  qps.back() = again.value.handle;
  for (Handle q : qps) ASSERT_TRUE(s.destroy_qp(q).ok());
  EXPECT_EQ(s.object_bytes(), base);
  // every kind is charged and released
  auto srq = s.create_srq(pd, 128, 2, 0);
  ASSERT_TRUE(srq.ok());
  auto mw = s.alloc_mw(pd, MW_TYPE_1);
  ASSERT_TRUE(mw.ok()) << mw.msg;
  EXPECT_GT(s.object_bytes(), base + 128 * sizeof(RecvWr));
  ASSERT_TRUE(s.destroy_srq(srq.value).ok());
  ASSERT_TRUE(s.dealloc_mw(mw.value.handle).ok());
  EXPECT_EQ(s.object_bytes(), base);
  ASSERT_TRUE(s.destroy_cq(cq).ok());
  ASSERT_TRUE(s.dealloc_pd(pd).ok());
  ASSERT_TRUE(s.destroy_device(dev).ok());
  EXPECT_EQ(s.object_bytes(), 0u);
  s.set_object_limit(1);
  auto d = s.create_device("rxe");
  EXPECT_EQ(d.err, ENOMEM);
  EXPECT_NE(d.msg.find("device: the session's objects would take more than 0 MiB"), std::string::npos) << d.msg;
}
