// Helpers for the connection-manager tests: a "node" (device, PD, CQs, an RC / UD QP and an MR), addresses, and
// waiting for a CM event while the engine runs (virtual time) or while UDP transports are polled (real time).
#pragma once
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cm/mad.h"
#include "vl/names.h"
#include "vl/session.h"

namespace vlcm {
using namespace vl;

inline CmAddr v4(const std::string& ip, uint16_t port) {
  CmAddr a; a.family = 2; a.port = port;
  a.ip[10] = a.ip[11] = 0xff;
  inet_pton(AF_INET, ip.c_str(), a.ip + 12);
  return a;
}
inline CmAddr v6(const std::string& ip, uint16_t port) {
  CmAddr a; a.family = 10; a.port = port;
  inet_pton(AF_INET6, ip.c_str(), a.ip);
  return a;
}
inline CmAddr of_gid(const uint8_t gid[16], uint16_t port) {
  CmAddr a; std::memcpy(a.ip, gid, 16); a.port = port;
  static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  a.family = std::memcmp(gid, pre, 12) == 0 ? 2 : 10;
  return a;
}
inline const char* ev_name(uint32_t t) { const char* n = name_of(kCmEventNames, t); return n ? n : "?"; }
inline const char* st_name(uint32_t t) { const char* n = name_of(kCmStateNames, t); return n ? n : "?"; }

struct Node {
  Session* s = nullptr;
  Handle dev = 0, pd = 0, cq = 0, qp = 0;
  uint32_t qpn = 0;
  BufferInfo buf;
  MrInfo mr;
  std::vector<CmEvent> seen;                      // events taken but not yet asked for

  void make(Session& ss, Handle d, uint32_t qp_type = QPT_RC) {
    s = &ss; dev = d;
    pd = s->alloc_pd(dev).value;
    cq = s->create_cq(dev, 256).value;
    new_qp(qp_type);
    buf = s->alloc_buffer(65536).value;
    mr = s->reg_mr(pd, buf.addr, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ).value;
  }
  Handle new_qp(uint32_t qp_type = QPT_RC) {
    QpInitAttr ia; ia.pd = pd; ia.send_cq = cq; ia.recv_cq = cq; ia.qp_type = qp_type;
    ia.cap.max_send_wr = 16; ia.cap.max_recv_wr = 16;
    auto q = s->create_qp(pd, ia);
    EXPECT_TRUE(q.ok()) << q.msg;
    qp = q.value.handle; qpn = q.value.qp_num;
    return qp;
  }
  uint32_t qp_state(Handle h = 0) const { return s->query_qp(h ? h : qp)->attr.qp_state; }
};

// Take the next CM event of the node (type `want`, or any if want < 0) while `drive` moves time on; fails after
// `limit` drive calls.
inline ::testing::AssertionResult next_event(Node& n, int want, CmEvent& out, const std::function<bool()>& drive,
                                             int limit = 200000) {
  for (int i = 0; i <= limit; i++) {
    for (auto& e : n.s->cm_get_events(n.dev)) n.seen.push_back(std::move(e));
    if (!n.seen.empty()) {
      out = n.seen.front();
      n.seen.erase(n.seen.begin());
      if (want >= 0 && out.event != uint32_t(want))
        return ::testing::AssertionFailure() << "event " << ev_name(out.event) << " (status " << out.status << "), expected " << ev_name(uint32_t(want));
      return ::testing::AssertionSuccess();
    }
    if (!drive()) break;
  }
  return ::testing::AssertionFailure() << "no CM event (expected " << (want >= 0 ? ev_name(uint32_t(want)) : "any") << ")";
}

// drive for a deterministic session: one engine step (false when idle)
inline std::function<bool()> stepper(Session& s) { return [&s] { return s.step(); }; }

inline std::string payload(Session& s, uint64_t addr, size_t n) {
  std::string v(n, '\0');
  EXPECT_TRUE(s.read_memory(addr, reinterpret_cast<uint8_t*>(v.data()), n).ok());
  return v;
}

// A peer without a CM: a device whose QP1 is a user GSI QP (as lab 4 makes), to put any MAD on the wire to a
// device's CM and see exactly what comes back.
struct RawPeer {
  Session* s = nullptr;
  Handle dev = 0, pd = 0, cq = 0, qp = 0, ah = 0;
  BufferInfo buf;
  MrInfo mr;
  static constexpr uint32_t kSlot = 40 + 256, kSlots = 64, kTx = kSlot * kSlots;
  void make(Session& ss, Handle d, Handle target) {
    s = &ss; dev = d;
    pd = s->alloc_pd(dev).value;
    cq = s->create_cq(dev, 1024).value;
    QpInitAttr ia; ia.pd = pd; ia.send_cq = cq; ia.recv_cq = cq; ia.qp_type = QPT_UD; ia.gsi = true;
    ia.cap.max_send_wr = 256; ia.cap.max_recv_wr = kSlots;
    auto q = s->create_qp(pd, ia);
    ASSERT_TRUE(q.ok()) << q.msg;
    qp = q.value.handle;
    QpAttr at; at.qp_state = QPS_INIT; at.qkey = cm::kGsiQkey;
    ASSERT_TRUE(s->modify_qp(qp, at, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_QKEY).ok());
    at.qp_state = QPS_RTR;
    ASSERT_TRUE(s->modify_qp(qp, at, QP_STATE).ok());
    at.qp_state = QPS_RTS;
    ASSERT_TRUE(s->modify_qp(qp, at, QP_STATE | QP_SQ_PSN).ok());
    buf = s->alloc_buffer(kTx + 256 * 256).value;
    mr = s->reg_mr(pd, buf.addr, kTx + 256 * 256, ACCESS_LOCAL_WRITE).value;
    for (uint32_t i = 0; i < kSlots; i++) post(i);
    ah = s->create_ah(pd, target).value;
  }
  void post(uint32_t slot) {
    RecvWr r; r.wr_id = slot; r.sg_list = {{buf.addr + slot * kSlot, kSlot, mr.lkey}};
    ASSERT_TRUE(s->post_recv(qp, {r}).ok());
  }
  uint32_t txn = 0;
  void send_raw(const uint8_t* mad, uint32_t len = 256, uint32_t qkey = cm::kGsiQkey) {
    const uint64_t at = buf.addr + kTx + (txn++ % 256) * 256;
    ASSERT_TRUE(s->write_memory(at, mad, len).ok());
    SendWr w; w.wr_id = 1000 + txn; w.opcode = WR_SEND; w.sg_list = {{at, len, mr.lkey}};
    w.ah = ah; w.remote_qpn = 1; w.remote_qkey = qkey;
    ASSERT_TRUE(s->post_send(qp, {w}).ok());
  }
  void send(const cm::Msg& m) { uint8_t b[256]; cm::encode(m, b); send_raw(b); }
  // every MAD received so far (decoded), in order
  std::vector<cm::Msg> got;
  std::vector<std::vector<uint8_t>> raw;
  void take() {
    for (auto& wc : s->poll_cq(cq, 64)) {
      if (wc.opcode != WC_RECV) continue;
      std::vector<uint8_t> b(256);
      EXPECT_TRUE(s->read_memory(buf.addr + wc.wr_id * kSlot + 40, b.data(), 256).ok());
      cm::Msg m;
      EXPECT_TRUE(cm::decode(b.data(), 256, m, nullptr));
      got.push_back(m);
      raw.push_back(b);
      post(uint32_t(wc.wr_id));
    }
  }
  size_t count(uint16_t attr) const { size_t n = 0; for (auto& m : got) if (m.hdr.attr_id == attr) n++; return n; }
  const cm::Msg* last(uint16_t attr) const { for (size_t i = got.size(); i-- > 0;) if (got[i].hdr.attr_id == attr) return &got[i]; return nullptr; }
};

// run the session until the raw peer has n MADs of attr (false if the engine went idle first)
inline bool run_until(Session& s, RawPeer& p, uint16_t attr, size_t n) {
  for (int i = 0; i < 1000000; i++) {
    p.take();
    if (p.count(attr) >= n) return true;
    if (!s.step()) { p.take(); return p.count(attr) >= n; }
  }
  return false;
}

// A REQ as rdma_cm sends it to port `port` from a raw peer (comm ID, QPN, GIDs given)
inline cm::Msg req_to(const DeviceInfo& from, const DeviceInfo& to, uint32_t comm, uint32_t qpn, uint16_t port, uint16_t sport = 40000) {
  cm::Msg m; m.hdr.attr_id = CM_ATTR_REQ; m.hdr.tid = 0x100000000ull | comm;
  m.set(cm::F_LOCAL_COMM_ID, comm).set(cm::F_SERVICE_ID, (uint64_t(CM_PS_TCP) << 16) | port).set(cm::F_LOCAL_CA_GUID, from.node_guid);
  m.set(cm::F_LOCAL_QPN, qpn).set(cm::F_RESPONDER_RESOURCES, 1).set(cm::F_INITIATOR_DEPTH, 1);
  m.set(cm::F_REMOTE_CM_RESPONSE_TIMEOUT, 20).set(cm::F_END_TO_END_FLOW_CONTROL, 1).set(cm::F_STARTING_PSN, 0x123456);
  m.set(cm::F_LOCAL_CM_RESPONSE_TIMEOUT, 20).set(cm::F_RETRY_COUNT, 7).set(cm::F_PARTITION_KEY, 0xffff);
  m.set(cm::F_PATH_MTU, MTU_1024).set(cm::F_RNR_RETRY_COUNT, 7).set(cm::F_MAX_CM_RETRIES, 15);
  m.set(cm::F_PRI_LOCAL_LID, 0xffff).set(cm::F_PRI_REMOTE_LID, 0xffff).set(cm::F_PRI_HOP_LIMIT, 64).set(cm::F_PRI_LOCAL_ACK_TIMEOUT, 19);
  std::memcpy(m.pri_local_gid, from.gids[1].gid, 16);
  std::memcpy(m.pri_remote_gid, to.gids[1].gid, 16);
  m.pdata[1] = 0x40; m.pdata[2] = uint8_t(sport >> 8); m.pdata[3] = uint8_t(sport);
  std::memcpy(m.pdata + 16, from.gids[1].gid + 12, 4);
  std::memcpy(m.pdata + 32, to.gids[1].gid + 12, 4);
  return m;
}

}  // namespace vlcm
