// Sgemm (packed, blocked, threaded) and GemmSimple against a naive triple loop in double
// precision, over shapes that hit every edge: remainder rows and columns of the register tile,
// several K / N / M cache blocks, vectors (the GEMV paths), transposes, padded row strides,
// alpha / beta and thread counts.
#include "ops/kernels/gemm_kernel.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace collage {
namespace {

struct Problem {
  int64_t m, n, k;
  bool trans_a, trans_b;
  int64_t pad_a = 0, pad_b = 0, pad_c = 0;  // extra elements per row (row stride > width)
  float alpha = 1.0f, beta = 0.0f;
};

// Sets the OpenMP thread count for one scope.
class ScopedThreads {
 public:
  explicit ScopedThreads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~ScopedThreads() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

// Runs Sgemm on random data and checks every element of C, padding included (it must be left
// alone), against the naive product. Tolerance: 1e-4 relative to the sum of the magnitudes of
// the terms of the element (float32 rounding grows with k and with cancellation).
void CheckSgemm(const Problem& p, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "m=" << p.m << " n=" << p.n << " k=" << p.k
                                  << " trans_a=" << p.trans_a << " trans_b=" << p.trans_b
                                  << " alpha=" << p.alpha << " beta=" << p.beta);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const int64_t a_rows = p.trans_a ? p.k : p.m, a_cols = p.trans_a ? p.m : p.k;
  const int64_t b_rows = p.trans_b ? p.n : p.k, b_cols = p.trans_b ? p.k : p.n;
  const int64_t lda = a_cols + p.pad_a, ldb = b_cols + p.pad_b, ldc = p.n + p.pad_c;
  std::vector<float> a(static_cast<size_t>(a_rows * lda)), b(static_cast<size_t>(b_rows * ldb));
  std::vector<float> c(static_cast<size_t>(p.m * ldc));
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  for (float& v : c) v = p.beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : dist(rng);
  const std::vector<float> c0 = c;

  Sgemm(p.trans_a, p.trans_b, p.m, p.n, p.k, p.alpha, a.data(), lda, b.data(), ldb, p.beta,
        c.data(), ldc);

  int failures = 0;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = c[static_cast<size_t>(i * ldc + j)];
      const float old = c0[static_cast<size_t>(i * ldc + j)];
      if (j >= p.n) {  // row padding: untouched (NaN stays NaN)
        if (!(got == old || (std::isnan(got) && std::isnan(old)))) ++failures;
        continue;
      }
      double sum = 0.0, magnitude = 0.0;
      for (int64_t q = 0; q < p.k; ++q) {
        const double av =
            p.trans_a ? a[static_cast<size_t>(q * lda + i)] : a[static_cast<size_t>(i * lda + q)];
        const double bv =
            p.trans_b ? b[static_cast<size_t>(j * ldb + q)] : b[static_cast<size_t>(q * ldb + j)];
        sum += av * bv;
        magnitude += std::fabs(av * bv);
      }
      double want = p.alpha * sum;
      magnitude = std::fabs(p.alpha) * magnitude;
      if (p.beta != 0.0f) {
        want += p.beta * static_cast<double>(old);
        magnitude += std::fabs(p.beta * old);
      }
      if (!(std::fabs(got - want) <= 1e-4 * (magnitude + 1e-3))) {
        if (++failures <= 5) {
          ADD_FAILURE() << "C[" << i << "][" << j << "] = " << got << ", expected " << want;
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(GemmKernelTest, SgemmMatchesNaiveOnManyShapes) {
  const int64_t ms[] = {1, 2, 3, 4, 5, 11, 12, 13, 25, 64, 145};
  const int64_t ns[] = {1, 2, 15, 31, 32, 33, 49, 97};
  const int64_t ks[] = {1, 3, 16, 100, 257, 515};
  uint32_t seed = 1;
  for (int64_t m : ms) {
    for (int64_t n : ns) {
      for (int64_t k : ks) {
        // Cycle through the transposes and strides rather than taking the full product.
        const bool ta = (seed & 1) != 0, tb = (seed & 2) != 0;
        const int64_t pad = (seed % 5 == 0) ? 3 : 0;
        CheckSgemm({m, n, k, ta, tb, pad, pad, pad}, seed);
        ++seed;
      }
    }
  }
}

TEST(GemmKernelTest, SgemmAllTransposesAlphaBeta) {
  uint32_t seed = 100;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (float beta : {0.0f, 1.0f, -0.5f}) {
        CheckSgemm({37, 70, 45, ta, tb, 1, 2, 3, 1.5f, beta}, seed++);
        CheckSgemm({70, 37, 300, ta, tb, 0, 0, 0, -2.0f, beta}, seed++);
        CheckSgemm({1, 300, 129, ta, tb, 2, 1, 0, 0.5f, beta}, seed++);  // row vector
        CheckSgemm({300, 1, 129, ta, tb, 2, 1, 5, 0.5f, beta}, seed++);  // column vector
      }
    }
  }
}

TEST(GemmKernelTest, SgemmLargeBlocksAndThreads) {
  // n > the 4096-column block, k > the 256-deep block, m > the 4096-row packing block, and
  // narrow outputs that take the transposed route (n = 7, 49).
  for (int threads : {1, 2, 3}) {
    ScopedThreads scope(threads);
    CheckSgemm({20, 4200, 70, false, false}, 7);
    CheckSgemm({96, 130, 1100, true, false, 0, 0, 0, 1.0f, 1.0f}, 8);
    CheckSgemm({4100, 40, 9, false, true}, 9);
    CheckSgemm({512, 49, 600, false, false}, 10);
    CheckSgemm({200, 7, 64, true, true, 0, 0, 2}, 11);
    CheckSgemm({128, 128, 128, false, false, 0, 0, 0, 1.0f, 2.0f}, 12);
    CheckSgemm({5, 40, 3000, false, false}, 13);  // more threads than column panels
  }
}

TEST(GemmKernelTest, SgemmDegenerateShapes) {
  // k == 0: C = beta * C; beta == 0 clears even NaN.
  std::vector<float> c = {std::numeric_limits<float>::quiet_NaN(), 2.0f, 3.0f, 4.0f};
  Sgemm(false, false, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 0.0f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f}));
  c = {1.0f, 2.0f, 3.0f, 4.0f};
  Sgemm(false, false, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 0.5f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{0.5f, 1.0f, 1.5f, 2.0f}));
  // m == 0 or n == 0: nothing is touched.
  Sgemm(false, false, 0, 2, 3, 1.0f, nullptr, 3, nullptr, 2, 0.0f, c.data(), 2);
  Sgemm(false, false, 2, 0, 3, 1.0f, nullptr, 3, nullptr, 2, 0.0f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{0.5f, 1.0f, 1.5f, 2.0f}));
}

template <typename T>
void CheckGemmSimple(bool ta, bool tb, T alpha, T beta) {
  const int64_t m = 5, n = 7, k = 6;
  std::vector<T> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
  std::vector<T> c(static_cast<size_t>(m * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<T>(static_cast<int>(i % 5) - 2);
  for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<T>(i % 3);
  std::vector<T> want = c;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t q = 0; q < k; ++q) {
        sum += (ta ? a[q * m + i] : a[i * k + q]) * (tb ? b[j * k + q] : b[q * n + j]);
      }
      want[i * n + j] = alpha * sum + beta * c[i * n + j];
    }
  }
  GemmSimple<T>(ta, tb, m, n, k, alpha, a.data(), ta ? m : k, b.data(), tb ? k : n, beta, c.data(),
                n);
  EXPECT_EQ(c, want);
}

TEST(GemmKernelTest, GemmSimpleExactForIntegersAndDouble) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      CheckGemmSimple<int32_t>(ta, tb, 2, -1);
      CheckGemmSimple<int64_t>(ta, tb, 1, 0);
      CheckGemmSimple<double>(ta, tb, 0.5, 2.0);
    }
  }
}

TEST(GemmKernelTest, GemmSimpleIntegerOverflowWraps) {
  // 2^31 - 1 + 1 wraps to -2^31, as numpy's int32 matmul does.
  const int32_t a[2] = {std::numeric_limits<int32_t>::max(), 1};
  const int32_t b[2] = {1, 1};
  int32_t c = 0;
  GemmSimple<int32_t>(false, false, 1, 1, 2, 1, a, 2, b, 1, 0, &c, 1);
  EXPECT_EQ(c, std::numeric_limits<int32_t>::min());
}

TEST(GemmKernelTest, GemmDispatchesFloatToSgemm) {
  // Gemm<float> and Sgemm agree bit for bit (same code path).
  std::vector<float> a(40 * 30), b(30 * 50), c1(40 * 50), c2(40 * 50);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  Gemm<float>(false, false, 40, 50, 30, 1.0f, a.data(), 30, b.data(), 50, 0.0f, c1.data(), 50);
  Sgemm(false, false, 40, 50, 30, 1.0f, a.data(), 30, b.data(), 50, 0.0f, c2.data(), 50);
  EXPECT_EQ(c1, c2);
}

}  // namespace
}  // namespace collage
