// The device's CM MADs against the Linux kernel's (drivers/infiniband/core/cm.c + cma.c, over rdma_rxe): the
// REQ / REP / RTU / DREQ / DREP of a captured NVMe/RDMA connection (fixtures/cm/, see its README) decoded field
// by field and compared with what two devices of a session send for the same connection parameters. What differs
// by nature is left out: comm IDs, PSNs, CA GUIDs, QPNs, GIDs and IP addresses, and the TID's upper half (the
// kernel's MAD agent number); everything else must be equal, bit for bit.

#include "cm/ip_hdr.h"
#include "cm_fixture.h"
#include "vl/wire.h"

std::string vl_test_file(const std::string& rel, std::string* tried);

using namespace vlcm;
using namespace vl::cm;

namespace {

struct Frame { std::vector<uint8_t> udp; };       // the UDP payload: BTH .. ICRC

std::vector<Frame> read_frames(std::string* err) {
  std::string tried;
  const std::string path = vl_test_file("native/tests/fixtures/cm/linux-nvme-rdma-cm.pcap", &tried);
  std::vector<Frame> out;
  if (path.empty()) { *err = "fixture not found; tried:\n" + tried; return out; }
  std::vector<wire::PcapRecord> recs;
  if (!wire::read_pcap(path, recs, err)) return out;
  for (auto& r : recs) {
    wire::Framing f;
    const uint8_t* pl = nullptr;
    size_t len = 0;
    if (!wire::parse_frame(r.data.data(), r.data.size(), f, &pl, &len, err)) continue;
    wire::Packet p;
    EXPECT_TRUE(wire::decode(pl, len, p, err));
    EXPECT_EQ(wire::icrc(f, pl, len), p.icrc) << "the kernel's ICRC";
    out.push_back({std::vector<uint8_t>(pl, pl + len)});
  }
  return out;
}

bool skipped(Field f) {
  switch (f) {
    case F_LOCAL_COMM_ID: case F_REMOTE_COMM_ID: case F_STARTING_PSN: case F_LOCAL_CA_GUID: case F_LOCAL_QPN:
    case F_REMOTE_QPN_EECN: case F_PRI_FLOW_LABEL:   // flow label: checked on its own (it hashes the ports)
      return true;
    default: return false;
  }
}

// BTH + DETH of a MAD on QP1, and the MAD
struct Mad { uint8_t opcode; uint16_t pkey; uint32_t dqp; bool ackreq; uint32_t psn, qkey, sqp; Msg m; };
Mad parse(const std::vector<uint8_t>& u) {
  Mad x;
  x.opcode = u[0]; x.pkey = uint16_t(u[2] << 8 | u[3]);
  x.dqp = uint32_t(u[5]) << 16 | uint32_t(u[6]) << 8 | u[7];
  x.ackreq = u[8] & 0x80; x.psn = uint32_t(u[9]) << 16 | uint32_t(u[10]) << 8 | u[11];
  x.qkey = uint32_t(u[12]) << 24 | uint32_t(u[13]) << 16 | uint32_t(u[14]) << 8 | u[15];
  x.sqp = uint32_t(u[17]) << 16 | uint32_t(u[18]) << 8 | u[19];
  std::string why;
  EXPECT_EQ(u.size(), 12u + 8 + 256 + 4);
  EXPECT_TRUE(decode(u.data() + 20, 256, x.m, &why)) << why;
  return x;
}

void diff(const Mad& k, const Mad& o, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(o.opcode, k.opcode); EXPECT_EQ(o.pkey, k.pkey); EXPECT_EQ(o.dqp, k.dqp); EXPECT_EQ(o.ackreq, k.ackreq);
  EXPECT_EQ(o.qkey, k.qkey); EXPECT_EQ(o.sqp, k.sqp);
  const MadHdr &a = k.m.hdr, &b = o.m.hdr;
  EXPECT_EQ(b.base_version, a.base_version); EXPECT_EQ(b.mgmt_class, a.mgmt_class);
  EXPECT_EQ(b.class_version, a.class_version); EXPECT_EQ(b.method, a.method); EXPECT_EQ(b.status, a.status);
  EXPECT_EQ(b.class_specific, a.class_specific); EXPECT_EQ(b.attr_id, a.attr_id); EXPECT_EQ(b.attr_mod, a.attr_mod);
  const Layout* l = layout(a.attr_id);
  ASSERT_TRUE(l);
  for (size_t i = 0; i < l->nfields; i++) {
    const Field f = l->fields[i].f;
    if (skipped(f)) continue;
    EXPECT_EQ(o.m.get(f), k.m.get(f)) << l->name << " " << kFieldNames[f];
  }
  EXPECT_EQ(std::memcmp(o.m.info, k.m.info, 72), 0);
  // private data: the REQ's IP CM header without its addresses, then the consumer's bytes
  const size_t n = l->pdata_len;
  if (a.attr_id == CM_ATTR_REQ) {
    EXPECT_EQ(std::memcmp(o.m.pdata, k.m.pdata, 4), 0) << "IP CM header: version, IP version, source port";
    EXPECT_EQ(std::memcmp(o.m.pdata + kIpHdrLen, k.m.pdata + kIpHdrLen, n - kIpHdrLen), 0) << "REQ private data";
  } else {
    EXPECT_EQ(std::memcmp(o.m.pdata, k.m.pdata, n), 0) << l->name << " private data";
  }
}

}  // namespace

TEST(CmKernel, OurMadsMatchTheLinuxKernelsFieldByField) {
  std::string err;
  const auto frames = read_frames(&err);
  ASSERT_EQ(frames.size(), 10u) << err;
  std::vector<Mad> k;
  for (auto& f : frames) k.push_back(parse(f.udp));
  // the kernel's own numbers first: what the comparison relies on
  const Msg& kreq = k[0].m;
  EXPECT_EQ(kreq.get(F_SERVICE_ID), 0x1061144u);                        // RDMA_PS_TCP, port 4420
  EXPECT_EQ(kreq.hdr.tid & 0xffffffffu, __builtin_bswap32(uint32_t(kreq.get(F_LOCAL_COMM_ID))));   // cm_form_tid
  const uint16_t sport = uint16_t(kreq.pdata[2] << 8 | kreq.pdata[3]);
  EXPECT_EQ(kreq.get(F_PRI_FLOW_LABEL), (uint32_t(sport) * 31 + 4420) & 0xFFFFF);   // cma_get_roce_udp_flow_label
  for (size_t i = 0; i < k.size(); i++) EXPECT_EQ(k[i].dqp, 1u);

  // the same connection on the device: nvme-rdma's parameters and private data, the kernel's source port
  Session s(11);
  Node host, tgt;
  host.make(s, s.create_device("rxe").value);
  tgt.make(s, s.create_device("rxe").value);
  Handle l = s.cm_create_id(tgt.dev, CM_PS_TCP, QPT_RC).value;
  ASSERT_TRUE(s.cm_bind_addr(l, v4("10.0.0.2", 4420)).ok());
  ASSERT_TRUE(s.cm_listen(l, 128).ok());
  Handle c = s.cm_create_id(host.dev, CM_PS_TCP, QPT_RC).value;
  ASSERT_TRUE(s.cm_bind_addr(c, v4("10.0.0.1", sport)).ok());
  CmEvent e;
  ASSERT_TRUE(s.cm_resolve_addr(c, nullptr, v4("10.0.0.2", 4420), 2000).ok());
  ASSERT_TRUE(s.cm_resolve_route(c, 2000).ok());
  ASSERT_TRUE(s.cm_set_qp(c, host.qp).ok());
  CmConnParam p;                                  // nvme_rdma_route_resolved
  p.private_data.assign(kreq.pdata + kIpHdrLen, kreq.pdata + kIpHdrLen + 32);   // struct nvme_rdma_cm_req
  p.responder_resources = uint8_t(kreq.get(F_RESPONDER_RESOURCES)); p.initiator_depth = uint8_t(kreq.get(F_INITIATOR_DEPTH));
  p.flow_control = 1; p.retry_count = 7; p.rnr_retry_count = 7;
  ASSERT_TRUE(s.cm_connect(c, p).ok());
  ASSERT_TRUE(next_event(tgt, CM_EVENT_CONNECT_REQUEST, e, stepper(s)));
  const Handle n = e.id;
  ASSERT_TRUE(s.cm_set_qp(n, tgt.qp).ok());
  const Msg& krep = k[1].m;
  CmConnParam a;                                  // nvmet_rdma_cm_accept
  a.private_data.assign(krep.pdata, krep.pdata + 8);                  // struct nvme_rdma_cm_rep
  a.responder_resources = uint8_t(krep.get(F_RESPONDER_RESOURCES)); a.initiator_depth = uint8_t(krep.get(F_INITIATOR_DEPTH));
  a.flow_control = 1; a.rnr_retry_count = uint8_t(krep.get(F_RNR_RETRY_COUNT));
  ASSERT_TRUE(s.cm_accept(n, a).ok());
  ASSERT_TRUE(next_event(host, CM_EVENT_ADDR_RESOLVED, e, stepper(s)));
  ASSERT_TRUE(next_event(host, CM_EVENT_ROUTE_RESOLVED, e, stepper(s)));
  ASSERT_TRUE(next_event(host, CM_EVENT_ESTABLISHED, e, stepper(s)));
  ASSERT_TRUE(next_event(tgt, CM_EVENT_ESTABLISHED, e, stepper(s)));
  ASSERT_TRUE(s.cm_disconnect(c).ok());                               // nvme disconnect: the host's DREQ
  ASSERT_TRUE(next_event(tgt, CM_EVENT_DISCONNECTED, e, stepper(s)));
  ASSERT_TRUE(s.cm_disconnect(n).ok());
  ASSERT_TRUE(next_event(host, CM_EVENT_DISCONNECTED, e, stepper(s)));

  std::vector<Mad> ours;
  std::vector<Handle> from;
  for (auto& ev : s.drain_events())
    if (ev.kind == EventKind::PacketSent && ev.b == 1) { ours.push_back(parse(ev.pkt)); from.push_back(ev.device); }
  ASSERT_EQ(ours.size(), 5u);
  const char* names[] = {"REQ", "REP", "RTU", "DREQ", "DREP"};
  const size_t kidx[] = {0, 1, 2, 6, 7};
  for (size_t i = 0; i < 5; i++) diff(k[kidx[i]], ours[i], names[i]);
  EXPECT_EQ(ours[0].m.get(F_PRI_FLOW_LABEL), kreq.get(F_PRI_FLOW_LABEL));   // the same ports, the same label
  // each side's QP1 numbers its MADs from 0, as the kernel's (host: REQ 0, RTU 1, DREQ 2; target: REP 0, DREP 1)
  EXPECT_EQ(ours[0].psn, 0u); EXPECT_EQ(ours[2].psn, 1u); EXPECT_EQ(ours[3].psn, 2u);
  EXPECT_EQ(ours[1].psn, 0u); EXPECT_EQ(ours[4].psn, 1u);
  EXPECT_EQ(k[0].psn, 0u); EXPECT_EQ(k[2].psn, 1u); EXPECT_EQ(k[1].psn, 0u);
  // TIDs: REP and RTU keep the REQ's; the DREQ's is the disconnecting side's own; the DREP the DREQ's
  EXPECT_EQ(ours[1].m.hdr.tid, ours[0].m.hdr.tid);
  EXPECT_EQ(ours[2].m.hdr.tid, ours[0].m.hdr.tid);
  EXPECT_EQ(ours[4].m.hdr.tid, ours[3].m.hdr.tid);
  EXPECT_EQ(ours[0].m.hdr.tid & 0xffffffffu, __builtin_bswap32(uint32_t(ours[0].m.get(F_LOCAL_COMM_ID))));
  EXPECT_EQ(k[1].m.hdr.tid, k[0].m.hdr.tid);
  EXPECT_EQ(k[7].m.hdr.tid, k[6].m.hdr.tid);
  // the comm IDs pair up as the kernel's do
  EXPECT_EQ(ours[1].m.get(F_REMOTE_COMM_ID), ours[0].m.get(F_LOCAL_COMM_ID));
  EXPECT_EQ(ours[2].m.get(F_REMOTE_COMM_ID), ours[1].m.get(F_LOCAL_COMM_ID));
  EXPECT_EQ(ours[3].m.get(F_REMOTE_QPN_EECN), tgt.qpn);
  // (the kernel disconnected the I/O queue first: its DREQ is frame 7, for the connection of frames 4-6)
  EXPECT_EQ(k[6].m.get(F_REMOTE_QPN_EECN), k[4].m.get(F_LOCAL_QPN));
  EXPECT_EQ(k[6].m.hdr.tid, k[3].m.hdr.tid);
}
