// float32 → bfloat16 for MKL's bf16 products (cblas_gemm_bf16bf16f32), and whether this CPU
// computes bfloat16 natively. MKL runs bf16 GEMMs on any x86 CPU, emulating them where the CPU
// has no bf16 instructions, slower than its float32 ones; the backend offers bf16 only where
// they are native (AVX-512 BF16, which every CPU with AMX has too).
#pragma once

#include <cstddef>
#include <cstdint>

namespace collage::mkl {

// AVX-512 BF16 on this CPU (and enabled by the OS).
bool ComputesBfloat16();

// dst[i] = src[i] rounded to the nearest bfloat16, ties to even; NaN stays NaN. Denormal
// inputs may become zero (as the CPU's conversion instruction makes them), well within
// bfloat16's own rounding of the products.
void ConvertToBfloat16(const float* src, size_t count, uint16_t* dst);

}  // namespace collage::mkl
