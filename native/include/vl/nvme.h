// A soft NVMe PCIe controller: the backend SSD of the NVMe-oF target-offload lab (lab 4). Plain C++, no Node, no
// dependency on the RDMA device model: the controller reaches memory only through a Dma interface (host memory as
// a PCIe function sees it) and the host reaches the controller only through BAR0 register reads and writes.
//
// What is real (NVM Express Base Specification 2.0, sections cited per item):
//   - BAR0 registers (3.1.4): CAP (0x00), VS (0x08), CC (0x14), CSTS (0x1C), AQA (0x24), ASQ (0x28), ACQ (0x30) and
//     the doorbells: SQ y tail at 0x1000 + (2y) * (4 << CAP.DSTRD), CQ y head at 0x1000 + (2y + 1) * (4 << CAP.DSTRD);
//   - admin and I/O queues as rings in host memory: 64-byte SQEs, 16-byte CQEs, the phase tag inverted on every wrap
//     of the CQ (4.1, 4.2, 4.6); a full CQ (tail + 1 == head) stops the fetching of more commands;
//   - PRP data pointers (4.1.1: PRP1 with an offset, PRP2 second page or PRP list); SGLs are not supported (SGLS 0);
//   - admin commands Create / Delete I/O SQ / CQ and Identify (CNS 0 namespace, CNS 1 controller);
//   - NVM commands Flush, Write, Read, and as optional capabilities (Identify Controller ONCS bits 2 and 3) Dataset
//     Management and Write Zeroes; namespaces with LBA formats 512 / 4096 data bytes and 0 / 8 metadata bytes,
//     metadata transferred as part of an extended LBA (FLBAS bit 4), so a 4096 + 8 block moves 4104 bytes;
//   - status codes (SCT 0 generic, SCT 1 command specific) with the spec's values.
// What is modelled (not in the spec): the backing store is host memory; deallocated (DSM AD / Write Zeroes) blocks
// read back as zeros; the faults (inject_timeout: a fetched command never completes; pci_error: CSTS.CFS set, every
// queue torn down, doorbells ignored until the host resets the controller with CC.EN 1 -> 0).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vl/types.h"

namespace vl::nvme {

// ---- NVM command set and admin opcodes (NVMe base spec figure "Opcodes for Admin Commands"; NVM Command Set spec)
enum Opcode : uint8_t {
  OPC_FLUSH = 0x00, OPC_WRITE = 0x01, OPC_READ = 0x02, OPC_WRITE_UNCOR = 0x04, OPC_COMPARE = 0x05,
  OPC_WRITE_ZEROES = 0x08, OPC_DSM = 0x09, OPC_FABRICS = 0x7F,
};
enum AdminOpcode : uint8_t {
  ADM_DELETE_IO_SQ = 0x00, ADM_CREATE_IO_SQ = 0x01, ADM_DELETE_IO_CQ = 0x04, ADM_CREATE_IO_CQ = 0x05,
  ADM_IDENTIFY = 0x06,
};
// Status Code Type (CQE DW3 bits 27:25) and the codes the controller emits.
enum Sct : uint8_t { SCT_GENERIC = 0, SCT_COMMAND_SPECIFIC = 1, SCT_MEDIA = 2 };
enum GenericStatus : uint8_t {
  SC_SUCCESS = 0x00, SC_INVALID_OPCODE = 0x01, SC_INVALID_FIELD = 0x02, SC_DATA_TRANSFER_ERROR = 0x04,
  SC_INTERNAL = 0x06, SC_ABORTED_BY_REQUEST = 0x07, SC_ABORTED_SQ_DELETED = 0x08, SC_INVALID_NS_OR_FORMAT = 0x0B,
  SC_DATA_SGL_LENGTH_INVALID = 0x0F, SC_SGL_DESCRIPTOR_TYPE_INVALID = 0x11, SC_INVALID_SGL_OFFSET = 0x16,
  SC_LBA_OUT_OF_RANGE = 0x80, SC_CAPACITY_EXCEEDED = 0x81, SC_NS_NOT_READY = 0x82,
};
enum CommandSpecificStatus : uint8_t {   // SCT 1
  SC_CQ_INVALID = 0x00, SC_INVALID_QID = 0x01, SC_INVALID_QUEUE_SIZE = 0x02, SC_INVALID_QUEUE_DELETION = 0x0C,
};
// Identify Controller ONCS (bytes 521:520) bits the controller may advertise.
enum Oncs : uint16_t { ONCS_COMPARE = 1u << 0, ONCS_WRITE_UNCOR = 1u << 1, ONCS_DSM = 1u << 2, ONCS_WRITE_ZEROES = 1u << 3 };

// BAR0 register offsets (3.1.4) and fields used here.
enum Reg : uint32_t {
  REG_CAP = 0x00, REG_VS = 0x08, REG_INTMS = 0x0C, REG_INTMC = 0x10, REG_CC = 0x14, REG_CSTS = 0x1C,
  REG_AQA = 0x24, REG_ASQ = 0x28, REG_ACQ = 0x30, REG_DOORBELL_BASE = 0x1000,
};
constexpr uint32_t CC_EN = 1u << 0;
constexpr uint32_t CSTS_RDY = 1u << 0, CSTS_CFS = 1u << 1;
constexpr uint32_t kSqeSize = 64, kCqeSize = 16;

// Byte offset in BAR0 of queue y's SQ tail (cq = false) or CQ head (cq = true) doorbell.
constexpr uint32_t doorbell_offset(uint16_t qid, bool cq, uint32_t dstrd) {
  return REG_DOORBELL_BASE + (2u * qid + (cq ? 1u : 0u)) * (4u << dstrd);
}

// A 64-byte submission queue entry (4.2): byte accessors for the fields used here.
struct Sqe {
  uint8_t b[kSqeSize] = {};
  uint8_t opc() const { return b[0]; }
  uint8_t psdt() const { return uint8_t(b[1] >> 6); }
  uint16_t cid() const { return uint16_t(b[2] | b[3] << 8); }
  uint32_t nsid() const { return dw(1); }
  uint64_t prp1() const { return qw(24); }
  uint64_t prp2() const { return qw(32); }
  uint32_t cdw(unsigned n) const { return dw(n); }       // n = 10..15 (also 0..9)
  uint64_t slba() const { return uint64_t(dw(10)) | uint64_t(dw(11)) << 32; }
  uint32_t nlb() const { return (dw(12) & 0xFFFF) + 1u; }   // CDW12 bits 15:0 are 0's based
  uint32_t dw(unsigned n) const { return uint32_t(b[4 * n]) | uint32_t(b[4 * n + 1]) << 8 | uint32_t(b[4 * n + 2]) << 16 | uint32_t(b[4 * n + 3]) << 24; }
  uint64_t qw(unsigned off) const { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | b[off + i]; return v; }
  void set_dw(unsigned n, uint32_t v) { for (int i = 0; i < 4; i++) b[4 * n + i] = uint8_t(v >> (8 * i)); }
  void set_qw(unsigned off, uint64_t v) { for (int i = 0; i < 8; i++) b[off + i] = uint8_t(v >> (8 * i)); }
  void set_opc(uint8_t o) { b[0] = o; }
  void set_cid(uint16_t c) { b[2] = uint8_t(c); b[3] = uint8_t(c >> 8); }
  void set_nsid(uint32_t n) { set_dw(1, n); }
  void set_prp(uint64_t p1, uint64_t p2) { b[1] &= 0x3F; set_qw(24, p1); set_qw(32, p2); }
  void set_rw(uint64_t slba, uint32_t nlb) { set_dw(10, uint32_t(slba)); set_dw(11, uint32_t(slba >> 32)); set_dw(12, (dw(12) & ~0xFFFFu) | ((nlb - 1) & 0xFFFF)); }
};
// A 16-byte completion queue entry (4.6).
struct Cqe {
  uint32_t dw0 = 0, dw1 = 0;
  uint16_t sqhd = 0, sqid = 0, cid = 0;
  uint16_t status = 0;             // bit 0 phase tag, bits 8:1 SC, 11:9 SCT, 13:12 CRD, 14 M, 15 DNR
  bool phase() const { return status & 1; }
  uint8_t sc() const { return uint8_t(status >> 1); }
  uint8_t sct() const { return uint8_t((status >> 9) & 7); }
  bool dnr() const { return status >> 15; }
  void encode(uint8_t out[kCqeSize]) const;
  static Cqe decode(const uint8_t in[kCqeSize]);
};
constexpr uint16_t status_field(uint8_t sct, uint8_t sc, bool dnr) { return uint16_t(sc << 1 | (sct & 7) << 9 | (dnr ? 1u << 15 : 0u)); }
const char* status_name(uint8_t sct, uint8_t sc);   // "SUCCESS", "LBA_OUT_OF_RANGE", ... ("UNKNOWN" otherwise)
const char* opcode_name(uint8_t opc);               // NVM I/O command set opcode name ("READ", ...)

// The memory the controller masters (bus addresses are host addresses here).
struct Dma {
  virtual ~Dma() = default;
  virtual bool read(uint64_t addr, void* dst, size_t n) = 0;
  virtual bool write(uint64_t addr, const void* src, size_t n) = 0;
};

struct Config {
  uint32_t dstrd = 0;              // CAP.DSTRD: doorbell stride 4 << DSTRD bytes
  uint32_t mqes = 1023;            // CAP.MQES: largest queue, 0's based
  uint32_t max_io_queues = 16;     // I/O queue pairs the controller creates
  uint16_t oncs = ONCS_DSM | ONCS_WRITE_ZEROES;
  uint8_t mdts = 5;                // Maximum Data Transfer Size as 2^mdts pages of 4 KiB (5: 128 KiB)
  uint64_t max_store = 256ull << 20;   // bytes of backing store across namespaces (modelled limit)
};

struct NamespaceConfig {
  uint32_t nsid = 1;
  uint32_t lba_data = 512;         // LBADS: 512 or 4096
  uint32_t lba_meta = 0;           // MS: 0 or 8, carried in an extended LBA
  uint64_t nlba = 0;               // NSZE in blocks
};

struct QueueState {                // one ring as the controller sees it
  uint16_t qid = 0; bool cq = false;
  uint64_t base = 0; uint32_t size = 0;     // entries (1's based)
  uint32_t head = 0, tail = 0;
  bool phase = true;               // CQ: the phase tag the controller writes next (starts 1)
  uint16_t cqid = 0;               // SQ: its CQ
  uint64_t fetched = 0, completed = 0;
};

struct Counters { uint64_t reads = 0, writes = 0, flushes = 0, write_zeroes = 0, dsm = 0, admin = 0, errors = 0, lost = 0; };

class Controller {
 public:
  Controller(Dma& dma, const Config& cfg = {});
  // Namespaces (a modelled provisioning step; NVMe namespace management commands are not built).
  // EINVAL bad nsid / format / size; EEXIST nsid in use; ENOMEM over Config::max_store.
  Status add_namespace(const NamespaceConfig& ns);
  Status set_namespace_ready(uint32_t nsid, bool ready);      // NS_NOT_READY while false
  // BAR0 (4- and 8-byte accesses at their offsets; others read 0 / are ignored).
  uint32_t read32(uint32_t off) const;
  uint64_t read64(uint32_t off) const;
  void write32(uint32_t off, uint32_t v);
  void write64(uint32_t off, uint64_t v);
  uint32_t bar_size() const { return REG_DOORBELL_BASE + 2u * (max_io() + 1) * (4u << cfg_.dstrd); }
  // Fetches and executes the commands the doorbells made visible, queue by queue; returns the CQEs posted.
  size_t process(size_t max = SIZE_MAX);
  bool has_work() const;
  // Faults. inject_timeout: the next n commands fetched from I/O queues are lost (no CQE ever).
  void inject_timeout(uint32_t n = 1) { lose_next_ += n; }
  void pci_error();                // CSTS.CFS = 1, every queue torn down, doorbells ignored until CC.EN 1 -> 0
  // observation
  std::vector<QueueState> queues() const;
  const QueueState* sq(uint16_t qid) const { auto it = sqs_.find(qid); return it == sqs_.end() ? nullptr : &it->second; }
  const QueueState* cq(uint16_t qid) const { auto it = cqs_.find(qid); return it == cqs_.end() ? nullptr : &it->second; }
  const Counters& counters() const { return counters_; }
  const Config& config() const { return cfg_; }
  bool enabled() const { return csts_ & CSTS_RDY; }
  bool fatal() const { return csts_ & CSTS_CFS; }
  // The namespace's extended block size (data + metadata) or 0 if there is no such namespace.
  uint32_t block_size(uint32_t nsid) const;
  uint64_t nlba(uint32_t nsid) const;
  std::vector<uint32_t> namespaces() const;
  // Media access for verification (tests, the lab's data checks): the extended blocks [slba, slba + n).
  Status peek(uint32_t nsid, uint64_t slba, uint32_t n, std::vector<uint8_t>& out) const;

 private:
  struct Ns { NamespaceConfig cfg; bool ready = true; std::vector<uint8_t> store; uint32_t bs() const { return cfg.lba_data + cfg.lba_meta; } };
  uint32_t max_io() const { return cfg_.max_io_queues; }
  void enable();
  void disable();
  void doorbell(uint32_t off, uint32_t v);
  bool post(QueueState& cq, const Cqe& c);
  void execute(QueueState& sq, const Sqe& e, Cqe& c, bool& lost);
  void admin(const Sqe& e, Cqe& c);
  void io(const Sqe& e, Cqe& c);
  uint16_t identify(const Sqe& e);
  // PRP walk (4.1.1): the transfer's (addr, len) pieces; false with SC set on a bad PRP
  bool prp_pieces(const Sqe& e, uint64_t len, std::vector<std::pair<uint64_t, uint64_t>>& out, uint16_t& status);
  bool xfer(const Sqe& e, uint8_t* mem, uint64_t len, bool to_host, uint16_t& status);
  Dma& dma_;
  Config cfg_;
  uint32_t cc_ = 0, csts_ = 0, aqa_ = 0;
  uint64_t asq_ = 0, acq_ = 0;
  std::map<uint16_t, QueueState> sqs_, cqs_;
  std::map<uint32_t, Ns> ns_;
  uint64_t store_bytes_ = 0;
  uint32_t lose_next_ = 0;
  Counters counters_;
};

}  // namespace vl::nvme
