// Opcode table (docs/wire.md 1.3), AETH syndrome text and the RNR timer table (docs/wire.md 1.5).
#include <array>
#include <cstdio>

#include "vl/wire.h"

namespace vl::wire {
namespace {

struct OpInfo {
  uint32_t mask;
  const char* name;
};

// The 5-bit operation, shared by RC and UC (UC keeps only the SEND and WRITE ones).
constexpr uint32_t kSendPay = H_PAYLOAD | H_REQ | H_SEND, kWritePay = H_PAYLOAD | H_REQ | H_WRITE;
constexpr std::array<OpInfo, 32> kRcOps = {{
    /*0x00*/ {kSendPay | H_FIRST, "Send First"},
    /*0x01*/ {kSendPay | H_MIDDLE, "Send Middle"},
    /*0x02*/ {kSendPay | H_LAST, "Send Last"},
    /*0x03*/ {kSendPay | H_LAST | H_IMMDT, "Send Last Immediate"},
    /*0x04*/ {kSendPay | H_ONLY, "Send Only"},
    /*0x05*/ {kSendPay | H_ONLY | H_IMMDT, "Send Only Immediate"},
    /*0x06*/ {kWritePay | H_FIRST | H_RETH, "RDMA Write First"},
    /*0x07*/ {kWritePay | H_MIDDLE, "RDMA Write Middle"},
    /*0x08*/ {kWritePay | H_LAST, "RDMA Write Last"},
    /*0x09*/ {kWritePay | H_LAST | H_IMMDT, "RDMA Write Last Immediate"},
    /*0x0A*/ {kWritePay | H_ONLY | H_RETH, "RDMA Write Only"},
    /*0x0B*/ {kWritePay | H_ONLY | H_RETH | H_IMMDT, "RDMA Write Only Immediate"},
    /*0x0C*/ {H_REQ | H_READ | H_ONLY | H_RETH, "RDMA Read Request"},
    /*0x0D*/ {H_RESP | H_READ | H_PAYLOAD | H_FIRST | H_AETH, "RDMA Read Response First"},
    /*0x0E*/ {H_RESP | H_READ | H_PAYLOAD | H_MIDDLE, "RDMA Read Response Middle"},
    /*0x0F*/ {H_RESP | H_READ | H_PAYLOAD | H_LAST | H_AETH, "RDMA Read Response Last"},
    /*0x10*/ {H_RESP | H_READ | H_PAYLOAD | H_ONLY | H_AETH, "RDMA Read Response Only"},
    /*0x11*/ {H_RESP | H_ONLY | H_AETH, "Acknowledge"},
    /*0x12*/ {H_RESP | H_ATOMIC | H_ONLY | H_AETH | H_ATOMICACKETH, "Atomic Acknowledge"},
    /*0x13*/ {H_REQ | H_ATOMIC | H_ONLY | H_ATOMICETH, "Compare Swap"},
    /*0x14*/ {H_REQ | H_ATOMIC | H_ONLY | H_ATOMICETH, "Fetch Add"},
    /*0x15*/ {0, nullptr},
    /*0x16*/ {kSendPay | H_LAST | H_IETH, "Send Last Invalidate"},
    /*0x17*/ {kSendPay | H_ONLY | H_IETH, "Send Only Invalidate"},
}};

constexpr OpInfo info(uint8_t op) {
  const uint8_t transport = op >> 5, operation = op & 0x1F;
  switch (transport) {
    case 0:  // RC
      return kRcOps[operation];
    case 1:  // UC: SEND and RDMA WRITE only
      if (operation <= 0x0B) return kRcOps[operation];
      return {0, nullptr};
    case 3:  // UD: SEND ONLY [with immediate], with a DETH
      if (operation == 0x04 || operation == 0x05) return {kRcOps[operation].mask | H_DETH, kRcOps[operation].name};
      return {0, nullptr};
    default:
      return {0, nullptr};
  }
}

constexpr size_t hdr_len_of(uint32_t m) {
  if (!m) return 0;
  size_t n = 12;
  if (m & H_RETH) n += 16;
  if (m & H_AETH) n += 4;
  if (m & H_ATOMICETH) n += 28;
  if (m & H_ATOMICACKETH) n += 8;
  if (m & H_IMMDT) n += 4;
  if (m & H_IETH) n += 4;
  if (m & H_DETH) n += 8;
  return n;
}

// per-packet lookups: flat 256-entry tables built at compile time
constexpr std::array<uint32_t, 256> kMask = [] {
  std::array<uint32_t, 256> t{};
  for (int op = 0; op < 256; op++) t[op] = info(uint8_t(op)).mask;
  return t;
}();
constexpr std::array<uint8_t, 256> kHdrLen = [] {
  std::array<uint8_t, 256> t{};
  for (int op = 0; op < 256; op++) t[op] = uint8_t(hdr_len_of(kMask[op]));
  return t;
}();

}  // namespace

uint32_t opcode_mask(uint8_t opcode) { return kMask[opcode]; }

const char* opcode_name(uint8_t opcode) {
  // Built once: "<transport> <operation>" for every known opcode, as in Wireshark's Info column.
  static const std::array<std::string, 256> names = [] {
    std::array<std::string, 256> n;
    static const char* const kTransport[8] = {"RC", "UC", "RD", "UD", "CNP", "XRC", "Reserved", "Manufacturer"};
    for (int op = 0; op < 256; op++) {
      OpInfo i = info(uint8_t(op));
      n[op] = i.name ? std::string(kTransport[op >> 5]) + " " + i.name : "Unknown opcode";
    }
    return n;
  }();
  return names[opcode].c_str();
}

size_t header_len(uint8_t opcode) { return kHdrLen[opcode]; }

double rnr_timer_ms(uint8_t code) {
  static constexpr double kMs[32] = {655.36, 0.01,  0.02,  0.03,  0.04,  0.06,  0.08,   0.12,   0.16,  0.24, 0.32,
                                     0.48,   0.64,  0.96,  1.28,  1.92,  2.56,  3.84,   5.12,   7.68,  10.24, 15.36,
                                     20.48,  30.72, 40.96, 61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52};
  return kMs[code & 0x1F];
}

std::string syndrome_text(uint8_t syndrome) {
  static constexpr uint32_t kCredits[31] = {0,    1,    2,    3,    4,     6,     8,     12,    16,   24,  32,
                                            48,   64,   96,   128,  192,   256,   384,   512,   768,  1024, 1536,
                                            2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768};
  static const char* const kNak[] = {"PSN Sequence Error", "Invalid Request", "Remote Access Error",
                                     "Remote Operational Error", "Invalid RD Request"};
  const uint8_t low = syndrome & 0x1F;
  char buf[80];
  if (syndrome & 0x80) {
    std::snprintf(buf, sizeof buf, "Reserved syndrome 0x%02X", syndrome);
    return buf;
  }
  switch ((syndrome >> 5) & 3) {
    case AETH_ACK:
      if (low == kAckCreditsInvalid) return "ACK credits=invalid";
      std::snprintf(buf, sizeof buf, "ACK credits=%u", kCredits[low]);
      return buf;
    case AETH_RNR_NAK:
      std::snprintf(buf, sizeof buf, "RNR NAK timer %.2f ms", rnr_timer_ms(low));
      return buf;
    case AETH_NAK:
      if (low <= NAK_REMOTE_OP_ERROR + 1) return std::string("NAK ") + kNak[low];
      std::snprintf(buf, sizeof buf, "NAK reserved code %u", low);
      return buf;
    default:
      std::snprintf(buf, sizeof buf, "Reserved syndrome 0x%02X", syndrome);
      return buf;
  }
}

}  // namespace vl::wire
