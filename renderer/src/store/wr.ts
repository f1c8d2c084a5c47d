// Which fields of struct ibv_send_wr each work-request opcode uses (infiniband/verbs.h: the wr union — rdma,
// atomic, ud, bind_mw — plus imm_data / invalidate_rkey; the kernel's struct ib_reg_wr for IB_WR_REG_MR), as the
// post send form lays them out. Layout only: which fields are shown and sent. Whether a value is acceptable is the
// device's to say (ibv_post_send's checks in native/src/core/qp.cpp, their text shown next to the form).
import type { SendWr } from '../../../app/protocol/index.ts';

export type WrField =
  | 'sg'          // sg_list (local buffers, by lkey)
  | 'remote'      // wr.rdma / wr.atomic: remote_addr, rkey
  | 'imm'         // imm_data
  | 'invalidate'  // invalidate_rkey (SEND_WITH_INV, LOCAL_INV)
  | 'atomic'      // wr.atomic: compare_add (and swap for CMP_AND_SWP)
  | 'swap'
  | 'bind'        // bind_mw: mw, rkey (the new one), bind_info { mr, addr, length, mw_access_flags }
  | 'reg';        // ib_reg_wr: mr, key, access

export const WR_FIELDS: Record<SendWr['opcode'], readonly WrField[]> = {
  IBV_WR_RDMA_WRITE: ['sg', 'remote'],
  IBV_WR_RDMA_WRITE_WITH_IMM: ['sg', 'remote', 'imm'],
  IBV_WR_SEND: ['sg'],
  IBV_WR_SEND_WITH_IMM: ['sg', 'imm'],
  IBV_WR_RDMA_READ: ['sg', 'remote'],
  IBV_WR_ATOMIC_CMP_AND_SWP: ['sg', 'remote', 'atomic', 'swap'],
  IBV_WR_ATOMIC_FETCH_AND_ADD: ['sg', 'remote', 'atomic'],
  IBV_WR_LOCAL_INV: ['invalidate'],
  IBV_WR_BIND_MW: ['bind'],
  IBV_WR_SEND_WITH_INV: ['sg', 'invalidate'],
  // kernel-only, iWARP: a READ whose sink SGE's lkey the requester invalidates at completion (no invalidate field:
  // siw and iw_cxgb4 invalidate sg_list[0].lkey)
  IB_WR_RDMA_READ_WITH_INV: ['sg', 'remote'],
  IB_WR_REG_MR: ['reg'],
};

/** The SEND family on a UD QP also names its destination: wr.ud { ah, remote_qpn, remote_qkey } */
export const UD_OPCODES: readonly SendWr['opcode'][] = ['IBV_WR_SEND', 'IBV_WR_SEND_WITH_IMM'];

export const hasField = (opcode: string, f: WrField): boolean => (WR_FIELDS[opcode as SendWr['opcode']] ?? []).includes(f);

/** ibv_inc_rkey(): the next key byte for a window or fast-registration MR (libibverbs verbs.h; the 24-bit index stays) */
export const incRkey = (rkey: number): number => ((rkey & 0xffffff00) | ((rkey + 1) & 0xff)) >>> 0;
