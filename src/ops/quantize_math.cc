#include "ops/quantize_math.h"

#include "ops/op_helpers.h"

namespace collage {

StatusOr<QuantGranularity> ReadQuantGranularity(const Node& node, int64_t opset, const Shape& x,
                                                const Shape& param, int64_t axis,
                                                int64_t block_size) {
  QuantGranularity g;
  if (block_size < 0) {
    return OpError(node, StatusCode::kInvalidModel, "block_size {} is negative", block_size);
  }
  const int64_t param_count = NumElements(param);
  if (block_size == 0 && param.size() <= 1 && param_count == 1) {  // per tensor
    g.inner = NumElements(x);
    return g;
  }
  if (opset < 13) {
    return OpError(node, StatusCode::kInvalidModel,
                   "the scale must be a scalar before opset 13 (it has shape {})",
                   ShapeToString(param));
  }
  COLLAGE_ASSIGN_OR_RETURN(const int64_t a,
                           NormalizeAxis(node, axis, static_cast<int64_t>(x.size())));
  const size_t ua = static_cast<size_t>(a);
  g.axis_dim = x[ua];
  for (size_t d = 0; d < ua; ++d) g.outer *= x[d];
  for (size_t d = ua + 1; d < x.size(); ++d) g.inner *= x[d];
  if (block_size == 0) {
    if (param.size() != 1 || param[0] != x[ua]) {
      return OpError(node, StatusCode::kInvalidModel,
                     "a per-axis scale must be 1-D with {} values (the input's dim {} of {}), "
                     "not {}",
                     x[ua], a, ShapeToString(x), ShapeToString(param));
    }
    g.kind = QuantGranularity::Kind::kPerAxis;
    return g;
  }
  g.kind = QuantGranularity::Kind::kBlocked;
  g.block_size = block_size;
  // Rounded up without x + block_size - 1, which a hostile block_size would overflow.
  g.blocks = x[ua] / block_size + (x[ua] % block_size != 0 ? 1 : 0);
  Shape expected = x;
  expected[ua] = g.blocks;
  if (param != expected) {
    return OpError(node, StatusCode::kInvalidModel,
                   "a blocked scale (block_size {}) over an input of shape {} along axis {} must "
                   "have shape {}, not {}",
                   block_size, ShapeToString(x), a, ShapeToString(expected), ShapeToString(param));
  }
  return g;
}

Status RequireEightBit(const InferContext& ctx, size_t i) {
  const DType dtype = ctx.input_type(i).dtype;
  if (dtype == DType::kUInt8 || dtype == DType::kInt8) return Status::Ok();
  return OpError(ctx.node, StatusCode::kUnsupported, "input {} is {}; uint8 and int8 are supported",
                 i, DTypeName(dtype));
}

Status RequireFloatScale(const InferContext& ctx, size_t i) {
  const DType dtype = ctx.input_type(i).dtype;
  if (dtype == DType::kFloat32) return Status::Ok();
  if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) {
    return OpError(ctx.node, StatusCode::kUnsupported,
                   "input {} is a {} scale; only float32 scales are supported", i,
                   DTypeName(dtype));
  }
  return OpError(ctx.node, StatusCode::kInvalidModel, "input {} (a scale) must be float, not {}", i,
                 DTypeName(dtype));
}

Status CheckZeroPoint(const InferContext& ctx, size_t zero_point, size_t scale, DType dtype) {
  if (!ctx.has_input(zero_point)) return Status::Ok();
  const TensorType& zp = ctx.input_type(zero_point);
  const TensorType& s = ctx.input_type(scale);
  const bool both_single = NumElements(zp.shape) == 1 && NumElements(s.shape) == 1 &&
                           zp.shape.size() <= 1 && s.shape.size() <= 1;
  if (zp.shape != s.shape && !both_single) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "zero point (input {}) has shape {}, but its scale (input {}) has shape {}",
                   zero_point, ShapeToString(zp.shape), scale, ShapeToString(s.shape));
  }
  if (dtype != DType::kUndefined && zp.dtype != dtype) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "zero point (input {}) is {}, but the quantized tensor is {}", zero_point,
                   DTypeName(zp.dtype), DTypeName(dtype));
  }
  return Status::Ok();
}

std::vector<float> ZeroPointValues(const Tensor* zero_point, int64_t count) {
  if (zero_point == nullptr || zero_point->empty()) {
    return std::vector<float>(static_cast<size_t>(count), 0.0f);
  }
  return zero_point->ToVector<float>();
}

std::vector<float> ScaleValues(const Tensor& scale) { return scale.ToVector<float>(); }

StatusOr<Tensor> CenteredInt32(const Node& node, const Tensor& q, const Tensor* zero_point,
                               const Shape& zp_shape) {
  Tensor zp = Tensor::Scalar<int32_t>(0);
  if (zero_point != nullptr && !zero_point->empty()) {
    zp = Tensor::FromVector<int32_t>(zp_shape, zero_point->ToVector<int32_t>());
  }
  Tensor out(DType::kInt32, q.shape());
  COLLAGE_RETURN_IF_ERROR(DispatchQuantized(node, q.dtype(), [&](auto tag) {
    using Q = decltype(tag);
    BroadcastBinary<Q, int32_t, int32_t>(
        q, zp, out, 1, [](Q v, int32_t z) { return static_cast<int32_t>(v) - z; });
  }));
  return out;
}

}  // namespace collage
