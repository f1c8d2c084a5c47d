// Device events as the protocol's JSON text (app/protocol/messages.ts DeviceEvent), written directly from the
// C++ event so that the backend host can forward a flood of events without building a JS object per event
// (issue 4's event rate). Field for field the same value the object path (objects.cpp EventObj + the executor's
// eventOut) gives; app/host/eventjson.test.ts compares the two on real sessions.
// Plain C++: no Node types here; enum values are named from vl/names.h (app/protocol/tables.test.ts checks that
// app/protocol/enums.ts says the same).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vl/session.h"

namespace vl::json {

// The text of an AsyncEvent without one: its ibv_event_type name ("UNKNOWN(n)" for a value the table lacks).
std::string async_event_text(const Event& e);
// A packet's decoded headers as JSON, { len, opcode, opcodeName, ..., icrc } without "hex" (or { len, error }).
void append_packet_headers(std::string& out, const std::vector<uint8_t>& bytes);

const char* event_kind_name(EventKind k);
// Appends the events as JSON objects separated by commas (no brackets); a packet is decoded as
// { len, hex, opcode, opcodeName, ..., icrc } (or { len, hex, error }).
void append_events(std::string& out, const std::vector<Event>& evs);

}  // namespace vl::json
