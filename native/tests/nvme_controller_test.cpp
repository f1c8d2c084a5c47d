// The soft NVMe controller (vl/nvme.h) on its own: BAR0, admin queue bring-up, I/O rings with phase wrap, every
// NVM opcode it serves, the status codes of its error paths and its two faults.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "vl/nvme.h"

namespace {
using namespace vl::nvme;

// Host memory as the controller sees it: one flat region at bus address kBase.
constexpr uint64_t kBase = 0x100000, kSize = 4 << 20;
struct FlatDma : Dma {
  std::vector<uint8_t> mem = std::vector<uint8_t>(kSize, 0);
  bool read(uint64_t a, void* d, size_t n) override {
    if (a < kBase || a + n > kBase + kSize) return false;
    std::memcpy(d, mem.data() + (a - kBase), n);
    return true;
  }
  bool write(uint64_t a, const void* s, size_t n) override {
    if (a < kBase || a + n > kBase + kSize) return false;
    std::memcpy(mem.data() + (a - kBase), s, n);
    return true;
  }
  uint8_t* at(uint64_t a) { return mem.data() + (a - kBase); }
};

// Layout: admin SQ / CQ, I/O SQ / CQ, data pages from kData
constexpr uint64_t kAsq = kBase, kAcq = kBase + 0x1000, kIsq = kBase + 0x2000, kIcq = kBase + 0x3000, kList = kBase + 0x4000;
constexpr uint64_t kData = kBase + 0x10000;

struct Host {
  FlatDma dma;
  Controller c;
  uint16_t asq_tail = 0, acq_head = 0; bool aphase = true;
  uint16_t isq_tail = 0, icq_head = 0; bool iphase = true;
  uint32_t depth;
  explicit Host(Config cfg = {}, uint32_t io_depth = 16) : c(dma, cfg), depth(io_depth) {
    c.write32(REG_AQA, 15u << 16 | 15u);
    c.write64(REG_ASQ, kAsq); c.write64(REG_ACQ, kAcq);
    c.write32(REG_CC, CC_EN);
  }
  Cqe admin(Sqe e) {
    e.set_cid(asq_tail);
    std::memcpy(dma.at(kAsq + asq_tail * 64), e.b, 64);
    asq_tail = (asq_tail + 1) % 16;
    c.write32(doorbell_offset(0, false, c.config().dstrd), asq_tail);
    c.process();
    Cqe r = Cqe::decode(dma.at(kAcq + acq_head * 16));
    EXPECT_EQ(r.phase(), aphase);
    if (++acq_head == 16) { acq_head = 0; aphase = !aphase; }
    c.write32(doorbell_offset(0, true, c.config().dstrd), acq_head);
    return r;
  }
  void create_io() {
    Sqe cq; cq.set_opc(ADM_CREATE_IO_CQ); cq.set_prp(kIcq, 0); cq.set_dw(10, (depth - 1) << 16 | 1); cq.set_dw(11, 1);
    ASSERT_EQ(admin(cq).status & ~1, 0);
    Sqe sq; sq.set_opc(ADM_CREATE_IO_SQ); sq.set_prp(kIsq, 0); sq.set_dw(10, (depth - 1) << 16 | 1); sq.set_dw(11, 1u << 16 | 1);
    ASSERT_EQ(admin(sq).status & ~1, 0);
  }
  void submit(Sqe e, uint16_t cid) {
    e.set_cid(cid);
    std::memcpy(dma.at(kIsq + isq_tail * 64), e.b, 64);
    isq_tail = uint16_t((isq_tail + 1) % depth);
    c.write32(doorbell_offset(1, false, c.config().dstrd), isq_tail);
  }
  // the next I/O CQE if its phase tag says it is new
  bool reap(Cqe& out) {
    Cqe r = Cqe::decode(dma.at(kIcq + icq_head * 16));
    if (r.phase() != iphase) return false;
    out = r;
    if (++icq_head == depth) { icq_head = 0; iphase = !iphase; }
    c.write32(doorbell_offset(1, true, c.config().dstrd), icq_head);
    return true;
  }
  Cqe io(Sqe e, uint16_t cid = 7) {
    submit(e, cid);
    c.process();
    Cqe r;
    EXPECT_TRUE(reap(r));
    EXPECT_EQ(r.cid, cid);
    return r;
  }
};

Sqe rw(uint8_t opc, uint32_t nsid, uint64_t slba, uint32_t nlb, uint64_t prp1, uint64_t prp2 = 0) {
  Sqe e; e.set_opc(opc); e.set_nsid(nsid); e.set_rw(slba, nlb); e.set_prp(prp1, prp2);
  return e;
}
uint16_t sc_of(const Cqe& c) { return uint16_t(c.sct() << 8 | c.sc()); }
constexpr uint16_t kGeneric(uint8_t sc) { return sc; }
constexpr uint16_t kCmdSpecific(uint8_t sc) { return uint16_t(1 << 8 | sc); }

TEST(NvmeController, RegistersAndDoorbellOffsets) {
  FlatDma d;
  Config cfg; cfg.dstrd = 2; cfg.mqes = 255;
  Controller c(d, cfg);
  const uint64_t cap = c.read64(REG_CAP);
  EXPECT_EQ(cap & 0xFFFF, 255u);                   // MQES
  EXPECT_EQ((cap >> 32) & 0xF, 2u);                // DSTRD
  EXPECT_TRUE(cap & (1ull << 16));                 // CQR
  EXPECT_EQ(c.read32(REG_VS), 0x00020000u);
  // SQ y tail at 0x1000 + (2y)(4 << DSTRD), CQ y head at 0x1000 + (2y + 1)(4 << DSTRD)
  EXPECT_EQ(doorbell_offset(0, false, 0), 0x1000u);
  EXPECT_EQ(doorbell_offset(0, true, 0), 0x1004u);
  EXPECT_EQ(doorbell_offset(3, false, 0), 0x1018u);
  EXPECT_EQ(doorbell_offset(3, true, 2), 0x1000u + 7u * 16u);
  EXPECT_FALSE(c.enabled());
  c.write32(REG_AQA, 3u << 16 | 3u);
  c.write64(REG_ASQ, kAsq); c.write64(REG_ACQ, kAcq);
  c.write32(REG_CC, CC_EN);
  EXPECT_EQ(c.read32(REG_CSTS) & CSTS_RDY, CSTS_RDY);
  EXPECT_EQ(c.read64(REG_ASQ), kAsq);
}

TEST(NvmeController, AdminCreateQueueErrors) {
  Host h;
  Sqe cq; cq.set_opc(ADM_CREATE_IO_CQ); cq.set_prp(kIcq, 0); cq.set_dw(10, 15u << 16 | 0); cq.set_dw(11, 1);
  EXPECT_EQ(sc_of(h.admin(cq)), kCmdSpecific(SC_INVALID_QID));        // qid 0 is the admin queue
  cq.set_dw(10, 15u << 16 | 99);
  EXPECT_EQ(sc_of(h.admin(cq)), kCmdSpecific(SC_INVALID_QID));        // above the I/O queues supported
  cq.set_dw(10, 0xFFFFu << 16 | 1);
  EXPECT_EQ(sc_of(h.admin(cq)), kCmdSpecific(SC_INVALID_QUEUE_SIZE)); // above CAP.MQES
  Sqe sq; sq.set_opc(ADM_CREATE_IO_SQ); sq.set_prp(kIsq, 0); sq.set_dw(10, 15u << 16 | 1); sq.set_dw(11, 5u << 16 | 1);
  EXPECT_EQ(sc_of(h.admin(sq)), kCmdSpecific(SC_CQ_INVALID));         // CQ 5 does not exist
  Sqe bad; bad.set_opc(0x7E);
  EXPECT_EQ(sc_of(h.admin(bad)), kGeneric(SC_INVALID_OPCODE));
  h.create_io();
  Sqe del; del.set_opc(ADM_DELETE_IO_CQ); del.set_dw(10, 1);
  EXPECT_EQ(sc_of(h.admin(del)), kCmdSpecific(SC_INVALID_QUEUE_DELETION));   // its SQ still exists
  Sqe dsq; dsq.set_opc(ADM_DELETE_IO_SQ); dsq.set_dw(10, 1);
  EXPECT_EQ(sc_of(h.admin(dsq)), 0);
  EXPECT_EQ(sc_of(h.admin(del)), 0);
  EXPECT_EQ(h.c.sq(1), nullptr);
}

TEST(NvmeController, IdentifyControllerAndNamespace) {
  Host h;
  ASSERT_TRUE(h.c.add_namespace({1, 4096, 8, 64}).ok());
  Sqe id; id.set_opc(ADM_IDENTIFY); id.set_prp(kData, 0); id.set_dw(10, 1);
  ASSERT_EQ(sc_of(h.admin(id)), 0);
  const uint8_t* d = h.dma.at(kData);
  EXPECT_EQ(d[512], 0x66); EXPECT_EQ(d[513], 0x44);     // SQES / CQES
  EXPECT_EQ(d[520] | d[521] << 8, ONCS_DSM | ONCS_WRITE_ZEROES);
  EXPECT_EQ(d[77], 5);                                   // MDTS
  id.set_dw(10, 0); id.set_nsid(1);
  ASSERT_EQ(sc_of(h.admin(id)), 0);
  EXPECT_EQ(d[0], 64);                                   // NSZE
  EXPECT_EQ(d[26], 0x13);                                // FLBAS: format 3 (4096 + 8), extended LBA
  EXPECT_EQ(d[128 + 12 + 2], 12);                        // LBAF3 LBADS
  EXPECT_EQ(d[128 + 12], 8);                             // LBAF3 MS
  id.set_nsid(9);
  EXPECT_EQ(sc_of(h.admin(id)), kGeneric(SC_INVALID_NS_OR_FORMAT));
}

TEST(NvmeController, WriteReadRoundTripWithPrpList) {
  Host h;
  h.create_io();
  ASSERT_TRUE(h.c.add_namespace({1, 512, 0, 1024}).ok());
  // 64 KiB: PRP1 + a PRP list of 15 entries
  for (size_t i = 0; i < 65536; i++) h.dma.at(kData)[i] = uint8_t(i * 7 + (i >> 9));
  for (uint64_t i = 1; i < 16; i++) { uint64_t a = kData + i * 4096; std::memcpy(h.dma.at(kList + (i - 1) * 8), &a, 8); }
  EXPECT_EQ(sc_of(h.io(rw(OPC_WRITE, 1, 10, 128, kData, kList))), 0);
  std::vector<uint8_t> media;
  ASSERT_TRUE(h.c.peek(1, 10, 128, media).ok());
  EXPECT_EQ(0, std::memcmp(media.data(), h.dma.at(kData), 65536));
  // read back into a fresh area (two pages: PRP2 is the second page)
  const uint64_t out = kData + 0x20000;
  EXPECT_EQ(sc_of(h.io(rw(OPC_READ, 1, 10, 16, out, out + 4096))), 0);
  EXPECT_EQ(0, std::memcmp(h.dma.at(out), h.dma.at(kData), 8192));
  EXPECT_EQ(h.c.counters().writes, 1u);
  EXPECT_EQ(h.c.counters().reads, 1u);
}

TEST(NvmeController, ExtendedLbaCarriesMetadata) {
  Host h;
  h.create_io();
  ASSERT_TRUE(h.c.add_namespace({1, 4096, 8, 8}).ok());
  EXPECT_EQ(h.c.block_size(1), 4104u);
  for (size_t i = 0; i < 2 * 4104; i++) h.dma.at(kData)[i] = uint8_t(i % 251);
  for (uint64_t i = 1; i < 3; i++) { uint64_t a = kData + i * 4096; std::memcpy(h.dma.at(kList + (i - 1) * 8), &a, 8); }
  EXPECT_EQ(sc_of(h.io(rw(OPC_WRITE, 1, 2, 2, kData, kList))), 0);   // 8208 bytes: three pages
  std::vector<uint8_t> media;
  ASSERT_TRUE(h.c.peek(1, 2, 2, media).ok());
  ASSERT_EQ(media.size(), 8208u);
  EXPECT_EQ(0, std::memcmp(media.data(), h.dma.at(kData), 8208));
}

TEST(NvmeController, StatusCodesOfIoErrors) {
  Host h;
  h.create_io();
  ASSERT_TRUE(h.c.add_namespace({1, 512, 0, 100}).ok());
  EXPECT_EQ(sc_of(h.io(rw(OPC_READ, 1, 99, 2, kData))), kGeneric(SC_LBA_OUT_OF_RANGE));
  EXPECT_EQ(sc_of(h.io(rw(OPC_READ, 7, 0, 1, kData))), kGeneric(SC_INVALID_NS_OR_FORMAT));
  Sqe unk; unk.set_opc(OPC_COMPARE); unk.set_nsid(1);
  EXPECT_EQ(sc_of(h.io(unk)), kGeneric(SC_INVALID_OPCODE));
  ASSERT_TRUE(h.c.set_namespace_ready(1, false).ok());
  Cqe nr = h.io(rw(OPC_READ, 1, 0, 1, kData));
  EXPECT_EQ(sc_of(nr), kGeneric(SC_NS_NOT_READY));
  EXPECT_FALSE(nr.dnr());                                // not ready: retry may succeed
  ASSERT_TRUE(h.c.set_namespace_ready(1, true).ok());
  Sqe sgl = rw(OPC_READ, 1, 0, 1, kData); sgl.b[1] = 0x40;   // PSDT 01: SGL, not supported
  Cqe s = h.io(sgl);
  EXPECT_EQ(sc_of(s), kGeneric(SC_INVALID_FIELD));
  EXPECT_TRUE(s.dnr());
  EXPECT_EQ(sc_of(h.io(rw(OPC_READ, 1, 0, 1, kBase + kSize + 4096))), kGeneric(SC_DATA_TRANSFER_ERROR));
  EXPECT_EQ(sc_of(h.io(rw(OPC_READ, 1, 0, 1, kData + 2))), kGeneric(SC_INVALID_FIELD));   // PRP1 not dword aligned
  EXPECT_EQ(h.c.counters().errors, 7u);
}

TEST(NvmeController, FlushWriteZeroesAndDsm) {
  Host h;
  h.create_io();
  ASSERT_TRUE(h.c.add_namespace({1, 512, 0, 64}).ok());
  std::memset(h.dma.at(kData), 0xAB, 4096);
  ASSERT_EQ(sc_of(h.io(rw(OPC_WRITE, 1, 0, 8, kData))), 0);
  Sqe fl; fl.set_opc(OPC_FLUSH); fl.set_nsid(1);
  EXPECT_EQ(sc_of(h.io(fl)), 0);
  EXPECT_EQ(h.c.counters().flushes, 1u);
  Sqe wz = rw(OPC_WRITE_ZEROES, 1, 2, 2, 0);
  EXPECT_EQ(sc_of(h.io(wz)), 0);
  std::vector<uint8_t> media;
  ASSERT_TRUE(h.c.peek(1, 0, 8, media).ok());
  EXPECT_EQ(media[2 * 512 - 1], 0xAB);
  EXPECT_EQ(media[2 * 512], 0); EXPECT_EQ(media[4 * 512 - 1], 0);
  EXPECT_EQ(media[4 * 512], 0xAB);
  // DSM deallocate one range of 1 block at LBA 6
  uint8_t range[16] = {};
  range[4] = 1; range[8] = 6;
  std::memcpy(h.dma.at(kList), range, 16);
  Sqe dsm; dsm.set_opc(OPC_DSM); dsm.set_nsid(1); dsm.set_prp(kList, 0); dsm.set_dw(10, 0); dsm.set_dw(11, 1u << 2);
  EXPECT_EQ(sc_of(h.io(dsm)), 0);
  ASSERT_TRUE(h.c.peek(1, 0, 8, media).ok());
  EXPECT_EQ(media[6 * 512], 0); EXPECT_EQ(media[7 * 512], 0xAB);
  range[8] = 200;   // out of range
  std::memcpy(h.dma.at(kList), range, 16);
  EXPECT_EQ(sc_of(h.io(dsm)), kGeneric(SC_LBA_OUT_OF_RANGE));
}

TEST(NvmeController, OncsGatesWriteZeroesAndDsm) {
  Config cfg; cfg.oncs = 0;
  Host h(cfg);
  h.create_io();
  ASSERT_TRUE(h.c.add_namespace({1, 512, 0, 64}).ok());
  EXPECT_EQ(sc_of(h.io(rw(OPC_WRITE_ZEROES, 1, 0, 1, 0))), kGeneric(SC_INVALID_OPCODE));
  Sqe dsm; dsm.set_opc(OPC_DSM); dsm.set_nsid(1); dsm.set_prp(kList, 0);
  EXPECT_EQ(sc_of(h.io(dsm)), kGeneric(SC_INVALID_OPCODE));
}

TEST(NvmeController, PhaseTagInvertsOnEveryWrap) {
  Host h({}, 4);   // 4-entry rings: the CQ wraps every 4 completions
  h.create_io();
  ASSERT_TRUE(h.c.add_namespace({1, 512, 0, 64}).ok());
  std::vector<bool> phases;
  for (uint16_t i = 0; i < 10; i++) {
    h.submit(rw(OPC_READ, 1, i, 1, kData), i);
    h.c.process();
    const uint16_t slot = h.icq_head;
    Cqe r;
    ASSERT_TRUE(h.reap(r));
    EXPECT_EQ(r.cid, i);
    EXPECT_EQ(r.sqhd, (i + 1) % 4);
    phases.push_back(r.phase());
    EXPECT_EQ(slot, i % 4);
  }
  EXPECT_EQ(phases, (std::vector<bool>{1, 1, 1, 1, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(h.c.cq(1)->phase, true);   // the next pass (10 % 4 = slot 2 of the third pass) writes phase 1
}

TEST(NvmeController, FullCompletionQueueStopsFetching) {
  Host h({}, 4);
  h.create_io();
  ASSERT_TRUE(h.c.add_namespace({1, 512, 0, 64}).ok());
  for (uint16_t i = 0; i < 3; i++) h.submit(rw(OPC_READ, 1, i, 1, kData), i);
  EXPECT_EQ(h.c.process(), 3u);   // CQ of 4 holds 3 (tail + 1 == head is full)
  h.submit(rw(OPC_READ, 1, 3, 1, kData), 3);
  EXPECT_EQ(h.c.process(), 0u);   // no room until the host advances the CQ head
  EXPECT_TRUE(h.c.has_work());
  Cqe r;
  ASSERT_TRUE(h.reap(r));
  EXPECT_EQ(h.c.process(), 1u);
}

TEST(NvmeController, TimeoutFaultLosesTheCommand) {
  Host h;
  h.create_io();
  ASSERT_TRUE(h.c.add_namespace({1, 512, 0, 64}).ok());
  h.c.inject_timeout(1);
  h.submit(rw(OPC_READ, 1, 0, 1, kData), 1);
  EXPECT_EQ(h.c.process(), 0u);
  Cqe r;
  EXPECT_FALSE(h.reap(r));                 // fetched (SQ head moved), never completed
  EXPECT_EQ(h.c.sq(1)->head, 1u);
  EXPECT_EQ(h.c.counters().lost, 1u);
  EXPECT_EQ(h.c.process(), 0u);
  EXPECT_EQ(sc_of(h.io(rw(OPC_READ, 1, 0, 1, kData), 2)), 0);   // the next command completes
}

TEST(NvmeController, PciErrorTearsDownQueuesUntilReset) {
  Host h;
  h.create_io();
  ASSERT_TRUE(h.c.add_namespace({1, 512, 0, 64}).ok());
  h.c.pci_error();
  EXPECT_TRUE(h.c.read32(REG_CSTS) & CSTS_CFS);
  EXPECT_FALSE(h.c.read32(REG_CSTS) & CSTS_RDY);
  EXPECT_EQ(h.c.sq(1), nullptr);
  EXPECT_EQ(h.c.cq(0), nullptr);
  h.submit(rw(OPC_READ, 1, 0, 1, kData), 1);   // doorbell ignored
  EXPECT_EQ(h.c.process(), 0u);
  h.c.write32(REG_CC, CC_EN);                  // still enabled: no effect
  EXPECT_TRUE(h.c.fatal());
  h.c.write32(REG_CC, 0);                      // reset clears CFS
  EXPECT_FALSE(h.c.fatal());
  h.c.write32(REG_CC, CC_EN);
  EXPECT_TRUE(h.c.enabled());
  EXPECT_EQ(h.c.sq(1), nullptr);               // I/O queues must be created again
  EXPECT_NE(h.c.sq(0), nullptr);
}

TEST(NvmeController, NamespaceProvisioningErrors) {
  FlatDma d;
  Config cfg; cfg.max_store = 1 << 20;
  Controller c(d, cfg);
  EXPECT_EQ(c.add_namespace({0, 512, 0, 8}).err, EINVAL);
  EXPECT_EQ(c.add_namespace({1, 520, 0, 8}).err, EINVAL);
  EXPECT_EQ(c.add_namespace({1, 512, 16, 8}).err, EINVAL);
  EXPECT_EQ(c.add_namespace({1, 512, 0, 0}).err, EINVAL);
  EXPECT_TRUE(c.add_namespace({1, 512, 0, 8}).ok());
  EXPECT_EQ(c.add_namespace({1, 512, 0, 8}).err, EEXIST);
  EXPECT_EQ(c.add_namespace({2, 4096, 0, 1024}).err, ENOMEM);
  EXPECT_EQ(std::string(status_name(SCT_GENERIC, SC_LBA_OUT_OF_RANGE)), "LBA_OUT_OF_RANGE");
}

}  // namespace
