// NVMe-oF target offload, the data path (vl/nvmf.h): the device's offload engine. For every command capsule that
// lands in an NVMF SRQ's receive buffer on an offload-enabled RC QP, the device parses the SQE and its SGL (NVMe-oF
// RDMA transport binding; NVMe base spec 4.3 SGL descriptors), reserves staging pages, pulls WRITE data with RDMA READ
// (or copies in-capsule data), writes the backend SQE with PRPs into staging, rings the backend SQ tail doorbell,
// reaps the CQE by its phase tag, rings the CQ head doorbell, pushes READ data with RDMA WRITE and SENDs the
// response capsule. Everything else completes to software as an ordinary receive.
// MODELLED: vendors never published the HCA's internals; the order of checks follows the RFC's attributes and
// MLNX_OFED's counters (docs/nvmf-offload.md), the timing (step_ns, backend_latency_ns) is the lab's.
#include <algorithm>
#include <cstring>

#include "core/nvmf_offload.h"

namespace vl {

namespace {
constexpr uint64_t k4K = 4096;
std::string num(uint64_t v) { return std::to_string(v); }
const char* step_name(NvmfStep s) { const char* n = name_of(kNvmfStepNames, uint32_t(s)); return n ? n : "?"; }
uint32_t le24(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16; }
uint32_t le32(const uint8_t* p) { return le24(p) | uint32_t(p[3]) << 24; }
}  // namespace

void nvmf_push(SessionImpl& S, uint16_t op, uint64_t id, Handle obj, uint64_t delay) {
  Action a;
  a.kind = Action::Nvmf; a.t = S.now + delay; a.gen = id; a.qp = obj; a.ip_id = op;
  S.push(std::move(a));
}

Event* nvmf_emit(SessionImpl& S, Handle dev, Handle obj, const char* obj_kind, NvmfStep step, uint64_t b, uint64_t c, uint64_t d, std::string text) {
  if (!S.capture) return nullptr;
  Event& e = S.emit(EventKind::Offload, dev, obj, obj_kind, std::string(step_name(step)) + ": " + text + " (modelled)");
  e.a = uint64_t(step); e.b = b; e.c = c; e.d = d;
  return &e;
}

namespace {

struct Engine {
  SessionImpl& S;
  NvmfState& N;

  void step(NvmfCmd& c, NvmfStep s, uint64_t cc, uint64_t d, std::string text) {
    c.step = s;
    Qp* q = S.qp(c.qp);
    nvmf_emit(S, q ? q->dev : 0, c.qp, "qp", s, c.cid, cc, d, "cid " + num(c.cid) + " " + text);
  }

  void free_staging(NvmfSrq& x, NvmfCmd& c) {
    for (uint32_t i = 0; i < c.npages; i++) x.pages[c.first_page + i] = 0;
    c.npages = 0;
  }

  // The receive buffer of a served capsule goes back to the SRQ (modelled: the device reuses it)
  void recycle(NvmfCmd& c) {
    Srq* s = S.srq(c.srq);
    if (!s) return;
    s->q.push_back(c.recv);
    s->posted++;
    if (S.capture) { auto& e = S.emit(EventKind::WqePosted, s->dev, s->h, "srq", "receive buffer recycled by the offload engine (modelled)"); e.a = c.recv.wr_id; e.b = s->q.size(); }
  }

  void wake(NvmfSrq& x) {
    while (!x.waiting.empty()) {
      uint32_t id = x.waiting.front();
      x.waiting.pop_front();
      if (N.cmds.count(id)) { nvmf_push(S, NVMF_ADVANCE, id, 0, N.step_ns); break; }
    }
  }

  // The command leaves the device (done or aborted): staging freed, receive buffer recycled, waiters woken.
  void retire(uint32_t id) {
    auto it = N.cmds.find(id);
    if (it == N.cmds.end()) return;
    NvmfCmd& c = it->second;
    auto xit = N.srqs.find(c.srq);
    if (auto cit = N.ctrls.find(c.ctrl); cit != N.ctrls.end() && c.state == CmdState::Backend) cit->second.by_be_cid.erase(c.be_cid);
    recycle(c);
    if (xit != N.srqs.end()) free_staging(xit->second, c);
    N.cmds.erase(it);
    if (xit != N.srqs.end()) wake(xit->second);
  }

  void abort_fatal(uint32_t id, const std::string& why) {
    auto it = N.cmds.find(id);
    if (it == N.cmds.end()) return;
    NvmfCmd& c = it->second;
    if (auto xit = N.srqs.find(c.srq); xit != N.srqs.end()) {
      xit->second.counters.errors++;
      if (auto n = xit->second.ns.find(c.fe_nsid); n != xit->second.ns.end()) n->second.counters.error_cmds++;
    }
    if (Qp* q = S.qp(c.qp); q && q->state != QPS_ERR) {
      S.async_event(q->dev, q->h, "qp", EVENT_QP_FATAL, "IBV_EVENT_QP_FATAL: NVMe-oF offload: " + why);
      S.qp_to_error(*q, "NVMe-oF offload: " + why);
    }
    retire(id);
  }

  bool qp_ok(const NvmfCmd& c) {
    Qp* q = S.qp(c.qp);
    auto nq = N.qps.find(c.qp);
    return q && q->state == QPS_RTS && nq != N.qps.end() && nq->second.gen == c.qp_gen;
  }

  // the device's own work request on the QP (no user CQE; completes to nvmf_wqe_done)
  void post(NvmfCmd& c, SendWr wr) {
    Qp& q = *S.qp(c.qp);
    SendWqe e;
    uint64_t len = 0;
    for (auto& s : wr.sg_list) len += s.length;
    if (wr.send_flags & SEND_INLINE) len = wr.inline_data.size();
    e.wr = std::move(wr);
    e.length = len;
    e.offload = c.id;
    q.sq.push_back(std::move(e));
    q.sq_posted++;
    if (S.capture) {
      auto& ev = S.emit(EventKind::WqePosted, q.dev, q.h, "qp", std::string("offload engine WR for cid ") + num(c.cid) + " (modelled)");
      ev.a = q.sq.back().wr.wr_id; ev.b = q.sq.back().wr.opcode; ev.c = len; ev.d = q.sq.size();
    }
    S.schedule_req(q);
  }

  void advance(uint32_t id) {
    auto it = N.cmds.find(id);
    if (it == N.cmds.end()) return;
    NvmfCmd& c = it->second;
    NvmfSrq& x = N.srqs.at(c.srq);
    if (!qp_ok(c)) return retire(id);
    if (c.state == CmdState::Staging) {
      if (c.len && !c.npages) {
        const uint64_t pages4k = (c.len + k4K - 1) / k4K;
        const uint64_t list = pages4k > 2 ? 1 : 0;   // a PRP list page after the data (4.1.1)
        const uint32_t need = uint32_t((c.len + list * k4K + x.page_size - 1) / x.page_size);
        uint32_t run = 0, first = 0;
        bool found = false;
        for (uint32_t i = 0; i < x.pages.size(); i++) {
          if (x.pages[i]) { run = 0; continue; }
          if (run++ == 0) first = i;
          if (run == need) { found = true; break; }
        }
        if (!found) {
          if (std::find(x.waiting.begin(), x.waiting.end(), id) == x.waiting.end()) {
            x.waiting.push_back(id);
            x.counters.staging_waits++;
            step(c, NvmfStep::StagingWait, need, 0, "waits for " + num(need) + " staging pages");
          }
          return;
        }
        for (uint32_t i = 0; i < need; i++) x.pages[first + i] = id;
        c.first_page = first; c.npages = need;
        c.staging = x.attr.staging_buf.addr + uint64_t(first) * x.page_size;
        c.prp_list = list ? c.staging + ((c.len + k4K - 1) & ~(k4K - 1)) : 0;
        step(c, NvmfStep::StagingAlloc, first, need, "staging pages " + num(first) + ".." + num(first + need - 1));
      }
      if (c.opc == nvme::OPC_WRITE && c.sgl_id != 0x01) {
        SendWr w;
        w.wr_id = id; w.opcode = WR_RDMA_READ;
        w.sg_list = {Sge{c.staging, uint32_t(c.len), x.lkey}};
        w.remote_addr = c.host_addr; w.rkey = c.rkey;
        c.state = CmdState::ReadingHost;
        step(c, NvmfStep::RdmaRead, c.len, c.rkey, "RDMA READ " + num(c.len) + " bytes from " + hex(c.host_addr) + " rkey " + key_text(c.rkey));
        post(c, std::move(w));
        return;
      }
      if (c.opc == nvme::OPC_WRITE) {
        uint8_t* p = S.host(c.staging, c.len);
        if (p) { std::memcpy(p, c.icd.data(), c.len); S.note_write(x.dev, c.staging, c.len); }
        step(c, NvmfStep::IcdCopy, c.len, 0, "in-capsule data " + num(c.len) + " bytes to staging");
      }
      c.state = CmdState::Submitting;
    }
    if (c.state == CmdState::Submitting) submit(c);
  }

  void submit(NvmfCmd& c) {
    NvmfSrq& x = N.srqs.at(c.srq);
    NvmfCtrl& b = N.ctrls.at(c.ctrl);
    if (!b.alive) return abort_fatal(c.id, "backend controller down");
    if (b.by_be_cid.size() + 1 >= b.depth) { nvmf_push(S, NVMF_ADVANCE, c.id, 0, N.backend_latency_ns); return; }   // backend SQ full
    const NvmfNs& n = x.ns.at(c.fe_nsid);
    const uint32_t ratio = n.lba_data_size / n.be_block;
    while (b.by_be_cid.count(b.next_be_cid)) b.next_be_cid++;
    c.be_cid = b.next_be_cid++;
    nvme::Sqe e;
    e.set_opc(c.opc); e.set_cid(c.be_cid); e.set_nsid(n.nsid);
    if (c.opc != nvme::OPC_FLUSH) {
      e.set_dw(12, c.sqe.cdw(12) & 0xFFFF0000u);   // FUA / LR / PRINFO as the host sent them
      e.set_dw(13, c.sqe.cdw(13)); e.set_dw(14, c.sqe.cdw(14)); e.set_dw(15, c.sqe.cdw(15));
      e.set_rw(c.sqe.slba() * ratio, c.sqe.nlb() * ratio);
      const uint64_t pages4k = (c.len + k4K - 1) / k4K;
      uint64_t prp2 = 0;
      if (pages4k == 2) prp2 = c.staging + k4K;
      else if (pages4k > 2) {
        std::vector<uint8_t> list(size_t(pages4k - 1) * 8);
        for (uint64_t i = 1; i < pages4k; i++) { uint64_t a = c.staging + i * k4K; std::memcpy(list.data() + (i - 1) * 8, &a, 8); }
        if (uint8_t* p = S.host(c.prp_list, list.size())) { std::memcpy(p, list.data(), list.size()); S.note_write(x.dev, c.prp_list, list.size()); }
        prp2 = c.prp_list;
      }
      e.set_prp(c.staging, prp2);
    }
    const uint16_t slot = b.sq_tail;
    const uint64_t at = b.attr.sq_buf.addr + uint64_t(slot) * nvme::kSqeSize;
    if (uint8_t* p = S.host(at, nvme::kSqeSize)) { std::memcpy(p, e.b, nvme::kSqeSize); S.note_write(x.dev, at, nvme::kSqeSize); }
    b.by_be_cid[c.be_cid] = c.id;
    c.state = CmdState::Backend;
    step(c, NvmfStep::SqeWrite, slot, c.be_cid, "backend SQE " + std::string(nvme::opcode_name(c.opc)) + " nsid " + num(n.nsid) + " at SQ slot " + num(slot) + ", backend cid " + num(c.be_cid));
    b.sq_tail = uint16_t((slot + 1) % b.depth);
    NvmeFn& f = N.fns.at(b.nvme);
    f.ctrl->write32(uint32_t(b.attr.sqdb - f.bar0), b.sq_tail);
    step(c, NvmfStep::SqDoorbell, b.sq_tail, b.attr.sqdb, "SQ tail doorbell " + hex(b.attr.sqdb) + " <- " + num(b.sq_tail));
    c.deadline = S.now + uint64_t(b.attr.cmd_timeout_ms) * 1000000ull;
    nvmf_push(S, NVMF_BACKEND, 0, b.nvme, N.backend_latency_ns);
    if (!b.watchdog_pending) { b.watchdog_pending = true; nvmf_push(S, NVMF_TIMEOUT, 0, b.h, c.deadline - S.now); }
  }

  // The soft SSD runs, then the device polls each backend CQ attached to it (P2P CQs have no interrupt: phase tag)
  void backend(Handle fnh) {
    auto fit = N.fns.find(fnh);
    if (fit == N.fns.end()) return;
    fit->second.ctrl->process();
    for (auto& [ch, b] : N.ctrls) if (b.nvme == fnh && b.alive) reap(b);
  }

  void reap(NvmfCtrl& b) {
    NvmeFn& f = N.fns.at(b.nvme);
    for (;;) {
      const uint64_t at = b.attr.cq_buf.addr + uint64_t(b.cq_head) * nvme::kCqeSize;
      const uint8_t* p = S.host(at, nvme::kCqeSize);
      if (!p) return;
      nvme::Cqe r = nvme::Cqe::decode(p);
      if (r.phase() != b.phase) return;
      const uint16_t slot = b.cq_head;
      if (++b.cq_head == b.depth) { b.cq_head = 0; b.phase = !b.phase; }
      f.ctrl->write32(uint32_t(b.attr.cqdb - f.bar0), b.cq_head);
      auto m = b.by_be_cid.find(r.cid);
      if (m == b.by_be_cid.end()) continue;   // a late CQE of a command already failed
      const uint32_t id = m->second;
      b.by_be_cid.erase(m);
      auto it = N.cmds.find(id);
      if (it == N.cmds.end()) continue;
      NvmfCmd& c = it->second;
      c.status = uint16_t(r.status & ~1u); c.dw0 = r.dw0; c.dw1 = r.dw1;
      c.state = CmdState::Responding;
      step(c, NvmfStep::Cqe, slot, r.status, "backend CQE slot " + num(slot) + " phase " + num(r.phase()) + " " + nvme::status_name(r.sct(), r.sc()));
      step(c, NvmfStep::CqDoorbell, b.cq_head, b.attr.cqdb, "CQ head doorbell " + hex(b.attr.cqdb) + " <- " + num(b.cq_head));
      respond(c);
    }
  }

  void respond(NvmfCmd& c) {
    if (!qp_ok(c)) return retire(c.id);
    NvmfSrq& x = N.srqs.at(c.srq);
    Qp& q = *S.qp(c.qp);
    if (c.status) {
      x.counters.errors++;
      if (auto n = x.ns.find(c.fe_nsid); n != x.ns.end()) { n->second.counters.error_cmds++; n->second.counters.backend_error_cmds++; }
    }
    if (c.opc == nvme::OPC_READ && c.status == 0) {
      SendWr w;
      w.wr_id = c.id; w.opcode = WR_RDMA_WRITE;
      w.sg_list = {Sge{c.staging, uint32_t(c.len), x.lkey}};
      w.remote_addr = c.host_addr; w.rkey = c.rkey;
      step(c, NvmfStep::RdmaWrite, c.len, c.rkey, "RDMA WRITE " + num(c.len) + " bytes to " + hex(c.host_addr) + " rkey " + key_text(c.rkey));
      post(c, std::move(w));
    }
    nvme::Cqe r;
    r.dw0 = c.dw0; r.dw1 = c.dw1; r.sqhd = N.qps[c.qp].sqhd; r.sqid = 0; r.cid = c.cid; r.status = c.status;
    SendWr w;
    w.wr_id = c.id; w.opcode = WR_SEND; w.send_flags = SEND_INLINE;
    w.inline_data.resize(nvme::kCqeSize);
    r.encode(w.inline_data.data());
    const bool inv = c.sgl_id == 0x4F && (S.profile_of(q.dev).device_cap_flags & DEVICE_MEM_MGT_EXTENSIONS);
    if (inv) { w.opcode = WR_SEND_WITH_INV; w.imm_data = c.rkey; }
    step(c, NvmfStep::SendResponse, c.status, inv, std::string(inv ? "SEND_WITH_INV" : "SEND") + " response capsule, status " +
                                                          nvme::status_name(uint8_t((c.status >> 9) & 7), uint8_t(c.status >> 1)));
    post(c, std::move(w));
  }

  void finish(uint32_t id, uint32_t opcode, uint32_t status) {
    auto it = N.cmds.find(id);
    if (it == N.cmds.end()) return;
    NvmfCmd& c = it->second;
    if (status != WC_SUCCESS) {
      step(c, NvmfStep::RdmaError, status, opcode, std::string("device work request failed: ") + wc_status_name(status));
      return abort_fatal(id, std::string("device work request failed: ") + wc_status_name(status));
    }
    if (opcode == WR_RDMA_READ) {
      step(c, NvmfStep::RdmaReadDone, c.len, 0, "write data in staging");
      c.state = CmdState::Submitting;
      return submit(c);
    }
    if (opcode != WR_SEND && opcode != WR_SEND_WITH_INV) return;   // the RDMA WRITE before the response
    NvmfSrq& x = N.srqs.at(c.srq);
    if (auto n = x.ns.find(c.fe_nsid); n != x.ns.end() && c.status == 0) {
      const uint64_t blocks = c.opc == nvme::OPC_FLUSH ? 0 : c.sqe.nlb();
      auto& k = n->second.counters;
      if (c.opc == nvme::OPC_READ) { k.read_cmds++; k.read_blocks += blocks; }
      if (c.opc == nvme::OPC_WRITE) { k.write_cmds++; k.write_blocks += blocks; if (c.sgl_id == 0x01) k.write_inline_cmds++; }
      if (c.opc == nvme::OPC_FLUSH) k.flush_cmds++;
    }
    step(c, NvmfStep::Done, c.status, 0, "response acknowledged; staging freed, receive buffer recycled");
    retire(id);
  }

  // The ctrl's command watchdog: the oldest command at the backend past its deadline fails the ctrl; otherwise the
  // watchdog re-arms at the oldest deadline, or stops when nothing is at the backend.
  void timeout(Handle ctrl) {
    auto b = N.ctrls.find(ctrl);
    if (b == N.ctrls.end()) return;
    b->second.watchdog_pending = false;
    if (!b->second.alive) return;
    uint32_t oldest = 0; uint64_t when = UINT64_MAX;
    for (auto& [bc, id] : b->second.by_be_cid)
      if (auto it = N.cmds.find(id); it != N.cmds.end() && it->second.deadline < when) { when = it->second.deadline; oldest = id; }
    if (!oldest) return;
    if (when <= S.now) return nvmf_backend_fatal(S, b->second, NvmfStep::BackendTimeout, oldest);
    b->second.watchdog_pending = true;
    nvmf_push(S, NVMF_TIMEOUT, 0, ctrl, when - S.now);
  }
};

}  // namespace

// The backend controller is torn down (N3: nvmet schedules its teardown without restart); the commands in flight
// on it are lost and their QPs go to error (modelled: the QP is fatal, as for an XRQ QP_ERROR).
void nvmf_backend_fatal(SessionImpl& S, NvmfCtrl& b, NvmfStep why, uint32_t cmd_id) {
  NvmfState& N = *S.nvmf;
  Engine E{S, N};
  b.alive = false;
  const NvmfSrq* x = N.srqs.count(b.srq) ? &N.srqs.at(b.srq) : nullptr;
  uint16_t cid = 0;
  if (auto it = N.cmds.find(cmd_id); it != N.cmds.end()) { cid = it->second.cid; it->second.step = why; }
  nvmf_emit(S, x ? x->dev : 0, b.srq, "srq", why, cid, b.h, b.nvme,
            std::string(why == NvmfStep::BackendTimeout ? "IBV_EVENT_NVME_TIMEOUT: no backend CQE for cid " + num(cid) + " in " + num(b.attr.cmd_timeout_ms) + " ms"
                                                        : "IBV_EVENT_NVME_PCI_ERR: backend NVMe controller fatal") + "; nvme_ctrl " + num(b.h) + " torn down");
  std::vector<uint32_t> lost;
  for (auto& [bc, id] : b.by_be_cid) lost.push_back(id);
  b.by_be_cid.clear();
  for (auto& [id, c] : N.cmds) if (c.ctrl == b.h && std::find(lost.begin(), lost.end(), id) == lost.end()) lost.push_back(id);
  for (uint32_t id : lost) {
    if (auto it = N.cmds.find(id); it != N.cmds.end()) {
      it->second.state = CmdState::Finished;
      if (auto xit = N.srqs.find(it->second.srq); xit != N.srqs.end())
        if (auto n = xit->second.ns.find(it->second.fe_nsid); n != xit->second.ns.end()) n->second.counters.backend_error_cmds++;
    }
    E.abort_fatal(id, why == NvmfStep::BackendTimeout ? "backend command timeout" : "backend PCI error");
  }
}

// Reset or destroy of a QP: its commands waiting for staging or for the device's own work requests (which the reset
// dropped) retire now; those at the backend keep their staging until their CQE is reaped, since the SSD may still
// write into it (MLNX_OFED's QP_LAST_NVME_CQE_REACHED ordering), and then retire without a response.
void SessionImpl::nvmf_qp_gone(Handle qph) {
  Engine E{*this, *nvmf};
  NvmfQp& nq = nvmf->qps[qph];
  nq.gen++; nq.enabled = false; nq.connect_seen = false; nq.sqhd = 0;
  std::vector<uint32_t> drop;
  for (auto& [id, c] : nvmf->cmds) if (c.qp == qph && c.state != CmdState::Backend) drop.push_back(id);
  for (uint32_t id : drop) E.retire(id);
}

void SessionImpl::nvmf_action(const Action& a) {
  if (!nvmf) return;
  Engine E{*this, *nvmf};
  switch (a.ip_id) {
    case NVMF_ADVANCE: E.advance(uint32_t(a.gen)); break;
    case NVMF_BACKEND: E.backend(a.qp); break;
    case NVMF_TIMEOUT: E.timeout(a.qp); break;
    case NVMF_FINISH: E.finish(uint32_t(a.gen), a.src_dev, a.dst_dev); break;
  }
}

// complete_wqe of a device WR: continue the command in an action of its own (no re-entry into the completer)
void SessionImpl::nvmf_wqe_done(Qp& q, const SendWqe& w, uint32_t status) {
  if (!nvmf) return;
  Action a;
  a.kind = Action::Nvmf; a.t = now; a.gen = w.offload; a.ip_id = NVMF_FINISH;
  a.src_dev = w.wr.opcode; a.dst_dev = status;   // (the action's spare fields carry the WR opcode and ibv_wc_status)
  push(std::move(a));
}

// A receive completion from an NVMF SRQ: parse the capsule; true when the device serves it (no CQE for software).
bool SessionImpl::nvmf_recv(Qp& q, const Wc& wc) {
  if (wc.status != WC_SUCCESS || wc.opcode != WC_RECV) return false;
  auto xit = nvmf->srqs.find(q.init.srq);
  if (xit == nvmf->srqs.end()) return false;
  NvmfSrq& x = xit->second;
  NvmfQp& nq = nvmf->qps[q.h];
  nq.sqhd++;
  nvme::Sqe e;
  std::string why;
  const uint32_t got = std::min<uint32_t>(wc.byte_len, nvme::kSqeSize);
  if (got) copy_from_sges(x.pd, q.cur_wqe.sg_list, 0, e.b, got, why);
  const uint16_t cid = e.cid();
  const uint8_t opc = e.opc();
  auto pass = [&](NvmfPass r, const std::string& text) {
    x.counters.to_software++;
    nvmf_emit(*this, q.dev, q.h, "qp", NvmfStep::ToSoftware, cid, uint64_t(r), opc,
              "cid " + num(cid) + " " + text + ": ordinary receive completion for software");
    return false;
  };
  nvmf_emit(*this, q.dev, q.h, "qp", NvmfStep::Recv, cid, opc, e.nsid(),
            "capsule cid " + num(cid) + " opcode " + hex(opc, 2) + " nsid " + num(e.nsid()) + ", " + num(wc.byte_len) + " bytes");
  if (wc.byte_len < nvme::kSqeSize) return pass(NvmfPass::Malformed, "shorter than a 64-byte SQE");
  if (opc == nvme::OPC_FABRICS) {
    if (e.b[4] == 0x01) nq.connect_seen = true;   // FCTYPE Connect
    return pass(NvmfPass::AdminOrFabrics, "Fabrics command (FCTYPE " + hex(e.b[4], 2) + ")");
  }
  if (!nq.enabled) return pass(NvmfPass::NotEnabled, "QP not offload-enabled");
  const uint32_t bit = opc == nvme::OPC_WRITE ? uint32_t(NVMF_OP_WRITE) : opc == nvme::OPC_READ ? uint32_t(NVMF_OP_READ) : opc == nvme::OPC_FLUSH ? uint32_t(NVMF_OP_FLUSH) : 0u;
  if (!bit || !(x.attr.offload_ops & bit)) {
    nvmf_emit(*this, q.dev, q.h, "qp", NvmfStep::UnsupportedOp, cid, opc, x.attr.offload_ops,
              "UNSUPPORTED_NVMF_OP: opcode " + hex(opc, 2) + " (" + nvme::opcode_name(opc) + ") outside offload_ops " + num(x.attr.offload_ops));
    return pass(NvmfPass::OpNotOffloaded, std::string(nvme::opcode_name(opc)) + " not offloaded");
  }
  auto nit = x.ns.find(e.nsid());
  if (nit == x.ns.end()) {
    x.counters.unknown_namespace++;
    return pass(NvmfPass::UnknownNsid, "fe_nsid " + num(e.nsid()) + " not mapped (cmd_unknown_namespace_cnt " + num(x.counters.unknown_namespace) + ")");
  }
  const NvmfNs& n = nit->second;
  auto bit_ctrl = nvmf->ctrls.find(n.ctrl);
  if (bit_ctrl == nvmf->ctrls.end() || !bit_ctrl->second.alive) return pass(NvmfPass::BackendDown, "backend controller down");
  NvmfCmd c;
  c.qp = q.h; c.qp_gen = nq.gen; c.srq = x.h; c.ctrl = n.ctrl; c.recv = q.cur_wqe; c.sqe = e; c.opc = opc; c.cid = cid; c.fe_nsid = n.fe_nsid;
  if (opc != nvme::OPC_FLUSH) {
    const uint32_t ratio = n.lba_data_size / n.be_block;
    c.len = uint64_t(e.nlb()) * n.lba_data_size;
    if (c.len > x.attr.max_io_sz || uint64_t(e.nlb()) * ratio > 0x10000)
      return pass(NvmfPass::TooLarge, num(c.len) + " bytes > max_io_sz " + num(x.attr.max_io_sz));
    c.sgl_id = e.b[39];
    const uint8_t* sgl = e.b + 24;
    if (e.psdt() == 0) return pass(NvmfPass::SglUnsupported, "PRP data pointer in a fabrics capsule");
    if (c.sgl_id == 0x40 || c.sgl_id == 0x4F) {   // keyed data block: address, 24-bit length, key
      c.host_addr = e.qw(24); c.rkey = le32(sgl + 11);
      if (le24(sgl + 8) != c.len) return pass(NvmfPass::SglUnsupported, "keyed SGL length " + num(le24(sgl + 8)) + " != " + num(c.len));
    } else if (c.sgl_id == 0x01 && opc == nvme::OPC_WRITE) {   // data block, offset: in-capsule data
      const uint64_t off = e.qw(24), ilen = le32(sgl + 8);
      const uint64_t icd_at = nvme::kSqeSize + uint64_t(x.attr.icdoff) * 16;
      const uint64_t icd_size = wc.byte_len > icd_at ? wc.byte_len - icd_at : 0;
      if (ilen != c.len || off + ilen > icd_size || icd_at + off + ilen > uint64_t(x.attr.ioccsz) * 16)
        return pass(NvmfPass::SglUnsupported, "in-capsule data offset " + num(off) + " length " + num(ilen) + " outside the capsule");
      c.icd.resize(ilen);
      if (!copy_from_sges(x.pd, c.recv.sg_list, icd_at + off, c.icd.data(), ilen, why)) return pass(NvmfPass::SglUnsupported, "in-capsule data: " + why);
    } else {
      return pass(NvmfPass::SglUnsupported, "SGL identifier " + hex(c.sgl_id, 2));
    }
  }
  c.id = nvmf->next_cmd++;
  if (!nvmf->next_cmd) nvmf->next_cmd = 1;
  x.counters.offloaded++;
  nvmf_emit(*this, q.dev, q.h, "qp", NvmfStep::Parse, cid, c.len, c.sgl_id,
            "cid " + num(cid) + " " + nvme::opcode_name(opc) + " offloaded: fe_nsid " + num(n.fe_nsid) + " -> ctrl " + num(n.ctrl) + " nsid " + num(n.nsid) + ", " + num(c.len) + " bytes");
  if (!nq.connect_seen) {
    x.counters.served_before_connect++;
    nvmf_emit(*this, q.dev, q.h, "qp", NvmfStep::BeforeConnect, cid, 0, 0,
              "cid " + num(cid) + " served on a QP enabled before its NVMe-oF Connect: the controller never accepted this queue");
  }
  const uint32_t id = c.id;
  nvmf->cmds.emplace(id, std::move(c));
  nvmf_push(*this, NVMF_ADVANCE, id, 0, nvmf->step_ns);
  return true;
}

}  // namespace vl
