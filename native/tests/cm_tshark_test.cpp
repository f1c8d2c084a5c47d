// Every CM MAD the device sends decodes in Wireshark: two sessions run a connection over UDP on loopback (REQ,
// REP, RTU, a REJ, DREQ, DREP, SIDR REQ / REP) with the transports capturing what they sent (real IP/UDP
// headers), and a session's in-process pcap adds an MRA; tshark must dissect each as the CM message it is, with
// no expert warning or error, and our independent icrc_check.lua (native/tests/tshark) must call every ICRC good.
#include <unistd.h>

#include <cstdio>
#include <map>
#include <sstream>

#include "cm_fixture.h"
#include "net/udp.h"

std::string vl_test_file(const std::string& rel, std::string* tried);

using namespace vlcm;
using namespace vl::cm;

namespace {

std::string run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) { *status = -1; return out; }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

std::string lo_addr(int host) {
  unsigned p = static_cast<unsigned>(getpid());
  return "127." + std::to_string(1 + (p >> 8) % 250) + "." + std::to_string(p & 0xff) + "." + std::to_string(150 + host);
}

struct Row { std::string icrc, attr, severity, info; };

// one row per RoCE frame: the ICRC status of icrc_check.lua, the CM attribute Wireshark decoded, expert severities
std::vector<Row> dissect(const std::string& lua, const std::string& pcap, uint16_t port, std::string* raw) {
  const std::string p = std::to_string(port);
  int st = 0;
  std::string cmd = "tshark -X lua_script:'" + lua + "' -X lua_script1:" + p + " -d udp.port==" + p + ",infiniband -r '" + pcap +
                    "' -Y infiniband -T fields -E separator='|' -e icrc_check.status -e infiniband.mad.attributeid"
                    " -e _ws.expert.severity -e _ws.col.Info 2>&1";
  *raw = run(cmd, &st);
  std::vector<Row> rows;
  std::istringstream in(*raw);
  std::string line;
  while (std::getline(in, line)) {
    Row r;
    std::istringstream ls(line);
    std::getline(ls, r.icrc, '|'); std::getline(ls, r.attr, '|'); std::getline(ls, r.severity, '|'); std::getline(ls, r.info, '|');
    rows.push_back(r);
  }
  if (st != 0) rows.push_back({"<tshark exit " + std::to_string(st) + ">", "", "", ""});
  return rows;
}

}  // namespace

TEST(CmTshark, EveryCmMadDecodesWithAGoodIcrcAndNoExpertInfo) {
  ASSERT_EQ(std::system("command -v tshark >/dev/null 2>&1"), 0) << "tshark not found on PATH (apt-get install -y tshark)";
  std::string tried;
  const std::string lua = vl_test_file("native/tests/tshark/icrc_check.lua", &tried);
  ASSERT_FALSE(lua.empty()) << "icrc_check.lua not found; tried:\n" << tried;

  Session s1(1), s2(2);
  Handle d1 = s1.create_device("rxe").value, d2 = s2.create_device("rxe").value;
  net::UdpOptions o1; o1.address = lo_addr(1); o1.port = 0;
  auto t1 = net::UdpTransport::attach(s1, d1, o1);
  ASSERT_TRUE(t1.ok()) << t1.msg;
  net::UdpOptions o2; o2.address = lo_addr(2); o2.port = t1.value->port();
  auto t2 = net::UdpTransport::attach(s2, d2, o2);
  ASSERT_TRUE(t2.ok()) << t2.msg;
  auto& T1 = *t1.value; auto& T2 = *t2.value;
  T1.set_capture(true); T2.set_capture(true);
  Node a, b, ua, ub;
  a.make(s1, d1); b.make(s2, d2);
  ua.s = &s1; ua.dev = d1; ua.pd = a.pd; ua.cq = a.cq; ua.new_qp(QPT_UD);
  ub.s = &s2; ub.dev = d2; ub.pd = b.pd; ub.cq = b.cq; ub.new_qp(QPT_UD);
  auto drive = [&] { T1.poll(100000); T2.poll(100000); return true; };
  CmEvent e;
  Handle l = s2.cm_create_id(d2, CM_PS_TCP, QPT_RC).value;
  ASSERT_TRUE(s2.cm_bind_addr(l, v4(lo_addr(2), 4420)).ok());
  ASSERT_TRUE(s2.cm_listen(l, 4).ok());
  Handle lu = s2.cm_create_id(d2, CM_PS_UDP, QPT_UD).value;
  ASSERT_TRUE(s2.cm_bind_addr(lu, v4(lo_addr(2), 7000)).ok());
  ASSERT_TRUE(s2.cm_listen(lu, 4).ok());
  auto dial = [&](uint32_t ps, uint32_t qpt, uint16_t port, Handle qp) {
    Handle c = s1.cm_create_id(d1, ps, qpt).value;
    EXPECT_TRUE(s1.cm_resolve_addr(c, nullptr, v4(lo_addr(2), port), 100).ok());
    EXPECT_TRUE(next_event(a, CM_EVENT_ADDR_RESOLVED, e, drive));
    EXPECT_TRUE(s1.cm_resolve_route(c, 100).ok());
    EXPECT_TRUE(next_event(a, CM_EVENT_ROUTE_RESOLVED, e, drive));
    if (qp) { EXPECT_TRUE(s1.cm_set_qp(c, qp).ok()); }
    CmConnParam p; p.private_data = {1, 2, 3, 4};
    EXPECT_TRUE(s1.cm_connect(c, p).ok());
    return c;
  };
  // REJ: nobody listens on 4421
  dial(CM_PS_TCP, QPT_RC, 4421, 0);
  ASSERT_TRUE(next_event(a, CM_EVENT_REJECTED, e, drive));
  EXPECT_EQ(e.status, CM_REJ_INVALID_SERVICE_ID);
  // REQ, REP, RTU, DREQ, DREP
  Handle c = dial(CM_PS_TCP, QPT_RC, 4420, a.qp);
  ASSERT_TRUE(next_event(b, CM_EVENT_CONNECT_REQUEST, e, drive));
  const Handle n = e.id;
  ASSERT_TRUE(s2.cm_set_qp(n, b.qp).ok());
  ASSERT_TRUE(s2.cm_accept(n, CmConnParam{}).ok());
  ASSERT_TRUE(next_event(a, CM_EVENT_ESTABLISHED, e, drive));
  ASSERT_TRUE(next_event(b, CM_EVENT_ESTABLISHED, e, drive));
  ASSERT_TRUE(s1.cm_disconnect(c).ok());
  ASSERT_TRUE(next_event(b, CM_EVENT_DISCONNECTED, e, drive));
  ASSERT_TRUE(s2.cm_disconnect(n).ok());
  ASSERT_TRUE(next_event(a, CM_EVENT_DISCONNECTED, e, drive));
  // SIDR REQ / REP
  dial(CM_PS_UDP, QPT_UD, 7000, ua.qp);
  ASSERT_TRUE(next_event(b, CM_EVENT_CONNECT_REQUEST, e, drive));
  ASSERT_TRUE(s2.cm_set_qp(e.id, ub.qp).ok());
  ASSERT_TRUE(s2.cm_accept(e.id, CmConnParam{}).ok());
  ASSERT_TRUE(next_event(a, CM_EVENT_ESTABLISHED, e, drive));
  EXPECT_EQ(e.remote_qpn, ub.qpn);
  for (int i = 0; i < 5; i++) drive();

  // an MRA (a duplicate REQ while the consumer has not answered) from a session's in-process wire
  Session s3(3);
  Handle rd = s3.create_device("rxe").value, md = s3.create_device("rxe").value;
  RawPeer raw; raw.make(s3, rd, md);
  Handle l3 = s3.cm_create_id(md, CM_PS_TCP, QPT_RC).value;
  ASSERT_TRUE(s3.cm_bind_addr(l3, v4("10.0.0.2", 4420)).ok());
  ASSERT_TRUE(s3.cm_listen(l3, 4).ok());
  const Msg req = req_to(s3.devices()[0], s3.devices()[1], 0x77, 0x55, 4420);
  raw.send(req); raw.send(req);
  ASSERT_TRUE(run_until(s3, raw, CM_ATTR_MRA, 1));

  const std::string dir = "/tmp/vl-cm-tshark-" + std::to_string(getpid());
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  const std::string p1 = dir + "/h1.pcap", p2 = dir + "/h2.pcap", p3 = dir + "/s3.pcap";
  ASSERT_TRUE(T1.write_pcap(p1).ok());
  ASSERT_TRUE(T2.write_pcap(p2).ok());
  ASSERT_TRUE(s3.write_pcap(p3).ok());
  std::map<std::string, int> sent;                 // the CM attributes our devices sent, as Wireshark named them
  size_t frames = 0;
  for (auto [pcap, port, who] : {std::tuple{p1, T1.port(), "host 1"}, {p2, T2.port(), "host 2"}, {p3, uint16_t(4791), "in-session"}}) {
    std::string out;
    const auto rows = dissect(lua, pcap, port, &out);
    for (auto& r : rows) {
      if (r.attr.empty()) continue;                // (not a MAD: the SEND of the UD datagram test, ACKs)
      frames++;
      EXPECT_EQ(r.icrc, "good") << who << ": " << r.info << "\n" << out;
      EXPECT_EQ(r.severity, "") << who << ": expert info on " << r.info << "\n" << out;
      if (std::string(who) != "in-session" || r.attr != "0x0010") sent[r.attr]++;   // (there the REQs are the raw peer's)
    }
  }
  // REQ x2, REP, RTU, REJ, DREQ, DREP, SIDR REQ, SIDR REP, MRA
  for (const char* attr : {"0x0010", "0x0011", "0x0012", "0x0013", "0x0014", "0x0015", "0x0016", "0x0017", "0x0018"})
    EXPECT_GE(sent[attr], 1) << "no " << attr << " on the wire";
  EXPECT_GE(frames, 10u);
  std::system(("rm -rf " + dir).c_str());
}
