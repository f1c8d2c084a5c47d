// The payload decoder registry (vl/decoders.h).
#include "vl/decoders.h"

#include <mutex>

#include "vl/wire.h"

namespace vl::decode {

namespace {
struct Registry {
  std::mutex mu;                     // sessions on several threads share the registry
  std::vector<Decoder> list{{"nvme-rdma", "NVMe over RDMA capsules (NVMe-oF RDMA transport: 64-byte SQE command capsules, 16-byte CQE responses)", decode_nvme_rdma}};
};
Registry& reg() {
  static Registry r;
  return r;
}
}  // namespace

size_t register_decoder(const Decoder& d) {
  auto& r = reg();
  std::lock_guard<std::mutex> lk(r.mu);
  for (auto& x : r.list)
    if (std::string_view(x.id) == d.id) { x = d; return r.list.size(); }
  r.list.push_back(d);
  return r.list.size();
}

bool unregister_decoder(std::string_view id) {
  auto& r = reg();
  std::lock_guard<std::mutex> lk(r.mu);
  for (size_t i = 0; i < r.list.size(); i++)
    if (r.list[i].id == id) { r.list.erase(r.list.begin() + static_cast<std::ptrdiff_t>(i)); return true; }
  return false;
}

std::vector<Decoder> decoders() {
  auto& r = reg();
  std::lock_guard<std::mutex> lk(r.mu);
  return r.list;
}

bool decode_payload(const Input& in, Decoded& out) {
  if (!in.payload || in.len == 0) return false;
  auto& r = reg();
  std::lock_guard<std::mutex> lk(r.mu);           // decoders are pure functions of the payload: held briefly
  for (const auto& d : r.list) {
    Decoded o;
    if (d.decode(in, o)) { o.protocol = d.id; out = std::move(o); return true; }
  }
  return false;
}

bool payload_of_packet(const uint8_t* udp, size_t n, Input& out) {
  wire::Packet p;
  if (!wire::decode(udp, n, p, nullptr) || !p.payload || p.payload_len == 0) return false;
  out.opcode = p.opcode; out.dest_qp = p.dest_qp; out.payload = p.payload; out.len = p.payload_len;
  return true;
}

}  // namespace vl::decode
