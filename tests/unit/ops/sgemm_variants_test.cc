// The float GEMM's per-instruction-set copies: each one this CPU runs gives the baseline
// copy's results, and Sgemm runs the widest one the CPU supports. (gemm_kernel_test checks
// Sgemm itself against a naive product on many more shapes.)
#include "ops/kernels/sgemm_variants.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ops/kernels/gemm_kernel.h"

namespace collage {
namespace {

struct Shape {
  int64_t m, n, k;
  bool trans_a, trans_b;
  float beta;
};

struct Product {
  std::vector<float> a, b, c;
  int64_t lda, ldb;
};

Product RandomProduct(const Shape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Product p;
  p.lda = s.trans_a ? s.m : s.k;
  p.ldb = s.trans_b ? s.k : s.n;
  p.a.resize(static_cast<size_t>(s.m * s.k));
  p.b.resize(static_cast<size_t>(s.k * s.n));
  p.c.resize(static_cast<size_t>(s.m * s.n));
  for (float& v : p.a) v = dist(rng);
  for (float& v : p.b) v = dist(rng);
  for (float& v : p.c) v = dist(rng);
  return p;
}

std::vector<float> Multiply(SgemmFn sgemm, const Shape& s, const Product& p) {
  std::vector<float> c = p.c;
  sgemm(s.trans_a, s.trans_b, s.m, s.n, s.k, 1.0f, p.a.data(), p.lda, p.b.data(), p.ldb, s.beta,
        c.data(), s.n);
  return c;
}

const SgemmVariant& Baseline() { return CompiledSgemmVariants().back(); }

// The CPU's feature flags as Linux reports them (empty elsewhere): a second opinion on what
// the dispatcher read through CPUID.
std::set<std::string> ProcCpuFlags() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string word; words >> word;) flags.insert(word);
    return flags;
  }
  return {};
}

TEST(SgemmVariantsTest, CompiledWidestFirstEndingWithTheBaseline) {
  const auto variants = CompiledSgemmVariants();
  ASSERT_FALSE(variants.empty());
  EXPECT_EQ(variants.back().isa, SgemmIsa::kBaseline);
  EXPECT_TRUE(CpuSupports(SgemmIsa::kBaseline));
  for (size_t i = 1; i < variants.size(); ++i) {
    EXPECT_LT(static_cast<int>(variants[i - 1].isa), static_cast<int>(variants[i].isa));
  }
#if defined(COLLAGE_SGEMM_X86_VARIANTS)  // a portable x86-64 build carries the wide copies
  EXPECT_EQ(variants.size(), 3u);
#else
  EXPECT_EQ(variants.size(), 1u);
#endif
}

TEST(SgemmVariantsTest, DispatcherPicksTheWidestTheCpuSupports) {
  const SgemmVariant& active = ActiveSgemmVariant();
  const SgemmVariant* widest = nullptr;
  for (const SgemmVariant& variant : CompiledSgemmVariants()) {
    if (CpuSupports(variant.isa)) {
      widest = &variant;
      break;
    }
  }
  ASSERT_NE(widest, nullptr);
  EXPECT_EQ(&active, widest) << "active " << active.name << ", widest supported " << widest->name;
  std::cout << "Sgemm runs the " << active.name << " copy\n";

  // /proc/cpuinfo agrees with the CPUID check for the compiled wide copies.
  const std::set<std::string> flags = ProcCpuFlags();
  if (!flags.empty()) {
    auto has = [&](const char* flag) { return flags.count(flag) != 0; };
    for (const SgemmVariant& variant : CompiledSgemmVariants()) {
      if (variant.isa == SgemmIsa::kAvx512) {
        EXPECT_EQ(CpuSupports(variant.isa), has("avx512f") && has("avx512bw") &&
                                                has("avx512dq") && has("avx512vl") &&
                                                has("avx2") && has("fma"));
      } else if (variant.isa == SgemmIsa::kAvx2) {
        EXPECT_EQ(CpuSupports(variant.isa), has("avx2") && has("fma"));
      }
    }
  }

  // Sgemm is the active copy: the same code gives the same bits.
  const Shape s{45, 70, 130, false, true, 0.5f};
  const Product p = RandomProduct(s, 3);
  EXPECT_EQ(Multiply(&Sgemm, s, p), Multiply(active.sgemm, s, p));
}

TEST(SgemmVariantsTest, EverySupportedCopyMatchesTheBaseline) {
  // Register-tile remainders, transposes, beta, vectors (the GEMV paths), several k blocks,
  // and one product big enough to run threaded.
  const Shape shapes[] = {
      {1, 1, 1, false, false, 0.0f},      {13, 33, 7, false, false, 0.0f},
      {25, 97, 257, true, false, 1.0f},   {64, 49, 515, false, true, -0.5f},
      {1, 300, 129, false, true, 0.0f},   {300, 1, 129, true, false, 2.0f},
      {145, 31, 64, true, true, 0.0f},    {256, 256, 300, false, false, 0.0f},
  };
  const SgemmVariant& baseline = Baseline();
  int compared = 0;
  for (const SgemmVariant& variant : CompiledSgemmVariants()) {
    if (!CpuSupports(variant.isa)) {
      std::cout << variant.name << ": not run (this CPU lacks it)\n";
      continue;
    }
    std::cout << variant.name << ": compared with the baseline (" << baseline.name << ")\n";
    ++compared;
    uint32_t seed = 1;
    for (const Shape& s : shapes) {
      SCOPED_TRACE(testing::Message() << variant.name << " m=" << s.m << " n=" << s.n
                                      << " k=" << s.k << " trans_a=" << s.trans_a
                                      << " trans_b=" << s.trans_b << " beta=" << s.beta);
      const Product p = RandomProduct(s, seed++);
      const std::vector<float> want = Multiply(baseline.sgemm, s, p);
      const std::vector<float> got = Multiply(variant.sgemm, s, p);
      ASSERT_EQ(got.size(), want.size());
      // Accumulation order and fused multiply-adds differ between the copies; each term is
      // at most 1 in magnitude, so the rounding stays below k * 2^-24 and some.
      const double tolerance = 1e-5 * static_cast<double>(s.k) + 1e-5;
      int failures = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        if (!(std::fabs(got[i] - want[i]) <= tolerance) && ++failures <= 5) {
          ADD_FAILURE() << "C[" << i << "] = " << got[i] << ", baseline " << want[i];
        }
      }
      EXPECT_EQ(failures, 0);
    }
  }
  EXPECT_GE(compared, 1);  // the baseline at least
}

}  // namespace
}  // namespace collage
