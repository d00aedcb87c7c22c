// GroupNormalization (opset 18: scale and bias per group; opset 21: per channel) and the
// opset-18 bitwise ops.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "reference_node_util.h"

namespace collage {
namespace {

using testing::Expect;
using testing::ExpectError;
using testing::Floats;
using testing::MakeNode;
using testing::RunOne;
using testing::RunStatus;

Node GroupNorm(int64_t groups) {
  Node node = MakeNode("GroupNormalization", 3);
  node.attributes.Set("num_groups", groups);
  node.attributes.Set("epsilon", 0.0f);
  return node;
}

// X [1, 4, 2]: channels 0-1 (group 0) hold 0 1 2 3, channels 2-3 (group 1) hold 10 10 12 12.
Tensor X() { return Floats({1, 4, 2}, {0, 1, 2, 3, 10, 10, 12, 12}); }

std::vector<float> Normalized() {
  const float a = 1.0f / std::sqrt(1.25f);  // group 0: mean 1.5, variance 1.25
  return {-1.5f * a, -0.5f * a, 0.5f * a, 1.5f * a, -1, -1, 1, 1};  // group 1: mean 11, var 1
}

TEST(GroupNormalizationTest, Opset18ScalesAndShiftsPerGroup) {
  const Tensor y = RunOne(GroupNorm(2), 18, {X(), Floats({2}, {2, 1}), Floats({2}, {0, 5})});
  std::vector<float> want = Normalized();
  for (size_t i = 0; i < want.size(); ++i) want[i] = i < 4 ? 2 * want[i] : want[i] + 5;
  const std::vector<float> got = y.ToVector<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
}

TEST(GroupNormalizationTest, Opset21ScalesAndShiftsPerChannel) {
  const Tensor y =
      RunOne(GroupNorm(2), 21, {X(), Floats({4}, {1, 2, 3, 4}), Floats({4}, {0, 0, 0, 1})});
  std::vector<float> want = Normalized();
  const float scale[] = {1, 2, 3, 4}, bias[] = {0, 0, 0, 1};
  for (size_t i = 0; i < want.size(); ++i) want[i] = want[i] * scale[i / 2] + bias[i / 2];
  const std::vector<float> got = y.ToVector<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
}

TEST(GroupNormalizationTest, BadGroupCountsAndParameterShapesAreRefused) {
  const Tensor p2 = Floats({2}, {1, 1});
  ExpectError(RunStatus(GroupNorm(3), 18, {X(), Floats({3}, {1, 1, 1}), Floats({3}, {0, 0, 0})}),
              StatusCode::kInvalidModel, "divide the 4 channels");
  ExpectError(RunStatus(MakeNode("GroupNormalization", 3), 18, {X(), p2, p2}),
              StatusCode::kInvalidModel, "num_groups");
  // Per-group parameters at opset 21, which wants one per channel.
  ExpectError(RunStatus(GroupNorm(2), 21, {X(), p2, p2}), StatusCode::kInvalidModel,
              "one value per channel");
}

TEST(BitwiseTest, AndOrXorNotOnTheBitsOfEveryIntegerType) {
  const Tensor a = Tensor::FromVector<int32_t>({3}, {12, -1, 5});
  const Tensor b = Tensor::FromVector<int32_t>({3}, {10, 7, -8});
  Expect<int32_t>(RunOne(MakeNode("BitwiseAnd", 2), 18, {a, b}), {3}, {8, 7, 0});
  Expect<int32_t>(RunOne(MakeNode("BitwiseOr", 2), 18, {a, b}), {3}, {14, -1, -3});
  Expect<int32_t>(RunOne(MakeNode("BitwiseXor", 2), 18, {a, b}), {3}, {6, -8, -3});
  Expect<uint8_t>(
      RunOne(MakeNode("BitwiseNot", 1), 18, {Tensor::FromVector<uint8_t>({2}, {0, 15})}), {2},
      {255, 240});
  // Broadcasting as the other binary ops.
  Expect<int8_t>(
      RunOne(MakeNode("BitwiseAnd", 2), 18,
             {Tensor::FromVector<int8_t>({2}, {-1, 6}), Tensor::FromVector<int8_t>({1}, {3})}),
      {2}, {3, 2});
}

TEST(BitwiseTest, FloatsAndBoolsAreRefused) {
  const Tensor f = Floats({1}, {1});
  ExpectError(RunStatus(MakeNode("BitwiseAnd", 2), 18, {f, f}), StatusCode::kUnsupported,
              "float32");
  const Tensor t = Tensor::FromVector<bool>({1}, {true});
  ExpectError(RunStatus(MakeNode("BitwiseNot", 1), 18, {t}), StatusCode::kUnsupported, "bool");
}

}  // namespace
}  // namespace collage
