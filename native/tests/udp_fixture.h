// Helpers for the UDP transport tests: a "host" = one session + one device attached to a UDP socket, with an RC
// QP, CQs and a registered buffer; connecting two hosts by GID/QPN/PSN exactly as an out-of-band exchange would.
#pragma once
#include <gtest/gtest.h>
#include <time.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "net/udp.h"
#include "vl/session.h"

namespace vlu {
using namespace vl;

inline int64_t mono_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

struct Host {
  Session s;
  Handle dev = 0, pd = 0, scq = 0, rcq = 0, qp = 0;
  uint32_t qpn = 0, psn = 0;
  BufferInfo buf;
  MrInfo mr;
  std::unique_ptr<net::UdpTransport> t;
  uint32_t gid_index = 1;
  net::UdpOptions opts;                       // open() starts from these (gso / gro / zero_copy)

  explicit Host(uint64_t seed = 1) : s(seed) {}

  // attach to one address (or an interface when iface is true), make QP/CQs/buffer; false with a message on failure
  ::testing::AssertionResult open(const std::string& where, uint16_t port, uint16_t peer_port, size_t buf_len = 4 << 20,
                                  bool iface = false, uint32_t max_wr = 256) {
    dev = s.create_device("rxe").value;
    net::UdpOptions o = opts;
    if (iface) o.interface = where; else o.address = where;
    o.port = port; o.peer_port = peer_port;
    auto r = net::UdpTransport::attach(s, dev, o);
    if (!r.ok()) return ::testing::AssertionFailure() << "attach " << where << ": " << r.msg;
    t = std::move(r.value);
    pd = s.alloc_pd(dev).value;
    scq = s.create_cq(dev, 4096).value;
    rcq = s.create_cq(dev, 4096).value;
    QpInitAttr ia;
    ia.pd = pd; ia.send_cq = scq; ia.recv_cq = rcq; ia.qp_type = QPT_RC;
    ia.cap.max_send_wr = max_wr; ia.cap.max_recv_wr = max_wr;
    auto q = s.create_qp(pd, ia);
    if (!q.ok()) return ::testing::AssertionFailure() << "create_qp: " << q.msg;
    qp = q.value.handle; qpn = q.value.qp_num;
    buf = s.alloc_buffer(buf_len).value;
    auto m = s.reg_mr(pd, buf.addr, buf_len, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC);
    if (!m.ok()) return ::testing::AssertionFailure() << "reg_mr: " << m.msg;
    mr = m.value;
    QpAttr at;
    at.qp_state = QPS_INIT; at.pkey_index = 0; at.port_num = 1;
    at.qp_access_flags = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
    auto st = s.modify_qp(qp, at, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS);
    if (!st.ok()) return ::testing::AssertionFailure() << "INIT: " << st.msg;
    return ::testing::AssertionSuccess();
  }
  const uint8_t* gid() const { return t->gids()[gid_index].gid; }
  // RTR + RTS towards a remote (gid, qpn, psn): the rc_pingpong attribute set, ACK timeout configurable
  ::testing::AssertionResult connect(const uint8_t rgid[16], uint32_t rqpn, uint32_t rpsn, uint32_t mtu = MTU_4096,
                                     uint32_t timeout = 10) {
    QpAttr at;
    at.qp_state = QPS_RTR; at.path_mtu = mtu; at.dest_device = 0; at.dest_qp_num = rqpn; at.rq_psn = rpsn;
    at.max_dest_rd_atomic = 1; at.min_rnr_timer = 1; at.sgid_index = gid_index;
    std::memcpy(at.dgid, rgid, 16);
    auto st = s.modify_qp(qp, at, QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER);
    if (!st.ok()) return ::testing::AssertionFailure() << "RTR: " << st.msg;
    at.qp_state = QPS_RTS; at.sq_psn = psn; at.timeout = timeout; at.retry_cnt = 7; at.rnr_retry = 7; at.max_rd_atomic = 1;
    st = s.modify_qp(qp, at, QP_STATE | QP_SQ_PSN | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC);
    if (!st.ok()) return ::testing::AssertionFailure() << "RTS: " << st.msg;
    return ::testing::AssertionSuccess();
  }
  PostResult post(uint32_t op, uint64_t loff, uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t wr_id, uint32_t imm = 0) {
    SendWr w;
    w.wr_id = wr_id; w.opcode = op; w.send_flags = SEND_SIGNALED; w.imm_data = imm;
    if (len) w.sg_list = {{buf.addr + loff, len, mr.lkey}};
    w.remote_addr = raddr; w.rkey = rkey;
    return s.post_send(qp, {w});
  }
  PostResult recv(uint64_t off, uint32_t len, uint64_t wr_id) {
    RecvWr r; r.wr_id = wr_id; r.sg_list = {{buf.addr + off, len, mr.lkey}};
    return s.post_recv(qp, {r});
  }
  std::vector<uint8_t> bytes(uint64_t off, size_t n) {
    std::vector<uint8_t> v(n);
    EXPECT_TRUE(s.read_memory(buf.addr + off, v.data(), n).ok());
    return v;
  }
  void pattern(uint64_t off, size_t n, uint32_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; i++) v[i] = static_cast<uint8_t>((i * 131 + seed * 7 + (i >> 9)) & 0xff);
    ASSERT_TRUE(s.write_memory(buf.addr + off, v.data(), n).ok());
  }
};

// Poll both hosts until done() (or a generous safety limit, reported as a failure, so a bug cannot hang the suite).
inline ::testing::AssertionResult pump(std::vector<Host*> hosts, const std::function<bool()>& done, int64_t limit_ms = 60000) {
  const int64_t end = mono_ms() + limit_ms;
  while (!done()) {
    if (mono_ms() > end) {
      auto f = ::testing::AssertionFailure() << "not done after the " << limit_ms << " ms safety limit; last events:";
      for (size_t i = 0; i < hosts.size(); i++) {
        std::vector<Event> ev;
        for (auto& e : hosts[i]->s.drain_events())   // the transport's decisions, not every packet
          if (e.kind != EventKind::PacketSent && e.kind != EventKind::PacketReceived && e.kind != EventKind::PacketDropped) ev.push_back(e);
        size_t from = ev.size() > 40 ? ev.size() - 40 : 0;
        for (size_t k = from; k < ev.size(); k++)
          f << "\n  host " << i << " t=" << ev[k].time_ns << " kind " << static_cast<int>(ev[k].kind) << " " << ev[k].text
            << " a=" << ev[k].a << " b=" << ev[k].b << " c=" << ev[k].c;
      }
      return f;
    }
    for (Host* h : hosts) h->t->poll(hosts.size() == 1 ? 1000000 : 100000);
  }
  return ::testing::AssertionSuccess();
}

// Collect completions from a CQ into out (poll until n are there).
inline std::function<bool()> wait_cq(Host& h, Handle cq, std::vector<Wc>& out, size_t n) {
  return [&h, cq, &out, n] {
    for (auto& w : h.s.poll_cq(cq, 64)) out.push_back(w);
    return out.size() >= n;
  };
}

}  // namespace vlu
