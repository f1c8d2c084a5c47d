// Built-in device profiles. Values follow rxe_param.h (rxe), mlx5 (cx) and siw (iwarp).
#include <cerrno>

#include "core/impl.h"

namespace vl {

const std::vector<Profile>& builtin_profiles() {
  static const std::vector<Profile> profiles = [] {
    std::vector<Profile> v;
    Profile rxe;
    rxe.name = "rxe";
    rxe.description = "Linux soft-RoCE (rxe) like: MW type 2B, fast registration, random key bytes, lkey == rkey";
    rxe.transport = "RoCEv2";
    rxe.device_cap_flags = DEVICE_BAD_PKEY_CNTR | DEVICE_BAD_QKEY_CNTR | DEVICE_AUTO_PATH_MIG |
                           DEVICE_CHANGE_PHY_PORT | DEVICE_UD_AV_PORT_ENFORCE | DEVICE_PORT_ACTIVE_EVENT |
                           DEVICE_SYS_IMAGE_GUID | DEVICE_RC_RNR_NAK_GEN | DEVICE_SRQ_RESIZE |
                           DEVICE_MEM_MGT_EXTENSIONS | DEVICE_MEM_WINDOW | DEVICE_MEM_WINDOW_TYPE_2B;
    rxe.atomic_cap = ATOMIC_HCA;
    rxe.max_qp = 0x10000; rxe.max_qp_wr = 0x4000; rxe.max_sge = 32; rxe.max_cq = 0x4000; rxe.max_cqe = (1 << 15) - 1;
    rxe.max_mr = 0x4000; rxe.max_pd = 0x4000; rxe.max_mw = 0x4000; rxe.max_srq = 0x4000; rxe.max_srq_wr = 0x4000;
    rxe.max_srq_sge = 27; rxe.max_qp_rd_atom = 128; rxe.max_qp_init_rd_atom = 128;
    rxe.max_fast_reg_page_list_len = 512; rxe.max_inline_data = 400;
    rxe.max_mr_size = ~0ull; rxe.page_size_cap = 0xfffff000ull; rxe.active_mtu = MTU_1024;
    rxe.indirect_reg = false; rxe.zero_based_mr = false; rxe.read_with_inv = false; rxe.lkey_eq_rkey = true;
    rxe.key_byte_policy = "random";
    // rxe where it differs from the IBA / ConnectX (session.h, docs/rxe-conformance.md)
    rxe.local_inv_waits_all = true; rxe.recv_cq_overflow_no_ack = true; rxe.send_cq_overflow_keeps_rts = true;
    rxe.error_wc_not_solicited = true; rxe.rereg_pd_access_only = true; rxe.round_queue_depths = true;
    rxe.wc_flags_rxe = true; rxe.dereg_bound_mr_errno = EINVAL; rxe.local_key_error_status = WC_LOC_QP_OP_ERR;
    rxe.recv_too_small_is_malformed = true; rxe.invalidate_checks_pd = false; rxe.reg_mr_wr_checks_access = false;
    rxe.read_with_inv_loc_qp_op_err = true;
    v.push_back(rxe);

    Profile cx;
    cx.name = "cx";
    cx.description = "ConnectX-like (mlx5): XRC, MW type 2B, fast registration, SG_GAPS indirect keys, zero-based MRs";
    cx.transport = "RoCEv2";
    cx.device_cap_flags = DEVICE_BAD_PKEY_CNTR | DEVICE_BAD_QKEY_CNTR | DEVICE_AUTO_PATH_MIG |
                          DEVICE_CHANGE_PHY_PORT | DEVICE_PORT_ACTIVE_EVENT | DEVICE_SYS_IMAGE_GUID |
                          DEVICE_RC_RNR_NAK_GEN | DEVICE_XRC | DEVICE_MEM_MGT_EXTENSIONS | DEVICE_MEM_WINDOW |
                          DEVICE_MEM_WINDOW_TYPE_2B | DEVICE_UD_IP_CSUM | DEVICE_RC_IP_CSUM | DEVICE_RAW_IP_CSUM |
                          DEVICE_MANAGED_FLOW_STEERING;
    cx.atomic_cap = ATOMIC_HCA;
    cx.max_qp = 262144; cx.max_qp_wr = 32768; cx.max_sge = 30; cx.max_cq = 16777216; cx.max_cqe = 4194303;
    cx.max_mr = 16777216; cx.max_pd = 16777216; cx.max_mw = 16777216; cx.max_srq = 8388608; cx.max_srq_wr = 32767;
    cx.max_srq_sge = 31; cx.max_qp_rd_atom = 16; cx.max_qp_init_rd_atom = 16;
    cx.max_fast_reg_page_list_len = 256; cx.max_inline_data = 220;
    cx.max_mr_size = ~0ull; cx.page_size_cap = 0xfffffffffffff000ull; cx.active_mtu = MTU_4096;   // jumbo-frame port
    cx.indirect_reg = true; cx.zero_based_mr = true; cx.read_with_inv = false; cx.lkey_eq_rkey = true;
    cx.notify_reports_missed = false;   // mlx5_ib_arm_cq: 0; the arm over unpolled CQEs fires (modelled)
    cx.key_byte_policy = "increment";
    // NVMe-oF target offload (the RFC's caps; values modelled on mlx5 nvmf_cap_bits and the MLNX_OFED defaults:
    // 128 KiB max I/O (SPDK's), IOCCSZ 4..260 (64 + 4 KiB in-capsule), ICDOFF 0, 30 s max command timeout)
    cx.nvmf.offload_type_rc = 7; cx.nvmf.offload_type_dc = 7;
    cx.nvmf.max_backend_ctrls_total = 64; cx.nvmf.max_srq_backend_ctrls = 16; cx.nvmf.max_srq_namespaces = 16;
    cx.nvmf.min_staging_buf_size = 16 * 1024; cx.nvmf.max_staging_buf_size = 512ull << 20;
    cx.nvmf.max_io_sz = 128 * 1024; cx.nvmf.max_nvme_queue_depth = 1024; cx.nvmf.min_nvme_queue_depth = 16;
    cx.nvmf.max_ioccsz = 260; cx.nvmf.min_ioccsz = 4; cx.nvmf.max_icdoff = 0;
    cx.nvmf.lba_data_sizes = 0x1F; cx.nvmf.min_cmd_timeout_ms = 1; cx.nvmf.max_cmd_timeout_ms = 30000;
    v.push_back(cx);

    // Modelled, not a product: no Linux driver advertises IB_DEVICE_MEM_WINDOW_TYPE_2A (rxe, mlx4 and mlx5 give 2B).
    // The cx profile with the other flavour of type 2 window, to show what the IBA's 2A / 2B difference does.
    Profile a2 = cx;
    a2.name = "ib2a";
    a2.description = "Modelled (no driver advertises it): the cx profile with MW type 2A, windows associated with a QP number only";
    a2.device_cap_flags = (cx.device_cap_flags & ~uint64_t(DEVICE_MEM_WINDOW_TYPE_2B)) | DEVICE_MEM_WINDOW_TYPE_2A;
    v.push_back(a2);

    Profile iw;
    iw.name = "iwarp";
    iw.description = "iWARP-like (siw): MEM_MGT_EXTENSIONS only, no atomics, no memory windows, RC only, key byte 0";
    iw.transport = "iWARP";
    iw.device_cap_flags = DEVICE_MEM_MGT_EXTENSIONS;
    iw.atomic_cap = ATOMIC_NONE;
    iw.max_qp = 102400; iw.max_qp_wr = 32768; iw.max_sge = 6; iw.max_cq = 102400; iw.max_cqe = 3276800;
    iw.max_mr = 102400 * 32; iw.max_pd = 102400; iw.max_mw = 0; iw.max_srq = 102400; iw.max_srq_wr = 16384;
    iw.max_srq_sge = 6; iw.max_qp_rd_atom = 128; iw.max_qp_init_rd_atom = 128;
    iw.max_fast_reg_page_list_len = 256; iw.max_inline_data = 80;
    iw.max_mr_size = ~0ull; iw.page_size_cap = 4096; iw.active_mtu = MTU_1024;
    iw.indirect_reg = false; iw.zero_based_mr = false; iw.read_with_inv = true; iw.lkey_eq_rkey = true;
    iw.key_byte_policy = "zero";
    v.push_back(iw);

    Profile mn;
    mn.name = "minimal";
    mn.description = "Minimal RoCE device: no memory windows, no fast registration / invalidate, no atomics";
    mn.transport = "RoCEv2";
    mn.device_cap_flags = DEVICE_PORT_ACTIVE_EVENT | DEVICE_RC_RNR_NAK_GEN;
    mn.atomic_cap = ATOMIC_NONE;
    mn.max_qp = 64; mn.max_qp_wr = 256; mn.max_sge = 4; mn.max_cq = 64; mn.max_cqe = 1024;
    mn.max_mr = 256; mn.max_pd = 16; mn.max_mw = 0; mn.max_srq = 16; mn.max_srq_wr = 256;
    mn.max_srq_sge = 4; mn.max_qp_rd_atom = 4; mn.max_qp_init_rd_atom = 4;
    mn.max_fast_reg_page_list_len = 0; mn.max_inline_data = 64;
    mn.max_mr_size = 1ull << 32; mn.page_size_cap = 4096; mn.active_mtu = MTU_1024;
    mn.indirect_reg = false; mn.zero_based_mr = false; mn.read_with_inv = false; mn.lkey_eq_rkey = true;
    mn.key_byte_policy = "increment";
    v.push_back(mn);
    return v;
  }();
  return profiles;
}

}  // namespace vl
