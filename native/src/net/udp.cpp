// RoCEv2 over UDP sockets: see udp.h.
#include "net/udp.h"

#include "net/addr.h"
#include "net/ipv4_id.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/udp.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace vl::net {

namespace {

constexpr size_t kTxBatch = 64;
constexpr size_t kRxBatch = 64;
constexpr size_t kRxSlot = 9216;               // > 4096 PMTU + headers; bigger datagrams are refused as truncated
constexpr size_t kRxSlotGro = 65536;           // a UDP GRO buffer: up to a 64 KiB IP datagram of coalesced segments
constexpr int64_t kSpinNs = 50000;             // keep polling this long after the last datagram before sleeping
// UDP GSO limits (net/ipv4/udp.c udp_send_skb): at most UDP_MAX_SEGMENTS segments (64 before Linux 5.x raised it to
// 128: the older bound is used), and the whole super-buffer is one UDP datagram, <= 65535 - 20 - 8 bytes of payload.
constexpr size_t kGsoMaxSegs = 64;
static_assert(kGsoMaxSegs <= kGsoIdWindow, "the receive side accepts the IDs of kGsoIdWindow segments (ipv4_id.h)");
constexpr size_t kGsoMaxBytes = 65507;

int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string err_text(int e) { return std::strerror(e); }

}  // namespace

// ---------------------------------------------------------------- transport

// GSO is usable on this socket when the kernel knows UDP_SEGMENT; GRO is on when setsockopt(UDP_GRO) is accepted.
static Result<int> open_socket(const IpAddr& ip, uint16_t port, bool& gso, bool& gro) {
  int fd = socket(ip.v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
  if (fd < 0) return rfail<int>(errno, std::string("socket: ") + err_text(errno));
  int one = 1;
  if (ip.v6) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    int pmtu = IPV6_PMTUDISC_DO;
    setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof pmtu);
    setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof one);   // link-local may still be tentative (DAD)
    // Linux Soft-RoCE sends every RoCEv2 datagram with UDP checksum 0, over IPv6 too (rxe_net.c prepare_udp_hdr), and
    // its own tunnel socket accepts that (udp_sock_create with use_udp6_rx_checksums unset). An ordinary IPv6 UDP
    // socket drops such datagrams (Udp6InCsumErrors, RFC 8200 8.1), so without this every kernel packet was lost.
    // A non-zero checksum is still verified by the kernel. We keep sending real checksums: rxe, hardware RoCE and
    // any IPv6 stack accept them; a zero one would be dropped by a peer socket without this option.
    if (setsockopt(fd, SOL_UDP, UDP_NO_CHECK6_RX, &one, sizeof one) != 0) {
      int e = errno; close(fd);
      return rfail<int>(e, std::string("setsockopt UDP_NO_CHECK6_RX: ") + err_text(e));
    }
  } else {
    int pmtu = IP_PMTUDISC_DO;                       // DF set: Linux writes IPv4 ID 0 on unconnected sockets
    if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu) != 0) {
      int e = errno; close(fd);
      return rfail<int>(e, std::string("setsockopt IP_MTU_DISCOVER: ") + err_text(e));
    }
  }
  if (gso) {
    int seg = 0;
    socklen_t sl = sizeof seg;
    gso = getsockopt(fd, SOL_UDP, UDP_SEGMENT, &seg, &sl) == 0;
  }
  if (gro) gro = setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one) == 0;
  int sz = 8 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof sz) != 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof sz) != 0) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
  sockaddr_storage ss;
  socklen_t len = to_sockaddr(ip, port, ss);
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    int e = errno; close(fd);
    return rfail<int>(e, "bind [" + ip_text(ip) + "]:" + std::to_string(port) + ": " + err_text(e));
  }
  return rok(fd);
}

Result<std::unique_ptr<UdpTransport>> UdpTransport::attach(Session& s, Handle devh, const UdpOptions& o, UdpField* bad) {
  using R = Result<std::unique_ptr<UdpTransport>>;
  auto refuse = [bad](UdpField f, int err, std::string msg) {
    if (bad) *bad = f;
    return rfail<std::unique_ptr<UdpTransport>>(err, std::move(msg));
  };
  SessionImpl& S = s.internals();
  Device* d = S.dev(devh);
  if (!d) return refuse(UdpField::Device, ENOENT, "dev: no device with handle " + std::to_string(devh));
  if (d->port) return refuse(UdpField::Device, EBUSY, "dev: device " + d->name + " is already on the network");
  if (S.free_running) return refuse(UdpField::Session, EINVAL, "session: free-running mode is on; the UDP transport drives the engine in real time through poll()");
  if (o.interface.empty() == o.address.empty()) return refuse(UdpField::Options, EINVAL, "options: give exactly one of interface or address");
  std::unique_ptr<UdpTransport> t(new UdpTransport(s, devh));
  t->port_ = o.port;
  t->peer_port_ = o.peer_port ? o.peer_port : o.port;
  t->busy_ = o.busy_poll;
  t->zero_copy_ = o.zero_copy;
  t->any_ipv4_id_ = o.any_ipv4_id;
  std::vector<GidEntry> gids;
  std::vector<IpAddr> bind_to;                     // per gid index; !bindable -> no socket
  std::vector<bool> bindable;
  uint32_t mtu = 0;
  if (!o.interface.empty()) {
    auto ifc = find_interface(o.interface);
    if (!ifc.ok()) return refuse(UdpField::Interface, ifc.err, ifc.msg);
    if (!ifc.value.up) return refuse(UdpField::Interface, ENETDOWN, "interface: " + o.interface + " is down");
    t->ifname_ = ifc.value.name;
    mtu = ifc.value.mtu;
    gids = roce_gid_table(ifc.value);
    for (auto& g : gids) {
      IpAddr ip;
      gid_to_ip(g.gid, ip);
      if (link_local(ip)) ip.scope_id = ifc.value.index;
      bool assigned = false;
      for (auto& a : ifc.value.addrs) assigned |= same_ip(a, ip);
      bind_to.push_back(ip);
      bindable.push_back(assigned);
    }
  } else {
    auto ip = parse_ip(o.address);
    if (!ip.ok()) return refuse(UdpField::Address, ip.err, ip.msg);
    auto ifc = interface_with_address(ip.value);
    if (!ifc.ok()) return refuse(UdpField::Address, ifc.err, ifc.msg);
    if (link_local(ip.value) && !ip.value.scope_id) ip.value.scope_id = ifc.value.index;
    t->ifname_ = ifc.value.name;
    mtu = ifc.value.mtu;
    GidEntry g0 = roce_gid_table(ifc.value)[0];
    GidEntry g1{1, {}, "RoCE v2"};
    ip_to_gid(ip.value, g1.gid);
    gids = {g0, g1};
    IpAddr none;
    bind_to = {none, ip.value};
    bindable = {false, true};
  }
  bool gso = o.gso, gro = o.gro;
  for (size_t i = 0; i < gids.size(); i++) {
    t->sock_of_gid_.push_back(-1);
    if (!bindable[i]) continue;
    auto fd = open_socket(bind_to[i], t->port_, gso, gro);   // one socket without them turns them off for all
    if (!fd.ok()) {
      for (auto& k : t->socks_) close(k.fd);
      t->socks_.clear();
      // the socket of an address given by the caller, else the port every GID's socket binds
      return refuse(o.address.empty() ? UdpField::Port : UdpField::Address, fd.err, "GID " + std::to_string(i) + ": " + fd.msg);
    }
    if (t->port_ == 0) {                           // ephemeral: every other GID's socket takes the same port
      sockaddr_storage ss;
      socklen_t len = sizeof ss;
      getsockname(fd.value, reinterpret_cast<sockaddr*>(&ss), &len);
      IpAddr dummy;
      from_sockaddr(reinterpret_cast<sockaddr*>(&ss), dummy, t->port_);
      if (!o.peer_port) t->peer_port_ = t->port_;
    }
    t->sock_of_gid_.back() = static_cast<int>(t->socks_.size());
    t->socks_.push_back({fd.value, bind_to[i], static_cast<uint32_t>(i)});
  }
  if (t->socks_.empty()) return rfail<std::unique_ptr<UdpTransport>>(EADDRNOTAVAIL, "interface: " + t->ifname_ + " has no IPv4/IPv6 address to bind");
  t->gids_ = gids;
  d->gids = gids;
  if (mtu) d->profile.active_mtu = std::min<uint32_t>(roce_active_mtu(mtu), MTU_4096);
  d->port = t.get();
  t->base_ = mono_ns() - int64_t(S.now);
  t->txq_.resize(kTxBatch + 2);
  t->gso_ = t->stats_.gso = gso;
  t->gro_ = t->stats_.gro = gro;
  t->rx_slot_ = o.gro ? kRxSlotGro : kRxSlot;     // a socket that took UDP_GRO may hand over up to 64 KiB
  t->rxbuf_.resize(kRxBatch * t->rx_slot_);
  t->rxh_.resize(kRxBatch);
  t->rxiov_.resize(kRxBatch);
  t->rxfrom_.resize(kRxBatch);
  t->rxctl_.resize(kRxBatch);
  t->rx_dirty_ = kRxBatch;
  if (S.capture) {
    std::string where;
    for (auto& k : t->socks_) where += (where.empty() ? "" : ", ") + std::string("[") + ip_text(k.ip) + "]:" + std::to_string(t->port_);
    auto& e = S.emit(EventKind::ObjectModified, devh, devh, "device", "device " + d->name + " on the network: " + t->ifname_ + " " + where);
    e.a = t->port_; e.b = t->peer_port_; e.c = gids.size(); e.d = mtu; e.why(Change::NetAttach);
  }
  R r;
  r.value = std::move(t);
  return r;
}

UdpTransport::~UdpTransport() {
  if (Device* d = S_.dev(dev_); d && d->port == this) d->port = nullptr;
  for (auto& k : socks_) close(k.fd);
}

wire::Framing UdpTransport::framing_for(const Sock& k, const IpAddr& peer, uint16_t sport, uint16_t dport) const {
  wire::Framing f;
  f.ipv6 = k.ip.v6;
  std::memcpy(f.src_ip, k.ip.a, k.ip.v6 ? 16 : 4);
  std::memcpy(f.dst_ip, peer.a, peer.v6 ? 16 : 4);
  f.src_port = sport;
  f.dst_port = dport;
  f.ip_id = 0;                                     // DF + unconnected socket: Linux writes ID 0
  f.df = true;
  return f;
}

void UdpTransport::drop_tx(Handle obj, const char* kind, const wire::Packet& p, const std::string& why) {
  stats_.tx_dropped++;
  if (!S_.capture) return;
  auto& e = S_.emit(EventKind::PacketDropped, dev_, obj, kind, std::string("not sent: ") + why);
  e.a = p.opcode; e.b = p.dest_qp; e.c = p.psn; e.d = 0;
}

void UdpTransport::drop_rx(const std::string& why, const uint8_t* p, size_t n) {
  stats_.rx_dropped++;
  if (!S_.capture) return;
  auto& e = S_.emit(EventKind::PacketDropped, dev_, 0, "packet", why);
  e.pkt.assign(p, p + std::min<size_t>(n, 65536));
}

void UdpTransport::transmit(Qp& q, wire::Packet& p, bool payload_in_memory) {
  // RC / UC: the QP's address vector; UD: the address handle of the WQE being sent (req_run sends sq[req_idx])
  uint32_t gi = q.attr.sgid_index;
  const uint8_t* dgid = q.attr.dgid;
  if (q.init.qp_type == QPT_UD) {
    const Ah* a = nullptr;
    if (q.req_idx < q.sq.size()) if (auto it = S_.ahs.find(q.sq[q.req_idx].wr.ah); it != S_.ahs.end()) a = &it->second;
    if (!a || !a->remote) return drop_tx(q.h, "qp", p, "UD: the address handle names no remote GID (Session::create_ah_remote)");
    gi = a->sgid_index;
    dgid = a->dgid;
  }
  send_to(q.h, "qp", p, gi, dgid, payload_in_memory);
}

void UdpTransport::transmit_gmp(wire::Packet& p, uint32_t sgid_index, const uint8_t dgid[16]) {
  send_to(0, "cm", p, sgid_index, dgid, false);
}

void UdpTransport::send_to(Handle obj, const char* kind, wire::Packet& p, uint32_t gi, const uint8_t* dgid, bool payload_in_memory) {
  if (gi >= sock_of_gid_.size() || sock_of_gid_[gi] < 0)
    return drop_tx(obj, kind, p, "sgid_index " + std::to_string(gi) + " has no socket (GID not assigned to " + ifname_ + ")");
  IpAddr peer;
  if (!gid_to_ip(dgid, peer)) return drop_tx(obj, kind, p, "the QP has no remote GID (modify_qp to RTR with IBV_QP_AV and a dgid)");
  const Sock& k = socks_[sock_of_gid_[gi]];
  if (peer.v6 != k.ip.v6)
    return drop_tx(obj, kind, p, "dgid " + gid_text(dgid) + " and sgid " + gid_text(gids_[gi].gid) + " are not the same IP version");
  if (link_local(peer)) peer.scope_id = k.ip.scope_id;
  int copies = 1;
  if (S_.faults.loss > 0 || S_.faults.duplicate > 0) {
    std::uniform_real_distribution<double> u(0, 1);
    double r_loss = u(S_.fault_rng), r_dup = u(S_.fault_rng);
    if (r_loss < S_.faults.loss) {
      stats_.tx_injected_loss++;
      if (S_.capture) {
        auto& e = S_.emit(EventKind::Fault, dev_, 0, "packet", std::string("loss: ") + wire::opcode_name(p.opcode) + " PSN " + std::to_string(p.psn));
        e.a = uint64_t(FaultKind::Loss); e.b = p.dest_qp; e.c = p.psn; e.d = 0;
      }
      return;
    }
    if (r_dup < S_.faults.duplicate) {
      copies = 2;
      stats_.tx_injected_dup++;
      if (S_.capture) { auto& e = S_.emit(EventKind::Fault, dev_, 0, "packet", "duplicate: PSN " + std::to_string(p.psn)); e.a = uint64_t(FaultKind::Duplicate); e.c = p.psn; e.d = 0; }
    }
  }
  const wire::Framing f0 = framing_for(k, peer, port_, peer_port_);
  sockaddr_storage to;
  const socklen_t tolen = to_sockaddr(peer, peer_port_, to);
  const size_t len = wire::encoded_len(p);
  for (int c = 0; c < copies; c++) {
    if (ntx_ >= kTxBatch) flush();                 // flush() keeps the slots' bytes, only the count resets
    Tx& t = txq_[ntx_];
    t.sock = sock_of_gid_[gi];
    t.to = to;
    t.tolen = tolen;
    t.f = f0;
    t.seg = 0;
    t.closed = false;
    t.rec = SIZE_MAX;
    if (gso_ && ntx_ > 0) {
      // joins the group before it: same socket and peer, not longer than the group's segment size (a shorter one
      // is the group's last; only after two equal ones, so a first packet with a RETH does not end a run of middles)
      const Tx& prev = txq_[ntx_ - 1];
      const size_t seg = txq_[ntx_ - 1 - prev.seg].len;
      if (!prev.closed && prev.sock == t.sock && prev.tolen == tolen && std::memcmp(&prev.to, &to, tolen) == 0 &&
          (len == seg || (len < seg && prev.seg > 0)) && prev.seg + 1u < kGsoMaxSegs && (prev.seg + 2u) * seg <= kGsoMaxBytes) {
        t.seg = static_cast<uint16_t>(prev.seg + 1);
        t.closed = len < seg;
        if (!t.f.ipv6) t.f.ip_id = t.seg;           // inet_gso_segment: segment k gets the super-buffer's ID (0) + k
      }
    }
    ntx_++;
    t.len = len;
    t.zc = nullptr;
    if (zero_copy_ && payload_in_memory && p.payload_len >= 1024 && !capture_ && !S_.capture) {
      // the MR's bytes stay put until flush(): it runs before this poll() returns, and no packet is delivered into
      // memory in between (run_due sends, then flush; receive flushes after each buffer it delivers)
      t.hl = wire::encode_split(p, t.f, t.hdr, t.tail, &t.tl);
      t.zc = p.payload;
      t.zc_len = p.payload_len;
      stats_.tx_zero_copy++;
      continue;
    }
    wire::encode(p, t.f, t.buf);
    if (capture_) { t.rec = recs_.size(); recs_.push_back({S_.now, t.f, t.buf}); }
    if (S_.capture && c == 0) {
      auto& e = S_.emit(EventKind::PacketSent, dev_, obj, kind, wire::opcode_name(p.opcode));
      e.a = p.opcode; e.b = p.dest_qp; e.c = p.psn; e.d = 0;
      e.pkt = t.buf;
    }
  }
}

void UdpTransport::flush() {
  size_t i = 0;
  while (i < ntx_) {                               // runs of one socket's packets (a GSO group never spans two)
    size_t j = i + 1;
    while (j < ntx_ && txq_[j].sock == txq_[i].sock) j++;
    send_run(txq_[i].sock, i, j);
    i = j;
  }
  ntx_ = 0;
}

void UdpTransport::send_run(int sk, size_t first, size_t end) {
  mmsghdr hdr[kTxBatch + 2];
  iovec iov[3 * (kTxBatch + 2)];                   // a zero-copy packet takes three: headers, payload in the MR, pad + ICRC
  size_t start[kTxBatch + 2], count[kTxBatch + 2];   // per message: first packet, packets in it
  alignas(cmsghdr) char ctl[kTxBatch + 2][CMSG_SPACE(sizeof(uint16_t))];
  size_t nm = 0, ni = 0;
  for (size_t i = first; i < end;) {               // one message per GSO group (or single packet)
    size_t n = 1;
    while (i + n < end && txq_[i + n].seg > 0) n++;
    hdr[nm] = {};
    msghdr& h = hdr[nm].msg_hdr;
    h.msg_iov = &iov[ni];
    for (size_t m = 0; m < n; m++) {
      Tx& t = txq_[i + m];
      if (!t.zc) { iov[ni++] = {t.buf.data(), t.buf.size()}; continue; }
      iov[ni++] = {t.hdr, t.hl};
      iov[ni++] = {const_cast<uint8_t*>(t.zc), t.zc_len};
      iov[ni++] = {t.tail, t.tl};
    }
    h.msg_iovlen = size_t(&iov[ni] - h.msg_iov);
    h.msg_name = &txq_[i].to;
    h.msg_namelen = txq_[i].tolen;
    if (n > 1) {                                   // UDP_SEGMENT cmsg: the kernel cuts the iovecs' bytes every gso_size
      h.msg_control = ctl[nm];
      h.msg_controllen = sizeof ctl[nm];
      cmsghdr* cm = CMSG_FIRSTHDR(&h);
      cm->cmsg_level = SOL_UDP;
      cm->cmsg_type = UDP_SEGMENT;
      cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
      const uint16_t gs = static_cast<uint16_t>(txq_[i].len);
      std::memcpy(CMSG_DATA(cm), &gs, sizeof gs);
    }
    start[nm] = i;
    count[nm] = n;
    nm++;
    i += n;
  }
  size_t done = 0;
  while (done < nm) {
    int r = sendmmsg(socks_[sk].fd, hdr + done, static_cast<unsigned>(nm - done), 0);
    stats_.syscalls_tx++;
    if (r > 0) {
      for (size_t m = done; m < done + size_t(r); m++) {
        for (size_t x = 0; x < count[m]; x++) stats_.tx_bytes += txq_[start[m] + x].len;
        stats_.tx_packets += count[m];
        if (count[m] > 1) { stats_.tx_gso_sends++; stats_.tx_gso_segments += count[m]; }
      }
      done += r;
      continue;
    }
    int e = errno;
    if (e == EINTR) continue;
    if (e == EAGAIN || e == ENOBUFS) {
      pollfd pf{socks_[sk].fd, POLLOUT, 0};
      ::poll(&pf, 1, 1);
      continue;
    }
    if (count[done] > 1 && (e == EINVAL || e == ENOPROTOOPT || e == EIO || e == EOPNOTSUPP)) {
      // the kernel refuses UDP GSO here (no checksum offload on the route's device, xfrm, ...): off for good, and
      // these packets go one per datagram, their IPv4 IDs (so ICRCs) now those of single datagrams
      gso_off(start[done], end, e);
      return send_run(sk, start[done], end);
    }
    // this datagram (or group) cannot go (EMSGSIZE with DF, unreachable...): report it and go on with the rest
    stats_.tx_dropped += count[done];
    if (S_.capture) {
      const Tx& t = txq_[start[done]];
      auto& ev = S_.emit(EventKind::PacketDropped, dev_, 0, "packet", "send to " + std::to_string(t.tolen) + "-byte address failed: " + err_text(e));
      if (!t.zc) ev.pkt = t.buf;                   // (a zero-copy packet is never sent while events are recorded)
    }
    done++;
  }
}

void UdpTransport::gso_off(size_t first, size_t end, int e) {
  gso_ = stats_.gso = false;
  stats_.gso_fallback_errno = e;
  for (size_t i = first; i < end; i++) {
    Tx& t = txq_[i];
    t.seg = 0;
    t.closed = false;
    if (t.f.ipv6 || t.f.ip_id == 0) continue;
    t.f.ip_id = 0;                                 // re-frame: a single DF datagram from an unconnected socket has ID 0
    uint32_t c;
    if (t.zc) {
      c = wire::icrc_split(t.f, t.hdr, t.hl, t.zc, t.zc_len, t.tail, t.tl - 4);
    } else {
      c = wire::icrc(t.f, t.buf.data(), t.buf.size());
    }
    uint8_t* q = t.zc ? t.tail + t.tl - 4 : t.buf.data() + t.buf.size() - 4;
    q[0] = uint8_t(c); q[1] = uint8_t(c >> 8); q[2] = uint8_t(c >> 16); q[3] = uint8_t(c >> 24);
    if (t.rec < recs_.size()) { recs_[t.rec].f = t.f; recs_[t.rec].pkt = t.buf; }
  }
}

size_t UdpTransport::receive(Sock& k) {
  mmsghdr* hdr = rxh_.data();
  sockaddr_storage* from = rxfrom_.data();
  size_t total = 0;
  for (int round = 0; round < 8; round++) {
    for (size_t i = 0; i < rx_dirty_; i++) {
      rxiov_[i] = {rxbuf_.data() + i * rx_slot_, rx_slot_};
      hdr[i] = {};
      hdr[i].msg_hdr.msg_name = &from[i];
      hdr[i].msg_hdr.msg_namelen = sizeof from[i];
      hdr[i].msg_hdr.msg_iov = &rxiov_[i];
      hdr[i].msg_hdr.msg_iovlen = 1;
      if (gro_) { hdr[i].msg_hdr.msg_control = rxctl_[i].b; hdr[i].msg_hdr.msg_controllen = sizeof rxctl_[i].b; }
    }
    int r = recvmmsg(k.fd, hdr, kRxBatch, MSG_DONTWAIT, nullptr);
    rx_dirty_ = r > 0 ? size_t(r) : 1;              // (an error: the first header may have been written, cheap to redo)
    stats_.syscalls_rx++;
    if (r <= 0) break;
    for (int i = 0; i < r; i++) {
      const uint8_t* data = rxbuf_.data() + i * rx_slot_;
      const msghdr& h = hdr[i].msg_hdr;
      size_t n = hdr[i].msg_len;
      size_t seg = n;                              // UDP GRO: n bytes of datagrams of seg bytes each, the last shorter
      for (cmsghdr* cm = h.msg_controllen ? CMSG_FIRSTHDR(&h) : nullptr; cm; cm = CMSG_NXTHDR(const_cast<msghdr*>(&h), cm))
        if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
          int gs = 0;
          std::memcpy(&gs, CMSG_DATA(cm), sizeof gs);
          if (gs > 0 && size_t(gs) < n) seg = size_t(gs);
        }
      if ((h.msg_flags & MSG_TRUNC) || seg > kRxSlot) {   // no RoCE packet is this big (a GRO buffer may be)
        stats_.rx_packets++; stats_.rx_bytes += n; total++;
        drop_rx("malformed: datagram larger than " + std::to_string(kRxSlot) + " bytes", data, n);
        continue;
      }
      IpAddr src;
      uint16_t sport = 0;
      const bool from_ok = from_sockaddr(reinterpret_cast<const sockaddr*>(&from[i]), src, sport) && src.v6 == k.ip.v6;
      if (seg < n) { stats_.rx_gro_buffers++; stats_.rx_gro_segments += (n + seg - 1) / seg; }
      size_t off = 0;
      uint16_t idx = 0;
      do {                                         // (an empty datagram too: refused as too short)
        const size_t m = std::min(seg, n - off);
        stats_.rx_packets++;
        stats_.rx_bytes += m;
        total++;
        if (!from_ok) drop_rx("malformed: unexpected source address family", data + off, m);
        else receive_datagram(k, src, sport, data + off, m, idx);
        off += m;
        idx++;
      } while (off < n);
      // an ACK (or read response) this buffer produced goes out now: the peer's requester may be waiting for it
      // (RC: at most 128 unacknowledged PSNs, an ACK requested every 64 packets, rxe_req.c / rxe_resp.c)
      if (ntx_) flush();
    }
    flush();                                       // ACKs / read responses out now, not after the whole burst
    if (size_t(r) < kRxBatch) break;
  }
  return total;
}

// One datagram (or one segment of a GRO buffer, idx its index there), checked against the IP/UDP header it had on
// the wire: lengths from its own size, addresses from recvmsg and the bound socket, the IPv4 ID among those the
// sender's framing can produce (ipv4_icrc_check: by the datagram's place in its buffer; any ID only for a peer whose
// IP stack picks them, UdpOptions::any_ipv4_id).
void UdpTransport::receive_datagram(Sock& k, const IpAddr& src, uint16_t sport, const uint8_t* data, size_t n, uint16_t idx) {
  if (n < 16) return drop_rx("malformed: " + std::to_string(n) + "-byte datagram is shorter than BTH + ICRC", data, n);
  wire::Framing f = framing_for(k, src, sport, port_);
  std::memcpy(f.src_ip, src.a, 16);                // the peer sent it: src = peer, dst = our bound address
  std::memcpy(f.dst_ip, k.ip.a, 16);
  // the copy the session needs (deliver_framed takes a vector) and the ICRC with ID 0 in one pass over the bytes
  uint32_t crc;
  if (n < 1024) {
    pktbuf_.assign(data, data + n);
    crc = wire::icrc(f, data, n);
  } else {
    pktbuf_.resize(n);
    wire::Crc32 c = wire::icrc_begin(f, n, data);
    std::memcpy(pktbuf_.data(), data, 12);
    c.state = wire::crc32_copy_update(c.state, pktbuf_.data() + 12, data + 12, n - 16);
    std::memcpy(pktbuf_.data() + n - 4, data + n - 4, 4);
    crc = c.value();
  }
  if (idx == 0) rx_prev_id_ = -1;
  if (!f.ipv6) crc = ipv4_icrc_check(f, data, n, idx, rx_prev_id_, any_ipv4_id_, crc);
  if (capture_) recs_.push_back({S_.now, f, std::vector<uint8_t>(data, data + n)});
  S_.deliver_framed(0, dev_, f, 0, pktbuf_, &crc);  // the ICRC is compared (and a mismatch dropped) there
}

void UdpTransport::sync_clock() {
  int64_t t = mono_ns() - base_;
  if (t > int64_t(S_.now)) S_.now = uint64_t(t);
}

size_t UdpTransport::run_due() {
  size_t n = 0;
  while (!S_.idle() && S_.next_time() <= S_.now) {
    S_.step();
    n++;
  }
  return n;
}

size_t UdpTransport::poll(int64_t timeout_ns) {
  const int64_t deadline = mono_ns() + std::max<int64_t>(0, timeout_ns);
  for (;;) {
    size_t work = 0;
    sync_clock();
    work += run_due();
    flush();
    for (auto& k : socks_) work += receive(k);
    if (work) {
      last_work_ = mono_ns();
      sync_clock();
      work += run_due();
      flush();
      return work;
    }
    int64_t now = mono_ns();
    if (now >= deadline) return 0;
    int64_t wait = deadline - now;
    if (!S_.idle()) wait = std::min<int64_t>(wait, std::max<int64_t>(0, int64_t(S_.next_time()) - int64_t(S_.now)));
    if (busy_ || wait == 0) continue;
    if (now - last_work_ < kSpinNs) continue;      // a burst is likely still arriving: spin briefly, no sleep
    pollfd pf[16];
    nfds_t nf = 0;
    for (auto& k : socks_) if (nf < 16) pf[nf++] = {k.fd, POLLIN, 0};
    timespec ts{static_cast<time_t>(wait / 1000000000), static_cast<long>(wait % 1000000000)};
    ppoll(pf, nf, &ts, nullptr);
  }
}

Status UdpTransport::write_pcap(const std::string& path) const {
  wire::PcapWriter w;
  std::string err;
  if (!w.open(path, &err)) return fail(EIO, "path: " + err);
  std::vector<uint8_t> fr;
  for (auto& r : recs_) {
    wire::frame(r.f, r.pkt.data(), r.pkt.size(), fr);
    w.write(r.t, fr.data(), fr.size());
  }
  w.close();
  if (w.failed()) return fail(EIO, "path: write failed");
  return ok();
}

void UdpTransport::take_capture(std::vector<std::pair<uint64_t, std::vector<uint8_t>>>& out) {
  for (size_t i = 0; i < ntx_; i++) txq_[i].rec = SIZE_MAX;   // their records leave now
  for (auto& r : recs_) {
    out.emplace_back(r.t, std::vector<uint8_t>{});
    wire::frame(r.f, r.pkt.data(), r.pkt.size(), out.back().second);
  }
  recs_.clear();
}

}  // namespace vl::net
