// The soft NVMe PCIe controller (vl/nvme.h): BAR0 registers, queue rings in host memory, admin and NVM commands.
// Section numbers are those of the NVM Express Base Specification 2.0 unless said otherwise.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vl/nvme.h"

namespace vl::nvme {

namespace {
constexpr uint64_t kMps = 4096;   // CC.MPS 0: memory page size 4 KiB
}  // namespace

void Cqe::encode(uint8_t o[kCqeSize]) const {
  auto put32 = [&](int at, uint32_t v) { for (int i = 0; i < 4; i++) o[at + i] = uint8_t(v >> (8 * i)); };
  auto put16 = [&](int at, uint16_t v) { o[at] = uint8_t(v); o[at + 1] = uint8_t(v >> 8); };
  put32(0, dw0); put32(4, dw1); put16(8, sqhd); put16(10, sqid); put16(12, cid); put16(14, status);
}

Cqe Cqe::decode(const uint8_t in[kCqeSize]) {
  auto get32 = [&](int at) { return uint32_t(in[at]) | uint32_t(in[at + 1]) << 8 | uint32_t(in[at + 2]) << 16 | uint32_t(in[at + 3]) << 24; };
  auto get16 = [&](int at) { return uint16_t(in[at] | in[at + 1] << 8); };
  Cqe c;
  c.dw0 = get32(0); c.dw1 = get32(4); c.sqhd = get16(8); c.sqid = get16(10); c.cid = get16(12); c.status = get16(14);
  return c;
}

const char* status_name(uint8_t sct, uint8_t sc) {
  if (sct == SCT_GENERIC) switch (sc) {
    case SC_SUCCESS: return "SUCCESS";
    case SC_INVALID_OPCODE: return "INVALID_OPCODE";
    case SC_INVALID_FIELD: return "INVALID_FIELD";
    case SC_DATA_TRANSFER_ERROR: return "DATA_TRANSFER_ERROR";
    case SC_INTERNAL: return "INTERNAL";
    case SC_ABORTED_BY_REQUEST: return "ABORTED_BY_REQUEST";
    case SC_ABORTED_SQ_DELETED: return "ABORTED_SQ_DELETED";
    case SC_INVALID_NS_OR_FORMAT: return "INVALID_NS_OR_FORMAT";
    case SC_DATA_SGL_LENGTH_INVALID: return "DATA_SGL_LENGTH_INVALID";
    case SC_SGL_DESCRIPTOR_TYPE_INVALID: return "SGL_DESCRIPTOR_TYPE_INVALID";
    case SC_INVALID_SGL_OFFSET: return "INVALID_SGL_OFFSET";
    case SC_LBA_OUT_OF_RANGE: return "LBA_OUT_OF_RANGE";
    case SC_CAPACITY_EXCEEDED: return "CAPACITY_EXCEEDED";
    case SC_NS_NOT_READY: return "NS_NOT_READY";
  }
  if (sct == SCT_COMMAND_SPECIFIC) switch (sc) {
    case SC_CQ_INVALID: return "COMPLETION_QUEUE_INVALID";
    case SC_INVALID_QID: return "INVALID_QUEUE_IDENTIFIER";
    case SC_INVALID_QUEUE_SIZE: return "INVALID_QUEUE_SIZE";
    case SC_INVALID_QUEUE_DELETION: return "INVALID_QUEUE_DELETION";
  }
  return "UNKNOWN";
}

const char* opcode_name(uint8_t opc) {
  switch (opc) {
    case OPC_FLUSH: return "FLUSH";
    case OPC_WRITE: return "WRITE";
    case OPC_READ: return "READ";
    case OPC_WRITE_UNCOR: return "WRITE_UNCORRECTABLE";
    case OPC_COMPARE: return "COMPARE";
    case OPC_WRITE_ZEROES: return "WRITE_ZEROES";
    case OPC_DSM: return "DATASET_MANAGEMENT";
    case OPC_FABRICS: return "FABRICS";
  }
  return "UNKNOWN";
}

Controller::Controller(Dma& dma, const Config& cfg) : dma_(dma), cfg_(cfg) {
  if (cfg_.dstrd > 15) cfg_.dstrd = 15;
  if (cfg_.mqes < 1) cfg_.mqes = 1;
  if (cfg_.mqes > 0xFFFF) cfg_.mqes = 0xFFFF;
  if (cfg_.max_io_queues < 1) cfg_.max_io_queues = 1;
}

Status Controller::add_namespace(const NamespaceConfig& n) {
  if (n.nsid == 0 || n.nsid == 0xFFFFFFFFu) return {EINVAL, "nsid: 0 and 0xFFFFFFFF are not valid namespace IDs"};
  if (n.lba_data != 512 && n.lba_data != 4096) return {EINVAL, "lba_data: " + std::to_string(n.lba_data) + " (512 or 4096)"};
  if (n.lba_meta != 0 && n.lba_meta != 8) return {EINVAL, "lba_meta: " + std::to_string(n.lba_meta) + " (0 or 8)"};
  if (n.nlba == 0) return {EINVAL, "nlba: a namespace needs at least one block"};
  if (ns_.count(n.nsid)) return {EEXIST, "nsid: namespace " + std::to_string(n.nsid) + " exists"};
  const uint64_t bytes = n.nlba * (n.lba_data + n.lba_meta);
  if (n.nlba > cfg_.max_store || store_bytes_ + bytes > cfg_.max_store)
    return {ENOMEM, "nlba: " + std::to_string(bytes) + " bytes over the controller's backing store (" + std::to_string(cfg_.max_store) + ")"};
  Ns s;
  s.cfg = n;
  s.store.assign(bytes, 0);
  store_bytes_ += bytes;
  ns_.emplace(n.nsid, std::move(s));
  return {};
}

Status Controller::set_namespace_ready(uint32_t nsid, bool ready) {
  auto it = ns_.find(nsid);
  if (it == ns_.end()) return {ENOENT, "nsid: no namespace " + std::to_string(nsid)};
  it->second.ready = ready;
  return {};
}

uint32_t Controller::block_size(uint32_t nsid) const { auto it = ns_.find(nsid); return it == ns_.end() ? 0 : it->second.bs(); }
uint64_t Controller::nlba(uint32_t nsid) const { auto it = ns_.find(nsid); return it == ns_.end() ? 0 : it->second.cfg.nlba; }
std::vector<uint32_t> Controller::namespaces() const { std::vector<uint32_t> v; for (auto& [id, n] : ns_) v.push_back(id); return v; }

Status Controller::peek(uint32_t nsid, uint64_t slba, uint32_t n, std::vector<uint8_t>& out) const {
  auto it = ns_.find(nsid);
  if (it == ns_.end()) return {ENOENT, "nsid: no namespace " + std::to_string(nsid)};
  if (slba + n > it->second.cfg.nlba || slba + n < slba) return {EINVAL, "range: beyond the namespace"};
  const uint64_t bs = it->second.bs();
  out.assign(it->second.store.begin() + slba * bs, it->second.store.begin() + (slba + n) * bs);
  return {};
}

// ---- BAR0
uint64_t Controller::read64(uint32_t off) const {
  switch (off) {
    case REG_CAP:   // MQES 15:0, CQR 16 (contiguous queues required), TO 31:24 (500 ms units), DSTRD 35:32, CSS 44:37 (NVM)
      return uint64_t(cfg_.mqes) | 1ull << 16 | 20ull << 24 | uint64_t(cfg_.dstrd) << 32 | 1ull << 37;
    case REG_ASQ: return asq_;
    case REG_ACQ: return acq_;
  }
  return read32(off);
}

uint32_t Controller::read32(uint32_t off) const {
  switch (off) {
    case REG_CAP: return uint32_t(read64(REG_CAP));
    case REG_CAP + 4: return uint32_t(read64(REG_CAP) >> 32);
    case REG_VS: return 0x00020000;   // 2.0
    case REG_CC: return cc_;
    case REG_CSTS: return csts_;
    case REG_AQA: return aqa_;
    case REG_ASQ: return uint32_t(asq_);
    case REG_ASQ + 4: return uint32_t(asq_ >> 32);
    case REG_ACQ: return uint32_t(acq_);
    case REG_ACQ + 4: return uint32_t(acq_ >> 32);
  }
  return 0;   // doorbells are write-only (read value undefined; 0 here)
}

void Controller::write64(uint32_t off, uint64_t v) {
  if (off == REG_ASQ) { asq_ = v & ~uint64_t(4095); return; }
  if (off == REG_ACQ) { acq_ = v & ~uint64_t(4095); return; }
  write32(off, uint32_t(v));
}

void Controller::write32(uint32_t off, uint32_t v) {
  switch (off) {
    case REG_CC: {
      const bool was = cc_ & CC_EN, now = v & CC_EN;
      cc_ = v;
      if (!was && now) enable();
      else if (was && !now) disable();
      return;
    }
    case REG_AQA: aqa_ = v & 0x0FFF0FFF; return;
    case REG_ASQ: asq_ = (asq_ & ~0xFFFFFFFFull) | (v & ~4095u); return;
    case REG_ASQ + 4: asq_ = (asq_ & 0xFFFFFFFFull) | uint64_t(v) << 32; return;
    case REG_ACQ: acq_ = (acq_ & ~0xFFFFFFFFull) | (v & ~4095u); return;
    case REG_ACQ + 4: acq_ = (acq_ & 0xFFFFFFFFull) | uint64_t(v) << 32; return;
  }
  if (off >= REG_DOORBELL_BASE && off < bar_size()) doorbell(off, v);
}

// CC.EN 0 -> 1 (3.5.1): the admin queues from AQA / ASQ / ACQ, CSTS.RDY set
void Controller::enable() {
  if (csts_ & CSTS_CFS) return;   // a fatal controller stays down until reset (CC.EN 1 -> 0)
  sqs_.clear(); cqs_.clear();
  QueueState asq, acq;
  asq.qid = 0; asq.base = asq_; asq.size = (aqa_ & 0xFFF) + 1; asq.cqid = 0;
  acq.qid = 0; acq.cq = true; acq.base = acq_; acq.size = ((aqa_ >> 16) & 0xFFF) + 1;
  sqs_[0] = asq; cqs_[0] = acq;
  csts_ |= CSTS_RDY;
}

// CC.EN 1 -> 0: controller reset; every queue deleted, CSTS.RDY and CSTS.CFS cleared
void Controller::disable() {
  sqs_.clear(); cqs_.clear();
  csts_ = 0;
}

void Controller::pci_error() {
  csts_ |= CSTS_CFS;
  csts_ &= ~CSTS_RDY;
  sqs_.clear(); cqs_.clear();   // queues torn down: commands in flight are lost
}

void Controller::doorbell(uint32_t off, uint32_t v) {
  if (!(csts_ & CSTS_RDY)) return;   // not ready (or fatal): doorbell writes are ignored
  const uint32_t stride = 4u << cfg_.dstrd;
  const uint32_t idx = (off - REG_DOORBELL_BASE) / stride;
  if ((off - REG_DOORBELL_BASE) % stride) return;
  const uint16_t qid = uint16_t(idx / 2);
  if (idx % 2 == 0) {
    auto it = sqs_.find(qid);
    if (it != sqs_.end() && v < it->second.size) it->second.tail = v;   // an out-of-range value is an invalid doorbell write
  } else {
    auto it = cqs_.find(qid);
    if (it != cqs_.end() && v < it->second.size) it->second.head = v;
  }
}

bool Controller::has_work() const {
  if (!(csts_ & CSTS_RDY)) return false;
  for (auto& [id, s] : sqs_) if (s.head != s.tail) return true;
  return false;
}

// Posts c on cq with the current phase tag; false when the CQ is full (the command stays unfetched).
bool Controller::post(QueueState& q, const Cqe& c) {
  if ((q.tail + 1) % q.size == q.head) return false;
  Cqe out = c;
  out.status = uint16_t((c.status & ~1u) | (q.phase ? 1u : 0u));
  uint8_t raw[kCqeSize];
  out.encode(raw);
  dma_.write(q.base + uint64_t(q.tail) * kCqeSize, raw, kCqeSize);
  q.completed++;
  if (++q.tail == q.size) { q.tail = 0; q.phase = !q.phase; }   // 4.6: the phase tag inverts on every pass
  return true;
}

size_t Controller::process(size_t max) {
  size_t posted = 0;
  bool progress = true;
  while (progress && posted < max && (csts_ & CSTS_RDY)) {
    progress = false;
    for (auto& [qid, s] : sqs_) {   // round robin: one command per SQ per pass (arbitration 4.13, modelled)
      if (s.head == s.tail || posted >= max) continue;
      auto cit = cqs_.find(s.cqid);
      if (cit == cqs_.end()) continue;
      QueueState& c = cit->second;
      if ((c.tail + 1) % c.size == c.head) continue;   // CQ full: wait for the host's CQ head doorbell
      Sqe e;
      if (!dma_.read(s.base + uint64_t(s.head) * kSqeSize, e.b, kSqeSize)) { pci_error(); return posted; }
      s.head = (s.head + 1) % s.size;
      s.fetched++;
      Cqe r;
      bool lost = false;
      const uint16_t sqid = qid;
      execute(s, e, r, lost);
      progress = true;
      if (lost) { counters_.lost++; continue; }
      auto again = cqs_.find(s.cqid);   // an admin command may have changed the queue maps
      auto sit = sqs_.find(sqid);
      if (again == cqs_.end()) continue;
      r.sqhd = sit == sqs_.end() ? 0 : uint16_t(sit->second.head);
      r.sqid = sqid; r.cid = e.cid();
      if (r.sc() != SC_SUCCESS || r.sct() != SCT_GENERIC) counters_.errors++;
      if (post(again->second, r)) posted++;
      if (sit == sqs_.end()) break;   // iterators into sqs_ are stale after a Delete I/O SQ
    }
  }
  return posted;
}

void Controller::execute(QueueState& sq, const Sqe& e, Cqe& c, bool& lost) {
  if (sq.qid == 0) { counters_.admin++; admin(e, c); return; }
  if (lose_next_) { lose_next_--; lost = true; return; }   // fault: fetched, never completed
  io(e, c);
}

// ---- data transfer through PRPs (4.1.1)
bool Controller::prp_pieces(const Sqe& e, uint64_t len, std::vector<std::pair<uint64_t, uint64_t>>& out, uint16_t& st) {
  out.clear();
  if (len == 0) return true;
  if (e.psdt() != 0) { st = status_field(SCT_GENERIC, SC_INVALID_FIELD, true); return false; }   // SGLS = 0
  const uint64_t p1 = e.prp1();
  if (p1 & 3) { st = status_field(SCT_GENERIC, SC_INVALID_FIELD, true); return false; }
  uint64_t first = std::min<uint64_t>(len, kMps - (p1 & (kMps - 1)));
  out.push_back({p1, first});
  uint64_t rest = len - first;
  if (rest == 0) return true;
  const uint64_t p2 = e.prp2();
  if (rest <= kMps) {
    if (p2 & (kMps - 1)) { st = status_field(SCT_GENERIC, SC_INVALID_FIELD, true); return false; }   // PRP offset invalid
    out.push_back({p2, rest});
    return true;
  }
  // PRP2 points to a PRP list; its last entry in a page chains to the next list page
  uint64_t list = p2;
  while (rest) {
    uint64_t entry = 0;
    const bool last_slot = ((list + 8) & (kMps - 1)) == 0;
    if (!dma_.read(list, &entry, 8)) { st = status_field(SCT_GENERIC, SC_DATA_TRANSFER_ERROR, false); return false; }
    if (last_slot && rest > kMps) { list = entry; continue; }
    if (entry & (kMps - 1)) { st = status_field(SCT_GENERIC, SC_INVALID_FIELD, true); return false; }
    const uint64_t n = std::min<uint64_t>(rest, kMps);
    out.push_back({entry, n});
    rest -= n;
    list += 8;
  }
  return true;
}

bool Controller::xfer(const Sqe& e, uint8_t* mem, uint64_t len, bool to_host, uint16_t& st) {
  std::vector<std::pair<uint64_t, uint64_t>> pcs;
  if (!prp_pieces(e, len, pcs, st)) return false;
  uint64_t off = 0;
  for (auto& [a, n] : pcs) {
    const bool ok = to_host ? dma_.write(a, mem + off, n) : dma_.read(a, mem + off, n);
    if (!ok) { st = status_field(SCT_GENERIC, SC_DATA_TRANSFER_ERROR, false); return false; }
    off += n;
  }
  return true;
}

// ---- NVM command set (NVM Command Set Specification 1.0: 3.2.1 Flush... Read, Write, Write Zeroes, DSM)
void Controller::io(const Sqe& e, Cqe& c) {
  auto fail = [&](uint8_t sct, uint8_t sc, bool dnr) { c.status = status_field(sct, sc, dnr); };
  const uint8_t opc = e.opc();
  const bool known = opc == OPC_FLUSH || opc == OPC_WRITE || opc == OPC_READ ||
                     (opc == OPC_WRITE_ZEROES && (cfg_.oncs & ONCS_WRITE_ZEROES)) || (opc == OPC_DSM && (cfg_.oncs & ONCS_DSM));
  if (!known) return fail(SCT_GENERIC, SC_INVALID_OPCODE, true);
  if (opc == OPC_FLUSH && e.nsid() == 0xFFFFFFFFu) { counters_.flushes++; return; }   // flush every namespace
  auto it = ns_.find(e.nsid());
  if (it == ns_.end()) return fail(SCT_GENERIC, SC_INVALID_NS_OR_FORMAT, true);
  Ns& n = it->second;
  if (!n.ready) return fail(SCT_GENERIC, SC_NS_NOT_READY, false);
  const uint64_t bs = n.bs();
  if (opc == OPC_FLUSH) { counters_.flushes++; return; }   // the store is the medium: nothing volatile to flush
  if (opc == OPC_DSM) {
    counters_.dsm++;
    const uint32_t nr = (e.cdw(10) & 0xFF) + 1;   // ranges, 0's based
    std::vector<uint8_t> ranges(size_t(nr) * 16);
    uint16_t st = 0;
    if (!xfer(e, ranges.data(), ranges.size(), false, st)) { c.status = st; return; }
    const bool ad = e.cdw(11) & (1u << 2);   // Attribute - Deallocate
    for (uint32_t i = 0; i < nr; i++) {
      const uint8_t* r = ranges.data() + 16 * i;
      uint32_t nlb = uint32_t(r[4]) | uint32_t(r[5]) << 8 | uint32_t(r[6]) << 16 | uint32_t(r[7]) << 24;
      uint64_t slba = 0;
      for (int k = 7; k >= 0; k--) slba = slba << 8 | r[8 + k];
      if (slba + nlb > n.cfg.nlba || slba + nlb < slba) return fail(SCT_GENERIC, SC_LBA_OUT_OF_RANGE, true);
      if (ad) std::memset(n.store.data() + slba * bs, 0, nlb * bs);   // deallocated blocks read as zeros (modelled DLFEAT)
    }
    return;
  }
  const uint64_t slba = e.slba();
  const uint32_t nlb = e.nlb();
  if (slba + nlb > n.cfg.nlba || slba + nlb < slba) return fail(SCT_GENERIC, SC_LBA_OUT_OF_RANGE, true);
  if (opc == OPC_WRITE_ZEROES) {
    counters_.write_zeroes++;
    std::memset(n.store.data() + slba * bs, 0, nlb * bs);
    return;
  }
  const uint64_t len = uint64_t(nlb) * bs;
  if (len > (kMps << cfg_.mdts)) return fail(SCT_GENERIC, SC_INVALID_FIELD, true);   // over MDTS
  uint16_t st = 0;
  uint8_t* mem = n.store.data() + slba * bs;
  if (opc == OPC_WRITE) {
    counters_.writes++;
    // read into a bounce first: a failed transfer must not leave half a write on the medium
    std::vector<uint8_t> tmp(len);
    if (!xfer(e, tmp.data(), len, false, st)) { c.status = st; return; }
    std::memcpy(mem, tmp.data(), len);
  } else {
    counters_.reads++;
    if (!xfer(e, mem, len, true, st)) c.status = st;
  }
}

// ---- admin command set (5.x: Create / Delete I/O queues, Identify)
void Controller::admin(const Sqe& e, Cqe& c) {
  auto fail = [&](uint8_t sct, uint8_t sc) { c.status = status_field(sct, sc, true); };
  const uint16_t qid = uint16_t(e.cdw(10));
  const uint32_t qsize = (e.cdw(10) >> 16) + 1;
  switch (e.opc()) {
    case ADM_CREATE_IO_CQ: {
      if (qid == 0 || qid > max_io() || cqs_.count(qid)) return fail(SCT_COMMAND_SPECIFIC, SC_INVALID_QID);
      if (qsize < 2 || qsize > cfg_.mqes + 1) return fail(SCT_COMMAND_SPECIFIC, SC_INVALID_QUEUE_SIZE);
      if (!(e.cdw(11) & 1) || (e.prp1() & 4095)) return fail(SCT_GENERIC, SC_INVALID_FIELD);   // PC required (CAP.CQR)
      QueueState q; q.qid = qid; q.cq = true; q.base = e.prp1(); q.size = qsize;
      cqs_[qid] = q;
      return;
    }
    case ADM_CREATE_IO_SQ: {
      const uint16_t cqid = uint16_t(e.cdw(11) >> 16);
      if (qid == 0 || qid > max_io() || sqs_.count(qid)) return fail(SCT_COMMAND_SPECIFIC, SC_INVALID_QID);
      if (qsize < 2 || qsize > cfg_.mqes + 1) return fail(SCT_COMMAND_SPECIFIC, SC_INVALID_QUEUE_SIZE);
      if (cqid == 0 || !cqs_.count(cqid)) return fail(SCT_COMMAND_SPECIFIC, SC_CQ_INVALID);
      if (!(e.cdw(11) & 1) || (e.prp1() & 4095)) return fail(SCT_GENERIC, SC_INVALID_FIELD);
      QueueState q; q.qid = qid; q.base = e.prp1(); q.size = qsize; q.cqid = cqid;
      sqs_[qid] = q;
      return;
    }
    case ADM_DELETE_IO_SQ:
      if (qid == 0 || !sqs_.count(qid)) return fail(SCT_COMMAND_SPECIFIC, SC_INVALID_QID);
      sqs_.erase(qid);
      return;
    case ADM_DELETE_IO_CQ:
      if (qid == 0 || !cqs_.count(qid)) return fail(SCT_COMMAND_SPECIFIC, SC_INVALID_QID);
      for (auto& [id, s] : sqs_) if (s.cqid == qid) return fail(SCT_COMMAND_SPECIFIC, SC_INVALID_QUEUE_DELETION);
      cqs_.erase(qid);
      return;
    case ADM_IDENTIFY:
      c.status = identify(e);
      return;
  }
  fail(SCT_GENERIC, SC_INVALID_OPCODE);
}

// Identify (5.17): CNS 0 namespace data structure (NVM Command Set spec 4.1.5.1), CNS 1 controller data structure
uint16_t Controller::identify(const Sqe& e) {
  uint8_t d[4096] = {};
  auto put = [&](size_t at, uint64_t v, int n) { for (int i = 0; i < n; i++) d[at + i] = uint8_t(v >> (8 * i)); };
  const uint8_t cns = uint8_t(e.cdw(10));
  if (cns == 1) {
    put(0, 0x1b36, 2);                                  // VID: a software device (QEMU's PCI vendor id, as its emulated NVMe)
    std::memcpy(d + 4, "VLNVME0001          ", 20);      // SN
    std::memcpy(d + 24, "Verbs Lab soft NVMe (modelled)          ", 40);   // MN
    std::memcpy(d + 64, "1.0     ", 8);                 // FR
    d[77] = cfg_.mdts;                                   // MDTS
    put(80, 0x00020000, 4);                              // VER 2.0
    d[512] = 0x66;                                       // SQES: 64-byte entries
    d[513] = 0x44;                                       // CQES: 16-byte entries
    put(516, ns_.empty() ? 0 : ns_.rbegin()->first, 4);  // NN
    put(520, cfg_.oncs, 2);                              // ONCS
  } else if (cns == 0) {
    auto it = ns_.find(e.nsid());
    if (it == ns_.end()) return status_field(SCT_GENERIC, SC_INVALID_NS_OR_FORMAT, true);
    const Ns& n = it->second;
    put(0, n.cfg.nlba, 8); put(8, n.cfg.nlba, 8); put(16, n.cfg.nlba, 8);   // NSZE NCAP NUSE
    d[25] = 3;                                           // NLBAF: four formats (0's based)
    static constexpr uint32_t kFormats[4][2] = {{512, 0}, {512, 8}, {4096, 0}, {4096, 8}};
    uint8_t cur = 0;
    for (uint8_t f = 0; f < 4; f++) {
      const uint32_t lbads = kFormats[f][0] == 512 ? 9 : 12;
      put(128 + 4 * f, uint32_t(kFormats[f][1]) | lbads << 16, 4);   // LBAF: MS 15:0, LBADS 23:16
      if (kFormats[f][0] == n.cfg.lba_data && kFormats[f][1] == n.cfg.lba_meta) cur = f;
    }
    d[26] = uint8_t(cur | (n.cfg.lba_meta ? 0x10 : 0));  // FLBAS: format index, bit 4 metadata at the end of the LBA
    d[27] = n.cfg.lba_meta ? 0x01 : 0;                   // MC: extended LBA supported
  } else {
    return status_field(SCT_GENERIC, SC_INVALID_FIELD, true);
  }
  uint16_t st = 0;
  if (!xfer(e, d, sizeof d, true, st)) return st;
  return 0;
}

std::vector<QueueState> Controller::queues() const {
  std::vector<QueueState> v;
  for (auto& [id, q] : sqs_) v.push_back(q);
  for (auto& [id, q] : cqs_) v.push_back(q);
  return v;
}

}  // namespace vl::nvme
