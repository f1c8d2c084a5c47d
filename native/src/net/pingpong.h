// ibv_rc_pingpong's out-of-band exchange over TCP (docs/wire.md 3.7): the 52-byte "LLLL:QQQQQQ:PPPPPP:GID" message
// (+ NUL) each way and the 5-byte "done", the server moving its QP to RTR/RTS before it answers.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "vl/types.h"

namespace vl::net {

constexpr uint16_t kPingpongTcpPort = 18515;
constexpr size_t kPingpongMsgLen = 52;         // sizeof "0000:000000:000000:00000000000000000000000000000000"

struct PpDest {
  uint32_t lid = 0, qpn = 0, psn = 0;
  uint8_t gid[16] = {};
};

// Exactly 52 bytes: lower-case zero-padded hex, GID as four big-endian 32-bit words (= the 16 bytes in order), NUL.
std::string pp_format(const PpDest& d);
// Strict parse of what a peer sent: 52 bytes, the NUL at the end, hex digits and ':' in their places, LID <= 0xffff,
// QPN and PSN 24 bits. Refuses anything else with a message naming the field.
Result<PpDest> pp_parse(const void* buf, size_t n);

// Server side: listen on every address (AI_PASSIVE, AF_UNSPEC, SO_REUSEADDR) on port, accept one connection, read
// the client's message, call connect(remote) (the QP goes to RTR/RTS there), send ours, wait for "done".
Result<PpDest> pp_server_exchange(uint16_t port, const PpDest& mine, const std::function<Status(const PpDest&)>& connect);
// Client side: connect to host:port, send ours, read the server's, send "done".
Result<PpDest> pp_client_exchange(const std::string& host, uint16_t port, const PpDest& mine);

}  // namespace vl::net
