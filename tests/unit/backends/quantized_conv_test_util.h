// Quantized convolutions for the tests of backends' integer kernels: the QDQ form ONNX
// Runtime's quantizer writes, built at any shape, and the check that a rule's group runs
// within one quantization step of the reference kernels (which round each op of the QDQ form
// on its own).
#pragma once

#include <random>
#include <string>
#include <vector>

#include "backend_test_util.h"
#include "collage/available_backends.h"
#include "ir/quantization_step.h"

namespace collage::testing {

struct QuantCase {
  DType act;
  Shape x;
  Shape w;
  int64_t group = 1;
  int64_t stride = 1;
  int64_t pad = 1;
  bool per_channel = true;
  std::string bias;  // "", "int32" (dequantized) or "float"
  bool relu = false;
};

inline ValueId ZeroPoint(GraphBuilder& b, const std::string& name, DType dtype, int value) {
  if (dtype == DType::kUInt8) return b.Scalar<uint8_t>(name, static_cast<uint8_t>(128 + value));
  return b.Scalar<int8_t>(name, static_cast<int8_t>(value));
}

// The weights' DequantizeLinear first (as quantizers write them, at the top), then
// x → DequantizeLinear → Conv [→ Relu] → QuantizeLinear.
inline Graph QdqConv(const QuantCase& c, int8_t weight_zero_point = 0) {
  GraphBuilder b("qdq_conv", 13, 5);
  const int64_t cout = c.w[0];
  std::vector<float> ws;
  for (int64_t i = 0; i < (c.per_channel ? cout : 1); ++i)
    ws.push_back(0.004f + 0.001f * static_cast<float>(i % 5));
  const Shape scale_shape = c.per_channel ? Shape{cout} : Shape{};
  // 7-bit weights (quantizers' reduce_range): exact on every CPU's integer kernels.
  std::vector<int8_t> w(static_cast<size_t>(NumElements(c.w)));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<int8_t>(static_cast<int>((i * 37) % 127) - 63);
  const ValueId dq_w = b.Node(
      "DequantizeLinear",
      {b.Constant<int8_t>("w", c.w, w), b.Constant<float>("ws", scale_shape, ws),
       b.Constant<int8_t>("wz", scale_shape, std::vector<int8_t>(ws.size(), weight_zero_point))},
      {{"axis", int64_t{0}}}, "dq_w");
  const ValueId x = b.Input("x", c.act, c.x);
  const float x_scale = 0.05f;
  const ValueId dq_x =
      b.Node("DequantizeLinear", {x, b.Scalar<float>("xs", x_scale), ZeroPoint(b, "xz", c.act, 3)},
             {}, "dq_x");
  std::vector<ValueId> in{dq_x, dq_w};
  if (c.bias == "int32") {
    std::vector<int32_t> bias(static_cast<size_t>(cout));
    std::vector<float> bs;
    for (int64_t i = 0; i < cout; ++i)
      bias[static_cast<size_t>(i)] = static_cast<int32_t>(i * 97 - 300);
    for (float s : ws) bs.push_back(x_scale * s);
    in.push_back(
        b.Node("DequantizeLinear",
               {b.Constant<int32_t>("b", {cout}, bias), b.Constant<float>("bs", scale_shape, bs)},
               {{"axis", int64_t{0}}}, "dq_b"));
  } else if (c.bias == "float") {
    in.push_back(b.RandomNormal("b", {cout}, 0.3f));
  }
  ValueId y = b.Node("Conv", in,
                     {{"pads", std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad}},
                      {"strides", std::vector<int64_t>{c.stride, c.stride}},
                      {"group", c.group}},
                     "conv");
  if (c.relu) y = b.Node("Relu", {y}, {}, "relu");
  y = b.Node("QuantizeLinear", {y, b.Scalar<float>("ys", 0.2f), ZeroPoint(b, "yz", c.act, -5)}, {},
             "q");
  b.Output(y);
  return BuildOrFail(std::move(b));
}

// The group `rule` of `backend` offers on `graph` runs within one step of the reference.
inline void ExpectWithinOneStep(const Graph& graph, const std::string& backend,
                                const std::string& rule) {
  const std::vector<Candidate> offered = CandidatesOf(graph, backend, rule);
  ASSERT_EQ(offered.size(), 1u) << rule;
  const CompileRequest request = CompileRequest::For(graph, offered[0].nodes, rule, 1);
  auto runner = KernelRunner::Create(BackendNamed(backend), request, GlobalBackendRegistry());
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  std::mt19937 rng(11);
  std::vector<Tensor> inputs;
  for (ValueId in : request.inputs)
    inputs.push_back(RandomTensor(graph.value(in).type.dtype, graph.value(in).type.shape, rng));
  auto got = (*runner)->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  auto ref = RunReferenceGroup(request, inputs);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ(QuantizationStep(graph, request.outputs[0], &request.nodes), 1);
  EXPECT_TRUE(WithinQuantizationTolerance((*got)[0], (*ref)[0], 1))
      << rule << ": " << NormalizedError((*got)[0], (*ref)[0]);
}

}  // namespace collage::testing
