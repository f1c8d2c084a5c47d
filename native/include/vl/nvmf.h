// NVMe-oF target offload on the software device (lab 4): the verbs of the 2018 RFC "Hardware NVMe-oF target
// offload" (mirrored in Mellanox/spdk PR #4, lib/nvmf/rdma_verbs_offload.h; shipped as mlx5dv_* in MLNX_OFED) and a
// soft NVMe PCIe function as the backend SSD (vl/nvme.h). docs/nvmf-offload.md lists every call, event and step.
//
// The object model is the RFC's: an SRQ of type NVMF stands for one subsystem and carries a staging buffer; backend
// NVMe controllers (`nvme_ctrl`: SQ / CQ rings and the two doorbell addresses) are attached to it; front-end NSIDs
// are mapped to (ctrl, device NSID, lba_data_size); a connected RC QP receiving from that SRQ is handed to the
// device with qp_set_nvmf(ENABLE) after the NVMe-oF Connect. From then on the device serves READ / WRITE / FLUSH
// capsules itself and only what it does not offload reaches software as an ordinary receive completion.
//
// What happens inside the NIC was never published: every step of the offload engine (staging allocation, PRP build,
// polling the backend CQ's phase tag, recycling the receive buffer) is MODELLED from the RFC's attributes and the
// NVMe / NVMe-oF specs, and the events say so.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vl/nvme.h"
#include "vl/session.h"

namespace vl {

// ---- RFC constants: the values of the header proposed with the 2018 verbs RFC (rdma_verbs_offload.h; never merged
// upstream, so there is no rdma-core header to check them against)
constexpr uint32_t SRQT_NVMF = 3;                    // enum ibv_srq_type: the RFC's IBV_SRQT_NVMF
constexpr uint32_t SRQ_INIT_ATTR_NVMF = 1u << 5;     // ibv_srq_init_attr_ex.comp_mask bit
constexpr uint32_t QP_NVMF_ATTR_FLAG_ENABLE = 1u << 0;   // ibv_qp_set_nvmf flags
// Offload operations (the proposed header's bitmask; the kernel and the mlx5 PRM number them differently, see the doc)
enum NvmfOffloadOp : uint32_t { NVMF_OP_WRITE = 1, NVMF_OP_READ = 2, NVMF_OP_FLUSH = 4 };
constexpr uint32_t NVMF_READ_WRITE = NVMF_OP_READ | NVMF_OP_WRITE, NVMF_READ_WRITE_FLUSH = NVMF_READ_WRITE | NVMF_OP_FLUSH;
// Front-end block sizes a device may map (NvmfCaps::lba_data_sizes bits)
enum NvmfLbaSize : uint32_t { NVMF_LBA_512 = 1, NVMF_LBA_520 = 2, NVMF_LBA_4096 = 4, NVMF_LBA_4104 = 8, NVMF_LBA_4160 = 16 };
uint32_t nvmf_lba_size_bit(uint32_t lba_data_size);   // 0 when not one of the above

// ---- the typed steps of EventKind::Offload (a = NvmfStep; names in vl/names.h kNvmfStepNames)
enum class NvmfStep : uint8_t {
  Recv = 0,            // capsule received on an offload-enabled QP           b cid, c opcode, d fe nsid
  Parse = 1,           // accepted for offload                                b cid, c data length, d SGL identifier
  ToSoftware = 2,      // not offloaded: an ordinary RECV completion           b cid, c NvmfPass reason, d opcode
  StagingAlloc = 3,    // staging pages reserved                              b cid, c first page, d pages
  StagingWait = 4,     // no staging space: the command waits                 b cid, c pages needed
  RdmaRead = 5,        // device posts RDMA READ of the host's buffer          b cid, c length, d rkey
  RdmaReadDone = 6,    // the write data is in staging                        b cid, c length
  IcdCopy = 7,         // in-capsule data copied to staging                   b cid, c length
  SqeWrite = 8,        // backend SQE written at the shadow tail              b cid, c SQ slot, d backend cid
  SqDoorbell = 9,      // MMIO write of the SQ tail doorbell                  b cid, c new tail, d doorbell bus address
  Cqe = 10,            // backend CQE seen (phase tag matched)                b cid, c CQ slot, d CQE status field (phase bit 0)
  CqDoorbell = 11,     // MMIO write of the CQ head doorbell                  b cid, c new head, d doorbell bus address
  RdmaWrite = 12,      // device posts RDMA WRITE of the read data            b cid, c length, d rkey
  SendResponse = 13,   // response capsule (NVMe CQE) posted as SEND          b cid, c status field, d 1 = SEND_WITH_INV
  Done = 14,           // response acknowledged, staging freed, RECV recycled b cid, c status field
  BeforeConnect = 15,  // violation: I/O served on a QP enabled before the Connect capsule   b cid
  RdmaError = 16,      // a device RDMA READ / WRITE / SEND failed (QP -> ERR) b cid, c ibv_wc_status
  BackendTimeout = 17, // RFC IBV_EVENT_NVME_TIMEOUT: no backend CQE in cmd_timeout_ms       b cid, c backend ctrl
  BackendPciErr = 18,  // RFC IBV_EVENT_NVME_PCI_ERR: backend controller fatal / reset       b 0, c backend ctrl
  UnsupportedOp = 19,  // RFC UNSUPPORTED_NVMF_OP: an opcode outside the configured set      b cid, c opcode
};
// c of ToSoftware: why the device did not offload the capsule
enum class NvmfPass : uint8_t {
  NotEnabled = 0,      // the QP is not (yet) offload-enabled
  AdminOrFabrics = 1,  // Fabrics command (opcode 0x7F) or a capsule for the admin queue
  OpNotOffloaded = 2,  // opcode outside the SRQ's offload_ops (or not READ / WRITE / FLUSH)
  UnknownNsid = 3,     // fe nsid not mapped (cmd_unknown_namespace_cnt)
  TooLarge = 4,        // data length > max_io_sz
  SglUnsupported = 5,  // SGL form or length the device does not take (software answers 0x0F / 0x11 / 0x16)
  BackendDown = 6,     // the mapped backend controller is gone (PCI error / timeout teardown)
  Malformed = 7,       // shorter than a 64-byte SQE
};

struct MrSg { Handle mr = 0; uint64_t addr = 0; uint64_t len = 0; };   // the RFC's ibv_mr_sg triple

struct NvmfSrqAttr {                 // ibv_srq_init_attr_ex.nvmf_attr
  uint32_t offload_ops = NVMF_READ_WRITE_FLUSH;
  uint32_t max_namespaces = 1;
  uint32_t nvme_log_page_sz = 0;     // backend page size: 4 KiB << this
  uint32_t ioccsz = 260;             // 16-byte units: (64 + in-capsule data) / 16
  uint32_t icdoff = 0;               // 16-byte units
  uint32_t max_io_sz = 128 * 1024;
  uint32_t nvme_queue_depth = 64;
  MrSg staging_buf;
  Handle cq = 0;                     // IBV_SRQ_INIT_ATTR_CQ (mandatory, as in N2)
};

struct NvmeCtrlAttr {                // the RFC's nvme_ctrl attrs
  MrSg sq_buf, cq_buf;               // the backend rings (registered, 64-byte aligned)
  uint64_t sqdb = 0, cqdb = 0;       // doorbell bus addresses (raw, as SPDK had to pass them; exactly 4 bytes each)
  uint16_t sqdb_ini = 0, cqdb_ini = 0;
  uint32_t cmd_timeout_ms = 1000;
};

// A backend I/O queue pair reserved on a soft NVMe function for the HCA (nvme_peer_get_resource of MLNX_OFED's
// drivers/nvme/host/pci.c): rings allocated in session memory and registered in `pd`, created through the admin
// queue, with the doorbells' bus addresses. Fill NvmeCtrlAttr from it.
struct NvmeP2pQueue {
  uint16_t qid = 0; uint32_t depth = 0;
  Handle sq_buffer = 0, cq_buffer = 0, sq_mr = 0, cq_mr = 0;
  uint64_t sq_addr = 0, cq_addr = 0, sqdb = 0, cqdb = 0;
  uint16_t sq_tail = 0, cq_head = 0;
};

struct NvmfNsCounters {              // QUERY_NVMF_NAMESPACE_CONTEXT's counters (N3 hw/mlx5/nvmf.c)
  uint64_t read_cmds = 0, read_blocks = 0, write_cmds = 0, write_blocks = 0, write_inline_cmds = 0, flush_cmds = 0;
  uint64_t error_cmds = 0, backend_error_cmds = 0;
};
struct NvmfCounters {
  uint64_t offloaded = 0, to_software = 0, unknown_namespace = 0, errors = 0, served_before_connect = 0, staging_waits = 0;
};

struct NvmfSnapshot {
  Handle srq = 0, device = 0;
  NvmfSrqAttr attr;
  uint32_t staging_page_size = 0;
  std::vector<uint32_t> staging_pages;   // per page: 0 free, else the command id holding it
  struct Ctrl {
    Handle h = 0, nvme = 0; bool alive = true;
    uint64_t sq_addr = 0, cq_addr = 0, sqdb = 0, cqdb = 0; uint32_t depth = 0;
    uint16_t sq_tail = 0, cq_head = 0; bool phase = true; uint32_t inflight = 0; uint32_t cmd_timeout_ms = 0;
  };
  std::vector<Ctrl> ctrls;
  struct Ns { uint32_t fe_nsid = 0; Handle ctrl = 0; uint32_t nsid = 0, lba_data_size = 0; NvmfNsCounters counters; };
  std::vector<Ns> namespaces;
  struct Cmd { uint32_t id = 0; Handle qp = 0; uint16_t cid = 0, be_cid = 0; uint8_t opcode = 0; uint32_t fe_nsid = 0; NvmfStep step = NvmfStep::Recv; };
  std::vector<Cmd> inflight;
  std::vector<Handle> enabled_qps;
  NvmfCounters counters;
};

struct NvmeSnapshot {                // a soft NVMe function
  Handle h = 0; uint64_t bar0 = 0; uint32_t bar_size = 0;
  uint32_t cc = 0, csts = 0, dstrd = 0;
  std::vector<nvme::QueueState> queues;
  std::vector<nvme::NamespaceConfig> namespaces;
  nvme::Counters counters;
};

namespace nvmf {
// ibv_query_device_ex(...).nvmf_caps: the profile's caps (all zero: the device has no offload)
Result<NvmfCaps> query_caps(Session& s, Handle dev);
// ibv_create_srq_ex with srq_type NVMF (EOPNOTSUPP without offload caps; EINVAL naming the attribute otherwise)
Result<Handle> create_srq(Session& s, Handle pd, uint32_t max_wr, uint32_t max_sge, const NvmfSrqAttr& attr);
// The soft NVMe PCIe function (backend SSD): BAR0 at a bus address outside session memory
Result<Handle> nvme_create(Session& s, const nvme::Config& cfg = {});
Status nvme_destroy(Session& s, Handle nvme);
Status nvme_add_namespace(Session& s, Handle nvme, const nvme::NamespaceConfig& ns);
Result<NvmeP2pQueue> nvme_p2p_queue(Session& s, Handle nvme, Handle pd, uint32_t depth);
Status nvme_mmio_write32(Session& s, uint64_t bus_addr, uint32_t v);
Result<uint32_t> nvme_mmio_read32(Session& s, uint64_t bus_addr);
Status nvme_peek(Session& s, Handle nvme, uint32_t nsid, uint64_t slba, uint32_t n, std::vector<uint8_t>& out);
Status nvme_inject_timeout(Session& s, Handle nvme, uint32_t n);   // the next n I/O commands never complete
Status nvme_pci_error(Session& s, Handle nvme);                     // CSTS.CFS, queues torn down, ctrls on it die
Status nvme_set_namespace_ready(Session& s, Handle nvme, uint32_t nsid, bool ready);
Result<NvmeSnapshot> nvme_snapshot(Session& s, Handle nvme);
// ibv_srq_create_nvme_ctrl / ibv_srq_remove_nvme_ctrl
Result<Handle> srq_create_nvme_ctrl(Session& s, Handle srq, const NvmeCtrlAttr& attr);
Status srq_remove_nvme_ctrl(Session& s, Handle ctrl);
// ibv_map_nvmf_nsid / ibv_unmap_nvmf_nsid: EEXIST fe_nsid mapped, ENOENT unmap of an unknown fe_nsid, ENOTSUP an
// unsupported lba_data_size (not in the caps or not a multiple of the backend namespace's block)
Status map_nvmf_nsid(Session& s, Handle ctrl, uint32_t fe_nsid, uint32_t lba_data_size, uint32_t nvme_nsid);
Status unmap_nvmf_nsid(Session& s, Handle ctrl, uint32_t fe_nsid);
// ibv_qp_set_nvmf(qp, IBV_QP_NVMF_ATTR_FLAG_ENABLE): the QP (RC, RTS, receiving from an NVMF SRQ) is handed to the device
Status qp_set_nvmf(Session& s, Handle qp, uint32_t flags);
Result<NvmfSnapshot> snapshot(Session& s, Handle srq);
}  // namespace nvmf

}  // namespace vl
