// Shapes, counts and offsets computed from hostile attribute values and constant inputs:
// each op family either computes the exact answer (Range, whose extreme cases have one) or
// refuses with an error that names the node and says what overflowed. Before the checked
// arithmetic (util/checked_math.h) these wrapped silently: Range(-10, INT64_MAX - 5,
// INT64_MAX) came out empty, Range(0, INT64_MAX, 2) was "not constant".
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ops/op_registry.h"

namespace collage {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Node MakeNode(const std::string& op, size_t num_inputs, Attributes attributes = {}) {
  Node node;
  node.name = "hostile_" + op;
  node.op_type = op;
  node.attributes = std::move(attributes);
  for (size_t i = 0; i < num_inputs; ++i) node.inputs.push_back(static_cast<ValueId>(i));
  node.outputs.push_back(100);
  return node;
}

Attributes Attrs(std::initializer_list<std::pair<std::string, Attribute>> values) {
  Attributes a;
  for (const auto& [name, value] : values) a.Set(name, value);
  return a;
}

Tensor Ints(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

// The node must be refused as an invalid model, with its name and `what` (e.g. "overflow")
// in the message.
void ExpectRefused(const Node& node, int64_t opset, const std::vector<Tensor>& inputs,
                   const std::string& what = "overflow") {
  auto out = RunReferenceNode(node, opset, inputs);
  ASSERT_FALSE(out.ok()) << node.op_type << " was accepted";
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidModel) << out.status().ToString();
  EXPECT_NE(out.status().message().find(node.name), std::string::npos) << out.status().ToString();
  EXPECT_NE(out.status().message().find(what), std::string::npos) << out.status().ToString();
}

template <typename T>
std::vector<T> RunRange(T start, T limit, T delta) {
  auto out = RunReferenceNode(
      MakeNode("Range", 3), 11,
      {Tensor::Scalar<T>(start), Tensor::Scalar<T>(limit), Tensor::Scalar<T>(delta)});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  EXPECT_EQ(out->at(0).rank(), 1);
  return out->at(0).template ToVector<T>();
}

// ---- Range ----

TEST(RangeOverflowTest, CountOfAStepLargerThanHalfTheDistance) {
  // limit - start = 2^63 + 4 does not fit in int64; the count is ceil((2^63 + 4) / (2^63 - 1)).
  EXPECT_EQ(RunRange<int64_t>(-10, kMax - 5, kMax), (std::vector<int64_t>{-10, kMax - 10}));
}

TEST(RangeOverflowTest, NegativeStepDownToInt64Min) {
  const int64_t step = -(int64_t{1} << 62);
  // start - limit = 2^63 + 5 does not fit in int64; the last element 5 - 2^63 does.
  EXPECT_EQ(RunRange<int64_t>(5, kMin, step), (std::vector<int64_t>{5, 5 + step, kMin + 5}));
}

TEST(RangeOverflowTest, ElementsWhoseStepMultipleOverflows) {
  // 3 * 2^62 overflows, start + 3 * 2^62 = 2^62 + 1 does not.
  const int64_t step = int64_t{1} << 62;
  EXPECT_EQ(RunRange<int64_t>(kMin + 1, kMax, step),
            (std::vector<int64_t>{kMin + 1, kMin + 1 + step, 1, step + 1}));
  EXPECT_EQ(RunRange<int64_t>(kMax, kMin, kMin), (std::vector<int64_t>{kMax, -1}));
  EXPECT_EQ(RunRange<int32_t>(INT32_MIN, INT32_MAX, INT32_MAX),
            (std::vector<int32_t>{INT32_MIN, -1, INT32_MAX - 1}));
}

TEST(RangeOverflowTest, CountBeyondInt64IsRefused) {
  // 2^64 - 1 elements: no tensor can have them, and the count must not wrap to 0 or -1.
  ExpectRefused(
      MakeNode("Range", 3), 11,
      {Tensor::Scalar<int64_t>(kMin), Tensor::Scalar<int64_t>(kMax), Tensor::Scalar<int64_t>(1)});
  ExpectRefused(
      MakeNode("Range", 3), 11,
      {Tensor::Scalar<int64_t>(kMax), Tensor::Scalar<int64_t>(kMin), Tensor::Scalar<int64_t>(-1)});
}

TEST(RangeOverflowTest, CountThatFitsButIsTooLargeIsRefused) {
  // Used to compute (2^63 - 1 + 1) / 2 in int64, a negative count reported as "depends on data
  // that is not constant".
  ExpectRefused(
      MakeNode("Range", 3), 11,
      {Tensor::Scalar<int64_t>(0), Tensor::Scalar<int64_t>(kMax), Tensor::Scalar<int64_t>(2)},
      "too large");
}

TEST(RangeOverflowTest, FloatBounds) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto range = [](double s, double l, double d) {
    return std::vector<Tensor>{Tensor::Scalar<double>(s), Tensor::Scalar<double>(l),
                               Tensor::Scalar<double>(d)};
  };
  ExpectRefused(MakeNode("Range", 3), 11, range(0, inf, 1));
  ExpectRefused(MakeNode("Range", 3), 11, range(-inf, 0, 1));
  ExpectRefused(MakeNode("Range", 3), 11, range(0, 1e300, 1e-300));
  // limit - start is inf in double although both bounds are finite.
  ExpectRefused(MakeNode("Range", 3), 11, range(-1.7e308, 1.7e308, 1e300));
  ExpectRefused(MakeNode("Range", 3), 11, range(nan, 1, 1), "NaN");
  ExpectRefused(MakeNode("Range", 3), 11, range(0, nan, 1), "NaN");
  ExpectRefused(MakeNode("Range", 3), 11, range(0, 1, nan), "NaN");
  ExpectRefused(MakeNode("Range", 3), 11, range(0, 1, 0), "delta is 0");
  ExpectRefused(
      MakeNode("Range", 3), 11,
      {Tensor::Scalar<float>(0), Tensor::Scalar<float>(1e30f), Tensor::Scalar<float>(1e-30f)});
  // Bounds that go the other way, an infinite step: the spec's formula gives no elements.
  EXPECT_EQ(RunRange<double>(0, -inf, 1), std::vector<double>{});
  EXPECT_EQ(RunRange<double>(0, 10, inf), std::vector<double>{});
  EXPECT_EQ(RunRange<float>(1, 2, 0.5f), (std::vector<float>{1, 1.5f}));
}

// ---- Reshape, ConstantOfShape ----

TEST(ShapeProductOverflowTest, ReshapeTargetWhoseProductOverflows) {
  const int64_t big = int64_t{1} << 32;
  ExpectRefused(MakeNode("Reshape", 2), 13, {Tensor(DType::kFloat32, {4}), Ints({big, big, -1})});
  ExpectRefused(MakeNode("Reshape", 2), 13, {Tensor(DType::kFloat32, {4}), Ints({kMax, 2})});
  // An empty target: the product is 0 whatever the other dims are.
  auto out = RunReferenceNode(MakeNode("Reshape", 2, Attrs({{"allowzero", int64_t{1}}})), 14,
                              {Tensor(DType::kFloat32, {0}), Ints({big, big, 0})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).shape(), (Shape{big, big, 0}));
}

TEST(ShapeProductOverflowTest, ConstantOfShapeWhoseElementCountOverflows) {
  ExpectRefused(MakeNode("ConstantOfShape", 1), 13, {Ints({kMax, kMax})});
  ExpectRefused(MakeNode("ConstantOfShape", 1), 13, {Ints({int64_t{1} << 40, int64_t{1} << 40})});
  ExpectRefused(MakeNode("ConstantOfShape", 1), 13, {Ints({int64_t{1} << 50})}, "too large");
}

}  // namespace
}  // namespace collage
