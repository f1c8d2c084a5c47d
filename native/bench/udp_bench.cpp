// udp_rdma_write_GBps: RC RDMA WRITE between two processes over RoCEv2/UDP on loopback (native/src/net).
// The parent is the requester, a forked child the target; both wait in ppoll() for datagrams. Every message is
// 1 MiB at PMTU 4096, several in flight; the figure is bytes completed / wall time over at least min_secs after
// a warm-up. At the end a WRITE_WITH_IMM tells the child to checksum its buffer, which must match the source.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "net/udp.h"
#include "vl/session.h"

using namespace vl;

namespace {

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

struct End {
  Session s{7};
  Handle dev = 0, pd = 0, cq = 0, qp = 0;
  uint32_t qpn = 0;
  BufferInfo buf;
  MrInfo mr;
  std::unique_ptr<net::UdpTransport> t;
  std::string err;
  bool open(const std::string& addr, size_t len) {
    s.set_event_capture(false);
    dev = s.create_device("cx").value;             // cx profile: port MTU 4096 like a 9000-byte-MTU NIC
    net::UdpOptions o;
    o.address = addr;
    o.port = 4791;
    o.busy_poll = false;
    o.gso = !getenv("VL_UDP_NO_GSO");              // measuring what each gives (docs/udp-perf.md)
    o.gro = !getenv("VL_UDP_NO_GRO");
    o.zero_copy = getenv("VL_UDP_ZEROCOPY") != nullptr;
    auto r = net::UdpTransport::attach(s, dev, o);
    if (!r.ok()) { err = r.msg; return false; }
    t = std::move(r.value);
    pd = s.alloc_pd(dev).value;
    cq = s.create_cq(dev, 4096).value;
    QpInitAttr ia;
    ia.pd = pd; ia.send_cq = cq; ia.recv_cq = cq; ia.qp_type = QPT_RC;
    ia.cap.max_send_wr = 256; ia.cap.max_recv_wr = 256; ia.cap.max_send_sge = 1; ia.cap.max_recv_sge = 1;
    auto q = s.create_qp(pd, ia);
    if (!q.ok()) { err = q.msg; return false; }
    qp = q.value.handle; qpn = q.value.qp_num;
    buf = s.alloc_buffer(len).value;
    auto m = s.reg_mr(pd, buf.addr, len, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE);
    if (!m.ok()) { err = m.msg; return false; }
    mr = m.value;
    QpAttr at;
    at.qp_state = QPS_INIT; at.qp_access_flags = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE;
    Status st = s.modify_qp(qp, at, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS);
    if (!st.ok()) { err = st.msg; return false; }
    return true;
  }
  bool connect(const uint8_t gid[16], uint32_t rqpn, uint32_t rpsn, uint32_t mypsn) {
    QpAttr at;
    at.qp_state = QPS_RTR; at.path_mtu = MTU_4096; at.dest_qp_num = rqpn; at.rq_psn = rpsn; at.max_dest_rd_atomic = 1;
    at.min_rnr_timer = 1; at.sgid_index = 1;
    std::memcpy(at.dgid, gid, 16);
    Status st = s.modify_qp(qp, at, QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER);
    if (!st.ok()) { err = st.msg; return false; }
    at.qp_state = QPS_RTS; at.sq_psn = mypsn; at.timeout = 14; at.retry_cnt = 7; at.rnr_retry = 7; at.max_rd_atomic = 1;
    st = s.modify_qp(qp, at, QP_STATE | QP_SQ_PSN | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC);
    if (!st.ok()) { err = st.msg; return false; }
    return true;
  }
};

struct Info { uint32_t qpn, psn, rkey; uint64_t addr; uint8_t gid[16]; };

uint64_t fnv(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

std::string lo_addr(int host) {
  unsigned p = static_cast<unsigned>(getpid());
  return "127." + std::to_string(1 + (p >> 8) % 250) + "." + std::to_string(p & 0xff) + "." + std::to_string(host);
}

}  // namespace

// Returns bytes/s (0 on failure, with why set); ok = the target's checksum matched the source.
double udp_rdma_write_rate(double min_secs, bool& ok, std::string& why) {
  ok = false;
  const size_t kMsg = 1 << 20, kSlots = 8, kLen = kMsg * kSlots;
  int up[2], down[2];
  if (pipe(up) || pipe(down)) { why = "pipe failed"; return 0; }
  const std::string ta = lo_addr(3), ra = lo_addr(2);
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) { why = "fork failed"; return 0; }
  if (pid == 0) {                                  // target
    close(up[0]); close(down[1]);
    End b;
    Info me{};
    if (b.open(ta, kLen)) { me.qpn = b.qpn; me.psn = 0x4242; me.rkey = b.mr.rkey; me.addr = b.buf.addr; std::memcpy(me.gid, b.t->gids()[1].gid, 16); }
    if (write(up[1], &me, sizeof me) != sizeof me || !me.qpn) _exit(1);
    Info peer{};
    if (read(down[0], &peer, sizeof peer) != sizeof peer) _exit(1);
    if (!b.connect(peer.gid, peer.qpn, peer.psn, me.psn)) _exit(1);
    RecvWr r; r.wr_id = 1;
    if (!b.s.post_recv(b.qp, {r}).ok()) _exit(1);
    double give_up = now_s() + 120;
    for (;;) {
      b.t->poll(2000000);
      auto wc = b.s.poll_cq(b.cq, 4);
      if (!wc.empty()) {
        if (wc[0].status != WC_SUCCESS) _exit(2);
        break;
      }
      if (now_s() > give_up) _exit(3);
    }
    std::vector<uint8_t> got(kMsg);
    b.s.read_memory(b.buf.addr, got.data(), kMsg);
    uint64_t h = fnv(got.data(), kMsg);
    if (getenv("VL_UDP_BENCH_DEBUG")) {
      auto& x = b.t->stats();
      std::fprintf(stderr, "target: rx %lu pkts %lu bytes %lu syscalls (GRO %lu buffers %lu pkts), tx %lu pkts (GSO %lu sends), dropped rx %lu\n",
                   (unsigned long)x.rx_packets, (unsigned long)x.rx_bytes, (unsigned long)x.syscalls_rx, (unsigned long)x.rx_gro_buffers,
                   (unsigned long)x.rx_gro_segments, (unsigned long)x.tx_packets, (unsigned long)x.tx_gso_sends, (unsigned long)x.rx_dropped);
    }
    if (write(up[1], &h, sizeof h) != sizeof h) _exit(1);
    double linger = now_s() + 0.2;                 // answer retransmissions of the last ACK for a moment
    while (now_s() < linger) b.t->poll(0);
    _exit(0);
  }
  close(up[1]); close(down[0]);
  auto fail_out = [&](const std::string& w) { why = w; kill(pid, SIGKILL); waitpid(pid, nullptr, 0); close(up[0]); close(down[1]); return 0.0; };
  End a;
  if (!a.open(ra, kLen)) return fail_out("requester: " + a.err);
  Info peer{};
  if (read(up[0], &peer, sizeof peer) != sizeof peer || !peer.qpn) return fail_out("target did not start (bind " + ta + ":4791?)");
  Info me{a.qpn, 0x777, a.mr.rkey, a.buf.addr, {}};
  std::memcpy(me.gid, a.t->gids()[1].gid, 16);
  if (write(down[1], &me, sizeof me) != sizeof me) return fail_out("pipe write");
  if (!a.connect(peer.gid, peer.qpn, peer.psn, me.psn)) return fail_out("requester connect: " + a.err);
  std::vector<uint8_t> src(kLen);
  for (size_t i = 0; i < kLen; i++) src[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  a.s.write_memory(a.buf.addr, src.data(), kLen);
  const size_t kInflight = 4;
  size_t posted = 0, done = 0;
  auto post = [&](uint32_t op, size_t slot) {
    SendWr w;
    w.wr_id = posted; w.opcode = op; w.send_flags = SEND_SIGNALED;
    w.sg_list = {{a.buf.addr + slot * kMsg, static_cast<uint32_t>(kMsg), a.mr.lkey}};
    w.remote_addr = peer.addr + slot * kMsg; w.rkey = peer.rkey;
    posted++;
    return a.s.post_send(a.qp, {w}).ok();
  };
  double t0 = now_s(), t_start = 0, warm = 0.2;
  size_t done_at_start = 0;
  bool measuring = false;
  const double give_up = t0 + 120;
  for (;;) {
    while (posted - done < kInflight)
      if (!post(WR_RDMA_WRITE, posted % kSlots)) return fail_out("post_send failed");
    a.t->poll(2000000);
    for (auto& w : a.s.poll_cq(a.cq, 16)) {
      if (w.status != WC_SUCCESS) return fail_out(std::string("WRITE completed with status ") + std::to_string(w.status));
      done++;
    }
    double t = now_s();
    if (!measuring && t - t0 >= warm) { measuring = true; t_start = t; done_at_start = done; }
    if (measuring && t - t_start >= min_secs) break;
    if (t > give_up) return fail_out("no progress");
  }
  double t_end = now_s();
  if (getenv("VL_UDP_BENCH_DEBUG")) {
    auto& x = a.t->stats();
    std::fprintf(stderr, "tx %lu pkts %lu syscalls (GSO %lu sends %lu pkts), rx %lu pkts %lu syscalls (GRO %lu buffers %lu pkts), dropped rx %lu tx %lu, msgs %zu\n",
                 (unsigned long)x.tx_packets, (unsigned long)x.syscalls_tx, (unsigned long)x.tx_gso_sends, (unsigned long)x.tx_gso_segments,
                 (unsigned long)x.rx_packets, (unsigned long)x.syscalls_rx, (unsigned long)x.rx_gro_buffers, (unsigned long)x.rx_gro_segments,
                 (unsigned long)x.rx_dropped, (unsigned long)x.tx_dropped, done);
  }
  double rate = double(done - done_at_start) * kMsg / (t_end - t_start);
  // drain, then the final message (slot 0 again, with immediate) and the checksum check
  while (done < posted) {
    a.t->poll(0);
    for (auto& w : a.s.poll_cq(a.cq, 16)) { if (w.status != WC_SUCCESS) return fail_out("drain failed"); done++; }
    if (now_s() > give_up) return fail_out("drain stalled");
  }
  posted++;
  {
    SendWr w;
    w.wr_id = posted; w.opcode = WR_RDMA_WRITE_WITH_IMM; w.send_flags = SEND_SIGNALED; w.imm_data = 1;
    w.sg_list = {{a.buf.addr, static_cast<uint32_t>(kMsg), a.mr.lkey}};
    w.remote_addr = peer.addr; w.rkey = peer.rkey;
    if (!a.s.post_send(a.qp, {w}).ok()) return fail_out("final post failed");
  }
  bool final_done = false;
  while (!final_done) {
    a.t->poll(0);
    for (auto& w : a.s.poll_cq(a.cq, 16)) { if (w.status != WC_SUCCESS) return fail_out("final write failed"); final_done = true; }
    if (now_s() > give_up) return fail_out("final write stalled");
  }
  uint64_t h = 0;
  if (read(up[0], &h, sizeof h) != sizeof h) return fail_out("no checksum from the target");
  int st = 0;
  waitpid(pid, &st, 0);
  close(up[0]); close(down[1]);
  ok = h == fnv(src.data(), kMsg) && WIFEXITED(st) && WEXITSTATUS(st) == 0;
  if (!ok) why = "target's bytes differ from the source";
  return rate;
}
