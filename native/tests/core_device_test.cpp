#include <gtest/gtest.h>

#include <cerrno>

#include "vl/session.h"

using namespace vl;

TEST(CoreDevice, ProfilesAndGids) {
  Session s(1);
  auto d1 = s.create_device("rxe");
  ASSERT_TRUE(d1.ok()) << d1.msg;
  auto d2 = s.create_device("cx", "mycx");
  ASSERT_TRUE(d2.ok());
  EXPECT_EQ(s.create_device("bogus").err, EINVAL);
  EXPECT_EQ(s.create_device("rxe", "mycx").err, EEXIST);
  auto devs = s.devices();
  ASSERT_EQ(devs.size(), 2u);
  EXPECT_EQ(devs[0].name, "vlrxe0");
  EXPECT_EQ(devs[0].profile.device_cap_flags & DEVICE_MEM_WINDOW_TYPE_2B, (uint64_t)DEVICE_MEM_WINDOW_TYPE_2B);
  EXPECT_EQ(devs[0].gids[0].gid[0], 0xfe);
  EXPECT_EQ(devs[0].gids[0].gid[1], 0x80);
  EXPECT_EQ(devs[0].gids[1].gid[10], 0xff);
  EXPECT_EQ(devs[0].gids[1].gid[12], 10);
  EXPECT_EQ(devs[0].gids[1].gid[15], 1);
  EXPECT_EQ(devs[1].gids[1].gid[15], 2);
  EXPECT_EQ(builtin_profiles().size(), 5u);
  EXPECT_TRUE(s.create_device("iwarp").ok());
  EXPECT_TRUE(s.create_device("minimal").ok());
}

// The session's buffers share one memory limit: past it alloc_buffer fails with ENOMEM (naming the limit) and
// nothing is allocated; freeing a buffer gives its pages back.
TEST(CoreDevice, BuffersStopAtTheSessionMemoryLimit) {
  Session s(1);
  s.set_memory_limit(4 * 4096);
  auto a = s.alloc_buffer(2 * 4096);
  auto b = s.alloc_buffer(4096 + 1);            // page-rounded: 2 pages, the limit is reached
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = s.alloc_buffer(1);
  EXPECT_EQ(c.err, ENOMEM);
  EXPECT_NE(c.msg.find("memory limit"), std::string::npos) << c.msg;
  EXPECT_TRUE(s.free_buffer(a.value.handle).ok());
  EXPECT_TRUE(s.alloc_buffer(2 * 4096).ok());
  EXPECT_EQ(s.alloc_buffer(1).err, ENOMEM);
  EXPECT_EQ(Session::kDefaultMemoryLimit, 1ull << 30);
}

TEST(CoreDevice, PdAndBuffers) {
  Session s(1);
  auto d = s.create_device("rxe");
  auto pd = s.alloc_pd(d.value);
  ASSERT_TRUE(pd.ok());
  EXPECT_EQ(s.alloc_pd(999).err, ENOENT);
  auto b1 = s.alloc_buffer(100);
  auto b2 = s.alloc_buffer(8192);
  ASSERT_TRUE(b1.ok() && b2.ok());
  EXPECT_EQ(b1.value.addr, 0x7f0000000000ull);
  EXPECT_EQ(b2.value.addr, 0x7f0000000000ull + 2 * 4096);   // one guard page
  uint8_t data[4] = {1, 2, 3, 4}, out[4] = {};
  EXPECT_TRUE(s.write_memory(b1.value.addr + 96, data, 4).ok());
  EXPECT_EQ(s.write_memory(b1.value.addr + 97, data, 4).err, EFAULT);
  EXPECT_TRUE(s.read_memory(b1.value.addr + 96, out, 4).ok());
  EXPECT_EQ(out[3], 4);
  EXPECT_EQ(s.read_memory(b1.value.addr + 4096, out, 1).err, EFAULT);  // guard gap
  EXPECT_EQ(s.destroy_device(d.value).err, EBUSY);
  EXPECT_TRUE(s.dealloc_pd(pd.value).ok());
  EXPECT_TRUE(s.destroy_device(d.value).ok());
  auto ev = s.drain_events();
  EXPECT_FALSE(ev.empty());
  for (size_t i = 1; i < ev.size(); i++) EXPECT_EQ(ev[i].seq, ev[i - 1].seq + 1);
}
