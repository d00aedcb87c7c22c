// The com.microsoft GELU activations ONNX Runtime's transformer optimizer fuses from their
// spelled-out subgraphs (before opset 20 made Gelu an ONNX op):
//   Gelu(X)            0.5 x (1 + erf(x / sqrt 2))
//   BiasGelu(A, B)     Gelu(A + B), B of shape (last dim of A)
//   FastGelu(X, bias?) 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), x = X (+ bias)
//   QuickGelu(X)       x sigmoid(alpha x), alpha 1.702 by default
// The spec's FastGelu function body writes sqrt(2/pi) as 0.797885 and 0.044715 sqrt(2/pi) as
// 0.035677; ONNX Runtime's kernel computes with the constants themselves, as here. Values are
// computed in double and rounded once to float.
#include <cmath>
#include <string>

#include "ops/elementwise.h"
#include "ops/gelu_math.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

constexpr char kMicrosoftDomain[] = "com.microsoft";
constexpr float kDefaultQuickGeluAlpha = 1.702f;

// The bias input (BiasGelu's B, FastGelu's bias): one value per element of the last axis.
Status CheckBias(const InferContext& ctx, size_t bias) {
  const Shape& x = ctx.input_type(0).shape;
  const Shape& b = ctx.input_type(bias).shape;
  if (x.empty() || b != Shape{x.back()}) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "the bias (input {}) has shape {}; it must be 1-D of the input's last dim "
                   "(input shape {})",
                   bias, ShapeToString(b), ShapeToString(x));
  }
  return RequireSameDType(ctx, 0, bias);
}

Status InferGelu(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 0, {DType::kFloat32}));
  if (ctx.node.op_type == "BiasGelu" && !ctx.has_input(1)) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "the bias B (input 1) is required");
  }
  if (ctx.has_input(1)) COLLAGE_RETURN_IF_ERROR(CheckBias(ctx, 1));
  ctx.output_types[0] = ctx.input_type(0);
  return Status::Ok();
}

Status RunGelu(KernelContext& ctx) {
  const std::string& op = ctx.node.op_type;
  const Tensor& x = ctx.inputs[0];
  const float* in = x.data_as<float>();
  const float* bias = ctx.has_input(1) ? ctx.inputs[1].data_as<float>() : nullptr;
  const int64_t hidden = bias != nullptr ? ctx.inputs[1].num_elements() : 1;
  float* out = ctx.outputs[0].data_as<float>();
  const double alpha = ctx.attributes().GetFloat("alpha", kDefaultQuickGeluAlpha);
  const bool fast = op == "FastGelu";
  const bool quick = op == "QuickGelu";
  ParallelFor(x.num_elements(), 20, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      // The biased input is rounded to float first, as the unfused Add would.
      float biased = in[i];
      if (bias != nullptr) biased += bias[i % hidden];
      const double v = biased;
      double y;
      if (quick) {
        y = v / (1.0 + std::exp(-alpha * v));
      } else {
        y = fast ? GeluTanh(v) : GeluExact(v);
      }
      out[i] = static_cast<float>(y);
    }
  });
  return Status::Ok();
}

}  // namespace

void RegisterGeluContribOps(OpRegistry& registry) {
  registry.Register(
      OpDef{"Gelu", kMicrosoftDomain, OpKind::kElementwise, 1, 1, 1, 1, InferGelu, RunGelu});
  registry.Register(
      OpDef{"QuickGelu", kMicrosoftDomain, OpKind::kElementwise, 1, 1, 1, 1, InferGelu, RunGelu});
  registry.Register(
      OpDef{"BiasGelu", kMicrosoftDomain, OpKind::kBroadcast, 2, 2, 1, 1, InferGelu, RunGelu});
  registry.Register(
      OpDef{"FastGelu", kMicrosoftDomain, OpKind::kBroadcast, 1, 2, 1, 1, InferGelu, RunGelu});
}

}  // namespace collage
