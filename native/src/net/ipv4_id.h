// The IPv4 ID a received RoCEv2 datagram had (internal to native/src/net). recvmsg does not give the IP header, and
// the ICRC covers the ID: Linux writes 0 for a DF datagram from an unconnected socket (ip_select_ident_segs), its GSO
// segmentation (inet_gso_segment) writes ID + index into each segment, kernel rxe increments the ID per packet.
#pragma once
#include <cstddef>
#include <cstdint>

#include "vl/wire.h"

namespace vl::net {

// The ICRC check of one received IPv4 datagram: ID 0, else hint (the datagram's index in a UDP GRO buffer), else any
// ID (the CRC is linear in the ID: 16 unknowns, 32 equations, the effect of each ID bit cached per packet length, so
// no candidate costs another pass over the bytes). Sets f.ip_id to the ID that fits and returns the ICRC for that ID;
// with no fit, returns c0 (!= the packet's ICRC). c0: the ICRC of these bytes under f with ID 0.
uint32_t ipv4_icrc_any_id(wire::Framing& f, const uint8_t* p, size_t n, uint16_t hint, uint32_t c0);

}  // namespace vl::net
