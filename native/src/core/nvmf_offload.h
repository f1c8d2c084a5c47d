// Internal state of the NVMe-oF target offload (vl/nvmf.h): soft NVMe functions, offload SRQs, backend controllers,
// the namespace map and the commands in flight. Not a public header. nvmf_setup.cpp holds the verbs (create /
// map / enable / faults / snapshots), nvmf_engine.cpp the modelled engine that serves capsules.
#pragma once
#include <map>
#include <memory>
#include <set>

#include "core/impl.h"
#include "vl/nvmf.h"

namespace vl {

// The bus address of soft NVMe function i's BAR0: above every session virtual address (0x7f0000000000 + 1 TiB is
// never reached), one 64 KiB window per function.
constexpr uint64_t kNvmeBarBase = 0xfe0000000000ull, kNvmeBarWindow = 0x10000;

// The controller's DMA goes to session memory by virtual address (the session's "bus addresses"), and every write
// shows as a MemWrite event like any device write.
struct SessionDma : nvme::Dma {
  SessionImpl& S;
  explicit SessionDma(SessionImpl& s) : S(s) {}
  bool read(uint64_t addr, void* dst, size_t n) override;
  bool write(uint64_t addr, const void* src, size_t n) override;
};

struct NvmeFn {                        // a soft NVMe PCIe function
  Handle h = 0;
  uint64_t bar0 = 0;
  std::unique_ptr<SessionDma> dma;
  std::unique_ptr<nvme::Controller> ctrl;
  uint16_t next_p2p_qid = 1;
  // the admin queue the "NVMe driver" side (nvme_p2p_queue) uses, allocated on first use
  Handle admin_sq_buf = 0, admin_cq_buf = 0; uint64_t asq = 0, acq = 0; uint16_t asq_tail = 0, acq_head = 0; bool acq_phase = true;
  std::vector<Handle> buffers;         // rings allocated for it (freed with it)
};

struct NvmfCtrl {                      // an nvme_ctrl attached to an offload SRQ
  Handle h = 0, srq = 0, nvme = 0;
  NvmeCtrlAttr attr;
  uint32_t depth = 0;                  // entries of the SQ / CQ rings
  uint16_t sq_tail = 0, cq_head = 0;   // the device's shadow tail / head
  bool phase = true;                   // the phase tag the next new CQE carries
  bool alive = true;
  bool watchdog_pending = false;       // one NVMF_TIMEOUT action per ctrl, at the oldest command's deadline (as the ACK timer)
  std::map<uint16_t, uint32_t> by_be_cid;   // backend cid -> command id
  uint16_t next_be_cid = 0;
};

struct NvmfNs { uint32_t fe_nsid = 0; Handle ctrl = 0; uint32_t nsid = 0, lba_data_size = 0, be_block = 0; NvmfNsCounters counters; };

struct NvmfSrq {
  Handle h = 0, dev = 0, pd = 0;
  NvmfSrqAttr attr;
  uint32_t lkey = 0;                   // the staging MR's lkey
  uint32_t page_size = 4096;
  std::vector<uint32_t> pages;         // staging page owner (command id, 0 free)
  std::map<uint32_t, NvmfNs> ns;       // by fe_nsid
  std::vector<Handle> ctrls;
  std::deque<uint32_t> waiting;        // commands waiting for staging space
  NvmfCounters counters;
};

enum class CmdState : uint8_t { Staging, ReadingHost, Submitting, Backend, Responding, Finished };

struct NvmfCmd {
  uint32_t id = 0;
  Handle qp = 0, srq = 0, ctrl = 0;
  RecvWr recv;                         // the SRQ receive buffer holding the capsule (recycled at the end)
  nvme::Sqe sqe;                       // the capsule's SQE
  std::vector<uint8_t> icd;            // in-capsule data
  uint8_t opc = 0, sgl_id = 0;
  uint16_t cid = 0, be_cid = 0;
  uint32_t fe_nsid = 0;
  uint64_t len = 0;                    // data bytes
  uint64_t host_addr = 0; uint32_t rkey = 0;
  uint32_t first_page = 0, npages = 0; // staging run (npages 0: none)
  uint64_t staging = 0, prp_list = 0;  // data address in staging; PRP list page (0: none)
  uint16_t status = 0;                 // backend CQE status field (phase bit cleared)
  uint32_t dw0 = 0, dw1 = 0;
  CmdState state = CmdState::Staging;
  NvmfStep step = NvmfStep::Recv;
  uint32_t qp_gen = 0;                 // NvmfQp::gen when the capsule arrived (a reset QP is another connection)
  uint64_t deadline = 0;               // virtual time by which the backend CQE must be seen (cmd_timeout_ms)
};

struct NvmfQp { bool enabled = false; bool connect_seen = false; uint16_t sqhd = 0; uint32_t gen = 0; };   // gen: bumped at RESET / destroy

struct NvmfState {
  std::map<Handle, NvmeFn> fns;
  std::map<Handle, NvmfSrq> srqs;
  std::map<Handle, NvmfCtrl> ctrls;
  std::map<Handle, NvmfQp> qps;
  std::map<uint32_t, NvmfCmd> cmds;
  uint32_t next_cmd = 1;
  uint64_t next_bar = kNvmeBarBase;
  uint64_t backend_latency_ns = 2000;  // modelled SSD service time before the CQE (virtual time)
  uint64_t step_ns = 100;              // modelled time of one engine step (parse, SQE write, doorbell ...)
};

// nvmf_engine.cpp helpers shared with nvmf_setup.cpp
enum NvmfActionOp : uint16_t { NVMF_ADVANCE = 0, NVMF_BACKEND = 1, NVMF_TIMEOUT = 2, NVMF_FINISH = 3 };
void nvmf_push(SessionImpl& S, uint16_t op, uint64_t id, Handle obj, uint64_t delay);
void nvmf_backend_fatal(SessionImpl& S, NvmfCtrl& c, NvmfStep why, uint32_t cmd_id);
Event* nvmf_emit(SessionImpl& S, Handle dev, Handle obj, const char* obj_kind, NvmfStep step, uint64_t b, uint64_t c, uint64_t d, std::string text);

}  // namespace vl
