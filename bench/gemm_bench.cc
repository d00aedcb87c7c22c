// GFLOP/s of the reference Sgemm (src/ops/kernels/gemm_kernel.h) on a few shapes, at the
// thread count OpenMP picks (set OMP_NUM_THREADS). Not a test: the machine's speed varies,
// so compare numbers taken side by side in one run.
//   OMP_NUM_THREADS=1 build/gemm_bench
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "ops/kernels/gemm_kernel.h"

namespace {

struct Case {
  const char* name;
  int64_t m, n, k;
  bool trans_a, trans_b;
};

struct Timing {
  double median_s;
  double best_s;
};

// Median and best over repetitions of one call's time, after a warm-up call. The best is the
// steadier number when other processes share the cores.
Timing TimeCall(const Case& c, const std::vector<float>& a, const std::vector<float>& b,
                std::vector<float>& out) {
  const int64_t lda = c.trans_a ? c.m : c.k;
  const int64_t ldb = c.trans_b ? c.k : c.n;
  auto call = [&] {
    collage::Sgemm(c.trans_a, c.trans_b, c.m, c.n, c.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f,
                   out.data(), c.n);
  };
  call();
  std::vector<double> times;
  double total = 0.0;
  while ((total < 0.5 || times.size() < 5) && times.size() < 2000) {
    auto t0 = std::chrono::steady_clock::now();
    call();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    times.push_back(s);
    total += s;
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.front()};
}

}  // namespace

int main() {
  const Case cases[] = {
      {"square 512^3", 512, 512, 512, false, false},
      {"square 512^3 A^T", 512, 512, 512, true, false},
      {"square 512^3 B^T", 512, 512, 512, false, true},
      {"square 1024^3", 1024, 1024, 1024, false, false},
      {"odd 509x517x301", 509, 517, 301, false, false},
      {"r50 conv1 7x7 64@112", 64, 12544, 147, false, false},
      {"r50 3x3 64@56", 64, 3136, 576, false, false},
      {"r50 1x1 64->256@56", 256, 3136, 64, false, false},
      {"r50 1x1 256->64@56", 64, 3136, 256, false, false},
      {"r50 3x3 128@28", 128, 784, 1152, false, false},
      {"r50 3x3 256@14", 256, 196, 2304, false, false},
      {"r50 1x1 256->1024@14", 1024, 196, 256, false, false},
      {"r50 3x3 512@7", 512, 49, 4608, false, false},
      {"r50 1x1 512->2048@7", 2048, 49, 512, false, false},
      {"r50 fc 1x1000x2048 B^T", 1, 1000, 2048, false, true},
      {"bert 128x3072x768", 128, 3072, 768, false, false},
      {"bert 128x768x3072", 128, 768, 3072, false, false},
      {"bert attn 128x128x64 B^T", 128, 128, 64, false, true},
  };
  std::printf("threads: %d\n", omp_get_max_threads());
  std::printf("%-28s %9s %9s %9s %10s %10s %10s\n", "shape", "M", "N", "K", "median ms", "GFLOP/s",
              "best GF/s");
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const Case& c : cases) {
    std::vector<float> a(static_cast<size_t>(c.m * c.k)), b(static_cast<size_t>(c.k * c.n));
    std::vector<float> out(static_cast<size_t>(c.m * c.n));
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
    Timing t = TimeCall(c, a, b, out);
    double gflop =
        2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k) / 1e9;
    std::printf("%-28s %9ld %9ld %9ld %10.3f %10.1f %10.1f\n", c.name, static_cast<long>(c.m),
                static_cast<long>(c.n), static_cast<long>(c.k), t.median_s * 1e3,
                gflop / t.median_s, gflop / t.best_s);
  }
  return 0;
}
