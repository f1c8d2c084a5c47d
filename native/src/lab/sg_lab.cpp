// The SG lab's run (vl/sg_lab.h): the initiator and target objects, the command / response exchange, the loop
// that steps the engine between the two sides, counting and verification. What each strategy registers and
// sends is in sg_strategies.cpp.
#include <cerrno>
#include <chrono>
#include <cstring>

#include "lab/sg_run.h"

namespace vl::sglab {

const char* const kStrategyNames[kSgStrategies] = {"fast_reg", "bounce", "multi_mr", "pool512", "indirect"};


Run::Run(Session& s_, const std::vector<SgElem>& l, SgStrategy st_, const SgLabConfig& c)
    : s(s_), S(s_.internals()), list(l), st(st_), cfg(c) {
  r.strategy = st;
  for (auto& e : list) total += e.length;
  span = sg_span(list);
}

bool Run::refuse(int err, std::string msg) {
  if (!r.err) { r.err = err; r.msg = std::move(msg); }
  return false;
}

PostResult Run::post(Handle qp, std::vector<SendWr>& wrs) {
  auto pr = s.post_send(qp, wrs);
  r.c.wrs_posted += pr.ok() ? wrs.size() : pr.bad_wr;
  if (!pr.ok()) refuse(pr.err, "post_send: " + pr.msg);
  return pr;
}

void Run::post_recv(Handle qp, uint64_t wr_id, uint64_t addr, uint32_t len, uint32_t lkey) {
  RecvWr w;
  w.wr_id = wr_id; w.sg_list = {{addr, len, lkey}};
  auto pr = s.post_recv(qp, {w});
  if (pr.ok()) r.c.wrs_posted++;
  else refuse(pr.err, "post_recv: " + pr.msg);
}

// RC connection of the two QPs (INIT -> RTR -> RTS), reads as deep as the profile allows.
bool Run::connect(Handle q, Handle peer, uint32_t peer_qpn) {
  QpAttr a;
  a.qp_state = QPS_INIT; a.qp_access_flags = kAcc;
  if (!s.modify_qp(q, a, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS).ok()) return false;
  a.qp_state = QPS_RTR; a.path_mtu = prof.active_mtu; a.dest_device = peer; a.dest_qp_num = peer_qpn; a.rq_psn = 0;
  a.max_dest_rd_atomic = prof.max_qp_rd_atom;
  if (!s.modify_qp(q, a, QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER).ok()) return false;
  a.qp_state = QPS_RTS; a.sq_psn = 0; a.max_rd_atomic = prof.max_qp_init_rd_atom;
  return s.modify_qp(q, a, QP_STATE | QP_SQ_PSN | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC).ok();
}

Result<BufferInfo> Run::buffer(uint64_t len) {
  auto b = s.alloc_buffer(len);
  if (b.ok()) bufs.push_back(b.value.handle);
  return b;
}

bool Run::setup() {
  if (list.empty()) return refuse(EINVAL, "list: empty");
  if (cfg.queue_depth == 0 || cfg.queue_depth > 64) return refuse(EINVAL, "queue_depth: must be 1..64");
  if (cfg.ios == 0) return refuse(EINVAL, "ios: must be >= 1");
  if (s.free_run_mode() != FreeRunMode::Off) return refuse(EBUSY, "engine: the SG lab steps the engine itself (deterministic mode only)");
  for (auto& e : list) if (!e.length) return refuse(EINVAL, "list: an element has length 0");
  const Profile* p = nullptr;
  for (auto& x : builtin_profiles()) if (x.name == cfg.profile) p = &x;
  if (!p) return refuse(EINVAL, "profile: unknown '" + cfg.profile + "'");
  prof = *p;
  max_sg = cfg.max_num_sg ? cfg.max_num_sg : prof.max_fast_reg_page_list_len;
  const uint32_t qd = cfg.queue_depth;
  auto d1 = s.create_device(prof.name, "sg-init" + std::to_string(S.next_handle));
  auto d2 = s.create_device(prof.name, "sg-target" + std::to_string(S.next_handle));
  if (!d1.ok() || !d2.ok()) return refuse(d1.ok() ? d2.err : d1.err, "create_device: " + (d1.ok() ? d2.msg : d1.msg));
  di = d1.value; dt = d2.value;
  pi = s.alloc_pd(di).value; pt = s.alloc_pd(dt).value;
  const uint32_t cqe = std::min<uint32_t>(prof.max_cqe, 8192);
  ci = s.create_cq(di, cqe).value; ct = s.create_cq(dt, cqe).value;
  max_keys = static_cast<uint32_t>(list.size());
  cmd_len = kCmdHdr + kEntry * max_keys;
  QpInitAttr ia;
  ia.pd = pi; ia.send_cq = ci; ia.recv_cq = ci;
  ia.cap.max_send_wr = std::min<uint32_t>(prof.max_qp_wr, qd * (2 * max_keys + 2) + 8);
  ia.cap.max_recv_wr = qd + 1; ia.cap.max_send_sge = 1; ia.cap.max_recv_sge = 1;
  QpInitAttr ta = ia;
  ta.pd = pt; ta.send_cq = ct; ta.recv_cq = ct;
  auto q1 = s.create_qp(pi, ia), q2 = s.create_qp(pt, ta);
  if (!q1.ok() || !q2.ok()) return refuse(q1.ok() ? q2.err : q1.err, "create_qp: " + (q1.ok() ? q2.msg : q1.msg));
  qi = q1.value.handle; qt = q2.value.handle;
  if (!connect(qi, dt, q2.value.qp_num) || !connect(qt, di, q1.value.qp_num)) return refuse(EINVAL, "modify_qp: could not connect the pair");
  // messages: initiator [cmd per slot | response per receive]; target [cmd per receive | response per slot]
  auto im = buffer(uint64_t(qd) * (cmd_len + kRespLen)), tm = buffer(uint64_t(qd) * (cmd_len + kRespLen));
  auto td = buffer(uint64_t(qd) * total);
  if (!im.ok() || !tm.ok() || !td.ok()) return refuse(ENOMEM, "alloc_buffer: " + (!im.ok() ? im.msg : !tm.ok() ? tm.msg : td.msg));
  imsg = im.value; tmsg = tm.value; tdata = td.value;
  imsg_mr = s.reg_mr(pi, imsg.addr, imsg.length, ACCESS_LOCAL_WRITE).value;
  tmsg_mr = s.reg_mr(pt, tmsg.addr, tmsg.length, ACCESS_LOCAL_WRITE).value;
  tdata_mr = s.reg_mr(pt, tdata.addr, tdata.length, ACCESS_LOCAL_WRITE).value;
  slots.resize(qd);
  for (uint32_t k = 0; k < qd; k++) {
    auto b = buffer(span);
    if (!b.ok()) return refuse(b.err, "alloc_buffer: " + b.msg);
    slots[k].mem = b.value;
    for (auto& e : list) slots[k].sge.push_back({b.value.addr + e.offset, e.length, 0});
  }
  for (uint32_t j = 0; j < qd; j++) {
    post_recv(qt, tag(T_CMD_RECV, j), tmsg.addr + uint64_t(j) * cmd_len, cmd_len, tmsg_mr.lkey);
    post_recv(qi, tag(T_RESP_RECV, j), imsg.addr + uint64_t(qd) * cmd_len + j * kRespLen, kRespLen, imsg_mr.lkey);
  }
  r.c.wrs_posted = 0;                              // the standing receives are setup, not per-I/O work
  return !r.err && strategy_setup();
}

void Run::teardown() {
  if (qi) s.destroy_qp(qi);
  if (qt) s.destroy_qp(qt);
  for (Handle m : mrs_all) s.dereg_mr(m);
  for (Handle m : {imsg_mr.handle, tmsg_mr.handle, tdata_mr.handle}) if (m) s.dereg_mr(m);
  if (ci) s.destroy_cq(ci);
  if (ct) s.destroy_cq(ct);
  for (Handle b : bufs) s.free_buffer(b);
  if (pi) s.dealloc_pd(pi);
  if (pt) s.dealloc_pd(pt);
  if (di) s.destroy_device(di);
  if (dt) s.destroy_device(dt);
}

// Data of pair p in direction d: seeded bytes, different for every I/O so a stale or misplaced byte shows.
void Run::fill(uint8_t* dst, uint64_t n, uint32_t pair, uint32_t dir) const {
  uint64_t x = (cfg.seed * 0x9E3779B97F4A7C15ull) ^ (uint64_t(pair) << 20) ^ (uint64_t(dir) << 40) ^ 0x5851F42D4C957F2Dull;
  for (uint64_t i = 0; i < n; i += 8) {          // xorshift64, eight bytes a step
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    std::memcpy(dst + i, &x, std::min<uint64_t>(8, n - i));
  }
}

uint8_t* Run::host(uint64_t va, uint64_t len) { return S.host(va, len); }

// Untimed: the application's data (WRITE) or the target's stored data (READ), and a cleared destination.
void Run::prepare(Slot& sl) {
  Stopwatch w(untimed);
  std::vector<uint8_t> v(total);
  fill(v.data(), total, sl.pair, sl.op);
  uint8_t* tgt = host(tdata.addr + sl.index * total, total);
  if (sl.op == OP_WRITE) {
    uint64_t off = 0;
    for (auto& e : sl.sge) { std::memcpy(host(e.addr, e.length), v.data() + off, e.length); off += e.length; }
    std::memset(tgt, 0, total);
  } else {
    std::memcpy(tgt, v.data(), total);
    for (auto& e : sl.sge) std::memset(host(e.addr, e.length), 0, e.length);
  }
}

// Untimed: every byte of the I/O compared with what was sent.
bool Run::verify(const Slot& sl) {
  Stopwatch w(untimed);
  std::vector<uint8_t> v(total);
  fill(v.data(), total, sl.pair, sl.op);
  const uint8_t* tgt = host(tdata.addr + sl.index * total, total);
  if (std::memcmp(tgt, v.data(), total) != 0) return false;
  uint64_t off = 0;
  for (auto& e : sl.sge) {
    if (std::memcmp(host(e.addr, e.length), v.data() + off, e.length) != 0) return false;
    off += e.length;
  }
  return true;
}

// Initiator: register (strategy), write the command's descriptor, post [REG_MR..., SEND].
bool Run::start(Slot& sl) {
  std::vector<SendWr> wrs;
  std::vector<Entry> ents;
  if (!strategy_map(sl, wrs, ents)) return false;
  uint8_t* cmd = host(imsg.addr + sl.index * cmd_len, cmd_len);
  const uint32_t hdr[4] = {sl.op, sl.index, static_cast<uint32_t>(ents.size()), 0};
  std::memcpy(cmd, hdr, sizeof hdr);
  for (size_t i = 0; i < ents.size(); i++) std::memcpy(cmd + kCmdHdr + i * kEntry, &ents[i], kEntry);
  SendWr w;
  w.wr_id = tag(T_SEND, sl.index); w.opcode = WR_SEND;
  w.sg_list = {{imsg.addr + sl.index * cmd_len, static_cast<uint32_t>(kCmdHdr + kEntry * ents.size()), imsg_mr.lkey}};
  wrs.push_back(w);
  r.c.keys_on_wire += ents.size();
  return post(qi, wrs).ok();
}

// Target: one RDMA operation per descriptor entry against its own memory, then the response.
bool Run::target_cmd(uint32_t j) {
  const uint8_t* cmd = host(tmsg.addr + uint64_t(j) * cmd_len, cmd_len);
  uint32_t hdr[4];
  std::memcpy(hdr, cmd, sizeof hdr);
  const uint32_t op = hdr[0], k = hdr[1], n = hdr[2];
  if (k >= slots.size() || n > max_keys) return refuse(EPROTO, "target: malformed command");
  std::vector<SendWr> wrs(n);
  uint64_t off = 0;
  for (uint32_t i = 0; i < n; i++) {
    Entry e;
    std::memcpy(&e, cmd + kCmdHdr + i * kEntry, kEntry);
    SendWr& w = wrs[i];
    w.opcode = op == OP_WRITE ? WR_RDMA_READ : WR_RDMA_WRITE;
    w.wr_id = tag(T_RDMA, k);
    w.sg_list = {{tdata.addr + k * total + off, e.len, tdata_mr.lkey}};
    w.remote_addr = e.addr; w.rkey = e.rkey;
    off += e.len;
  }
  r.c.remote_ops += n;
  post_recv(qt, tag(T_CMD_RECV, j), tmsg.addr + uint64_t(j) * cmd_len, cmd_len, tmsg_mr.lkey);
  if (op == OP_WRITE && n) {                       // respond when the last READ's data is in (its completion)
    wrs.back().send_flags = SEND_SIGNALED;
    wrs.back().wr_id = tag(T_RDMA_LAST, k);
  } else {
    wrs.push_back(response(k));                    // RC places the WRITEs before the SEND that follows them
  }
  return post(qt, wrs).ok();
}

SendWr Run::response(uint32_t k) {
  uint8_t* rsp = host(tmsg.addr + uint64_t(cfg.queue_depth) * cmd_len + k * kRespLen, kRespLen);
  const uint32_t v[4] = {0, k, 0, 0};
  std::memcpy(rsp, v, sizeof v);
  SendWr w;
  w.wr_id = tag(T_RESP_SEND, k); w.opcode = WR_SEND; w.send_flags = SEND_SIGNALED;
  w.sg_list = {{tmsg.addr + uint64_t(cfg.queue_depth) * cmd_len + k * kRespLen, kRespLen, tmsg_mr.lkey}};
  return w;
}

bool Run::target_poll() {
  bool any = false;
  for (;;) {
    auto wcs = s.poll_cq(ct, 64);
    if (wcs.empty()) return any;
    any = true;
    for (auto& wc : wcs) {
      if (wc.status != WC_SUCCESS) {
        r.wc_status = wc.status;
        return refuse(EIO, std::string("target: work completion ") + wc_status_name(wc.status) + " (wr_id tag " +
                               std::to_string(wc.wr_id >> 56) + ")");
      }
      const uint64_t t = wc.wr_id >> 56, v = wc.wr_id & 0xffffffffull;
      if (t == T_CMD_RECV && !target_cmd(static_cast<uint32_t>(v))) return false;
      if (t == T_RDMA_LAST) {                     // WRITE I/O: the data is in; respond
        std::vector<SendWr> w{response(static_cast<uint32_t>(v))};
        if (!post(qt, w).ok()) return false;
      }
    }
  }
}

// Initiator completions: a response ends the I/O's data phase (copy back, invalidate); the last LOCAL_INV's
// completion returns its MRs to the pool.
bool Run::initiator_poll() {
  bool any = false;
  for (;;) {
    std::vector<Wc> wcs;
    {
      Stopwatch w(r.c.initiator_ns);
      wcs = s.poll_cq(ci, 64);
    }
    if (wcs.empty()) return any;
    any = true;
    for (auto& wc : wcs) {
      if (wc.status != WC_SUCCESS) {
        r.wc_status = wc.status;
        return refuse(EIO, std::string("initiator: work completion ") + wc_status_name(wc.status));
      }
      const uint64_t t = wc.wr_id >> 56, v = wc.wr_id & 0xffffffffull;
      if (t == T_RESP_RECV) {
        const uint8_t* rsp = host(imsg.addr + uint64_t(cfg.queue_depth) * cmd_len + v * kRespLen, kRespLen);
        uint32_t hdr[4];
        std::memcpy(hdr, rsp, sizeof hdr);
        post_recv(qi, wc.wr_id, imsg.addr + uint64_t(cfg.queue_depth) * cmd_len + v * kRespLen, kRespLen, imsg_mr.lkey);
        if (hdr[1] >= slots.size()) return refuse(EPROTO, "initiator: malformed response");
        Slot& sl = slots[hdr[1]];
        std::vector<SendWr> inv;
        {
          Stopwatch w(r.c.initiator_ns);
          strategy_done(sl, inv);                  // copy back, LOCAL_INV of the keys
          if (!inv.empty()) {
            inv.back().send_flags = SEND_SIGNALED;
            inv.back().wr_id = tag(T_INV, sl.index);
            if (!post(qi, inv).ok()) return false;
          }
        }
        if (!verify(sl)) return refuse(EIO, std::string("data: I/O ") + (sl.op == OP_WRITE ? "WRITE" : "READ") + " of pair " +
                                                std::to_string(sl.pair) + " differs from what was sent");
        r.c.bytes_moved += total;
        r.c.ios_done++;
        if (inv.empty()) finish(sl);
      }
      if (t == T_INV) finish(slots[v]);
    }
  }
}

// The engine to idle, except for retransmission timers: with nothing left but an ACK / RNR timer (the lab injects no
// faults, so none fires usefully) the exchange is over, and the virtual clock stays at its last packet instead of
// jumping to a timeout. The timers stay queued; the generation check makes them no-ops when they do fire.
void Run::drive() {
  auto lk = S.lock();
  while (!S.idle()) {
    const bool from_fifo = !S.fifo.empty() && (S.heap.empty() || S.fifo.front().t < S.heap.front().t ||
                                               (S.fifo.front().t == S.heap.front().t && S.fifo.front().seq < S.heap.front().seq));
    const Action& next = from_fifo ? S.fifo.front() : S.heap.front();
    if (next.kind == Action::AckTimer || next.kind == Action::RnrTimer) break;
    S.step();
  }
}

void Run::finish(Slot& sl) {
  for (Handle m : sl.held) pool.push_back(m);
  sl.held.clear();
  active--;
  if (sl.op == OP_WRITE) { sl.op = OP_READ; ready.push_back(sl.index); return; }   // the pair's READ
  sl.busy = false;
  pairs_done++;
}

// A QP in error flushes everything behind the failure: report the completion that caused it, not a flush.
void Run::root_cause() {
  if (r.wc_status != WC_WR_FLUSH_ERR) return;
  drive();
  for (auto [cq, side] : {std::pair{ct, "target"}, std::pair{ci, "initiator"}})
    for (auto& wc : s.poll_cq(cq, 1u << 16))
      if (wc.status != WC_SUCCESS && wc.status != WC_WR_FLUSH_ERR) {
        r.wc_status = wc.status;
        r.msg = std::string(side) + ": work completion " + wc_status_name(wc.status) + " (" + r.msg + " after it)";
        return;
      }
}

bool Run::loop() {
  const auto t0 = clk::now();
  const uint64_t v0 = s.now_ns(), p0 = S.packets_sent;
  untimed = 0;
  while (pairs_done < cfg.ios && !r.err) {
    // admit new pairs into free slots
    for (auto& sl : slots) {
      if (next_pair >= cfg.ios) break;
      if (sl.busy) continue;
      sl.busy = true; sl.pair = next_pair++; sl.op = OP_WRITE; sl.index = static_cast<uint32_t>(&sl - slots.data());
      ready.push_back(sl.index);
    }
    // start what has its MRs
    bool started = false;
    while (!ready.empty() && !r.err) {
      Slot& sl = slots[ready.front()];
      if (sl.held.empty() && !strategy_can_start(sl)) {
        if (!sl.waited) { sl.waited = true; r.c.pool_waits++; }
        break;
      }
      ready.pop_front();
      sl.waited = false;
      prepare(sl);
      Stopwatch w(r.c.initiator_ns);
      if (!start(sl)) break;
      started = true;
      r.c.max_in_flight = std::max(r.c.max_in_flight, ++active);
    }
    if (r.err) break;
    drive();
    bool progress = target_poll();
    drive();
    progress = initiator_poll() || progress;
    if (!progress && !started) { refuse(EIO, "stalled: nothing in flight and nothing could start"); break; }
  }
  root_cause();
  r.c.wall_ns = ns_since(t0) - untimed;   // preparing and checking the data is the lab's, not the I/O's
  r.c.device_ns = s.now_ns() - v0;
  r.c.packets = S.packets_sent - p0;
  return !r.err;
}

}  // namespace vl::sglab

namespace vl {

const char* sg_strategy_name(SgStrategy s) {
  const auto i = static_cast<uint32_t>(s);
  return i < kSgStrategies ? sglab::kStrategyNames[i] : "?";
}

bool sg_strategy_from_name(const std::string& name, SgStrategy& out) {
  for (uint32_t i = 0; i < kSgStrategies; i++)
    if (name == sglab::kStrategyNames[i]) { out = static_cast<SgStrategy>(i); return true; }
  return false;
}

SgLabResult sg_lab_run(Session& s, const std::vector<SgElem>& list, SgStrategy st, const SgLabConfig& cfg) {
  sglab::Run run(s, list, st, cfg);
  if (run.setup() && run.loop()) run.r.verified = run.r.c.ios_done == 2 * cfg.ios;
  run.teardown();
  return run.r;
}

}  // namespace vl
