// Quantized convolutions on XNNPACK's integer operators: int8 activations with weights scaled
// per channel or per tensor (qc8), uint8 activations with per-tensor weights (qu8), with and
// without Relu, bias (int32 dequantized or float), strides, groups and depthwise, and the
// QLinearConv form, each within one quantization step of the reference kernels on any CPU;
// what XNNPACK has no operator for is not offered.
#include "quantized_conv_test_util.h"

namespace collage::testing {
namespace {

TEST(XnnpackInt8Conv, QdqConvolutionsMatchTheReferenceWithinOneStep) {
  const std::vector<QuantCase> cases = {
      {DType::kInt8, {1, 8, 9, 9}, {16, 8, 3, 3}, 1, 1, 1, true, "int32", false},
      {DType::kInt8, {1, 8, 9, 9}, {16, 8, 3, 3}, 1, 2, 1, false, "float", true},
      {DType::kInt8, {2, 16, 7, 7}, {16, 1, 3, 3}, 16, 1, 1, true, "int32", true},  // depthwise
      {DType::kInt8, {1, 32, 6, 6}, {8, 32, 1, 1}, 1, 1, 0, true, "", false},       // 1x1
      {DType::kInt8, {1, 12, 8, 8}, {12, 4, 3, 3}, 3, 1, 1, true, "int32", false},  // grouped
      {DType::kUInt8, {1, 8, 9, 9}, {16, 8, 3, 3}, 1, 1, 1, false, "int32", true},
      {DType::kUInt8, {2, 16, 7, 7}, {16, 1, 3, 3}, 16, 2, 1, false, "", false},
  };
  for (const QuantCase& c : cases) {
    SCOPED_TRACE(std::string(DTypeName(c.act)) + " " + ShapeToString(c.x) + " " +
                 ShapeToString(c.w));
    ExpectWithinOneStep(QdqConv(c), "xnnpack", c.relu ? "qdq_conv_relu" : "qdq_conv");
  }
}

TEST(XnnpackInt8Conv, QLinearConvMatchesTheReferenceWithinOneStep) {
  GraphBuilder b("qlinear_conv", 13, 6);
  std::vector<int8_t> w(16 * 8 * 9);
  for (size_t i = 0; i < w.size(); ++i) {
    w[i] = static_cast<int8_t>(static_cast<int>((i * 53) % 255) - 127);  // full range
  }
  std::vector<int32_t> bias(16);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<int32_t>(i * 31) - 200;
  const ValueId y = b.Node(
      "QLinearConv",
      {b.Input("x", DType::kInt8, {1, 8, 10, 10}), b.Scalar<float>("xs", 0.05f),
       b.Scalar<int8_t>("xz", -7), b.Constant<int8_t>("w", {16, 8, 3, 3}, w),
       b.Constant<float>("ws", {16}, std::vector<float>(16, 0.003f)),
       b.Constant<int8_t>("wz", {16}, std::vector<int8_t>(16, 0)), b.Scalar<float>("ys", 0.1f),
       b.Scalar<int8_t>("yz", 10), b.Constant<int32_t>("b", {16}, bias)},
      {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 1}}});
  b.Output(y);
  ExpectWithinOneStep(BuildOrFail(std::move(b)), "xnnpack", "qlinear_conv");
}

// A convolution of `x` by weights of shape `w`, per-channel scales, no bias, no Relu.
QuantCase Plain(DType activations, Shape x, Shape w) {
  QuantCase c;
  c.act = activations;
  c.x = std::move(x);
  c.w = std::move(w);
  return c;
}

TEST(XnnpackInt8Conv, FormsWithoutAnXnnpackOperatorAreNotOffered) {
  // uint8 activations with per-channel weight scales (the quantizer's operator format).
  const QuantCase per_channel_uint8 = Plain(DType::kUInt8, {1, 8, 9, 9}, {16, 8, 3, 3});
  EXPECT_TRUE(CandidatesOf(QdqConv(per_channel_uint8), "xnnpack", "qdq_conv").empty());
  // Weights with a zero point.
  const QuantCase int8_input = Plain(DType::kInt8, {1, 8, 9, 9}, {16, 8, 3, 3});
  EXPECT_FALSE(CandidatesOf(QdqConv(int8_input), "xnnpack", "qdq_conv").empty());
  EXPECT_TRUE(CandidatesOf(QdqConv(int8_input, 3), "xnnpack", "qdq_conv").empty());
}

}  // namespace
}  // namespace collage::testing
