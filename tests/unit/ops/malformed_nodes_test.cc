// Nodes a malformed model can contain: each must be refused with a clear error, never crash
// or compute out of bounds.
#include <gtest/gtest.h>

#include <climits>

#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

Node MakeNode(const std::string& op, int num_outputs, Attributes attributes = {}) {
  Node node;
  node.name = "bad_" + op;
  node.op_type = op;
  node.attributes = std::move(attributes);
  for (int i = 0; i < num_outputs; ++i) node.outputs.push_back(i);
  return node;
}

TEST(MalformedNodesTest, TileRepeatsThatOverflowAreRefused) {
  Node tile = MakeNode("Tile", 1);
  auto out = RunReferenceNode(tile, 13,
                              {Tensor(DType::kUInt8, {1000}),
                               Tensor::FromVector<int64_t>({1}, {2066035336255469781})});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidModel) << out.status().ToString();
  EXPECT_NE(out.status().message().find("bad_Tile"), std::string::npos);
}

TEST(MalformedNodesTest, SplitSizesThatOverflowAreRefused) {
  Node split = MakeNode("Split", 3);
  auto out = RunReferenceNode(
      split, 13,
      {Tensor(DType::kUInt8, {4}), Tensor::FromVector<int64_t>({3}, {INT64_MAX, INT64_MAX, 6})});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidModel) << out.status().ToString();
}

TEST(MalformedNodesTest, ScalarsHaveNoAxis) {
  Node split = MakeNode("Split", 2);
  auto out = RunReferenceNode(split, 13, {Tensor::Scalar<float>(1.f)});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidModel) << out.status().ToString();
  Node softmax = MakeNode("Softmax", 1);
  out = RunReferenceNode(softmax, 13, {Tensor::Scalar<float>(1.f)});
  EXPECT_FALSE(out.ok());
}

TEST(MalformedNodesTest, HugeConvGeometryIsRefusedNotWrapped) {
  Attributes attributes;
  attributes.Set("dilations", std::vector<int64_t>{int64_t{1} << 62});
  Node conv = MakeNode("Conv", 1, attributes);
  auto out = RunReferenceNode(conv, 13, {Tensor(DType::kFloat32, {1, 1, 10}),
                                         Tensor(DType::kFloat32, {1, 1, 5})});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidModel) << out.status().ToString();
  EXPECT_NE(out.status().message().find("dilations"), std::string::npos);
}

TEST(MalformedNodesTest, UnnamedRequiredOutputIsRefused) {
  Attributes attributes;
  attributes.Set("kernel_shape", std::vector<int64_t>{2, 2});
  Node pool = MakeNode("MaxPool", 2, attributes);
  pool.outputs[0] = kNoValue;  // Y missing, Indices wanted
  auto out = RunReferenceNode(pool, 13, {Tensor(DType::kFloat32, {1, 1, 4, 4})});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidModel) << out.status().ToString();
  EXPECT_NE(out.status().message().find("required output 0"), std::string::npos);
}

TEST(MalformedNodesTest, MissingRequiredInputIsRefused) {
  Node add = MakeNode("Add", 1);
  auto out = RunReferenceNode(add, 13, {Tensor(), Tensor(DType::kFloat32, {2})});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidModel) << out.status().ToString();
}

}  // namespace
}  // namespace collage

namespace collage {
namespace {

// Attributes the spec rules out, refused rather than computed.
TEST(MalformedNodesTest, SpecInvalidAttributesAreRefused) {
  Attributes transpose_attributes;
  transpose_attributes.Set("strides", std::vector<int64_t>{2, 2});
  transpose_attributes.Set("output_padding", std::vector<int64_t>{2, 0});
  auto transpose = RunReferenceNode(
      MakeNode("ConvTranspose", 1, transpose_attributes), 13,
      {Tensor(DType::kFloat32, {1, 1, 3, 3}), Tensor(DType::kFloat32, {1, 1, 2, 2})});
  EXPECT_EQ(transpose.status().code(), StatusCode::kInvalidModel) << transpose.status().ToString();
  EXPECT_NE(transpose.status().message().find("output_padding 2"), std::string::npos)
      << transpose.status().message();

  Attributes pool_attributes;
  pool_attributes.Set("kernel_shape", std::vector<int64_t>{2, 2});
  pool_attributes.Set("pads", std::vector<int64_t>{3, 0, 0, 0});
  for (const char* op : {"MaxPool", "AveragePool"}) {
    auto pool = RunReferenceNode(MakeNode(op, 1, pool_attributes), 13,
                                 {Tensor(DType::kFloat32, {1, 1, 4, 4})});
    EXPECT_EQ(pool.status().code(), StatusCode::kInvalidModel) << op << pool.status().ToString();
    EXPECT_NE(pool.status().message().find("smaller than the window"), std::string::npos)
        << pool.status().message();
  }

  // Opset 18 Split needs its sizes or num_outputs; before, equal parts were implied.
  auto split = RunReferenceNode(MakeNode("Split", 2), 18, {Tensor(DType::kFloat32, {4})});
  EXPECT_EQ(split.status().code(), StatusCode::kInvalidModel) << split.status().ToString();
  EXPECT_NE(split.status().message().find("num_outputs"), std::string::npos);
  EXPECT_TRUE(RunReferenceNode(MakeNode("Split", 2), 13, {Tensor(DType::kFloat32, {4})}).ok());
}

}  // namespace
}  // namespace collage
