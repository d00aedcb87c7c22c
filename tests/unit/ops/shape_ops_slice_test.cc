// Slice, Split, Concat.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Node MakeNode(const std::string& op, size_t num_inputs, size_t num_outputs = 1) {
  Node node;
  node.name = "n1";
  node.op_type = op;
  for (size_t i = 0; i < num_inputs; ++i) node.inputs.push_back(static_cast<ValueId>(i));
  for (size_t i = 0; i < num_outputs; ++i) node.outputs.push_back(static_cast<ValueId>(100 + i));
  return node;
}

// 0, 1, 2, ... in row-major order.
Tensor Iota(Shape shape) {
  std::vector<int32_t> v(static_cast<size_t>(NumElements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i);
  return Tensor::FromVector<int32_t>(shape, v);
}

Tensor Ints(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

std::vector<Tensor> RunAll(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  auto result = RunReferenceNode(node, opset, inputs);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : std::vector<Tensor>(node.outputs.size());
}

Tensor RunOne(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  return RunAll(node, opset, inputs).at(0);
}

StatusCode RunCode(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  return RunReferenceNode(node, opset, inputs).status().code();
}

void ExpectInts(const Tensor& t, const Shape& shape, const std::vector<int32_t>& values) {
  EXPECT_EQ(t.shape(), shape);
  EXPECT_EQ(t.ToVector<int32_t>(), values);
}

// ---- Slice ----

// x = [[0 1 2 3] [4 5 6 7] [8 9 10 11]]
TEST(SliceTest, StartsEndsAxesSteps) {
  Tensor x = Iota({3, 4});
  ExpectInts(RunOne(MakeNode("Slice", 3), 13, {x, Ints({1, 0}), Ints({2, 3})}), {1, 3}, {4, 5, 6});
  // Axes given, step 2 along axis 1, end past the dim is clamped.
  ExpectInts(RunOne(MakeNode("Slice", 5), 13, {x, Ints({1}), Ints({100}), Ints({1}), Ints({2})}),
             {3, 2}, {1, 3, 5, 7, 9, 11});
  // Negative axis and negative start/end: last two rows, all but the last column.
  ExpectInts(RunOne(MakeNode("Slice", 4), 13, {x, Ints({-2, 0}), Ints({kMax, -1}), Ints({-2, -1})}),
             {2, 3}, {4, 5, 6, 8, 9, 10});
}

TEST(SliceTest, NegativeSteps) {
  Tensor x = Iota({3, 4});
  // Reverse every row: start -1, end INT64_MIN.
  ExpectInts(RunOne(MakeNode("Slice", 5), 13, {x, Ints({-1}), Ints({kMin}), Ints({1}), Ints({-1})}),
             {3, 4}, {3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8});
  // Rows 2 and 0 (step -2 from a start past the end, clamped to 2), columns 3..1 exclusive.
  ExpectInts(RunOne(MakeNode("Slice", 5), 13,
                    {x, Ints({10, 3}), Ints({kMin, 1}), Ints({0, 1}), Ints({-2, -1})}),
             {2, 2}, {11, 10, 3, 2});
  // Start before end with a negative step: empty.
  ExpectInts(RunOne(MakeNode("Slice", 5), 13, {x, Ints({0}), Ints({3}), Ints({1}), Ints({-1})}),
             {3, 0}, {});
}

TEST(SliceTest, OutOfBoundsStartsGiveEmpty) {
  Tensor x = Iota({3, 4});
  ExpectInts(RunOne(MakeNode("Slice", 4), 13, {x, Ints({5}), Ints({10}), Ints({1})}), {3, 0}, {});
  ExpectInts(RunOne(MakeNode("Slice", 4), 13, {x, Ints({-100}), Ints({1}), Ints({0})}), {1, 4},
             {0, 1, 2, 3});
}

TEST(SliceTest, Int32IndicesAndOtherDtypes) {
  Tensor x = Tensor::FromVector<bool>({4}, {true, false, true, true});
  Tensor starts = Tensor::FromVector<int32_t>({1}, {1});
  Tensor ends = Tensor::FromVector<int32_t>({1}, {3});
  Tensor out = RunOne(MakeNode("Slice", 3), 13, {x, starts, ends});
  EXPECT_EQ(out.dtype(), DType::kBool);
  EXPECT_EQ(out.ToVector<int>(), (std::vector<int>{0, 1}));
  Tensor d = Tensor::FromVector<double>({3}, {1.5, 2.5, 3.5});
  EXPECT_EQ(RunOne(MakeNode("Slice", 5), 13, {d, Ints({-1}), Ints({kMin}), Ints({0}), Ints({-1})})
                .ToVector<double>(),
            (std::vector<double>{3.5, 2.5, 1.5}));
}

TEST(SliceTest, AttributesBeforeOpset10) {
  Node node = MakeNode("Slice", 1);
  node.attributes.Set("starts", std::vector<int64_t>{1, -1});
  node.attributes.Set("ends", std::vector<int64_t>{kMax, kMax});
  node.attributes.Set("axes", std::vector<int64_t>{0, 1});
  ExpectInts(RunOne(node, 9, {Iota({3, 4})}), {2, 1}, {7, 11});
}

TEST(SliceTest, Errors) {
  Tensor x = Iota({3, 4});
  auto r = RunReferenceNode(MakeNode("Slice", 4), 13, {x, Ints({0}), Ints({1}), Ints({2})});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(r.status().message().find("Slice node 'n1'"), std::string::npos);
  EXPECT_EQ(RunCode(MakeNode("Slice", 5), 13, {x, Ints({0}), Ints({1}), Ints({0}), Ints({0})}),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunCode(MakeNode("Slice", 3), 13, {x, Ints({0, 0}), Ints({1})}),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunCode(MakeNode("Slice", 4), 13, {x, Ints({0, 0}), Ints({1, 1}), Ints({1, -1})}),
            StatusCode::kInvalidModel);

  // starts computed at run time.
  const OpDef* def = OpRegistry::Global().Find("", "Slice");
  ASSERT_NE(def, nullptr);
  Node node = MakeNode("Slice", 3);
  Tensor ends = Ints({1});
  TensorType tx{x.dtype(), x.shape()}, ts{DType::kInt64, {1}}, te{DType::kInt64, {1}};
  InferContext ctx{node, 13, {&tx, &ts, &te}, {&x, nullptr, &ends}, {}};
  Status s = InferNodeTypes(*def, ctx);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("starts"), std::string::npos) << s.message();
}

// ---- Split ----

// x = [[0 1 2 3 4 5] [6 7 8 9 10 11]]
TEST(SplitTest, AttributeBeforeOpset13) {
  Node node = MakeNode("Split", 1, 2);
  node.attributes.Set("axis", int64_t{1});
  node.attributes.Set("split", std::vector<int64_t>{2, 4});
  auto outs = RunAll(node, 11, {Iota({2, 6})});
  ExpectInts(outs[0], {2, 2}, {0, 1, 6, 7});
  ExpectInts(outs[1], {2, 4}, {2, 3, 4, 5, 8, 9, 10, 11});
}

TEST(SplitTest, InputFromOpset13AndEqualParts) {
  Node node = MakeNode("Split", 2, 3);
  node.attributes.Set("axis", int64_t{-1});
  auto outs = RunAll(node, 13, {Iota({2, 6}), Ints({1, 0, 5})});
  ExpectInts(outs[0], {2, 1}, {0, 6});
  ExpectInts(outs[1], {2, 0}, {});
  ExpectInts(outs[2], {2, 5}, {1, 2, 3, 4, 5, 7, 8, 9, 10, 11});

  Node equal = MakeNode("Split", 1, 3);
  equal.attributes.Set("axis", int64_t{1});
  outs = RunAll(equal, 13, {Iota({2, 6})});
  ExpectInts(outs[0], {2, 2}, {0, 1, 6, 7});
  ExpectInts(outs[2], {2, 2}, {4, 5, 10, 11});
  // Default axis 0.
  outs = RunAll(MakeNode("Split", 1, 2), 13, {Iota({2, 6})});
  ExpectInts(outs[1], {1, 6}, {6, 7, 8, 9, 10, 11});
}

TEST(SplitTest, NumOutputsOpset18UnevenLastChunk) {
  Node node = MakeNode("Split", 1, 3);
  node.attributes.Set("num_outputs", int64_t{3});
  auto outs = RunAll(node, 18, {Iota({7})});
  ExpectInts(outs[0], {3}, {0, 1, 2});
  ExpectInts(outs[1], {3}, {3, 4, 5});
  ExpectInts(outs[2], {1}, {6});
  Node four = MakeNode("Split", 1, 4);
  four.attributes.Set("num_outputs", int64_t{4});
  outs = RunAll(four, 18, {Iota({9})});
  EXPECT_EQ(outs[2].shape(), (Shape{3}));
  EXPECT_EQ(outs[3].shape(), (Shape{0}));
}

TEST(SplitTest, Errors) {
  Node node = MakeNode("Split", 2, 2);
  node.attributes.Set("axis", int64_t{1});
  EXPECT_EQ(RunCode(node, 13, {Iota({2, 6}), Ints({2, 3})}), StatusCode::kInvalidModel);
  EXPECT_EQ(RunCode(node, 13, {Iota({2, 6}), Ints({6})}), StatusCode::kInvalidModel);
  EXPECT_EQ(RunCode(MakeNode("Split", 1, 4), 13, {Iota({2, 6})}), StatusCode::kInvalidModel);
  node.attributes.Set("axis", int64_t{2});
  auto r = RunReferenceNode(node, 13, {Iota({2, 6}), Ints({3, 3})});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(r.status().message().find("Split node 'n1'"), std::string::npos);
  Node many = MakeNode("Split", 1, 4);
  many.attributes.Set("num_outputs", int64_t{4});
  EXPECT_EQ(RunCode(many, 18, {Iota({5})}), StatusCode::kInvalidModel);  // 2,2,2,-1
}

// ---- Concat ----

TEST(ConcatTest, AxesAndDtypes) {
  Node node = MakeNode("Concat", 3);
  node.attributes.Set("axis", int64_t{-1});
  ExpectInts(RunOne(node, 13, {Iota({2, 1}), Iota({2, 2}), Iota({2, 0})}), {2, 3},
             {0, 0, 1, 1, 2, 3});
  node.attributes.Set("axis", int64_t{0});
  Tensor a = Tensor::FromVector<int8_t>({1, 2}, {1, 2});
  Tensor b = Tensor::FromVector<int8_t>({2, 2}, {3, 4, 5, 6});
  Tensor c = Tensor::FromVector<int8_t>({1, 2}, {7, 8});
  Tensor out = RunOne(node, 13, {a, b, c});
  EXPECT_EQ(out.shape(), (Shape{4, 2}));
  EXPECT_EQ(out.ToVector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  Node one = MakeNode("Concat", 1);
  one.attributes.Set("axis", int64_t{0});
  ExpectInts(RunOne(one, 13, {Iota({3})}), {3}, {0, 1, 2});
}

TEST(ConcatTest, Errors) {
  Node node = MakeNode("Concat", 2);
  node.attributes.Set("axis", int64_t{1});
  EXPECT_EQ(RunCode(node, 13, {Iota({2, 1}), Iota({3, 1})}), StatusCode::kInvalidModel);
  EXPECT_EQ(RunCode(node, 13, {Iota({2, 1}), Iota({2, 1, 1})}), StatusCode::kInvalidModel);
  EXPECT_EQ(RunCode(node, 13, {Iota({2, 1}), Tensor(DType::kFloat32, {2, 1})}),
            StatusCode::kInvalidModel);
  node.attributes.Set("axis", int64_t{2});
  auto r = RunReferenceNode(node, 13, {Iota({2, 1}), Iota({2, 1})});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(r.status().message().find("Concat node 'n1'"), std::string::npos);
}

}  // namespace
}  // namespace collage
