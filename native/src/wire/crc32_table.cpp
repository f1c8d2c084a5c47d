// CRC-32 slice-by-8 table kernel and the runtime dispatch between it and the carry-less multiplication kernels.
#include <array>
#include <cstring>

#include "vl/wire.h"
#include "wire/crc32_impl.h"

namespace vl::wire {
namespace detail {
namespace {

constexpr uint32_t kPolyReflected = 0xEDB88320u;

constexpr std::array<std::array<uint32_t, 256>, 8> make_tables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kPolyReflected : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int s = 1; s < 8; s++) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  return t;
}
constexpr auto kT = make_tables();

inline uint32_t load_le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

uint32_t crc32_update_table(uint32_t c, const uint8_t* p, size_t n) {
  while (n >= 8) {
    uint32_t a = load_le32(p) ^ c, b = load_le32(p + 4);
    c = kT[7][a & 0xFF] ^ kT[6][(a >> 8) & 0xFF] ^ kT[5][(a >> 16) & 0xFF] ^ kT[4][a >> 24] ^
        kT[3][b & 0xFF] ^ kT[2][(b >> 8) & 0xFF] ^ kT[1][(b >> 16) & 0xFF] ^ kT[0][b >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = kT[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
  return c;
}

uint32_t crc32_update_bitwise(uint32_t c, const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (kPolyReflected & (0u - (c & 1)));
  }
  return c;
}

}  // namespace detail

namespace {
using Kernel = uint32_t (*)(uint32_t, const uint8_t*, size_t);
struct Dispatch {
  Kernel fn;
  const char* name;
};
Dispatch pick() {
  if (detail::crc32_vpclmul_supported()) return {detail::crc32_update_vpclmul, "vpclmulqdq-avx512-fold16"};
  if (detail::crc32_vpclmul256_supported()) return {detail::crc32_update_vpclmul256, "vpclmulqdq-avx2-fold8"};
  if (detail::crc32_pclmul_supported()) return {detail::crc32_update_pclmul, "pclmulqdq-fold4"};
  return {detail::crc32_update_table, "slice-by-8"};
}
const Dispatch& dispatch() {
  static const Dispatch d = pick();
  return d;
}
}  // namespace

uint32_t crc32_update(uint32_t state, const void* data, size_t len) {
  if (len == 0) return state;
  return dispatch().fn(state, static_cast<const uint8_t*>(data), len);
}

uint32_t crc32(const void* data, size_t len, uint32_t crc) {
  return ~crc32_update(~crc, data, len);
}

const char* crc32_impl_name() { return dispatch().name; }

uint32_t crc32_copy_update(uint32_t state, void* dst, const void* src, size_t len) {
  if (len == 0) return state;
  static const bool fused = detail::crc32_vpclmul256_supported();
  if (fused) return detail::crc32_copy_update_vpclmul256(state, static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), len);
  std::memcpy(dst, src, len);
  return crc32_update(state, dst, len);
}

}  // namespace vl::wire
