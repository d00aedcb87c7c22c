// Gather, GatherElements, OneHot.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

Node MakeNode(const std::string& op, size_t num_inputs) {
  Node node;
  node.name = "n1";
  node.op_type = op;
  for (size_t i = 0; i < num_inputs; ++i) node.inputs.push_back(static_cast<ValueId>(i));
  node.outputs.push_back(100);
  return node;
}

Tensor Iota(Shape shape) {
  std::vector<float> v(static_cast<size_t>(NumElements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return Tensor::FromVector<float>(shape, v);
}

Tensor RunOne(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  auto result = RunReferenceNode(node, opset, inputs);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? result->at(0) : Tensor();
}

Status RunStatus(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  return RunReferenceNode(node, opset, inputs).status();
}

void ExpectFloats(const Tensor& t, const Shape& shape, const std::vector<float>& values) {
  EXPECT_EQ(t.shape(), shape);
  EXPECT_EQ(t.ToVector<float>(), values);
}

// x = [[0 1 2] [3 4 5] [6 7 8]]
TEST(GatherTest, Axis0WithNegativeAndInt32Indices) {
  Tensor indices = Tensor::FromVector<int32_t>({2}, {2, -3});
  ExpectFloats(RunOne(MakeNode("Gather", 2), 13, {Iota({3, 3}), indices}), {2, 3},
               {6, 7, 8, 0, 1, 2});
}

TEST(GatherTest, Axis1With2dIndices) {
  Node node = MakeNode("Gather", 2);
  node.attributes.Set("axis", int64_t{-1});
  Tensor indices = Tensor::FromVector<int64_t>({2, 2}, {0, 2, 1, 1});
  // out[i][j][k] = x[i][indices[j][k]]
  ExpectFloats(RunOne(node, 13, {Iota({3, 3}), indices}), {3, 2, 2},
               {0, 2, 1, 1, 3, 5, 4, 4, 6, 8, 7, 7});
}

TEST(GatherTest, ScalarIndexDropsTheAxis) {
  Node node = MakeNode("Gather", 2);
  node.attributes.Set("axis", int64_t{1});
  ExpectFloats(RunOne(node, 13, {Iota({2, 3, 2}), Tensor::Scalar<int64_t>(-1)}), {2, 2},
               {4, 5, 10, 11});
  Tensor b = Tensor::FromVector<bool>({3}, {true, false, true});
  Tensor out = RunOne(MakeNode("Gather", 2), 13, {b, Tensor::Scalar<int64_t>(1)});
  EXPECT_EQ(out.shape(), Shape{});
  EXPECT_EQ(out.ToVector<int>(), std::vector<int>{0});
}

TEST(GatherTest, Errors) {
  Status s = RunStatus(MakeNode("Gather", 2), 13, {Iota({3, 3}), Tensor::Scalar<int64_t>(3)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("out of range"), std::string::npos) << s.message();
  Node node = MakeNode("Gather", 2);
  node.attributes.Set("axis", int64_t{2});
  s = RunStatus(node, 13, {Iota({3, 3}), Tensor::Scalar<int64_t>(0)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("Gather node 'n1'"), std::string::npos) << s.message();
  EXPECT_EQ(RunStatus(MakeNode("Gather", 2), 13, {Iota({3}), Tensor::Scalar<float>(0)}).code(),
            StatusCode::kUnsupported);
}

TEST(GatherElementsTest, SpecExamples) {
  Node node = MakeNode("GatherElements", 2);
  node.attributes.Set("axis", int64_t{1});
  Tensor data = Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4});
  Tensor indices = Tensor::FromVector<int64_t>({2, 2}, {0, 0, 1, 0});
  ExpectFloats(RunOne(node, 13, {data, indices}), {2, 2}, {1, 1, 4, 3});

  Node axis0 = MakeNode("GatherElements", 2);
  Tensor data3 = Tensor::FromVector<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor idx3 = Tensor::FromVector<int32_t>({2, 3}, {1, 2, 0, 2, 0, 0});
  ExpectFloats(RunOne(axis0, 13, {data3, idx3}), {2, 3}, {4, 8, 3, 7, 2, 3});
  // Negative indices; indices smaller than data off the axis.
  Tensor neg = Tensor::FromVector<int64_t>({1, 2}, {-1, -3});
  ExpectFloats(RunOne(axis0, 13, {data3, neg}), {1, 2}, {7, 2});
}

TEST(GatherElementsTest, Errors) {
  Node node = MakeNode("GatherElements", 2);
  Tensor data = Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(RunStatus(node, 13, {data, Tensor::FromVector<int64_t>({1, 2}, {2, 0})}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(RunStatus(node, 13, {data, Tensor::FromVector<int64_t>({1, 3}, {0, 0, 0})}).code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus(node, 13, {data, Tensor::FromVector<int64_t>({2}, {0, 0})}).code(),
            StatusCode::kInvalidModel);
}

TEST(OneHotTest, LastAxisWithNegativeAndOutOfRangeIndices) {
  Tensor indices = Tensor::FromVector<int64_t>({3}, {0, -1, 5});
  Tensor depth = Tensor::Scalar<int64_t>(3);
  Tensor values = Tensor::FromVector<float>({2}, {-1, 1});
  ExpectFloats(RunOne(MakeNode("OneHot", 3), 11, {indices, depth, values}), {3, 3},
               {1, -1, -1, -1, -1, 1, -1, -1, -1});
  // Before opset 11 a negative index selects nothing.
  ExpectFloats(RunOne(MakeNode("OneHot", 3), 9, {indices, depth, values}), {3, 3},
               {1, -1, -1, -1, -1, -1, -1, -1, -1});
}

TEST(OneHotTest, Axis0FloatIndicesAndDepth) {
  Node node = MakeNode("OneHot", 3);
  node.attributes.Set("axis", int64_t{0});
  Tensor indices = Tensor::FromVector<float>({2}, {1.0f, 0.0f});
  Tensor depth = Tensor::Scalar<float>(2.0f);
  Tensor values = Tensor::FromVector<int32_t>({2}, {0, 7});
  Tensor out = RunOne(node, 11, {indices, depth, values});
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  // out[d][i] = on where indices[i] == d.
  EXPECT_EQ(out.ToVector<int32_t>(), (std::vector<int32_t>{0, 7, 7, 0}));
}

TEST(OneHotTest, Errors) {
  Tensor values = Tensor::FromVector<float>({2}, {0, 1});
  Tensor indices = Tensor::FromVector<int64_t>({2}, {0, 1});
  // float16 indices cannot be converted.
  Status s = RunStatus(MakeNode("OneHot", 3),
                       11, {Tensor(DType::kFloat16, {2}), Tensor::Scalar<int64_t>(2), values});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus(MakeNode("OneHot", 3), 11, {indices, Tensor::Scalar<int64_t>(0), values})
                .code(),
            StatusCode::kInvalidModel);
  Node node = MakeNode("OneHot", 3);
  node.attributes.Set("axis", int64_t{2});
  EXPECT_EQ(RunStatus(node, 11, {indices, Tensor::Scalar<int64_t>(2), values}).code(),
            StatusCode::kInvalidModel);
}

}  // namespace
}  // namespace collage
