// QuantizeLinear, DequantizeLinear (opsets 10-21: per tensor, per axis from 13, blocked from
// 21; 8- and 16-bit integers) and DynamicQuantizeLinear: the conversions between float and
// quantized integer tensors (ops/quantize_math.h has the arithmetic).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/elementwise.h"
#include "ops/op_helpers.h"
#include "ops/quantize_math.h"

namespace collage {
namespace {

// Calls f(o, a, i, flat index, parameter index) for every element of a tensor, row by row
// ([outer, axis] rows of `inner` elements), in parallel when it is large.
template <typename F>
void ForEachQuantizedElement(const QuantGranularity& g, F&& f) {
  ParallelFor(g.outer * g.axis_dim, g.inner * 4, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t o = row / g.axis_dim;
      const int64_t a = row % g.axis_dim;
      for (int64_t i = 0; i < g.inner; ++i) f(row * g.inner + i, g.ParamIndex(o, a, i));
    }
  });
}

// Opset 21's block_size; 0 (per tensor or per axis) before.
int64_t BlockSize(int64_t opset, const Attributes& attributes) {
  return opset >= 21 ? attributes.GetInt("block_size", 0) : 0;
}

// A QuantizeLinear's or DequantizeLinear's scales and zero points (inputs 1 and 2) and how
// they line up with input 0.
struct LinearParams {
  QuantGranularity granularity;
  std::vector<float> scale;
  std::vector<float> zero_point;
};

StatusOr<LinearParams> ReadLinearParams(const KernelContext& ctx) {
  const Tensor& scale = ctx.inputs[1];
  LinearParams p;
  COLLAGE_ASSIGN_OR_RETURN(
      p.granularity,
      ReadQuantGranularity(ctx.node, ctx.opset, ctx.inputs[0].shape(), scale.shape(),
                           ctx.attributes().GetInt("axis", 1), BlockSize(ctx.opset, ctx.attributes())));
  p.scale = ScaleValues(scale);
  p.zero_point = ZeroPointValues(ctx.has_input(2) ? &ctx.inputs[2] : nullptr, scale.num_elements());
  return p;
}

// ---- QuantizeLinear ------------------------------------------------------------------------

// The output dtype: the zero point's, else opset 21's output_dtype attribute, else uint8.
StatusOr<DType> QuantizeOutputDType(const InferContext& ctx) {
  const int64_t attr = ctx.opset >= 21 ? ctx.attributes().GetInt("output_dtype", 0) : 0;
  if (ctx.has_input(2)) {
    const DType zp = ctx.input_type(2).dtype;
    if (attr != 0 && attr != static_cast<int64_t>(zp)) {
      return OpError(ctx.node, StatusCode::kInvalidModel,
                     "output_dtype {} differs from the zero point's dtype {}", attr, DTypeName(zp));
    }
    return zp;
  }
  return attr != 0 ? static_cast<DType>(attr) : DType::kUInt8;
}

Status InferQuantizeLinear(InferContext& ctx) {
  const DType x = ctx.input_type(0).dtype;
  if (x != DType::kFloat32 && x != DType::kInt32) {
    return OpError(ctx.node,
                   x == DType::kFloat16 || x == DType::kBFloat16 ? StatusCode::kUnsupported
                                                                 : StatusCode::kInvalidModel,
                   "input dtype {} is not supported (float32 and int32 are)", DTypeName(x));
  }
  COLLAGE_RETURN_IF_ERROR(RequireFloatScale(ctx, 1));
  COLLAGE_ASSIGN_OR_RETURN(const DType out, QuantizeOutputDType(ctx));
  if (!IsQuantizedDType(out)) {
    return OpError(ctx.node, StatusCode::kUnsupported,
                   "output dtype {} is not supported (uint8, int8, uint16, int16 are)",
                   DTypeName(out));
  }
  COLLAGE_RETURN_IF_ERROR(CheckZeroPoint(ctx, 2, 1, out));
  COLLAGE_RETURN_IF_ERROR(ReadQuantGranularity(ctx.node, ctx.opset, ctx.input_type(0).shape,
                                               ctx.input_type(1).shape,
                                               ctx.attributes().GetInt("axis", 1),
                                               BlockSize(ctx.opset, ctx.attributes()))
                              .status());
  ctx.output_types[0] = TensorType{out, ctx.input_type(0).shape};
  return Status::Ok();
}

template <typename Q, typename X>
void QuantizeTyped(const QuantGranularity& g, const X* x, const std::vector<float>& scale,
                   const std::vector<float>& zero_point, Q* y) {
  ForEachQuantizedElement(g, [&](int64_t idx, int64_t p) {
    const auto up = static_cast<size_t>(p);
    y[idx] = QuantizeValue<Q>(static_cast<float>(x[idx]), scale[up], zero_point[up]);
  });
}

Status RunQuantizeLinear(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(const LinearParams p, ReadLinearParams(ctx));
  Tensor& y = ctx.outputs[0];
  return DispatchQuantized(ctx.node, y.dtype(), [&](auto tag) {
    using Q = decltype(tag);
    if (x.dtype() == DType::kInt32) {
      QuantizeTyped<Q>(p.granularity, x.data_as<int32_t>(), p.scale, p.zero_point, y.data_as<Q>());
    } else {
      QuantizeTyped<Q>(p.granularity, x.data_as<float>(), p.scale, p.zero_point, y.data_as<Q>());
    }
  });
}

// ---- DequantizeLinear ----------------------------------------------------------------------

Status InferDequantizeLinear(InferContext& ctx) {
  const DType x = ctx.input_type(0).dtype;
  if (!IsQuantizedDType(x) && x != DType::kInt32) {
    return OpError(ctx.node, StatusCode::kUnsupported,
                   "input dtype {} is not supported (uint8, int8, uint16, int16, int32 are)",
                   DTypeName(x));
  }
  COLLAGE_RETURN_IF_ERROR(RequireFloatScale(ctx, 1));
  COLLAGE_RETURN_IF_ERROR(CheckZeroPoint(ctx, 2, 1, x));
  COLLAGE_RETURN_IF_ERROR(ReadQuantGranularity(ctx.node, ctx.opset, ctx.input_type(0).shape,
                                               ctx.input_type(1).shape,
                                               ctx.attributes().GetInt("axis", 1),
                                               BlockSize(ctx.opset, ctx.attributes()))
                              .status());
  ctx.output_types[0] = TensorType{DType::kFloat32, ctx.input_type(0).shape};
  return Status::Ok();
}

Status RunDequantizeLinear(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(const LinearParams p, ReadLinearParams(ctx));
  const QuantGranularity& g = p.granularity;
  const std::vector<float>& s = p.scale;
  const std::vector<float>& zp = p.zero_point;
  if (x.dtype() == DType::kInt32 &&
      std::any_of(zp.begin(), zp.end(), [](float v) { return v != 0.0f; })) {
    return OpError(ctx.node, StatusCode::kInvalidArgument,
                   "an int32 input must have a zero point of 0");
  }
  float* y = ctx.outputs[0].data_as<float>();
  auto dequantize = [&](auto tag) {
    using Q = decltype(tag);
    const Q* q = x.data_as<Q>();
    ForEachQuantizedElement(g, [&](int64_t idx, int64_t p) {
      const auto up = static_cast<size_t>(p);
      // (q - zp) exactly in int32 for int32 inputs (a float difference would round first).
      const float centered = std::is_same_v<Q, int32_t> ? static_cast<float>(q[idx])
                                                        : static_cast<float>(q[idx]) - zp[up];
      y[idx] = centered * s[up];
    });
  };
  if (x.dtype() == DType::kInt32) {
    dequantize(int32_t{});
    return Status::Ok();
  }
  return DispatchQuantized(ctx.node, x.dtype(), dequantize);
}

// ---- DynamicQuantizeLinear -----------------------------------------------------------------
// uint8 output whose range covers the input's and zero: scale = (max - min) / 255 (1 / 255 for
// an all-zero or empty input, as the spec's reference computes it), zero point
// round(clamp(-min / scale, 0, 255)). NaNs are left out of the range, as ONNX Runtime does.

Status InferDynamicQuantizeLinear(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 0, {DType::kFloat32}));
  ctx.output_types[0] = TensorType{DType::kUInt8, ctx.input_type(0).shape};
  if (ctx.output_types.size() > 1) ctx.output_types[1] = TensorType{DType::kFloat32, {}};
  if (ctx.output_types.size() > 2) ctx.output_types[2] = TensorType{DType::kUInt8, {}};
  return Status::Ok();
}

Status RunDynamicQuantizeLinear(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const float* in = x.data_as<float>();
  const int64_t n = x.num_elements();
  float lo = 0.0f;
  float hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(in[i])) continue;
    lo = std::min(lo, in[i]);
    hi = std::max(hi, in[i]);
  }
  constexpr float kLevels = 255.0f;
  const float scale = (hi == lo ? 1.0f : hi - lo) / kLevels;
  const float zero_point = std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, kLevels));
  uint8_t* y = ctx.outputs[0].data_as<uint8_t>();
  MapUnary(in, y, n, 4, [&](float v) { return QuantizeValue<uint8_t>(v, scale, zero_point); });
  if (ctx.outputs.size() > 1 && !ctx.outputs[1].empty()) *ctx.outputs[1].data_as<float>() = scale;
  if (ctx.outputs.size() > 2 && !ctx.outputs[2].empty()) {
    *ctx.outputs[2].data_as<uint8_t>() = static_cast<uint8_t>(zero_point);
  }
  return Status::Ok();
}

}  // namespace

void RegisterQuantizeOps(OpRegistry& registry) {
  registry.Register(OpDef{"QuantizeLinear", "", OpKind::kElementwise, 2, 3, 1, 1,
                          InferQuantizeLinear, RunQuantizeLinear});
  registry.Register(OpDef{"DequantizeLinear", "", OpKind::kElementwise, 2, 3, 1, 1,
                          InferDequantizeLinear, RunDequantizeLinear});
  registry.Register(OpDef{"DynamicQuantizeLinear", "", OpKind::kOpaque, 1, 1, 1, 3,
                          InferDynamicQuantizeLinear, RunDynamicQuantizeLinear});
}

}  // namespace collage
