// NVMe-oF target offload, the control path (vl/nvmf.h): caps, the NVMF SRQ with its staging buffer, soft NVMe
// functions and their P2P queues, backend controllers, the namespace map, QP enable, faults and snapshots.
// Names and errors follow the 2018 RFC (Mellanox/spdk PR #4 lib/nvmf/rdma_verbs_offload.h) and MLNX_OFED's
// drivers/nvme/target/rdma_offload.c / drivers/infiniband/hw/mlx5/nvmf.c where the RFC is silent.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/nvmf_offload.h"

namespace vl {

bool SessionDma::read(uint64_t addr, void* dst, size_t n) {
  const uint8_t* p = S.host(addr, n);
  if (!p) return false;
  std::memcpy(dst, p, n);
  return true;
}

bool SessionDma::write(uint64_t addr, const void* src, size_t n) {
  uint8_t* p = S.host(addr, n);
  if (!p) return false;
  std::memcpy(p, src, n);
  S.note_write(0, addr, n);
  return true;
}

uint32_t nvmf_lba_size_bit(uint32_t n) {
  switch (n) {
    case 512: return NVMF_LBA_512;
    case 520: return NVMF_LBA_520;
    case 4096: return NVMF_LBA_4096;
    case 4104: return NVMF_LBA_4104;
    case 4160: return NVMF_LBA_4160;
  }
  return 0;
}

namespace nvmf {
namespace {
NvmfState& state(SessionImpl& S) {
  if (!S.nvmf) S.nvmf = std::make_shared<NvmfState>();
  return *S.nvmf;
}
std::string num(uint64_t v) { return std::to_string(v); }
NvmeFn* fn_at(NvmfState& N, uint64_t bus, uint32_t& off) {
  for (auto& [h, f] : N.fns)
    if (bus >= f.bar0 && bus < f.bar0 + kNvmeBarWindow) { off = uint32_t(bus - f.bar0); return &f; }
  return nullptr;
}
// the MR of an ibv_mr_sg triple, checked: same PD, the range inside it, LOCAL_WRITE when the device writes it
Status check_mr_sg(SessionImpl& S, const MrSg& m, Handle pd, const char* what) {
  Mr* mr = S.mr(m.mr);
  if (!mr) return fail(EINVAL, std::string(what) + ".mr: no MR with handle " + num(m.mr));
  if (mr->pd != pd) return fail(EINVAL, std::string(what) + ".mr: MR of another PD");
  if (mr->kind != MrKind::User) return fail(EINVAL, std::string(what) + ".mr: needs a user MR (ibv_reg_mr)");
  if (!(mr->access & ACCESS_LOCAL_WRITE)) return fail(EINVAL, std::string(what) + ".mr: needs IBV_ACCESS_LOCAL_WRITE");
  if (m.len == 0 || m.addr < mr->addr || m.addr + m.len > mr->addr + mr->length)
    return fail(EINVAL, std::string(what) + ": range " + hex(m.addr) + "+" + num(m.len) + " outside the MR");
  return ok();
}
}  // namespace

Result<NvmfCaps> query_caps(Session& s, Handle devh) {
  auto lk = s.internals().lock();
  Device* d = s.internals().dev(devh);
  if (!d) return rfail<NvmfCaps>(ENOENT, "device: no device with handle " + num(devh));
  return rok(d->profile.nvmf);
}

Result<Handle> create_srq(Session& s, Handle pdh, uint32_t max_wr, uint32_t max_sge, const NvmfSrqAttr& a) {
  auto lk = s.internals().lock();
  SessionImpl& S = s.internals();
  Pd* p = S.pd(pdh);
  if (!p) return rfail<Handle>(ENOENT, "pd: no PD with handle " + num(pdh));
  Device& d = *S.dev(p->dev);
  const NvmfCaps& c = d.profile.nvmf;
  if (!c.offload_type_rc) return rfail<Handle>(EOPNOTSUPP, "srq_type: IBV_SRQT_NVMF needs NVMe-oF offload; " + d.name + " (" + d.profile.name + ") has no nvmf_caps");
  const uint32_t ops = a.offload_ops;
  if (ops != NVMF_OP_WRITE && ops != NVMF_OP_READ && ops != NVMF_READ_WRITE && ops != NVMF_READ_WRITE_FLUSH)
    return rfail<Handle>(EINVAL, "nvmf_attr.offload_ops: " + num(ops) + " is not WRITE 1, READ 2, READ_WRITE 3 or READ_WRITE_FLUSH 7");
  if ((ops & c.offload_type_rc) != ops) return rfail<Handle>(EINVAL, "nvmf_attr.offload_ops: " + num(ops) + " not within offload_type_rc " + num(c.offload_type_rc));
  if (a.max_namespaces < 1 || a.max_namespaces > c.max_srq_namespaces)
    return rfail<Handle>(EINVAL, "nvmf_attr.max_namespaces: must be 1.." + num(c.max_srq_namespaces));
  if (a.ioccsz < c.min_ioccsz || a.ioccsz > c.max_ioccsz)
    return rfail<Handle>(EINVAL, "nvmf_attr.ioccsz: " + num(a.ioccsz) + " outside " + num(c.min_ioccsz) + ".." + num(c.max_ioccsz) + " (16-byte units)");
  if (a.icdoff > c.max_icdoff) return rfail<Handle>(EINVAL, "nvmf_attr.icdoff: " + num(a.icdoff) + " > max_icdoff " + num(c.max_icdoff));
  if (a.max_io_sz < 4096 || a.max_io_sz > c.max_io_sz) return rfail<Handle>(EINVAL, "nvmf_attr.max_io_sz: must be 4096.." + num(c.max_io_sz));
  if (a.nvme_queue_depth < c.min_nvme_queue_depth || a.nvme_queue_depth > c.max_nvme_queue_depth)
    return rfail<Handle>(EINVAL, "nvmf_attr.nvme_queue_depth: must be " + num(c.min_nvme_queue_depth) + ".." + num(c.max_nvme_queue_depth));
  if (a.nvme_log_page_sz > 4) return rfail<Handle>(EINVAL, "nvmf_attr.nvme_log_page_sz: must be 0..4 (4 KiB << n)");
  if (!S.cq(a.cq) || S.cq(a.cq)->dev != p->dev) return rfail<Handle>(EINVAL, "cq: an offload SRQ needs a CQ of its device (IBV_SRQ_INIT_ATTR_CQ)");
  if (Status st = check_mr_sg(S, a.staging_buf, pdh, "nvmf_attr.staging_buf"); !st.ok()) return rfail<Handle>(st.err, st.msg);
  const uint32_t page = 4096u << a.nvme_log_page_sz;
  if (a.staging_buf.addr % page) return rfail<Handle>(EINVAL, "nvmf_attr.staging_buf.addr: not aligned to the " + num(page) + "-byte page");
  if (a.staging_buf.len < c.min_staging_buf_size || a.staging_buf.len > c.max_staging_buf_size)
    return rfail<Handle>(EINVAL, "nvmf_attr.staging_buf.len: " + num(a.staging_buf.len) + " outside " + num(c.min_staging_buf_size) + ".." + num(c.max_staging_buf_size));
  if (a.staging_buf.len < uint64_t(a.max_io_sz) + page) return rfail<Handle>(EINVAL, "nvmf_attr.staging_buf.len: smaller than one max_io_sz I/O and its PRP list page");
  Result<Handle> r = s.create_srq(pdh, max_wr, max_sge, 0);
  if (!r.ok()) return r;
  NvmfState& N = state(S);
  NvmfSrq x;
  x.h = r.value; x.dev = p->dev; x.pd = pdh; x.attr = a; x.page_size = page;
  x.lkey = S.mr(a.staging_buf.mr)->lkey;
  x.pages.assign(a.staging_buf.len / page, 0);
  N.srqs[x.h] = std::move(x);
  if (S.capture) {
    auto& e = S.emit(EventKind::ObjectModified, p->dev, r.value, "srq",
                     "srq_type IBV_SRQT_NVMF: offload_ops " + num(ops) + ", staging " + num(a.staging_buf.len / page) + " pages of " + num(page));
    e.a = max_wr; e.b = SRQT_NVMF; e.c = a.staging_buf.len; e.d = ops;
  }
  return r;
}

// ---- soft NVMe functions
Result<Handle> nvme_create(Session& s, const nvme::Config& cfg) {
  auto lk = s.internals().lock();
  SessionImpl& S = s.internals();
  NvmfState& N = state(S);
  if (N.fns.size() >= 64) return rfail<Handle>(ENOMEM, "nvme: 64 functions per session");
  NvmeFn f;
  f.h = S.new_handle();
  f.bar0 = N.next_bar; N.next_bar += kNvmeBarWindow;
  f.dma = std::make_unique<SessionDma>(S);
  f.ctrl = std::make_unique<nvme::Controller>(*f.dma, cfg);
  if (f.ctrl->bar_size() > kNvmeBarWindow) return rfail<Handle>(EINVAL, "config: doorbells exceed the 64 KiB BAR window (dstrd / max_io_queues)");
  const Handle h = f.h;
  if (S.capture) { auto& e = S.emit(EventKind::Log, 0, h, "session", "soft NVMe function: BAR0 at bus address " + hex(f.bar0) + " (modelled PCIe SSD)"); e.a = f.bar0; }
  N.fns.emplace(h, std::move(f));
  return rok(h);
}

Status nvme_destroy(Session& s, Handle h) {
  auto lk = s.internals().lock();
  SessionImpl& S = s.internals();
  NvmfState& N = state(S);
  auto it = N.fns.find(h);
  if (it == N.fns.end()) return fail(ENOENT, "nvme: no NVMe function " + num(h));
  for (auto& [ch, c] : N.ctrls) if (c.nvme == h) return fail(EBUSY, "nvme: backend ctrl " + num(ch) + " still uses it");
  std::vector<Handle> bufs = it->second.buffers;
  N.fns.erase(it);
  for (Handle b : bufs) {
    std::vector<Handle> mrs;
    for (auto& [mh, m] : S.mrs) if (S.buffer_of(m.addr) == b) mrs.push_back(mh);
    for (Handle mh : mrs) s.dereg_mr(mh);
    s.free_buffer(b);
  }
  return ok();
}

static NvmeFn* fn(SessionImpl& S, Handle h) {
  if (!S.nvmf) return nullptr;
  auto it = S.nvmf->fns.find(h);
  return it == S.nvmf->fns.end() ? nullptr : &it->second;
}

Status nvme_add_namespace(Session& s, Handle h, const nvme::NamespaceConfig& ns) {
  auto lk = s.internals().lock();
  NvmeFn* f = fn(s.internals(), h);
  if (!f) return fail(ENOENT, "nvme: no NVMe function " + num(h));
  return f->ctrl->add_namespace(ns);
}

Status nvme_set_namespace_ready(Session& s, Handle h, uint32_t nsid, bool ready) {
  auto lk = s.internals().lock();
  NvmeFn* f = fn(s.internals(), h);
  if (!f) return fail(ENOENT, "nvme: no NVMe function " + num(h));
  return f->ctrl->set_namespace_ready(nsid, ready);
}

Status nvme_mmio_write32(Session& s, uint64_t bus, uint32_t v) {
  auto lk = s.internals().lock();
  SessionImpl& S = s.internals();
  uint32_t off = 0;
  NvmeFn* f = S.nvmf ? fn_at(*S.nvmf, bus, off) : nullptr;
  if (!f) return fail(EFAULT, "bus address " + hex(bus) + ": no NVMe BAR there");
  f->ctrl->write32(off, v);
  if (f->ctrl->has_work()) nvmf_push(S, NVMF_BACKEND, 0, f->h, S.nvmf->backend_latency_ns);
  return ok();
}

Result<uint32_t> nvme_mmio_read32(Session& s, uint64_t bus) {
  auto lk = s.internals().lock();
  SessionImpl& S = s.internals();
  uint32_t off = 0;
  NvmeFn* f = S.nvmf ? fn_at(*S.nvmf, bus, off) : nullptr;
  if (!f) return rfail<uint32_t>(EFAULT, "bus address " + hex(bus) + ": no NVMe BAR there");
  return rok(f->ctrl->read32(off));
}

Status nvme_peek(Session& s, Handle h, uint32_t nsid, uint64_t slba, uint32_t n, std::vector<uint8_t>& out) {
  auto lk = s.internals().lock();
  NvmeFn* f = fn(s.internals(), h);
  if (!f) return fail(ENOENT, "nvme: no NVMe function " + num(h));
  return f->ctrl->peek(nsid, slba, n, out);
}

Status nvme_inject_timeout(Session& s, Handle h, uint32_t n) {
  auto lk = s.internals().lock();
  NvmeFn* f = fn(s.internals(), h);
  if (!f) return fail(ENOENT, "nvme: no NVMe function " + num(h));
  f->ctrl->inject_timeout(n);
  return ok();
}

Status nvme_pci_error(Session& s, Handle h) {
  auto lk = s.internals().lock();
  SessionImpl& S = s.internals();
  NvmeFn* f = fn(S, h);
  if (!f) return fail(ENOENT, "nvme: no NVMe function " + num(h));
  f->ctrl->pci_error();
  std::vector<Handle> dead;
  for (auto& [ch, c] : S.nvmf->ctrls) if (c.nvme == h && c.alive) dead.push_back(ch);
  for (Handle ch : dead) nvmf_backend_fatal(S, S.nvmf->ctrls[ch], NvmfStep::BackendPciErr, 0);
  return ok();
}

// The NVMe driver side of a P2P queue (MLNX_OFED drivers/nvme/host/pci.c nvme_peer_get_resource): run as host
// software through BAR0 and the admin queue, synchronously (the controller is processed at once).
Result<NvmeP2pQueue> nvme_p2p_queue(Session& s, Handle h, Handle pd, uint32_t depth) {
  auto lk = s.internals().lock();
  SessionImpl& S = s.internals();
  NvmeFn* f = fn(S, h);
  if (!f) return rfail<NvmeP2pQueue>(ENOENT, "nvme: no NVMe function " + num(h));
  if (!S.pd(pd)) return rfail<NvmeP2pQueue>(ENOENT, "pd: no PD with handle " + num(pd));
  nvme::Controller& c = *f->ctrl;
  if (depth < 2 || depth > c.config().mqes + 1) return rfail<NvmeP2pQueue>(EINVAL, "depth: must be 2.." + num(c.config().mqes + 1) + " (CAP.MQES)");
  if (f->next_p2p_qid > c.config().max_io_queues) return rfail<NvmeP2pQueue>(ENOSPC, "nvme: every I/O queue pair is in use");
  auto alloc = [&](uint64_t len) -> Result<BufferInfo> {
    Result<BufferInfo> b = s.alloc_buffer((len + 4095) & ~uint64_t(4095));
    if (b.ok()) f->buffers.push_back(b.value.handle);
    return b;
  };
  if (!c.enabled()) {   // bring the controller up: admin queues of 32 entries, CC.EN = 1 (3.5.1)
    if (c.fatal()) return rfail<NvmeP2pQueue>(EIO, "nvme: controller fatal status (CSTS.CFS); reset it first");
    if (!f->admin_sq_buf) {
      auto a = alloc(32 * nvme::kSqeSize), b = alloc(32 * nvme::kCqeSize);
      if (!a.ok()) return rfail<NvmeP2pQueue>(a.err, a.msg);
      if (!b.ok()) return rfail<NvmeP2pQueue>(b.err, b.msg);
      f->admin_sq_buf = a.value.handle; f->asq = a.value.addr; f->admin_cq_buf = b.value.handle; f->acq = b.value.addr;
    }
    std::vector<uint8_t> zero(32 * nvme::kCqeSize, 0);
    s.write_memory(f->acq, zero.data(), zero.size());
    f->asq_tail = 0; f->acq_head = 0; f->acq_phase = true;
    c.write32(nvme::REG_AQA, 31u << 16 | 31u);
    c.write64(nvme::REG_ASQ, f->asq); c.write64(nvme::REG_ACQ, f->acq);
    c.write32(nvme::REG_CC, nvme::CC_EN);
  }
  auto admin = [&](nvme::Sqe e) -> uint16_t {
    e.set_cid(f->asq_tail);
    s.write_memory(f->asq + uint64_t(f->asq_tail) * nvme::kSqeSize, e.b, nvme::kSqeSize);
    f->asq_tail = uint16_t((f->asq_tail + 1) % 32);
    c.write32(nvme::doorbell_offset(0, false, c.config().dstrd), f->asq_tail);
    c.process();
    uint8_t raw[nvme::kCqeSize];
    s.read_memory(f->acq + uint64_t(f->acq_head) * nvme::kCqeSize, raw, nvme::kCqeSize);
    nvme::Cqe r = nvme::Cqe::decode(raw);
    if (r.phase() != f->acq_phase) return nvme::status_field(nvme::SCT_GENERIC, nvme::SC_INTERNAL, true);
    if (++f->acq_head == 32) { f->acq_head = 0; f->acq_phase = !f->acq_phase; }
    c.write32(nvme::doorbell_offset(0, true, c.config().dstrd), f->acq_head);
    return uint16_t(r.status & ~1u);
  };
  NvmeP2pQueue q;
  q.qid = f->next_p2p_qid; q.depth = depth;
  auto sb = alloc(uint64_t(depth) * nvme::kSqeSize), cb = alloc(uint64_t(depth) * nvme::kCqeSize);
  if (!sb.ok()) return rfail<NvmeP2pQueue>(sb.err, sb.msg);
  if (!cb.ok()) return rfail<NvmeP2pQueue>(cb.err, cb.msg);
  q.sq_buffer = sb.value.handle; q.sq_addr = sb.value.addr; q.cq_buffer = cb.value.handle; q.cq_addr = cb.value.addr;
  nvme::Sqe e;
  e.set_opc(nvme::ADM_CREATE_IO_CQ); e.set_prp(q.cq_addr, 0);
  e.set_dw(10, uint32_t(depth - 1) << 16 | q.qid); e.set_dw(11, 1);   // PC = 1, IEN = 0: no interrupt (P2P queues)
  if (uint16_t st = admin(e)) return rfail<NvmeP2pQueue>(EIO, std::string("Create I/O CQ: ") + nvme::status_name(uint8_t((st >> 9) & 7), uint8_t(st >> 1)));
  nvme::Sqe e2;
  e2.set_opc(nvme::ADM_CREATE_IO_SQ); e2.set_prp(q.sq_addr, 0);
  e2.set_dw(10, uint32_t(depth - 1) << 16 | q.qid); e2.set_dw(11, uint32_t(q.qid) << 16 | 1);
  if (uint16_t st = admin(e2)) return rfail<NvmeP2pQueue>(EIO, std::string("Create I/O SQ: ") + nvme::status_name(uint8_t((st >> 9) & 7), uint8_t(st >> 1)));
  f->next_p2p_qid++;
  auto sm = s.reg_mr(pd, q.sq_addr, uint64_t(depth) * nvme::kSqeSize, ACCESS_LOCAL_WRITE);
  auto cm = s.reg_mr(pd, q.cq_addr, uint64_t(depth) * nvme::kCqeSize, ACCESS_LOCAL_WRITE);
  if (!sm.ok()) return rfail<NvmeP2pQueue>(sm.err, sm.msg);
  if (!cm.ok()) return rfail<NvmeP2pQueue>(cm.err, cm.msg);
  q.sq_mr = sm.value.handle; q.cq_mr = cm.value.handle;
  q.sqdb = f->bar0 + nvme::doorbell_offset(q.qid, false, c.config().dstrd);
  q.cqdb = f->bar0 + nvme::doorbell_offset(q.qid, true, c.config().dstrd);
  return rok(q);
}

// ---- backend controllers and the namespace map
Result<Handle> srq_create_nvme_ctrl(Session& s, Handle srqh, const NvmeCtrlAttr& a) {
  auto lk = s.internals().lock();
  SessionImpl& S = s.internals();
  NvmfState& N = state(S);
  auto it = N.srqs.find(srqh);
  if (it == N.srqs.end() || !S.srq(srqh)) return rfail<Handle>(EINVAL, "srq: " + num(srqh) + " is not an NVMF offload SRQ");
  NvmfSrq& x = it->second;
  const NvmfCaps& caps = S.profile_of(x.dev).nvmf;
  if (x.ctrls.size() >= caps.max_srq_backend_ctrls) return rfail<Handle>(ENOSPC, "srq: max_srq_backend_ctrls (" + num(caps.max_srq_backend_ctrls) + ") reached");
  uint32_t total = 0;
  for (auto& [h, c] : N.ctrls) if (S.srq(c.srq) && N.srqs[c.srq].dev == x.dev) total++;
  if (total >= caps.max_backend_ctrls_total) return rfail<Handle>(ENOSPC, "device: max_backend_ctrls_total (" + num(caps.max_backend_ctrls_total) + ") reached");
  if (Status st = check_mr_sg(S, a.sq_buf, x.pd, "sq_buf"); !st.ok()) return rfail<Handle>(st.err, st.msg);
  if (Status st = check_mr_sg(S, a.cq_buf, x.pd, "cq_buf"); !st.ok()) return rfail<Handle>(st.err, st.msg);
  if ((a.sq_buf.addr | a.cq_buf.addr) & 63) return rfail<Handle>(EINVAL, "sq_buf / cq_buf: rings must be 64-byte aligned");
  const uint32_t depth = uint32_t(a.sq_buf.len / nvme::kSqeSize);
  if (a.sq_buf.len % nvme::kSqeSize || a.cq_buf.len != uint64_t(depth) * nvme::kCqeSize)
    return rfail<Handle>(EINVAL, "sq_buf / cq_buf: lengths must hold the same number of 64-byte SQEs and 16-byte CQEs");
  if (depth < 2) return rfail<Handle>(EINVAL, "sq_buf: at least 2 entries");
  uint32_t off_s = 0, off_c = 0;
  NvmeFn* fs = fn_at(N, a.sqdb, off_s);
  NvmeFn* fc = fn_at(N, a.cqdb, off_c);
  if (!fs || (a.sqdb & 3)) return rfail<Handle>(EINVAL, "sqdb: " + hex(a.sqdb) + " is not a doorbell of an NVMe BAR");
  if (!fc || fc != fs || (a.cqdb & 3)) return rfail<Handle>(EINVAL, "cqdb: " + hex(a.cqdb) + " is not a doorbell of the same NVMe BAR");
  const uint32_t dstrd = fs->ctrl->config().dstrd;
  if (off_s < nvme::REG_DOORBELL_BASE || off_c != off_s + (4u << dstrd) || ((off_s - nvme::REG_DOORBELL_BASE) / (4u << dstrd)) % 2)
    return rfail<Handle>(EINVAL, "sqdb / cqdb: not the SQ y tail / CQ y head pair (0x1000 + (2y)(4 << DSTRD), + (4 << DSTRD))");
  if (a.sqdb_ini >= depth || a.cqdb_ini >= depth) return rfail<Handle>(EINVAL, "sqdb_ini / cqdb_ini: beyond the ring");
  if (a.cmd_timeout_ms < caps.min_cmd_timeout_ms || a.cmd_timeout_ms > caps.max_cmd_timeout_ms)
    return rfail<Handle>(EINVAL, "cmd_timeout_ms: must be " + num(caps.min_cmd_timeout_ms) + ".." + num(caps.max_cmd_timeout_ms));
  NvmfCtrl c;
  c.h = S.new_handle(); c.srq = srqh; c.nvme = fs->h; c.attr = a; c.depth = depth;
  c.sq_tail = a.sqdb_ini; c.cq_head = a.cqdb_ini; c.phase = true;
  x.ctrls.push_back(c.h);
  N.ctrls[c.h] = c;
  if (S.capture) {
    auto& e = S.emit(EventKind::ObjectModified, x.dev, srqh, "srq", "nvme_ctrl " + num(c.h) + " attached: SQ " + hex(a.sq_buf.addr) + " CQ " + hex(a.cq_buf.addr) +
                                                                       " x" + num(depth) + ", doorbells " + hex(a.sqdb) + " / " + hex(a.cqdb));
    e.a = c.h; e.b = a.sqdb; e.c = a.cqdb; e.d = depth;
  }
  return rok(c.h);
}

Status srq_remove_nvme_ctrl(Session& s, Handle ch) {
  auto lk = s.internals().lock();
  SessionImpl& S = s.internals();
  NvmfState& N = state(S);
  auto it = N.ctrls.find(ch);
  if (it == N.ctrls.end()) return fail(ENOENT, "nvme_ctrl: no backend controller " + num(ch));
  if (!it->second.by_be_cid.empty()) return fail(EBUSY, "nvme_ctrl: " + num(it->second.by_be_cid.size()) + " commands in flight");
  auto sit = N.srqs.find(it->second.srq);
  if (sit != N.srqs.end()) {
    for (auto& [fe, n] : sit->second.ns) if (n.ctrl == ch) return fail(EBUSY, "nvme_ctrl: fe_nsid " + num(fe) + " still mapped to it");
    auto& v = sit->second.ctrls;
    v.erase(std::remove(v.begin(), v.end(), ch), v.end());
  }
  N.ctrls.erase(it);
  return ok();
}

Status map_nvmf_nsid(Session& s, Handle ch, uint32_t fe_nsid, uint32_t lba_data_size, uint32_t nvme_nsid) {
  auto lk = s.internals().lock();
  SessionImpl& S = s.internals();
  NvmfState& N = state(S);
  auto it = N.ctrls.find(ch);
  if (it == N.ctrls.end()) return fail(EINVAL, "nvme_ctrl: no backend controller " + num(ch));
  NvmfCtrl& c = it->second;
  NvmfSrq& x = N.srqs[c.srq];
  const NvmfCaps& caps = S.profile_of(x.dev).nvmf;
  if (fe_nsid == 0 || fe_nsid == 0xFFFFFFFFu) return fail(EINVAL, "fe_nsid: 0 and 0xFFFFFFFF are not namespace IDs");
  if (x.ns.count(fe_nsid)) return fail(EEXIST, "fe_nsid: " + num(fe_nsid) + " already mapped (to ctrl " + num(x.ns[fe_nsid].ctrl) + ")");
  if (!(nvmf_lba_size_bit(lba_data_size) & caps.lba_data_sizes))
    return fail(ENOTSUP, "lba_data_size: " + num(lba_data_size) + " not in the device's supported LBA data sizes");
  const uint32_t be = N.fns[c.nvme].ctrl->block_size(nvme_nsid);
  if (!be) return fail(EINVAL, "nvme_nsid: the backend controller has no namespace " + num(nvme_nsid));
  if (lba_data_size % be) return fail(ENOTSUP, "lba_data_size: " + num(lba_data_size) + " is not a multiple of the backend block (" + num(be) + " bytes)");
  if (x.ns.size() >= x.attr.max_namespaces) return fail(ENOSPC, "srq: max_namespaces (" + num(x.attr.max_namespaces) + ") mapped");
  NvmfNs n;
  n.fe_nsid = fe_nsid; n.ctrl = ch; n.nsid = nvme_nsid; n.lba_data_size = lba_data_size; n.be_block = be;
  x.ns[fe_nsid] = n;
  if (S.capture) {
    auto& e = S.emit(EventKind::ObjectModified, x.dev, x.h, "srq", "map_nvmf_nsid: fe_nsid " + num(fe_nsid) + " -> ctrl " + num(ch) + " nsid " + num(nvme_nsid) + ", " + num(lba_data_size) + "-byte blocks");
    e.a = fe_nsid; e.b = ch; e.c = nvme_nsid; e.d = lba_data_size;
  }
  return ok();
}

Status unmap_nvmf_nsid(Session& s, Handle ch, uint32_t fe_nsid) {
  auto lk = s.internals().lock();
  SessionImpl& S = s.internals();
  NvmfState& N = state(S);
  auto it = N.ctrls.find(ch);
  if (it == N.ctrls.end()) return fail(EINVAL, "nvme_ctrl: no backend controller " + num(ch));
  NvmfSrq& x = N.srqs[it->second.srq];
  auto n = x.ns.find(fe_nsid);
  if (n == x.ns.end() || n->second.ctrl != ch) return fail(ENOENT, "fe_nsid: " + num(fe_nsid) + " is not mapped on ctrl " + num(ch));
  for (auto& [id, cmd] : N.cmds) if (cmd.srq == x.h && cmd.fe_nsid == fe_nsid) return fail(EBUSY, "fe_nsid: commands in flight");
  x.ns.erase(n);
  if (S.capture) { auto& e = S.emit(EventKind::ObjectModified, x.dev, x.h, "srq", "unmap_nvmf_nsid: fe_nsid " + num(fe_nsid)); e.a = fe_nsid; e.b = ch; }
  return ok();
}

Status qp_set_nvmf(Session& s, Handle qph, uint32_t flags) {
  auto lk = s.internals().lock();
  SessionImpl& S = s.internals();
  Qp* q = S.qp(qph);
  if (!q) return fail(ENOENT, "qp: no QP with handle " + num(qph));
  if (flags != QP_NVMF_ATTR_FLAG_ENABLE) return fail(EINVAL, "flags: only IBV_QP_NVMF_ATTR_FLAG_ENABLE (1) is defined");
  if (!S.profile_of(q->dev).nvmf.offload_type_rc) return fail(EOPNOTSUPP, "qp: the device has no NVMe-oF offload");
  if (q->init.qp_type != QPT_RC) return fail(EINVAL, "qp: offload is for RC QPs");
  NvmfState& N = state(S);
  auto x = N.srqs.find(q->init.srq);
  if (x == N.srqs.end()) return fail(EINVAL, "qp: does not receive from an NVMF offload SRQ");
  if (q->state != QPS_RTS) return fail(EINVAL, std::string("qp: state ") + qp_state_name(q->state) + "; offload is enabled on a connected QP (RTS)");
  if (q->pd != x->second.pd) return fail(EINVAL, "qp: PD differs from the SRQ's (the staging buffer's lkey is used on it)");
  NvmfQp& nq = N.qps[qph];
  nq.enabled = true;
  if (S.capture) {
    auto& e = S.emit(EventKind::ObjectModified, q->dev, qph, "qp",
                     std::string("ibv_qp_set_nvmf(ENABLE): the device serves this QP's I/O capsules") + (nq.connect_seen ? "" : " (no Connect capsule seen on it yet)"));
    e.a = 0; e.b = flags; e.c = nq.connect_seen;
    e.why(Change::ModifyQp);
  }
  return ok();
}

Result<NvmfSnapshot> snapshot(Session& s, Handle srqh) {
  auto lk = s.internals().lock();
  SessionImpl& S = s.internals();
  NvmfState& N = state(S);
  auto it = N.srqs.find(srqh);
  if (it == N.srqs.end()) return rfail<NvmfSnapshot>(ENOENT, "srq: " + num(srqh) + " is not an NVMF offload SRQ");
  const NvmfSrq& x = it->second;
  NvmfSnapshot r;
  r.srq = srqh; r.device = x.dev; r.attr = x.attr; r.staging_page_size = x.page_size; r.staging_pages = x.pages;
  r.counters = x.counters;
  for (Handle ch : x.ctrls) {
    const NvmfCtrl& c = N.ctrls.at(ch);
    NvmfSnapshot::Ctrl o;
    o.h = ch; o.nvme = c.nvme; o.alive = c.alive; o.sq_addr = c.attr.sq_buf.addr; o.cq_addr = c.attr.cq_buf.addr;
    o.sqdb = c.attr.sqdb; o.cqdb = c.attr.cqdb; o.depth = c.depth; o.sq_tail = c.sq_tail; o.cq_head = c.cq_head;
    o.phase = c.phase; o.inflight = uint32_t(c.by_be_cid.size()); o.cmd_timeout_ms = c.attr.cmd_timeout_ms;
    r.ctrls.push_back(o);
  }
  for (auto& [fe, n] : x.ns) r.namespaces.push_back({fe, n.ctrl, n.nsid, n.lba_data_size, n.counters});
  for (auto& [id, c] : N.cmds)
    if (c.srq == srqh) r.inflight.push_back({id, c.qp, c.cid, c.be_cid, c.opc, c.fe_nsid, c.step});
  for (auto& [qh, q] : N.qps) if (q.enabled && S.qp(qh) && S.qp(qh)->init.srq == srqh) r.enabled_qps.push_back(qh);
  return rok(std::move(r));
}

Result<NvmeSnapshot> nvme_snapshot(Session& s, Handle h) {
  auto lk = s.internals().lock();
  NvmeFn* f = fn(s.internals(), h);
  if (!f) return rfail<NvmeSnapshot>(ENOENT, "nvme: no NVMe function " + num(h));
  NvmeSnapshot r;
  const nvme::Controller& c = *f->ctrl;
  r.h = h; r.bar0 = f->bar0; r.bar_size = c.bar_size();
  r.cc = c.read32(nvme::REG_CC); r.csts = c.read32(nvme::REG_CSTS); r.dstrd = c.config().dstrd;
  r.queues = c.queues();
  for (uint32_t id : c.namespaces()) {
    nvme::NamespaceConfig n; n.nsid = id; n.nlba = c.nlba(id);
    const uint32_t bs = c.block_size(id);
    n.lba_data = bs >= 4096 ? 4096 : 512; n.lba_meta = bs - n.lba_data;
    r.namespaces.push_back(n);
  }
  r.counters = c.counters();
  return rok(std::move(r));
}

}  // namespace nvmf
}  // namespace vl
