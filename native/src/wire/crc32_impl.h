// Internal CRC-32 (IEEE 802.3 / zlib, reflected, polynomial 0xEDB88320) kernels.
// A "raw state" is the CRC register before the final inversion: start at 0xFFFFFFFF, finish with ~state.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vl::wire::detail {

// Slice-by-8 table kernel (portable; always available).
uint32_t crc32_update_table(uint32_t state, const uint8_t* p, size_t n);
// PCLMULQDQ folding kernel. Only call when crc32_pclmul_supported() is true.
uint32_t crc32_update_pclmul(uint32_t state, const uint8_t* p, size_t n);
bool crc32_pclmul_supported();
// VPCLMULQDQ + AVX-512 folding kernel (4 x 512 bits per step). Only call when crc32_vpclmul_supported().
uint32_t crc32_update_vpclmul(uint32_t state, const uint8_t* p, size_t n);
bool crc32_vpclmul_supported();
// VPCLMULQDQ on 256-bit registers (AVX2; 8 x 128-bit lanes). Only call when crc32_vpclmul256_supported().
uint32_t crc32_update_vpclmul256(uint32_t state, const uint8_t* p, size_t n);
// Fused: copies n bytes src -> dst (no overlap) and returns the updated state over those bytes.
uint32_t crc32_copy_update_vpclmul256(uint32_t state, uint8_t* dst, const uint8_t* src, size_t n);
bool crc32_vpclmul256_supported();
// One bit at a time, straight from the definition (tests only; slow).
uint32_t crc32_update_bitwise(uint32_t state, const uint8_t* p, size_t n);

// Folding constants of the carry-less multiplication kernels (the algebra is in crc32_pclmul.cpp).
namespace clmul {
constexpr uint64_t kPoly = 0x104C11DB7ull;  // normal (non-reflected) form with the x^32 term
constexpr uint32_t xpow_mod(unsigned n) {   // x^n mod P(x), normal form
  uint64_t r = 1;
  for (unsigned i = 0; i < n; i++) {
    r <<= 1;
    if (r & 0x100000000ull) r ^= kPoly;
  }
  return uint32_t(r);
}
constexpr uint32_t bitrev32(uint32_t v) {
  uint32_t r = 0;
  for (int i = 0; i < 32; i++) r |= ((v >> i) & 1u) << (31 - i);
  return r;
}
// constant that multiplies a reflected qword by x^e (mod P)
constexpr uint64_t k_for(unsigned e) { return uint64_t(bitrev32(xpow_mod(e - 1))) << 32; }
}  // namespace clmul

}  // namespace vl::wire::detail
