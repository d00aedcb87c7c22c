// The measured float32 peak `collage bench` sets a model's rate against: timed on the widest
// vectors the CPU's flags offer, at the threads asked for.
#include "collage/fma_peak.h"

#include <gtest/gtest.h>

namespace collage {
namespace {

#if defined(__x86_64__)
TEST(FmaPeak, TimesTheWidestVectorsTheCpuHas) {
  const FmaPeak peak = MeasureFmaPeak(1);
  const char* expected = __builtin_cpu_supports("avx512f") ? "AVX-512 FMA"
                         : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                             ? "AVX2 FMA"
                             : "SSE multiply+add";
  EXPECT_EQ(peak.isa, expected);
  EXPECT_EQ(peak.threads, 1);
  // Any x86-64 core does several GFLOP/s on four-wide vectors; a loop the compiler folded or
  // a wrong count of its operations would show here as zero or absurd.
  EXPECT_GT(peak.gflops, 0.5);
  EXPECT_LT(peak.gflops, 2000.0);
}
#endif

TEST(FmaPeak, RunsAtLeastOneThread) {
  EXPECT_EQ(MeasureFmaPeak(0, 0.001).threads, 1);
  EXPECT_EQ(MeasureFmaPeak(2, 0.001).threads, 2);
}

}  // namespace
}  // namespace collage
