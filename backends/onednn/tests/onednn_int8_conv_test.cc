// Quantized convolutions on oneDNN's integer kernels: both forms ONNX Runtime's quantizer
// writes, against the reference kernels within one quantization step of the output (the
// reference rounds each op of the QDQ form on its own), and a whole block placed on oneDNN
// when its weights' DequantizeLinear sits at the top of the model and its input's is shared.
#include "collage/available_backends.h"
#include "ir/simplify.h"
#include "quantized_conv_test_util.h"
#include "runtime/placement.h"

namespace collage::testing {
namespace {

// Whether oneDNN runs int8 activations exactly here (VNNI or AMX; the backend's version names
// the instruction set it dispatches to).
bool HasVnni() {
  const std::string v = BackendNamed("onednn").version();
  return v.find("vnni") != std::string::npos || v.find("bf16") != std::string::npos ||
         v.find("amx") != std::string::npos;
}

TEST(OnednnInt8Conv, QdqConvolutionsMatchTheReferenceWithinOneStep) {
  std::vector<QuantCase> cases = {
      {DType::kUInt8, {1, 8, 9, 9}, {16, 8, 3, 3}, 1, 1, 1, true, "int32", false},
      {DType::kUInt8, {1, 8, 9, 9}, {16, 8, 3, 3}, 1, 2, 1, false, "float", true},
      {DType::kUInt8, {2, 16, 7, 7}, {16, 1, 3, 3}, 16, 1, 1, true, "int32", true},  // depthwise
      {DType::kUInt8, {1, 32, 6, 6}, {8, 32, 1, 1}, 1, 1, 0, true, "", false},       // 1x1
  };
  if (HasVnni()) {  // int8 activations: exact with VNNI only
    cases.push_back({DType::kInt8, {1, 8, 9, 9}, {16, 8, 3, 3}, 1, 2, 1, false, "float", true});
    cases.push_back({DType::kInt8, {2, 16, 7, 7}, {16, 1, 3, 3}, 16, 1, 1, true, "int32", true});
  }
  for (const QuantCase& c : cases) {
    SCOPED_TRACE(std::string(DTypeName(c.act)) + " " + ShapeToString(c.x) + " " +
                 ShapeToString(c.w));
    ExpectWithinOneStep(QdqConv(c), "onednn", c.relu ? "qdq_conv_relu" : "qdq_conv");
  }
}

TEST(OnednnInt8Conv, QLinearConvMatchesTheReferenceWithinOneStep) {
  GraphBuilder b("qlinear_conv", 13, 6);
  std::vector<int8_t> w(16 * 8 * 9);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<int8_t>(static_cast<int>((i * 53) % 127) - 63);
  std::vector<int32_t> bias(16);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<int32_t>(i * 31) - 200;
  const ValueId y = b.Node(
      "QLinearConv",
      {b.Input("x", DType::kUInt8, {1, 8, 10, 10}), b.Scalar<float>("xs", 0.05f),
       b.Scalar<uint8_t>("xz", 120), b.Constant<int8_t>("w", {16, 8, 3, 3}, w),
       b.Constant<float>("ws", {16}, std::vector<float>(16, 0.003f)),
       b.Constant<int8_t>("wz", {16}, std::vector<int8_t>(16, 0)), b.Scalar<float>("ys", 0.1f),
       b.Scalar<uint8_t>("yz", 100), b.Constant<int32_t>("b", {16}, bias)},
      {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  b.Output(y);
  ExpectWithinOneStep(BuildOrFail(std::move(b)), "onednn", "qlinear_conv");
}

TEST(OnednnInt8Conv, WithoutVnniOnlyExactFormsAreOffered) {
  if (HasVnni()) GTEST_SKIP() << "this CPU has VNNI: every form is exact";
  // int8 activations (oneDNN halves the weights), and full-range weights (int16 pair sums
  // saturate): not offered.
  QuantCase int8_input;
  int8_input.act = DType::kInt8;
  int8_input.x = {1, 8, 9, 9};
  int8_input.w = {16, 8, 3, 3};
  EXPECT_TRUE(CandidatesOf(QdqConv(int8_input), "onednn", "qdq_conv").empty());
  GraphBuilder b("full_range", 13, 8);
  const ValueId y =
      b.Node("QLinearConv", {b.Input("x", DType::kUInt8, {1, 4, 5, 5}),
                             b.Scalar<float>("xs", 0.05f), b.Scalar<uint8_t>("xz", 120),
                             b.Constant<int8_t>("w", {4, 4, 1, 1}, std::vector<int8_t>(16, 127)),
                             b.Scalar<float>("ws", 0.01f), b.Scalar<int8_t>("wz", 0),
                             b.Scalar<float>("ys", 0.1f), b.Scalar<uint8_t>("yz", 100)});
  b.Output(y);
  EXPECT_TRUE(CandidatesOf(BuildOrFail(std::move(b)), "onednn", "qlinear_conv").empty());
}

TEST(OnednnInt8Conv, WeightsWithAZeroPointAreNotOffered) {
  // oneDNN's integer convolutions take symmetric weights only.
  QuantCase c;
  c.act = DType::kUInt8;
  c.x = {1, 8, 9, 9};
  c.w = {16, 8, 3, 3};
  EXPECT_TRUE(CandidatesOf(QdqConv(c, 3), "onednn", "qdq_conv").empty());
}

TEST(OnednnInt8Conv, ABlockWithSharedAndEarlyDequantizesRunsOnOnednn) {
  // The residual Add reads the DequantizeLinear the convolution reads: simplified, each
  // gets its own, and the convolution's group (whose weights' DequantizeLinear is node 0)
  // is placed whole.
  GraphBuilder b("block", 13, 7);
  std::vector<int8_t> w(8 * 8 * 9);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<int8_t>(static_cast<int>((i * 29) % 120) - 60);
  const ValueId dq_w =
      b.Node("DequantizeLinear",
             {b.Constant<int8_t>("w", {8, 8, 3, 3}, w), b.Scalar<float>("ws", 0.01f)}, {}, "dq_w");
  const ValueId x = b.Input("x", DType::kUInt8, {1, 8, 6, 6});
  const ValueId xs = b.Scalar<float>("xs", 0.05f);
  const ValueId xz = b.Scalar<uint8_t>("xz", 128);
  const ValueId dq_x = b.Node("DequantizeLinear", {x, xs, xz}, {}, "dq_x");
  const ValueId conv =
      b.Node("Conv", {dq_x, dq_w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv");
  const ValueId q = b.Node("QuantizeLinear", {conv, xs, xz}, {}, "q");
  const ValueId sum =
      b.Node("Add", {b.Node("DequantizeLinear", {q, xs, xz}, {}, "dq_q"), dq_x}, {}, "add");
  b.Output(b.Node("QuantizeLinear", {sum, xs, xz}, {}, "out"));
  Graph graph = BuildOrFail(std::move(b));
  ASSERT_TRUE(SimplifyGraph(graph).ok());
  auto placement = PlaceOnSingleBackend(graph, BackendNamed("onednn"), GlobalBackendRegistry());
  ASSERT_TRUE(placement.ok()) << placement.status().ToString();
  bool conv_on_onednn = false;
  for (const PlacedGroup& g : placement->groups) {
    for (NodeId n : g.nodes.Nodes()) {
      if (graph.node(n).op_type == "Conv")
        conv_on_onednn = g.backend == "onednn" && g.rule == "qdq_conv";
    }
  }
  EXPECT_TRUE(conv_on_onednn);
}

}  // namespace
}  // namespace collage::testing
