// The facts of each send work-request opcode in one table every stage reads (the model is rxe's
// rxe_wr_opcode_info[], drivers/infiniband/sw/rxe/rxe_opcode.c): the QP types that accept it (IBA vol. 1 §10.7.3.1
// table "work request operations by service type": RDMA READ and atomics are RC only, UD sends only), what it is
// (a read, an atomic) and the device capability it needs. Its name is rdma-core's, from vl/names.h kWrOpcodeNames
// (not repeated here). post_send (qp.cpp) validates against it.
#pragma once
#include <cstdint>

#include "vl/names.h"
#include "vl/types.h"

namespace vl {

enum WrQpTypes : uint8_t { WRQ_RC = 1u << 0, WRQ_UC = 1u << 1, WRQ_UD = 1u << 2 };
// what the opcode is (rxe's WR_READ_MASK, WR_WRITE_MASK, WR_SEND_MASK, WR_ATOMIC_MASK) and what it needs
enum WrFlags : uint16_t {
  WRF_READ = 1u << 0,      // the responder returns data (RDMA READ, READ with invalidate)
  WRF_ATOMIC = 1u << 1,    // an atomic; needs atomic_cap != IBV_ATOMIC_NONE
  WRF_MEM_MGT = 1u << 2,   // needs IBV_DEVICE_MEM_MGT_EXTENSIONS (BMME: invalidation, fast registration)
  WRF_MW = 1u << 3,        // needs IBV_DEVICE_MEM_WINDOW
  WRF_WRITE = 1u << 4,     // RDMA WRITE (a RETH on its first packet)
  WRF_SEND = 1u << 5,      // the SEND family (consumes a receive at the responder)
  WRF_IMM = 1u << 6,       // carries immediate data (consumes a receive at the responder)
};

struct WrOpInfo {
  uint32_t op;
  uint8_t qp_types;
  uint16_t flags;
};

inline constexpr WrOpInfo kWrOpInfo[] = {
    {WR_RDMA_WRITE, WRQ_RC | WRQ_UC, WRF_WRITE},
    {WR_RDMA_WRITE_WITH_IMM, WRQ_RC | WRQ_UC, WRF_WRITE | WRF_IMM},
    {WR_SEND, WRQ_RC | WRQ_UC | WRQ_UD, WRF_SEND},
    {WR_SEND_WITH_IMM, WRQ_RC | WRQ_UC | WRQ_UD, WRF_SEND | WRF_IMM},
    {WR_RDMA_READ, WRQ_RC, WRF_READ},
    {WR_ATOMIC_CMP_AND_SWP, WRQ_RC, WRF_ATOMIC},
    {WR_ATOMIC_FETCH_AND_ADD, WRQ_RC, WRF_ATOMIC},
    {WR_LOCAL_INV, WRQ_RC | WRQ_UC, WRF_MEM_MGT},
    {WR_BIND_MW, WRQ_RC | WRQ_UC, WRF_MW},
    {WR_SEND_WITH_INV, WRQ_RC | WRQ_UC, WRF_SEND | WRF_MEM_MGT},
    {WR_RDMA_READ_WITH_INV, WRQ_RC, WRF_READ},   // iWARP's; which profiles take it: Profile::read_with_inv
    {WR_REG_MR, WRQ_RC | WRQ_UC, WRF_MEM_MGT},
};

/** the row of an opcode, or nullptr for one the device does not know */
constexpr const WrOpInfo* wr_op_info(uint32_t op) {
  for (const auto& i : kWrOpInfo)
    if (i.op == op) return &i;
  return nullptr;
}
/** the QP-type bit of a QP type (0 for a type no send opcode is valid on) */
constexpr uint8_t wr_qp_type_bit(uint32_t qp_type) {
  return qp_type == QPT_RC ? WRQ_RC : qp_type == QPT_UC ? WRQ_UC : qp_type == QPT_UD ? WRQ_UD : 0;
}
constexpr uint16_t wr_flags(uint32_t op) {
  const WrOpInfo* i = wr_op_info(op);
  return i ? i->flags : 0;
}
constexpr bool wr_is_read(uint32_t op) { return wr_flags(op) & WRF_READ; }
constexpr bool wr_is_atomic(uint32_t op) { return wr_flags(op) & WRF_ATOMIC; }
/** holds a response the requester waits for (IBA 10.8.3.3: what a fence waits on; max_rd_atomic counts them) */
constexpr bool wr_is_read_or_atomic(uint32_t op) { return wr_flags(op) & (WRF_READ | WRF_ATOMIC); }
/** may set the solicited event bit: the operations that complete a receive at the responder (IBA 9.2.3: SEND and
 *  RDMA WRITE with immediate) */
constexpr bool wr_solicitable(uint32_t op) { const uint16_t f = wr_flags(op); return (f & WRF_SEND) || ((f & WRF_WRITE) && (f & WRF_IMM)); }

/** rdma-core's name of an opcode (kWrOpcodeNames) */
constexpr const char* wr_op_name(uint32_t op) {
  const char* n = name_of(kWrOpcodeNames, op);
  return n ? n : "unknown";
}

}  // namespace vl
