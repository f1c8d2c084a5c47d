// CRC-32 (reflected 0xEDB88320) by carry-less multiplication folding, 4 x 128-bit lanes (1 lane below 64 bytes).
//
// Notation: a 16-byte block loaded little-endian is a reflected 128-bit polynomial, bit k <-> x^(127-k), relative
// to the block's end. Its low qword L is the high-degree half: block = L(x)*x^64 + H(x). Moving a block forward by
// D bits multiplies it by x^D, and mod P(x):  L*x^(D+64) + H*x^D.  A 64-bit reflected operand times a 65-bit
// reflected constant gives a 128-bit reflected product, so each constant is x*(x^(E-1) mod P) written as a 65-bit
// reflected value, which fits in 64 bits because the x factor empties the top bit: bitrev32(x^(E-1) mod P) << 32.
// The folded 128 bits are finally reduced by the table kernel (16 bytes, starting from state 0).
#include "wire/crc32_impl.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define VL_HAVE_PCLMUL_PATH 1
#endif

namespace vl::wire::detail {

#if VL_HAVE_PCLMUL_PATH
namespace {

using clmul::k_for;

// fold across D bits: low qword by x^(D+64), high qword by x^D
constexpr uint64_t kLo512 = k_for(512 + 64), kHi512 = k_for(512);
constexpr uint64_t kLo128 = k_for(128 + 64), kHi128 = k_for(128);

__attribute__((target("pclmul,sse2"))) inline __m128i fold(__m128i x, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}
__attribute__((target("pclmul,sse2"))) inline __m128i load(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

}  // namespace

__attribute__((target("pclmul,sse2"))) uint32_t crc32_update_pclmul(uint32_t state, const uint8_t* p, size_t n) {
  if (n < 16) return crc32_update_table(state, p, n);
  const __m128i k128 = _mm_set_epi64x(int64_t(kHi128), int64_t(kLo128));
  // the register XORs into the first four message bytes
  __m128i x = _mm_xor_si128(load(p), _mm_cvtsi32_si128(int(state)));
  p += 16;
  n -= 16;
  if (n >= 48) {
    const __m128i k512 = _mm_set_epi64x(int64_t(kHi512), int64_t(kLo512));
    __m128i x0 = x, x1 = load(p), x2 = load(p + 16), x3 = load(p + 32);
    p += 48;
    n -= 48;
    while (n >= 64) {
      x0 = _mm_xor_si128(fold(x0, k512), load(p));
      x1 = _mm_xor_si128(fold(x1, k512), load(p + 16));
      x2 = _mm_xor_si128(fold(x2, k512), load(p + 32));
      x3 = _mm_xor_si128(fold(x3, k512), load(p + 48));
      p += 64;
      n -= 64;
    }
    x = _mm_xor_si128(fold(x0, k128), x1);
    x = _mm_xor_si128(fold(x, k128), x2);
    x = _mm_xor_si128(fold(x, k128), x3);
  }
  while (n >= 16) {
    x = _mm_xor_si128(fold(x, k128), load(p));
    p += 16;
    n -= 16;
  }
  alignas(16) uint8_t rem[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(rem), x);
  uint32_t c = crc32_update_table(0, rem, 16);
  return crc32_update_table(c, p, n);
}

bool crc32_pclmul_supported() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse2");
}

#else

uint32_t crc32_update_pclmul(uint32_t state, const uint8_t* p, size_t n) { return crc32_update_table(state, p, n); }
bool crc32_pclmul_supported() { return false; }

#endif

}  // namespace vl::wire::detail
