// The CM MAD codec: the MAD common header (IBA 13.4.2) and the CM messages of IBA 12.6 (REQ, MRA, REJ, REP, RTU,
// DREQ, DREP, SIDR_REQ, SIDR_REP), packed bit for bit as the kernel's include/rdma/ibta_vol1_c12.h lays them out
// (every field MSB first at a byte / bit offset of the message; multi-byte fields big-endian). One table per
// message names each field's place; encode and decode read the same table. No state: the state machine is cm.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vl/cm.h"

namespace vl::cm {

constexpr size_t kMadLen = 256;                 // IB_MGMT_MAD_SIZE
constexpr size_t kMadHdrLen = 24;               // struct ib_mad_hdr
constexpr size_t kCmDataLen = kMadLen - kMadHdrLen;   // 232 bytes of CM message
constexpr uint8_t kBaseVersion = 1;             // IB_MGMT_BASE_VERSION
constexpr uint8_t kClassCm = 0x07;              // IB_MGMT_CLASS_CM
constexpr uint8_t kCmClassVersion = 2;          // IB_CM_CLASS_VERSION
constexpr uint8_t kMethodSend = 0x03;           // IB_MGMT_METHOD_SEND: every CM message (IBA 12.6.1)
constexpr uint32_t kGsiQpn = 1;                 // QP1 (IBA 13.5.1)
constexpr uint32_t kGsiQkey = 0x80010000;       // IB_QP1_QKEY
constexpr uint16_t kDefaultPkey = 0xFFFF;

// The fields of every CM message (a message's table says which it carries and where)
enum Field : uint8_t {
  F_LOCAL_COMM_ID, F_REMOTE_COMM_ID, F_VENDOR_ID, F_SERVICE_ID, F_LOCAL_CA_GUID, F_LOCAL_QKEY, F_LOCAL_QPN,
  F_RESPONDER_RESOURCES, F_LOCAL_EECN, F_INITIATOR_DEPTH, F_REMOTE_EECN, F_REMOTE_CM_RESPONSE_TIMEOUT,
  F_TRANSPORT_SERVICE_TYPE, F_END_TO_END_FLOW_CONTROL, F_STARTING_PSN, F_LOCAL_CM_RESPONSE_TIMEOUT, F_RETRY_COUNT,
  F_PARTITION_KEY, F_PATH_MTU, F_RDC_EXISTS, F_RNR_RETRY_COUNT, F_MAX_CM_RETRIES, F_SRQ, F_EXT_TRANSPORT_TYPE,
  F_PRI_LOCAL_LID, F_PRI_REMOTE_LID, F_PRI_FLOW_LABEL, F_PRI_PACKET_RATE, F_PRI_TRAFFIC_CLASS, F_PRI_HOP_LIMIT,
  F_PRI_SL, F_PRI_SUBNET_LOCAL, F_PRI_LOCAL_ACK_TIMEOUT, F_ALT_LOCAL_LID, F_ALT_REMOTE_LID, F_ALT_FLOW_LABEL,
  F_ALT_PACKET_RATE, F_ALT_TRAFFIC_CLASS, F_ALT_HOP_LIMIT, F_ALT_SL, F_ALT_SUBNET_LOCAL, F_ALT_LOCAL_ACK_TIMEOUT,
  F_SAP_SUPPORTED, F_MESSAGE_MRAED, F_SERVICE_TIMEOUT, F_MESSAGE_REJECTED, F_REJ_INFO_LENGTH, F_REASON,
  F_TARGET_ACK_DELAY, F_FAILOVER_ACCEPTED, F_REMOTE_QPN_EECN, F_REQUEST_ID, F_SIDR_STATUS, F_ADD_INFO_LENGTH,
  F_SIDR_QPN, F_SIDR_QKEY, F_COUNT
};
extern const char* const kFieldNames[F_COUNT];   // the kernel's CM_*_ names without the message prefix

// MAD common header (IBA 13.4.2, struct ib_mad_hdr)
struct MadHdr {
  uint8_t base_version = kBaseVersion, mgmt_class = kClassCm, class_version = kCmClassVersion, method = kMethodSend;
  uint16_t status = 0, class_specific = 0;
  uint64_t tid = 0;
  uint16_t attr_id = 0;
  uint32_t attr_mod = 0;
};

// One CM message, decoded: every field of its table, its GIDs, its ARI / additional information and its whole
// private-data area (fixed size per message: REQ 92, MRA 222, REJ 148, REP 196, RTU 224, DREQ 220, DREP 224,
// SIDR_REQ 216, SIDR_REP 136 bytes).
struct Msg {
  MadHdr hdr;
  uint64_t f[F_COUNT] = {};
  uint8_t pri_local_gid[16] = {}, pri_remote_gid[16] = {};
  uint8_t info[72] = {};                         // REJ ARI / SIDR REP additional information
  uint8_t pdata[224] = {};
  uint64_t get(Field x) const { return f[x]; }
  // private data from off on, at most what the message holds past off (an empty vector copies nothing)
  void put_pdata(const std::vector<uint8_t>& v, size_t off = 0);
  Msg& set(Field x, uint64_t v) { f[x] = v; return *this; }
};

struct FieldLoc { Field f; uint16_t byte; uint8_t bit, width; };   // ibta_vol1_c12.h: CM_FIELD*_LOC(struct, byte, ..)
struct Layout {
  uint16_t attr;
  const char* name;                              // "REQ", ...
  const FieldLoc* fields; size_t nfields;
  uint16_t pdata_off, pdata_len;                 // private data (bytes, from the start of the CM message)
  uint16_t gid_off;                              // REQ: primary local GID (remote GID 16 bytes after); 0 = none
  uint16_t info_off;                             // REJ ARI / SIDR REP additional information; 0 = none
};
const Layout* layout(uint16_t attr);             // nullptr: not a CM message this device decodes
const char* attr_name(uint16_t attr);            // "REQ" ... or "attr 0x...."
size_t pdata_len(uint16_t attr);

// Bits of a big-endian bit string, MSB first (IBA 12.6 field packing)
uint64_t get_bits(const uint8_t* b, unsigned bitpos, unsigned width);
void put_bits(uint8_t* b, unsigned bitpos, unsigned width, uint64_t v);

void encode_hdr(const MadHdr& h, uint8_t out[kMadHdrLen]);
void decode_hdr(const uint8_t in[kMadHdrLen], MadHdr& h);
// m.hdr.attr_id selects the layout; out is the full 256-byte MAD. False for an attribute without a layout.
bool encode(const Msg& m, uint8_t out[kMadLen]);
// Checks what every CM agent checks before the state machine sees a MAD (ib_mad.c / cm.c): 256 bytes, base version
// 1, class CM, class version 2, method SEND, an attribute with a layout. why says which check failed.
bool decode(const uint8_t* in, size_t len, Msg& m, std::string* why);

// Text of a message for events / logs: "REQ comm 0x29a5ee4a service 0x1061144 QPN 0x11 PSN 0xe60b1b"
std::string summary(const Msg& m);

}  // namespace vl::cm
