// The quantized ops' reference kernels beyond the ONNX node cases and the single-op cases
// checked against ONNX Runtime (tests/conformance): rounding and saturation at the edges, the
// per-axis and blocked layouts of scales, and every refusal naming what it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

Node MakeNode(const std::string& op_type, int num_inputs, Attributes attributes = {},
              int num_outputs = 1, const std::string& domain = "") {
  Node node;
  node.name = "q0";
  node.op_type = op_type;
  node.domain = domain;
  node.attributes = std::move(attributes);
  for (int i = 0; i < num_inputs; ++i) node.inputs.push_back(i);
  for (int i = 0; i < num_outputs; ++i) node.outputs.push_back(num_inputs + i);
  return node;
}

Attributes Attrs(std::initializer_list<std::pair<std::string, Attribute>> values) {
  Attributes a;
  for (const auto& [k, v] : values) a.Set(k, v);
  return a;
}

TEST(QuantizeLinearTest, RoundsHalfToEvenAndSaturates) {
  const Node node = MakeNode("QuantizeLinear", 3);
  const Tensor x = Tensor::FromVector<float>(
      {10}, {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 126.5f, 127.5f, -128.5f, 1e9f, -1e9f});
  auto y = RunReferenceNode(node, 13, {x, Tensor::Scalar<float>(1.0f), Tensor::Scalar<int8_t>(0)});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ((*y)[0].ToVector<int>(), (std::vector<int>{0, 2, 2, 0, -2, 126, 127, -128, 127, -128}));
}

TEST(QuantizeLinearTest, DividesByTheScaleAndAddsTheZeroPoint) {
  const Node node = MakeNode("QuantizeLinear", 3);
  // 0.3 / 0.1 is 2.9999998 in float: division, as the spec and ONNX Runtime compute it.
  auto y = RunReferenceNode(node, 13,
                            {Tensor::FromVector<float>({3}, {0.3f, -1.0f, 25.0f}),
                             Tensor::Scalar<float>(0.1f), Tensor::Scalar<uint8_t>(128)});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ((*y)[0].ToVector<int>(), (std::vector<int>{131, 118, 255}));
}

TEST(QuantizeLinearTest, NaNGivesZeroAsACastDoes) {
  const Node node = MakeNode("QuantizeLinear", 3);
  auto y = RunReferenceNode(node, 13,
                            {Tensor::FromVector<float>({1}, {std::nanf("")}),
                             Tensor::Scalar<float>(1.0f), Tensor::Scalar<uint8_t>(7)});
  ASSERT_TRUE(y.ok());
  EXPECT_EQ((*y)[0].ToVector<int>()[0], 0);
}

TEST(QuantizeLinearTest, PerAxisWithANegativeAxisUsesOneScalePerIndex) {
  const Node node = MakeNode("QuantizeLinear", 3, Attrs({{"axis", int64_t{-1}}}));
  auto y = RunReferenceNode(
      node, 13,
      {Tensor::FromVector<float>({2, 2}, {1, 1, 2, 2}),
       Tensor::FromVector<float>({2}, {0.5f, 1.0f}), Tensor::FromVector<int8_t>({2}, {0, 10})});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ((*y)[0].ToVector<int>(), (std::vector<int>{2, 11, 4, 12}));
}

TEST(QuantizeLinearTest, BlockedScalesCoverBlocksAlongTheAxis) {
  // x [1, 5] along axis 1 in blocks of 2: scales [1, 3] for elements {0,1}, {2,3}, {4}.
  const Node node =
      MakeNode("QuantizeLinear", 3, Attrs({{"axis", int64_t{1}}, {"block_size", int64_t{2}}}));
  auto y = RunReferenceNode(node, 21,
                            {Tensor::FromVector<float>({1, 5}, {4, 4, 4, 4, 4}),
                             Tensor::FromVector<float>({1, 3}, {1, 2, 4}),
                             Tensor::FromVector<int16_t>({1, 3}, {0, 0, 100})});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ((*y)[0].dtype(), DType::kInt16);
  EXPECT_EQ((*y)[0].ToVector<int>(), (std::vector<int>{4, 4, 2, 2, 101}));
}

TEST(QuantizeLinearTest, RefusesWhatItDoesNotCompute) {
  const Tensor x = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  // A per-axis scale before opset 13.
  auto old = RunReferenceNode(MakeNode("QuantizeLinear", 2), 10,
                              {x, Tensor::FromVector<float>({3}, {1, 1, 1})});
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("scalar before opset 13"), std::string::npos);
  // A scale of the wrong length along the axis.
  auto wrong = RunReferenceNode(MakeNode("QuantizeLinear", 2), 13,
                                {x, Tensor::FromVector<float>({2}, {1, 1})});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(wrong.status().message().find("3 values"), std::string::npos);
  // A zero point whose shape is not the scale's.
  auto zp =
      RunReferenceNode(MakeNode("QuantizeLinear", 3), 13,
                       {x, Tensor::Scalar<float>(1), Tensor::FromVector<uint8_t>({2}, {0, 0})});
  ASSERT_FALSE(zp.ok());
  EXPECT_NE(zp.status().message().find("zero point"), std::string::npos);
  // An output type collage has no tensors of (opset 21's output_dtype: int4 is 22).
  auto int4 =
      RunReferenceNode(MakeNode("QuantizeLinear", 2, Attrs({{"output_dtype", int64_t{22}}})), 21,
                       {x, Tensor::Scalar<float>(1)});
  ASSERT_FALSE(int4.ok());
  EXPECT_EQ(int4.status().code(), StatusCode::kUnsupported);
  // A blocked scale of the wrong shape.
  auto blocked = RunReferenceNode(
      MakeNode("QuantizeLinear", 2, Attrs({{"axis", int64_t{1}}, {"block_size", int64_t{2}}})), 21,
      {x, Tensor::FromVector<float>({2, 1}, {1, 1})});
  ASSERT_FALSE(blocked.ok());
  EXPECT_NE(blocked.status().message().find("must have shape 2x2"), std::string::npos)
      << blocked.status().message();
}

TEST(QuantizeLinearTest, HostileParametersGiveErrorsOrSaturatedValues) {
  const Tensor x = Tensor::FromVector<float>({1, 3}, {-1, 0, 1});
  // A block size past any dim is one block (no overflow rounding it up), a negative one an error.
  auto huge = RunReferenceNode(
      MakeNode("QuantizeLinear", 2,
               Attrs({{"axis", int64_t{1}}, {"block_size", std::numeric_limits<int64_t>::max()}})),
      21, {x, Tensor::FromVector<float>({1, 1}, {0.5f})});
  ASSERT_TRUE(huge.ok()) << huge.status().ToString();
  EXPECT_EQ((*huge)[0].ToVector<int>(), (std::vector<int>{0, 0, 2}));  // uint8, zero point 0
  auto negative = RunReferenceNode(
      MakeNode("QuantizeLinear", 2, Attrs({{"axis", int64_t{1}}, {"block_size", int64_t{-2}}})), 21,
      {x, Tensor::FromVector<float>({1, 1}, {0.5f})});
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidModel);
  // A scale of 0 divides into infinities and NaN: saturated, NaN to 0, no crash.
  auto zero = RunReferenceNode(MakeNode("QuantizeLinear", 3), 13,
                               {x, Tensor::Scalar<float>(0.0f), Tensor::Scalar<int8_t>(0)});
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ((*zero)[0].ToVector<int>(), (std::vector<int>{-128, 0, 127}));
  // An axis past the rank.
  auto axis = RunReferenceNode(MakeNode("QuantizeLinear", 2, Attrs({{"axis", int64_t{5}}})), 13,
                               {x, Tensor::FromVector<float>({3}, {1, 1, 1})});
  ASSERT_FALSE(axis.ok());
}

TEST(DequantizeLinearTest, SubtractsTheZeroPointThenScales) {
  auto y = RunReferenceNode(MakeNode("DequantizeLinear", 3), 13,
                            {Tensor::FromVector<uint8_t>({4}, {0, 3, 128, 255}),
                             Tensor::Scalar<float>(2.0f), Tensor::Scalar<uint8_t>(128)});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ((*y)[0].ToVector<float>(), (std::vector<float>{-256, -250, 0, 254}));
}

TEST(DequantizeLinearTest, AnInt32InputNeedsAZeroPointOfZero) {
  const Node node = MakeNode("DequantizeLinear", 3);
  auto ok = RunReferenceNode(node, 13,
                             {Tensor::FromVector<int32_t>({2}, {-1000000, 7}),
                              Tensor::Scalar<float>(0.5f), Tensor::Scalar<int32_t>(0)});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)[0].ToVector<float>(), (std::vector<float>{-500000, 3.5f}));
  auto bad = RunReferenceNode(node, 13,
                              {Tensor::FromVector<int32_t>({1}, {5}), Tensor::Scalar<float>(1.0f),
                               Tensor::Scalar<int32_t>(3)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("zero point of 0"), std::string::npos);
}

TEST(DequantizeLinearTest, RefusesAFloat16ScaleByName) {
  auto y = RunReferenceNode(MakeNode("DequantizeLinear", 2), 21,
                            {Tensor::FromVector<int8_t>({2}, {1, 2}), Tensor(DType::kFloat16, {})});
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(y.status().message().find("float16"), std::string::npos);
}

TEST(DynamicQuantizeLinearTest, CoversTheRangeAndZero) {
  const Node node = MakeNode("DynamicQuantizeLinear", 1, {}, 3);
  auto r = RunReferenceNode(node, 11, {Tensor::FromVector<float>({4}, {1, 2, 3, 4})});
  ASSERT_TRUE(r.ok());
  EXPECT_FLOAT_EQ((*r)[1].ToVector<float>()[0], 4.0f / 255);
  EXPECT_EQ((*r)[2].ToVector<int>()[0], 0);
  const float scale = 4.0f / 255;
  const int two = static_cast<int>(std::nearbyint(2.0f / scale));  // 127.5 in exact arithmetic
  EXPECT_EQ((*r)[0].ToVector<int>(), (std::vector<int>{64, two, 191, 255}));
  // All zeros: the spec's scale of 1/255, zero point 0 (NaNs left out of the range).
  auto zeros = RunReferenceNode(node, 11, {Tensor::FromVector<float>({2}, {0, std::nanf("")})});
  ASSERT_TRUE(zeros.ok());
  EXPECT_FLOAT_EQ((*zeros)[1].ToVector<float>()[0], 1.0f / 255);
  EXPECT_EQ((*zeros)[0].ToVector<int>(), (std::vector<int>{0, 0}));
}

TEST(IntegerProductsTest, MatMulIntegerIsExactBeyondFloatPrecision) {
  // 2048 products of 255 * 127 sum to 66,324,480: past float's 24 bits, exact in int32.
  std::vector<uint8_t> a(2048, 255);
  std::vector<int8_t> b(2048, 127);
  auto y = RunReferenceNode(
      MakeNode("MatMulInteger", 2), 10,
      {Tensor::FromVector<uint8_t>({1, 2048}, a), Tensor::FromVector<int8_t>({2048, 1}, b)});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ((*y)[0].ToVector<int64_t>()[0], int64_t{2048} * 255 * 127);
}

TEST(IntegerProductsTest, QLinearConvPadsWithTheZeroPointAndRequantizes) {
  // 1x1x1x2 input, 3-wide kernel with one pad each side: the padding counts as x's zero point.
  const Node node = MakeNode("QLinearConv", 8, Attrs({{"pads", std::vector<int64_t>{0, 1, 0, 1}}}));
  auto y = RunReferenceNode(
      node, 10,
      {Tensor::FromVector<uint8_t>({1, 1, 1, 2}, {12, 14}), Tensor::Scalar<float>(0.5f),
       Tensor::Scalar<uint8_t>(10), Tensor::FromVector<int8_t>({1, 1, 1, 3}, {1, 1, 1}),
       Tensor::Scalar<float>(1.0f), Tensor::Scalar<int8_t>(0), Tensor::Scalar<float>(0.25f),
       Tensor::Scalar<uint8_t>(3)});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  // Sums over (x - 10): 2 + 4 = 6 at both positions; 6 * 0.5 / 0.25 = 12, + 3.
  EXPECT_EQ((*y)[0].ToVector<int>(), (std::vector<int>{15, 15}));
}

TEST(QLinearContribTest, QLinearAddDequantizesAddsAndQuantizes) {
  const Node node = MakeNode("QLinearAdd", 8, {}, 1, "com.microsoft");
  auto y =
      RunReferenceNode(node, 13,
                       {Tensor::FromVector<uint8_t>({2}, {10, 20}), Tensor::Scalar<float>(0.5f),
                        Tensor::Scalar<uint8_t>(0), Tensor::FromVector<uint8_t>({1}, {4}),
                        Tensor::Scalar<float>(1.0f), Tensor::Scalar<uint8_t>(2),
                        Tensor::Scalar<float>(0.5f), Tensor::Scalar<uint8_t>(1)});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  // (5 + 2) / 0.5 + 1 = 15, (10 + 2) / 0.5 + 1 = 25.
  EXPECT_EQ((*y)[0].ToVector<int>(), (std::vector<int>{15, 25}));
}

TEST(QLinearContribTest, MalformedInputListsAreInvalidModels) {
  // QLinearConcat takes Y_scale, Y_zero_point and whole (X, X_scale, X_zero_point) triples.
  const Node concat =
      MakeNode("QLinearConcat", 6, Attrs({{"axis", int64_t{0}}}), 1, "com.microsoft");
  auto y = RunReferenceNode(concat, 13,
                            {Tensor::Scalar<float>(1.0f), Tensor::Scalar<uint8_t>(0),
                             Tensor::FromVector<uint8_t>({1}, {1}), Tensor::Scalar<float>(1.0f),
                             Tensor::Scalar<uint8_t>(0), Tensor::FromVector<uint8_t>({1}, {2})});
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), StatusCode::kInvalidModel);
  // QGemm with an output scale but no output zero point.
  const Node gemm = MakeNode("QGemm", 8, {}, 1, "com.microsoft");
  auto g =
      RunReferenceNode(gemm, 13,
                       {Tensor::FromVector<uint8_t>({1, 2}, {1, 2}), Tensor::Scalar<float>(1.0f),
                        Tensor::Scalar<uint8_t>(0), Tensor::FromVector<int8_t>({2, 1}, {1, 1}),
                        Tensor::Scalar<float>(1.0f), Tensor::Scalar<int8_t>(0), Tensor(),
                        Tensor::Scalar<float>(1.0f)});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("y_zero_point"), std::string::npos) << g.status().message();
}

TEST(QLinearContribTest, MixedQuantizedTypesAreRefusedByName) {
  const Node node = MakeNode("QLinearAdd", 8, {}, 1, "com.microsoft");
  auto y = RunReferenceNode(node, 13,
                            {Tensor::FromVector<uint8_t>({1}, {1}), Tensor::Scalar<float>(1.0f),
                             Tensor::Scalar<uint8_t>(0), Tensor::FromVector<uint8_t>({1}, {1}),
                             Tensor::Scalar<float>(1.0f), Tensor::Scalar<uint8_t>(0),
                             Tensor::Scalar<float>(1.0f), Tensor::Scalar<int8_t>(0)});
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(y.status().message().find("only one quantized type"), std::string::npos);
}

}  // namespace
}  // namespace collage
