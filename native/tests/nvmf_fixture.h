// A host (NVMe-oF initiator side: capsules, response receives, data buffers) and a target device with an NVMF
// offload SRQ, a soft NVMe function as its backend and one connected RC QP pair, for the offload tests.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core_fixture.h"
#include "vl/names.h"
#include "vl/nvmf.h"
#include "vl/session.h"

namespace vlt {
using namespace vl;

struct NvmfRig {
  Session s;
  // host
  Handle hdev = 0, hpd = 0, hcq = 0, hqp = 0;
  BufferInfo hbuf; MrInfo hmr;
  // target
  Handle tdev = 0, tpd = 0, tcq = 0, srq = 0, tqp = 0, nvme = 0, ctrl = 0;
  BufferInfo staging, rbuf; MrInfo staging_mr, rmr;
  NvmeP2pQueue p2p;
  NvmfSrqAttr attr;
  static constexpr uint64_t kCapsules = 0, kResponses = 0x20000, kData = 0x40000, kRecvSlot = 8192;
  static constexpr uint32_t kRecvs = 32;
  uint16_t next_cid = 1;

  explicit NvmfRig(uint64_t staging_len = 1 << 20, uint32_t depth = 64, uint32_t be_block_data = 512, uint32_t be_block_meta = 0)
      : s(7) {
    hdev = s.create_device("cx").value;
    tdev = s.create_device("cx").value;
    hpd = s.alloc_pd(hdev).value;
    tpd = s.alloc_pd(tdev).value;
    hcq = s.create_cq(hdev, 1024).value;
    tcq = s.create_cq(tdev, 4096).value;
    hbuf = s.alloc_buffer(1 << 20).value;
    hmr = s.reg_mr(hpd, hbuf.addr, 1 << 20, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_WRITE).value;
    staging = s.alloc_buffer(staging_len).value;
    staging_mr = s.reg_mr(tpd, staging.addr, staging_len, ACCESS_LOCAL_WRITE).value;
    rbuf = s.alloc_buffer(kRecvs * kRecvSlot).value;
    rmr = s.reg_mr(tpd, rbuf.addr, kRecvs * kRecvSlot, ACCESS_LOCAL_WRITE).value;
    attr.staging_buf = {staging_mr.handle, staging.addr, staging_len};
    attr.cq = tcq;
    attr.nvme_queue_depth = depth;
    auto sr = nvmf::create_srq(s, tpd, 256, 2, attr);
    EXPECT_TRUE(sr.ok()) << sr.msg;
    srq = sr.value;
    for (uint32_t i = 0; i < kRecvs; i++) {
      RecvWr r; r.wr_id = 1000 + i; r.sg_list = {{rbuf.addr + i * kRecvSlot, uint32_t(kRecvSlot), rmr.lkey}};
      EXPECT_TRUE(s.post_srq_recv(srq, {r}).ok());
    }
    nvme = nvmf::nvme_create(s).value;
    EXPECT_TRUE(nvmf::nvme_add_namespace(s, nvme, {1, be_block_data, be_block_meta, 4096}).ok());
    auto q = nvmf::nvme_p2p_queue(s, nvme, tpd, depth);
    EXPECT_TRUE(q.ok()) << q.msg;
    p2p = q.value;
    NvmeCtrlAttr ca;
    ca.sq_buf = {p2p.sq_mr, p2p.sq_addr, uint64_t(depth) * 64};
    ca.cq_buf = {p2p.cq_mr, p2p.cq_addr, uint64_t(depth) * 16};
    ca.sqdb = p2p.sqdb; ca.cqdb = p2p.cqdb;
    auto c = nvmf::srq_create_nvme_ctrl(s, srq, ca);
    EXPECT_TRUE(c.ok()) << c.msg;
    ctrl = c.value;
    // QPs
    QpInitAttr hi; hi.pd = hpd; hi.send_cq = hcq; hi.recv_cq = hcq; hi.cap.max_send_wr = 128; hi.cap.max_recv_wr = 128;
    hqp = s.create_qp(hpd, hi).value.handle;
    QpInitAttr ti; ti.pd = tpd; ti.send_cq = tcq; ti.recv_cq = tcq; ti.srq = srq; ti.cap.max_send_wr = 128;
    tqp = s.create_qp(tpd, ti).value.handle;
    connect(hqp, hdev, tqp, tdev);
    connect(tqp, tdev, hqp, hdev);
    for (uint32_t i = 0; i < 64; i++) {
      RecvWr r; r.wr_id = 5000 + i; r.sg_list = {{hbuf.addr + kResponses + i * 16, 16, hmr.lkey}};
      EXPECT_TRUE(s.post_recv(hqp, {r}).ok());
    }
  }
  void connect(Handle qp, Handle dev, Handle peer, Handle peer_dev) {
    QpAttr at;
    at.qp_state = QPS_INIT; at.qp_access_flags = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_WRITE;
    ASSERT_TRUE(s.modify_qp(qp, at, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS).ok());
    at.qp_state = QPS_RTR; at.path_mtu = MTU_1024; at.dest_device = peer_dev; at.dest_qp_num = s.query_qp(peer)->qp_num;
    at.rq_psn = 0; at.max_dest_rd_atomic = 16; at.min_rnr_timer = 1;
    ASSERT_TRUE(s.modify_qp(qp, at, QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER).ok());
    at.qp_state = QPS_RTS; at.sq_psn = 0; at.timeout = 14; at.retry_cnt = 7; at.rnr_retry = 7; at.max_rd_atomic = 16;
    ASSERT_TRUE(s.modify_qp(qp, at, QP_STATE | QP_SQ_PSN | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC).ok());
    (void)dev;
  }
  // setup the map and the enable the way a target does after the I/O queue's Connect
  void map_and_enable(uint32_t lba = 512, bool connect_first = true) {
    auto m = nvmf::map_nvmf_nsid(s, ctrl, 1, lba, 1);
    ASSERT_TRUE(m.ok()) << m.msg;
    if (connect_first) send_connect();
    auto e = nvmf::qp_set_nvmf(s, tqp, QP_NVMF_ATTR_FLAG_ENABLE);
    ASSERT_TRUE(e.ok()) << e.msg;
  }
  // Host side: a capsule of 64 bytes (+ icd) at a free capsule slot, sent
  uint16_t send_capsule(nvme::Sqe e, const std::vector<uint8_t>& icd = {}) {
    const uint16_t cid = next_cid++;
    e.set_cid(cid);
    const uint64_t at = hbuf.addr + kCapsules + uint64_t(cid % 16) * 8192;
    EXPECT_TRUE(s.write_memory(at, e.b, 64).ok());
    if (!icd.empty()) {
      EXPECT_TRUE(s.write_memory(at + 64, icd.data(), icd.size()).ok());
    }
    SendWr w; w.wr_id = cid; w.opcode = WR_SEND;
    w.sg_list = {{at, uint32_t(64 + icd.size()), hmr.lkey}};
    auto r = s.post_send(hqp, {w});
    EXPECT_TRUE(r.ok()) << r.msg;
    return cid;
  }
  void send_connect() {
    nvme::Sqe c; c.set_opc(nvme::OPC_FABRICS); c.b[4] = 0x01; c.b[1] = 0x40;
    send_capsule(c);
    s.run();
    // the target's software gets it as a receive completion; it answers (not modelled here beyond the completion)
  }
  nvme::Sqe io(uint8_t opc, uint64_t slba, uint32_t nlb, uint64_t data_off, uint32_t len, uint8_t sgl_id = 0x40) {
    nvme::Sqe e;
    e.set_opc(opc); e.set_nsid(1); e.b[1] = 0x40;   // PSDT 01: SGL
    if (opc != nvme::OPC_FLUSH) e.set_rw(slba, nlb);
    e.set_qw(24, hbuf.addr + data_off);
    e.b[32] = uint8_t(len); e.b[33] = uint8_t(len >> 8); e.b[34] = uint8_t(len >> 16);   // keyed SGL: 24-bit length
    const uint32_t k = hmr.rkey;
    e.b[35] = uint8_t(k); e.b[36] = uint8_t(k >> 8); e.b[37] = uint8_t(k >> 16); e.b[38] = uint8_t(k >> 24);
    e.b[39] = sgl_id;
    return e;
  }
  // the host's response capsules, as NVMe CQEs
  std::vector<nvme::Cqe> responses() {
    std::vector<nvme::Cqe> out;
    for (auto& wc : s.poll_cq(hcq, 256)) {
      if (wc.opcode != WC_RECV) continue;
      EXPECT_EQ(wc.status, WC_SUCCESS);
      EXPECT_EQ(wc.byte_len, 16u);
      uint8_t raw[16];
      EXPECT_TRUE(s.read_memory(hbuf.addr + kResponses + (wc.wr_id - 5000) * 16, raw, 16).ok());
      out.push_back(nvme::Cqe::decode(raw));
    }
    return out;
  }
  std::vector<uint8_t> host_bytes(uint64_t off, size_t n) { return read(s, hbuf.addr + off, n); }
  void host_pattern(uint64_t off, size_t n, uint32_t seed) { pattern(s, hbuf.addr + off, n, seed); }
  // the Offload steps of the events drained so far, for one cid
  std::vector<std::string> steps(const std::vector<Event>& evs, uint16_t cid) {
    std::vector<std::string> v;
    for (auto& e : evs)
      if (e.kind == EventKind::Offload && e.b == cid && e.a != uint64_t(NvmfStep::BackendTimeout) && e.a != uint64_t(NvmfStep::BackendPciErr))
        v.push_back(name_of(kNvmfStepNames, e.a));
    return v;
  }
};

}  // namespace vlt
