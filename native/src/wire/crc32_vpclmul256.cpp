// CRC-32 (reflected 0xEDB88320) with VPCLMULQDQ on 256-bit registers (AVX2, no AVX-512 needed: e.g. AMD Zen 3):
// two 128-bit folding lanes per register, four registers (128 bytes) per iteration, so eight independent carry-less
// multiply chains hide the multiplier latency. Same algebra as crc32_pclmul.cpp: a lane L:H moved forward by D bits
// is L*x^(D+64) + H*x^D mod P; the constants are bitrev32(x^(e-1) mod P) << 32.
//
// crc32_copy_update_vpclmul256 is the fused form: it copies src to dst and folds the same 32-byte loads into the
// CRC, so a packet payload is read once while it is built (sender) instead of once for the copy and once for the CRC.
#include <cstring>

#include "wire/crc32_impl.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define VL_HAVE_VPCLMUL256_PATH 1
#endif

namespace vl::wire::detail {

#if VL_HAVE_VPCLMUL256_PATH
namespace {

using clmul::k_for;

#define VL_TGT256 __attribute__((target("avx2,vpclmulqdq,pclmul,sse4.1")))

VL_TGT256 inline __m256i fold_xor(__m256i x, __m256i k, __m256i data) {
  return _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00), _mm256_clmulepi64_epi128(x, k, 0x11)), data);
}
VL_TGT256 inline __m128i fold128_xor(__m128i x, __m128i k, __m128i data) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), data);
}
VL_TGT256 inline __m256i bcast(uint64_t lo, uint64_t hi) {
  return _mm256_set_epi64x(int64_t(hi), int64_t(lo), int64_t(hi), int64_t(lo));
}
VL_TGT256 inline __m256i ld(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
VL_TGT256 inline void st(uint8_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }

// Copy is a compile-time switch so the plain and fused kernels share one body.
template <bool Copy>
VL_TGT256 inline uint32_t kernel(uint32_t state, uint8_t* dst, const uint8_t* p, size_t n) {
  const __m256i k1024 = bcast(k_for(1024 + 64), k_for(1024));   // 4 registers ahead
  const __m256i k256 = bcast(k_for(256 + 64), k_for(256));      // 1 register ahead
  const __m128i k128 = _mm_set_epi64x(int64_t(k_for(128)), int64_t(k_for(128 + 64)));
  __m256i d0 = ld(p), d1 = ld(p + 32), d2 = ld(p + 64), d3 = ld(p + 96);
  if constexpr (Copy) { st(dst, d0); st(dst + 32, d1); st(dst + 64, d2); st(dst + 96, d3); dst += 128; }
  __m256i y0 = _mm256_xor_si256(d0, _mm256_set_epi32(0, 0, 0, 0, 0, 0, 0, int(state)));
  __m256i y1 = d1, y2 = d2, y3 = d3;
  p += 128;
  n -= 128;
  while (n >= 128) {
    d0 = ld(p); d1 = ld(p + 32); d2 = ld(p + 64); d3 = ld(p + 96);
    if constexpr (Copy) { st(dst, d0); st(dst + 32, d1); st(dst + 64, d2); st(dst + 96, d3); dst += 128; }
    y0 = fold_xor(y0, k1024, d0);
    y1 = fold_xor(y1, k1024, d1);
    y2 = fold_xor(y2, k1024, d2);
    y3 = fold_xor(y3, k1024, d3);
    p += 128;
    n -= 128;
  }
  __m256i y = fold_xor(y0, k256, y1);
  y = fold_xor(y, k256, y2);
  y = fold_xor(y, k256, y3);
  while (n >= 32) {
    d0 = ld(p);
    if constexpr (Copy) { st(dst, d0); dst += 32; }
    y = fold_xor(y, k256, d0);
    p += 32;
    n -= 32;
  }
  alignas(32) uint8_t lanes[32];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), y);
  __m128i x = fold128_xor(_mm_load_si128(reinterpret_cast<const __m128i*>(lanes)), k128,
                          _mm_load_si128(reinterpret_cast<const __m128i*>(lanes + 16)));
  if (n >= 16) {
    __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (Copy) { _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), d); dst += 16; }
    x = fold128_xor(x, k128, d);
    p += 16;
    n -= 16;
  }
  alignas(16) uint8_t rem[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(rem), x);
  if constexpr (Copy) { if (n) std::memcpy(dst, p, n); }
  return crc32_update_table(crc32_update_table(0, rem, 16), p, n);
}

}  // namespace

VL_TGT256 uint32_t crc32_update_vpclmul256(uint32_t state, const uint8_t* p, size_t n) {
  if (n < 128) return crc32_update_pclmul(state, p, n);
  return kernel<false>(state, nullptr, p, n);
}

VL_TGT256 uint32_t crc32_copy_update_vpclmul256(uint32_t state, uint8_t* dst, const uint8_t* src, size_t n) {
  if (n < 128) {
    std::memcpy(dst, src, n);
    return crc32_update_pclmul(state, src, n);
  }
  return kernel<true>(state, dst, src, n);
}

bool crc32_vpclmul256_supported() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul");
}

#else

uint32_t crc32_update_vpclmul256(uint32_t state, const uint8_t* p, size_t n) { return crc32_update_pclmul(state, p, n); }
uint32_t crc32_copy_update_vpclmul256(uint32_t state, uint8_t* dst, const uint8_t* src, size_t n) {
  std::memcpy(dst, src, n);
  return crc32_update_pclmul(state, src, n);
}
bool crc32_vpclmul256_supported() { return false; }

#endif

}  // namespace vl::wire::detail
