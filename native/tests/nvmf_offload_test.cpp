// NVMe-oF target offload (vl/nvmf.h): the caps gate, the NVMF SRQ / nvme_ctrl / namespace-map verbs and their
// errors, the enable point, offloaded READ / WRITE / FLUSH with every byte checked, the software path, the
// before-Connect violation, and the backend faults.
#include <cerrno>

#include "nvmf_fixture.h"

namespace {
using namespace vlt;

TEST(NvmfCaps, ProfileWithoutOffloadRefuses) {
  Session s;
  Handle rxe = s.create_device("rxe").value, cx = s.create_device("cx").value;
  auto c = nvmf::query_caps(s, rxe);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.value.offload_type_rc, 0u);
  auto x = nvmf::query_caps(s, cx);
  EXPECT_EQ(x.value.offload_type_rc, NVMF_READ_WRITE_FLUSH);
  EXPECT_EQ(x.value.max_io_sz, 128u * 1024);
  EXPECT_EQ(x.value.lba_data_sizes, 0x1Fu);
  Handle pd = s.alloc_pd(rxe).value;
  NvmfSrqAttr a;
  auto r = nvmf::create_srq(s, pd, 64, 1, a);
  EXPECT_EQ(r.err, EOPNOTSUPP);
  EXPECT_NE(r.msg.find("nvmf_caps"), std::string::npos);
  EXPECT_EQ(nvmf::query_caps(s, 999).err, ENOENT);
}

TEST(NvmfSrq, AttributesCheckedAgainstCaps) {
  Session s;
  Handle dev = s.create_device("cx").value, pd = s.alloc_pd(dev).value, cq = s.create_cq(dev, 64).value;
  auto buf = s.alloc_buffer(1 << 20).value;
  auto mr = s.reg_mr(pd, buf.addr, 1 << 20, ACCESS_LOCAL_WRITE).value;
  auto ro = s.reg_mr(pd, buf.addr, 1 << 20, ACCESS_REMOTE_READ | ACCESS_LOCAL_WRITE).value;
  NvmfSrqAttr a;
  a.staging_buf = {mr.handle, buf.addr, 1 << 20};
  a.cq = cq;
  auto expect = [&](NvmfSrqAttr x, int err, const char* field) {
    auto r = nvmf::create_srq(s, pd, 64, 1, x);
    EXPECT_EQ(r.err, err) << field << ": " << r.msg;
    EXPECT_NE(r.msg.find(field), std::string::npos) << r.msg;
  };
  NvmfSrqAttr x = a; x.offload_ops = NVMF_OP_FLUSH; expect(x, EINVAL, "offload_ops");   // FLUSH only with READ_WRITE
  x = a; x.offload_ops = 5; expect(x, EINVAL, "offload_ops");
  x = a; x.max_namespaces = 17; expect(x, EINVAL, "max_namespaces");
  x = a; x.ioccsz = 3; expect(x, EINVAL, "ioccsz");
  x = a; x.ioccsz = 261; expect(x, EINVAL, "ioccsz");
  x = a; x.icdoff = 1; expect(x, EINVAL, "icdoff");
  x = a; x.max_io_sz = 256 * 1024; expect(x, EINVAL, "max_io_sz");
  x = a; x.nvme_queue_depth = 8; expect(x, EINVAL, "nvme_queue_depth");
  x = a; x.cq = 0; expect(x, EINVAL, "cq");
  x = a; x.staging_buf.len = 8192; expect(x, EINVAL, "staging_buf.len");
  x = a; x.staging_buf.addr += 512; x.staging_buf.len -= 4096; expect(x, EINVAL, "staging_buf.addr");
  x = a; x.staging_buf.len = 2 << 20; expect(x, EINVAL, "staging_buf");
  x = a; x.staging_buf.mr = 4242; expect(x, EINVAL, "staging_buf.mr");
  (void)ro;
  auto ok = nvmf::create_srq(s, pd, 64, 1, a);
  ASSERT_TRUE(ok.ok()) << ok.msg;
  auto snap = nvmf::snapshot(s, ok.value);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap.value.staging_pages.size(), 256u);
  EXPECT_EQ(nvmf::snapshot(s, 12345).err, ENOENT);
}

TEST(NvmfCtrl, CreateChecksRingsAndDoorbells) {
  NvmfRig r;
  NvmeCtrlAttr ca;
  ca.sq_buf = {r.p2p.sq_mr, r.p2p.sq_addr, 64 * 64};
  ca.cq_buf = {r.p2p.cq_mr, r.p2p.cq_addr, 64 * 16};
  ca.sqdb = r.p2p.cqdb; ca.cqdb = r.p2p.sqdb;   // swapped
  EXPECT_EQ(nvmf::srq_create_nvme_ctrl(r.s, r.srq, ca).err, EINVAL);
  ca.sqdb = 0x1234; ca.cqdb = r.p2p.cqdb;
  EXPECT_EQ(nvmf::srq_create_nvme_ctrl(r.s, r.srq, ca).err, EINVAL);
  ca.sqdb = r.p2p.sqdb;
  ca.cq_buf.len = 32 * 16;
  EXPECT_EQ(nvmf::srq_create_nvme_ctrl(r.s, r.srq, ca).err, EINVAL);
  ca.cq_buf.len = 64 * 16;
  ca.cmd_timeout_ms = 60000;
  EXPECT_EQ(nvmf::srq_create_nvme_ctrl(r.s, r.srq, ca).err, EINVAL);
  ca.cmd_timeout_ms = 1000;
  EXPECT_EQ(nvmf::srq_create_nvme_ctrl(r.s, 999, ca).err, EINVAL);
  // doorbells are exactly where the NVMe spec puts them for the reserved queue
  auto nv = nvmf::nvme_snapshot(r.s, r.nvme);
  ASSERT_TRUE(nv.ok());
  EXPECT_EQ(r.p2p.sqdb, nv.value.bar0 + 0x1000 + 2 * r.p2p.qid * 4);
  EXPECT_EQ(r.p2p.cqdb, nv.value.bar0 + 0x1000 + (2 * r.p2p.qid + 1) * 4);
  EXPECT_EQ(nvmf::srq_remove_nvme_ctrl(r.s, 777).err, ENOENT);
}

TEST(NvmfMap, ErrorsAsTheRfcDocuments) {
  NvmfRig r;
  EXPECT_EQ(nvmf::map_nvmf_nsid(r.s, r.ctrl, 1, 4104, 1).err, ENOTSUP);   // 4104 is not a multiple of 512
  EXPECT_EQ(nvmf::map_nvmf_nsid(r.s, r.ctrl, 1, 1000, 1).err, ENOTSUP);   // not a supported size
  EXPECT_EQ(nvmf::map_nvmf_nsid(r.s, r.ctrl, 1, 512, 9).err, EINVAL);     // no such backend namespace
  EXPECT_EQ(nvmf::map_nvmf_nsid(r.s, r.ctrl, 0, 512, 1).err, EINVAL);
  ASSERT_TRUE(nvmf::map_nvmf_nsid(r.s, r.ctrl, 1, 4096, 1).ok());         // 8 backend blocks per front-end block
  EXPECT_EQ(nvmf::map_nvmf_nsid(r.s, r.ctrl, 1, 512, 1).err, EEXIST);
  EXPECT_EQ(nvmf::map_nvmf_nsid(r.s, r.ctrl, 2, 512, 1).err, ENOSPC);     // max_namespaces 1
  EXPECT_EQ(nvmf::unmap_nvmf_nsid(r.s, r.ctrl, 2).err, ENOENT);
  EXPECT_EQ(nvmf::srq_remove_nvme_ctrl(r.s, r.ctrl).err, EBUSY);
  ASSERT_TRUE(nvmf::unmap_nvmf_nsid(r.s, r.ctrl, 1).ok());
  EXPECT_EQ(nvmf::unmap_nvmf_nsid(r.s, r.ctrl, 1).err, ENOENT);
}

TEST(NvmfMap, MetadataFormats) {
  NvmfRig r(1 << 20, 64, 512, 8);   // backend blocks of 520 bytes
  EXPECT_EQ(nvmf::map_nvmf_nsid(r.s, r.ctrl, 1, 4096, 1).err, ENOTSUP);
  ASSERT_TRUE(nvmf::map_nvmf_nsid(r.s, r.ctrl, 1, 4160, 1).ok());   // 8 x 520
  r.send_connect();
  ASSERT_TRUE(nvmf::qp_set_nvmf(r.s, r.tqp, QP_NVMF_ATTR_FLAG_ENABLE).ok());
  r.host_pattern(NvmfRig::kData, 4160, 3);
  r.send_capsule(r.io(nvme::OPC_WRITE, 2, 1, NvmfRig::kData, 4160));
  r.s.run();
  auto resp = r.responses();
  ASSERT_EQ(resp.size(), 1u);
  EXPECT_EQ(resp[0].status, 0);
  std::vector<uint8_t> media;
  ASSERT_TRUE(nvmf::nvme_peek(r.s, r.nvme, 1, 16, 8, media).ok());   // front-end LBA 2 = backend LBAs 16..23
  EXPECT_EQ(media, r.host_bytes(NvmfRig::kData, 4160));
}

TEST(NvmfEnable, NeedsAConnectedQpOnAnNvmfSrq) {
  NvmfRig r;
  EXPECT_EQ(nvmf::qp_set_nvmf(r.s, r.hqp, QP_NVMF_ATTR_FLAG_ENABLE).err, EINVAL);   // not on an NVMF SRQ
  EXPECT_EQ(nvmf::qp_set_nvmf(r.s, r.tqp, 2).err, EINVAL);
  EXPECT_EQ(nvmf::qp_set_nvmf(r.s, 999, 1).err, ENOENT);
  QpInitAttr ti; ti.pd = r.tpd; ti.send_cq = r.tcq; ti.recv_cq = r.tcq; ti.srq = r.srq;
  Handle fresh = r.s.create_qp(r.tpd, ti).value.handle;
  auto e = nvmf::qp_set_nvmf(r.s, fresh, QP_NVMF_ATTR_FLAG_ENABLE);
  EXPECT_EQ(e.err, EINVAL);                 // RESET: offload is enabled after the connection is up
  EXPECT_NE(e.msg.find("RTS"), std::string::npos);
}

TEST(NvmfOffload, Write4kThenRead4kEveryByteChecked) {
  NvmfRig r;
  r.map_and_enable();
  r.s.drain_events();
  r.host_pattern(NvmfRig::kData, 4096, 1);
  const uint16_t w = r.send_capsule(r.io(nvme::OPC_WRITE, 8, 8, NvmfRig::kData, 4096));
  r.s.run();
  auto evs = r.s.drain_events();
  EXPECT_EQ(r.steps(evs, w), (std::vector<std::string>{"RECV", "PARSE", "STAGING_ALLOC", "RDMA_READ", "RDMA_READ_DONE", "SQE_WRITE",
                                                        "SQ_DOORBELL", "CQE", "CQ_DOORBELL", "SEND_RESPONSE", "DONE"}));
  auto resp = r.responses();
  ASSERT_EQ(resp.size(), 1u);
  EXPECT_EQ(resp[0].cid, w);
  EXPECT_EQ(resp[0].status, 0);
  std::vector<uint8_t> media;
  ASSERT_TRUE(nvmf::nvme_peek(r.s, r.nvme, 1, 8, 8, media).ok());
  EXPECT_EQ(media, r.host_bytes(NvmfRig::kData, 4096));

  const uint16_t rd = r.send_capsule(r.io(nvme::OPC_READ, 8, 8, NvmfRig::kData + 0x10000, 4096));
  r.s.run();
  evs = r.s.drain_events();
  EXPECT_EQ(r.steps(evs, rd), (std::vector<std::string>{"RECV", "PARSE", "STAGING_ALLOC", "SQE_WRITE", "SQ_DOORBELL", "CQE",
                                                         "CQ_DOORBELL", "RDMA_WRITE", "SEND_RESPONSE", "DONE"}));
  resp = r.responses();
  ASSERT_EQ(resp.size(), 1u);
  EXPECT_EQ(resp[0].status, 0);
  EXPECT_EQ(r.host_bytes(NvmfRig::kData + 0x10000, 4096), r.host_bytes(NvmfRig::kData, 4096));
  // software saw no I/O: the target CQ holds only the Connect's receive completion
  auto twc = r.s.poll_cq(r.tcq, 16);
  ASSERT_EQ(twc.size(), 1u);
  EXPECT_EQ(twc[0].opcode, WC_RECV);
  auto snap = nvmf::snapshot(r.s, r.srq).value;
  EXPECT_EQ(snap.counters.offloaded, 2u);
  EXPECT_EQ(snap.counters.to_software, 1u);
  ASSERT_EQ(snap.namespaces.size(), 1u);
  EXPECT_EQ(snap.namespaces[0].counters.write_cmds, 1u);
  EXPECT_EQ(snap.namespaces[0].counters.write_blocks, 8u);
  EXPECT_EQ(snap.namespaces[0].counters.read_cmds, 1u);
  EXPECT_TRUE(snap.inflight.empty());
  for (uint32_t p : snap.staging_pages) EXPECT_EQ(p, 0u);
  // both receive buffers went back to the SRQ: software's 32 minus the Connect's
  auto rings = r.s.queue_snapshot();
  for (auto& q : rings) {
    if (q.owner == r.srq) { EXPECT_EQ(q.producer - q.consumer, NvmfRig::kRecvs - 1); }
  }
}

TEST(NvmfOffload, FlushAndInCapsuleWrite) {
  NvmfRig r;
  r.map_and_enable();
  nvme::Sqe f; f.set_opc(nvme::OPC_FLUSH); f.set_nsid(1);
  const uint16_t fc = r.send_capsule(f);
  // a 1 KiB write carried in the capsule: SGL data block, offset 0 (identifier 0x01)
  std::vector<uint8_t> icd(1024);
  for (size_t i = 0; i < icd.size(); i++) icd[i] = uint8_t(255 - i);
  nvme::Sqe w = r.io(nvme::OPC_WRITE, 3, 2, 0, 1024, 0x01);
  w.set_qw(24, 0);
  w.b[32] = 0; w.b[33] = 4; w.b[34] = 0; w.b[35] = 0;   // 32-bit length 1024
  const uint16_t wc = r.send_capsule(w, icd);
  r.s.run();
  auto evs = r.s.drain_events();
  EXPECT_EQ(r.steps(evs, fc), (std::vector<std::string>{"RECV", "PARSE", "SQE_WRITE", "SQ_DOORBELL", "CQE", "CQ_DOORBELL", "SEND_RESPONSE", "DONE"}));
  auto ws = r.steps(evs, wc);
  ASSERT_GE(ws.size(), 4u);
  EXPECT_EQ(ws[3], "ICD_COPY");
  auto resp = r.responses();
  ASSERT_EQ(resp.size(), 2u);
  for (auto& c : resp) EXPECT_EQ(c.status, 0);
  std::vector<uint8_t> media;
  ASSERT_TRUE(nvmf::nvme_peek(r.s, r.nvme, 1, 3, 2, media).ok());
  EXPECT_EQ(media, icd);
  auto snap = nvmf::snapshot(r.s, r.srq).value;
  EXPECT_EQ(snap.namespaces[0].counters.flush_cmds, 1u);
  EXPECT_EQ(snap.namespaces[0].counters.write_inline_cmds, 1u);
}

TEST(NvmfOffload, WhatIsNotOffloadedReachesSoftware) {
  NvmfRig r;
  r.map_and_enable();
  r.s.poll_cq(r.tcq, 16);   // the Connect
  r.s.drain_events();
  struct Case { nvme::Sqe e; NvmfPass why; };
  std::vector<Case> cases;
  nvme::Sqe unk = r.io(nvme::OPC_READ, 0, 1, NvmfRig::kData, 512); unk.set_nsid(5);
  cases.push_back({unk, NvmfPass::UnknownNsid});
  cases.push_back({r.io(nvme::OPC_WRITE_ZEROES, 0, 1, 0, 0), NvmfPass::OpNotOffloaded});
  cases.push_back({r.io(nvme::OPC_READ, 0, 512, NvmfRig::kData, 512 * 512), NvmfPass::TooLarge});
  cases.push_back({r.io(nvme::OPC_READ, 0, 2, NvmfRig::kData, 512), NvmfPass::SglUnsupported});   // SGL length != data
  cases.push_back({r.io(nvme::OPC_READ, 0, 1, NvmfRig::kData, 512, 0x5A), NvmfPass::SglUnsupported});
  nvme::Sqe prop; prop.set_opc(nvme::OPC_FABRICS); prop.b[4] = 0x04;   // Property Get
  cases.push_back({prop, NvmfPass::AdminOrFabrics});
  std::vector<uint16_t> cids;
  for (auto& c : cases) cids.push_back(r.send_capsule(c.e));
  r.s.run();
  auto evs = r.s.drain_events();
  for (size_t i = 0; i < cases.size(); i++) {
    bool found = false;
    for (auto& e : evs)
      if (e.kind == EventKind::Offload && e.a == uint64_t(NvmfStep::ToSoftware) && e.b == cids[i]) { found = true; EXPECT_EQ(e.c, uint64_t(cases[i].why)) << i; }
    EXPECT_TRUE(found) << "case " << i;
  }
  auto twc = r.s.poll_cq(r.tcq, 16);
  EXPECT_EQ(twc.size(), cases.size());   // one ordinary receive completion each
  for (auto& w : twc) EXPECT_EQ(w.opcode, WC_RECV);
  EXPECT_TRUE(r.responses().empty());    // software has not answered
  auto snap = nvmf::snapshot(r.s, r.srq).value;
  EXPECT_EQ(snap.counters.unknown_namespace, 1u);
  EXPECT_EQ(snap.counters.offloaded, 0u);
  bool unsupported = false;
  for (auto& e : evs) if (e.kind == EventKind::Offload && e.a == uint64_t(NvmfStep::UnsupportedOp)) unsupported = true;
  EXPECT_TRUE(unsupported);
}

TEST(NvmfOffload, NotEnabledQpGoesToSoftware) {
  NvmfRig r;
  ASSERT_TRUE(nvmf::map_nvmf_nsid(r.s, r.ctrl, 1, 512, 1).ok());
  r.s.drain_events();
  const uint16_t c = r.send_capsule(r.io(nvme::OPC_READ, 0, 1, NvmfRig::kData, 512));
  r.s.run();
  auto evs = r.s.drain_events();
  EXPECT_EQ(r.steps(evs, c), (std::vector<std::string>{"RECV", "TO_SOFTWARE"}));
  EXPECT_EQ(r.s.poll_cq(r.tcq, 4).size(), 1u);
}

TEST(NvmfOffload, EnabledBeforeConnectServesIoTheControllerNeverAccepted) {
  NvmfRig r;
  r.map_and_enable(512, false);   // the violation: enable with no Connect capsule seen on the QP
  r.s.drain_events();
  const uint16_t c = r.send_capsule(r.io(nvme::OPC_READ, 0, 1, NvmfRig::kData, 512));
  r.s.run();
  auto st = r.steps(r.s.drain_events(), c);
  ASSERT_GE(st.size(), 3u);
  EXPECT_EQ(st[2], "BEFORE_CONNECT");
  EXPECT_EQ(nvmf::snapshot(r.s, r.srq).value.counters.served_before_connect, 1u);
}

TEST(NvmfOffload, BackendRingsWrapWithThePhaseTag) {
  NvmfRig r(1 << 20, 16);   // backend rings of 16 entries
  r.map_and_enable();
  std::vector<uint64_t> phases;
  for (int round = 0; round < 5; round++) {
    for (int i = 0; i < 8; i++) {
      const uint64_t off = NvmfRig::kData + uint64_t(i) * 4096;
      r.host_pattern(off, 4096, uint32_t(round * 8 + i));
      r.send_capsule(r.io(nvme::OPC_WRITE, uint64_t(i) * 8, 8, off, 4096));
    }
    r.s.run();
    for (auto& e : r.s.drain_events()) if (e.kind == EventKind::Offload && e.a == uint64_t(NvmfStep::Cqe)) phases.push_back(e.d & 1);
    auto resp = r.responses();
    ASSERT_EQ(resp.size(), 8u);
    for (auto& c : resp) EXPECT_EQ(c.status, 0);
    for (int i = 0; i < 8; i++) {
      std::vector<uint8_t> media;
      ASSERT_TRUE(nvmf::nvme_peek(r.s, r.nvme, 1, uint64_t(i) * 8, 8, media).ok());
      EXPECT_EQ(media, r.host_bytes(NvmfRig::kData + uint64_t(i) * 4096, 4096)) << round << "/" << i;
    }
  }
  ASSERT_EQ(phases.size(), 40u);
  for (size_t i = 0; i < phases.size(); i++) EXPECT_EQ(phases[i], (i / 16) % 2 == 0 ? 1u : 0u) << i;
  auto snap = nvmf::snapshot(r.s, r.srq).value;
  EXPECT_EQ(snap.ctrls[0].cq_head, 40 % 16);
  EXPECT_EQ(snap.ctrls[0].phase, true);    // third pass of the CQ: phase 1 again
  EXPECT_TRUE(snap.ctrls[0].alive);        // the command watchdog never fired for answered commands
}

TEST(NvmfFaults, WatchdogRearmsForALaterLostCommand) {
  NvmfRig r;
  r.map_and_enable();
  r.send_capsule(r.io(nvme::OPC_READ, 0, 1, NvmfRig::kData, 512));   // answered
  for (int i = 0; i < 200 && r.s.step(); i++) {}
  ASSERT_EQ(r.responses().size(), 1u);
  ASSERT_TRUE(nvmf::nvme_inject_timeout(r.s, r.nvme, 1).ok());
  const uint64_t t0 = r.s.now_ns();
  const uint16_t lost = r.send_capsule(r.io(nvme::OPC_READ, 1, 1, NvmfRig::kData, 512));
  r.s.run();
  bool timeout = false;
  for (auto& e : r.s.drain_events())
    if (e.kind == EventKind::Offload && e.a == uint64_t(NvmfStep::BackendTimeout)) { timeout = true; EXPECT_EQ(e.b, lost); EXPECT_GE(e.time_ns, t0 + 1000000000ull); }
  EXPECT_TRUE(timeout);
}

TEST(NvmfOffload, StagingExhaustionQueuesCommands) {
  NvmfRig r(16384 + 131072 + 4096);   // room for one 128 KiB I/O (+ its PRP list page) at a time, plus a bit
  r.map_and_enable();
  for (int i = 0; i < 3; i++) r.send_capsule(r.io(nvme::OPC_READ, uint64_t(i) * 256, 256, NvmfRig::kData + uint64_t(i) * 131072, 131072));
  r.s.run();
  auto evs = r.s.drain_events();
  int waits = 0;
  for (auto& e : evs) if (e.kind == EventKind::Offload && e.a == uint64_t(NvmfStep::StagingWait)) waits++;
  EXPECT_GE(waits, 1);
  auto resp = r.responses();
  ASSERT_EQ(resp.size(), 3u);
  for (auto& c : resp) EXPECT_EQ(c.status, 0);
  EXPECT_GE(nvmf::snapshot(r.s, r.srq).value.counters.staging_waits, 1u);
}

TEST(NvmfOffload, BackendErrorStatusIsPassedToTheHost) {
  NvmfRig r;
  r.map_and_enable();
  const uint16_t c = r.send_capsule(r.io(nvme::OPC_READ, 4095, 2, NvmfRig::kData, 1024));   // beyond the namespace
  r.s.run();
  auto resp = r.responses();
  ASSERT_EQ(resp.size(), 1u);
  EXPECT_EQ(resp[0].cid, c);
  EXPECT_EQ(resp[0].sc(), nvme::SC_LBA_OUT_OF_RANGE);
  EXPECT_TRUE(resp[0].dnr());
  auto snap = nvmf::snapshot(r.s, r.srq).value;
  EXPECT_EQ(snap.namespaces[0].counters.backend_error_cmds, 1u);
}

TEST(NvmfOffload, SendWithInvalidateForSubtypeF) {
  NvmfRig r;
  r.map_and_enable();
  r.s.drain_events();
  const uint16_t c = r.send_capsule(r.io(nvme::OPC_READ, 0, 1, NvmfRig::kData, 512, 0x4F));
  r.s.run();
  bool inv = false;
  for (auto& e : r.s.drain_events())
    if (e.kind == EventKind::Offload && e.a == uint64_t(NvmfStep::SendResponse) && e.b == c) inv = e.d == 1;
  EXPECT_TRUE(inv);
  // the host registered its buffer with ibv_reg_mr, not by fast registration: the IETH names a key that cannot be
  // invalidated remotely, so its receive completes with IBV_WC_REM_INV_REQ_ERR (a host must only send subtype 0xF
  // for FRWR keys, as Linux nvme-rdma does)
  bool inv_err = false;
  for (auto& wc : r.s.poll_cq(r.hcq, 16)) if (wc.opcode == WC_RECV && wc.status == WC_REM_INV_REQ_ERR) inv_err = true;
  EXPECT_TRUE(inv_err);
}

TEST(NvmfOffload, BadRkeyFailsTheDeviceReadAndTheQp) {
  NvmfRig r;
  r.map_and_enable();
  nvme::Sqe e = r.io(nvme::OPC_WRITE, 0, 1, NvmfRig::kData, 512);
  e.b[35] ^= 0x5A;   // a key the host never registered
  const uint16_t c = r.send_capsule(e);
  r.s.run();
  auto st = r.steps(r.s.drain_events(), c);
  ASSERT_FALSE(st.empty());
  EXPECT_EQ(st.back(), "RDMA_ERROR");
  EXPECT_EQ(r.s.query_qp(r.tqp)->attr.qp_state, QPS_ERR);
  EXPECT_TRUE(nvmf::snapshot(r.s, r.srq).value.inflight.empty());
}

TEST(NvmfFaults, BackendTimeoutTearsDownTheCtrlAndFailsTheQp) {
  NvmfRig r;
  r.map_and_enable();
  ASSERT_TRUE(nvmf::nvme_inject_timeout(r.s, r.nvme, 1).ok());
  r.s.drain_events();
  const uint16_t c = r.send_capsule(r.io(nvme::OPC_READ, 0, 1, NvmfRig::kData, 512));
  r.s.run();
  auto evs = r.s.drain_events();
  bool timeout = false, fatal = false;
  for (auto& e : evs) {
    if (e.kind == EventKind::Offload && e.a == uint64_t(NvmfStep::BackendTimeout)) { timeout = true; EXPECT_EQ(e.b, c); EXPECT_EQ(e.c, r.ctrl); }
    if (e.kind == EventKind::AsyncEvent && e.a == EVENT_QP_FATAL && e.obj == r.tqp) fatal = true;
  }
  EXPECT_TRUE(timeout);
  EXPECT_TRUE(fatal);
  EXPECT_GE(r.s.now_ns(), 1000000000ull);   // cmd_timeout_ms 1000 of virtual time
  EXPECT_EQ(r.s.query_qp(r.tqp)->attr.qp_state, QPS_ERR);
  auto snap = nvmf::snapshot(r.s, r.srq).value;
  EXPECT_FALSE(snap.ctrls[0].alive);
  EXPECT_TRUE(r.responses().empty());
  EXPECT_EQ(snap.namespaces[0].counters.backend_error_cmds, 1u);
}

TEST(NvmfFaults, PciErrorKillsCtrlAndLaterCapsulesGoToSoftware) {
  NvmfRig r;
  r.map_and_enable();
  ASSERT_TRUE(nvmf::nvme_pci_error(r.s, r.nvme).ok());
  auto evs = r.s.drain_events();
  bool pci = false;
  for (auto& e : evs) if (e.kind == EventKind::Offload && e.a == uint64_t(NvmfStep::BackendPciErr)) pci = true;
  EXPECT_TRUE(pci);
  auto nv = nvmf::nvme_snapshot(r.s, r.nvme).value;
  EXPECT_TRUE(nv.csts & nvme::CSTS_CFS);
  EXPECT_TRUE(nv.queues.empty());
  r.s.poll_cq(r.tcq, 16);
  const uint16_t c = r.send_capsule(r.io(nvme::OPC_READ, 0, 1, NvmfRig::kData, 512));
  r.s.run();
  bool down = false;
  for (auto& e : r.s.drain_events())
    if (e.kind == EventKind::Offload && e.a == uint64_t(NvmfStep::ToSoftware) && e.b == c) down = e.c == uint64_t(NvmfPass::BackendDown);
  EXPECT_TRUE(down);
  EXPECT_EQ(r.s.poll_cq(r.tcq, 4).size(), 1u);
}

TEST(NvmfFaults, PciErrorWithCommandsInFlight) {
  NvmfRig r;
  r.map_and_enable();
  r.send_capsule(r.io(nvme::OPC_READ, 0, 8, NvmfRig::kData, 4096));
  // run until the SQ doorbell has been rung, then fail the SSD before it answers
  for (int i = 0; i < 10000; i++) {
    auto snap = nvmf::snapshot(r.s, r.srq).value;
    if (!snap.inflight.empty() && snap.inflight[0].step == NvmfStep::SqDoorbell) break;
    ASSERT_TRUE(r.s.step());
  }
  ASSERT_TRUE(nvmf::nvme_pci_error(r.s, r.nvme).ok());
  r.s.run();
  EXPECT_EQ(r.s.query_qp(r.tqp)->attr.qp_state, QPS_ERR);
  EXPECT_TRUE(nvmf::snapshot(r.s, r.srq).value.inflight.empty());
  EXPECT_TRUE(r.responses().empty());
}

}  // namespace

namespace {
using namespace vlt;

// A QP destroyed / reset with commands inside the device: nothing leaks, staging of a command at the SSD stays held
// until its CQE comes, and a reset QP must be enabled again.
TEST(NvmfTeardown, DestroyAndResetWithCommandsInFlight) {
  NvmfRig r;
  r.map_and_enable();
  r.send_capsule(r.io(nvme::OPC_WRITE, 0, 8, NvmfRig::kData, 4096));   // will be waiting on its RDMA READ
  r.send_capsule(r.io(nvme::OPC_READ, 8, 8, NvmfRig::kData + 4096, 4096));
  for (int i = 0; i < 10000; i++) {
    auto snap = nvmf::snapshot(r.s, r.srq).value;
    bool read_at_ssd = false;
    for (auto& c : snap.inflight) if (c.opcode == nvme::OPC_READ && c.step == NvmfStep::SqDoorbell) read_at_ssd = true;
    if (read_at_ssd) break;
    ASSERT_TRUE(r.s.step());
  }
  QpAttr a; a.qp_state = QPS_RESET;
  ASSERT_TRUE(r.s.modify_qp(r.tqp, a, QP_STATE).ok());
  auto mid = nvmf::snapshot(r.s, r.srq).value;
  EXPECT_LE(mid.inflight.size(), 1u);   // only the READ at the SSD remains
  r.s.run();
  auto end = nvmf::snapshot(r.s, r.srq).value;
  EXPECT_TRUE(end.inflight.empty());
  for (uint32_t p : end.staging_pages) EXPECT_EQ(p, 0u);
  EXPECT_TRUE(end.enabled_qps.empty());   // the reset QP is no longer offload-enabled
  EXPECT_TRUE(end.ctrls[0].alive);
  // destroy a second, enabled QP with a command at the SSD
  QpInitAttr ti; ti.pd = r.tpd; ti.send_cq = r.tcq; ti.recv_cq = r.tcq; ti.srq = r.srq; ti.cap.max_send_wr = 16;
  Handle t2 = r.s.create_qp(r.tpd, ti).value.handle;
  QpInitAttr hi; hi.pd = r.hpd; hi.send_cq = r.hcq; hi.recv_cq = r.hcq;
  Handle h2 = r.s.create_qp(r.hpd, hi).value.handle;
  r.connect(h2, r.hdev, t2, r.tdev);
  r.connect(t2, r.tdev, h2, r.hdev);
  ASSERT_TRUE(nvmf::qp_set_nvmf(r.s, t2, QP_NVMF_ATTR_FLAG_ENABLE).ok());
  nvme::Sqe e = r.io(nvme::OPC_READ, 0, 1, NvmfRig::kData, 512);
  e.set_cid(77);
  ASSERT_TRUE(r.s.write_memory(r.hbuf.addr + 0x1000, e.b, 64).ok());
  SendWr w; w.opcode = WR_SEND; w.sg_list = {{r.hbuf.addr + 0x1000, 64, r.hmr.lkey}};
  ASSERT_TRUE(r.s.post_send(h2, {w}).ok());
  for (int i = 0; i < 10000 && nvmf::snapshot(r.s, r.srq).value.inflight.empty(); i++) ASSERT_TRUE(r.s.step());
  ASSERT_TRUE(r.s.destroy_qp(t2).ok());
  r.s.run();
  end = nvmf::snapshot(r.s, r.srq).value;
  EXPECT_TRUE(end.inflight.empty());
  for (uint32_t p : end.staging_pages) EXPECT_EQ(p, 0u);
}

}  // namespace
