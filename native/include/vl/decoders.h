// Upper-layer payload decoders, registered once (the C++ side of the registry app/protocol/decoders.ts keeps for the
// console): RDMA carries NVMe/RDMA capsules, SMB Direct headers, a lab's own messages in its SEND payloads; each
// protocol registers one decoder here and the device's packet events name what a payload is (the event text of
// PacketSent). Same rules as the TypeScript registry: decoders are tried in registration order, the first that
// claims a payload wins, registering an id again replaces that decoder in place. app/protocol/decoders-native.test.ts
// checks that both languages decode the same capsules to the same summary and fields.
// No Node dependency.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vl::decode {

struct Input {
  uint8_t opcode = 0;                // BTH opcode of the packet
  uint32_t dest_qp = 0;              // BTH destination QP
  const uint8_t* payload = nullptr;  // the message payload: after the transport headers, without pad and ICRC
  size_t len = 0;
  std::string_view protocol;         // what the caller knows the connection carries ("nvme-rdma/io"), or empty
};

struct Field { std::string name, value; };   // dotted names for nested records ("sgl1.key"), values as shown

struct Decoded {
  std::string protocol;              // the id of the decoder that claimed the payload
  std::string summary;               // one line, Wireshark Info style
  std::vector<Field> fields;
  const std::string* get(std::string_view name) const {
    for (const auto& f : fields) if (f.name == name) return &f.value;
    return nullptr;
  }
};

struct Decoder {
  const char* id;
  const char* title;
  bool (*decode)(const Input& in, Decoded& out);   // true when claimed (out.summary / fields set)
};

// Registers (or replaces by id) a decoder; returns how many are registered.
size_t register_decoder(const Decoder& d);
// Removes the decoder with this id; false when there was none.
bool unregister_decoder(std::string_view id);
std::vector<Decoder> decoders();
// The first registered decoder that claims the payload fills `out`; false when none does (or the payload is empty).
bool decode_payload(const Input& in, Decoded& out);
// The payload of a RoCEv2 UDP payload (BTH..ICRC) as an Input, through the wire codec; false when malformed or empty.
bool payload_of_packet(const uint8_t* udp, size_t n, Input& out);

// Decoders this code base ships (registered by default, in this order).
bool decode_nvme_rdma(const Input& in, Decoded& out);   // decode_nvme.cpp

}  // namespace vl::decode
