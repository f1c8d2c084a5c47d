// libFuzzer target: the capture reader and the frame parsers behind it (Wire panel imports, the kernel-capture
// tests): read_pcap over any bytes, then parse_frame, icrc_from_ip and decode over every record it accepts, as
// WireFixture does with the kernel rxe capture. Invariants: no crash, leak or hang; read_pcap either refuses with
// a reason or returns records within its stated limits (256 KiB each); a decoded packet's payload lies inside
// its record.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "vl/wire.h"

using namespace vl::wire;

namespace {
const std::string path = "/dev/shm/vl_fuzz_pcap_" + std::to_string(getpid()) + ".pcap";
struct RemoveAtExit { ~RemoveAtExit() { unlink(path.c_str()); } } remove_at_exit;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  std::vector<PcapRecord> recs;
  std::string err;
  const bool ok = read_pcap(path, recs, &err);
  if (!ok && err.empty()) { std::fprintf(stderr, "read_pcap refused without a reason\n"); std::abort(); }
  for (const auto& r : recs) {
    if (r.data.size() > 256 * 1024) { std::fprintf(stderr, "record of %zu bytes\n", r.data.size()); std::abort(); }
    Framing fr;
    const uint8_t* up = nullptr;
    size_t ul = 0, ipoff = 0;
    if (!parse_frame(r.data.data(), r.data.size(), fr, &up, &ul, &err, &ipoff)) continue;
    if (up < r.data.data() || up + ul > r.data.data() + r.data.size()) { std::fprintf(stderr, "UDP payload outside its frame\n"); std::abort(); }
    (void)icrc_from_ip(r.data.data() + ipoff, r.data.size() - ipoff, &err);
    Packet p;
    if (decode(up, ul, p, &err) && p.payload_len &&
        (p.payload < up || p.payload + p.payload_len > up + ul)) { std::fprintf(stderr, "payload outside its datagram\n"); std::abort(); }
    if (icrc_ok(fr, up, ul)) (void)icrc(fr, up, ul);
  }
  return 0;
}
