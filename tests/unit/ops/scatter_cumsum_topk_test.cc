// ScatterElements, Scatter, ScatterND, GatherND, CumSum, TopK.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "collage/sdk/op_registry.h"
#include "reference_node_util.h"

namespace collage {
namespace {

using testing::Expect;
using testing::ExpectError;
using testing::Floats;
using testing::Int64s;
using testing::MakeNode;
using testing::RunAll;
using testing::RunOne;
using testing::RunStatus;

Node WithReduction(Node node, const std::string& reduction) {
  node.attributes.Set("reduction", reduction);
  return node;
}

// ---- ScatterElements, Scatter ----

TEST(ScatterElementsTest, SpecExampleWithoutAxis) {
  Tensor data(DType::kFloat32, {3, 3});
  Tensor indices = Int64s({2, 3}, {1, 0, 2, 0, 2, 1});
  Tensor updates = Floats({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f});
  Expect<float>(RunOne(MakeNode("ScatterElements", 3), 11, {data, indices, updates}), {3, 3},
                {2.0f, 1.1f, 0.0f, 1.0f, 0.0f, 2.2f, 0.0f, 2.1f, 1.2f});
}

TEST(ScatterElementsTest, AxisNegativeAndInt32Indices) {
  Node node = MakeNode("ScatterElements", 3);
  node.attributes.Set("axis", int64_t{-1});
  Tensor data = Floats({1, 5}, {1, 2, 3, 4, 5});
  Tensor updates = Floats({1, 2}, {1.1f, 2.1f});
  Expect<float>(RunOne(node, 13, {data, Int64s({1, 2}, {1, 3}), updates}), {1, 5},
                {1.0f, 1.1f, 3.0f, 2.1f, 5.0f});  // the spec's example 2
  Tensor negative = Tensor::FromVector<int32_t>({1, 2}, {1, -3});
  Expect<float>(RunOne(node, 13, {data, negative, updates}), {1, 5},
                {1.0f, 1.1f, 2.1f, 4.0f, 5.0f});
}

TEST(ScatterElementsTest, IndicesSmallerThanDataOffTheAxis) {
  // data [[0 1 2] [3 4 5]], axis 0: updates land in column 0 and 1 only.
  Tensor data = Tensor::FromVector<int32_t>({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor indices = Int64s({1, 2}, {1, 0});
  Tensor updates = Tensor::FromVector<int32_t>({1, 2}, {-1, -2});
  Expect<int32_t>(RunOne(MakeNode("ScatterElements", 3), 16, {data, indices, updates}), {2, 3},
                  {0, -2, 2, -1, 4, 5});
}

TEST(ScatterElementsTest, DuplicateIndicesApplyInOrder) {
  Node node = MakeNode("ScatterElements", 3);
  node.attributes.Set("axis", int64_t{1});
  Tensor data = Floats({1, 5}, {1, 2, 3, 4, 5});
  Tensor indices = Int64s({1, 2}, {1, 1});
  Tensor updates = Floats({1, 2}, {1.1f, 2.1f});
  // The conformance case test_scatter_elements_with_duplicate_indices: (2 + 1.1) + 2.1.
  Expect<float>(RunOne(WithReduction(node, "add"), 16, {data, indices, updates}), {1, 5},
                {1.0f, (2.0f + 1.1f) + 2.1f, 3.0f, 4.0f, 5.0f});
  Expect<float>(RunOne(WithReduction(node, "mul"), 16, {data, indices, updates}), {1, 5},
                {1.0f, (2.0f * 1.1f) * 2.1f, 3.0f, 4.0f, 5.0f});
  Expect<float>(RunOne(WithReduction(node, "max"), 18, {data, indices, updates}), {1, 5},
                {1.0f, 2.1f, 3.0f, 4.0f, 5.0f});
  Expect<float>(RunOne(WithReduction(node, "min"), 18, {data, indices, updates}), {1, 5},
                {1.0f, 1.1f, 3.0f, 4.0f, 5.0f});
  // Without a reduction the last update wins.
  Expect<float>(RunOne(node, 16, {data, indices, updates}), {1, 5}, {1.0f, 2.1f, 3.0f, 4.0f, 5.0f});
}

TEST(ScatterElementsTest, IntegerAddWrapsAround) {
  Tensor data = Tensor::FromVector<int32_t>({1}, {std::numeric_limits<int32_t>::max()});
  Tensor updates = Tensor::FromVector<int32_t>({1}, {1});
  Node node = WithReduction(MakeNode("ScatterElements", 3), "add");
  Expect<int32_t>(RunOne(node, 16, {data, Int64s({1}, {0}), updates}), {1},
                  {std::numeric_limits<int32_t>::min()});
}

TEST(ScatterElementsTest, ElementMovingDTypesWithoutReduction) {
  // float16 and bool are only moved: fine without a reduction.
  Tensor data = Tensor::FromVector<bool>({3}, {false, false, false});
  Tensor updates = Tensor::FromVector<bool>({1}, {true});
  Tensor flags = RunOne(MakeNode("ScatterElements", 3), 11, {data, Int64s({1}, {-1}), updates});
  EXPECT_EQ(flags.dtype(), DType::kBool);
  EXPECT_EQ(flags.ToVector<int>(), (std::vector<int>{0, 0, 1}));
  Tensor half =
      RunOne(MakeNode("ScatterElements", 3), 11,
             {Tensor(DType::kFloat16, {4}), Int64s({1}, {2}), Tensor(DType::kFloat16, {1})});
  EXPECT_EQ(half.dtype(), DType::kFloat16);
  EXPECT_EQ(half.shape(), Shape{4});
}

TEST(ScatterElementsTest, Errors) {
  Node node = MakeNode("ScatterElements", 3);
  node.attributes.Set("axis", int64_t{1});
  Tensor data = Floats({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor updates = Floats({1, 2}, {9, 9});
  ExpectError(RunStatus(node, 16, {data, Int64s({1, 2}, {0, 3}), updates}),
              StatusCode::kInvalidArgument, "index 3 is out of range for axis 1 of size 3");
  ExpectError(RunStatus(node, 16, {data, Int64s({1, 2}, {-4, 0}), updates}),
              StatusCode::kInvalidArgument, "index -4");
  // indices and updates differ; indices larger than data off the axis; ranks differ.
  EXPECT_EQ(RunStatus(node, 16, {data, Int64s({1, 3}, {0, 0, 0}), updates}).code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(
      RunStatus(node, 16, {data, Int64s({3, 1}, {0, 0, 0}), Floats({3, 1}, {1, 1, 1})}).code(),
      StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus(node, 16, {data, Int64s({2}, {0, 0}), Floats({2}, {1, 1})}).code(),
            StatusCode::kInvalidModel);
  // Reductions: unknown names, and names the opset does not define yet.
  Tensor ok_indices = Int64s({1, 2}, {0, 1});
  ExpectError(RunStatus(WithReduction(node, "sum"), 18, {data, ok_indices, updates}),
              StatusCode::kInvalidModel, "reduction 'sum' is not valid");
  ExpectError(RunStatus(WithReduction(node, "add"), 13, {data, ok_indices, updates}),
              StatusCode::kInvalidModel, "needs opset 16");
  ExpectError(RunStatus(WithReduction(node, "max"), 16, {data, ok_indices, updates}),
              StatusCode::kInvalidModel, "needs opset 18");
  // A reduction computes: float16 has no arithmetic here; bool none at all.
  Node add = WithReduction(MakeNode("ScatterElements", 3), "add");
  ExpectError(
      RunStatus(add, 16,
                {Tensor(DType::kFloat16, {4}), Int64s({1}, {0}), Tensor(DType::kFloat16, {1})}),
      StatusCode::kUnsupported, "float16");
  EXPECT_EQ(
      RunStatus(MakeNode("ScatterElements", 3), 16, {data, Floats({1, 2}, {0, 0}), updates}).code(),
      StatusCode::kUnsupported);  // float indices
  EXPECT_EQ(RunStatus(MakeNode("ScatterElements", 3), 16,
                      {data, ok_indices, Tensor::FromVector<double>({1, 2}, {1, 1})})
                .code(),
            StatusCode::kInvalidModel);  // updates of another dtype
}

TEST(ScatterTest, DeprecatedAliasOfScatterElements) {
  Node node = MakeNode("Scatter", 3);
  node.attributes.Set("axis", int64_t{1});
  Tensor data = Floats({1, 5}, {1, 2, 3, 4, 5});
  Tensor updates = Floats({1, 2}, {1.1f, 2.1f});
  Expect<float>(RunOne(node, 10, {data, Int64s({1, 2}, {1, 3}), updates}), {1, 5},
                {1.0f, 1.1f, 3.0f, 2.1f, 5.0f});
  ExpectError(RunStatus(WithReduction(node, "add"), 10, {data, Int64s({1, 2}, {1, 3}), updates}),
              StatusCode::kInvalidModel, "not defined for Scatter");
}

// ---- ScatterND ----

TEST(ScatterNDTest, SpecExample1) {
  Tensor data = Floats({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor indices = Int64s({4, 1}, {4, 3, 1, 7});
  Tensor updates = Floats({4}, {9, 10, 11, 12});
  Expect<float>(RunOne(MakeNode("ScatterND", 3), 11, {data, indices, updates}), {8},
                {1, 11, 3, 10, 9, 6, 7, 12});
}

TEST(ScatterNDTest, SlicesAndNegativeIndices) {
  // data [[0 1 2] [3 4 5] [6 7 8]]: rows 0 and -1 (= 2) replaced.
  Tensor data = Tensor::FromVector<int64_t>({3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  Tensor updates = Tensor::FromVector<int64_t>({2, 3}, {10, 11, 12, 20, 21, 22});
  Expect<int64_t>(RunOne(MakeNode("ScatterND", 3), 13, {data, Int64s({2, 1}, {0, -1}), updates}),
                  {3, 3}, {10, 11, 12, 3, 4, 5, 20, 21, 22});
  // Full tuples address single elements.
  Tensor points = Int64s({2, 2}, {1, 2, -1, 0});
  Tensor values = Tensor::FromVector<int64_t>({2}, {-5, -6});
  Expect<int64_t>(RunOne(MakeNode("ScatterND", 3), 13, {data, points, values}), {3, 3},
                  {0, 1, 2, 3, 4, -5, -6, 7, 8});
}

TEST(ScatterNDTest, DuplicateIndexReductions) {
  Tensor data = Floats({2, 2}, {1, 2, 3, 4});
  Tensor indices = Int64s({2, 1}, {0, 0});
  Tensor updates = Floats({2, 2}, {5, 1, 2, 7});
  Node node = MakeNode("ScatterND", 3);
  Expect<float>(RunOne(WithReduction(node, "add"), 16, {data, indices, updates}), {2, 2},
                {8, 10, 3, 4});
  Expect<float>(RunOne(WithReduction(node, "mul"), 16, {data, indices, updates}), {2, 2},
                {10, 14, 3, 4});
  Expect<float>(RunOne(WithReduction(node, "max"), 18, {data, indices, updates}), {2, 2},
                {5, 7, 3, 4});
  Expect<float>(RunOne(WithReduction(node, "min"), 18, {data, indices, updates}), {2, 2},
                {1, 1, 3, 4});
  Expect<float>(RunOne(node, 16, {data, indices, updates}), {2, 2}, {2, 7, 3, 4});  // last wins
}

TEST(ScatterNDTest, Errors) {
  Node node = MakeNode("ScatterND", 3);
  Tensor data = Floats({2, 3}, {0, 1, 2, 3, 4, 5});
  ExpectError(RunStatus(node, 13, {data, Int64s({1, 2}, {1, 3}), Floats({1}, {9})}),
              StatusCode::kInvalidArgument, "index 3 is out of range for axis 1 of size 3");
  ExpectError(RunStatus(node, 13, {data, Int64s({1, 1}, {-3}), Floats({1, 3}, {9, 9, 9})}),
              StatusCode::kInvalidArgument, "index -3 is out of range for axis 0");
  // updates must be indices.shape[:-1] + data.shape[k:]; k at most the rank of data.
  EXPECT_EQ(RunStatus(node, 13, {data, Int64s({1, 1}, {0}), Floats({1, 2}, {9, 9})}).code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus(node, 13, {data, Int64s({1, 3}, {0, 0, 0}), Floats({1}, {9})}).code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus(node, 13,
                      {data, Tensor::FromVector<int32_t>({1, 1}, {0}), Floats({1, 3}, {9, 9, 9})})
                .code(),
            StatusCode::kUnsupported);  // int64 indices only
  ExpectError(RunStatus(WithReduction(node, "xor"), 18,
                        {data, Int64s({1, 1}, {0}), Floats({1, 3}, {9, 9, 9})}),
              StatusCode::kInvalidModel, "reduction 'xor'");
}

// ---- GatherND ----

TEST(GatherNDTest, SpecExamples) {
  Node node = MakeNode("GatherND", 2);
  Tensor d2 = Tensor::FromVector<int32_t>({2, 2}, {0, 1, 2, 3});
  Expect<int32_t>(RunOne(node, 13, {d2, Int64s({2, 2}, {0, 0, 1, 1})}), {2}, {0, 3});     // 1
  Expect<int32_t>(RunOne(node, 13, {d2, Int64s({2, 1}, {1, 0})}), {2, 2}, {2, 3, 0, 1});  // 2
  Tensor d3 = Floats({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Expect<float>(RunOne(node, 13, {d3, Int64s({2, 2}, {0, 1, 1, 0})}), {2, 2}, {2, 3, 4, 5});  // 3
  Expect<float>(RunOne(node, 13, {d3, Int64s({2, 1, 2}, {0, 1, 1, 0})}), {2, 1, 2},
                {2, 3, 4, 5});  // 4
  Node batched = MakeNode("GatherND", 2);
  batched.attributes.Set("batch_dims", int64_t{1});
  Expect<float>(RunOne(batched, 13, {d3, Int64s({2, 1}, {1, 0})}), {2, 2}, {2, 3, 4, 5});  // 5
}

TEST(GatherNDTest, NegativeIndicesAndBatchedPoints) {
  Tensor d3 = Floats({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Expect<float>(RunOne(MakeNode("GatherND", 2), 13, {d3, Int64s({1, 3}, {-1, -2, -1})}), {1}, {5});
  Node batched = MakeNode("GatherND", 2);
  batched.attributes.Set("batch_dims", int64_t{1});
  // Batch b picks data[b][i][j] for each (i, j) of indices[b].
  Expect<float>(RunOne(batched, 12, {d3, Int64s({2, 2, 2}, {0, 0, 1, 1, 1, 0, 0, 1})}), {2, 2},
                {0, 3, 6, 5});
}

TEST(GatherNDTest, Errors) {
  Node node = MakeNode("GatherND", 2);
  Tensor data = Floats({2, 3}, {0, 1, 2, 3, 4, 5});
  ExpectError(RunStatus(node, 13, {data, Int64s({1, 2}, {2, 0})}), StatusCode::kInvalidArgument,
              "index 2 is out of range for axis 0 of size 2");
  EXPECT_EQ(RunStatus(node, 13, {data, Int64s({1, 3}, {0, 0, 0})}).code(),
            StatusCode::kInvalidModel);  // tuples longer than the rank
  Node batched = MakeNode("GatherND", 2);
  batched.attributes.Set("batch_dims", int64_t{1});
  EXPECT_EQ(RunStatus(batched, 13, {data, Int64s({3, 1}, {0, 0, 0})}).code(),
            StatusCode::kInvalidModel);  // batch dims differ
  EXPECT_EQ(RunStatus(batched, 11, {data, Int64s({2, 1}, {0, 0})}).code(),
            StatusCode::kInvalidModel);  // no batch_dims before opset 12
  batched.attributes.Set("batch_dims", int64_t{2});
  EXPECT_EQ(RunStatus(batched, 13, {data, Int64s({2, 3}, {0, 0, 0, 0, 0, 0})}).code(),
            StatusCode::kInvalidModel);  // batch_dims must be below both ranks
}

// ---- CumSum ----

TEST(CumSumTest, ExclusiveAndReverse) {
  Tensor x = Tensor::FromVector<double>({5}, {1, 2, 3, 4, 5});
  Tensor axis = Tensor::Scalar<int32_t>(0);
  Node node = MakeNode("CumSum", 2);
  Expect<double>(RunOne(node, 14, {x, axis}), {5}, {1, 3, 6, 10, 15});
  node.attributes.Set("exclusive", int64_t{1});
  Expect<double>(RunOne(node, 14, {x, axis}), {5}, {0, 1, 3, 6, 10});
  node.attributes.Set("reverse", int64_t{1});
  Expect<double>(RunOne(node, 14, {x, axis}), {5}, {14, 12, 9, 5, 0});
  node.attributes.Set("exclusive", int64_t{0});
  Expect<double>(RunOne(node, 14, {x, axis}), {5}, {15, 14, 12, 9, 5});
}

TEST(CumSumTest, AxesOf2dInput) {
  Tensor x = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Node node = MakeNode("CumSum", 2);
  Expect<float>(RunOne(node, 11, {x, Tensor::Scalar<int64_t>(0)}), {2, 3}, {1, 2, 3, 5, 7, 9});
  Expect<float>(RunOne(node, 11, {x, Tensor::Scalar<int64_t>(1)}), {2, 3}, {1, 3, 6, 4, 9, 15});
  // A negative axis, given as a one-element tensor.
  Expect<float>(RunOne(node, 11, {x, Int64s({1}, {-1})}), {2, 3}, {1, 3, 6, 4, 9, 15});
  node.attributes.Set("reverse", int64_t{1});
  node.attributes.Set("exclusive", int64_t{1});
  Expect<float>(RunOne(node, 11, {x, Tensor::Scalar<int64_t>(0)}), {2, 3}, {4, 5, 6, 0, 0, 0});
}

TEST(CumSumTest, IntegerDTypes) {
  Node node = MakeNode("CumSum", 2);
  Expect<int32_t>(
      RunOne(node, 14, {Tensor::FromVector<int32_t>({3}, {1, -2, 3}), Tensor::Scalar<int32_t>(0)}),
      {3}, {1, -1, 2});
  Expect<uint64_t>(
      RunOne(node, 14, {Tensor::FromVector<uint64_t>({3}, {1, 2, 3}), Tensor::Scalar<int32_t>(-1)}),
      {3}, {1, 3, 6});
  // Overflow wraps around rather than being undefined.
  Expect<int64_t>(
      RunOne(node, 14,
             {Int64s({2}, {std::numeric_limits<int64_t>::max(), 1}), Tensor::Scalar<int64_t>(0)}),
      {2}, {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()});
}

TEST(CumSumTest, Errors) {
  Node node = MakeNode("CumSum", 2);
  Tensor x = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectError(RunStatus(node, 14, {x, Tensor::Scalar<int64_t>(2)}), StatusCode::kInvalidModel,
              "axis 2 is out of range");
  EXPECT_EQ(RunStatus(node, 14, {x, Int64s({2}, {0, 1})}).code(), StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus(node, 14, {x, Tensor::Scalar<float>(0)}).code(), StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus(node, 14, {Tensor(DType::kFloat16, {3}), Tensor::Scalar<int64_t>(0)}).code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus(node, 14, {Tensor::Scalar<float>(1), Tensor::Scalar<int64_t>(0)}).code(),
            StatusCode::kInvalidModel);  // a scalar has no axis
}

// ---- TopK ----

// x = [[0 1 2 3] [4 5 6 7] [11 10 9 8]]
Tensor TopKInput() { return Floats({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 11, 10, 9, 8}); }

TEST(TopKTest, LargestAlongLastAxis) {
  Node node = MakeNode("TopK", 2, 2);
  node.attributes.Set("axis", int64_t{-1});
  std::vector<Tensor> out = RunAll(node, 11, {TopKInput(), Int64s({1}, {3})});
  Expect<float>(out[0], {3, 3}, {3, 2, 1, 7, 6, 5, 11, 10, 9});
  Expect<int64_t>(out[1], {3, 3}, {3, 2, 1, 3, 2, 1, 0, 1, 2});
}

TEST(TopKTest, SmallestAlongAxis0) {
  Node node = MakeNode("TopK", 2, 2);
  node.attributes.Set("axis", int64_t{0});
  node.attributes.Set("largest", int64_t{0});
  std::vector<Tensor> out = RunAll(node, 11, {TopKInput(), Int64s({1}, {2})});
  Expect<float>(out[0], {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  Expect<int64_t>(out[1], {2, 4}, {0, 0, 0, 0, 1, 1, 1, 1});
}

TEST(TopKTest, TiesKeepTheLowerIndexFirst) {
  Tensor x = Tensor::FromVector<int32_t>({6}, {3, 1, 3, 2, 1, 3});
  Node node = MakeNode("TopK", 2, 2);
  std::vector<Tensor> out = RunAll(node, 11, {x, Int64s({1}, {4})});
  Expect<int32_t>(out[0], {4}, {3, 3, 3, 2});
  Expect<int64_t>(out[1], {4}, {0, 2, 5, 3});
  node.attributes.Set("largest", int64_t{0});
  out = RunAll(node, 11, {x, Int64s({1}, {3})});
  Expect<int32_t>(out[0], {3}, {1, 1, 2});
  Expect<int64_t>(out[1], {3}, {1, 4, 3});
}

TEST(TopKTest, NaNRanksAboveEveryNumber) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = Floats({5}, {1, nan, inf, nan, -1});
  Node node = MakeNode("TopK", 2, 2);
  std::vector<Tensor> out = RunAll(node, 11, {x, Int64s({1}, {3})});
  EXPECT_EQ(out[1].ToVector<int64_t>(), (std::vector<int64_t>{1, 3, 2}));
  EXPECT_TRUE(std::isnan(out[0].ToVector<float>()[0]));
  node.attributes.Set("largest", int64_t{0});
  out = RunAll(node, 11, {x, Int64s({1}, {5})});
  EXPECT_EQ(out[1].ToVector<int64_t>(), (std::vector<int64_t>{4, 0, 2, 1, 3}));
}

TEST(TopKTest, Opset1TakesKAsAttribute) {
  Node node = MakeNode("TopK", 1, 2);
  node.attributes.Set("k", int64_t{1});
  std::vector<Tensor> out = RunAll(node, 1, {TopKInput()});
  Expect<float>(out[0], {3, 1}, {3, 7, 11});
  Expect<int64_t>(out[1], {3, 1}, {3, 3, 0});
  ExpectError(RunStatus(MakeNode("TopK", 1, 2), 1, {TopKInput()}), StatusCode::kInvalidModel,
              "attribute k is missing");
}

TEST(TopKTest, ZeroK) {
  std::vector<Tensor> out = RunAll(MakeNode("TopK", 2, 2), 11, {TopKInput(), Int64s({1}, {0})});
  EXPECT_EQ(out[0].shape(), (Shape{3, 0}));
  EXPECT_EQ(out[1].shape(), (Shape{3, 0}));
}

TEST(TopKTest, Errors) {
  Node node = MakeNode("TopK", 2, 2);
  ExpectError(RunStatus(node, 11, {TopKInput(), Int64s({1}, {5})}), StatusCode::kInvalidModel,
              "k is 5, must be in [0, 4]");
  EXPECT_EQ(RunStatus(node, 11, {TopKInput(), Int64s({1}, {-1})}).code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus(node, 11, {TopKInput(), Int64s({2}, {1, 1})}).code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus(node, 11, {Tensor(DType::kFloat16, {4}), Int64s({1}, {1})}).code(),
            StatusCode::kUnsupported);
  Node smallest = MakeNode("TopK", 2, 2);
  smallest.attributes.Set("largest", int64_t{0});
  EXPECT_EQ(RunStatus(smallest, 10, {TopKInput(), Int64s({1}, {1})}).code(),
            StatusCode::kInvalidModel);  // largest came with opset 11
  EXPECT_EQ(RunStatus(MakeNode("TopK", 2, 1), 11, {TopKInput(), Int64s({1}, {1})}).code(),
            StatusCode::kInvalidModel);  // Indices is a required output
}

TEST(TopKTest, KThatIsNotConstantIsRefusedAtLoad) {
  const OpDef* def = OpRegistry::Global().Find("", "TopK");
  ASSERT_NE(def, nullptr);
  Node node = MakeNode("TopK", 2, 2);
  const TensorType x{DType::kFloat32, {3, 4}};
  const TensorType k{DType::kInt64, {1}};
  InferContext ctx{node, 11, {&x, &k}, {nullptr, nullptr}, {}};
  ExpectError(InferNodeTypes(*def, ctx), StatusCode::kUnsupported, "input 1 (K) is not constant");
}

}  // namespace
}  // namespace collage
