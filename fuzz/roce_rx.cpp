// libFuzzer target: the RoCEv2 receive path of the software device. Each input is up to 8 datagrams (UDP payloads,
// BTH..ICRC) that arrive at device B from device A's address, while B has live RC and UD QPs, MRs of different
// rights, posted receives and an RDMA READ and an atomic of its own in flight. Everything a NIC would check on
// receive (ICRC, QPN, PSN, opcode sequence, R_Key, bounds, access rights, Q_Key) must hold for any bytes:
//
//   INVARIANT: after the packets and the engine run, no byte of session memory changed outside a range some
//   packet was permitted to write: B's remote-writable/atomic MR range, B's posted receive buffers, the local
//   buffers of B's own READ/atomic. Buffers with no MR, a read-only MR, the parts of a buffer outside its MR,
//   and all of A's memory (A posted nothing another side may write) never change. No crash, leak or hang (the
//   engine runs a bounded number of steps) either: ASan, UBSan and libFuzzer's leak check watch those.
//
// Input: byte 0 = setup flags (bit 0: profile "cx" instead of "rxe"; bit 1: B's last READ still in flight, its
// request sent, when the packets arrive; bit 2: B's connection manager runs on QP1 (native/src/cm) with an RC
// listener on port 4420 and a UD (SIDR) listener on port 7000, so datagrams to QP 1 reach the MAD checks and the
// CM state machine; the CM must neither crash nor touch any QP or memory), then records [flags u8][length u16 BE][bytes]. Record flags: bit 0 =
// write the correct ICRC over the bytes (so mutations reach the transport checks behind it); bit 1 = run the
// engine to idle before the next datagram.
// Seeds: VL_FUZZ_WRITE_SEEDS=DIR ./vl_fuzz_roce_rx writes the seed corpus (fuzz/corpus/roce_rx) from this setup.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cm/mad.h"
#include "core/impl.h"
#include "vl/session.h"
#include "vl/wire.h"

using namespace vl;

namespace {

constexpr uint32_t kPsnA = 100, kPsnB = 200;   // A's send PSN (B's expected), B's send PSN
constexpr uint32_t kQkey = 0x11111111;
constexpr uint64_t kStepLimit = 20000;         // engine actions after the packets: a bound, so nothing hangs

struct Range { uint64_t addr, len; };

struct Side {
  Handle dev = 0, pd = 0, cq = 0, rc = 0, ud = 0;
  uint32_t rc_qpn = 0, ud_qpn = 0;
};

struct Setup {
  Session s{1};
  Side a, b;
  BufferInfo bw, br, bq, bn, ba;      // B: writable-MR buffer, read-only MR, receive/local, no MR; A's buffer
  MrInfo mw, mr, mq, ma;
  std::vector<Range> allowed;         // where packets may write
  bool ok = false;

  explicit Setup(uint8_t flags) {
    const char* prof = (flags & 1) ? "cx" : "rxe";
    for (Side* x : {&a, &b}) {
      x->dev = s.create_device(prof).value;
      x->pd = s.alloc_pd(x->dev).value;
      x->cq = s.create_cq(x->dev, 256).value;
      QpInitAttr ia;
      ia.pd = x->pd; ia.send_cq = x->cq; ia.recv_cq = x->cq; ia.cap.max_send_wr = 16; ia.cap.max_recv_wr = 16;
      ia.qp_type = QPT_RC;
      auto q = s.create_qp(x->pd, ia);
      ia.qp_type = QPT_UD;
      auto u = s.create_qp(x->pd, ia);
      if (!q.ok() || !u.ok()) return;
      x->rc = q.value.handle; x->rc_qpn = q.value.qp_num;
      x->ud = u.value.handle; x->ud_qpn = u.value.qp_num;
    }
    if (!connect(a, b, kPsnA, kPsnB) || !connect(b, a, kPsnB, kPsnA) || !ud_up(a) || !ud_up(b)) return;
    const uint32_t all = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
    bw = s.alloc_buffer(3 * 4096).value;
    br = s.alloc_buffer(2 * 4096).value;
    bq = s.alloc_buffer(2 * 4096).value;
    bn = s.alloc_buffer(4096).value;
    ba = s.alloc_buffer(2 * 4096).value;
    mw = s.reg_mr(b.pd, bw.addr + 4096, 4096, all).value;                 // the middle page only
    mr = s.reg_mr(b.pd, br.addr, 2 * 4096, ACCESS_REMOTE_READ).value;
    mq = s.reg_mr(b.pd, bq.addr, 2 * 4096, ACCESS_LOCAL_WRITE).value;
    ma = s.reg_mr(a.pd, ba.addr, 2 * 4096, all).value;
    if (!mw.rkey || !mr.rkey || !mq.lkey || !ma.rkey) return;
    for (uint64_t i = 0; i < 5; i++) {                                     // known bytes everywhere
      const BufferInfo& x = i == 0 ? bw : i == 1 ? br : i == 2 ? bq : i == 3 ? bn : ba;
      std::vector<uint8_t> pat(x.length);
      for (size_t k = 0; k < pat.size(); k++) pat[k] = uint8_t(k * 7 + i * 31 + 1);
      s.write_memory(x.addr, pat.data(), pat.size());
    }
    allowed.push_back({mw.addr, mw.length});
    // B's receives: RC into two slices of bq (2560 and 512 bytes), UD into a third
    for (auto [off, len] : {std::pair<uint64_t, uint32_t>{0, 2560}, {2560, 512}}) {
      RecvWr r; r.wr_id = off; r.sg_list = {{bq.addr + off, len, mq.lkey}};
      if (!s.post_recv(b.rc, {r}).ok()) return;
      allowed.push_back({bq.addr + off, len});
    }
    {
      RecvWr r; r.wr_id = 9; r.sg_list = {{bq.addr + 3072, 512, mq.lkey}};
      if (!s.post_recv(b.ud, {r}).ok()) return;
      allowed.push_back({bq.addr + 3072, 512});
    }
    // B's own READ (256 bytes of A) and FETCH_ADD, completed before the packets; with flags bit 1 a second READ is
    // left in flight (its request sent, no response yet)
    if (!post_read(4096)) return;
    SendWr fa; fa.wr_id = 21; fa.opcode = WR_ATOMIC_FETCH_AND_ADD; fa.send_flags = SEND_SIGNALED;
    fa.sg_list = {{bq.addr + 4096 + 512, 8, mq.lkey}}; fa.remote_addr = ba.addr + 512; fa.rkey = ma.rkey; fa.compare_add = 5;
    if (!s.post_send(b.rc, {fa}).ok()) return;
    allowed.push_back({bq.addr + 4096 + 512, 8});
    s.run(kStepLimit);
    s.poll_cq(a.cq, 64);
    s.poll_cq(b.cq, 64);
    if (flags & 2) {
      if (!post_read(4096 + 256)) return;
      s.step();                                                            // B's requester sends the READ request
    }
    if (flags & 4) {                                                       // B's CM on QP1, two listeners
      auto l = s.cm_create_id(b.dev, CM_PS_TCP, QPT_RC);
      auto u = s.cm_create_id(b.dev, CM_PS_UDP, QPT_UD);
      CmAddr any; any.family = 2;
      any.port = 4420;
      if (!l.ok() || !u.ok() || !s.cm_bind_addr(l.value, any).ok() || !s.cm_listen(l.value, 4).ok()) return;
      any.port = 7000;
      if (!s.cm_bind_addr(u.value, any).ok() || !s.cm_listen(u.value, 4).ok()) return;
    }
    s.drain_events();
    ok = true;
  }

  bool post_read(uint64_t off) {
    SendWr rd; rd.wr_id = off; rd.opcode = WR_RDMA_READ; rd.send_flags = SEND_SIGNALED;
    rd.sg_list = {{bq.addr + off, 256, mq.lkey}}; rd.remote_addr = ba.addr + 4096; rd.rkey = ma.rkey;
    allowed.push_back({bq.addr + off, 256});
    return s.post_send(b.rc, {rd}).ok();
  }

  bool connect(Side& x, Side& y, uint32_t my_psn, uint32_t peer_psn) {
    QpAttr at;
    at.qp_state = QPS_INIT; at.pkey_index = 0; at.port_num = 1;
    at.qp_access_flags = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
    if (!s.modify_qp(x.rc, at, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS).ok()) return false;
    at.qp_state = QPS_RTR; at.path_mtu = MTU_1024; at.dest_device = y.dev; at.dest_qp_num = y.rc_qpn; at.rq_psn = peer_psn;
    at.max_dest_rd_atomic = 4; at.min_rnr_timer = 1;
    if (!s.modify_qp(x.rc, at, QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER).ok()) return false;
    at.qp_state = QPS_RTS; at.sq_psn = my_psn; at.timeout = 10; at.retry_cnt = 3; at.rnr_retry = 3; at.max_rd_atomic = 4;
    return s.modify_qp(x.rc, at, QP_STATE | QP_SQ_PSN | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC).ok();
  }
  bool ud_up(Side& x) {
    QpAttr at;
    at.qp_state = QPS_INIT; at.pkey_index = 0; at.port_num = 1; at.qkey = kQkey;
    if (!s.modify_qp(x.ud, at, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_QKEY).ok()) return false;
    at.qp_state = QPS_RTR;
    if (!s.modify_qp(x.ud, at, QP_STATE).ok()) return false;
    at.qp_state = QPS_RTS; at.sq_psn = 0;
    return s.modify_qp(x.ud, at, QP_STATE | QP_SQ_PSN).ok();
  }

  std::vector<uint8_t> memory() {
    std::vector<uint8_t> all;
    for (const BufferInfo* x : {&bw, &br, &bq, &bn, &ba}) {
      size_t at = all.size();
      all.resize(at + x->length);
      s.read_memory(x->addr, all.data() + at, x->length);
    }
    return all;
  }
  // the session address of byte i of memory()
  uint64_t address_of(size_t i) const {
    for (const BufferInfo* x : {&bw, &br, &bq, &bn, &ba}) {
      if (i < x->length) return x->addr + i;
      i -= x->length;
    }
    return 0;
  }
  bool permitted(uint64_t va) const {
    for (const Range& r : allowed) if (va >= r.addr && va - r.addr < r.len) return true;
    return false;
  }
};

// one datagram from A to B as the session frames it, with the correct ICRC written in when asked
void deliver(Setup& st, std::vector<uint8_t>& bytes, bool fix_icrc) {
  SessionImpl& S = st.s.internals();
  auto lk = S.lock();
  const uint16_t ipid = 7;
  if (fix_icrc && bytes.size() >= 4) {
    const wire::Framing f = S.framing(st.a.dev, st.b.dev, ipid);
    const uint32_t c = wire::icrc(f, bytes.data(), bytes.size());
    for (int k = 0; k < 4; k++) bytes[bytes.size() - 4 + k] = uint8_t(c >> (8 * k));
  }
  S.deliver(st.a.dev, st.b.dev, ipid, bytes);
}

void write_seeds(const char* dir);

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* d = std::getenv("VL_FUZZ_WRITE_SEEDS")) { write_seeds(d); std::exit(0); }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  Setup st(data[0]);
  if (!st.ok) { std::fprintf(stderr, "fuzz setup failed\n"); std::abort(); }
  const std::vector<uint8_t> before = st.memory();
  size_t at = 1;
  for (int n = 0; n < 8 && at + 3 <= size; n++) {
    const uint8_t fl = data[at];
    size_t len = (size_t(data[at + 1]) << 8) | data[at + 2];
    at += 3;
    if (len > size - at) len = size - at;
    std::vector<uint8_t> bytes(data + at, data + at + len);
    at += len;
    deliver(st, bytes, fl & 1);
    if (fl & 2) st.s.run(kStepLimit);
  }
  st.s.run(kStepLimit);
  const auto wa = st.s.poll_cq(st.a.cq, 256), wb = st.s.poll_cq(st.b.cq, 256);
  const auto evs = st.s.drain_events();
  const std::vector<uint8_t> after = st.memory();
  if (std::getenv("VL_FUZZ_VERBOSE")) {          // what an input did: to check that seeds reach the transport
    size_t changed = 0;
    for (size_t i = 0; i < before.size(); i++) changed += before[i] != after[i];
    std::fprintf(stderr, "changed %zu bytes; B's CQEs:", changed);
    for (auto& w : wb) std::fprintf(stderr, " [wr %llu status %u]", static_cast<unsigned long long>(w.wr_id), w.status);
    std::fprintf(stderr, "; A's CQEs: %zu\n", wa.size());
    for (auto& e : evs)
      if (e.kind == EventKind::PacketDropped || e.kind == EventKind::KeyCheck || e.kind == EventKind::AsyncEvent ||
          e.kind == EventKind::CmMad || e.kind == EventKind::CmState)
        std::fprintf(stderr, "  %s\n", e.text.c_str());
  }
  for (size_t i = 0; i < before.size(); i++) {
    if (before[i] == after[i]) continue;
    const uint64_t va = st.address_of(i);
    if (!st.permitted(va)) {
      std::fprintf(stderr, "INVARIANT BROKEN: byte at 0x%llx changed (0x%02x -> 0x%02x) outside every permitted range\n",
                   static_cast<unsigned long long>(va), before[i], after[i]);
      std::abort();
    }
  }
  return 0;
}

namespace {

// ---------------------------------------------------------------- the seed corpus
struct SeedWriter {
  std::unique_ptr<Setup> setup = std::make_unique<Setup>(0);
  std::string dir;
  int n = 0;
  std::vector<uint8_t> file;
  uint8_t flags = 0;
  // the same setup as the input will get (handles, QPNs and keys depend on it)
  void begin(uint8_t setup_flags) {
    file.assign(1, setup_flags);
    if (setup_flags != flags) { flags = setup_flags; setup.reset(); setup = std::make_unique<Setup>(flags); }
  }
  void add(const wire::Packet& p, uint8_t rec_flags = 1, bool corrupt = false) {
    Setup& st = *setup;
    std::vector<uint8_t> udp;
    wire::encode(p, st.s.internals().framing(st.a.dev, st.b.dev, 7), udp);
    if (corrupt) udp[udp.size() - 1] ^= 0x40;
    file.push_back(rec_flags);
    file.push_back(uint8_t(udp.size() >> 8));
    file.push_back(uint8_t(udp.size()));
    file.insert(file.end(), udp.begin(), udp.end());
  }
  void save(const char* name) {
    const std::string path = dir + "/" + std::to_string(++n) + "-" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) { std::perror(path.c_str()); std::exit(1); }
    std::fwrite(file.data(), 1, file.size(), f);
    std::fclose(f);
  }
  wire::Packet rc(uint8_t op, uint32_t psn) {
    Setup& st = *setup;
    wire::Packet p;
    p.opcode = op; p.dest_qp = st.b.rc_qpn; p.psn = psn; p.ack_req = true;
    return p;
  }
};

void write_seeds(const char* dir) {
  SeedWriter w;
  w.dir = dir;
  if (!w.setup->ok) { std::fprintf(stderr, "setup failed\n"); std::exit(1); }
  static uint8_t text[1100];
  for (size_t i = 0; i < sizeof text; i++) text[i] = uint8_t('a' + i % 26);
  uint64_t wva = w.setup->mw.addr;
  uint32_t rkey = w.setup->mw.rkey;
  using namespace wire;
  auto with = [&](Packet p, size_t len) { p.payload = text; p.payload_len = len; return p; };
  w.begin(0); w.add(with(w.rc(RC_SEND_ONLY, kPsnA), 100)); w.save("send-only");
  w.begin(0); { auto p = with(w.rc(RC_SEND_ONLY_WITH_IMMEDIATE, kPsnA), 64); p.immdt = 0xCAFE; w.add(p); } w.save("send-imm");
  w.begin(0); w.add(with(w.rc(RC_SEND_FIRST, kPsnA), 1024)); w.add(with(w.rc(RC_SEND_MIDDLE, kPsnA + 1), 1024)); w.add(with(w.rc(RC_SEND_LAST, kPsnA + 2), 10)); w.save("send-multi");
  w.begin(0); w.add(with(w.rc(RC_SEND_FIRST, kPsnA), 1024)); w.add(with(w.rc(RC_SEND_MIDDLE, kPsnA + 1), 1024)); w.add(with(w.rc(RC_SEND_LAST, kPsnA + 2), 1000)); w.save("send-too-long-for-recv");
  w.begin(0); { auto p = with(w.rc(RC_SEND_ONLY_WITH_INVALIDATE, kPsnA), 32); p.ieth_rkey = rkey; w.add(p); } w.save("send-inv");
  w.begin(0); { auto p = with(w.rc(RC_RDMA_WRITE_ONLY, kPsnA), 200); p.reth_va = wva + 100; p.reth_rkey = rkey; p.reth_dmalen = 200; w.add(p); } w.save("write-only");
  w.begin(0); { auto p = with(w.rc(RC_RDMA_WRITE_ONLY, kPsnA), 200); p.reth_va = wva + 4000; p.reth_rkey = rkey; p.reth_dmalen = 200; w.add(p); } w.save("write-past-mr-end");
  w.begin(0); { auto p = with(w.rc(RC_RDMA_WRITE_ONLY, kPsnA), 64); p.reth_va = w.setup->mr.addr; p.reth_rkey = w.setup->mr.rkey; p.reth_dmalen = 64; w.add(p); } w.save("write-read-only-mr");
  w.begin(0); {
    auto p = with(w.rc(RC_RDMA_WRITE_FIRST, kPsnA), 1024); p.reth_va = wva; p.reth_rkey = rkey; p.reth_dmalen = 1024 + 300; w.add(p);
    w.add(with(w.rc(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, kPsnA + 1), 300));
  } w.save("write-first-last-imm");
  w.begin(0); { auto p = w.rc(RC_RDMA_READ_REQUEST, kPsnA); p.reth_va = wva + 8; p.reth_rkey = rkey; p.reth_dmalen = 2000; w.add(p, 3); } w.save("read-request");
  w.begin(0); { auto p = w.rc(RC_COMPARE_SWAP, kPsnA); p.atomic_va = wva + 64; p.atomic_rkey = rkey; p.atomic_compare = 0; p.atomic_swap_add = 9; w.add(p); } w.save("cmp-swap");
  w.begin(0); { auto p = w.rc(RC_FETCH_ADD, kPsnA); p.atomic_va = wva + 72; p.atomic_rkey = rkey; p.atomic_swap_add = 3; w.add(p); w.add(p); } w.save("fetch-add-duplicate");
  w.begin(0); w.add(with(w.rc(RC_SEND_ONLY, kPsnA + 5), 16)); w.save("send-psn-ahead");
  w.begin(0); w.add(with(w.rc(RC_SEND_ONLY, kPsnA), 16), 0, true); w.save("send-bad-icrc");
  w.begin(2); { auto p = with(w.rc(RC_RDMA_READ_RESPONSE_ONLY, kPsnB + 2), 256); p.aeth_syndrome = kAckCreditsInvalid; p.aeth_msn = 3; w.add(p); } w.save("read-response");
  w.begin(2); { auto p = w.rc(RC_ACKNOWLEDGE, kPsnB + 2); p.aeth_syndrome = 0x60 | NAK_REMOTE_ACCESS_ERROR; w.add(p); } w.save("nak");
  w.begin(0); { auto p = w.rc(RC_ATOMIC_ACKNOWLEDGE, kPsnB); p.aeth_syndrome = kAckCreditsInvalid; p.atomic_ack_orig = 77; w.add(p); } w.save("atomic-ack-unsolicited");
  w.begin(1); wva = w.setup->mw.addr; rkey = w.setup->mw.rkey;
  { auto p = with(w.rc(RC_RDMA_WRITE_ONLY, kPsnA), 64); p.reth_va = wva; p.reth_rkey = rkey; p.reth_dmalen = 64; w.add(p); } w.save("cx-write");
  w.begin(0); wva = w.setup->mw.addr; rkey = w.setup->mw.rkey;
  {
    Packet p; p.opcode = UD_SEND_ONLY; p.dest_qp = w.setup->b.ud_qpn; p.psn = 0; p.deth_qkey = kQkey; p.deth_src_qp = w.setup->a.ud_qpn;
    w.add(with(p, 200));
    p.deth_qkey = kQkey + 1; w.add(with(p, 200));
  } w.save("ud-send");
  // MADs to QP1 of B's connection manager (setup bit 2): a REQ to the listener (and its duplicate), a DREQ for an
  // unknown comm ID, a SIDR REQ, a REQ with a bad class version, a truncated MAD
  w.begin(4);
  {
    const DeviceInfo ai = w.setup->s.devices()[0], bi = w.setup->s.devices()[1];
    static uint8_t mads[6][256];
    cm::Msg req; req.hdr.attr_id = CM_ATTR_REQ; req.hdr.tid = 0x100000001ull;
    req.set(cm::F_LOCAL_COMM_ID, 0x1234).set(cm::F_SERVICE_ID, (uint64_t(CM_PS_TCP) << 16) | 4420).set(cm::F_LOCAL_CA_GUID, ai.node_guid);
    req.set(cm::F_LOCAL_QPN, w.setup->a.rc_qpn).set(cm::F_PATH_MTU, MTU_1024).set(cm::F_LOCAL_CM_RESPONSE_TIMEOUT, 10);
    req.set(cm::F_MAX_CM_RETRIES, 2).set(cm::F_STARTING_PSN, 5);
    std::memcpy(req.pri_local_gid, ai.gids[1].gid, 16); std::memcpy(req.pri_remote_gid, bi.gids[1].gid, 16);
    req.pdata[1] = 0x40; std::memcpy(req.pdata + 16, ai.gids[1].gid + 12, 4); std::memcpy(req.pdata + 32, bi.gids[1].gid + 12, 4);
    cm::encode(req, mads[0]);
    cm::Msg dreq; dreq.hdr.attr_id = CM_ATTR_DREQ; dreq.set(cm::F_LOCAL_COMM_ID, 7).set(cm::F_REMOTE_COMM_ID, 9);
    cm::encode(dreq, mads[1]);
    cm::Msg sidr; sidr.hdr.attr_id = CM_ATTR_SIDR_REQ; sidr.set(cm::F_REQUEST_ID, 3).set(cm::F_SERVICE_ID, (uint64_t(CM_PS_UDP) << 16) | 7000);
    std::memcpy(sidr.pdata, req.pdata, 36);
    cm::encode(sidr, mads[2]);
    std::memcpy(mads[3], mads[0], 256); mads[3][2] = 3;
    auto gmp = [&](const uint8_t* m, size_t len) {
      Packet p; p.opcode = UD_SEND_ONLY; p.dest_qp = 1; p.deth_qkey = cm::kGsiQkey; p.deth_src_qp = 1;
      p.payload = m; p.payload_len = len;
      return p;
    };
    w.add(gmp(mads[0], 256), 3); w.add(gmp(mads[0], 256), 3); w.save("cm-req-and-duplicate");
    w.begin(4); w.add(gmp(mads[1], 256)); w.save("cm-dreq-unknown");
    w.begin(4); w.add(gmp(mads[2], 256)); w.save("cm-sidr-req");
    w.begin(4); w.add(gmp(mads[3], 256)); w.add(gmp(mads[0], 100)); w.save("cm-bad-version-truncated");
  }
  std::printf("wrote %d seeds to %s\n", w.n, dir);
}

}  // namespace
