// The connection manager end to end: rdma_cm's sequence (bind, listen; resolve address and route, connect; the
// CONNECT_REQUEST, accept; REQ -> REP -> RTU; ESTABLISHED on both sides; SEND over the connected QPs; DREQ / DREP;
// TimeWait) between two devices of one session, and between two sessions on UDP over loopback.
#include <unistd.h>

#include "cm_fixture.h"
#include "net/udp.h"

using namespace vlcm;

namespace {

// Connects client -> server (listening on dst) and exchanges one SEND each way; disconnects from the client side.
void full_cycle(Node& cl, Node& sv, const CmAddr& dst, const CmAddr* listen_at, const std::function<bool()>& drive) {
  Session& cs = *cl.s;
  Session& ss = *sv.s;
  CmEvent e;
  auto l = ss.cm_create_id(sv.dev, CM_PS_TCP, QPT_RC);
  ASSERT_TRUE(l.ok()) << l.msg;
  ASSERT_TRUE(ss.cm_bind_addr(l.value, listen_at ? *listen_at : dst).ok());
  ASSERT_TRUE(ss.cm_listen(l.value, 8).ok());
  EXPECT_EQ(ss.cm_id_info(l.value)->state, CM_LISTEN);

  auto c = cs.cm_create_id(cl.dev, CM_PS_TCP, QPT_RC);
  ASSERT_TRUE(c.ok()) << c.msg;
  ASSERT_TRUE(cs.cm_resolve_addr(c.value, nullptr, dst, 2000).ok());
  ASSERT_TRUE(next_event(cl, CM_EVENT_ADDR_RESOLVED, e, drive));
  ASSERT_TRUE(cs.cm_resolve_route(c.value, 2000).ok());
  ASSERT_TRUE(next_event(cl, CM_EVENT_ROUTE_RESOLVED, e, drive));
  ASSERT_TRUE(cs.cm_set_qp(c.value, cl.qp).ok());
  EXPECT_EQ(cl.qp_state(), QPS_INIT);
  CmConnParam p;
  p.private_data = {'h', 'e', 'l', 'l', 'o'};
  p.responder_resources = 2; p.initiator_depth = 3; p.retry_count = 6; p.rnr_retry_count = 5;
  ASSERT_TRUE(cs.cm_connect(c.value, p).ok());
  EXPECT_EQ(cs.cm_id_info(c.value)->state, CM_REQ_SENT);

  ASSERT_TRUE(next_event(sv, CM_EVENT_CONNECT_REQUEST, e, drive));
  EXPECT_EQ(e.listen_id, l.value);
  ASSERT_GE(e.param.private_data.size(), 5u);
  EXPECT_EQ(std::string(e.param.private_data.begin(), e.param.private_data.begin() + 5), "hello");
  EXPECT_EQ(e.param.private_data.size(), 56u);     // rdma_cm: the REQ's 92 bytes less the IP CM header
  EXPECT_EQ(e.param.qp_num, cl.qpn);
  EXPECT_EQ(e.param.responder_resources, 3);       // swapped: the peer's initiator depth
  EXPECT_EQ(e.param.initiator_depth, 2);
  EXPECT_EQ(e.param.retry_count, 6);
  EXPECT_EQ(e.param.rnr_retry_count, 5);
  const Handle n = e.id;
  auto ni = ss.cm_id_info(n);
  ASSERT_TRUE(ni);
  EXPECT_EQ(ni->state, CM_MRA_REQ_SENT);           // rdma_cm's delayed MRA
  EXPECT_EQ(ni->remote_qpn, cl.qpn);
  EXPECT_EQ(ni->dst.port, cs.cm_id_info(c.value)->src.port);
  EXPECT_EQ(ni->src.port, dst.port);
  ASSERT_TRUE(ss.cm_set_qp(n, sv.qp).ok());
  CmConnParam a;
  a.private_data = {'o', 'k'};
  a.responder_resources = 3; a.initiator_depth = 2; a.rnr_retry_count = 4;
  ASSERT_TRUE(ss.cm_accept(n, a).ok());
  EXPECT_EQ(sv.qp_state(), QPS_RTS);               // cma_accept_ib: RTR and RTS before the REP

  ASSERT_TRUE(next_event(cl, CM_EVENT_ESTABLISHED, e, drive));
  EXPECT_EQ(std::string(e.param.private_data.begin(), e.param.private_data.begin() + 2), "ok");
  EXPECT_EQ(cl.qp_state(), QPS_RTS);
  ASSERT_TRUE(next_event(sv, CM_EVENT_ESTABLISHED, e, drive));
  EXPECT_EQ(e.id, n);
  auto ci = cs.cm_id_info(c.value);
  ni = ss.cm_id_info(n);
  EXPECT_EQ(ci->state, CM_ESTABLISHED);
  EXPECT_EQ(ni->state, CM_ESTABLISHED);
  EXPECT_EQ(ci->remote_comm_id, ni->local_comm_id);
  EXPECT_EQ(ni->remote_comm_id, ci->local_comm_id);
  // the REQ's / REP's attributes on the QPs
  auto cq = cs.query_qp(cl.qp)->attr;
  auto sq = ss.query_qp(sv.qp)->attr;
  EXPECT_EQ(cq.dest_qp_num, sv.qpn);
  EXPECT_EQ(sq.dest_qp_num, cl.qpn);
  EXPECT_EQ(cq.rq_psn, ni->starting_psn);
  EXPECT_EQ(sq.rq_psn, ci->starting_psn);
  EXPECT_EQ(cq.sq_psn, ci->starting_psn);
  EXPECT_EQ(cq.retry_cnt, 6u);
  EXPECT_EQ(sq.retry_cnt, 6u);
  EXPECT_EQ(cq.rnr_retry, 4u);                     // the REP's RNR retry count
  EXPECT_EQ(sq.rnr_retry, 5u);
  EXPECT_EQ(sq.max_dest_rd_atomic, 3u);
  EXPECT_EQ(cq.max_rd_atomic, 3u);                 // the REP's responder resources (cm_rep_handler)
  EXPECT_EQ(cq.max_dest_rd_atomic, 2u);            // the REP's initiator depth
  EXPECT_EQ(cq.timeout, 19u);                      // cm_ack_timeout(15, 18)
  EXPECT_EQ(cq.path_mtu, ci->path_mtu);

  // a SEND each way over the connection the CM made
  for (int dir = 0; dir < 2; dir++) {
    Node& x = dir ? sv : cl;
    Node& y = dir ? cl : sv;
    RecvWr r; r.wr_id = 5; r.sg_list = {{y.buf.addr, 64, y.mr.lkey}};
    ASSERT_TRUE(y.s->post_recv(y.qp, {r}).ok());
    const char* msg = dir ? "pong from the server" : "ping from the client";
    ASSERT_TRUE(x.s->write_memory(x.buf.addr, reinterpret_cast<const uint8_t*>(msg), 21).ok());
    SendWr w; w.wr_id = 6; w.opcode = WR_SEND; w.send_flags = SEND_SIGNALED; w.sg_list = {{x.buf.addr, 21, x.mr.lkey}};
    ASSERT_TRUE(x.s->post_send(x.qp, {w}).ok());
    std::vector<Wc> got;
    for (int i = 0; i < 200000 && got.size() < 1; i++) {
      for (auto& wc : y.s->poll_cq(y.cq, 4)) if (wc.opcode == WC_RECV) got.push_back(wc);
      if (got.empty()) drive();
    }
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, WC_SUCCESS);
    EXPECT_EQ(payload(*y.s, y.buf.addr, 20), std::string(msg, 20));
  }

  // disconnect: DREQ from the client, DISCONNECTED on the server, its DREP, DISCONNECTED on the client
  ASSERT_TRUE(cs.cm_disconnect(c.value).ok());
  EXPECT_EQ(cl.qp_state(), QPS_ERR);
  EXPECT_EQ(cs.cm_id_info(c.value)->state, CM_DREQ_SENT);
  ASSERT_TRUE(next_event(sv, CM_EVENT_DISCONNECTED, e, drive));
  EXPECT_EQ(ss.cm_id_info(n)->state, CM_DREQ_RCVD);
  ASSERT_TRUE(ss.cm_disconnect(n).ok());
  EXPECT_EQ(ss.cm_id_info(n)->state, CM_TIMEWAIT);
  ASSERT_TRUE(next_event(cl, CM_EVENT_DISCONNECTED, e, drive));
  EXPECT_EQ(cs.cm_id_info(c.value)->state, CM_TIMEWAIT);
  ASSERT_TRUE(next_event(cl, CM_EVENT_TIMEWAIT_EXIT, e, drive));
  ASSERT_TRUE(next_event(sv, CM_EVENT_TIMEWAIT_EXIT, e, drive));
  EXPECT_EQ(cs.cm_id_info(c.value)->state, CM_IDLE);
  EXPECT_EQ(ss.cm_id_info(n)->state, CM_IDLE);
  ASSERT_TRUE(cs.cm_destroy_id(c.value).ok());
  ASSERT_TRUE(ss.cm_destroy_id(n).ok());
  ASSERT_TRUE(ss.cm_destroy_id(l.value).ok());
  EXPECT_FALSE(cs.cm_id_info(c.value));
}

std::string lo_addr(int host) {                   // a loopback address unique to this process (parallel runs)
  unsigned p = static_cast<unsigned>(getpid());
  return "127." + std::to_string(1 + (p >> 8) % 250) + "." + std::to_string(p & 0xff) + "." + std::to_string(host);
}

}  // namespace

TEST(CmConnect, InSessionIPv4FullCycle) {
  Session s(7);
  Node a, b;
  a.make(s, s.create_device("rxe").value);
  b.make(s, s.create_device("rxe").value);
  full_cycle(a, b, v4("10.0.0.2", 4420), nullptr, stepper(s));
  const CmCounters ca = s.cm_counters(a.dev), cb = s.cm_counters(b.dev);
  EXPECT_EQ(ca.tx, 3u);                            // REQ, RTU, DREQ
  EXPECT_EQ(cb.tx, 2u);                            // REP, DREP
  EXPECT_EQ(ca.rx, 2u);
  EXPECT_EQ(cb.rx, 3u);
  EXPECT_EQ(ca.rx_dropped + cb.rx_dropped, 0u);
}

TEST(CmConnect, InSessionIPv6LinkLocalWithWildcardListener) {
  Session s(8);
  Node a, b;
  a.make(s, s.create_device("cx").value);
  b.make(s, s.create_device("cx").value);
  const DeviceInfo bi = s.devices()[1];
  const CmAddr any = v6("::", 4791);
  full_cycle(a, b, of_gid(bi.gids[0].gid, 4791), &any, stepper(s));   // GID 0: fe80::/64 of the MAC
}

TEST(CmConnect, TwoSessionsOverUdpLoopback) {
  Session s1(1), s2(2);
  Handle d1 = s1.create_device("rxe").value, d2 = s2.create_device("rxe").value;
  net::UdpOptions o1; o1.address = lo_addr(2); o1.port = 0;
  auto t1 = net::UdpTransport::attach(s1, d1, o1);
  ASSERT_TRUE(t1.ok()) << t1.msg;
  net::UdpOptions o2; o2.address = lo_addr(3); o2.port = t1.value->port();
  auto t2 = net::UdpTransport::attach(s2, d2, o2);
  ASSERT_TRUE(t2.ok()) << t2.msg;
  Node a, b;
  a.make(s1, d1);
  b.make(s2, d2);
  auto& T1 = *t1.value; auto& T2 = *t2.value;
  auto drive = [&] { T1.poll(200000); T2.poll(200000); return true; };
  full_cycle(a, b, v4(lo_addr(3), 4420), nullptr, drive);
  EXPECT_GE(s1.cm_counters(d1).tx, 3u);
  EXPECT_EQ(T1.stats().rx_dropped + T2.stats().rx_dropped, 0u);
}

TEST(CmConnect, TwoSessionsOverUdpIPv6) {
  Session s1(3), s2(4);
  Handle d1 = s1.create_device("rxe").value, d2 = s2.create_device("rxe").value;
  net::UdpOptions o1; o1.address = "::1"; o1.port = 0;
  auto t1 = net::UdpTransport::attach(s1, d1, o1);
  if (!t1.ok()) GTEST_SKIP() << "no IPv6 loopback: " << t1.msg;
  net::UdpOptions o2; o2.address = "::1"; o2.port = 0; o2.peer_port = t1.value->port();
  auto t2 = net::UdpTransport::attach(s2, d2, o2);
  ASSERT_TRUE(t2.ok()) << t2.msg;
  t1.value->set_peer_port(t2.value->port());       // both on ::1: each sends to the other's port
  Node a, b;
  a.make(s1, d1);
  b.make(s2, d2);
  auto& T1 = *t1.value; auto& T2 = *t2.value;
  auto drive = [&] { T1.poll(200000); T2.poll(200000); return true; };
  full_cycle(a, b, v6("::1", 4420), nullptr, drive);
}

TEST(CmConnect, InlineFreeRunningNeedsNoStepping) {
  Session s(12);
  Node a, b;
  a.make(s, s.create_device("rxe").value);
  b.make(s, s.create_device("rxe").value);
  ASSERT_TRUE(s.set_free_run_mode(FreeRunMode::Inline).ok());
  int calls = 0;
  auto no_step = [&] { return ++calls < 3; };      // cm_get_events runs the engine itself (as poll_cq does)
  CmEvent e;
  Handle l = s.cm_create_id(b.dev, CM_PS_TCP, QPT_RC).value;
  ASSERT_TRUE(s.cm_bind_addr(l, v4("10.0.0.2", 1)).ok());
  ASSERT_TRUE(s.cm_listen(l, 1).ok());
  Handle c = s.cm_create_id(a.dev, CM_PS_TCP, QPT_RC).value;
  ASSERT_TRUE(s.cm_resolve_addr(c, nullptr, v4("10.0.0.2", 1), 10).ok());
  ASSERT_TRUE(s.cm_resolve_route(c, 10).ok());
  ASSERT_TRUE(s.cm_set_qp(c, a.qp).ok());
  ASSERT_TRUE(s.cm_connect(c, CmConnParam{}).ok());
  ASSERT_TRUE(next_event(b, CM_EVENT_CONNECT_REQUEST, e, no_step));
  ASSERT_TRUE(s.cm_set_qp(e.id, b.qp).ok());
  ASSERT_TRUE(s.cm_accept(e.id, CmConnParam{}).ok());
  ASSERT_TRUE(next_event(a, CM_EVENT_ADDR_RESOLVED, e, no_step));
  ASSERT_TRUE(next_event(a, CM_EVENT_ROUTE_RESOLVED, e, no_step));
  ASSERT_TRUE(next_event(a, CM_EVENT_ESTABLISHED, e, no_step));
  ASSERT_TRUE(next_event(b, CM_EVENT_ESTABLISHED, e, no_step));
  EXPECT_EQ(calls, 0);
}
