// The wire between devices: every packet is encoded with the RoCEv2 codec (BTH..ICRC over synthetic IPv4/UDP
// framing taken from the devices' GIDs), subject to seeded faults, and decoded + ICRC-checked by the receiver.
#include <cerrno>

#include "core/impl.h"
#include "vl/decoders.h"

namespace vl {

wire::Framing SessionImpl::framing(Handle src, Handle dst, uint16_t ip_id) {
  wire::Framing f;
  Device* s = dev(src);
  Device* d = dev(dst);
  if (s) std::memcpy(f.src_ip, s->gids[1].gid + 12, 4);
  if (d) std::memcpy(f.dst_ip, d->gids[1].gid + 12, 4);
  f.ip_id = ip_id;
  return f;
}

void SessionImpl::send_packet(Qp& q, wire::Packet& p, Handle dst_dev, bool payload_in_memory) {
  if (Device* d = dev(q.dev); d && d->port) return d->port->transmit(q, p, payload_in_memory);   // on a real network (native/src/net)
  send_packet_raw(q.dev, dst_dev, p, payload_in_memory);
}

// The event text names an upper-layer payload a registered decoder claims (vl/decoders.h: "RC Send Only: NVMe Write
// CID 4 NSID 1 SLBA 0 NLB 8"); the event's typed fields stay the packet's own.
std::string SessionImpl::packet_sent_text(const wire::Packet& p) {
  decode::Input din; din.opcode = p.opcode; din.dest_qp = p.dest_qp; din.payload = p.payload; din.len = p.payload_len;
  decode::Decoded dec;
  if (!decode::decode_payload(din, dec)) return wire::opcode_name(p.opcode);
  return std::string(wire::opcode_name(p.opcode)) + ": " + dec.summary;
}

void SessionImpl::send_packet_raw(Handle src, Handle dst, wire::Packet& p, bool payload_in_memory) {
  if (fast_ok(p)) return send_fast(src, dst, p, payload_in_memory);   // DataPath::Fast (fastpath.cpp)
  Action a;
  if (!pkt_pool.empty()) { a.pkt = std::move(pkt_pool.back()); pkt_pool.pop_back(); }
  a.kind = Action::Deliver; a.src_dev = src; a.dst_dev = dst; a.ip_id = ip_id++;
  packets_sent++;
  wire::Framing f = framing(src, dst, a.ip_id);
  wire::encode(p, f, a.pkt);
  if (capture) {
    auto& e = emit(EventKind::PacketSent, src, 0, "packet", packet_sent_text(p));
    e.a = p.opcode; e.b = p.dest_qp; e.c = p.psn; e.d = dst;
    e.pkt = a.pkt;
    pcap.push_back({now, src, dst, a.ip_id, a.pkt});
    if (pcap.size() > (1u << 18)) pcap.pop_front();
  }
  uint64_t t = now + wire_latency_ns;
  bool dup = false;
  if (faults.loss > 0 || faults.duplicate > 0 || faults.reorder > 0 || faults.delay > 0) {
    std::uniform_real_distribution<double> u(0, 1);
    double r_loss = u(fault_rng), r_dup = u(fault_rng), r_reo = u(fault_rng), r_del = u(fault_rng);
    if (r_loss < faults.loss) {
      if (capture) {
        auto& e = emit(EventKind::Fault, src, 0, "packet", std::string("loss: ") + wire::opcode_name(p.opcode) + " PSN " + std::to_string(p.psn));
        e.a = uint64_t(FaultKind::Loss); e.b = p.dest_qp; e.c = p.psn; e.d = dst;
      }
      return;
    }
    if (r_reo < faults.reorder) {
      t += 3 * wire_latency_ns + (fault_rng() % 4) * wire_latency_ns;
      if (capture) { auto& e = emit(EventKind::Fault, src, 0, "packet", "reorder: PSN " + std::to_string(p.psn)); e.a = uint64_t(FaultKind::Reorder); e.b = p.dest_qp; e.c = p.psn; e.d = dst; }
    }
    if (r_del < faults.delay) {
      t += faults.delay_ns;
      if (capture) { auto& e = emit(EventKind::Fault, src, 0, "packet", "delay: PSN " + std::to_string(p.psn)); e.a = uint64_t(FaultKind::Delay); e.b = p.dest_qp; e.c = p.psn; e.d = dst; }
    }
    if (r_dup < faults.duplicate) {
      dup = true;
      if (capture) { auto& e = emit(EventKind::Fault, src, 0, "packet", "duplicate: PSN " + std::to_string(p.psn)); e.a = uint64_t(FaultKind::Duplicate); e.b = p.dest_qp; e.c = p.psn; e.d = dst; }
    }
  }
  a.t = t;
  if (dup) { Action b = a; b.t = t + wire_latency_ns / 2; push(std::move(b)); }
  push_delivery(std::move(a));
}

void SessionImpl::deliver(Handle src, Handle dst, uint16_t ipid, std::vector<uint8_t>& bytes) {
  deliver_framed(src, dst, framing(src, dst, ipid), ipid, bytes);
}

void SessionImpl::deliver_framed(Handle src, Handle dst, const wire::Framing& f, uint16_t ipid, std::vector<uint8_t>& bytes,
                                 const uint32_t* icrc) {
  auto drop = [&](const std::string& why) {
    if (!capture) return;
    auto& e = emit(EventKind::PacketDropped, dst, 0, "packet", why);
    e.pkt = bytes;
  };
  if (!dev(dst)) return drop("destination device gone");
  std::string err;
  wire::Packet& p = rx;
  p = wire::Packet{};
  if (!wire::decode(bytes.data(), bytes.size(), p, &err)) return drop("malformed: " + err);
  const uint32_t crc = icrc ? *icrc : wire::icrc(f, bytes.data(), bytes.size());
  if (crc != p.icrc) return drop("bad ICRC " + hex(p.icrc, 8) + " != " + hex(crc, 8));
  dispatch(src, dst, &f, ipid, p, bytes);
}

void SessionImpl::dispatch(Handle src, Handle dst, const wire::Framing* f, uint16_t ipid, const wire::Packet& p, const std::vector<uint8_t>& bytes) {
  if (p.dest_qp == 1) if (Device* d = dev(dst); d && d->cm_qp1) {   // a MAD for the device's CM (native/src/cm)
    rx_framing = f;
    cm_receive(src, dst, p, bytes);
    rx_framing = nullptr;
    return;
  }
  Qp* q = qp_by_qpn(dst, p.dest_qp);
  if (!q) {
    if (!capture) return;
    auto& e = emit(EventKind::PacketDropped, dst, 0, "packet", "no QP " + hex(p.dest_qp) + " on the destination device");
    e.pkt = bytes;
    return;
  }
  if (capture) {
    auto& e = emit(EventKind::PacketReceived, dst, q->h, "qp", wire::opcode_name(p.opcode));
    e.a = p.opcode; e.b = p.dest_qp; e.c = p.psn; e.d = src;
    e.pkt = bytes;
  }
  uint32_t m = wire::opcode_mask(p.opcode);
  rx_framing = f;
  if (m & wire::H_REQ) {
    if (q->init.qp_type == QPT_UD) ud_receive(*q, p, src, ipid);
    else responder(*q, p, src);
  } else {
    completer(*q, p);
  }
  rx_framing = nullptr;
}

Status Session::write_pcap(const std::string& path) const {
  auto lk_ = impl_->lock();
  auto& S = *impl_;
  wire::PcapWriter w;
  std::string err;
  if (!w.open(path, &err)) return fail(EIO, "path: " + err);
  std::vector<uint8_t> fr;
  for (auto& r : S.pcap) {
    wire::Framing f = S.framing(r.src, r.dst, r.ip_id);
    const Device* s = S.dev(r.src);
    const Device* d = S.dev(r.dst);
    wire::frame(f, r.pkt.data(), r.pkt.size(), fr, s ? s->mac : nullptr, d ? d->mac : nullptr);
    w.write(r.t, fr.data(), fr.size());
  }
  w.close();
  return ok();
}

}  // namespace vl
