// Device events as a binary, columnar frame (the layout is app/protocol/eventframe.ts, the one definition both
// sides follow): fixed-size fields as typed columns the console copies without parsing, variable parts (text,
// packet bytes with their decoded headers, the ibv_wc) in an extras area. The autorun flood crosses from the
// device to the console this way: no JSON and no JS object per event on the way.
// Plain C++: no Node types here.
#pragma once
#include <cstdint>
#include <vector>

#include "vl/session.h"

namespace vl::frame {

constexpr uint32_t kMagic = 0x31454c56;   // "VLE1" little-endian
constexpr uint32_t kHeaderBytes = 40;

// per-event flags
constexpr uint8_t kOk = 1, kText = 2, kPkt = 4, kWc = 8, kBig = 16, kObjKindText = 32, kDetail = 64;

// Appends one frame holding `evs` (any number, also none) to `out`; its size is a multiple of 8. produced_at_ms:
// when the device produced the frame's events (Unix epoch ms; the console's event-to-screen latency counts from
// it), 0 when not known (the console then counts from the frame's arrival).
void append_frame(std::vector<uint8_t>& out, const std::vector<Event>& evs, double produced_at_ms = 0);

}  // namespace vl::frame
