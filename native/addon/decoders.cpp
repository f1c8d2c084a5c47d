// The payload decoder registry of the device (vl/decoders.h) for tests and tools:
//   decodePayloadNative(udp: Uint8Array, protocol?: string) -> { protocol, summary, fields: { name: value } } | null
// udp is one RoCEv2 UDP payload (BTH..ICRC); app/protocol/decoders-native.test.ts compares it with the TypeScript
// registry (app/protocol/decoders.ts) on the same packets.
#include "binding.h"
#include "conv.h"

#include "vl/decoders.h"

namespace vladdon {
namespace {

Napi::Value DecodePayloadNative(const Napi::CallbackInfo& info) {
  auto env = info.Env(); Conv c(env);
  auto udp = c.bytes(info[0], "udp");
  auto protocol = c.str(info[1], "protocol", "", true);
  if (c.thrown()) return env.Undefined();
  vl::decode::Input in;
  if (!vl::decode::payload_of_packet(udp.data(), udp.size(), in)) return env.Null();
  in.protocol = protocol;
  vl::decode::Decoded d;
  if (!vl::decode::decode_payload(in, d)) return env.Null();
  auto o = Napi::Object::New(env);
  o.Set("protocol", d.protocol);
  o.Set("summary", d.summary);
  auto f = Napi::Object::New(env);
  for (const auto& x : d.fields) f.Set(x.name, x.value);
  o.Set("fields", f);
  return o;
}

const ModuleFunction kFunctions[] = {
  {"decodePayloadNative", DecodePayloadNative},
};

}  // namespace
}  // namespace vladdon

VLADDON_REGISTER(vladdon::kNoMethods, vladdon::kFunctions);
