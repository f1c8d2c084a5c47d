// The CM MAD codec (mad.h): field tables of IBA 12.6 Tables 106-120 at the offsets of the kernel's
// include/rdma/ibta_vol1_c12.h (CM_FIELD*_LOC byte / bit / width; offsets from the start of the CM message, after
// the 24-byte MAD header).
#include "cm/mad.h"

#include <cstdio>
#include <cstring>

namespace vl::cm {

const char* const kFieldNames[F_COUNT] = {
  "LOCAL_COMM_ID", "REMOTE_COMM_ID", "VENDOR_ID", "SERVICE_ID", "LOCAL_CA_GUID", "LOCAL_Q_KEY", "LOCAL_QPN",
  "RESPONDER_RESOURCES", "LOCAL_EECN", "INITIATOR_DEPTH", "REMOTE_EECN", "REMOTE_CM_RESPONSE_TIMEOUT",
  "TRANSPORT_SERVICE_TYPE", "END_TO_END_FLOW_CONTROL", "STARTING_PSN", "LOCAL_CM_RESPONSE_TIMEOUT", "RETRY_COUNT",
  "PARTITION_KEY", "PATH_PACKET_PAYLOAD_MTU", "RDC_EXISTS", "RNR_RETRY_COUNT", "MAX_CM_RETRIES", "SRQ",
  "EXTENDED_TRANSPORT_TYPE", "PRIMARY_LOCAL_PORT_LID", "PRIMARY_REMOTE_PORT_LID", "PRIMARY_FLOW_LABEL",
  "PRIMARY_PACKET_RATE", "PRIMARY_TRAFFIC_CLASS", "PRIMARY_HOP_LIMIT", "PRIMARY_SL", "PRIMARY_SUBNET_LOCAL",
  "PRIMARY_LOCAL_ACK_TIMEOUT", "ALTERNATE_LOCAL_PORT_LID", "ALTERNATE_REMOTE_PORT_LID", "ALTERNATE_FLOW_LABEL",
  "ALTERNATE_PACKET_RATE", "ALTERNATE_TRAFFIC_CLASS", "ALTERNATE_HOP_LIMIT", "ALTERNATE_SL",
  "ALTERNATE_SUBNET_LOCAL", "ALTERNATE_LOCAL_ACK_TIMEOUT", "SAP_SUPPORTED", "MESSAGE_MRAED", "SERVICE_TIMEOUT",
  "MESSAGE_REJECTED", "REJECTED_INFO_LENGTH", "REASON", "TARGET_ACK_DELAY", "FAILOVER_ACCEPTED",
  "REMOTE_QPN_EECN", "REQUESTID", "STATUS", "ADDITIONAL_INFORMATION_LENGTH", "QPN", "Q_KEY",
};

namespace {
// Table 106 REQ Message Contents
constexpr FieldLoc kReq[] = {
  {F_LOCAL_COMM_ID, 0, 0, 32}, {F_VENDOR_ID, 5, 0, 24}, {F_SERVICE_ID, 8, 0, 64}, {F_LOCAL_CA_GUID, 16, 0, 64},
  {F_LOCAL_QKEY, 28, 0, 32}, {F_LOCAL_QPN, 32, 0, 24}, {F_RESPONDER_RESOURCES, 35, 0, 8}, {F_LOCAL_EECN, 36, 0, 24},
  {F_INITIATOR_DEPTH, 39, 0, 8}, {F_REMOTE_EECN, 40, 0, 24}, {F_REMOTE_CM_RESPONSE_TIMEOUT, 43, 0, 5},
  {F_TRANSPORT_SERVICE_TYPE, 43, 5, 2}, {F_END_TO_END_FLOW_CONTROL, 43, 7, 1}, {F_STARTING_PSN, 44, 0, 24},
  {F_LOCAL_CM_RESPONSE_TIMEOUT, 47, 0, 5}, {F_RETRY_COUNT, 47, 5, 3}, {F_PARTITION_KEY, 48, 0, 16},
  {F_PATH_MTU, 50, 0, 4}, {F_RDC_EXISTS, 50, 4, 1}, {F_RNR_RETRY_COUNT, 50, 5, 3}, {F_MAX_CM_RETRIES, 51, 0, 4},
  {F_SRQ, 51, 4, 1}, {F_EXT_TRANSPORT_TYPE, 51, 5, 3}, {F_PRI_LOCAL_LID, 52, 0, 16}, {F_PRI_REMOTE_LID, 54, 0, 16},
  {F_PRI_FLOW_LABEL, 88, 0, 20}, {F_PRI_PACKET_RATE, 91, 2, 6}, {F_PRI_TRAFFIC_CLASS, 92, 0, 8},
  {F_PRI_HOP_LIMIT, 93, 0, 8}, {F_PRI_SL, 94, 0, 4}, {F_PRI_SUBNET_LOCAL, 94, 4, 1},
  {F_PRI_LOCAL_ACK_TIMEOUT, 95, 0, 5}, {F_ALT_LOCAL_LID, 96, 0, 16}, {F_ALT_REMOTE_LID, 98, 0, 16},
  {F_ALT_FLOW_LABEL, 132, 0, 20}, {F_ALT_PACKET_RATE, 135, 2, 6}, {F_ALT_TRAFFIC_CLASS, 136, 0, 8},
  {F_ALT_HOP_LIMIT, 137, 0, 8}, {F_ALT_SL, 138, 0, 4}, {F_ALT_SUBNET_LOCAL, 138, 4, 1},
  {F_ALT_LOCAL_ACK_TIMEOUT, 139, 0, 5}, {F_SAP_SUPPORTED, 139, 5, 1},
};
// Table 107 MRA
constexpr FieldLoc kMra[] = {
  {F_LOCAL_COMM_ID, 0, 0, 32}, {F_REMOTE_COMM_ID, 4, 0, 32}, {F_MESSAGE_MRAED, 8, 0, 2}, {F_SERVICE_TIMEOUT, 9, 0, 5},
};
// Table 108 REJ
constexpr FieldLoc kRej[] = {
  {F_LOCAL_COMM_ID, 0, 0, 32}, {F_REMOTE_COMM_ID, 4, 0, 32}, {F_MESSAGE_REJECTED, 8, 0, 2},
  {F_REJ_INFO_LENGTH, 9, 0, 7}, {F_REASON, 10, 0, 16},
};
// Table 110 REP
constexpr FieldLoc kRep[] = {
  {F_LOCAL_COMM_ID, 0, 0, 32}, {F_REMOTE_COMM_ID, 4, 0, 32}, {F_LOCAL_QKEY, 8, 0, 32}, {F_LOCAL_QPN, 12, 0, 24},
  {F_LOCAL_EECN, 16, 0, 24}, {F_STARTING_PSN, 20, 0, 24}, {F_RESPONDER_RESOURCES, 24, 0, 8},
  {F_INITIATOR_DEPTH, 25, 0, 8}, {F_TARGET_ACK_DELAY, 26, 0, 5}, {F_FAILOVER_ACCEPTED, 26, 5, 2},
  {F_END_TO_END_FLOW_CONTROL, 26, 7, 1}, {F_RNR_RETRY_COUNT, 27, 0, 3}, {F_SRQ, 27, 3, 1},
  {F_LOCAL_CA_GUID, 28, 0, 64},
};
// Tables 111, 113, 114: RTU, DREQ, DREP
constexpr FieldLoc kRtu[] = {{F_LOCAL_COMM_ID, 0, 0, 32}, {F_REMOTE_COMM_ID, 4, 0, 32}};
constexpr FieldLoc kDreq[] = {{F_LOCAL_COMM_ID, 0, 0, 32}, {F_REMOTE_COMM_ID, 4, 0, 32}, {F_REMOTE_QPN_EECN, 8, 0, 24}};
// Tables 119, 120: SIDR_REQ, SIDR_REP
constexpr FieldLoc kSidrReq[] = {{F_REQUEST_ID, 0, 0, 32}, {F_PARTITION_KEY, 4, 0, 16}, {F_SERVICE_ID, 8, 0, 64}};
constexpr FieldLoc kSidrRep[] = {
  {F_REQUEST_ID, 0, 0, 32}, {F_SIDR_STATUS, 4, 0, 8}, {F_ADD_INFO_LENGTH, 5, 0, 8}, {F_SIDR_QPN, 8, 0, 24},
  {F_SERVICE_ID, 12, 0, 64}, {F_SIDR_QKEY, 20, 0, 32},
};
#define VL_N(t) t, sizeof(t) / sizeof(t[0])
constexpr Layout kLayouts[] = {
  {CM_ATTR_REQ, "REQ", VL_N(kReq), 140, 92, 56, 0},
  {CM_ATTR_MRA, "MRA", VL_N(kMra), 10, 222, 0, 0},
  {CM_ATTR_REJ, "REJ", VL_N(kRej), 84, 148, 0, 12},
  {CM_ATTR_REP, "REP", VL_N(kRep), 36, 196, 0, 0},
  {CM_ATTR_RTU, "RTU", VL_N(kRtu), 8, 224, 0, 0},
  {CM_ATTR_DREQ, "DREQ", VL_N(kDreq), 12, 220, 0, 0},
  {CM_ATTR_DREP, "DREP", VL_N(kRtu), 8, 224, 0, 0},
  {CM_ATTR_SIDR_REQ, "SIDR_REQ", VL_N(kSidrReq), 16, 216, 0, 0},
  {CM_ATTR_SIDR_REP, "SIDR_REP", VL_N(kSidrRep), 96, 136, 0, 24},
};
#undef VL_N

uint64_t be(const uint8_t* p, int n) { uint64_t v = 0; for (int i = 0; i < n; i++) v = (v << 8) | p[i]; return v; }
void put_be(uint8_t* p, int n, uint64_t v) { for (int i = n - 1; i >= 0; i--) { p[i] = uint8_t(v); v >>= 8; } }
}  // namespace

const Layout* layout(uint16_t attr) {
  for (const Layout& l : kLayouts) if (l.attr == attr) return &l;
  return nullptr;
}

const char* attr_name(uint16_t attr) {
  if (const Layout* l = layout(attr)) return l->name;
  if (attr == CM_ATTR_LAP) return "LAP";
  if (attr == CM_ATTR_APR) return "APR";
  return "unknown attribute";
}

void Msg::put_pdata(const std::vector<uint8_t>& v, size_t off) {
  const size_t room = pdata_len(hdr.attr_id) > off ? pdata_len(hdr.attr_id) - off : 0;
  if (!v.empty() && room) std::memcpy(pdata + off, v.data(), v.size() < room ? v.size() : room);
}

size_t pdata_len(uint16_t attr) { const Layout* l = layout(attr); return l ? l->pdata_len : 0; }

uint64_t get_bits(const uint8_t* b, unsigned pos, unsigned w) {
  uint64_t v = 0;
  for (unsigned i = 0; i < w; i++, pos++) v = (v << 1) | ((b[pos >> 3] >> (7 - (pos & 7))) & 1);
  return v;
}

void put_bits(uint8_t* b, unsigned pos, unsigned w, uint64_t v) {
  for (unsigned i = 0; i < w; i++) {
    const unsigned p = pos + i;
    const uint8_t bit = uint8_t(1u << (7 - (p & 7)));
    if ((v >> (w - 1 - i)) & 1) b[p >> 3] |= bit; else b[p >> 3] &= uint8_t(~bit);
  }
}

void encode_hdr(const MadHdr& h, uint8_t* o) {
  o[0] = h.base_version; o[1] = h.mgmt_class; o[2] = h.class_version; o[3] = h.method;
  put_be(o + 4, 2, h.status); put_be(o + 6, 2, h.class_specific); put_be(o + 8, 8, h.tid);
  put_be(o + 16, 2, h.attr_id); put_be(o + 18, 2, 0); put_be(o + 20, 4, h.attr_mod);
}

void decode_hdr(const uint8_t* in, MadHdr& h) {
  h.base_version = in[0]; h.mgmt_class = in[1]; h.class_version = in[2]; h.method = in[3];
  h.status = uint16_t(be(in + 4, 2)); h.class_specific = uint16_t(be(in + 6, 2)); h.tid = be(in + 8, 8);
  h.attr_id = uint16_t(be(in + 16, 2)); h.attr_mod = uint32_t(be(in + 20, 4));
}

bool encode(const Msg& m, uint8_t* out) {
  const Layout* l = layout(m.hdr.attr_id);
  if (!l) return false;
  std::memset(out, 0, kMadLen);
  encode_hdr(m.hdr, out);
  uint8_t* b = out + kMadHdrLen;
  for (size_t i = 0; i < l->nfields; i++) {
    const FieldLoc& x = l->fields[i];
    const uint64_t mask = x.width == 64 ? ~0ull : (1ull << x.width) - 1;
    put_bits(b, x.byte * 8u + x.bit, x.width, m.f[x.f] & mask);
  }
  if (l->gid_off) { std::memcpy(b + l->gid_off, m.pri_local_gid, 16); std::memcpy(b + l->gid_off + 16, m.pri_remote_gid, 16); }
  if (l->info_off) std::memcpy(b + l->info_off, m.info, 72);
  std::memcpy(b + l->pdata_off, m.pdata, l->pdata_len);
  return true;
}

bool decode(const uint8_t* in, size_t len, Msg& m, std::string* why) {
  auto no = [&](std::string w) { if (why) *why = std::move(w); return false; };
  if (len < kMadLen) return no("MAD of " + std::to_string(len) + " bytes (a CM MAD is 256)");
  m = Msg{};
  decode_hdr(in, m.hdr);
  if (m.hdr.base_version != kBaseVersion) return no("base version " + std::to_string(m.hdr.base_version) + " (not 1)");
  if (m.hdr.mgmt_class != kClassCm) return no("management class " + std::to_string(m.hdr.mgmt_class) + " (not CM 0x07)");
  if (m.hdr.class_version != kCmClassVersion) return no("CM class version " + std::to_string(m.hdr.class_version) + " (not 2)");
  if (m.hdr.method != kMethodSend) return no("method " + std::to_string(m.hdr.method) + " (CM messages are SEND 0x03)");
  const Layout* l = layout(m.hdr.attr_id);
  if (!l) return no(std::string("attribute ") + attr_name(m.hdr.attr_id));
  const uint8_t* b = in + kMadHdrLen;
  for (size_t i = 0; i < l->nfields; i++) {
    const FieldLoc& x = l->fields[i];
    m.f[x.f] = get_bits(b, x.byte * 8u + x.bit, x.width);
  }
  if (l->gid_off) { std::memcpy(m.pri_local_gid, b + l->gid_off, 16); std::memcpy(m.pri_remote_gid, b + l->gid_off + 16, 16); }
  if (l->info_off) std::memcpy(m.info, b + l->info_off, 72);
  std::memcpy(m.pdata, b + l->pdata_off, l->pdata_len);
  return true;
}

std::string summary(const Msg& m) {
  char t[160];
  const uint16_t a = m.hdr.attr_id;
  const char* n = attr_name(a);
  switch (a) {
    case CM_ATTR_REQ:
      std::snprintf(t, sizeof t, "%s comm 0x%x service 0x%llx QPN 0x%x PSN 0x%x", n, unsigned(m.f[F_LOCAL_COMM_ID]),
                    (unsigned long long)m.f[F_SERVICE_ID], unsigned(m.f[F_LOCAL_QPN]), unsigned(m.f[F_STARTING_PSN]));
      break;
    case CM_ATTR_REP:
      std::snprintf(t, sizeof t, "%s comm 0x%x -> 0x%x QPN 0x%x PSN 0x%x", n, unsigned(m.f[F_LOCAL_COMM_ID]),
                    unsigned(m.f[F_REMOTE_COMM_ID]), unsigned(m.f[F_LOCAL_QPN]), unsigned(m.f[F_STARTING_PSN]));
      break;
    case CM_ATTR_REJ:
      std::snprintf(t, sizeof t, "%s comm 0x%x -> 0x%x reason %u", n, unsigned(m.f[F_LOCAL_COMM_ID]),
                    unsigned(m.f[F_REMOTE_COMM_ID]), unsigned(m.f[F_REASON]));
      break;
    case CM_ATTR_SIDR_REQ: case CM_ATTR_SIDR_REP:
      std::snprintf(t, sizeof t, "%s request 0x%x service 0x%llx", n, unsigned(m.f[F_REQUEST_ID]),
                    (unsigned long long)m.f[F_SERVICE_ID]);
      break;
    default:
      std::snprintf(t, sizeof t, "%s comm 0x%x -> 0x%x", n, unsigned(m.f[F_LOCAL_COMM_ID]), unsigned(m.f[F_REMOTE_COMM_ID]));
  }
  return t;
}

}  // namespace vl::cm
