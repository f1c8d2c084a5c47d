// NVMe over RDMA capsules, the C++ decoder (the TypeScript one: app/protocol/decoders/nvme-rdma.ts; the two must give
// the same summary and fields, app/protocol/decoders-native.test.ts). NVMe-oF RDMA transport binding; NVMe base spec
// for the SQE / CQE layout. A command capsule is a 64-byte SQE (and in-capsule data) sent as a SEND; a response
// capsule is a 16-byte CQE. Claimed without being told: the first packet of a SEND of at least 64 bytes that says
// SGL (PSDT 01b), has an SGL1 the RDMA transport allows and an opcode of the admin, NVM or Fabrics sets. A CQE is
// decoded only when the caller says the connection is NVMe/RDMA (protocol "nvme-rdma..."); "nvme-rdma/admin" and
// "nvme-rdma/io" name the queue (admin and NVM opcodes share values).
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>

#include "vl/decoders.h"
#include "vl/wire.h"

namespace vl::decode {

namespace {

// NVMe base spec "Opcodes for Admin Commands" / NVM command set "Opcodes for NVM Commands"
const std::map<uint8_t, const char*> kAdmin = {
    {0x00, "Delete I/O Submission Queue"}, {0x01, "Create I/O Submission Queue"}, {0x02, "Get Log Page"},
    {0x04, "Delete I/O Completion Queue"}, {0x05, "Create I/O Completion Queue"}, {0x06, "Identify"}, {0x08, "Abort"},
    {0x09, "Set Features"}, {0x0a, "Get Features"}, {0x0c, "Asynchronous Event Request"}, {0x0d, "Namespace Management"},
    {0x10, "Firmware Commit"}, {0x11, "Firmware Image Download"}, {0x14, "Device Self-test"}, {0x15, "Namespace Attachment"},
    {0x18, "Keep Alive"}, {0x19, "Directive Send"}, {0x1a, "Directive Receive"}, {0x80, "Format NVM"}, {0x81, "Security Send"},
    {0x82, "Security Receive"}, {0x84, "Sanitize"},
};
const std::map<uint8_t, const char*> kNvm = {
    {0x00, "Flush"}, {0x01, "Write"}, {0x02, "Read"}, {0x04, "Write Uncorrectable"}, {0x05, "Compare"}, {0x08, "Write Zeroes"},
    {0x09, "Dataset Management"}, {0x0c, "Verify"}, {0x0d, "Reservation Register"}, {0x0e, "Reservation Report"},
    {0x11, "Reservation Acquire"}, {0x15, "Reservation Release"}, {0x19, "Copy"},
};
// NVMe-oF "Fabrics Command Type"
const std::map<uint8_t, const char*> kFctype = {
    {0x00, "Property Set"}, {0x01, "Connect"}, {0x04, "Property Get"}, {0x05, "Authentication Send"},
    {0x06, "Authentication Receive"}, {0x08, "Disconnect"},
};
const std::map<uint8_t, const char*> kSglType = {
    {0x0, "Data Block"}, {0x1, "Bit Bucket"}, {0x2, "Segment"}, {0x3, "Last Segment"}, {0x4, "Keyed Data Block"},
    {0x5, "Transport SGL Data Block"},
};
constexpr uint8_t kFabrics = 0x7f;
// over fabrics, I/O queues are created by Connect: the admin queue-management opcodes are not used there
bool not_on_fabrics(uint8_t o) { return o == 0x00 || o == 0x01 || o == 0x04 || o == 0x05; }
// NVM commands whose CDW10-12 are SLBA and NLB
bool lba_range(uint8_t o) { return o == 0x01 || o == 0x02 || o == 0x04 || o == 0x05 || o == 0x08 || o == 0x0c; }

const char* find(const std::map<uint8_t, const char*>& m, uint8_t k) {
  auto it = m.find(k);
  return it == m.end() ? nullptr : it->second;
}
uint16_t le16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t le32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }
uint64_t le64(const uint8_t* p) { return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32; }
std::string hex(uint64_t v, int w = 0) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%0*" PRIx64, w, v);
  return b;
}
std::string num(uint64_t v) { return std::to_string(v); }
const char* boolean(bool b) { return b ? "true" : "false"; }

void add(Decoded& d, std::string name, std::string value) { d.fields.push_back({std::move(name), std::move(value)}); }

// SGL1 (SQE bytes 24-39) as the RDMA transport uses it; false when the transport does not allow it
bool sgl1(const uint8_t* sqe, std::vector<Field>& out) {
  const uint8_t id = sqe[39], type = id >> 4, subtype = id & 0xf;
  const bool keyed = type == 0x4;
  if (keyed ? !(subtype == 0x0 || subtype == 0xf) : !((type == 0x0 || type == 0x3) && subtype == 0x1)) return false;
  out.push_back({"sgl1.identifier", hex(id, 2)});
  out.push_back({"sgl1.type", hex(type) + " " + find(kSglType, type)});
  out.push_back({"sgl1.subtype", hex(subtype) + " " + (keyed ? (subtype == 0 ? "Address" : "Invalidate Key") : "Offset")});
  out.push_back({"sgl1.address", hex(le64(sqe + 24), 16)});
  if (keyed) {
    out.push_back({"sgl1.length", num(uint32_t(sqe[32]) | uint32_t(sqe[33]) << 8 | uint32_t(sqe[34]) << 16)});
    out.push_back({"sgl1.key", hex(le32(sqe + 35), 8)});
  } else {
    out.push_back({"sgl1.length", num(le32(sqe + 32))});
  }
  return true;
}

// the name(s) of a non-Fabrics opcode; empty when neither command set has it
std::string opcode_name(uint8_t opc, std::string_view queue) {
  const char* admin = not_on_fabrics(opc) ? nullptr : find(kAdmin, opc);
  const char* nvm = find(kNvm, opc);
  if (queue == "admin") return admin ? admin : "";
  if (queue == "io") return nvm ? nvm : "";
  if (admin && nvm) return std::string(nvm) + " (I/O queue) | " + admin + " (admin queue)";
  return admin ? admin : nvm ? nvm : "";
}

bool decode_sqe(const uint8_t* sqe, std::string_view queue, Decoded& d) {
  const uint8_t opc = sqe[0], flags = sqe[1];
  const unsigned psdt = flags >> 6, fuse = flags & 3;
  if (psdt != 1 || fuse == 3) return false;        // NVMe-oF: SGL for data (PSDT 01b); FUSE 11b is reserved
  std::vector<Field> sgl;
  if (!sgl1(sqe, sgl)) return false;
  const uint16_t cid = le16(sqe + 2);
  add(d, "opcode", hex(opc, 2)); add(d, "cid", num(cid)); add(d, "fuse", num(fuse)); add(d, "psdt", num(psdt));
  if (opc == kFabrics) {
    const uint8_t fctype = sqe[4];
    const char* name = find(kFctype, fctype);
    if (!name) return false;
    add(d, "opcodeName", "Fabrics"); add(d, "fctype", hex(fctype, 2) + " " + name);
    d.fields.insert(d.fields.end(), sgl.begin(), sgl.end());
    std::string detail;
    if (fctype == 0x01) {                          // Connect: RECFMT, QID, SQSIZE (0's based), CATTR, KATO
      const uint16_t qid = le16(sqe + 42), sqsize = le16(sqe + 44);
      add(d, "recfmt", num(le16(sqe + 40))); add(d, "qid", num(qid)); add(d, "sqsize", num(sqsize));
      add(d, "sqEntries", num(sqsize + 1u)); add(d, "cattr", hex(sqe[46], 2)); add(d, "katoMs", num(le32(sqe + 48)));
      detail = " QID " + num(qid) + (qid == 0 ? " (admin)" : "") + " SQSIZE " + num(sqsize + 1u);
    } else if (fctype == 0x00 || fctype == 0x04) { // Property Set / Get: ATTRIB (size), OFST, VALUE
      const unsigned size = (sqe[40] & 7) == 1 ? 8 : 4;
      const std::string ofst = hex(le32(sqe + 44), 2);
      add(d, "attribSize", num(size)); add(d, "offset", ofst);
      if (fctype == 0x00) add(d, "value", hex(size == 8 ? le64(sqe + 48) : le32(sqe + 48)));
      detail = " OFST " + ofst;
    }
    d.summary = std::string("NVMe-oF ") + name + " CID " + num(cid) + detail;
    return true;
  }
  const std::string name = opcode_name(opc, queue);
  if (name.empty()) return false;
  const uint32_t nsid = le32(sqe + 4);
  add(d, "opcodeName", name); add(d, "nsid", num(nsid));
  d.fields.insert(d.fields.end(), sgl.begin(), sgl.end());
  std::string detail;
  if (queue != "admin" && lba_range(opc)) {        // SLBA = CDW10 | CDW11 << 32; CDW12: NLB (0's based), FUA, LR
    const uint64_t slba = le64(sqe + 40);
    const uint32_t cdw12 = le32(sqe + 48);
    const uint32_t nlb = (cdw12 & 0xffff) + 1;
    const std::string s = slba <= 9007199254740991ull ? num(slba) : hex(slba);
    const bool ambiguous = name.find('|') != std::string::npos;   // its I/O reading as a sub-record, named so
    const std::string pre = ambiguous ? "ifIo." : "";
    add(d, pre + "slba", s); add(d, pre + "nlb", num(nlb));
    add(d, pre + "fua", boolean(cdw12 & (1u << 30))); add(d, pre + "lr", boolean(cdw12 >> 31));
    if (!ambiguous) detail = " SLBA " + s + " NLB " + num(nlb);
  }
  d.summary = "NVMe " + name + " CID " + num(cid) + " NSID " + num(nsid) + detail;
  return true;
}

bool decode_cqe(const uint8_t* c, Decoded& d) {
  const uint16_t cid = le16(c + 12), status = le16(c + 14);
  const unsigned sc = (status >> 1) & 0xff, sct = (status >> 9) & 7;
  const bool dnr = status & (1u << 15);
  add(d, "dw0", hex(le32(c), 8)); add(d, "dw1", hex(le32(c + 4), 8)); add(d, "sqhd", num(le16(c + 8)));
  add(d, "sqid", num(le16(c + 10))); add(d, "cid", num(cid)); add(d, "status", hex(status, 4)); add(d, "phase", num(status & 1u));
  add(d, "sc", hex(sc, 2)); add(d, "sct", num(sct)); add(d, "crd", num((status >> 12) & 3u)); add(d, "more", boolean(status & (1u << 14)));
  add(d, "dnr", boolean(dnr));
  const std::string verdict = sc == 0 && sct == 0 ? "success" : "SCT " + num(sct) + " SC " + hex(sc, 2) + (dnr ? " DNR" : "");
  d.summary = "NVMe CQE CID " + num(cid) + " SQHD " + num(le16(c + 8)) + " " + verdict;
  return true;
}

// opcodes whose payload begins a SEND message (app/protocol/bth.ts startsSend)
bool starts_send(uint8_t op) {
  using namespace wire;
  switch (op) {
    case RC_SEND_FIRST: case RC_SEND_ONLY: case RC_SEND_ONLY_WITH_IMMEDIATE: case RC_SEND_ONLY_WITH_INVALIDATE:
    case UC_BASE | RC_SEND_FIRST: case UC_BASE | RC_SEND_ONLY: case UC_BASE | RC_SEND_ONLY_WITH_IMMEDIATE:
    case UD_SEND_ONLY: case UD_SEND_ONLY_WITH_IMMEDIATE:
      return true;
  }
  return false;
}

}  // namespace

bool decode_nvme_rdma(const Input& in, Decoded& out) {
  if (!starts_send(in.opcode)) return false;
  const bool told = in.protocol.substr(0, 9) == "nvme-rdma";
  const std::string_view queue = in.protocol == "nvme-rdma/admin" ? "admin" : in.protocol == "nvme-rdma/io" ? "io" : "";
  if (in.len >= 64) {
    Decoded d;
    if (decode_sqe(in.payload, queue, d)) {
      if (in.len > 64) add(d, "inCapsuleBytes", num(in.len - 64));
      out = std::move(d);
      return true;
    }
  }
  if (told && in.len == 16) return decode_cqe(in.payload, out);
  return false;
}

}  // namespace vl::decode
