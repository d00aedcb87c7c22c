#include "util/checked_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace collage {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(CheckedMathTest, OperationsAtTheEdges) {
  EXPECT_EQ(CheckedAdd(kMax - 1, 1), kMax);
  EXPECT_EQ(CheckedAdd(kMax, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd(kMin, -1), std::nullopt);
  EXPECT_EQ(CheckedSub(kMin + 1, 1), kMin);
  EXPECT_EQ(CheckedSub(0, kMin), std::nullopt);
  EXPECT_EQ(CheckedSub(-1, kMax), kMin);
  EXPECT_EQ(CheckedMul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(CheckedMul(int64_t{1} << 32, int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(CheckedMul(kMin, -1), std::nullopt);
  EXPECT_EQ(CheckedDiv(kMin, -1), std::nullopt);
  EXPECT_EQ(CheckedDiv(7, 0), std::nullopt);
  EXPECT_EQ(CheckedDiv(-7, 2), -3);
}

TEST(CheckedMathTest, ProductWithAZeroIsZero) {
  EXPECT_EQ(CheckedProduct(std::vector<int64_t>{}), 1);
  EXPECT_EQ(CheckedProduct(std::vector<int64_t>{kMax, kMax, 0}), 0);
  EXPECT_EQ(CheckedProduct(std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40}), std::nullopt);
  EXPECT_EQ(CheckedProduct(std::vector<int64_t>{2, 3, 7}), 42);
}

TEST(CheckedMathTest, DoubleConversion) {
  EXPECT_EQ(CheckedToInt64(-0x1p63), kMin);
  EXPECT_EQ(CheckedToInt64(0x1p63), std::nullopt);
  EXPECT_EQ(CheckedToInt64(2.9), 2);
  EXPECT_EQ(CheckedToInt64(-2.9), -2);
  EXPECT_EQ(CheckedToInt64(std::nan("")), std::nullopt);
  EXPECT_EQ(CheckedToInt64(-std::numeric_limits<double>::infinity()), std::nullopt);
}

TEST(CheckedMathTest, FormulasCarryOverflowToTheEnd) {
  const CheckedInt ok = (CheckedInt(10) + 2 + 2 - ((CheckedInt(3) - 1) * 2 + 1)) / 1 + 1;
  EXPECT_EQ(ok.get(), 10);
  // The intermediate kMax + 1 overflows although the final value would fit again.
  const CheckedInt wrapped = CheckedInt(kMax) + 1 - 2;
  EXPECT_FALSE(wrapped.ok());
  EXPECT_FALSE((CheckedInt(5) / 0).ok());
  EXPECT_FALSE((-CheckedInt(kMin)).ok());
  EXPECT_EQ((-CheckedInt(kMax)).get(), kMin + 1);
}

}  // namespace
}  // namespace collage
