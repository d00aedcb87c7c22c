#include "bfloat16_values.h"

#include <immintrin.h>

#include <cstring>

namespace collage::mkl {
namespace {

// Round to nearest even by adding half an ulp of bfloat16 (plus the kept bit's parity) to the
// float's bits; a NaN gets its quiet bit set so that truncating its mantissa keeps it NaN.
uint16_t RoundToBfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// 16 values per instruction (VCVTNEPS2BF16: nearest even, NaN quieted).
__attribute__((target("avx512f,avx512bf16"))) void ConvertAvx512Bf16(const float* src,
                                                                      size_t count,
                                                                      uint16_t* dst) {
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m256bh converted = _mm512_cvtneps_pbh(_mm512_loadu_ps(src + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        reinterpret_cast<const __m256i&>(converted));
  }
  for (; i < count; ++i) dst[i] = RoundToBfloat16(src[i]);
}

}  // namespace

bool ComputesBfloat16() {
  static const bool native = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
  }();
  return native;
}

void ConvertToBfloat16(const float* src, size_t count, uint16_t* dst) {
  if (ComputesBfloat16()) {
    ConvertAvx512Bf16(src, count, dst);
    return;
  }
  for (size_t i = 0; i < count; ++i) dst[i] = RoundToBfloat16(src[i]);
}

}  // namespace collage::mkl
