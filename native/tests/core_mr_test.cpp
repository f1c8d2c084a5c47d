#include "core_fixture.h"

using namespace vlt;

namespace {
struct One {
  Session s{7};
  Handle dev, pd;
  BufferInfo b1, b2, b3;
  explicit One(const char* prof = "rxe") {
    dev = s.create_device(prof).value;
    pd = s.alloc_pd(dev).value;
    b1 = s.alloc_buffer(3 * 4096).value;
    b2 = s.alloc_buffer(3 * 4096).value;
    b3 = s.alloc_buffer(3 * 4096).value;
  }
};
}  // namespace

TEST(CoreMr, AccessRules) {
  One o;
  EXPECT_EQ(o.s.reg_mr(o.pd, o.b1.addr, 100, ACCESS_REMOTE_WRITE).err, EINVAL);
  EXPECT_NE(o.s.reg_mr(o.pd, o.b1.addr, 100, ACCESS_REMOTE_WRITE).msg.find("LOCAL_WRITE"), std::string::npos);
  EXPECT_EQ(o.s.reg_mr(o.pd, o.b1.addr, 100, ACCESS_REMOTE_ATOMIC | ACCESS_REMOTE_READ).err, EINVAL);
  EXPECT_EQ(o.s.reg_mr(o.pd, o.b1.addr, 100, ACCESS_ZERO_BASED | ACCESS_LOCAL_WRITE).err, EOPNOTSUPP);
  EXPECT_EQ(o.s.reg_mr(o.pd, o.b1.addr, 100, 1u << 9).err, EINVAL);
  EXPECT_EQ(o.s.reg_mr(o.pd, o.b1.addr, 0, ACCESS_LOCAL_WRITE).err, EINVAL);
  EXPECT_EQ(o.s.reg_mr(o.pd, o.b1.addr + 3 * 4096 - 10, 100, ACCESS_LOCAL_WRITE).err, EFAULT);   // into the guard page
  EXPECT_EQ(o.s.reg_mr(999, o.b1.addr, 100, 0).err, ENOENT);
  auto m = o.s.reg_mr(o.pd, o.b1.addr, 100, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_ATOMIC);
  ASSERT_TRUE(m.ok()) << m.msg;
  EXPECT_EQ(m.value.lkey, m.value.rkey);
  EXPECT_EQ(m.value.lkey >> 8, 1u);                   // first MR index
  EXPECT_EQ(m.value.state, "valid");
  EXPECT_EQ(m.value.kind, "user");
  EXPECT_EQ(m.value.iova, o.b1.addr);
  auto m2 = o.s.reg_mr(o.pd, o.b1.addr, 100, ACCESS_LOCAL_WRITE);
  EXPECT_EQ(m2.value.lkey >> 8, 2u);
  EXPECT_EQ(o.s.free_buffer(o.b1.handle).err, EBUSY);
  // capability off: MW_BIND on "minimal"
  One mn("minimal");
  EXPECT_EQ(mn.s.reg_mr(mn.pd, mn.b1.addr, 100, ACCESS_MW_BIND).err, EOPNOTSUPP);
  // ZERO_BASED where the profile allows it
  One cx("cx");
  auto z = cx.s.reg_mr(cx.pd, cx.b1.addr + 16, 100, ACCESS_LOCAL_WRITE | ACCESS_ZERO_BASED);
  ASSERT_TRUE(z.ok()) << z.msg;
  EXPECT_EQ(z.value.iova, 0u);
}

TEST(CoreMr, KeyBytePolicies) {
  // rxe: random but seeded -> reproducible
  One a, b;
  auto ka = a.s.reg_mr(a.pd, a.b1.addr, 64, 0).value.lkey, kb = b.s.reg_mr(b.pd, b.b1.addr, 64, 0).value.lkey;
  EXPECT_EQ(ka, kb);
  Session other(8);
  auto d = other.create_device("rxe").value;
  auto pd = other.alloc_pd(d).value;
  auto buf = other.alloc_buffer(64).value;
  std::vector<uint32_t> bytes;
  for (int i = 0; i < 8; i++) bytes.push_back(other.reg_mr(pd, buf.addr, 64, 0).value.lkey & 0xff);
  bool differs = false;
  for (auto x : bytes) differs |= x != bytes[0];
  EXPECT_TRUE(differs);
  // cx: increment; iwarp: zero
  One cx("cx");
  auto k1 = cx.s.reg_mr(cx.pd, cx.b1.addr, 64, 0).value.lkey, k2 = cx.s.reg_mr(cx.pd, cx.b1.addr, 64, 0).value.lkey;
  EXPECT_EQ((k1 + 1) & 0xff, k2 & 0xff);
  One iw("iwarp");
  EXPECT_EQ(iw.s.reg_mr(iw.pd, iw.b1.addr, 64, 0).value.lkey & 0xff, 0u);
}

TEST(CoreMr, ReregAdvancesKeyByte) {
  One o("iwarp");
  auto m = o.s.reg_mr(o.pd, o.b1.addr, 64, ACCESS_LOCAL_WRITE).value;
  EXPECT_EQ(o.s.rereg_mr(m.handle, 0, 0, 0, 0, 0).err, EINVAL);
  EXPECT_EQ(o.s.rereg_mr(m.handle, 4, 0, 0, 0, ACCESS_REMOTE_WRITE).err, EINVAL);
  auto r = o.s.rereg_mr(m.handle, 4, 0, 0, 0, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ);
  ASSERT_TRUE(r.ok()) << r.msg;
  EXPECT_EQ(r.value.lkey, (m.lkey & ~0xffu) | ((m.lkey + 1) & 0xff));
  EXPECT_EQ(r.value.access, (uint32_t)(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ));
  auto pd2 = o.s.alloc_pd(o.dev).value;
  auto r2 = o.s.rereg_mr(m.handle, 2 | 1, pd2, o.b2.addr, 128, 0);
  ASSERT_TRUE(r2.ok()) << r2.msg;
  EXPECT_EQ(r2.value.pd, pd2);
  EXPECT_EQ(r2.value.addr, o.b2.addr);
  EXPECT_EQ(o.s.dealloc_pd(pd2).err, EBUSY);
  // rxe: translation change not supported
  One x;
  auto mx = x.s.reg_mr(x.pd, x.b1.addr, 64, 0).value;
  EXPECT_EQ(x.s.rereg_mr(mx.handle, 1, 0, x.b2.addr, 64, 0).err, EOPNOTSUPP);
  auto rx = x.s.rereg_mr(mx.handle, 4, 0, 0, 0, ACCESS_LOCAL_WRITE);
  ASSERT_TRUE(rx.ok());
  EXPECT_EQ(rx.value.lkey, mx.lkey);               // rxe_rereg_user_mr changes the access in place: keys kept
  EXPECT_EQ(rx.value.rkey, mx.rkey);
  EXPECT_TRUE(x.s.dereg_mr(mx.handle).ok());
  EXPECT_EQ(x.s.dereg_mr(mx.handle).err, ENOENT);
  EXPECT_FALSE(x.s.mr_info(mx.handle).has_value());
}

TEST(CoreMr, AllocMrAndPageRule) {
  One mn("minimal");
  EXPECT_EQ(mn.s.alloc_mr(mn.pd, 4).err, EOPNOTSUPP);
  One o;
  EXPECT_EQ(o.s.alloc_mr(o.pd, 4, true).err, EOPNOTSUPP);     // no SG_GAPS on rxe
  EXPECT_EQ(o.s.alloc_mr(o.pd, 0).err, EINVAL);
  EXPECT_EQ(o.s.alloc_mr(o.pd, 513).err, EINVAL);
  auto f = o.s.alloc_mr(o.pd, 8);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f.value.state, "free");
  EXPECT_EQ(f.value.kind, "fast_reg");
  Handle mr = f.value.handle;
  // first element at an offset ending on a page boundary, then whole pages, then a short last element
  auto n = o.s.map_mr_sg(mr, {{o.b1.addr + 100, 4096 - 100, 0}, {o.b2.addr, 4096, 0}, {o.b3.addr, 100, 0}});
  ASSERT_TRUE(n.ok()) << n.msg;
  EXPECT_EQ(n.value, 3u);
  EXPECT_EQ(o.s.mr_info(mr)->length, 4096u - 100 + 4096 + 100);
  EXPECT_EQ(o.s.mr_info(mr)->iova, o.b1.addr + 100);
  // a gap: the previous element does not end on a page boundary -> stop after 1
  EXPECT_EQ(o.s.map_mr_sg(mr, {{o.b1.addr, 100, 0}, {o.b2.addr, 100, 0}}).value, 1u);
  // contiguous exception
  EXPECT_EQ(o.s.map_mr_sg(mr, {{o.b1.addr, 100, 0}, {o.b1.addr + 100, 200, 0}, {o.b1.addr + 300, 5, 0}}).value, 3u);
  // element starting mid-page after an aligned end -> refused
  EXPECT_EQ(o.s.map_mr_sg(mr, {{o.b1.addr, 4096, 0}, {o.b2.addr + 8, 100, 0}}).value, 1u);
  // page budget: max_num_sg = 2 pages
  auto f2 = o.s.alloc_mr(o.pd, 2).value;
  EXPECT_EQ(o.s.map_mr_sg(f2.handle, {{o.b1.addr, 4096, 0}, {o.b2.addr, 4096, 0}, {o.b3.addr, 4096, 0}}).value, 2u);
  EXPECT_EQ(o.s.map_mr_sg(f2.handle, {{o.b1.addr, 8192, 0}, {o.b3.addr, 4096, 0}}).value, 1u);
  EXPECT_EQ(o.s.map_mr_sg(f2.handle, {{o.b1.addr, 4096, 0}}, 1000).err, EINVAL);   // page size
  EXPECT_EQ(o.s.map_mr_sg(f2.handle, {{o.b1.addr + 3 * 4096, 16, 0}}).err, EFAULT);
  auto user = o.s.reg_mr(o.pd, o.b1.addr, 64, 0).value;
  EXPECT_EQ(o.s.map_mr_sg(user.handle, {{o.b1.addr, 16, 0}}).err, EINVAL);
  // cx indirect: byte-aligned gaps accepted
  One cx("cx");
  auto ind = cx.s.alloc_mr(cx.pd, 4, true);
  ASSERT_TRUE(ind.ok()) << ind.msg;
  EXPECT_EQ(ind.value.kind, "indirect");
  EXPECT_EQ(cx.s.map_mr_sg(ind.value.handle, {{cx.b1.addr + 3, 10, 0}, {cx.b2.addr + 77, 50, 0}, {cx.b1.addr + 1000, 1, 0}}).value, 3u);
  EXPECT_EQ(cx.s.mr_info(ind.value.handle)->length, 61u);
  EXPECT_EQ(cx.s.map_mr_sg(ind.value.handle, {{cx.b1.addr, 1, 0}, {cx.b1.addr + 2, 1, 0}, {cx.b1.addr + 4, 1, 0}, {cx.b1.addr + 6, 1, 0}, {cx.b1.addr + 8, 1, 0}}).value, 4u);
}
