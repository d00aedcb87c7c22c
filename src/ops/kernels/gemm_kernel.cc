// Sgemm runs the copy of sgemm_variant.cc compiled for the widest instruction set this CPU
// has (sgemm_variants.h); GemmSimple is plain loops for the other dtypes.
#include "ops/kernels/gemm_kernel.h"

#include <omp.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "ops/kernels/sgemm_variants.h"

namespace collage {
namespace {

// The type integer GEMMs compute in: the unsigned counterpart, where overflow wraps
// (defined behaviour) exactly as two's complement hardware does for the signed type.
template <typename T, bool kIsInt = std::is_integral_v<T>>
struct WrapType {
  using type = T;
};
template <typename T>
struct WrapType<T, true> {
  using type = std::make_unsigned_t<T>;
};

}  // namespace

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  ActiveSgemmVariant().sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <typename T>
void GemmSimple(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  using U = typename WrapType<T>::type;
  if (m <= 0 || n <= 0) return;
  const double macs = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const bool parallel = !omp_in_parallel() && macs >= kGemmParallelMinMacs;
#pragma omp parallel if (parallel)
  {
    std::vector<U> acc(static_cast<size_t>(n));
#pragma omp for schedule(static)
    for (int64_t i = 0; i < m; ++i) {
      std::fill(acc.begin(), acc.end(), U{0});
      for (int64_t p = 0; p < k; ++p) {
        const U av = static_cast<U>(trans_a ? a[p * lda + i] : a[i * lda + p]);
        if (trans_b) {
          for (int64_t j = 0; j < n; ++j)
            acc[static_cast<size_t>(j)] += av * static_cast<U>(b[j * ldb + p]);
        } else {
          const T* row = b + p * ldb;
          for (int64_t j = 0; j < n; ++j)
            acc[static_cast<size_t>(j)] += av * static_cast<U>(row[j]);
        }
      }
      T* out = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) {
        U v = static_cast<U>(alpha) * acc[static_cast<size_t>(j)];
        if (beta != T{0}) v += static_cast<U>(beta) * static_cast<U>(out[j]);
        out[j] = static_cast<T>(v);
      }
    }
  }
}

#define COLLAGE_INSTANTIATE_GEMM_SIMPLE(T)                                                 \
  template void GemmSimple<T>(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, \
                              const T*, int64_t, T, T*, int64_t);
COLLAGE_INSTANTIATE_GEMM_SIMPLE(float)
COLLAGE_INSTANTIATE_GEMM_SIMPLE(double)
COLLAGE_INSTANTIATE_GEMM_SIMPLE(int32_t)
COLLAGE_INSTANTIATE_GEMM_SIMPLE(int64_t)
COLLAGE_INSTANTIATE_GEMM_SIMPLE(uint32_t)
COLLAGE_INSTANTIATE_GEMM_SIMPLE(uint64_t)
#undef COLLAGE_INSTANTIATE_GEMM_SIMPLE

}  // namespace collage
