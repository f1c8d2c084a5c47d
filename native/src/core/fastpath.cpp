// DataPath::Fast: the in-process wire without the work nothing reads (docs/perf.md).
//
// In Strict mode (net.cpp) every packet is encoded with its ICRC, queued as bytes, decoded and ICRC-checked by the
// receiving device, as on a real wire. Between two devices of one session that is three passes over each payload
// (copy + CRC into the packet, CRC again on receive, copy into the target MR) where a NIC's DMA does one. Fast mode
// keeps every check a NIC makes on the transport (PSN, opcode sequence, keys, lengths, resources: responder /
// completer run unchanged on the same header values) and drops only the ones that cannot fail here:
//   - the receiver does not decode the packet: it gets the header fields as wire::decode would return them
//     (as_decoded: only the fields the opcode carries, 24-bit fields masked, pad count from the length), so a
//     packet the codec would reject (unknown opcode, payload on a header-only opcode) is never sent this way;
//   - the receiver does not check the ICRC: the sender's codec computed it over the bytes it built (verified by
//     construction), and no fault can corrupt a packet (the fast path is off while any fault is configured);
//   - the bytes are built (with their ICRC, for the events and the pcap) only while events are captured;
//   - free running, inside a requester batch with nothing queued ahead of the packet, the payload is not copied
//     at all: the delivery reads the source MR (ref) and the responder copies it into the target MR, the one copy
//     a NIC's DMA makes. No verbs call, memory write or other delivery can come between that send and the
//     delivery; if the batch ends before the delivery ran, own_refs() copies the payload out first;
//   - free running, inside a requester batch with nothing queued, the packet does not even enter the FIFO: it is
//     handed off (SessionImpl::direct) and delivered as soon as the code that sent it returns, when the FIFO's
//     rule would deliver it next (deliver_direct); otherwise it is queued where the FIFO would have had it.
#include "core/impl.h"

namespace vl {
using namespace wire;

bool SessionImpl::fast_ok(const Packet& p) const {
  if (data_path != DataPath::Fast) return false;
  if (faults.loss > 0 || faults.duplicate > 0 || faults.reorder > 0 || faults.delay > 0) return false;
  const uint32_t m = opcode_mask(p.opcode);
  if (!m || p.tver != 0) return false;             // decode() rejects it: the strict path drops it and says why
  if (p.payload_len && !(m & H_PAYLOAD)) return false;
  if (p.dest_qp == 1) return false;                // MADs to QP1 are always encoded and ICRC-checked (CM, lab 4)
  return true;
}

// The header fields exactly as wire::decode returns them for the bytes wire::encode builds from p (codec.cpp):
// fields of headers the opcode does not carry are zero, 24-bit fields masked, the pad count computed. The ICRC
// value is not computed (nothing after the check reads it).
static void as_decoded(const Packet& s, Packet& p) {
  const uint32_t m = opcode_mask(s.opcode);
  p = s;                                           // one block copy, then what decode would not give back
  p.pad = pad_len(s.payload_len); p.tver = 0;
  p.dest_qp &= 0xFFFFFF; p.psn &= 0xFFFFFF;
  if (m & H_DETH) p.deth_src_qp &= 0xFFFFFF; else p.deth_qkey = p.deth_src_qp = 0;
  if (!(m & H_RETH)) { p.reth_va = 0; p.reth_rkey = 0; p.reth_dmalen = 0; }
  if (m & H_AETH) p.aeth_msn &= 0xFFFFFF; else p.aeth_syndrome = 0, p.aeth_msn = 0;
  if (!(m & H_ATOMICETH)) { p.atomic_va = 0; p.atomic_rkey = 0; p.atomic_swap_add = 0; p.atomic_compare = 0; }
  if (!(m & H_ATOMICACKETH)) p.atomic_ack_orig = 0;
  if (!(m & H_IMMDT)) p.immdt = 0;
  if (!(m & H_IETH)) p.ieth_rkey = 0;
  p.payload = nullptr; p.icrc = 0;                 // the caller points payload at the bytes
}

void SessionImpl::send_fast(Handle src, Handle dst, Packet& p, bool payload_in_memory) {
  if (direct.pending) queue_direct();              // sent before this one
  const bool next_in_batch = free_running && batching_qp && fifo.empty();   // would be the next delivery
  const bool ref_ok = payload_in_memory && next_in_batch && !process_memory;
  if (handoff && !capture && next_in_batch && (!p.payload_len || ref_ok)) {
    // the hand-off: this packet is the next delivery unless a timer is due first (see deliver_direct)
    direct.pending = true;
    direct.src = src; direct.dst = dst; direct.ip_id = ip_id++;
    direct.t = now + wire_latency_ns; direct.seq = action_seq++;   // the numbers push_fifo would have given it
    direct.ref = p.payload_len != 0;
    as_decoded(p, direct.h[direct.slot]);
    direct.h[direct.slot].payload = p.payload;
    packets_sent++;
    if (direct.ref) refs_sent++;
    return;
  }
  Action a;
  a.kind = Action::Deliver; a.src_dev = src; a.dst_dev = dst; a.ip_id = ip_id++;
  a.carried = true;
  Packet& h = carried.next_back();                 // written in place in the ring's slot
  as_decoded(p, h);
  carried.commit_back();
  packets_sent++;
  if (capture) {
    // the events and the pcap carry the packet's bytes: build them (with the ICRC) as the strict path does
    if (!pkt_pool.empty()) { a.pkt = std::move(pkt_pool.back()); pkt_pool.pop_back(); }
    encode(p, framing(src, dst, a.ip_id), a.pkt);
    a.built = true;
    if (p.payload_len) h.payload = a.pkt.data() + header_len(p.opcode);
    auto& e = emit(EventKind::PacketSent, src, 0, "packet", packet_sent_text(p));
    e.a = p.opcode; e.b = p.dest_qp; e.c = p.psn; e.d = dst;
    e.pkt = a.pkt;
    pcap.push_back({now, src, dst, a.ip_id, a.pkt});
    if (pcap.size() > (1u << 18)) pcap.pop_front();
  } else if (p.payload_len) {
    if (ref_ok) {
      a.ref = true;                                // delivered next in this batch (see the top of this file)
      h.payload = p.payload;
      refs_in_flight++;
      refs_sent++;
    } else {
      if (!pkt_pool.empty()) { a.pkt = std::move(pkt_pool.back()); pkt_pool.pop_back(); }
      a.pkt.assign(p.payload, p.payload + p.payload_len);
      h.payload = a.pkt.data();
    }
  }
  a.t = now + wire_latency_ns;                     // not before fifo.back().t (now never goes back): in order
  push_fifo(std::move(a));
}

// The hand-off's delivery, right after the code that sent the packet returned (exec's batch loop, deliver_pending):
// nothing entered the FIFO since it was sent (that would have queued it first), so the FIFO's rule decides as it
// would have for the queued packet: delivered now when no delivery is queued and no heap action (a timer, another
// QP's requester run, pushed before or after it) is due at or before its arrival, exactly as deliver_pending would
// pop and exec it; else queued in the FIFO, where (t, seq) order puts it after the earlier heap action. A delivery
// may send the next packet (an ACK, a READ response): loop until none is pending.
void SessionImpl::deliver_direct() {
  while (direct.pending) {
    if (!fifo.empty() || (!heap.empty() && heap.front().t <= direct.t)) { direct_queued++; queue_direct(); return; }
    direct.pending = false;
    delivery_clock(direct.t);                      // as exec() does for a delivery
    const Packet& h = direct.h[direct.slot];
    direct.slot ^= 1;                              // a packet this delivery hands off goes into the other slot
    direct_delivered++;
    if (dev(direct.dst)) dispatch(direct.src, direct.dst, nullptr, direct.ip_id, h, no_bytes);
  }
}

void SessionImpl::queue_direct() {
  direct.pending = false;
  Action a;
  a.kind = Action::Deliver; a.src_dev = direct.src; a.dst_dev = direct.dst; a.ip_id = direct.ip_id;
  a.carried = true; a.t = direct.t; a.seq = direct.seq;
  if (direct.ref) { a.ref = true; refs_in_flight++; }   // own_refs() copies it out if the batch step ends first
  carried.push_back(direct.h[direct.slot]);
  fifo.push_back(std::move(a));                    // its own seq (push_fifo would number it again)
  ring_doorbell();
}

void SessionImpl::deliver_carried(Action& a) {
  Packet h = carried.front();                      // this action's header: carried deliveries leave the FIFO in order
  carried.pop_front();
  if (a.ref) { a.ref = false; refs_in_flight--; }
  if (capture && !a.built) {
    // capture turned on while the packet was in flight: its events carry its bytes, as in strict mode
    std::vector<uint8_t> bytes;
    encode(h, framing(a.src_dev, a.dst_dev, a.ip_id), bytes);
    a.pkt = std::move(bytes);
    a.built = true;
    if (h.payload_len) h.payload = a.pkt.data() + header_len(h.opcode);
  }
  if (!dev(a.dst_dev)) {
    if (capture) {
      auto& e = emit(EventKind::PacketDropped, a.dst_dev, 0, "packet", "destination device gone");
      e.pkt = a.pkt;
    }
  } else {
    dispatch(a.src_dev, a.dst_dev, nullptr, a.ip_id, h, a.pkt);
  }
}

void SessionImpl::own_refs() {
  size_t k = 0;                                    // index in carried of the next carried action
  for (auto& a : fifo) {
    if (!a.carried) continue;
    Packet& h = carried[k++];
    if (!a.ref) continue;
    if (!pkt_pool.empty()) { a.pkt = std::move(pkt_pool.back()); pkt_pool.pop_back(); }
    a.pkt.assign(h.payload, h.payload + h.payload_len);
    h.payload = a.pkt.data();
    a.ref = false;
    refs_in_flight--;
    refs_owned++;
  }
}

// A payload read from the source MR (ref) may overlap the target it is copied to (a loopback WRITE within one
// buffer); strict mode copies from the packet, a snapshot taken when it was sent. Stage such a payload first so the
// bytes written are the same (memcpy over overlapping ranges is undefined anyway).
const uint8_t* SessionImpl::unaliased(const uint8_t* src, uint64_t len, const std::vector<Piece>& dst) {
  for (auto& pc : dst)
    if (pc.p < src + len && src < pc.p + pc.n) {
      stage.assign(src, src + len);
      return stage.data();
    }
  return src;
}

Status Session::set_data_path(DataPath p) {
  if (p != DataPath::Fast && p != DataPath::Strict) return fail(EINVAL, "data_path: must be Fast (0) or Strict (1)");
  auto lk = impl_->lock();
  impl_->data_path = p;
  return ok();
}

DataPath Session::data_path() const {
  auto lk = impl_->lock();
  return impl_->data_path;
}

}  // namespace vl
