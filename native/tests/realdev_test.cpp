// The real-device backend (native/ibverbs/realdev.h) through the real libibverbs ABI: every verb it drives and its
// error paths, on the device of Verbs Lab's own libibverbs.so.1 (build/libibverbs, built by `node scripts/build.mjs
// tests`; VERBSLAB_LIBIBVERBS overrides the path), loaded with dlopen exactly as a system libibverbs would be.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <thread>

#include "../ibverbs/realdev.h"

using vl::ibverbs::RealDevice;
using vl::ibverbs::Status;

// The library's process-wide device (and its progress thread) lives until the process ends, by design
// (docs/libibverbs.md): its allocations are not leaks of this code.
extern "C" const char* __lsan_default_suppressions() { return "leak:libibverbs.so.1\n"; }

namespace {

std::string lib_path() {
  const char* e = std::getenv("VERBSLAB_LIBIBVERBS");
  return e && *e ? e : "build/libibverbs/libibverbs.so.1";
}
bool have_lib() { struct stat st; return stat(lib_path().c_str(), &st) == 0; }

#define NEED_LIB() \
  if (!have_lib()) GTEST_SKIP() << lib_path() << " is not built (node scripts/build.mjs libibverbs)"

constexpr int kAccessAll = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND;

// one opened device with a PD, a 16 KiB buffer and an MR over it, a CQ with a completion channel
struct RealDev : ::testing::Test {
  std::unique_ptr<RealDevice> d;
  uint32_t pd = 0, cq = 0;
  vl::ibverbs::BufferInfo buf{};
  vl::ibverbs::MrInfo mr{};
  void SetUp() override {
    NEED_LIB();
    Status st;
    d = RealDevice::open(lib_path(), "vlrxe0", st);
    ASSERT_TRUE(d) << st.msg;
    ASSERT_EQ(d->alloc_pd(pd).err, 0);
    ASSERT_EQ(d->alloc_buffer(16384, buf).err, 0);
    ASSERT_EQ(d->reg_mr(pd, buf.addr, 16384, kAccessAll, false, 0, mr).err, 0);
    vl::ibverbs::CqInfo c{};
    ASSERT_EQ(d->create_cq(64, true, c).err, 0);
    cq = c.handle;
  }
  uint32_t qp(int type = IBV_QPT_RC, uint32_t srq = 0) {
    vl::ibverbs::QpInit init{pd, cq, cq, srq, type, false, {16, 16, 1, 1, 0}};
    vl::ibverbs::QpInfo q{};
    const Status s = d->create_qp(pd, init, q);
    EXPECT_EQ(s.err, 0) << s.msg;
    return q.handle;
  }
  // the GID of the device's IP address (RoCE v2): loopback has no link-local route
  const vl::ibverbs::GidEntry& gid() {
    for (auto& g : d->info().gids) if (g.gid.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0) return g;
    ADD_FAILURE() << "no IPv4-mapped GID";
    return d->info().gids.front();
  }
  // that GID's 16 bytes
  std::array<uint8_t, 16> gid_raw() {
    std::string hex = gid().gid;
    hex.erase(std::remove(hex.begin(), hex.end(), ':'), hex.end());
    std::array<uint8_t, 16> raw{};
    for (int i = 0; i < 16; ++i) raw[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
    return raw;
  }
  // RESET -> INIT -> RTR -> RTS towards `peer`, as qp.connect does
  void connect(uint32_t me, uint32_t peer) {
    vl::ibverbs::QpInfo p{};
    ASSERT_EQ(d->query_qp(peer, p).err, 0);
    vl::ibverbs::QpAttrIn a;
    a.attr.qp_state = IBV_QPS_INIT; a.attr.port_num = 1; a.attr.qp_access_flags = kAccessAll & ~IBV_ACCESS_MW_BIND;
    ASSERT_EQ(d->modify_qp(me, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS).err, 0);
    vl::ibverbs::QpAttrIn r;
    r.attr.qp_state = IBV_QPS_RTR; r.attr.path_mtu = IBV_MTU_1024; r.attr.dest_qp_num = p.qp_num; r.attr.max_dest_rd_atomic = 1;
    r.attr.min_rnr_timer = 12; r.attr.port_num = 1; r.attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid().index);
    r.has_dgid = true; r.dest_is_self = 1;
    std::memcpy(r.dgid, gid_raw().data(), 16);
    ASSERT_EQ(d->modify_qp(me, r, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER).err, 0);
    vl::ibverbs::QpAttrIn s;
    s.attr.qp_state = IBV_QPS_RTS; s.attr.timeout = 14; s.attr.retry_cnt = 7; s.attr.rnr_retry = 7; s.attr.max_rd_atomic = 1;
    ASSERT_EQ(d->modify_qp(me, s, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC).err, 0);
  }
  // poll until n completions (the library's progress thread completes in real time), bounded
  std::vector<ibv_wc> poll(size_t n) {
    std::vector<ibv_wc> got, w;
    for (int i = 0; i < 2000 && got.size() < n; ++i) {
      EXPECT_EQ(d->poll_cq(cq, 16, w).err, 0);
      got.insert(got.end(), w.begin(), w.end());
      if (got.size() < n) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return got;
  }
  uint8_t* at(uint64_t off) { return reinterpret_cast<uint8_t*>(buf.addr + off); }
};

}  // namespace

TEST(RealDevLoad, DlopenFailureGivesTheDlerrorText) {
  Status st;
  auto d = RealDevice::open("/nonexistent/libibverbs.so.1", "", st);
  EXPECT_FALSE(d);
  EXPECT_EQ(st.err, ENOENT);
  EXPECT_NE(st.msg.find("/nonexistent/libibverbs.so.1: cannot open shared object file: No such file or directory"), std::string::npos) << st.msg;
  const auto l = vl::ibverbs::list_devices("/nonexistent/libibverbs.so.1");
  EXPECT_FALSE(l.library);
  EXPECT_NE(l.error.find("cannot open shared object file"), std::string::npos);
}

TEST(RealDevLoad, ALibraryThatIsNotLibibverbsIsRefused) {
  Status st;
  auto d = RealDevice::open("libm.so.6", "", st);
  EXPECT_FALSE(d);
  EXPECT_EQ(st.err, ENOEXEC);
  EXPECT_NE(st.msg.find("is not a libibverbs.so.1: it does not export ibv_get_device_list"), std::string::npos) << st.msg;
}

TEST(RealDevLoad, ListsAndOpensOurLibrarysDeviceAndRefusesAnUnknownOne) {
  NEED_LIB();
  const auto l = vl::ibverbs::list_devices(lib_path());
  ASSERT_TRUE(l.library) << l.error;
  EXPECT_TRUE(l.software);   // the marker symbol verbslab_libibverbs
  ASSERT_EQ(l.devices.size(), 1u);
  EXPECT_EQ(l.devices[0].name, "vlrxe0");
  Status st;
  EXPECT_FALSE(RealDevice::open(lib_path(), "mlx5_0", st));
  EXPECT_EQ(st.err, ENODEV);
  EXPECT_NE(st.msg.find("no RDMA device \"mlx5_0\""), std::string::npos);
  EXPECT_NE(st.msg.find("it lists: vlrxe0"), std::string::npos);
  auto d = RealDevice::open(lib_path(), "", st);   // "" = the first listed
  ASSERT_TRUE(d) << st.msg;
  EXPECT_EQ(d->info().name, "vlrxe0");
  EXPECT_TRUE(d->info().software);
  EXPECT_EQ(d->info().port.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(d->info().port.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_GT(d->info().attr.max_qp_wr, 0);
  ASSERT_GE(d->info().gids.size(), 2u);
  EXPECT_EQ(d->info().gids[1].type, "RoCE v2");
  d->close();
  d->close();   // idempotent
}

TEST_F(RealDev, BuffersAreTheOnlyMemoryTheConsoleTouches) {
  vl::ibverbs::BufferInfo b{};
  EXPECT_EQ(d->alloc_buffer(0, b).err, EINVAL);
  const uint8_t bytes[4] = {1, 2, 3, 4};
  EXPECT_EQ(d->write_memory(buf.addr + 16382, bytes, 4).err, EFAULT);   // runs past the end
  EXPECT_EQ(d->write_memory(reinterpret_cast<uint64_t>(&b), bytes, 4).err, EFAULT);   // host memory of this process
  ASSERT_EQ(d->write_memory(buf.addr + 100, bytes, 4).err, 0);
  std::vector<uint8_t> out;
  ASSERT_EQ(d->read_memory(buf.addr + 100, 4, out).err, 0);
  EXPECT_EQ(out, std::vector<uint8_t>(bytes, bytes + 4));
  EXPECT_EQ(d->read_memory(4096, 4, out).err, EFAULT);
  EXPECT_EQ(d->free_buffer(buf.handle).err, EBUSY);   // registered: the device may still write it
  EXPECT_EQ(d->free_buffer(999).err, ENOENT);
  ASSERT_EQ(d->alloc_buffer(4096, b).err, 0);
  EXPECT_EQ(d->free_buffer(b.handle).err, 0);
}

TEST_F(RealDev, MemoryRegionsKeysAndTheirErrors) {
  EXPECT_GT(mr.lkey, 0u);
  vl::ibverbs::MrInfo m{};
  ASSERT_TRUE(d->mr_info(mr.handle, m));
  EXPECT_EQ(m.rkey, mr.rkey);
  EXPECT_EQ(m.addr, buf.addr);
  EXPECT_EQ(d->reg_mr(pd, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, false, 0, m).err, EFAULT);   // not a buffer of the session
  EXPECT_EQ(d->reg_mr(999, buf.addr, 4096, IBV_ACCESS_LOCAL_WRITE, false, 0, m).err, ENOENT);
  // REMOTE_WRITE without LOCAL_WRITE: ibv_reg_mr refuses it (IBA o10-29.1.1), the library's errno comes back
  const Status bad = d->reg_mr(pd, buf.addr, 4096, IBV_ACCESS_REMOTE_WRITE, false, 0, m);
  EXPECT_EQ(bad.err, EINVAL);
  EXPECT_NE(bad.msg.find("ibv_reg_mr on vlrxe0"), std::string::npos);
  vl::ibverbs::MrInfo r{};
  ASSERT_EQ(d->rereg_mr(mr.handle, IBV_REREG_MR_CHANGE_ACCESS, pd, 0, 0, IBV_ACCESS_LOCAL_WRITE, r).err, 0);
  EXPECT_EQ(r.access, IBV_ACCESS_LOCAL_WRITE);
  EXPECT_EQ(d->rereg_mr(mr.handle, IBV_REREG_MR_CHANGE_TRANSLATION, pd, 4096, 4096, 0, r).err, EFAULT);
  EXPECT_EQ(d->dealloc_pd(pd).err, EBUSY);   // the MR is still on it
  EXPECT_EQ(d->dereg_mr(mr.handle).err, 0);
  EXPECT_FALSE(d->mr_info(mr.handle, m));
  EXPECT_EQ(d->dereg_mr(mr.handle).err, ENOENT);
}

TEST_F(RealDev, LoopbackWriteSendCompletionsAndTheChannel) {
  const uint32_t a = qp(), b = qp();
  connect(a, b);
  connect(b, a);
  vl::ibverbs::QpInfo qa{};
  ASSERT_EQ(d->query_qp(a, qa).err, 0);
  EXPECT_EQ(qa.attr.qp_state, IBV_QPS_RTS);
  // RDMA WRITE of 64 bytes from offset 0 to offset 4096
  for (int i = 0; i < 64; ++i) *at(i) = static_cast<uint8_t>(0x40 + i);
  vl::ibverbs::SendWrIn w;
  w.wr_id = 7; w.opcode = IBV_WR_RDMA_WRITE; w.send_flags = IBV_SEND_SIGNALED;
  w.sg = {{buf.addr, 64, mr.lkey}}; w.remote_addr = buf.addr + 4096; w.rkey = mr.rkey;
  size_t bad = 99;
  ASSERT_EQ(d->post_send(a, {w}, bad).err, 0);
  auto wc = poll(1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 7u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc[0].opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(std::memcmp(at(0), at(4096), 64), 0);
  // SEND with immediate into a posted receive; the armed CQ raises an event on the channel
  ASSERT_EQ(d->req_notify_cq(cq, false).err, 0);
  ASSERT_EQ(d->post_recv(b, {{21, {{buf.addr + 8192, 128, mr.lkey}}}}, bad).err, 0);
  vl::ibverbs::SendWrIn s;
  s.wr_id = 8; s.opcode = IBV_WR_SEND_WITH_IMM; s.send_flags = IBV_SEND_SIGNALED; s.has_imm = true; s.imm_or_inv = 0xdeadbeef;
  s.inline_data = {'h', 'e', 'l', 'l', 'o'}; s.send_flags |= IBV_SEND_INLINE;
  ASSERT_EQ(d->post_send(a, {s}, bad).err, 0);
  wc = poll(2);
  ASSERT_EQ(wc.size(), 2u);
  const ibv_wc& rv = wc[0].opcode == IBV_WC_RECV ? wc[0] : wc[1];
  EXPECT_EQ(rv.wr_id, 21u);
  EXPECT_EQ(rv.byte_len, 5u);
  EXPECT_TRUE(rv.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(ntohl(rv.imm_data), 0xdeadbeefu);
  EXPECT_EQ(std::memcmp(at(8192), "hello", 5), 0);
  uint32_t ev = 0;
  Status st;
  for (int i = 0; i < 500 && (st = d->get_cq_event(ev)).err == EAGAIN; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_EQ(st.err, 0) << st.msg;
  EXPECT_EQ(ev, cq);
  EXPECT_EQ(d->ack_cq_events(cq, 1).err, 0);
  EXPECT_EQ(d->get_cq_event(ev).err, EAGAIN);
  // a WR naming an unknown QP, a kernel-only opcode, a UD send without an AH
  EXPECT_EQ(d->post_send(999, {w}, bad).err, ENOENT);
  vl::ibverbs::SendWrIn k;
  k.opcode = 0x20;   // IB_WR_REG_MR
  EXPECT_EQ(d->post_send(a, {w, k}, bad).err, EOPNOTSUPP);
  EXPECT_EQ(bad, 1u);
  const uint32_t u = qp(IBV_QPT_UD);
  vl::ibverbs::SendWrIn ud;
  ud.opcode = IBV_WR_SEND;
  EXPECT_EQ(d->post_send(u, {ud}, bad).err, ENOENT);
  EXPECT_EQ(d->destroy_qp(a).err, 0);
  EXPECT_EQ(d->destroy_qp(a).err, ENOENT);
  EXPECT_EQ(d->qp_handle_by_num(qa.qp_num), 0u);
}

TEST_F(RealDev, AddressHandlesAndUdSends) {
  const uint32_t a = qp(IBV_QPT_UD), b = qp(IBV_QPT_UD);
  for (uint32_t q : {a, b}) {
    vl::ibverbs::QpAttrIn i;
    i.attr.qp_state = IBV_QPS_INIT; i.attr.port_num = 1; i.attr.qkey = 0x11111111;
    ASSERT_EQ(d->modify_qp(q, i, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY).err, 0);
    vl::ibverbs::QpAttrIn r;
    r.attr.qp_state = IBV_QPS_RTR;
    ASSERT_EQ(d->modify_qp(q, r, IBV_QP_STATE).err, 0);
    vl::ibverbs::QpAttrIn s;
    s.attr.qp_state = IBV_QPS_RTS;
    ASSERT_EQ(d->modify_qp(q, s, IBV_QP_STATE | IBV_QP_SQ_PSN).err, 0);
  }
  const auto dg = gid_raw();
  uint32_t ah = 0;
  ASSERT_EQ(d->create_ah(pd, dg.data(), static_cast<uint8_t>(gid().index), ah).err, 0);
  EXPECT_EQ(d->create_ah(999, dg.data(), 1, ah).err, ENOENT);
  size_t bad = 0;
  ASSERT_EQ(d->post_recv(b, {{5, {{buf.addr + 8192, 40 + 64, mr.lkey}}}}, bad).err, 0);   // the 40-byte GRH slot first
  vl::ibverbs::QpInfo qb{};
  ASSERT_EQ(d->query_qp(b, qb).err, 0);
  vl::ibverbs::SendWrIn w;
  w.wr_id = 6; w.opcode = IBV_WR_SEND; w.send_flags = IBV_SEND_SIGNALED; w.sg = {{buf.addr, 16, mr.lkey}};
  w.ah = ah; w.remote_qpn = qb.qp_num; w.remote_qkey = 0x11111111;
  ASSERT_EQ(d->post_send(a, {w}, bad).err, 0);
  const auto wc = poll(2);
  ASSERT_EQ(wc.size(), 2u);
  for (const auto& c : wc) EXPECT_EQ(c.status, IBV_WC_SUCCESS);
}

TEST_F(RealDev, MemoryWindowsOfType1And2) {
  vl::ibverbs::MwInfo w1{}, w2{};
  ASSERT_EQ(d->alloc_mw(pd, IBV_MW_TYPE_1, w1).err, 0);
  ASSERT_EQ(d->alloc_mw(pd, IBV_MW_TYPE_2, w2).err, 0);
  EXPECT_EQ(d->alloc_mw(999, IBV_MW_TYPE_1, w1).err, ENOENT);
  const uint32_t a = qp(), b = qp();
  connect(a, b);
  connect(b, a);
  uint32_t rkey = 0;
  ASSERT_EQ(d->bind_mw(a, w1.handle, 1, IBV_SEND_SIGNALED, mr.handle, buf.addr, 256, IBV_ACCESS_REMOTE_WRITE, rkey).err, 0);
  vl::ibverbs::MwInfo got{};
  ASSERT_TRUE(d->mw_info(w1.handle, got));
  EXPECT_EQ(got.rkey, rkey);
  EXPECT_TRUE(got.bound);
  EXPECT_EQ(got.length, 256u);
  EXPECT_EQ(d->bind_mw(a, 999, 1, 0, mr.handle, buf.addr, 256, 0, rkey).err, ENOENT);
  // type 2 through a BIND_MW work request
  vl::ibverbs::SendWrIn bw;
  bw.wr_id = 2; bw.opcode = IBV_WR_BIND_MW; bw.send_flags = IBV_SEND_SIGNALED; bw.mw = w2.handle; bw.bind_mr = mr.handle;
  bw.bind_rkey = (w2.rkey & ~0xffu) | ((w2.rkey + 1) & 0xffu); bw.bind_addr = buf.addr; bw.bind_length = 512; bw.bind_access = IBV_ACCESS_REMOTE_READ;
  size_t bad = 0;
  ASSERT_EQ(d->post_send(a, {bw}, bad).err, 0);
  const auto wc = poll(2);
  ASSERT_EQ(wc.size(), 2u);
  for (const auto& c : wc) EXPECT_EQ(c.status, IBV_WC_SUCCESS) << "status " << c.status;
  ASSERT_TRUE(d->mw_info(w2.handle, got));
  EXPECT_EQ(got.qp, a);
  EXPECT_EQ(got.length, 512u);
  EXPECT_EQ(d->destroy_qp(a).err, 0);
  ASSERT_TRUE(d->mw_info(w2.handle, got));
  EXPECT_EQ(got.qp, 0u);   // a type 2 window is freed with its QP
  EXPECT_EQ(d->dealloc_mw(w1.handle).err, 0);
  EXPECT_EQ(d->dealloc_mw(w1.handle).err, ENOENT);
}

TEST_F(RealDev, SrqLimitRaisesAnAsyncEventNamingTheSrq) {
  uint32_t srq = 0;
  ASSERT_EQ(d->create_srq(pd, 16, 1, 0, srq).err, 0);
  EXPECT_EQ(d->create_srq(999, 16, 1, 0, srq).err == ENOENT, true);
  const uint32_t rq = qp(IBV_QPT_RC, srq), sq = qp();
  connect(sq, rq);
  connect(rq, sq);
  std::vector<vl::ibverbs::RecvWrIn> rs;
  for (int i = 0; i < 4; ++i) rs.push_back({uint64_t(100 + i), {{buf.addr + 256u * i, 256, mr.lkey}}});
  size_t bad = 0;
  ASSERT_EQ(d->post_srq_recv(srq, rs, bad).err, 0);
  ASSERT_EQ(d->modify_srq(srq, 4).err, 0);
  EXPECT_EQ(d->modify_srq(999, 4).err, ENOENT);
  vl::ibverbs::SendWrIn w;
  w.wr_id = 1; w.opcode = IBV_WR_SEND; w.send_flags = IBV_SEND_SIGNALED; w.sg = {{buf.addr + 4096, 8, mr.lkey}};
  ASSERT_EQ(d->post_send(sq, {w}, bad).err, 0);
  EXPECT_EQ(poll(2).size(), 2u);
  std::vector<vl::ibverbs::AsyncEvent> evs;
  for (int i = 0; i < 500 && evs.empty(); ++i) {
    evs = d->take_async();
    if (evs.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].type, IBV_EVENT_SRQ_LIMIT_REACHED);
  EXPECT_STREQ(evs[0].obj_kind, "srq");
  EXPECT_EQ(evs[0].obj, srq);
  EXPECT_EQ(d->destroy_srq(srq).err, EBUSY);   // the QP still uses it: the library's refusal
  EXPECT_EQ(d->destroy_qp(rq).err, 0);
  EXPECT_EQ(d->destroy_srq(srq).err, 0);
}

TEST_F(RealDev, VerbsTheLibraryRefusesComeBackWithTheirErrno) {
  vl::ibverbs::CqInfo c{};
  const Status big = d->create_cq(1 << 20, false, c);   // above max_cqe
  EXPECT_EQ(big.err, EINVAL);
  EXPECT_NE(big.msg.find("ibv_create_cq on vlrxe0"), std::string::npos);
  vl::ibverbs::QpInit init{pd, cq, cq, 0, IBV_QPT_RC, false, {1u << 20, 1, 1, 1, 0}};
  vl::ibverbs::QpInfo q{};
  EXPECT_EQ(d->create_qp(pd, init, q).err, EINVAL);   // max_send_wr above max_qp_wr
  init.send_cq = 999;
  EXPECT_EQ(d->create_qp(pd, init, q).err, ENOENT);
  EXPECT_EQ(d->destroy_cq(999).err, ENOENT);
  EXPECT_EQ(d->req_notify_cq(999, false).err, ENOENT);
  std::vector<ibv_wc> w;
  EXPECT_EQ(d->poll_cq(999, 1, w).err, ENOENT);
  const uint32_t a = qp();
  vl::ibverbs::QpAttrIn rts;
  rts.attr.qp_state = IBV_QPS_RTS;   // RESET -> RTS is not a legal transition
  EXPECT_EQ(d->modify_qp(a, rts, IBV_QP_STATE).err, EINVAL);
  EXPECT_EQ(d->destroy_cq(cq).err, EBUSY);   // the QP still uses it
}
