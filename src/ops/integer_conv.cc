// ConvInteger (int32 out) and QLinearConv (quantized out): convolutions of 8-bit integer
// tensors with zero points (x's per tensor, w's per tensor or per output channel). Both remove
// the zero points into int32 — the padding then contributes 0, as padding with x's zero point
// means — and run the reference convolution loop on int32, which is exact; QLinearConv adds
// its int32 bias and requantizes each sum with x_scale * w_scale / y_scale, computed in float
// as ONNX Runtime does.
#include <cstring>

#include "collage/sdk/op_params.h"
#include "ops/conv_kernel.h"
#include "ops/quantize_math.h"

namespace collage {
namespace {

// A parameter of x: a scalar (or one value).
Status RequirePerTensor(const InferContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i)) return Status::Ok();
  const Shape& s = ctx.input_type(i).shape;
  if (s.size() <= 1 && NumElements(s) == 1) return Status::Ok();
  return OpError(ctx.node, StatusCode::kInvalidModel, "{} must be a scalar, not {}", what,
                 ShapeToString(s));
}

// A parameter of w: a scalar or one value per output channel (M). Returns the shape its
// values are broadcast in over w [M, C/group, k...].
StatusOr<Shape> WeightParamShape(const Node& node, const Shape& w, const Shape& param,
                                 const char* what) {
  if (param.size() <= 1 && NumElements(param) == 1) return Shape{};
  if (param.size() == 1 && !w.empty() && param[0] == w[0]) {
    Shape s(w.size(), 1);
    s[0] = w[0];
    return s;
  }
  return OpError(node, StatusCode::kInvalidModel,
                 "{} has shape {}; it must be a scalar or have one value per output channel ({})",
                 what, ShapeToString(param), w.empty() ? 0 : w[0]);
}

// The int32 convolution of (x - x_zp) and (w - w_zp), plus bias, and its geometry.
struct IntegerConv {
  ConvParams geometry;
  Tensor sums;  // int32
};

StatusOr<IntegerConv> ConvolveCentered(const Node& node, const Tensor& x, const Tensor* x_zp,
                                       const Tensor& w, const Tensor* w_zp, const Tensor* bias) {
  IntegerConv c;
  COLLAGE_ASSIGN_OR_RETURN(c.geometry, ReadConvParams(node, x.shape(), w.shape()));
  Shape w_zp_shape;
  if (w_zp != nullptr && !w_zp->empty()) {
    COLLAGE_ASSIGN_OR_RETURN(w_zp_shape,
                             WeightParamShape(node, w.shape(), w_zp->shape(), "w_zero_point"));
  }
  COLLAGE_ASSIGN_OR_RETURN(const Tensor x32, CenteredInt32(node, x, x_zp, Shape{}));
  COLLAGE_ASSIGN_OR_RETURN(const Tensor w32, CenteredInt32(node, w, w_zp, w_zp_shape));
  c.sums = Tensor(DType::kInt32, c.geometry.output_shape());
  ConvTyped<int32_t>(c.geometry, x32.data_as<int32_t>(), w32.data_as<int32_t>(),
                     bias != nullptr ? bias->data_as<int32_t>() : nullptr,
                     c.sums.data_as<int32_t>());
  return c;
}

// ---- ConvInteger: x, w, x_zero_point?, w_zero_point? -> int32 --------------------------------

Status InferConvInteger(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, 0));
  COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, 1));
  const Shape& x = ctx.input_type(0).shape;
  const Shape& w = ctx.input_type(1).shape;
  COLLAGE_ASSIGN_OR_RETURN(const ConvParams g, ReadConvParams(ctx.node, x, w));
  COLLAGE_RETURN_IF_ERROR(RequirePerTensor(ctx, 2, "x_zero_point"));
  if (ctx.has_input(3)) {
    COLLAGE_RETURN_IF_ERROR(
        WeightParamShape(ctx.node, w, ctx.input_type(3).shape, "w_zero_point").status());
  }
  for (size_t zp = 2; zp <= 3; ++zp) {
    if (ctx.has_input(zp) && ctx.input_type(zp).dtype != ctx.input_type(zp - 2).dtype) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "zero point {} is {}, its input is {}",
                     zp, DTypeName(ctx.input_type(zp).dtype),
                     DTypeName(ctx.input_type(zp - 2).dtype));
    }
  }
  ctx.output_types[0] = TensorType{DType::kInt32, g.output_shape()};
  return Status::Ok();
}

Status RunConvInteger(KernelContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(
      const IntegerConv c,
      ConvolveCentered(ctx.node, ctx.inputs[0], ctx.has_input(2) ? &ctx.inputs[2] : nullptr,
                       ctx.inputs[1], ctx.has_input(3) ? &ctx.inputs[3] : nullptr, nullptr));
  Tensor& y = ctx.outputs[0];
  if (y.nbytes() > 0) std::memcpy(y.data(), c.sums.data(), y.nbytes());
  return Status::Ok();
}

// ---- QLinearConv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B? -> quantized --------

Status InferQLinearConv(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, 0));
  COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, 3));
  COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, 7));
  const Shape& x = ctx.input_type(0).shape;
  const Shape& w = ctx.input_type(3).shape;
  COLLAGE_ASSIGN_OR_RETURN(const ConvParams g, ReadConvParams(ctx.node, x, w));
  for (size_t scale : {size_t{1}, size_t{4}, size_t{6}}) {
    COLLAGE_RETURN_IF_ERROR(RequireFloatScale(ctx, scale));
  }
  COLLAGE_RETURN_IF_ERROR(RequirePerTensor(ctx, 1, "x_scale"));
  COLLAGE_RETURN_IF_ERROR(RequirePerTensor(ctx, 6, "y_scale"));
  COLLAGE_RETURN_IF_ERROR(
      WeightParamShape(ctx.node, w, ctx.input_type(4).shape, "w_scale").status());
  COLLAGE_RETURN_IF_ERROR(CheckZeroPoint(ctx, 2, 1, ctx.input_type(0).dtype));
  COLLAGE_RETURN_IF_ERROR(CheckZeroPoint(ctx, 5, 4, ctx.input_type(3).dtype));
  COLLAGE_RETURN_IF_ERROR(CheckZeroPoint(ctx, 7, 6, DType::kUndefined));
  if (ctx.has_input(8)) {
    const TensorType& b = ctx.input_type(8);
    if (b.dtype != DType::kInt32 || b.shape != Shape{g.out_channels}) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "bias B is {}, expected int32[{}]",
                     b.ToString(), g.out_channels);
    }
  }
  ctx.output_types[0] = TensorType{ctx.input_type(7).dtype, g.output_shape()};
  return Status::Ok();
}

Status RunQLinearConv(KernelContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(
      const IntegerConv c,
      ConvolveCentered(ctx.node, ctx.inputs[0], &ctx.inputs[2], ctx.inputs[3], &ctx.inputs[5],
                       ctx.has_input(8) ? &ctx.inputs[8] : nullptr));
  const float x_scale = ScaleValues(ctx.inputs[1])[0];
  const std::vector<float> w_scale = ScaleValues(ctx.inputs[4]);
  const float y_scale = ScaleValues(ctx.inputs[6])[0];
  const float y_zp = ZeroPointValues(&ctx.inputs[7], 1)[0];
  const int64_t channels = c.geometry.out_channels;
  const int64_t plane = NumElements(c.geometry.out_spatial);
  std::vector<float> multiplier(static_cast<size_t>(channels));
  for (int64_t oc = 0; oc < channels; ++oc) {
    const float ws = w_scale.size() == 1 ? w_scale[0] : w_scale[static_cast<size_t>(oc)];
    multiplier[static_cast<size_t>(oc)] = x_scale * ws / y_scale;
  }
  const int32_t* sums = c.sums.data_as<int32_t>();
  return DispatchQuantized(ctx.node, ctx.outputs[0].dtype(), [&](auto tag) {
    using Q = decltype(tag);
    Q* y = ctx.outputs[0].data_as<Q>();
    ParallelFor(c.geometry.batch * channels, plane * 4, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const float mult = multiplier[static_cast<size_t>(p % channels)];
        for (int64_t i = p * plane; i < (p + 1) * plane; ++i) {
          y[i] = RequantizeValue<Q>(sums[i], mult, y_zp);
        }
      }
    });
  });
}

}  // namespace

void RegisterIntegerConvOps(OpRegistry& registry) {
  registry.Register(OpDef{"ConvInteger", "", OpKind::kOutEWiseFusable, 2, 4, 1, 1, InferConvInteger,
                          RunConvInteger});
  registry.Register(
      OpDef{"QLinearConv", "", OpKind::kOpaque, 8, 9, 1, 1, InferQLinearConv, RunQLinearConv});
}

}  // namespace collage
