// CRC-32 (reflected 0xEDB88320) with VPCLMULQDQ on 512-bit registers: four 128-bit folding lanes per register,
// four registers (256 bytes) per iteration. Same algebra as crc32_pclmul.cpp: a lane L:H moved forward by D bits
// is L*x^(D+64) + H*x^D mod P; the constants are bitrev32(x^(e-1) mod P) << 32.
#include "wire/crc32_impl.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define VL_HAVE_VPCLMUL_PATH 1
#endif

namespace vl::wire::detail {

#if VL_HAVE_VPCLMUL_PATH
namespace {

using clmul::k_for;

#define VL_TGT __attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1")))

VL_TGT inline __m512i fold_xor(__m512i x, __m512i k, __m512i data) {
  // (lo*kLo) ^ (hi*kHi) ^ data, per 128-bit lane
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), data, 0x96);
}
VL_TGT inline __m128i fold128_xor(__m128i x, __m128i k, __m128i data) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), data);
}
VL_TGT inline __m512i bcast(uint64_t lo, uint64_t hi) {
  return _mm512_set_epi64(int64_t(hi), int64_t(lo), int64_t(hi), int64_t(lo), int64_t(hi), int64_t(lo), int64_t(hi),
                          int64_t(lo));
}

}  // namespace

VL_TGT uint32_t crc32_update_vpclmul(uint32_t state, const uint8_t* p, size_t n) {
  if (n < 256) return crc32_update_pclmul(state, p, n);
  const __m512i k2048 = bcast(k_for(2048 + 64), k_for(2048));   // 4 registers ahead
  const __m512i k512 = bcast(k_for(512 + 64), k_for(512));      // 1 register ahead
  const __m128i k128 = _mm_set_epi64x(int64_t(k_for(128)), int64_t(k_for(128 + 64)));
  __m512i z0 = _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_castsi128_si512(_mm_cvtsi32_si128(int(state))));
  __m512i z1 = _mm512_loadu_si512(p + 64), z2 = _mm512_loadu_si512(p + 128), z3 = _mm512_loadu_si512(p + 192);
  p += 256;
  n -= 256;
  while (n >= 256) {
    z0 = fold_xor(z0, k2048, _mm512_loadu_si512(p));
    z1 = fold_xor(z1, k2048, _mm512_loadu_si512(p + 64));
    z2 = fold_xor(z2, k2048, _mm512_loadu_si512(p + 128));
    z3 = fold_xor(z3, k2048, _mm512_loadu_si512(p + 192));
    p += 256;
    n -= 256;
  }
  __m512i z = fold_xor(z0, k512, z1);
  z = fold_xor(z, k512, z2);
  z = fold_xor(z, k512, z3);
  while (n >= 64) {
    z = fold_xor(z, k512, _mm512_loadu_si512(p));
    p += 64;
    n -= 64;
  }
  // four 128-bit lanes -> one (through memory: GCC 12's lane-extract intrinsics trip -Wmaybe-uninitialized)
  alignas(64) uint8_t lanes[64];
  _mm512_store_si512(lanes, z);
  auto lane = [&](int i) { return _mm_load_si128(reinterpret_cast<const __m128i*>(lanes + 16 * i)); };
  __m128i x = fold128_xor(lane(0), k128, lane(1));
  x = fold128_xor(x, k128, lane(2));
  x = fold128_xor(x, k128, lane(3));
  while (n >= 16) {
    x = fold128_xor(x, k128, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    p += 16;
    n -= 16;
  }
  alignas(16) uint8_t rem[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(rem), x);
  return crc32_update_table(crc32_update_table(0, rem, 16), p, n);
}

bool crc32_vpclmul_supported() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul");
}

#else

uint32_t crc32_update_vpclmul(uint32_t state, const uint8_t* p, size_t n) { return crc32_update_pclmul(state, p, n); }
bool crc32_vpclmul_supported() { return false; }

#endif

}  // namespace vl::wire::detail
