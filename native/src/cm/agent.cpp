// The QP1 agent of a device's connection manager: every CM MAD leaves as a UD SEND ONLY from QP1 to the peer's QP1
// (BTH P_Key 0xFFFF, DETH Q_Key 0x80010000 and source QP 1, one 256-byte MAD; as ib_mad posts it on the kernel's
// GSI QP, PSNs counting from 0), in-session or through the device's UDP transport; every MAD to QP1 of a device whose
// CM owns QP1 comes in here (SessionImpl::dispatch), is checked as ib_mad / cm.c check it and goes to conn.cpp or
// sidr.cpp. What fails a check is dropped and counted (Counters::rx_dropped) with a CmMad DROPPED event.
#include <cstring>

#include "cm/cm_impl.h"
#include "vl/names.h"

namespace vl::cm {

Core& core(SessionImpl& S) {
  if (!S.cm) S.cm = std::make_shared<Core>();
  Core& c = *S.cm;
  if (!c.seeded) {                                 // deterministic per session seed (the kernel draws them at random)
    std::mt19937_64 r(S.seed ^ 0x434d434d434d434dull);
    c.id_xor = uint32_t(r());
    c.next_id = uint32_t(r()) & 0xFFFF;
    c.next_port = uint16_t(32768 + r() % (60999 - 32768));
    c.seeded = true;
  }
  return c;
}

Dev& dev_state(SessionImpl& S, Handle dev) { return core(S).devs[dev]; }

Id* find_local(SessionImpl& S, Handle dev, uint32_t local_id) {
  for (auto& [h, id] : core(S).ids)
    if (id.dev == dev && id.local_id == local_id && !id.listening) return &id;
  return nullptr;
}

void emit_state(SessionImpl& S, Id& id, uint8_t to, const char* why) {
  if (!S.capture) return;
  const char* a = name_of(kCmStateNames, id.state);
  const char* b = name_of(kCmStateNames, to);
  auto& e = S.emit(EventKind::CmState, id.dev, id.h, "cm_id", std::string(a) + " -> " + b + (why ? std::string(" (") + why + ")" : ""));
  e.a = id.state; e.b = to; e.c = id.local_id; e.d = id.remote_id;
}

void emit_mad(SessionImpl& S, Handle dev, Handle id, const Msg& m, uint8_t dir, const std::string& why) {
  if (!S.capture) return;
  std::string t = std::string(name_of(kCmMadDirNames, dir)) + " " + summary(m);
  if (!why.empty()) t += ": " + why;
  auto& e = S.emit(EventKind::CmMad, dev, id, id ? "cm_id" : "", std::move(t));
  // a: the attribute ID in bits 15:0; a REJ's reason (IBA 12.6.7.2 Table 112) in bits 31:16, so a console names it
  // from the event's numbers (native/EVENTS.md)
  e.a = m.hdr.attr_id | (m.hdr.attr_id == CM_ATTR_REJ ? uint64_t(m.f[F_REASON] & 0xffff) << 16 : 0); e.b = dir;
  e.c = m.hdr.attr_id >= CM_ATTR_SIDR_REQ && m.hdr.attr_id <= CM_ATTR_SIDR_REP ? m.f[F_REQUEST_ID] : m.f[F_LOCAL_COMM_ID];
  e.d = m.f[F_REMOTE_COMM_ID];
}

void drop(SessionImpl& S, Handle dev, const uint8_t* mad, size_t n, const std::string& why) {
  dev_state(S, dev).n.rx_dropped++;
  if (!S.capture) return;
  Msg m;
  if (n >= kMadHdrLen) decode_hdr(mad, m.hdr);
  if (n >= kMadHdrLen + 8 && layout(m.hdr.attr_id)) {
    m.f[F_LOCAL_COMM_ID] = get_bits(mad + kMadHdrLen, 0, 32);
    m.f[F_REMOTE_COMM_ID] = get_bits(mad + kMadHdrLen, 32, 32);
  }
  emit_mad(S, dev, 0, m, uint8_t(CmMadDir::Dropped), why);
}

void queue_event(SessionImpl& S, Handle dev, CmEvent e) {
  Dev& d = dev_state(S, dev);
  if (d.events.size() >= (1u << 16)) d.events.pop_front();   // bounded: an application that never reads loses the oldest
  d.events.push_back(std::move(e));
  if (S.cm_hook) S.cm_hook(dev);
}

// One MAD on the wire from QP1 of dev to QP1 of the peer
static void transmit(SessionImpl& S, Handle dev, const Peer& to, const uint8_t* mad) {
  Device* d = S.dev(dev);
  if (!d) return;
  Dev& st = dev_state(S, dev);
  wire::Packet p;
  p.opcode = wire::UD_SEND_ONLY;
  p.pkey = kDefaultPkey;
  p.dest_qp = kGsiQpn;
  p.ack_req = true;                                // rxe sets AckReq on the last packet of every message, UD included
  p.psn = st.psn; st.psn = psn_add(st.psn, 1);
  p.deth_qkey = kGsiQkey;
  p.deth_src_qp = kGsiQpn;
  p.payload = mad;
  p.payload_len = kMadLen;
  st.n.tx++;
  if (d->port) return d->port->transmit_gmp(p, to.sgid_index, to.gid);   // on the network (native/src/net)
  if (!to.dev || !S.dev(to.dev)) return;           // the peer device is gone: the MAD is lost (timers go on)
  S.send_packet_raw(dev, to.dev, p);
}

void send(SessionImpl& S, Handle dev, const Peer& to, Msg& m, Id* id, bool remember) {
  uint8_t mad[kMadLen];
  encode(m, mad);
  emit_mad(S, dev, id ? id->h : 0, m, uint8_t(CmMadDir::Sent));
  if (id && remember) { std::memcpy(id->sent, mad, kMadLen); id->have_sent = true; }
  transmit(S, dev, to, mad);
}

void resend(SessionImpl& S, Id& id, const uint8_t* mad) {
  Msg m;
  decode(mad, kMadLen, m, nullptr);
  emit_mad(S, id.dev, id.h, m, uint8_t(CmMadDir::Resent));
  transmit(S, id.dev, id.peer, mad);
}

}  // namespace vl::cm

namespace vl {

using namespace cm;

void SessionImpl::cm_receive(Handle src, Handle dst, const wire::Packet& p, const std::vector<uint8_t>& bytes) {
  Dev& d = dev_state(*this, dst);
  d.n.rx++;
  if (capture) {
    auto& e = emit(EventKind::PacketReceived, dst, 0, "packet", wire::opcode_name(p.opcode));
    e.a = p.opcode; e.b = p.dest_qp; e.c = p.psn; e.d = src;
    e.pkt = bytes;
  }
  // ib_mad's receive checks for QP1 (IBA 13.5.3): a UD SEND carrying the GSI Q_Key, one MAD
  if (p.opcode != wire::UD_SEND_ONLY) return drop(*this, dst, p.payload, p.payload_len, std::string("QP1 takes UD SEND ONLY, not ") + wire::opcode_name(p.opcode));
  if (p.deth_qkey != kGsiQkey) return drop(*this, dst, p.payload, p.payload_len, "Q_Key " + hex(p.deth_qkey) + " is not the GSI Q_Key 0x80010000");
  if (p.payload_len != kMadLen) return drop(*this, dst, p.payload, p.payload_len, "payload of " + std::to_string(p.payload_len) + " bytes (a MAD is 256)");
  Msg m;
  std::string why;
  if (!decode(p.payload, p.payload_len, m, &why)) return drop(*this, dst, p.payload, p.payload_len, why);
  Peer from;
  from.dev = src;
  if (src) {
    if (Device* s = dev(src)) std::memcpy(from.gid, s->gids[1].gid, 16);
  } else if (rx_framing) {                         // from the network: the datagram's source address
    const wire::Framing& f = *rx_framing;
    uint8_t dip[16] = {};
    if (f.ipv6) { std::memcpy(from.gid, f.src_ip, 16); std::memcpy(dip, f.dst_ip, 16); }
    else {
      from.gid[10] = from.gid[11] = 0xff; std::memcpy(from.gid + 12, f.src_ip, 4);
      dip[10] = dip[11] = 0xff; std::memcpy(dip + 12, f.dst_ip, 4);
    }
    if (Device* dd = dev(dst)) { const int gi = gid_index_of(*dd, dip); from.sgid_index = gi < 0 ? 0 : uint32_t(gi); }
  }
  emit_mad(*this, dst, 0, m, uint8_t(CmMadDir::Received));
  if (m.hdr.attr_id == CM_ATTR_SIDR_REQ || m.hdr.attr_id == CM_ATTR_SIDR_REP) return on_sidr(*this, dst, from, m);
  on_mad(*this, dst, from, m);
}

}  // namespace vl
