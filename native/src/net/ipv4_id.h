// The IPv4 ID a received RoCEv2 datagram had (internal to native/src/net). recvmsg does not give the IP header, and
// the ICRC covers the ID: Linux writes 0 for a DF datagram from an unconnected socket (ip_select_ident_segs), its GSO
// segmentation (inet_gso_segment) writes ID + index into each segment, kernel rxe increments the ID per packet.
#pragma once
#include <cstddef>
#include <cstdint>

#include "vl/wire.h"

namespace vl::net {

// The IPv4 IDs our own sender writes: 0 for a single DF datagram, 0 + k for segment k of a UDP GSO send of at most
// this many segments (udp.cpp kGsoMaxSegs, Linux's older UDP_MAX_SEGMENTS).
constexpr uint16_t kGsoIdWindow = 64;

// Which IPv4 IDs a received datagram may carry (UdpOptions::any_ipv4_id):
//  - Framing (default): the IDs a sender that frames as ours does can produce: ID 0; the previous datagram's ID + 1
//    in the same receive buffer (consecutive segments of one GSO send); the datagram's position in the buffer (a GSO
//    send delivered whole); else an ID below kGsoIdWindow (a segment received on its own, or first in a GRO buffer
//    that began inside a send). At most 64 candidates: about 6 of the ICRC's 32 bits are spent on the unknown ID.
//  - Any: a peer whose IP stack chooses the ID (kernel rxe: ip_select_ident, a counter per destination): the one ID
//    that fits, found by the CRC's linearity (16 unknowns, 32 equations). That spends 16 of the 32 bits: a random
//    ICRC passes with probability about 2^-16, which is why it is not the default.
// Sets f.ip_id to the ID that fits and returns the ICRC for it (the packet's own ICRC); with no fit, returns c0 and
// leaves f.ip_id 0. c0: the ICRC of these bytes under f with ID 0. prev: in, the ID of the datagram before this one
// in the same receive buffer (-1: none); out, this datagram's ID (-1: none fits). No candidate costs another pass over
// the bytes: each ID bit's effect on the CRC is cached per packet length.
uint32_t ipv4_icrc_check(wire::Framing& f, const uint8_t* p, size_t n, uint16_t pos, int& prev, bool any, uint32_t c0);

}  // namespace vl::net
