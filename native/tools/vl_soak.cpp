// vl_soak: a chaos soak of two software devices talking RoCEv2 over real UDP sockets on loopback.
//   vl_soak [--seconds N] [--seed S] [--json] [--no-faults] [--no-corrupt]
// Two sessions (two "hosts", one thread) on two 127.x addresses, port 4791, one RC QP each. Host A keeps up to 16
// WRs in flight: RDMA WRITE, RDMA READ, SEND (B posts the receives), FETCH_ADD and CMP_SWAP of random sizes (1 B to
// 64 KiB; 8 B for atomics), each in its own 64 KiB slot on both sides so every byte can be checked. Faults: each
// session's seeded injector drops, duplicates, reorders and delays its outgoing datagrams, and a raw sender puts
// corrupted copies of valid-looking datagrams (one bit flipped) on the wire towards B, which its ICRC check must
// drop. Checked: every WR completes exactly once, in posting order, with IBV_WC_SUCCESS; every byte written, read,
// sent and every atomic's original value is what it must be; B's receive completions arrive in order with the
// length sent; the process's RSS does not grow after the warm-up (events are drained as they come). Exit 0 when all
// holds; --json prints the figures (ops, bytes, faults injected, retransmissions, drops, RSS) as one object.
// (netem in a network namespace would add kernel-side faults; this kernel has no sch_netem, so the faults come from
// the device's own injector and the raw corrupter.)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "net/udp.h"
#include "vl/session.h"
#include "vl/wire.h"

using namespace vl;

namespace {

constexpr uint32_t kSlots = 16, kSlot = 64 * 1024;

int64_t mono_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}
long rss_kb() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long kb = 0;
  while (std::fgets(line, sizeof line, f)) if (std::strncmp(line, "VmRSS:", 6) == 0) kb = std::atol(line + 6);
  std::fclose(f);
  return kb;
}
[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "vl_soak: FAILED: %s\n", why.c_str());
  std::exit(1);
}

struct Host {
  Session s;
  Handle dev = 0, pd = 0, cq = 0, qp = 0;
  uint32_t qpn = 0;
  BufferInfo buf;
  MrInfo mr;
  std::unique_ptr<net::UdpTransport> t;
  std::string addr;
  explicit Host(uint64_t seed) : s(seed) {}
  void open(const std::string& a, uint16_t port) {
    addr = a;
    dev = s.create_device("rxe").value;
    net::UdpOptions o;
    o.address = a; o.port = port; o.peer_port = port;
    auto r = net::UdpTransport::attach(s, dev, o);
    if (!r.ok()) die("attach " + a + ": " + r.msg);
    t = std::move(r.value);
    pd = s.alloc_pd(dev).value;
    cq = s.create_cq(dev, 4096).value;
    QpInitAttr ia;
    ia.pd = pd; ia.send_cq = cq; ia.recv_cq = cq; ia.qp_type = QPT_RC; ia.cap.max_send_wr = 64; ia.cap.max_recv_wr = 64;
    auto q = s.create_qp(pd, ia);
    if (!q.ok()) die("create_qp: " + q.msg);
    qp = q.value.handle; qpn = q.value.qp_num;
    buf = s.alloc_buffer(kSlots * kSlot).value;
    auto m = s.reg_mr(pd, buf.addr, kSlots * kSlot, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC);
    if (!m.ok()) die("reg_mr: " + m.msg);
    mr = m.value;
    QpAttr at;
    at.qp_state = QPS_INIT; at.pkey_index = 0; at.port_num = 1;
    at.qp_access_flags = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
    if (!s.modify_qp(qp, at, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS).ok()) die("INIT");
  }
  void connect(const Host& peer, uint32_t my_psn, uint32_t peer_psn) {
    QpAttr at;
    at.qp_state = QPS_RTR; at.path_mtu = MTU_1024; at.dest_qp_num = peer.qpn; at.rq_psn = peer_psn;
    at.max_dest_rd_atomic = 16; at.min_rnr_timer = 1; at.sgid_index = 1;
    std::memcpy(at.dgid, peer.t->gids()[1].gid, 16);
    auto st = s.modify_qp(qp, at, QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER);
    if (!st.ok()) die("RTR: " + st.msg);
    at.qp_state = QPS_RTS; at.sq_psn = my_psn; at.timeout = 8; at.retry_cnt = 7; at.rnr_retry = 7; at.max_rd_atomic = 16;
    st = s.modify_qp(qp, at, QP_STATE | QP_SQ_PSN | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC);
    if (!st.ok()) die("RTS: " + st.msg);
  }
  uint64_t slot(uint32_t i) const { return buf.addr + uint64_t(i) * kSlot; }
  void write(uint64_t va, const std::vector<uint8_t>& v) { if (!s.write_memory(va, v.data(), v.size()).ok()) die("write_memory"); }
  std::vector<uint8_t> read(uint64_t va, size_t n) {
    std::vector<uint8_t> v(n);
    if (!s.read_memory(va, v.data(), n).ok()) die("read_memory");
    return v;
  }
};

std::vector<uint8_t> pattern(size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; v[i] = uint8_t(x); }
  return v;
}
uint64_t get64(const std::vector<uint8_t>& v) { uint64_t x; std::memcpy(&x, v.data(), 8); return x; }
std::vector<uint8_t> put64(uint64_t x) { std::vector<uint8_t> v(8); std::memcpy(v.data(), &x, 8); return v; }

struct Op {
  uint64_t wr_id;
  uint32_t opcode, slot, len;
  std::vector<uint8_t> expect;   // WRITE/SEND: B's bytes; READ: A's bytes; atomics: the original value (A's 8 bytes)
  uint64_t after = 0;            // atomics: B's value afterwards
};

}  // namespace

int main(int argc, char** argv) {
  double seconds = 30;
  uint64_t seed = 1;
  bool json = false, faults = true, corrupt = true;   // --json: one JSON object instead of the text lines
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 0);
    else if (a == "--json") json = true;
    else if (a == "--no-faults") faults = false;
    else if (a == "--no-corrupt") corrupt = false;
    else { std::fprintf(stderr, "usage: vl_soak [--seconds N] [--seed S] [--json] [--no-faults] [--no-corrupt]\n"); return 2; }
  }
  const unsigned p = static_cast<unsigned>(getpid());
  const std::string base = "127." + std::to_string(1 + (p >> 8) % 250) + "." + std::to_string(p & 0xff) + ".";
  Host a(seed), b(seed + 1);
  a.open(base + "20", 4791);
  b.open(base + "21", 4791);
  a.connect(b, 0xfffff0, 500);     // A's PSNs wrap past 2^24 early on
  b.connect(a, 500, 0xfffff0);
  if (faults) {
    FaultConfig f; f.loss = 0.005; f.duplicate = 0.005; f.reorder = 0.01; f.delay = 0.005; f.delay_ns = 2'000'000;
    a.s.set_faults(f);
    b.s.set_faults(f);
  }
  // corrupter: a UDP socket on A's address sending B corrupted datagrams (the ICRC is computed for this socket's
  // address and port, then one bit of BTH..payload is flipped), addressed to a decoy QP of B that nothing else
  // uses: a corrupted datagram that got past the ICRC check would show as a packet received on it (or, with its
  // QPN bits hit, as "no QP"), and is counted as taken: the soak fails on any
  Handle decoy = 0;
  uint32_t decoy_qpn = 0;
  {
    QpInitAttr ia;
    ia.pd = b.pd; ia.send_cq = b.cq; ia.recv_cq = b.cq; ia.qp_type = QPT_RC;
    auto q = b.s.create_qp(b.pd, ia);
    if (!q.ok()) die("decoy QP: " + q.msg);
    decoy = q.value.handle; decoy_qpn = q.value.qp_num;
  }
  int cfd = -1;
  sockaddr_in to{}, from{};
  uint16_t cport = 0;
  if (corrupt) {
    cfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    from.sin_family = AF_INET;
    inet_pton(AF_INET, a.addr.c_str(), &from.sin_addr);
    if (cfd < 0 || bind(cfd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) die("corrupter socket");
    socklen_t fl = sizeof from;
    getsockname(cfd, reinterpret_cast<sockaddr*>(&from), &fl);
    cport = ntohs(from.sin_port);
    to.sin_family = AF_INET; to.sin_port = htons(4791);
    inet_pton(AF_INET, b.addr.c_str(), &to.sin_addr);
  }

  std::mt19937_64 rng(seed);
  std::deque<Op> inflight;          // A's WRs, in posting order
  std::deque<Op> sends;             // SENDs whose receive completion B still owes, in order
  std::vector<bool> busy(kSlots, false);
  uint64_t next_id = 1, ops = 0, bytes = 0, corrupted = 0, by_op[5] = {}, dropped_icrc = 0, dropped_malformed = 0, dropped_other = 0, taken = 0, retransmits = 0;
  // what B's receive path dropped, by reason (a corrupted datagram taken shows as a packet received on the decoy QP)
  auto drain_b = [&] {
    for (auto& e : b.s.drain_events()) {
      if (e.kind == EventKind::PacketReceived && e.obj == decoy) taken++;
      if (e.kind == EventKind::PacketDropped) {
        if (e.text.rfind("bad ICRC", 0) == 0) dropped_icrc++;
        else if (e.text.rfind("malformed", 0) == 0) dropped_malformed++;
        else if (e.text.rfind("no QP", 0) == 0) taken++;
        else {
          dropped_other++;
          if (std::getenv("VL_SOAK_DROPS")) std::fprintf(stderr, "drop: %s\n", e.text.c_str());
        }
      }
    }
  };
  const int64_t t0 = mono_ms(), end = t0 + int64_t(seconds * 1000), warm = t0 + int64_t(seconds * 100);
  long rss_warm = 0, rss_max = 0;
  const uint32_t ops_list[5] = {WR_RDMA_WRITE, WR_RDMA_READ, WR_SEND, WR_ATOMIC_FETCH_AND_ADD, WR_ATOMIC_CMP_AND_SWP};
  int64_t last_progress = mono_ms();
  uint64_t last_ops = 0;

  while (mono_ms() < end || !inflight.empty()) {
    // post while there is room (not after the end)
    while (mono_ms() < end && inflight.size() < kSlots) {
      uint32_t slot = 0;
      while (busy[slot]) slot++;
      Op op;
      op.wr_id = next_id++;
      op.opcode = ops_list[rng() % 5];
      op.slot = slot;
      const bool atomic = op.opcode == WR_ATOMIC_FETCH_AND_ADD || op.opcode == WR_ATOMIC_CMP_AND_SWP;
      op.len = atomic ? 8 : uint32_t(1 + rng() % (rng() % 4 == 0 ? kSlot : 4096));
      SendWr w;
      w.wr_id = op.wr_id; w.opcode = op.opcode; w.send_flags = SEND_SIGNALED;
      w.sg_list = {{a.slot(slot), op.len, a.mr.lkey}};
      w.remote_addr = b.slot(slot); w.rkey = b.mr.rkey;
      if (op.opcode == WR_RDMA_WRITE || op.opcode == WR_SEND) {
        auto v = pattern(op.len, op.wr_id);
        a.write(a.slot(slot), v);
        op.expect = v;
        if (op.opcode == WR_SEND) {
          RecvWr r; r.wr_id = op.wr_id; r.sg_list = {{b.slot(slot), kSlot, b.mr.lkey}};
          if (!b.s.post_recv(b.qp, {r}).ok()) die("post_recv");
          sends.push_back(op);
        }
      } else if (op.opcode == WR_RDMA_READ) {
        auto v = pattern(op.len, op.wr_id ^ 0xABCDEF);
        b.write(b.slot(slot), v);
        op.expect = v;
      } else {
        const uint64_t orig = rng();
        b.write(b.slot(slot), put64(orig));
        op.expect = put64(orig);
        if (op.opcode == WR_ATOMIC_FETCH_AND_ADD) { w.compare_add = rng(); op.after = orig + w.compare_add; }
        else {
          const bool hit = rng() % 2;
          w.compare_add = hit ? orig : orig ^ 1; w.swap = rng();
          op.after = hit ? w.swap : orig;
        }
      }
      auto r = a.s.post_send(a.qp, {w});
      if (!r.ok()) die("post_send: " + r.msg);
      busy[slot] = true;
      inflight.push_back(std::move(op));
    }
    for (Host* h : {&a, &b}) h->t->poll(200000);
    // a corrupted datagram now and then (about 200 a second)
    if (cfd >= 0 && rng() % 16 == 0) {
      wire::Packet pk;
      pk.opcode = wire::RC_SEND_ONLY; pk.dest_qp = decoy_qpn; pk.psn = uint32_t(rng()) & 0xffffff; pk.ack_req = true;
      auto pl = pattern(1 + rng() % 512, rng());
      pk.payload = pl.data(); pk.payload_len = pl.size();
      wire::Framing f;
      std::memcpy(f.src_ip, &from.sin_addr, 4);
      std::memcpy(f.dst_ip, &to.sin_addr, 4);
      f.src_port = cport; f.dst_port = 4791;
      std::vector<uint8_t> udp;
      wire::encode(pk, f, udp);
      // one bit after byte 0 (the opcode) and before the ICRC, not in BTH byte 4 (FECN, BECN and reserved bits: variant
      // fields the ICRC does not cover, IBA Annex A17 / rxe_icrc.c)
      size_t bit;
      do bit = 8 + rng() % ((udp.size() - 12) * 8); while (bit / 8 == 4);
      udp[bit / 8] ^= uint8_t(1u << (bit % 8));
      if (sendto(cfd, udp.data(), udp.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) == ssize_t(udp.size())) corrupted++;
    }
    // A's completions: exactly once, in posting order, successful, with the right bytes
    for (auto& wc : a.s.poll_cq(a.cq, 64)) {
      if (inflight.empty()) die("a completion with nothing in flight (wr_id " + std::to_string(wc.wr_id) + ")");
      Op op = std::move(inflight.front());
      inflight.pop_front();
      if (wc.wr_id != op.wr_id) die("completion out of order or twice: wr_id " + std::to_string(wc.wr_id) + ", expected " + std::to_string(op.wr_id));
      if (wc.status != WC_SUCCESS) die("wr " + std::to_string(wc.wr_id) + " completed with status " + std::to_string(wc.status));
      if (op.opcode == WR_RDMA_WRITE && b.read(b.slot(op.slot), op.len) != op.expect) die("RDMA WRITE bytes differ, wr " + std::to_string(op.wr_id));
      if (op.opcode == WR_RDMA_READ && a.read(a.slot(op.slot), op.len) != op.expect) die("RDMA READ bytes differ, wr " + std::to_string(op.wr_id));
      if (op.opcode == WR_ATOMIC_FETCH_AND_ADD || op.opcode == WR_ATOMIC_CMP_AND_SWP) {
        if (a.read(a.slot(op.slot), 8) != op.expect) die("atomic original value differs, wr " + std::to_string(op.wr_id));
        if (get64(b.read(b.slot(op.slot), 8)) != op.after) die("atomic result differs, wr " + std::to_string(op.wr_id));
      }
      if (op.opcode != WR_SEND) busy[op.slot] = false;   // a SEND's slot is B's until its receive completion
      ops++;
      bytes += op.len;
      for (int k = 0; k < 5; k++) by_op[k] += ops_list[k] == op.opcode;
    }
    // B's receive completions: in the order of the SENDs, with their length and bytes
    for (auto& wc : b.s.poll_cq(b.cq, 64)) {
      if (sends.empty()) die("a receive completion with no SEND outstanding");
      Op op = std::move(sends.front());
      sends.pop_front();
      if (wc.wr_id != op.wr_id || wc.status != WC_SUCCESS || wc.byte_len != op.len)
        die("receive completion wr " + std::to_string(wc.wr_id) + " status " + std::to_string(wc.status) + " len " + std::to_string(wc.byte_len) + ", expected wr " + std::to_string(op.wr_id) + " len " + std::to_string(op.len));
      if (b.read(b.slot(op.slot), op.len) != op.expect) die("SEND bytes differ, wr " + std::to_string(op.wr_id));
      busy[op.slot] = false;
    }
    for (auto& e : a.s.drain_events())            // A's requester going back to its oldest unacknowledged PSN
      if (e.kind == EventKind::Timer && e.text.rfind("retransmit", 0) == 0) retransmits++;
    drain_b();
    const int64_t now = mono_ms();
    if (ops != last_ops) { last_ops = ops; last_progress = now; }
    else if (now - last_progress > 30000) die("no completion for 30 s: a WR is stuck (" + std::to_string(inflight.size()) + " in flight)");
    if (!rss_warm && now >= warm) rss_warm = rss_kb();
    if (rss_warm) rss_max = std::max(rss_max, rss_kb());
  }
  // the receives B still holds: SENDs whose completion came on A before B's poll; drain them
  for (int64_t t = mono_ms(); !sends.empty() && mono_ms() - t < 5000;) {
    for (Host* h : {&a, &b}) h->t->poll(200000);
    for (auto& wc : b.s.poll_cq(b.cq, 64)) {
      Op op = std::move(sends.front());
      sends.pop_front();
      if (wc.wr_id != op.wr_id || wc.status != WC_SUCCESS || b.read(b.slot(op.slot), op.len) != op.expect) die("late receive completion wrong");
    }
  }
  if (!sends.empty()) die(std::to_string(sends.size()) + " receive completions missing");
  // the last corrupted datagrams may still be on their way to B when the loop ends: receive them (bounded wait)
  for (int64_t t = mono_ms(); corrupt && dropped_icrc + dropped_malformed + b.t->stats().rx_dropped + taken < corrupted && mono_ms() - t < 5000;) {
    for (Host* h : {&a, &b}) h->t->poll(200000);
    drain_b();
  }
  const auto& sa = a.t->stats();
  const auto& sb = b.t->stats();
  const long growth = rss_max - rss_warm;
  if (growth > 32 * 1024) die("RSS grew by " + std::to_string(growth / 1024) + " MiB after the warm-up");
  // every corrupted datagram is dropped, by the ICRC check or before it (malformed), never taken
  if (taken) die(std::to_string(taken) + " of " + std::to_string(corrupted) + " corrupted datagrams got past B's ICRC check");
  if (corrupt && dropped_icrc + dropped_malformed + sb.rx_dropped < corrupted)
    die("B dropped " + std::to_string(dropped_icrc + dropped_malformed + sb.rx_dropped) + " datagrams as corrupt but " + std::to_string(corrupted) + " corrupted ones were sent");
  const double secs = (mono_ms() - t0) / 1000.0;
  if (json) {
    std::printf("{\"seconds\": %.1f, \"ops\": %llu, \"bytes\": %llu, \"writes\": %llu, \"reads\": %llu, \"sends\": %llu, \"fetch_adds\": %llu, \"cmp_swaps\": %llu,"
                " \"lost\": 0, \"retransmits\": %llu, \"injected\": {\"loss\": %llu, \"duplicate\": %llu, \"corrupted\": %llu}, \"b_dropped\": {\"bad_icrc\": %llu, \"malformed\": %llu, \"out_of_sequence\": %llu},"
                " \"a\": {\"tx_packets\": %llu, \"rx_packets\": %llu, \"rx_dropped\": %llu}, \"b\": {\"tx_packets\": %llu, \"rx_packets\": %llu, \"rx_dropped\": %llu},"
                " \"rss_kb\": {\"after_warmup\": %ld, \"max\": %ld}}\n",
                secs, (unsigned long long)ops, (unsigned long long)bytes, (unsigned long long)by_op[0], (unsigned long long)by_op[1],
                (unsigned long long)by_op[2], (unsigned long long)by_op[3], (unsigned long long)by_op[4], (unsigned long long)retransmits,
                (unsigned long long)(sa.tx_injected_loss + sb.tx_injected_loss), (unsigned long long)(sa.tx_injected_dup + sb.tx_injected_dup),
                (unsigned long long)corrupted, (unsigned long long)dropped_icrc, (unsigned long long)(dropped_malformed + sb.rx_dropped), (unsigned long long)dropped_other, (unsigned long long)sa.tx_packets, (unsigned long long)sa.rx_packets, (unsigned long long)sa.rx_dropped,
                (unsigned long long)sb.tx_packets, (unsigned long long)sb.rx_packets, (unsigned long long)sb.rx_dropped, rss_warm, rss_max);
  } else {
    std::printf("vl_soak: %.1f s, %llu ops (%llu WRITE, %llu READ, %llu SEND, %llu FETCH_ADD, %llu CMP_SWAP), %.1f MB verified, 0 lost\n",
                secs, (unsigned long long)ops, (unsigned long long)by_op[0], (unsigned long long)by_op[1], (unsigned long long)by_op[2],
                (unsigned long long)by_op[3], (unsigned long long)by_op[4], bytes / 1e6);
    std::printf("  injected: %llu lost, %llu duplicated (device injector), %llu corrupted datagrams to B; B dropped %llu on a bad ICRC and %llu malformed (0 taken), %llu out of sequence (after losses); datagrams A %llu/%llu, B %llu/%llu (tx/rx)\n",
                (unsigned long long)(sa.tx_injected_loss + sb.tx_injected_loss), (unsigned long long)(sa.tx_injected_dup + sb.tx_injected_dup),
                (unsigned long long)corrupted, (unsigned long long)dropped_icrc, (unsigned long long)(dropped_malformed + sb.rx_dropped), (unsigned long long)dropped_other, (unsigned long long)sa.tx_packets, (unsigned long long)sa.rx_packets,
                (unsigned long long)sb.tx_packets, (unsigned long long)sb.rx_packets);
    std::printf("  A's requester retransmitted (went back to its oldest unacknowledged PSN) %llu times\n", (unsigned long long)retransmits);
    std::printf("  RSS after warm-up %ld KiB, max %ld KiB\n", rss_warm, rss_max);
  }
  if (cfd >= 0) close(cfd);
  return 0;
}
