#include "cost/extra_time.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace collage {
namespace {

std::vector<double> Normal(std::mt19937& rng, int n, double mean, double sigma) {
  std::normal_distribution<double> noise(mean, sigma);
  std::vector<double> values;
  for (int i = 0; i < n; ++i) values.push_back(noise(rng));
  return values;
}

TEST(ExtraTimeTest, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  EXPECT_DOUBLE_EQ(MedianOf({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(MedianOf({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(MedianOf({}), 0);
}

TEST(ExtraTimeTest, AShiftWellAboveTheNoiseIsKept) {
  std::mt19937 rng(7);
  // 40 turns of a 0.2 ms kernel with 2 us of noise, 30 us slower after another library.
  const std::vector<double> after_own = Normal(rng, 40, 0.200, 0.002);
  const std::vector<double> after_other = Normal(rng, 40, 0.230, 0.002);
  EXPECT_NEAR(SignificantExtraMs(after_other, after_own), 0.030, 0.002);
}

TEST(ExtraTimeTest, TheSameKernelTimedTwiceHasNoExtraTime) {
  // A slow kernel (1.2 ms, 60 us of noise) whose two samples differ only by chance: their
  // medians lie tens of microseconds apart in some seeds, which must not be priced.
  int nonzero = 0;
  for (unsigned seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(seed);
    const std::vector<double> a = Normal(rng, 20, 1.2, 0.06);
    const std::vector<double> b = Normal(rng, 20, 1.2, 0.06);
    if (SignificantExtraMs(a, b) > 0) ++nonzero;
  }
  // Two standard errors, one-sided: about 2% of the draws by chance.
  EXPECT_LE(nonzero, 12);
}

TEST(ExtraTimeTest, NeverNegativeAndZeroWithoutSamples) {
  std::mt19937 rng(3);
  const std::vector<double> fast = Normal(rng, 30, 0.1, 0.001);
  const std::vector<double> slow = Normal(rng, 30, 0.2, 0.001);
  EXPECT_EQ(SignificantExtraMs(fast, slow), 0);
  EXPECT_GT(SignificantExtraMs(slow, fast), 0.09);
  EXPECT_EQ(SignificantExtraMs({}, slow), 0);
  EXPECT_EQ(SignificantExtraMs(slow, {}), 0);
}

}  // namespace
}  // namespace collage
