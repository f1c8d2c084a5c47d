// The facts of each send work-request opcode on the console's side, as the device's table has them
// (native/src/core/wr_info.h kWrOpInfo, after rxe's rxe_wr_opcode_info[]): the QP types that accept it (IBA vol. 1
// §10.7.3.1) and the fields of struct ibv_send_wr it uses (infiniband/verbs.h: the wr union — rdma, atomic, ud,
// bind_mw — plus imm_data / invalidate_rkey; the kernel's struct ib_reg_wr for IB_WR_REG_MR). The table test
// (tables.test.ts) compares the QP types with C++ row for row.
import type { WrOpcode } from './enums.ts';

export type WrField =
  | 'sg'          // sg_list (local buffers, by lkey)
  | 'remote'      // wr.rdma / wr.atomic: remote_addr, rkey
  | 'imm'         // imm_data
  | 'invalidate'  // invalidate_rkey (SEND_WITH_INV, LOCAL_INV)
  | 'atomic'      // wr.atomic: compare_add (and swap for CMP_AND_SWP)
  | 'swap'
  | 'bind'        // bind_mw: mw, rkey (the new one), bind_info { mr, addr, length, mw_access_flags }
  | 'reg';        // ib_reg_wr: mr, key, access
export type WrQpType = 'IBV_QPT_RC' | 'IBV_QPT_UC' | 'IBV_QPT_UD';

const RC_UC = ['IBV_QPT_RC', 'IBV_QPT_UC'] as const, RC = ['IBV_QPT_RC'] as const;
export const WR_OPS: Record<keyof typeof WrOpcode.values, { qpTypes: readonly WrQpType[]; fields: readonly WrField[] }> = {
  IBV_WR_RDMA_WRITE: { qpTypes: RC_UC, fields: ['sg', 'remote'] },
  IBV_WR_RDMA_WRITE_WITH_IMM: { qpTypes: RC_UC, fields: ['sg', 'remote', 'imm'] },
  IBV_WR_SEND: { qpTypes: [...RC_UC, 'IBV_QPT_UD'], fields: ['sg'] },
  IBV_WR_SEND_WITH_IMM: { qpTypes: [...RC_UC, 'IBV_QPT_UD'], fields: ['sg', 'imm'] },
  IBV_WR_RDMA_READ: { qpTypes: RC, fields: ['sg', 'remote'] },
  IBV_WR_ATOMIC_CMP_AND_SWP: { qpTypes: RC, fields: ['sg', 'remote', 'atomic', 'swap'] },
  IBV_WR_ATOMIC_FETCH_AND_ADD: { qpTypes: RC, fields: ['sg', 'remote', 'atomic'] },
  IBV_WR_LOCAL_INV: { qpTypes: RC_UC, fields: ['invalidate'] },
  IBV_WR_BIND_MW: { qpTypes: RC_UC, fields: ['bind'] },
  IBV_WR_SEND_WITH_INV: { qpTypes: RC_UC, fields: ['sg', 'invalidate'] },
  // kernel-only, iWARP: a READ whose sink SGE's lkey the requester invalidates at completion (no invalidate field:
  // siw and iw_cxgb4 invalidate sg_list[0].lkey)
  IB_WR_RDMA_READ_WITH_INV: { qpTypes: RC, fields: ['sg', 'remote'] },
  IB_WR_REG_MR: { qpTypes: RC_UC, fields: ['reg'] },
};
