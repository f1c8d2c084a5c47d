// Events and capture: drained as objects, as the protocol's JSON text or as binary frames, sampled for a console that
// cannot draw the flood, the device pcap, and decodePacket for pcaps read from disk.
#include <string>
#include <vector>

#include "binding.h"
#include "objects.h"
#include "event_frame.h"
#include "event_json.h"

namespace vladdon {
namespace {

Napi::Value DrainEvents(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto max = c.u64(info[0], "max", SIZE_MAX, true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  auto evs = s->drain_events(static_cast<size_t>(max));
  auto a = Napi::Array::New(env, evs.size());
  for (size_t i = 0; i < evs.size(); ++i) a.Set(static_cast<uint32_t>(i), EventObj(env, evs[i]));
  return a;
}
// { frame | json, count, first, objects } of drained events: the frame (or JSON text) of all of them, and the object
// life-cycle events also as objects (the host's object table and the scenario recorder follow them).
Napi::Object ChunkObj(Napi::Env env, const std::vector<vl::Event>& evs, bool frame, double produced_at_ms = 0) {
  auto o = Napi::Object::New(env);
  if (frame) {
    std::vector<uint8_t> bytes;
    vl::frame::append_frame(bytes, evs, produced_at_ms);
    o.Set("frame", Napi::Buffer<uint8_t>::Copy(env, bytes.data(), bytes.size()));
  } else {
    std::string text;
    vl::json::append_events(text, evs);
    o.Set("json", Napi::String::New(env, text));
  }
  auto objs = Napi::Array::New(env);
  uint32_t no = 0;
  for (const auto& e : evs)
    if (e.kind == vl::EventKind::ObjectCreated || e.kind == vl::EventKind::ObjectDestroyed || e.kind == vl::EventKind::ObjectModified)
      objs.Set(no++, EventObj(env, e));
  o.Set("count", Napi::Number::New(env, static_cast<double>(evs.size())));
  o.Set("first", U64(env, evs.empty() ? 0 : evs.front().seq));
  o.Set("objects", objs);
  return o;
}
// Up to `max` events for forwarding without a JS object per event, as the protocol's JSON text ("{...},{...}", no
// brackets; drain_events_json) or as one binary event frame (event_frame.h; drain_events_frame); object lifecycle
// events (created / destroyed / modified) also as objects, for the host's object table and the scenario recorder.
// { json | frame, count, first (seq of the first event), objects }.
Napi::Value DrainChunk(const Napi::CallbackInfo& info, SessionState& ss, bool frame) {
  auto env = info.Env(); Conv c(env);
  auto max = c.u64(info[0], "max", SIZE_MAX, true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ChunkObj(env, s->drain_events(static_cast<size_t>(max)), frame);
}
Napi::Value DrainEventsJson(const Napi::CallbackInfo& info, SessionState& ss) { return DrainChunk(info, ss, false); }
Napi::Value DrainEventsFrame(const Napi::CallbackInfo& info, SessionState& ss) { return DrainChunk(info, ss, true); }
// The free-running engine's flood, sampled for a console that cannot draw it all: every event queued is drained;
// the frame holds the object life-cycle and state events (vl::is_state_event: never sampled out, the host's
// object table and the console's key table and QP states follow them) and the newest `window` events; the others
// are counted in `dropped`. { frame, count, first, last, dropped, objects } (first / last: seq of the first / last
// event in the frame, which is not gap-free when dropped > 0).
Napi::Value DrainEventsSample(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto window = c.u64(info[0], "window");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  uint64_t sampled_out = 0;                    // removed at the source (Runner::set_event_budget) before these
  auto evs = s->drain_events(SIZE_MAX, &sampled_out);
  const size_t removed = vl::keep_state_and_newest(evs, static_cast<size_t>(window));
  // when the oldest of the newest `window` events was produced (the console's latency counts from it); with
  // window 0 only state events go and no time is given
  const size_t newest = std::min<size_t>(evs.size(), window);
  const double at = newest ? ss.runner->produced_at_ms(evs[evs.size() - newest].seq) : 0;
  auto o = ChunkObj(env, evs, true, at);
  o.Set("last", U64(env, evs.empty() ? 0 : evs.back().seq));
  o.Set("dropped", Napi::Number::New(env, static_cast<double>(removed + sampled_out)));
  return o;
}
// sample_events(keep): the queued events older than the newest `keep` are removed, except state events;
// returns how many (the caller reports them: not counted in drain_events_sample's `dropped`).
Napi::Value SampleEvents(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto keep = c.u64(info[0], "keep");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return U64(env, s->sample_events(static_cast<size_t>(keep), false));
}
Napi::Value LastSeq(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return U64(env, s->last_seq());
}
Napi::Value SetEventCapture(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto on = c.boolean(info[0], "on", true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  s->set_event_capture(on);
  return env.Undefined();
}
Napi::Value WritePcap(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto path = c.str(info[0], "path");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, s->write_pcap(path));
}

// Decode one RoCEv2 UDP payload (exposed for tests and for pcaps read from disk).
Napi::Value DecodePacket(const Napi::CallbackInfo& info) {
  auto env = info.Env(); Conv c(env);
  auto b = c.bytes(info[0], "bytes");
  if (c.thrown()) return env.Undefined();
  return PacketObj(env, b);
}

const SessionMethod kMethods[] = {
  {"drain_events", DrainEvents},
  {"drain_events_json", DrainEventsJson},
  {"drain_events_frame", DrainEventsFrame},
  {"drain_events_sample", DrainEventsSample},
  {"sample_events", SampleEvents},
  {"last_seq", LastSeq},
  {"set_event_capture", SetEventCapture},
  {"write_pcap", WritePcap},
};

const ModuleFunction kFunctions[] = {
  {"decodePacket", DecodePacket},
};

}  // namespace
}  // namespace vladdon

VLADDON_REGISTER(vladdon::kMethods, vladdon::kFunctions);
