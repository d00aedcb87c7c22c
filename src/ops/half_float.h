// IEEE float16 and bfloat16 values (stored as their 16 bits) to and from float. Kernels compute
// in float; these conversions are exact from 16 bits and round half to even into them, as the
// hardware conversions (F16C's vcvtps2ph, AVX-512 BF16's vcvtneps2bf16) do.
#pragma once

#include <cstdint>
#include <cstring>

namespace collage {

inline float BitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint32_t FloatToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return BitsToFloat(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return BitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in float.
  const float magnitude = static_cast<float>(mantissa) * BitsToFloat(0x33800000u);  // 2^-24
  return sign ? -magnitude : magnitude;
}

inline uint16_t FloatToHalf(float f) {
  const uint32_t bits = FloatToBits(f);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) {  // NaN stays NaN (quiet), keeping the top payload bits
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;  // rounds to 65520 or more: infinity
  if (magnitude < 0x38800000u) {
    // Below the smallest normal half (2^-14): a subnormal, in units of 2^-24. Adding 0.5 in
    // float lets the FPU round half to even at the right bit.
    const float scaled = BitsToFloat(magnitude) + 0.5f;
    return static_cast<uint16_t>(sign | (FloatToBits(scaled) - 0x3f000000u));
  }
  // Normal: rebias the exponent (127 → 15) and round the 13 dropped bits half to even.
  const uint32_t odd = (magnitude >> 13) & 1u;
  const uint32_t rounded = magnitude + 0xfffu + odd - (112u << 23);
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

inline float BFloat16ToFloat(uint16_t b) { return BitsToFloat(static_cast<uint32_t>(b) << 16); }

inline uint16_t FloatToBFloat16(float f) {
  const uint32_t bits = FloatToBits(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t odd = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7fffu + odd) >> 16);
}

}  // namespace collage
