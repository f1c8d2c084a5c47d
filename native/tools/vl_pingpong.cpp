// vl_pingpong: rdma-core's ibv_rc_pingpong (libibverbs/examples/rc_pingpong.c) on the Verbs Lab software device,
// speaking RoCEv2 over real UDP and the same out-of-band TCP exchange (docs/wire.md 3.7), so it can face a real
// ibv_rc_pingpong on kernel soft-RoCE or another vl_pingpong. Same options where they apply; -d names the host
// interface the device is attached to (its GID table is built from that interface like rxe's).
#include <getopt.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "net/pingpong.h"
#include "net/udp.h"
#include "vl/session.h"

using namespace vl;

namespace {

enum { PINGPONG_RECV_WRID = 1, PINGPONG_SEND_WRID = 2 };

const char* wc_status_str(uint32_t s) {   // ibv_wc_status_str
  static const char* const t[] = {
      "success", "local length error", "local QP operation error", "local EE context operation error",
      "local protection error", "Work Request Flushed Error", "memory management operation error", "bad response error",
      "local access error", "remote invalid request error", "remote access error", "remote operation error",
      "transport retry counter exceeded", "RNR retry counter exceeded", "local RDD violation error",
      "remote invalid RD request", "aborted error", "invalid EE context number", "invalid EE context state",
      "fatal error", "response timeout error", "general error", "TM error", "TM rendezvous error"};
  return s < sizeof t / sizeof t[0] ? t[s] : "unknown";
}

uint32_t mtu_to_enum(long mtu) {          // pp_mtu_to_enum
  switch (mtu) {
    case 256: return MTU_256;
    case 512: return MTU_512;
    case 1024: return MTU_1024;
    case 2048: return MTU_2048;
    case 4096: return MTU_4096;
    default: return 0;
  }
}

void usage(const char* argv0) {
  std::printf("Usage:\n");
  std::printf("  %s            start a server and wait for connection\n", argv0);
  std::printf("  %s <host>     connect to server at <host>\n", argv0);
  std::printf("\nOptions:\n");
  std::printf("  -p, --port=<port>      listen on/connect to port <port> (default 18515)\n");
  std::printf("  -d, --ib-dev=<dev>     host interface the software device is attached to (default: first up\n"
              "                         interface with an IPv4 address, else lo)\n");
  std::printf("  -i, --ib-port=<port>   use port <port> of IB device (default 1)\n");
  std::printf("  -s, --size=<size>      size of message to exchange (default 4096)\n");
  std::printf("  -m, --mtu=<size>       path MTU (default 1024)\n");
  std::printf("  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n");
  std::printf("  -n, --iters=<iters>    number of exchanges (default 1000)\n");
  std::printf("  -l, --sl=<sl>          service level value\n");
  std::printf("  -e, --events           sleep on CQ events (default poll)\n");
  std::printf("  -g, --gid-idx=<gid index> local port gid index\n");
  std::printf("\nVerbs Lab options:\n");
  std::printf("      --bind=<addr>      attach to this one local address instead of an interface (GID 1)\n");
  std::printf("      --udp-port=<port>  RoCEv2 UDP port of both sides (default 4791)\n");
  std::printf("      --peer-udp-port=<port>  UDP port the peer listens on (default: --udp-port)\n");
  std::printf("      --pcap=<file>      write every RoCEv2 datagram sent and received to a pcap\n");
}

bool parse_num(const char* s, long lo, long hi, long& out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(s, &end, 0);
  if (errno || *end || v < lo || v > hi) return false;
  out = v;
  return true;
}

std::string default_interface() {
  for (auto& i : net::interfaces())
    if (i.up && !i.loopback)
      for (auto& a : i.addrs) if (!a.v6) return i.name;
  return "lo";
}

}  // namespace

int main(int argc, char** argv) {
  long port = net::kPingpongTcpPort, ib_port = 1, size = 4096, rx_depth = 500, iters = 1000, sl = 0, gidx = -1;
  long udp_port = wire::kRoceUdpPort, peer_udp_port = 0;
  uint32_t mtu = MTU_1024;
  bool use_event = false;
  std::string ifname, bind_addr, pcap;
  static const option longopts[] = {
      {"port", required_argument, nullptr, 'p'}, {"ib-dev", required_argument, nullptr, 'd'},
      {"ib-port", required_argument, nullptr, 'i'}, {"size", required_argument, nullptr, 's'},
      {"mtu", required_argument, nullptr, 'm'}, {"rx-depth", required_argument, nullptr, 'r'},
      {"iters", required_argument, nullptr, 'n'}, {"sl", required_argument, nullptr, 'l'},
      {"events", no_argument, nullptr, 'e'}, {"gid-idx", required_argument, nullptr, 'g'},
      {"bind", required_argument, nullptr, 'B'}, {"udp-port", required_argument, nullptr, 'U'},
      {"pcap", required_argument, nullptr, 'P'}, {"peer-udp-port", required_argument, nullptr, 'Q'}, {"help", no_argument, nullptr, 'h'}, {}};
  for (;;) {
    int c = getopt_long(argc, argv, "p:d:i:s:m:r:n:l:eg:h", longopts, nullptr);
    if (c == -1) break;
    long v = 0;
    switch (c) {
      case 'p':
        if (!parse_num(optarg, 1, 65535, port)) { std::fprintf(stderr, "-p: '%s' is not a TCP port (1..65535)\n", optarg); usage(argv[0]); return 1; }
        break;
      case 'd': ifname = optarg; break;
      case 'i':
        if (!parse_num(optarg, 1, 255, ib_port)) { usage(argv[0]); return 1; }
        if (ib_port != 1) { std::fprintf(stderr, "-i: the software device has one port (1)\n"); return 1; }
        break;
      case 's':
        if (!parse_num(optarg, 1, 1 << 30, size)) { std::fprintf(stderr, "-s: '%s' is not a message size (1..1073741824)\n", optarg); usage(argv[0]); return 1; }
        break;
      case 'm':
        if (!parse_num(optarg, 1, 1 << 20, v) || !(mtu = mtu_to_enum(v))) { std::fprintf(stderr, "-m: '%s' is not 256, 512, 1024, 2048 or 4096\n", optarg); usage(argv[0]); return 1; }
        break;
      case 'r':
        if (!parse_num(optarg, 1, 1 << 16, rx_depth)) { std::fprintf(stderr, "-r: '%s' is not a receive depth (1..65536)\n", optarg); usage(argv[0]); return 1; }
        break;
      case 'n':
        if (!parse_num(optarg, 1, 1L << 31, iters)) { std::fprintf(stderr, "-n: '%s' is not an iteration count (1..2^31)\n", optarg); usage(argv[0]); return 1; }
        break;
      case 'l':
        if (!parse_num(optarg, 0, 15, sl)) { std::fprintf(stderr, "-l: '%s' is not a service level (0..15)\n", optarg); usage(argv[0]); return 1; }
        break;
      case 'e': use_event = true; break;
      case 'g':
        if (!parse_num(optarg, 0, 255, gidx)) { std::fprintf(stderr, "-g: '%s' is not a GID index (0..255)\n", optarg); usage(argv[0]); return 1; }
        break;
      case 'B': bind_addr = optarg; break;
      case 'U':
        if (!parse_num(optarg, 1, 65535, udp_port)) { std::fprintf(stderr, "--udp-port: '%s' is not a UDP port\n", optarg); return 1; }
        break;
      case 'P': pcap = optarg; break;
      case 'Q':
        if (!parse_num(optarg, 1, 65535, peer_udp_port)) { std::fprintf(stderr, "--peer-udp-port: '%s' is not a UDP port\n", optarg); return 1; }
        break;
      case 'h': usage(argv[0]); return 0;
      default: usage(argv[0]); return 1;
    }
  }
  std::string servername;
  if (optind == argc - 1) servername = argv[optind];
  else if (optind < argc) { usage(argv[0]); return 1; }
  if (!ifname.empty() && !bind_addr.empty()) { std::fprintf(stderr, "give -d or --bind, not both\n"); return 1; }

  srand48(getpid() * time(nullptr));
  Session s(static_cast<uint64_t>(getpid()) * 2654435761u ^ static_cast<uint64_t>(time(nullptr)));
  s.set_event_capture(false);
  auto dev = s.create_device("rxe");
  if (!dev.ok()) { std::fprintf(stderr, "Couldn't create the software device: %s\n", dev.msg.c_str()); return 1; }
  net::UdpOptions o;
  if (!bind_addr.empty()) o.address = bind_addr;
  else o.interface = ifname.empty() ? default_interface() : ifname;
  o.port = static_cast<uint16_t>(udp_port);
  o.peer_port = static_cast<uint16_t>(peer_udp_port);
  auto tr = net::UdpTransport::attach(s, dev.value, o);
  if (!tr.ok()) { std::fprintf(stderr, "IB device %s not usable: %s\n", (o.address.empty() ? o.interface : o.address).c_str(), tr.msg.c_str()); return 1; }
  net::UdpTransport& t = *tr.value;
  if (!pcap.empty()) t.set_capture(true);

  // pp_init_ctx
  auto buf = s.alloc_buffer(static_cast<uint64_t>(size));
  if (!buf.ok()) { std::fprintf(stderr, "Couldn't allocate work buf.\n"); return 1; }
  std::vector<uint8_t> fillb(static_cast<size_t>(size), 0x7b);
  s.write_memory(buf.value.addr, fillb.data(), fillb.size());
  auto pd = s.alloc_pd(dev.value);
  if (!pd.ok()) { std::fprintf(stderr, "Couldn't allocate PD\n"); return 1; }
  auto mr = s.reg_mr(pd.value, buf.value.addr, static_cast<uint64_t>(size), ACCESS_LOCAL_WRITE);
  if (!mr.ok()) { std::fprintf(stderr, "Couldn't register MR: %s\n", mr.msg.c_str()); return 1; }
  auto cq = s.create_cq(dev.value, static_cast<uint32_t>(rx_depth + 1), use_event);
  if (!cq.ok()) { std::fprintf(stderr, "Couldn't create CQ: %s\n", cq.msg.c_str()); return 1; }
  QpInitAttr ia;
  ia.pd = pd.value; ia.send_cq = cq.value; ia.recv_cq = cq.value; ia.qp_type = QPT_RC;
  ia.cap.max_send_wr = 1; ia.cap.max_recv_wr = static_cast<uint32_t>(rx_depth); ia.cap.max_send_sge = 1; ia.cap.max_recv_sge = 1;
  ia.cap.max_inline_data = 0;
  auto qp = s.create_qp(pd.value, ia);
  if (!qp.ok()) { std::fprintf(stderr, "Couldn't create QP: %s\n", qp.msg.c_str()); return 1; }
  uint32_t send_flags = SEND_SIGNALED;
  if (auto qi = s.query_qp(qp.value.handle); qi && qi->init.cap.max_inline_data >= size) send_flags |= SEND_INLINE;
  {
    QpAttr at;
    at.qp_state = QPS_INIT; at.pkey_index = 0; at.port_num = 1; at.qp_access_flags = 0;
    auto st = s.modify_qp(qp.value.handle, at, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS);
    if (!st.ok()) { std::fprintf(stderr, "Failed to modify QP to INIT: %s\n", st.msg.c_str()); return 1; }
  }
  const Handle qph = qp.value.handle;
  const Sge sge{buf.value.addr, static_cast<uint32_t>(size), mr.value.lkey};
  auto post_recv = [&](long n) {
    long i = 0;
    for (; i < n; i++) {
      RecvWr r; r.wr_id = PINGPONG_RECV_WRID; r.sg_list = {sge};
      if (!s.post_recv(qph, {r}).ok()) break;
    }
    return i;
  };
  auto post_send = [&]() {
    SendWr w; w.wr_id = PINGPONG_SEND_WRID; w.opcode = WR_SEND; w.send_flags = send_flags; w.sg_list = {sge};
    return s.post_send(qph, {w});
  };
  long routs = post_recv(rx_depth);
  if (routs < rx_depth) { std::fprintf(stderr, "Couldn't post receive (%ld)\n", routs); return 1; }
  if (use_event && !s.req_notify_cq(cq.value, false).ok()) { std::fprintf(stderr, "Couldn't request CQ notification\n"); return 1; }

  net::PpDest my;
  my.lid = 0;                                     // LID 0 on RoCE
  my.qpn = qp.value.qp_num;
  my.psn = static_cast<uint32_t>(lrand48() & 0xffffff);
  if (gidx >= 0) {
    if (size_t(gidx) >= t.gids().size()) { std::fprintf(stderr, "can't read sgid of index %ld\n", gidx); return 1; }
    std::memcpy(my.gid, t.gids()[gidx].gid, 16);
  }
  std::printf("  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", my.lid, my.qpn, my.psn, net::gid_text(my.gid).c_str());
  std::fflush(stdout);

  // pp_connect_ctx
  auto connect = [&](const net::PpDest& rem) -> Status {
    bool global = false;
    for (int i = 8; i < 16; i++) global |= rem.gid[i] != 0;   // dest->gid.global.interface_id
    if (!global || gidx < 0)
      return Status{EINVAL, "Failed to modify QP to RTR: RoCE needs a GRH (run both sides with -g <gid index>)"};
    QpAttr at;
    at.qp_state = QPS_RTR; at.path_mtu = mtu; at.dest_qp_num = rem.qpn; at.rq_psn = rem.psn;
    at.max_dest_rd_atomic = 1; at.min_rnr_timer = 12;
    at.dest_device = 0; at.sgid_index = static_cast<uint32_t>(gidx);
    std::memcpy(at.dgid, rem.gid, 16);
    Status st = s.modify_qp(qph, at, QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER);
    if (!st.ok()) return Status{st.err, "Failed to modify QP to RTR: " + st.msg};
    at.qp_state = QPS_RTS; at.timeout = 14; at.retry_cnt = 7; at.rnr_retry = 7; at.sq_psn = my.psn; at.max_rd_atomic = 1;
    st = s.modify_qp(qph, at, QP_STATE | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_SQ_PSN | QP_MAX_QP_RD_ATOMIC);
    if (!st.ok()) return Status{st.err, "Failed to modify QP to RTS: " + st.msg};
    return Status{};
  };
  Result<net::PpDest> rem;
  if (servername.empty()) rem = net::pp_server_exchange(static_cast<uint16_t>(port), my, connect);
  else rem = net::pp_client_exchange(servername, static_cast<uint16_t>(port), my);
  if (!rem.ok()) { std::fprintf(stderr, "Couldn't get remote LID: %s\n", rem.msg.c_str()); return 1; }
  std::printf("  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", rem.value.lid, rem.value.qpn, rem.value.psn,
              net::gid_text(rem.value.gid).c_str());
  std::fflush(stdout);
  if (!servername.empty()) {
    Status st = connect(rem.value);
    if (!st.ok()) { std::fprintf(stderr, "%s\n", st.msg.c_str()); return 1; }
  }

  unsigned pending = PINGPONG_RECV_WRID;
  if (!servername.empty()) {
    if (!post_send().ok()) { std::fprintf(stderr, "Couldn't post send\n"); return 1; }
    pending |= PINGPONG_SEND_WRID;
  }
  timeval start, end;
  gettimeofday(&start, nullptr);
  long rcnt = 0, scnt = 0;
  unsigned num_cq_events = 0;
  while (rcnt < iters || scnt < iters) {
    if (use_event) {
      for (;;) {
        auto ev = s.get_cq_event(dev.value);
        if (ev.ok()) {
          if (ev.value != cq.value) { std::fprintf(stderr, "CQ event for unknown CQ\n"); return 1; }
          break;
        }
        t.poll(10 * 1000 * 1000);
      }
      ++num_cq_events;
      if (!s.req_notify_cq(cq.value, false).ok()) { std::fprintf(stderr, "Couldn't request CQ notification\n"); return 1; }
    }
    std::vector<Wc> wcs;
    for (;;) {
      wcs = s.poll_cq(cq.value, 2);
      if (!wcs.empty() || use_event) break;
      t.poll(10 * 1000 * 1000);
    }
    for (auto& wc : wcs) {
      if (wc.status != WC_SUCCESS) {
        std::fprintf(stderr, "Failed status %s (%u) for wr_id %d\n", wc_status_str(wc.status), wc.status, static_cast<int>(wc.wr_id));
        return 1;
      }
      switch (wc.wr_id) {
        case PINGPONG_SEND_WRID: ++scnt; break;
        case PINGPONG_RECV_WRID:
          if (--routs <= 1) {
            routs += post_recv(rx_depth - routs);
            if (routs < rx_depth) { std::fprintf(stderr, "Couldn't post receive (%ld)\n", routs); return 1; }
          }
          ++rcnt;
          break;
        default:
          std::fprintf(stderr, "Completion for unknown wr_id %d\n", static_cast<int>(wc.wr_id));
          return 1;
      }
      pending &= ~static_cast<unsigned>(wc.wr_id);
      if (scnt < iters && !pending) {
        if (!post_send().ok()) { std::fprintf(stderr, "Couldn't post send\n"); return 1; }
        pending = PINGPONG_RECV_WRID | PINGPONG_SEND_WRID;
      }
    }
  }
  gettimeofday(&end, nullptr);
  t.poll(0);                                       // the last ACKs leave before we go
  {
    double usec = (end.tv_sec - start.tv_sec) * 1000000.0 + (end.tv_usec - start.tv_usec);
    long long bytes = static_cast<long long>(size) * iters * 2;
    std::printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec / 1000000., bytes * 8. / usec);
    std::printf("%ld iters in %.2f seconds = %.2f usec/iter\n", iters, usec / 1000000., usec / iters);
  }
  if (use_event) s.ack_cq_events(cq.value, num_cq_events);
  if (!pcap.empty()) {
    Status st = t.write_pcap(pcap);
    if (!st.ok()) { std::fprintf(stderr, "pcap: %s\n", st.msg.c_str()); return 1; }
  }
  return 0;
}
