// Device events as the protocol's JSON text (app/protocol/messages.ts DeviceEvent), written directly from the
// C++ event so that the backend host can forward a flood of events without building a JS object per event
// (issue 4's event rate). Field for field the same value the object path (addon.cpp EventObj + the executor's
// eventOut) gives; app/host/eventjson.test.ts compares the two on real sessions.
// Plain C++: no Node types here; the names of rdma-core enum values come from the protocol's tables
// (app/protocol/enums.ts) through set_names(), so there is one source for them.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "vl/session.h"

namespace vl::json {

struct Names {
  std::unordered_map<uint32_t, std::string> wc_status, wc_opcode, event_type;
};
void set_names(Names n);
bool have_names();
const Names& names();
// A packet's decoded headers as JSON, { len, opcode, opcodeName, ..., icrc } without "hex" (or { len, error }).
void append_packet_headers(std::string& out, const std::vector<uint8_t>& bytes);

const char* event_kind_name(EventKind k);
// Appends the events as JSON objects separated by commas (no brackets); a packet is decoded as
// { len, hex, opcode, opcodeName, ..., icrc } (or { len, hex, error }).
void append_events(std::string& out, const std::vector<Event>& evs);

}  // namespace vl::json
