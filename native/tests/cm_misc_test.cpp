// The CM's addressing (bind, IPv4 / IPv6 over the GID table, in-session vs network), SIDR for UD IDs, QP1 shared
// with a user GSI QP, and hostile MADs: malformed, truncated, wrong class / method / attribute / Q_Key, floods.
#include "cm_fixture.h"

using namespace vlcm;
using namespace vl::cm;

TEST(CmAddr, BindResolveAndErrors) {
  Session s(1);
  Handle a = s.create_device("rxe").value, b = s.create_device("rxe").value;
  Handle x = s.cm_create_id(a, CM_PS_TCP, QPT_RC).value;
  EXPECT_EQ(s.cm_bind_addr(x, v4("10.0.0.2", 1)).err, EADDRNOTAVAIL);      // b's address, not a's
  ASSERT_TRUE(s.cm_bind_addr(x, v4("10.0.0.1", 5555)).ok());
  EXPECT_EQ(s.cm_bind_addr(x, v4("10.0.0.1", 5556)).err, EINVAL);          // bound already
  Handle y = s.cm_create_id(a, CM_PS_TCP, QPT_RC).value;
  EXPECT_EQ(s.cm_bind_addr(y, v4("0.0.0.0", 5555)).err, EADDRINUSE);
  Handle u = s.cm_create_id(a, CM_PS_UDP, QPT_UD).value;
  EXPECT_TRUE(s.cm_bind_addr(u, v4("10.0.0.1", 5555)).ok());             // another port space
  Handle z = s.cm_create_id(b, CM_PS_TCP, QPT_RC).value;
  EXPECT_TRUE(s.cm_bind_addr(z, v4("10.0.0.2", 5555)).ok());             // another device (host)
  ASSERT_TRUE(s.cm_bind_addr(y, v4("10.0.0.1", 0)).ok());                // an ephemeral port
  EXPECT_GE(s.cm_id_info(y)->src.port, 32768);
  EXPECT_EQ(s.cm_create_id(a, CM_PS_TCP, QPT_UD).err, EINVAL);
  EXPECT_EQ(s.cm_create_id(a, 0x999, QPT_RC).err, EINVAL);
  EXPECT_EQ(s.cm_create_id(999, CM_PS_TCP, QPT_RC).err, ENOENT);
  // resolution: in-session owner; nobody's address with the device off the network: ADDR_ERROR
  Node na; na.s = &s; na.dev = a;
  Handle r = s.cm_create_id(a, CM_PS_TCP, QPT_RC).value;
  CmEvent e;
  EXPECT_EQ(s.cm_resolve_route(r, 10).err, EINVAL);
  ASSERT_TRUE(s.cm_resolve_addr(r, nullptr, v4("192.0.2.1", 80), 10).ok());
  ASSERT_TRUE(next_event(na, CM_EVENT_ADDR_ERROR, e, stepper(s)));
  EXPECT_EQ(e.status, -EHOSTUNREACH);
  Handle r2 = s.cm_create_id(a, CM_PS_TCP, QPT_RC).value;
  ASSERT_TRUE(s.cm_resolve_addr(r2, nullptr, v4("10.0.0.2", 80), 10).ok());
  ASSERT_TRUE(next_event(na, CM_EVENT_ADDR_RESOLVED, e, stepper(s)));
  auto i = s.cm_id_info(r2);
  EXPECT_EQ(i->peer_dev, b);
  EXPECT_EQ(i->src.family, 2);
  EXPECT_EQ(i->sgid_index, 1u);                                           // ::ffff:10.0.0.1
  EXPECT_EQ(std::memcmp(i->src.ip, i->sgid, 16), 0);
  EXPECT_EQ(i->dgid[15], 2);
  ASSERT_TRUE(s.cm_resolve_route(r2, 10).ok());
  ASSERT_TRUE(next_event(na, CM_EVENT_ROUTE_RESOLVED, e, stepper(s)));
  EXPECT_EQ(s.cm_id_info(r2)->path_mtu, MTU_1024);                        // rxe's active MTU
  // IPv6: the link-local GID 0 of b, from a's link-local GID 0
  Handle r6 = s.cm_create_id(a, CM_PS_TCP, QPT_RC).value;
  const DeviceInfo bi = s.devices()[1];
  ASSERT_TRUE(s.cm_resolve_addr(r6, nullptr, of_gid(bi.gids[0].gid, 80), 10).ok());
  ASSERT_TRUE(next_event(na, CM_EVENT_ADDR_RESOLVED, e, stepper(s)));
  EXPECT_EQ(s.cm_id_info(r6)->sgid_index, 0u);
  EXPECT_EQ(s.cm_id_info(r6)->src.family, 10);
}

TEST(CmQp1, AUserGsiQpAndTheCmExcludeEachOther) {
  Session s(1);
  Node a, b;
  a.make(s, s.create_device("rxe").value);
  b.make(s, s.create_device("rxe").value);
  QpInitAttr ia; ia.pd = a.pd; ia.send_cq = a.cq; ia.recv_cq = a.cq; ia.qp_type = QPT_UD; ia.gsi = true;
  auto g = s.create_qp(a.pd, ia);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(s.cm_create_id(a.dev, CM_PS_TCP, QPT_RC).err, EBUSY);       // QP1 is the user's (lab 4)
  ASSERT_TRUE(s.cm_create_id(b.dev, CM_PS_TCP, QPT_RC).ok());           // b's CM takes b's QP1
  ia.pd = b.pd; ia.send_cq = b.cq; ia.recv_cq = b.cq;
  EXPECT_EQ(s.create_qp(b.pd, ia).err, EEXIST);
}

TEST(CmSidr, UdServiceResolutionInSession) {
  Session s(9);
  Node a, b;
  a.make(s, s.create_device("rxe").value, QPT_UD);
  b.make(s, s.create_device("rxe").value, QPT_UD);
  Handle l = s.cm_create_id(b.dev, CM_PS_UDP, QPT_UD).value;
  ASSERT_TRUE(s.cm_bind_addr(l, v4("10.0.0.2", 7471)).ok());
  ASSERT_TRUE(s.cm_listen(l, 4).ok());
  Handle c = s.cm_create_id(a.dev, CM_PS_UDP, QPT_UD).value;
  CmEvent e;
  ASSERT_TRUE(s.cm_resolve_addr(c, nullptr, v4("10.0.0.2", 7471), 10).ok());
  ASSERT_TRUE(s.cm_resolve_route(c, 10).ok());
  ASSERT_TRUE(s.cm_set_qp(c, a.qp).ok());
  EXPECT_EQ(a.qp_state(), QPS_RTS);                                       // cma_init_ud_qp: straight to RTS
  EXPECT_EQ(s.query_qp(a.qp)->attr.qkey, 0x01234567u);
  CmConnParam p; p.private_data = {9, 8, 7};
  ASSERT_TRUE(s.cm_connect(c, p).ok());
  EXPECT_EQ(s.cm_id_info(c)->state, CM_SIDR_REQ_SENT);
  ASSERT_TRUE(next_event(b, CM_EVENT_CONNECT_REQUEST, e, stepper(s)));
  EXPECT_EQ(e.param.private_data.size(), 180u);
  EXPECT_EQ(e.param.private_data[2], 7);
  const Handle n = e.id;
  EXPECT_EQ(s.cm_id_info(n)->state, CM_SIDR_REQ_RCVD);
  ASSERT_TRUE(s.cm_set_qp(n, b.qp).ok());
  ASSERT_TRUE(s.cm_accept(n, CmConnParam{}).ok());
  ASSERT_TRUE(next_event(a, CM_EVENT_ADDR_RESOLVED, e, stepper(s)));
  ASSERT_TRUE(next_event(a, CM_EVENT_ROUTE_RESOLVED, e, stepper(s)));
  ASSERT_TRUE(next_event(a, CM_EVENT_ESTABLISHED, e, stepper(s)));
  EXPECT_EQ(e.remote_qpn, b.qpn);
  EXPECT_EQ(e.remote_qkey, 0x01234567u);
  EXPECT_EQ(s.cm_id_info(c)->state, CM_IDLE);
  // a datagram to what SIDR resolved
  auto ah = s.create_ah(a.pd, s.cm_id_info(c)->peer_dev);
  ASSERT_TRUE(ah.ok());
  RecvWr r; r.wr_id = 1; r.sg_list = {{b.buf.addr, 40 + 64, b.mr.lkey}};
  ASSERT_TRUE(s.post_recv(b.qp, {r}).ok());
  SendWr w; w.opcode = WR_SEND; w.send_flags = SEND_SIGNALED; w.sg_list = {{a.buf.addr, 16, a.mr.lkey}};
  w.ah = ah.value; w.remote_qpn = e.remote_qpn; w.remote_qkey = e.remote_qkey;
  ASSERT_TRUE(s.post_send(a.qp, {w}).ok());
  while (s.step()) {}
  bool got = false;
  for (auto& wc : s.poll_cq(b.cq, 8)) if (wc.opcode == WC_RECV && wc.status == WC_SUCCESS) got = true;
  EXPECT_TRUE(got);
}

TEST(CmSidr, NoListenerRejectAndTimeout) {
  Session s(9);
  Node a, b;
  a.make(s, s.create_device("rxe").value, QPT_UD);
  b.make(s, s.create_device("rxe").value, QPT_UD);
  s.cm_create_id(b.dev, CM_PS_UDP, QPT_UD);                              // b's CM runs, nobody listens
  auto sidr = [&](uint16_t port) {
    Handle c = s.cm_create_id(a.dev, CM_PS_UDP, QPT_UD).value;
    EXPECT_TRUE(s.cm_resolve_addr(c, nullptr, v4("10.0.0.2", port), 10).ok());
    EXPECT_TRUE(s.cm_resolve_route(c, 10).ok());
    CmEvent e;
    EXPECT_TRUE(next_event(a, CM_EVENT_ADDR_RESOLVED, e, stepper(s)));
    EXPECT_TRUE(next_event(a, CM_EVENT_ROUTE_RESOLVED, e, stepper(s)));
    EXPECT_TRUE(s.cm_connect(c, CmConnParam{}).ok());
    return c;
  };
  CmEvent e;
  sidr(1);
  ASSERT_TRUE(next_event(a, CM_EVENT_UNREACHABLE, e, stepper(s)));
  EXPECT_EQ(e.status, CM_SIDR_UNSUPPORTED);
  Handle l = s.cm_create_id(b.dev, CM_PS_UDP, QPT_UD).value;
  ASSERT_TRUE(s.cm_bind_addr(l, v4("10.0.0.2", 2)).ok());
  ASSERT_TRUE(s.cm_listen(l, 4).ok());
  sidr(2);
  ASSERT_TRUE(next_event(b, CM_EVENT_CONNECT_REQUEST, e, stepper(s)));
  ASSERT_TRUE(s.cm_reject(e.id, {}).ok());
  ASSERT_TRUE(next_event(a, CM_EVENT_UNREACHABLE, e, stepper(s)));
  EXPECT_EQ(e.status, CM_SIDR_REJECT);
  // the peer device disappears from the wire (no CM there any more): retries, then UNREACHABLE -ETIMEDOUT
  Session s2(3);
  Node c2; c2.make(s2, s2.create_device("rxe").value, QPT_UD);
  Handle d2 = s2.create_device("rxe").value;
  (void)d2;
  Handle x = s2.cm_create_id(c2.dev, CM_PS_UDP, QPT_UD).value;
  ASSERT_TRUE(s2.cm_resolve_addr(x, nullptr, v4("10.0.0.2", 9), 10).ok());
  ASSERT_TRUE(s2.cm_resolve_route(x, 10).ok());
  ASSERT_TRUE(s2.cm_connect(x, CmConnParam{}).ok());                     // 10.0.0.2's QP1 has no QP and no CM
  ASSERT_TRUE(next_event(c2, CM_EVENT_ADDR_RESOLVED, e, stepper(s2)));
  ASSERT_TRUE(next_event(c2, CM_EVENT_ROUTE_RESOLVED, e, stepper(s2)));
  ASSERT_TRUE(next_event(c2, CM_EVENT_UNREACHABLE, e, stepper(s2)));
  EXPECT_EQ(e.status, -ETIMEDOUT);
  EXPECT_EQ(s2.now_ns(), 16ull * 4096 * 1000000);
}

namespace {
// a connection from the raw peer's QPN `qpn` accepted, established and closed by the device: its remote stays in TimeWait
void stale_in_timewait(Session& s, RawPeer& raw, const DeviceInfo& bi, uint32_t qpn) {
  Msg req = req_to(s.devices()[0], bi, 0x8fff, qpn, 4420);
  raw.send(req);
  for (int i = 0; i < 100000 && s.step(); i++) {}
  for (auto& ev : s.cm_get_events(bi.handle)) {
    if (ev.event != CM_EVENT_CONNECT_REQUEST || s.cm_id_info(ev.id)->remote_qpn != qpn) continue;
    ASSERT_TRUE(s.cm_accept(ev.id, CmConnParam{}).ok());
    Msg rtu; rtu.hdr.attr_id = CM_ATTR_RTU;
    rtu.set(F_LOCAL_COMM_ID, 0x8fff).set(F_REMOTE_COMM_ID, s.cm_id_info(ev.id)->local_comm_id);
    raw.send(rtu);
    for (int i = 0; i < 100 && s.cm_id_info(ev.id)->state != CM_ESTABLISHED; i++) s.step();
    ASSERT_EQ(s.cm_id_info(ev.id)->state, CM_ESTABLISHED);
    ASSERT_TRUE(s.cm_destroy_id(ev.id).ok());      // DREQ, TimeWait: the remote (QPN, GUID) kept
  }
  s.cm_get_events(bi.handle);
}
}  // namespace

TEST(CmHostile, MalformedMadsAreDroppedAndCountedAndHurtNoConnection) {
  Session s(4);
  Handle ad = s.create_device("rxe").value, bd = s.create_device("rxe").value, cd = s.create_device("rxe").value;
  Node b, c;
  b.make(s, bd);
  c.make(s, cd);
  RawPeer raw; raw.make(s, ad, bd);
  // a healthy connection c -> b first
  Handle l = s.cm_create_id(bd, CM_PS_TCP, QPT_RC).value;
  ASSERT_TRUE(s.cm_bind_addr(l, v4("10.0.0.2", 4420)).ok());
  ASSERT_TRUE(s.cm_listen(l, 4).ok());
  Handle x = s.cm_create_id(cd, CM_PS_TCP, QPT_RC).value;
  CmEvent e;
  ASSERT_TRUE(s.cm_resolve_addr(x, nullptr, v4("10.0.0.2", 4420), 10).ok());
  ASSERT_TRUE(s.cm_resolve_route(x, 10).ok());
  ASSERT_TRUE(s.cm_set_qp(x, c.qp).ok());
  ASSERT_TRUE(s.cm_connect(x, CmConnParam{}).ok());
  ASSERT_TRUE(next_event(b, CM_EVENT_CONNECT_REQUEST, e, stepper(s)));
  const Handle y = e.id;
  ASSERT_TRUE(s.cm_set_qp(y, b.qp).ok());
  ASSERT_TRUE(s.cm_accept(y, CmConnParam{}).ok());
  ASSERT_TRUE(next_event(b, CM_EVENT_ESTABLISHED, e, stepper(s)));
  const auto before = s.query_qp(b.qp)->attr;
  const CmIdInfo yi = *s.cm_id_info(y);
  const uint64_t dropped0 = s.cm_counters(bd).rx_dropped;
  // the hostile MADs
  const DeviceInfo ai = s.devices()[0], bi = s.devices()[1];
  Msg good = req_to(ai, bi, 0x9000, 0x70, 4420);
  uint8_t mad[256];
  encode(good, mad);
  std::vector<std::vector<uint8_t>> bad;
  auto spoil = [&](size_t off, uint8_t v) { std::vector<uint8_t> m(mad, mad + 256); m[off] = v; bad.push_back(m); };
  spoil(0, 2);                                   // base version
  spoil(1, 0x81);                                // management class (not CM)
  spoil(2, 3);                                   // CM class version
  spoil(3, 0x01);                                // method GET
  spoil(17, 0x19);                               // LAP (not built)
  spoil(17, 0x42);                               // no such attribute
  bad.push_back(std::vector<uint8_t>(mad, mad + 100));   // truncated
  bad.push_back(std::vector<uint8_t>(mad, mad + 255));
  std::vector<uint8_t> longer(mad, mad + 256); longer.resize(300); bad.push_back(longer);
  for (auto& m : bad) raw.send_raw(m.data(), uint32_t(m.size()));
  raw.send_raw(mad, 256, 0x1234);                // not the GSI Q_Key
  // messages aimed at the live connection's comm ID but wrong: a DREQ naming another QPN, a REJ from a stranger
  Msg dreq; dreq.hdr.attr_id = CM_ATTR_DREQ;
  dreq.set(F_LOCAL_COMM_ID, yi.remote_comm_id).set(F_REMOTE_COMM_ID, yi.local_comm_id).set(F_REMOTE_QPN_EECN, b.qpn + 1);
  raw.send(dreq);
  Msg rej; rej.hdr.attr_id = CM_ATTR_REJ;
  rej.set(F_LOCAL_COMM_ID, 0x4444).set(F_REMOTE_COMM_ID, yi.local_comm_id).set(F_REASON, CM_REJ_TIMEOUT);
  raw.send(rej);
  // a REQ from a CA GUID and QPN that were connected and are in TimeWait (the stale rule)
  Msg stale = req_to(ai, bi, 0x9001, 0x6000, 4420);
  stale_in_timewait(s, raw, bi, 0x6000);
  raw.send(stale);
  // a flood of REQs: the backlog (4) takes some, the rest are dropped
  for (uint32_t k = 0; k < 300; k++) {
    raw.send(req_to(ai, bi, 0xA000 + k, 0x1000 + k, 4420));
    if (k % 100 == 99) while (s.step()) raw.take();   // (the raw peer's send queue holds 256)
  }
  while (s.step()) { raw.take(); }
  raw.take();
  const CmCounters n = s.cm_counters(bd);
  EXPECT_EQ(n.rx_dropped - dropped0, 10u + 1 + 1 + (300 - 4)) << "bad MADs + wrong-QPN DREQ + stranger's REJ + flood beyond the backlog";
  EXPECT_EQ(n.rx_stale, 1u);
  EXPECT_EQ(raw.count(CM_ATTR_REJ), 1u);          // the stale REQ's
  size_t reqs = 0;
  for (auto& ev : s.cm_get_events(bd)) reqs += ev.event == CM_EVENT_CONNECT_REQUEST;
  EXPECT_EQ(reqs, 4u);
  // the live connection is untouched
  EXPECT_EQ(s.cm_id_info(y)->state, CM_ESTABLISHED);
  EXPECT_EQ(s.cm_id_info(x)->state, CM_ESTABLISHED);
  const auto after = s.query_qp(b.qp)->attr;
  EXPECT_EQ(after.qp_state, QPS_RTS);
  EXPECT_EQ(after.dest_qp_num, before.dest_qp_num);
  EXPECT_EQ(s.query_qp(c.qp)->attr.qp_state, QPS_RTS);
  // every dropped MAD has a typed event
  size_t dropped_events = 0;
  for (auto& ev : s.drain_events()) if (ev.kind == EventKind::CmMad && ev.b == uint64_t(CmMadDir::Dropped)) dropped_events++;
  EXPECT_EQ(dropped_events, n.rx_dropped - dropped0);
}

// perftest -R's server: accept the handshake connection, destroy the listener, bind a new ID to the same port. An ID a
// listener made for a REQ holds no port of its own (kernel cma_req_handler's IDs are not in the bind list), so the
// re-bind succeeds while that connection is still up; a second explicit bind of the port still clashes.
TEST(CmAddr, AcceptedIdDoesNotHoldTheListenersPort) {
  Session s(3);
  Node a, b;
  a.make(s, s.create_device("rxe").value);
  b.make(s, s.create_device("rxe").value);
  Handle l = s.cm_create_id(b.dev, CM_PS_TCP, QPT_RC).value;
  ASSERT_TRUE(s.cm_bind_addr(l, v4("10.0.0.2", 18515)).ok());
  ASSERT_TRUE(s.cm_listen(l, 4).ok());
  Handle c = s.cm_create_id(a.dev, CM_PS_TCP, QPT_RC).value;
  CmEvent e;
  ASSERT_TRUE(s.cm_resolve_addr(c, nullptr, v4("10.0.0.2", 18515), 10).ok());
  ASSERT_TRUE(next_event(a, CM_EVENT_ADDR_RESOLVED, e, stepper(s)));
  ASSERT_TRUE(s.cm_resolve_route(c, 10).ok());
  ASSERT_TRUE(next_event(a, CM_EVENT_ROUTE_RESOLVED, e, stepper(s)));
  ASSERT_TRUE(s.cm_set_qp(c, a.qp).ok());
  ASSERT_TRUE(s.cm_connect(c, CmConnParam{}).ok());
  ASSERT_TRUE(next_event(b, CM_EVENT_CONNECT_REQUEST, e, stepper(s)));
  const Handle n = e.id;
  EXPECT_EQ(s.cm_id_info(n)->src.port, 18515);      // the accepted ID shows the listener's port
  ASSERT_TRUE(s.cm_set_qp(n, b.qp).ok());
  ASSERT_TRUE(s.cm_accept(n, CmConnParam{}).ok());
  ASSERT_TRUE(next_event(b, CM_EVENT_ESTABLISHED, e, stepper(s)));
  ASSERT_TRUE(s.cm_destroy_id(l).ok());
  Handle again = s.cm_create_id(b.dev, CM_PS_TCP, QPT_RC).value;
  EXPECT_TRUE(s.cm_bind_addr(again, v4("10.0.0.2", 18515)).ok());
  Handle third = s.cm_create_id(b.dev, CM_PS_TCP, QPT_RC).value;
  EXPECT_EQ(s.cm_bind_addr(third, v4("10.0.0.2", 18515)).err, EADDRINUSE);
}
