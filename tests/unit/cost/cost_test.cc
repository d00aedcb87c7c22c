// A cost is a time, invalid or unknown, and never one for another: what cannot be a time is
// invalid, a sum with an invalid part is invalid, and times come before both in an order.
#include "cost/cost.h"

#include <gtest/gtest.h>

#include <limits>

#include "cost/cost_database.h"

namespace collage {
namespace {

TEST(CostTest, OnlyAFiniteTimeAtOrAboveZeroIsATime) {
  EXPECT_TRUE(Cost::Milliseconds(0).is_value());
  EXPECT_DOUBLE_EQ(Cost::Milliseconds(1.5).ms(), 1.5);
  for (double bad :
       {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(), -1.0}) {
    EXPECT_TRUE(Cost::Milliseconds(bad).is_invalid()) << bad;
    EXPECT_EQ(Cost::Milliseconds(bad).ms(), 0.0) << bad;
  }
  EXPECT_TRUE(Cost().is_unknown());
}

TEST(CostTest, ASumIsInvalidWithAnInvalidPartElseUnknownWithAnUnknownOne) {
  const Cost one = Cost::Milliseconds(1), two = Cost::Milliseconds(2);
  EXPECT_EQ(one + two, Cost::Milliseconds(3));
  EXPECT_TRUE((one + Cost::Unknown()).is_unknown());
  EXPECT_TRUE((Cost::Unknown() + Cost::Invalid()).is_invalid());
  EXPECT_TRUE((Cost::Invalid() + one).is_invalid());
}

TEST(CostTest, TimesComeFirstByValueThenUnknownThenInvalid) {
  const Cost one = Cost::Milliseconds(1), two = Cost::Milliseconds(2);
  EXPECT_TRUE(one < two);
  EXPECT_FALSE(two < one);
  EXPECT_FALSE(one < one);
  EXPECT_TRUE(two < Cost::Unknown());
  EXPECT_TRUE(Cost::Unknown() < Cost::Invalid());
  EXPECT_FALSE(Cost::Invalid() < Cost::Invalid());
  EXPECT_FALSE(Cost::Invalid() < one);
}

TEST(CostTest, AnInvalidRecordCostsInvalidAndAValidOneItsMedian) {
  CostRecord record;
  record.median_ms = 4;
  EXPECT_TRUE(record.cost().is_invalid());
  record.valid = true;
  EXPECT_EQ(record.cost(), Cost::Milliseconds(4));
}

}  // namespace
}  // namespace collage
