// The two ways outputs are compared with the reference: relative to a scale of at least 1
// (NormalizedError) and relative to the output's own magnitude (MagnitudeRelativeError).
#include "collage/normalized_error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace collage {
namespace {

Tensor Floats(const std::vector<float>& values) {
  return Tensor::FromVector<float>({static_cast<int64_t>(values.size())}, values);
}

TEST(MagnitudeRelativeError, JudgesTinyOutputsByTheirOwnDigits) {
  const Tensor reference = Floats({1e-9f, -2e-9f, 3e-9f});
  const Tensor wrong = Floats({3e-9f, 2e-9f, -1e-9f});  // every sign or value wrong
  // A floor of 1 passes it whatever it is...
  EXPECT_LT(NormalizedError(wrong, reference), 1e-8);
  // ...its own magnitude does not.
  EXPECT_NEAR(MagnitudeRelativeError(wrong, reference), 4.0 / 3.0, 1e-6);
  const Tensor close = Floats({1.000001e-9f, -2e-9f, 3e-9f});
  EXPECT_LT(MagnitudeRelativeError(close, reference), 1e-5);
}

TEST(MagnitudeRelativeError, LargeOutputsAsNormalizedError) {
  const Tensor reference = Floats({100.f, -50.f});
  const Tensor actual = Floats({100.01f, -50.f});
  EXPECT_NEAR(MagnitudeRelativeError(actual, reference), 1e-4, 1e-6);
  EXPECT_DOUBLE_EQ(MagnitudeRelativeError(actual, reference), NormalizedError(actual, reference));
}

TEST(MagnitudeRelativeError, AllZeroOutputsUseTheFloor) {
  const Tensor zeros = Floats({0.f, 0.f});
  EXPECT_EQ(MagnitudeRelativeError(zeros, zeros), 0.0);
  const Tensor off = Floats({0.f, 1e-15f});
  EXPECT_NEAR(MagnitudeRelativeError(off, zeros), 1e-15 / kMagnitudeFloor, 1e-9);
}

TEST(MagnitudeRelativeError, NonFiniteAndMismatchesAsNormalizedError) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(MagnitudeRelativeError(Floats({nan, inf}), Floats({nan, inf})), 0.0);
  std::string problem;
  EXPECT_TRUE(std::isinf(MagnitudeRelativeError(Floats({1.f, 2.f}), Floats({1.f, nan}), &problem)));
  EXPECT_NE(problem.find("element 1"), std::string::npos) << problem;
  EXPECT_TRUE(std::isinf(MagnitudeRelativeError(Floats({1.f}), Floats({1.f, 2.f}), &problem)));
  EXPECT_NE(problem.find("expected float32[2]"), std::string::npos) << problem;
}

}  // namespace
}  // namespace collage
