// The float GEMM's per-instruction-set builds and the choice between them at run time.
//
// A portable binary is compiled for the baseline instruction set of its architecture, yet
// Sgemm's register tile wants the widest vectors the CPU has. So sgemm_variant.cc is compiled
// once per x86-64 level (AVX-512, AVX2 + FMA, baseline SSE2; cmake/CollageSgemmVariants.cmake),
// each copy in its own namespace, and Sgemm calls the widest one this CPU supports, chosen
// once. Other architectures, and builds with COLLAGE_NATIVE_ARCH, compile the baseline copy
// only (built with the build's own flags).
#pragma once

#include <cstdint>
#include <span>

namespace collage {

// Below this many multiply-adds (about 10 us on one core) a parallel region saves too little
// for the fork/join it costs, and each fork risks waiting on a preempted thread.
inline constexpr double kGemmParallelMinMacs = 512.0 * 1024.0;

using SgemmFn = void (*)(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                         const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                         float* c, int64_t ldc);

enum class SgemmIsa {
  kAvx512,    // AVX-512 F + BW + DQ + VL, with AVX2 and FMA
  kAvx2,      // AVX2 + FMA
  kBaseline,  // what the whole build is compiled for: runs wherever the program does
};

struct SgemmVariant {
  SgemmIsa isa;
  // "avx512", "avx2"; the baseline's is named from the build's own flags ("sse2" for plain
  // x86-64, "neon", or "avx512" in a -march=native build on such a machine).
  const char* name;
  SgemmFn sgemm;
};

// Every variant this build compiled, widest first; the last is the baseline.
std::span<const SgemmVariant> CompiledSgemmVariants();

// Whether this CPU (and its operating system) runs the instructions `isa` stands for.
bool CpuSupports(SgemmIsa isa);

// The first compiled variant the CPU supports, chosen on the first call; Sgemm runs it.
const SgemmVariant& ActiveSgemmVariant();

// One declaration per variant namespace (each defined by one compilation of sgemm_variant.cc).
namespace sgemm_avx512 {
void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
}
namespace sgemm_avx2 {
void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
}
namespace sgemm_baseline {
void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
}

}  // namespace collage
