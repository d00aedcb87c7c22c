// Transpose, Expand, Tile, Pad, Trilu.
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
  for (size_t i = 0; i < num_inputs; ++i) {
    node.inputs.push_back(static_cast<ValueId>(i));
  }
  node.outputs.push_back(100);
  return node;
}

// 0, 1, 2, ... in row-major order.
Tensor Iota(Shape shape) {
  std::vector<int64_t> v(static_cast<size_t>(NumElements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i);
  return Tensor::FromVector<int64_t>(shape, v);
}

Tensor Ints(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

Tensor RunOne(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  auto result = RunReferenceNode(node, opset, inputs);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? result->at(0) : Tensor();
}

Status RunStatus(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  return RunReferenceNode(node, opset, inputs).status();
}

void ExpectInts(const Tensor& t, const Shape& shape, const std::vector<int64_t>& values) {
  EXPECT_EQ(t.shape(), shape);
  EXPECT_EQ(t.ToVector<int64_t>(), values);
}

// ---- Transpose ----

TEST(TransposeTest, DefaultReversesDims) {
  ExpectInts(RunOne(MakeNode("Transpose", 1), 13, {Iota({2, 3})}), {3, 2}, {0, 3, 1, 4, 2, 5});
}

TEST(TransposeTest, PermAndHalfDtype) {
  Node node = MakeNode("Transpose", 1);
  node.attributes.Set("perm", std::vector<int64_t>{1, 0, 2});
  // x[i][j][k] = 4i + 2j + k, shape 2x2x2 -> out[j][i][k]
  ExpectInts(RunOne(node, 13, {Iota({2, 2, 2})}), {2, 2, 2}, {0, 1, 4, 5, 2, 3, 6, 7});
  // float16 moves as 16-bit patterns.
  Tensor h(DType::kFloat16, {2, 1, 2});
  uint16_t* p = h.data_as<uint16_t>();
  for (uint16_t i = 0; i < 4; ++i) p[i] = static_cast<uint16_t>(0x3c00 + i);
  Tensor out = RunOne(node, 13, {h});
  EXPECT_EQ(out.dtype(), DType::kFloat16);
  EXPECT_EQ(out.shape(), (Shape{1, 2, 2}));
  EXPECT_EQ(out.data_as<uint16_t>()[2], 0x3c02);
}

TEST(TransposeTest, BadPerm) {
  Node node = MakeNode("Transpose", 1);
  node.attributes.Set("perm", std::vector<int64_t>{0, 0});
  EXPECT_EQ(RunStatus(node, 13, {Iota({2, 3})}).code(), StatusCode::kInvalidModel);
  node.attributes.Set("perm", std::vector<int64_t>{0, 2});
  Status s = RunStatus(node, 13, {Iota({2, 3})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("Transpose node 'n1'"), std::string::npos) << s.message();
  node.attributes.Set("perm", std::vector<int64_t>{0});
  EXPECT_EQ(RunStatus(node, 13, {Iota({2, 3})}).code(), StatusCode::kInvalidModel);
}

// ---- Expand ----

TEST(ExpandTest, BroadcastsBothWays) {
  ExpectInts(RunOne(MakeNode("Expand", 2), 13, {Iota({3, 1}), Ints({2, 1, 2})}), {2, 3, 2},
             {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2});
  // A 1 (or a shorter shape) keeps the input dims.
  ExpectInts(RunOne(MakeNode("Expand", 2), 13, {Iota({2, 3}), Ints({1, 1})}), {2, 3},
             {0, 1, 2, 3, 4, 5});
  Tensor b = Tensor::FromVector<bool>({1}, {true});
  Tensor out = RunOne(MakeNode("Expand", 2), 13, {b, Ints({3})});
  EXPECT_EQ(out.ToVector<int>(), (std::vector<int>{1, 1, 1}));
}

TEST(ExpandTest, Errors) {
  EXPECT_EQ(RunStatus(MakeNode("Expand", 2), 13, {Iota({2, 3}), Ints({4, 3})}).code(),
            StatusCode::kInvalidModel);
  const OpDef* def = OpRegistry::Global().Find("", "Expand");
  Node node = MakeNode("Expand", 2);
  TensorType tx{DType::kInt64, {3}}, ts{DType::kInt64, {1}};
  Tensor x = Iota({3});
  InferContext ctx{node, 13, {&tx, &ts}, {&x, nullptr}, {}};
  EXPECT_EQ(InferNodeTypes(*def, ctx).code(), StatusCode::kUnsupported);
}

// ---- Tile ----

TEST(TileTest, Repeats) {
  ExpectInts(RunOne(MakeNode("Tile", 2), 13, {Iota({2, 2}), Ints({1, 2})}), {2, 4},
             {0, 1, 0, 1, 2, 3, 2, 3});
  ExpectInts(RunOne(MakeNode("Tile", 2), 13, {Iota({2, 2}), Ints({2, 1})}), {4, 2},
             {0, 1, 2, 3, 0, 1, 2, 3});
  ExpectInts(RunOne(MakeNode("Tile", 2), 13, {Iota({2}), Ints({0})}), {0}, {});
  EXPECT_EQ(RunStatus(MakeNode("Tile", 2), 13, {Iota({2, 2}), Ints({2})}).code(),
            StatusCode::kInvalidModel);
}

// ---- Pad ----

// x = [[0 1 2] [3 4 5]]
TEST(PadTest, ConstantModeWithValueInput) {
  Tensor value = Tensor::Scalar<int64_t>(9);
  ExpectInts(RunOne(MakeNode("Pad", 3), 13, {Iota({2, 3}), Ints({1, 0, 0, 1}), value}), {3, 4},
             {9, 9, 9, 9, 0, 1, 2, 9, 3, 4, 5, 9});
  // Without a value: zeros. Negative pads crop.
  ExpectInts(RunOne(MakeNode("Pad", 2), 13, {Iota({2, 3}), Ints({0, -1, 0, 1})}), {2, 3},
             {1, 2, 0, 4, 5, 0});
}

TEST(PadTest, ReflectEdgeWrap) {
  Node node = MakeNode("Pad", 2);
  node.attributes.Set("mode", std::string("reflect"));
  ExpectInts(RunOne(node, 13, {Iota({1, 3}), Ints({0, 2, 0, 3})}), {1, 8},
             {2, 1, 0, 1, 2, 1, 0, 1});
  node.attributes.Set("mode", std::string("edge"));
  ExpectInts(RunOne(node, 13, {Iota({2, 2}), Ints({1, 1, 0, 1})}), {3, 4},
             {0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3});
  node.attributes.Set("mode", std::string("wrap"));
  ExpectInts(RunOne(node, 19, {Iota({1, 3}), Ints({0, 2, 0, 4})}), {1, 9},
             {1, 2, 0, 1, 2, 0, 1, 2, 0});
  // Reflect after cropping reflects the cropped tensor: [1 2] padded by 1 on the left.
  node.attributes.Set("mode", std::string("reflect"));
  ExpectInts(RunOne(node, 13, {Iota({1, 3}), Ints({0, 1, 0, -1})}), {1, 3}, {1, 0, 1});
}

TEST(PadTest, AxesInputOpset18) {
  Tensor value = Tensor::Scalar<int64_t>(-1);
  ExpectInts(RunOne(MakeNode("Pad", 4), 18, {Iota({2, 2}), Ints({1, 0}), value, Ints({-1})}),
             {2, 3}, {-1, 0, 1, -1, 2, 3});
}

TEST(PadTest, AttributesBeforeOpset11) {
  Node node = MakeNode("Pad", 1);
  node.attributes.Set("pads", std::vector<int64_t>{0, 1, 0, 0});
  node.attributes.Set("value", 1.5f);
  Tensor x = Tensor::FromVector<float>({1, 2}, {5, 6});
  Tensor out = RunOne(node, 2, {x});
  EXPECT_EQ(out.shape(), (Shape{1, 3}));
  EXPECT_EQ(out.ToVector<float>(), (std::vector<float>{1.5f, 5, 6}));
}

TEST(PadTest, Errors) {
  EXPECT_EQ(RunStatus(MakeNode("Pad", 2), 13, {Iota({2, 3}), Ints({1, 1})}).code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus(MakeNode("Pad", 2), 13, {Iota({2, 3}), Ints({0, -2, 0, -2})}).code(),
            StatusCode::kInvalidModel);
  Node node = MakeNode("Pad", 2);
  node.attributes.Set("mode", std::string("mirror"));
  EXPECT_EQ(RunStatus(node, 13, {Iota({2, 3}), Ints({0, 0, 0, 0})}).code(),
            StatusCode::kInvalidModel);
  node.attributes.Set("mode", std::string("edge"));
  EXPECT_EQ(RunStatus(node, 13, {Iota({2, 0}), Ints({0, 1, 0, 0})}).code(),
            StatusCode::kInvalidModel);
  Status s = RunStatus(MakeNode("Pad", 4), 18, {Iota({2, 2}), Ints({1, 0}), Tensor(), Ints({2})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("Pad node 'n1'"), std::string::npos) << s.message();
}

// ---- Trilu ----

// x = [[0 1 2] [3 4 5] [6 7 8]]
TEST(TriluTest, UpperAndLowerWithK) {
  ExpectInts(RunOne(MakeNode("Trilu", 1), 14, {Iota({3, 3})}), {3, 3}, {0, 1, 2, 0, 4, 5, 0, 0, 8});
  ExpectInts(RunOne(MakeNode("Trilu", 2), 14, {Iota({3, 3}), Tensor::Scalar<int64_t>(1)}), {3, 3},
             {0, 1, 2, 0, 0, 5, 0, 0, 0});
  Node lower = MakeNode("Trilu", 2);
  lower.attributes.Set("upper", int64_t{0});
  ExpectInts(RunOne(lower, 14, {Iota({3, 3}), Tensor::Scalar<int64_t>(-1)}), {3, 3},
             {0, 0, 0, 3, 0, 0, 6, 7, 0});
  // Batched, non-square, k beyond the matrix.
  ExpectInts(RunOne(lower, 14, {Iota({2, 1, 2}), Tensor::Scalar<int64_t>(0)}), {2, 1, 2},
             {0, 0, 2, 0});
  ExpectInts(RunOne(lower, 14, {Iota({2, 2}), Tensor::Scalar<int64_t>(5)}), {2, 2}, {0, 1, 2, 3});
  EXPECT_EQ(RunStatus(lower, 14, {Iota({3}), Tensor::Scalar<int64_t>(0)}).code(),
            StatusCode::kInvalidModel);
}

}  // namespace
}  // namespace collage
