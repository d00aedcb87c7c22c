// The GEMM every heavy reference kernel (MatMul, Gemm, Conv, ConvTranspose, ...) runs on.
//
// All matrices are row-major with explicit row strides:
//   C[m x n] = alpha * op(A) * op(B) + beta * C
// where op(A) is m x k (A is stored k x m when trans_a) and op(B) is k x n (B is stored n x k
// when trans_b). As in BLAS, beta == 0 means C is not read at all, so NaN or garbage in an
// uninitialised output does not leak into the result.
#pragma once

#include <cstdint>
#include <type_traits>

namespace collage {

// Fast single-precision GEMM: packed panels, cache blocking and a register-tiled micro-kernel
// GCC vectorises; parallel over blocks on omp_get_max_threads() threads when the problem is
// big enough to pay for the fork (inside an active parallel region it runs single-threaded).
void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Straightforward loops for the dtypes without a fast path (double, int32, int64, uint32,
// uint64; float works too and is what tests compare Sgemm against). Integer arithmetic wraps
// around on overflow, as numpy's does. Instantiated for those types in gemm_kernel.cc.
template <typename T>
void GemmSimple(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// Sgemm for float, GemmSimple for every other instantiated type: what templated kernels call.
template <typename T>
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    Sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    GemmSimple<T>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

}  // namespace collage
