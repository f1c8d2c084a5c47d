// The CM's state machine against a peer without a CM (a raw GSI QP that sends exactly the MADs a test writes):
// every transition of both sides, response timeouts and retries in virtual time, MRA, duplicates, REJ reasons,
// DREQ / DREP and TimeWait (IBA 12.9; kernel drivers/infiniband/core/cm.c).
#include <unistd.h>

#include "cm_fixture.h"

using namespace vlcm;
using namespace vl::cm;

namespace {

struct Bench {
  Session s{3};
  RawPeer raw;                                    // 10.0.0.1, QP1 a user GSI QP
  Node n;                                         // 10.0.0.2, the device under test
  DeviceInfo ri, ni;
  Bench() {
    Handle a = s.create_device("rxe").value, b = s.create_device("rxe").value;
    n.make(s, b);
    raw.make(s, a, b);
    ri = s.devices()[0]; ni = s.devices()[1];
  }
  Handle listen(uint16_t port, int backlog = 8) {
    Handle l = s.cm_create_id(n.dev, CM_PS_TCP, QPT_RC).value;
    EXPECT_TRUE(s.cm_bind_addr(l, v4("10.0.0.2", port)).ok());
    EXPECT_TRUE(s.cm_listen(l, backlog).ok());
    return l;
  }
  // the device under test connects to the raw peer (10.0.0.1:port); returns the ID (REQ sent)
  Handle connect(uint16_t port = 5000) {
    Handle c = s.cm_create_id(n.dev, CM_PS_TCP, QPT_RC).value;
    CmEvent e;
    EXPECT_TRUE(s.cm_resolve_addr(c, nullptr, v4("10.0.0.1", port), 100).ok());
    EXPECT_TRUE(next_event(n, CM_EVENT_ADDR_RESOLVED, e, stepper(s)));
    EXPECT_TRUE(s.cm_resolve_route(c, 100).ok());
    EXPECT_TRUE(next_event(n, CM_EVENT_ROUTE_RESOLVED, e, stepper(s)));
    EXPECT_TRUE(s.cm_set_qp(c, n.qp).ok());
    CmConnParam p; p.responder_resources = 1; p.initiator_depth = 1;
    EXPECT_TRUE(s.cm_connect(c, p).ok());
    return c;
  }
  Msg rep_for(const Msg& req, uint32_t comm = 0x5150) {
    Msg m; m.hdr.attr_id = CM_ATTR_REP; m.hdr.tid = req.hdr.tid;
    m.set(F_LOCAL_COMM_ID, comm).set(F_REMOTE_COMM_ID, req.get(F_LOCAL_COMM_ID)).set(F_LOCAL_QPN, 0x77)
     .set(F_STARTING_PSN, 0xabc).set(F_RESPONDER_RESOURCES, 1).set(F_INITIATOR_DEPTH, 1).set(F_TARGET_ACK_DELAY, 15)
     .set(F_RNR_RETRY_COUNT, 7).set(F_LOCAL_CA_GUID, ri.node_guid);
    return m;
  }
  Msg reply(uint16_t attr, const Msg& to, uint32_t local) {
    Msg m; m.hdr.attr_id = attr; m.hdr.tid = to.hdr.tid;
    m.set(F_LOCAL_COMM_ID, local).set(F_REMOTE_COMM_ID, to.get(F_LOCAL_COMM_ID));
    return m;
  }
  uint8_t state(Handle id) { return s.cm_id_info(id)->state; }
  std::vector<Event> cm_events(EventKind k) {
    std::vector<Event> v;
    for (auto& e : s.drain_events()) if (e.kind == k) v.push_back(e);
    return v;
  }
};

}  // namespace

TEST(CmActive, ReqRetriedMaxCmRetriesTimesThenUnreachable) {
  Bench b;
  Handle c = b.connect();
  const uint64_t t0 = b.s.now_ns();
  CmEvent e;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_UNREACHABLE, e, stepper(b.s)));
  EXPECT_EQ(e.status, -ETIMEDOUT);
  b.raw.take();
  EXPECT_EQ(b.raw.count(CM_ATTR_REQ), 16u);           // the REQ and CMA_MAX_CM_RETRIES (15) resends
  for (auto& m : b.raw.got) EXPECT_EQ(std::memcmp(m.pdata, b.raw.got[0].pdata, 92), 0);
  // each wait: 2 * 2^(18-8) + 2^(20-8) ms (packet life time 18, response timeout 20; cm.c ib_send_cm_req)
  EXPECT_EQ(b.s.now_ns() - t0, 16ull * 6144 * 1000000);
  EXPECT_EQ(b.state(c), CM_IDLE);
  EXPECT_EQ(b.s.cm_counters(b.n.dev).tx_retries, 15u);
  EXPECT_EQ(b.n.qp_state(), QPS_ERR);
}

TEST(CmActive, MraStretchesTheWaitThenRepEstablishes) {
  Bench b;
  Handle c = b.connect();
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REQ, 1));
  const Msg req = *b.raw.last(CM_ATTR_REQ);
  Msg mra = b.reply(CM_ATTR_MRA, req, 0x5150);
  mra.set(F_MESSAGE_MRAED, 0).set(F_SERVICE_TIMEOUT, 22);          // 2^14 ms
  b.raw.send(mra);
  for (int i = 0; i < 10 && b.state(c) != CM_MRA_REQ_RCVD; i++) b.s.step();
  EXPECT_EQ(b.state(c), CM_MRA_REQ_RCVD);
  const uint64_t t = b.s.now_ns();
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REQ, 2));               // the REQ again only after the MRA's wait
  EXPECT_GE(b.s.now_ns() - t, (16384ull + 2048) * 1000000);
  b.raw.send(b.rep_for(req));
  CmEvent e;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_ESTABLISHED, e, stepper(b.s)));
  EXPECT_EQ(b.state(c), CM_ESTABLISHED);
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_RTU, 1));
  const Msg* rtu = b.raw.last(CM_ATTR_RTU);
  EXPECT_EQ(rtu->get(F_LOCAL_COMM_ID), req.get(F_LOCAL_COMM_ID));
  EXPECT_EQ(rtu->get(F_REMOTE_COMM_ID), 0x5150u);
  EXPECT_EQ(rtu->hdr.tid, req.hdr.tid);
  auto q = b.s.query_qp(b.n.qp)->attr;
  EXPECT_EQ(q.qp_state, QPS_RTS);
  EXPECT_EQ(q.dest_qp_num, 0x77u);
  EXPECT_EQ(q.rq_psn, 0xabcu);
}

TEST(CmActive, DuplicateRepIsAnsweredWithTheSameRtu) {
  Bench b;
  Handle c = b.connect();
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REQ, 1));
  const Msg req = *b.raw.last(CM_ATTR_REQ);
  b.raw.send(b.rep_for(req));
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_RTU, 1));
  b.raw.send(b.rep_for(req));                                         // the RTU was lost: the REP again
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_RTU, 2));
  EXPECT_EQ(b.raw.raw[b.raw.got.size() - 1], b.raw.raw[b.raw.got.size() - 2]);
  EXPECT_EQ(b.state(c), CM_ESTABLISHED);
  EXPECT_EQ(b.s.cm_counters(b.n.dev).rx_duplicates, 1u);
}

TEST(CmActive, RepWithoutQpGivesConnectResponseAndEstablishSendsRtu) {
  Bench b;
  Handle c = b.s.cm_create_id(b.n.dev, CM_PS_TCP, QPT_RC).value;
  CmEvent e;
  ASSERT_TRUE(b.s.cm_resolve_addr(c, nullptr, v4("10.0.0.1", 7), 100).ok());
  ASSERT_TRUE(b.s.cm_resolve_route(c, 100).ok());
  CmConnParam p; p.qp_num = 0x4242;
  ASSERT_TRUE(b.s.cm_connect(c, p).ok());
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REQ, 1));
  EXPECT_EQ(b.raw.last(CM_ATTR_REQ)->get(F_LOCAL_QPN), 0x4242u);
  b.raw.send(b.rep_for(*b.raw.last(CM_ATTR_REQ)));
  ASSERT_TRUE(next_event(b.n, CM_EVENT_ADDR_RESOLVED, e, stepper(b.s)));
  ASSERT_TRUE(next_event(b.n, CM_EVENT_ROUTE_RESOLVED, e, stepper(b.s)));
  ASSERT_TRUE(next_event(b.n, CM_EVENT_CONNECT_RESPONSE, e, stepper(b.s)));
  EXPECT_EQ(b.state(c), CM_MRA_REP_SENT);
  uint32_t mask = 0;
  auto rtr = b.s.cm_init_qp_attr(c, QPS_RTR, &mask);
  ASSERT_TRUE(rtr.ok());
  EXPECT_EQ(rtr.value.dest_qp_num, 0x77u);
  EXPECT_EQ(rtr.value.rq_psn, 0xabcu);
  EXPECT_TRUE(mask & QP_DEST_QPN);
  ASSERT_TRUE(b.s.cm_establish(c).ok());
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_RTU, 1));
  EXPECT_EQ(b.state(c), CM_ESTABLISHED);
  while (b.s.step()) {}
  EXPECT_TRUE(b.s.cm_get_events(b.n.dev).empty());   // rdma_establish's RTU: no event for the active side (cma.c)
}

TEST(CmActive, OptionsTosAndAckTimeout) {
  Bench b;
  Handle c = b.s.cm_create_id(b.n.dev, CM_PS_TCP, QPT_RC).value;
  ASSERT_TRUE(b.s.cm_set_option(c, CM_OPTION_ID_TOS, 0xb8).ok());
  ASSERT_TRUE(b.s.cm_set_option(c, CM_OPTION_ID_ACK_TIMEOUT, 14).ok());
  EXPECT_EQ(b.s.cm_set_option(c, CM_OPTION_ID_ACK_TIMEOUT, 32).err, EINVAL);
  EXPECT_EQ(b.s.cm_set_option(c, 1, 1).err, EOPNOTSUPP);
  Handle u = b.s.cm_create_id(b.n.dev, CM_PS_UDP, QPT_UD).value;
  EXPECT_EQ(b.s.cm_set_option(u, CM_OPTION_ID_ACK_TIMEOUT, 14).err, EINVAL);
  ASSERT_TRUE(b.s.cm_resolve_addr(c, nullptr, v4("10.0.0.1", 7), 100).ok());
  ASSERT_TRUE(b.s.cm_resolve_route(c, 100).ok());
  ASSERT_TRUE(b.s.cm_set_qp(c, b.n.qp).ok());
  ASSERT_TRUE(b.s.cm_connect(c, CmConnParam{}).ok());
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REQ, 1));
  const Msg req = *b.raw.last(CM_ATTR_REQ);
  EXPECT_EQ(req.get(F_PRI_TRAFFIC_CLASS), 0xb8u);
  EXPECT_EQ(req.get(F_PRI_LOCAL_ACK_TIMEOUT), 16u);   // cm_ack_timeout(15, packet life time 14 - 1 = 13)
  b.raw.send(b.rep_for(req));
  CmEvent e;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_ADDR_RESOLVED, e, stepper(b.s)));
  ASSERT_TRUE(next_event(b.n, CM_EVENT_ROUTE_RESOLVED, e, stepper(b.s)));
  ASSERT_TRUE(next_event(b.n, CM_EVENT_ESTABLISHED, e, stepper(b.s)));
  EXPECT_EQ(b.s.query_qp(b.n.qp)->attr.timeout, 14u);               // the QP takes the option's value
  EXPECT_EQ(b.s.cm_id_info(c)->tos, 0xb8);
  EXPECT_EQ(b.s.cm_id_info(c)->ack_timeout, 14);
}

TEST(CmActive, RejectedWithReasonAndPrivateData) {
  Bench b;
  Handle c = b.connect();
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REQ, 1));
  Msg rej = b.reply(CM_ATTR_REJ, *b.raw.last(CM_ATTR_REQ), 0);
  rej.set(F_REASON, CM_REJ_CONSUMER_DEFINED).set(F_MESSAGE_REJECTED, 0);
  rej.pdata[0] = 0xAB;
  b.raw.send(rej);
  CmEvent e;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_REJECTED, e, stepper(b.s)));
  EXPECT_EQ(e.status, CM_REJ_CONSUMER_DEFINED);
  ASSERT_EQ(e.param.private_data.size(), 148u);
  EXPECT_EQ(e.param.private_data[0], 0xAB);
  EXPECT_EQ(b.state(c), CM_IDLE);
}

TEST(CmActive, StaleConnRejEntersTimeWait) {
  Bench b;
  Handle c = b.connect();
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REQ, 1));
  Msg rej = b.reply(CM_ATTR_REJ, *b.raw.last(CM_ATTR_REQ), 0);
  rej.set(F_REASON, CM_REJ_STALE_CONN);
  b.raw.send(rej);
  CmEvent e;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_REJECTED, e, stepper(b.s)));
  EXPECT_EQ(b.state(c), CM_TIMEWAIT);
  ASSERT_TRUE(next_event(b.n, CM_EVENT_TIMEWAIT_EXIT, e, stepper(b.s)));
}

TEST(CmActive, DestroyWhileReqSentRejectsWithTimeoutAndGuid) {
  Bench b;
  Handle c = b.connect();
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REQ, 1));
  ASSERT_TRUE(b.s.cm_destroy_id(c).ok());
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REJ, 1));
  const Msg* rej = b.raw.last(CM_ATTR_REJ);
  EXPECT_EQ(rej->get(F_REASON), CM_REJ_TIMEOUT);
  EXPECT_EQ(rej->get(F_REJ_INFO_LENGTH), 8u);
  EXPECT_EQ(rej->get(F_MESSAGE_REJECTED), 2u);
  uint64_t guid = 0;
  for (int i = 0; i < 8; i++) guid = guid << 8 | rej->info[i];
  EXPECT_EQ(guid, b.ni.node_guid);
}

TEST(CmPassive, DuplicateReqAnsweredByStateAndRepRetriedThenUnreachable) {
  Bench b;
  Handle l = b.listen(4420);
  Msg req = req_to(b.ri, b.ni, 0x1111, 0x33, 4420);
  req.set(F_LOCAL_CM_RESPONSE_TIMEOUT, 10).set(F_MAX_CM_RETRIES, 2);   // 4 ms, 2 retries
  b.raw.send(req);
  CmEvent e;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_CONNECT_REQUEST, e, stepper(b.s)));
  const Handle id = e.id;
  EXPECT_EQ(e.listen_id, l);
  EXPECT_EQ(b.state(id), CM_MRA_REQ_SENT);
  EXPECT_EQ(b.s.cm_id_info(id)->src.port, 4420);                      // the service ID's port (cma_save_ip_info)
  EXPECT_EQ(b.s.cm_id_info(id)->dst.port, 40000);                     // the IP CM header's source port
  b.raw.send(req);                                                    // duplicate REQ: the delayed MRA goes now
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_MRA, 1));
  const Msg* mra = b.raw.last(CM_ATTR_MRA);
  EXPECT_EQ(mra->get(F_REMOTE_COMM_ID), 0x1111u);
  EXPECT_EQ(mra->get(F_MESSAGE_MRAED), 0u);
  EXPECT_EQ(mra->get(F_SERVICE_TIMEOUT), 24u);
  EXPECT_EQ(mra->hdr.tid, req.hdr.tid);
  ASSERT_TRUE(b.s.cm_set_qp(id, b.n.qp).ok());
  ASSERT_TRUE(b.s.cm_accept(id, CmConnParam{}).ok());
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REP, 1));
  b.raw.send(req);                                                    // duplicate REQ in REP_SENT: the REP again
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REP, 2));
  EXPECT_EQ(b.raw.raw[b.raw.got.size() - 1], b.raw.raw[b.raw.got.size() - 2]);
  // no RTU: the REP is resent Max CM Retries (2) times, 4 ms apart, then UNREACHABLE
  ASSERT_TRUE(next_event(b.n, CM_EVENT_UNREACHABLE, e, stepper(b.s)));
  EXPECT_EQ(e.status, -ETIMEDOUT);
  b.raw.take();
  EXPECT_EQ(b.raw.count(CM_ATTR_REP), 4u);                           // REP, the duplicate's, 2 retries
  EXPECT_EQ(b.state(id), CM_IDLE);
  EXPECT_EQ(b.s.cm_counters(b.n.dev).rx_duplicates, 2u);
}

TEST(CmPassive, RtuEstablishesAndDuplicateRtuIsCounted) {
  Bench b;
  b.listen(4420);
  Msg req = req_to(b.ri, b.ni, 0x2222, 0x33, 4420);
  b.raw.send(req);
  CmEvent e;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_CONNECT_REQUEST, e, stepper(b.s)));
  const Handle id = e.id;
  ASSERT_TRUE(b.s.cm_set_qp(id, b.n.qp).ok());
  ASSERT_TRUE(b.s.cm_accept(id, CmConnParam{}).ok());
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REP, 1));
  const Msg rep = *b.raw.last(CM_ATTR_REP);
  EXPECT_EQ(rep.get(F_REMOTE_COMM_ID), 0x2222u);
  EXPECT_EQ(rep.get(F_LOCAL_QPN), b.n.qpn);
  Msg rtu = b.reply(CM_ATTR_RTU, rep, 0x2222);
  b.raw.send(rtu);
  ASSERT_TRUE(next_event(b.n, CM_EVENT_ESTABLISHED, e, stepper(b.s)));
  b.raw.send(rtu);
  while (b.s.step()) {}
  EXPECT_EQ(b.state(id), CM_ESTABLISHED);
  EXPECT_EQ(b.s.cm_counters(b.n.dev).rx_duplicates, 1u);
  EXPECT_TRUE(b.n.seen.empty() && b.s.cm_get_events(b.n.dev).empty());
  // the remote (QPN 0x33, this CA) is connected: a new REQ from it is a stale connection, REJected, and the
  // connection it says is gone is disconnected (cm_match_req: ib_send_cm_dreq)
  b.raw.send(req_to(b.ri, b.ni, 0x2223, 0x33, 4420));
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REJ, 1));
  EXPECT_EQ(b.raw.last(CM_ATTR_REJ)->get(F_REASON), CM_REJ_STALE_CONN);
  EXPECT_EQ(b.raw.last(CM_ATTR_REJ)->get(F_REMOTE_COMM_ID), 0x2223u);
  EXPECT_EQ(b.s.cm_counters(b.n.dev).rx_stale, 1u);
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_DREQ, 1));
  const Msg ours = *b.raw.last(CM_ATTR_DREQ);
  EXPECT_EQ(ours.get(F_REMOTE_COMM_ID), 0x2222u);
  EXPECT_EQ(ours.get(F_REMOTE_QPN_EECN), 0x33u);
  EXPECT_EQ(b.state(id), CM_DREQ_SENT);
  // the peer's DREQ crosses ours: the DREP at once, TimeWait, one DISCONNECTED
  Msg dreq = b.reply(CM_ATTR_DREQ, rep, 0x2222);
  dreq.set(F_REMOTE_QPN_EECN, b.n.qpn);
  dreq.hdr.tid = 0x99;
  b.raw.send(dreq);
  ASSERT_TRUE(next_event(b.n, CM_EVENT_DISCONNECTED, e, stepper(b.s)));
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_DREP, 1));
  EXPECT_EQ(b.raw.last(CM_ATTR_DREP)->hdr.tid, 0x99u);
  EXPECT_EQ(b.state(id), CM_TIMEWAIT);
  b.raw.send(dreq);                                                   // DREQ again in TimeWait: the DREP again
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_DREP, 2));
  Msg drep = b.reply(CM_ATTR_DREP, ours, 0x2222);                     // the peer's DREP to our DREQ: nothing new
  b.raw.send(drep);
  const uint64_t t = b.s.now_ns();
  ASSERT_TRUE(next_event(b.n, CM_EVENT_TIMEWAIT_EXIT, e, stepper(b.s)));
  EXPECT_LE(b.s.now_ns() - t, 2048ull * 1000000);                     // 2^(19-8) ms (cm_enter_timewait)
  EXPECT_EQ(b.state(id), CM_IDLE);
}

TEST(CmPassive, RejReasonsForRequestsNoListenerTakes) {
  Bench b;
  b.listen(4420);
  struct Case { const char* what; std::function<void(Msg&)> spoil; uint16_t reason; };
  const Case cases[] = {
    {"no listener on the port", [](Msg& m) { m.set(F_SERVICE_ID, (uint64_t(CM_PS_TCP) << 16) | 4421); }, CM_REJ_INVALID_SERVICE_ID},
    {"another port space", [](Msg& m) { m.set(F_SERVICE_ID, (uint64_t(CM_PS_IB) << 16) | 4420); }, CM_REJ_INVALID_SERVICE_ID},
    {"IP CM header version 1", [](Msg& m) { m.pdata[0] = 1; }, CM_REJ_CONSUMER_DEFINED},
    {"IP version 5", [](Msg& m) { m.pdata[1] = 0x50; }, CM_REJ_CONSUMER_DEFINED},
    {"not RC", [](Msg& m) { m.set(F_TRANSPORT_SERVICE_TYPE, 1); }, CM_REJ_CONSUMER_DEFINED},
    {"a GID not ours", [](Msg& m) { m.pri_remote_gid[15] ^= 0x55; }, CM_REJ_INVALID_GID},
    {"path MTU 0", [](Msg& m) { m.set(F_PATH_MTU, 0); }, CM_REJ_INVALID_MTU},
    {"path MTU 7", [](Msg& m) { m.set(F_PATH_MTU, 7); }, CM_REJ_INVALID_MTU},
  };
  uint32_t comm = 0x7000;
  size_t n = 0;
  for (const Case& c : cases) {
    ++comm;
    Msg req = req_to(b.ri, b.ni, comm, 0x40 + comm, 4420);
    c.spoil(req);
    b.raw.send(req);
    ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REJ, ++n)) << c.what;
    const Msg* rej = b.raw.last(CM_ATTR_REJ);
    EXPECT_EQ(rej->get(F_REASON), c.reason) << c.what;
    EXPECT_EQ(rej->get(F_REMOTE_COMM_ID), comm) << c.what;
    EXPECT_EQ(rej->get(F_LOCAL_COMM_ID), 0u) << c.what;
    EXPECT_EQ(rej->get(F_MESSAGE_REJECTED), 0u) << c.what;
    EXPECT_EQ(rej->hdr.tid, req.hdr.tid) << c.what;
    if (c.reason == CM_REJ_INVALID_GID) {
      EXPECT_EQ(rej->get(F_REJ_INFO_LENGTH), 16u);
      EXPECT_EQ(std::memcmp(rej->info, b.ni.gids[0].gid, 16), 0);
    }
  }
  EXPECT_TRUE(b.s.cm_get_events(b.n.dev).empty());
  EXPECT_EQ(b.s.cm_counters(b.n.dev).rej_sent, n);
}

TEST(CmPassive, ConsumerRejectAndBacklog) {
  Bench b;
  b.listen(4420, 2);
  for (uint32_t k = 0; k < 5; k++) b.raw.send(req_to(b.ri, b.ni, 0x100 + k, 0x50 + k, 4420));
  while (b.s.step()) {}
  auto evs = b.s.cm_get_events(b.n.dev);
  ASSERT_EQ(evs.size(), 2u);                                          // backlog 2: the rest dropped, no REJ
  b.raw.take();
  EXPECT_EQ(b.raw.count(CM_ATTR_REJ), 0u);
  EXPECT_EQ(b.s.cm_counters(b.n.dev).rx_dropped, 3u);
  std::vector<uint8_t> why = {1, 2, 3};
  ASSERT_TRUE(b.s.cm_reject(evs[0].id, why).ok());
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REJ, 1));
  const Msg* rej = b.raw.last(CM_ATTR_REJ);
  EXPECT_EQ(rej->get(F_REASON), CM_REJ_CONSUMER_DEFINED);
  EXPECT_EQ(rej->get(F_REMOTE_COMM_ID), 0x100u);
  EXPECT_EQ(rej->pdata[2], 3);
  EXPECT_EQ(b.state(evs[0].id), CM_IDLE);
  b.raw.send(req_to(b.ri, b.ni, 0x200, 0x60, 4420));                  // room again after the reject
  CmEvent e;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_CONNECT_REQUEST, e, stepper(b.s)));
  EXPECT_EQ(b.s.cm_id_info(e.id)->remote_comm_id, 0x200u);
}

TEST(CmPassive, RejFromTheActiveSideEndsTheRequest) {
  Bench b;
  b.listen(4420);
  Msg req = req_to(b.ri, b.ni, 0x3333, 0x33, 4420);
  b.raw.send(req);
  CmEvent e;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_CONNECT_REQUEST, e, stepper(b.s)));
  const uint32_t local = b.s.cm_id_info(e.id)->local_comm_id;
  Msg rej; rej.hdr.attr_id = CM_ATTR_REJ; rej.hdr.tid = req.hdr.tid;
  rej.set(F_LOCAL_COMM_ID, 0x3333).set(F_REMOTE_COMM_ID, local).set(F_REASON, CM_REJ_TIMEOUT).set(F_MESSAGE_REJECTED, 2);
  b.raw.send(rej);
  const Handle id = e.id;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_REJECTED, e, stepper(b.s)));
  EXPECT_EQ(e.id, id);
  EXPECT_EQ(e.status, CM_REJ_TIMEOUT);
  EXPECT_EQ(b.state(id), CM_IDLE);
}

TEST(CmDisconnect, DreqRetriedThenTimeWaitWithEtimedout) {
  Bench b;
  Handle c = b.connect();
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REQ, 1));
  b.raw.send(b.rep_for(*b.raw.last(CM_ATTR_REQ)));
  CmEvent e;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_ESTABLISHED, e, stepper(b.s)));
  ASSERT_TRUE(b.s.cm_disconnect(c).ok());
  ASSERT_TRUE(next_event(b.n, CM_EVENT_DISCONNECTED, e, stepper(b.s)));
  EXPECT_EQ(e.status, -ETIMEDOUT);
  b.raw.take();
  EXPECT_EQ(b.raw.count(CM_ATTR_DREQ), 16u);
  const Msg* dreq = b.raw.last(CM_ATTR_DREQ);
  EXPECT_EQ(dreq->get(F_REMOTE_QPN_EECN), 0x77u);
  EXPECT_EQ(dreq->get(F_REMOTE_COMM_ID), 0x5150u);
  EXPECT_EQ(b.state(c), CM_TIMEWAIT);
  ASSERT_TRUE(next_event(b.n, CM_EVENT_TIMEWAIT_EXIT, e, stepper(b.s)));
  EXPECT_EQ(b.state(c), CM_IDLE);
}

TEST(CmDisconnect, BothSidesAtOnceEachGetOneDisconnected) {
  Session s(5);
  Node a, c;
  a.make(s, s.create_device("rxe").value);
  c.make(s, s.create_device("rxe").value);
  Handle l = s.cm_create_id(c.dev, CM_PS_TCP, QPT_RC).value;
  ASSERT_TRUE(s.cm_bind_addr(l, v4("10.0.0.2", 1)).ok());
  ASSERT_TRUE(s.cm_listen(l, 1).ok());
  Handle x = s.cm_create_id(a.dev, CM_PS_TCP, QPT_RC).value;
  CmEvent e;
  ASSERT_TRUE(s.cm_resolve_addr(x, nullptr, v4("10.0.0.2", 1), 10).ok());
  ASSERT_TRUE(s.cm_resolve_route(x, 10).ok());
  ASSERT_TRUE(s.cm_set_qp(x, a.qp).ok());
  ASSERT_TRUE(s.cm_connect(x, CmConnParam{}).ok());
  ASSERT_TRUE(next_event(c, CM_EVENT_CONNECT_REQUEST, e, stepper(s)));
  Handle y = e.id;
  ASSERT_TRUE(s.cm_set_qp(y, c.qp).ok());
  ASSERT_TRUE(s.cm_accept(y, CmConnParam{}).ok());
  ASSERT_TRUE(next_event(c, CM_EVENT_ESTABLISHED, e, stepper(s)));
  a.seen.clear(); s.cm_get_events(a.dev);
  ASSERT_TRUE(s.cm_disconnect(x).ok());
  ASSERT_TRUE(s.cm_disconnect(y).ok());
  while (s.step()) {}
  int disc[2] = {0, 0}, exits[2] = {0, 0};
  for (int k = 0; k < 2; k++)
    for (auto& ev : s.cm_get_events(k ? c.dev : a.dev)) {
      disc[k] += ev.event == CM_EVENT_DISCONNECTED;
      exits[k] += ev.event == CM_EVENT_TIMEWAIT_EXIT;
    }
  EXPECT_EQ(disc[0], 1); EXPECT_EQ(disc[1], 1);
  EXPECT_EQ(exits[0], 1); EXPECT_EQ(exits[1], 1);
  EXPECT_EQ(s.cm_id_info(x)->state, CM_IDLE);
  EXPECT_EQ(s.cm_id_info(y)->state, CM_IDLE);
}

TEST(CmDisconnect, DreqOrRejForUnknownIds) {
  Bench b;
  Msg dreq; dreq.hdr.attr_id = CM_ATTR_DREQ; dreq.hdr.tid = 0x1234;
  dreq.set(F_LOCAL_COMM_ID, 0xdead).set(F_REMOTE_COMM_ID, 0xbeef).set(F_REMOTE_QPN_EECN, 0x99);
  b.s.cm_create_id(b.n.dev, CM_PS_TCP, QPT_RC);                         // the CM takes QP1
  b.raw.send(dreq);
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_DREP, 1));                  // cm_issue_drep
  const Msg* drep = b.raw.last(CM_ATTR_DREP);
  EXPECT_EQ(drep->get(F_LOCAL_COMM_ID), 0xbeefu);
  EXPECT_EQ(drep->get(F_REMOTE_COMM_ID), 0xdeadu);
  EXPECT_EQ(drep->hdr.tid, 0x1234u);
  for (uint16_t attr : {CM_ATTR_REJ, CM_ATTR_REP, CM_ATTR_RTU, CM_ATTR_MRA, CM_ATTR_DREP}) {
    Msg m; m.hdr.attr_id = attr; m.set(F_LOCAL_COMM_ID, 1).set(F_REMOTE_COMM_ID, 0xbeef);
    b.raw.send(m);
  }
  while (b.s.step()) {}
  b.raw.take();
  EXPECT_EQ(b.raw.got.size(), 1u);                                     // nothing else answered
  EXPECT_EQ(b.s.cm_counters(b.n.dev).rx_dropped, 6u);
}

TEST(CmPassive, CommEstBeforeTheRtuEstablishesAndTheHookSeesEachEvent) {
  Bench b;
  std::vector<Handle> hooked;
  b.s.cm_set_event_hook([&](Handle dev) { hooked.push_back(dev); });
  b.listen(4420);
  b.raw.send(req_to(b.ri, b.ni, 0x4444, 0x33, 4420));
  CmEvent e;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_CONNECT_REQUEST, e, stepper(b.s)));
  const Handle id = e.id;
  EXPECT_EQ(b.s.cm_notify(id, EVENT_COMM_EST).err, EINVAL);             // nothing accepted yet
  ASSERT_TRUE(b.s.cm_set_qp(id, b.n.qp).ok());
  uint32_t mask = 0;
  auto init = b.s.cm_init_qp_attr(id, QPS_INIT, &mask);
  ASSERT_TRUE(init.ok());
  EXPECT_EQ(init.value.qp_access_flags, uint32_t(ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC));
  EXPECT_EQ(mask, uint32_t(QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS));
  auto rts = b.s.cm_init_qp_attr(id, QPS_RTS, &mask);
  ASSERT_TRUE(rts.ok());
  EXPECT_EQ(rts.value.timeout, 19u);                                     // the REQ's local ACK timeout
  EXPECT_EQ(b.s.cm_init_qp_attr(id, QPS_SQD, &mask).err, EINVAL);
  ASSERT_TRUE(b.s.cm_accept(id, CmConnParam{}).ok());
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REP, 1));
  ASSERT_TRUE(b.s.cm_notify(id, EVENT_COMM_EST).ok());                   // the first packet came before the RTU
  ASSERT_TRUE(next_event(b.n, CM_EVENT_ESTABLISHED, e, stepper(b.s)));
  EXPECT_EQ(b.state(id), CM_ESTABLISHED);
  b.raw.send(b.reply(CM_ATTR_RTU, *b.raw.last(CM_ATTR_REP), 0x4444));  // the RTU, late: a duplicate
  while (b.s.step()) {}
  EXPECT_TRUE(b.s.cm_get_events(b.n.dev).empty());
  EXPECT_EQ(b.s.cm_counters(b.n.dev).rx_duplicates, 1u);
  EXPECT_EQ(hooked, std::vector<Handle>(2, b.n.dev));                   // CONNECT_REQUEST, ESTABLISHED
  EXPECT_EQ(b.s.cm_notify(id, 99).err, EINVAL);
}

TEST(CmPassive, DreqWhileRepSentAndRejWhenEstablished) {
  Bench b;
  b.listen(4420);
  const Msg req = req_to(b.ri, b.ni, 0x5555, 0x33, 4420);
  b.raw.send(req);
  CmEvent e;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_CONNECT_REQUEST, e, stepper(b.s)));
  const Handle id = e.id;
  ASSERT_TRUE(b.s.cm_set_qp(id, b.n.qp).ok());
  ASSERT_TRUE(b.s.cm_accept(id, CmConnParam{}).ok());
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REP, 1));
  // the RTU was lost and the peer already disconnects: DREQ in REP_SENT (cm_dreq_handler cancels the REP)
  Msg dreq = b.reply(CM_ATTR_DREQ, *b.raw.last(CM_ATTR_REP), 0x5555);
  dreq.set(F_REMOTE_QPN_EECN, b.n.qpn);
  b.raw.send(dreq);
  ASSERT_TRUE(next_event(b.n, CM_EVENT_DISCONNECTED, e, stepper(b.s)));
  EXPECT_EQ(b.state(id), CM_DREQ_RCVD);
  b.raw.take();
  EXPECT_EQ(b.raw.count(CM_ATTR_REP), 1u);                            // no REP retry after the DREQ
  // destroying it now answers the DREQ (cm_destroy_id in DREQ_RCVD) and keeps the remote in TimeWait
  ASSERT_TRUE(b.s.cm_destroy_id(id).ok());
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_DREP, 1));
  b.raw.send(req_to(b.ri, b.ni, 0x5556, 0x33, 4420));                  // the same remote QPN again: stale
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REJ, 1));
  EXPECT_EQ(b.raw.last(CM_ATTR_REJ)->get(F_REASON), CM_REJ_STALE_CONN);
}

TEST(CmActive, RejWhileEstablishedEntersTimeWait) {
  Bench b;
  Handle c = b.connect();
  ASSERT_TRUE(run_until(b.s, b.raw, CM_ATTR_REQ, 1));
  b.raw.send(b.rep_for(*b.raw.last(CM_ATTR_REQ)));
  CmEvent e;
  ASSERT_TRUE(next_event(b.n, CM_EVENT_ESTABLISHED, e, stepper(b.s)));
  Msg rej = b.reply(CM_ATTR_REJ, *b.raw.last(CM_ATTR_REQ), 0x5150);
  rej.set(F_REASON, CM_REJ_CONSUMER_DEFINED).set(F_MESSAGE_REJECTED, 2);
  b.raw.send(rej);
  ASSERT_TRUE(next_event(b.n, CM_EVENT_REJECTED, e, stepper(b.s)));
  EXPECT_EQ(b.state(c), CM_TIMEWAIT);
  ASSERT_TRUE(next_event(b.n, CM_EVENT_TIMEWAIT_EXIT, e, stepper(b.s)));
}

TEST(CmThreads, AConnectionWithTheEngineOnItsOwnThread) {
  Session s(21);
  Node a, c;
  a.make(s, s.create_device("rxe").value);
  c.make(s, s.create_device("rxe").value);
  ASSERT_TRUE(s.set_engine_threads(1).ok());
  auto wait = [] { usleep(1000); return true; };   // real time: the engine thread does the work
  Handle l = s.cm_create_id(c.dev, CM_PS_TCP, QPT_RC).value;
  ASSERT_TRUE(s.cm_bind_addr(l, v4("10.0.0.2", 9)).ok());
  ASSERT_TRUE(s.cm_listen(l, 1).ok());
  Handle x = s.cm_create_id(a.dev, CM_PS_TCP, QPT_RC).value;
  CmEvent e;
  ASSERT_TRUE(s.cm_resolve_addr(x, nullptr, v4("10.0.0.2", 9), 10).ok());
  ASSERT_TRUE(next_event(a, CM_EVENT_ADDR_RESOLVED, e, wait, 5000));
  ASSERT_TRUE(s.cm_resolve_route(x, 10).ok());
  ASSERT_TRUE(next_event(a, CM_EVENT_ROUTE_RESOLVED, e, wait, 5000));
  ASSERT_TRUE(s.cm_set_qp(x, a.qp).ok());
  ASSERT_TRUE(s.cm_connect(x, CmConnParam{}).ok());
  ASSERT_TRUE(next_event(c, CM_EVENT_CONNECT_REQUEST, e, wait, 5000));
  ASSERT_TRUE(s.cm_set_qp(e.id, c.qp).ok());
  ASSERT_TRUE(s.cm_accept(e.id, CmConnParam{}).ok());
  ASSERT_TRUE(next_event(a, CM_EVENT_ESTABLISHED, e, wait, 5000));
  ASSERT_TRUE(next_event(c, CM_EVENT_ESTABLISHED, e, wait, 5000));
  ASSERT_TRUE(s.cm_disconnect(x).ok());
  ASSERT_TRUE(next_event(c, CM_EVENT_DISCONNECTED, e, wait, 5000));
  ASSERT_TRUE(s.set_engine_threads(0).ok());
}
