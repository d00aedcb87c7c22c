// com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization: the residual Add
// and the LayerNormalization (or RMSNorm) after it, which ONNX Runtime's transformer optimizer
// fuses in every BERT layer. Per the contrib op spec:
//   sum = input + skip (+ bias)                         over the last axis of size hidden
//   output = LayerNorm(sum) * gamma (+ beta)            SkipLayerNormalization, epsilon 1e-12
//   output = sum / sqrt(mean(sum^2) + eps) * gamma      SkipSimplifiedLayerNormalization
// Inputs: SkipLayerNormalization (input, skip, gamma, beta?, bias?), the simplified one
// (input, skip, gamma, bias?). skip has input's shape, or its trailing dims ((1, S, H) or
// (S, H) for a (B, S, H) input): it repeats over the leading ones. gamma, beta and bias are
// (hidden). Outputs: output; mean and inv_std_var (float32, input's shape with the last dim
// 1); input_skip_bias_sum (input's shape). An RMS normalization has no mean: the simplified
// op's mean output is refused rather than given a value ONNX Runtime leaves unwritten.
#include <string>

#include "ops/elementwise.h"
#include "ops/op_helpers.h"
#include "ops/row_normalize.h"

namespace collage {
namespace {

constexpr char kMicrosoftDomain[] = "com.microsoft";
constexpr float kDefaultEpsilon = 1e-12f;

// Where each optional input sits (-1: the op has none).
struct SkipNormLayout {
  RowNorm norm;
  int beta;
  int bias;
};

SkipNormLayout LayoutOf(const Node& node) {
  if (node.op_type == "SkipSimplifiedLayerNormalization") return {RowNorm::kRms, -1, 3};
  return {RowNorm::kLayer, 3, 4};
}

bool Has(const InferContext& ctx, int input) {
  return input >= 0 && ctx.has_input(static_cast<size_t>(input));
}

// skip repeats over input's leading dims: its shape, less leading 1s, is input's trailing dims.
bool SkipBroadcasts(const Shape& skip, const Shape& input) {
  size_t first = 0;
  while (first + 1 < skip.size() && skip[first] == 1) ++first;
  const size_t rank = skip.size() - first;
  if (rank == 0 || rank > input.size()) return false;
  for (size_t i = 0; i < rank; ++i) {
    if (skip[first + i] != input[input.size() - rank + i]) return false;
  }
  return true;
}

Status InferSkipNorm(InferContext& ctx) {
  const SkipNormLayout layout = LayoutOf(ctx.node);
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, i, {DType::kFloat32}));
  }
  if (!ctx.has_input(1) || !ctx.has_input(2)) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "skip (input 1) and gamma (input 2) are required");
  }
  const Shape& x = ctx.input_type(0).shape;
  if (x.size() < 2) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "input has shape {}; it must be (batch, sequence, hidden) or (tokens, hidden)",
                   ShapeToString(x));
  }
  const int64_t hidden = x.back();
  if (!SkipBroadcasts(ctx.input_type(1).shape, x)) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "skip has shape {}; it must be input's shape {} or its trailing dims",
                   ShapeToString(ctx.input_type(1).shape), ShapeToString(x));
  }
  const char* names[] = {"input", "skip", "gamma", "beta", "bias"};
  for (int i : {2, layout.beta, layout.bias}) {
    if (!Has(ctx, i)) continue;
    if (ctx.input_type(static_cast<size_t>(i)).shape != Shape{hidden}) {
      const char* name = i == layout.bias ? "bias" : names[i];
      return OpError(ctx.node, StatusCode::kInvalidModel, "{} (input {}) has shape {}, not ({})",
                     name, i, ShapeToString(ctx.input_type(static_cast<size_t>(i)).shape), hidden);
    }
  }
  if (layout.norm == RowNorm::kRms && ctx.node.outputs.size() > 1 &&
      ctx.node.outputs[1] != kNoValue) {
    return OpError(ctx.node, StatusCode::kUnsupported,
                   "output 1 (mean) is not supported: an RMS normalization subtracts no mean");
  }
  Shape stat_shape = x;
  stat_shape.back() = 1;
  ctx.output_types[0] = ctx.input_type(0);
  for (size_t i = 1; i < ctx.output_types.size(); ++i) {
    ctx.output_types[i] = i == 3 ? ctx.input_type(0) : TensorType{DType::kFloat32, stat_shape};
  }
  return Status::Ok();
}

Status RunSkipNorm(KernelContext& ctx) {
  const SkipNormLayout layout = LayoutOf(ctx.node);
  const Tensor& x = ctx.inputs[0];
  const int64_t hidden = x.shape().back();
  const int64_t rows = hidden > 0 ? x.num_elements() / hidden : 0;
  const int64_t skip_rows = hidden > 0 ? ctx.inputs[1].num_elements() / hidden : 0;
  const float* px = x.data_as<float>();
  const float* skip = ctx.inputs[1].data_as<float>();
  const float* gamma = ctx.inputs[2].data_as<float>();
  auto optional_input = [&](int i) -> const float* {
    return i >= 0 && ctx.has_input(static_cast<size_t>(i))
               ? ctx.inputs[static_cast<size_t>(i)].data_as<float>()
               : nullptr;
  };
  const float* beta = optional_input(layout.beta);
  const float* bias = optional_input(layout.bias);
  auto optional_output = [&](size_t i) -> float* {
    return ctx.outputs.size() > i && !ctx.outputs[i].empty() ? ctx.outputs[i].data_as<float>()
                                                             : nullptr;
  };
  float* y = ctx.outputs[0].data_as<float>();
  float* mean_out = optional_output(1);
  float* inv_std_out = optional_output(2);
  float* sum_out = optional_output(3);
  const float epsilon = ctx.attributes().GetFloat("epsilon", kDefaultEpsilon);
  ParallelFor(rows, 8 * hidden, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* in = px + r * hidden;
      const float* sk = skip + (r % skip_rows) * hidden;
      // The sum is rounded to float, as the input_skip_bias_sum output holds it.
      float* sum = sum_out != nullptr ? sum_out + r * hidden : y + r * hidden;
      for (int64_t j = 0; j < hidden; ++j) {
        float v = in[j] + sk[j];
        if (bias != nullptr) v += bias[j];
        sum[j] = v;
      }
      const RowStatistics stats =
          NormalizeRow(layout.norm, sum, hidden, epsilon, gamma, beta, y + r * hidden);
      if (mean_out != nullptr) mean_out[r] = stats.mean;
      if (inv_std_out != nullptr) inv_std_out[r] = stats.inv_std;
    }
  });
  return Status::Ok();
}

}  // namespace

void RegisterSkipLayerNormOps(OpRegistry& registry) {
  registry.Register(OpDef{"SkipLayerNormalization", kMicrosoftDomain, OpKind::kReduction, 3, 5, 1,
                          4, InferSkipNorm, RunSkipNorm});
  registry.Register(OpDef{"SkipSimplifiedLayerNormalization", kMicrosoftDomain, OpKind::kReduction,
                          3, 4, 1, 4, InferSkipNorm, RunSkipNorm});
}

}  // namespace collage
