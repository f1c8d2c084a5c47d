// Helpers for the connection-manager tests: a "node" (device, PD, CQs, an RC / UD QP and an MR), addresses, and
// waiting for a CM event while the engine runs (virtual time) or while UDP transports are polled (real time).
#pragma once
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

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

}  // namespace vlcm
