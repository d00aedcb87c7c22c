#include "ops/kernels/sgemm_variants.h"

#include <iterator>

namespace collage {
namespace {

// The baseline copy is compiled with the same flags as this file, so these macros name it.
constexpr const char* BaselineIsaName() {
#if defined(__AVX512F__)
  return "avx512";
#elif defined(__AVX2__)
  return "avx2";
#elif defined(__AVX__)
  return "avx";
#elif defined(__SSE4_2__)
  return "sse4.2";
#elif defined(__x86_64__)
  return "sse2";
#elif defined(__ARM_FEATURE_SVE)
  return "sve";
#elif defined(__ARM_NEON)
  return "neon";
#else
  return "generic";
#endif
}

// COLLAGE_SGEMM_X86_VARIANTS is defined (for this file only) where the wide copies are built.
constexpr SgemmVariant kCompiledVariants[] = {
#if defined(COLLAGE_SGEMM_X86_VARIANTS)
    {SgemmIsa::kAvx512, "avx512", &sgemm_avx512::Sgemm},
    {SgemmIsa::kAvx2, "avx2", &sgemm_avx2::Sgemm},
#endif
    {SgemmIsa::kBaseline, BaselineIsaName(), &sgemm_baseline::Sgemm},
};

}  // namespace

std::span<const SgemmVariant> CompiledSgemmVariants() { return kCompiledVariants; }

bool CpuSupports(SgemmIsa isa) {
  switch (isa) {
    case SgemmIsa::kBaseline:
      return true;
#if defined(__x86_64__)
    // libgcc's feature bits also require the OS to save the wider registers (XCR0).
    case SgemmIsa::kAvx512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case SgemmIsa::kAvx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    default:
      return false;
  }
}

const SgemmVariant& ActiveSgemmVariant() {
  static const SgemmVariant& active = [] () -> const SgemmVariant& {
    for (const SgemmVariant& variant : kCompiledVariants) {
      if (CpuSupports(variant.isa)) return variant;
    }
    return kCompiledVariants[std::size(kCompiledVariants) - 1];
  }();
  return active;
}

}  // namespace collage
