// Linear quantization as the ONNX spec defines it, shared by the integer ops:
//   q = saturate(round_half_to_even(x / scale) + zero_point)      (QuantizeLinear)
//   x = (q - zero_point) * scale                                  (DequantizeLinear)
// and how a scale / zero-point tensor maps onto the tensor it quantizes: one value for all
// elements (per tensor), one per index along an axis (per axis), or one per block of indices
// along an axis (blocked, opset 21).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "collage/sdk/op_registry.h"
#include "ops/elementwise.h"

namespace collage {

// The integer types a quantized tensor may have (ONNX's 8- and 16-bit ones; 4-bit and float8
// types are not tensor types collage has).
inline bool IsQuantizedDType(DType dtype) {
  return dtype == DType::kUInt8 || dtype == DType::kInt8 || dtype == DType::kUInt16 ||
         dtype == DType::kInt16;
}

// Unsupported naming the node and input unless input i is uint8 or int8 (what the integer
// products and the com.microsoft ops take).
Status RequireEightBit(const InferContext& ctx, size_t i);

// Calls f(Q{}) for a quantized integer dtype; Unsupported naming the dtype otherwise.
template <typename F>
Status DispatchQuantized(const Node& node, DType dtype, F&& f) {
  switch (dtype) {
    case DType::kUInt8: f(uint8_t{}); return Status::Ok();
    case DType::kInt8: f(int8_t{}); return Status::Ok();
    case DType::kUInt16: f(uint16_t{}); return Status::Ok();
    case DType::kInt16: f(int16_t{}); return Status::Ok();
    default:
      return OpError(node, StatusCode::kUnsupported,
                     "quantized dtype {} is not supported (uint8, int8, uint16, int16 are)",
                     DTypeName(dtype));
  }
}

// One value quantized: x / scale rounded half to even (the default floating-point rounding
// mode, which std::nearbyint follows), plus the zero point, saturated to Q. NaN gives 0, as
// a Cast of NaN does (the spec leaves it open). Division, not a multiplication by the
// reciprocal: the spec and ONNX Runtime divide, and the two round differently.
template <typename Q>
inline Q QuantizeValue(float x, float scale, float zero_point) {
  return SaturatingCast<Q>(std::nearbyint(x / scale) + zero_point);
}

// An int32 accumulator requantized: acc * multiplier (the input scales over the output
// scale, computed in float as ONNX Runtime does), rounded half to even, plus the zero point,
// saturated to Q.
template <typename Q>
inline Q RequantizeValue(int32_t acc, float multiplier, float zero_point) {
  return SaturatingCast<Q>(std::nearbyint(static_cast<float>(acc) * multiplier) + zero_point);
}

// How a parameter tensor (scale or zero point) lines up with the elements of the tensor it
// quantizes, seen as [outer, axis_dim, inner] around the quantization axis.
struct QuantGranularity {
  enum class Kind { kPerTensor, kPerAxis, kBlocked };
  Kind kind = Kind::kPerTensor;
  int64_t outer = 1;
  int64_t axis_dim = 1;
  int64_t inner = 1;
  int64_t block_size = 0;  // kBlocked only
  int64_t blocks = 1;      // kBlocked only: ceil(axis_dim / block_size)

  // The parameter of element (o, a, i).
  int64_t ParamIndex(int64_t o, int64_t a, int64_t i) const {
    switch (kind) {
      case Kind::kPerTensor: return 0;
      case Kind::kPerAxis: return a;
      case Kind::kBlocked: return (o * blocks + a / block_size) * inner + i;
    }
    return 0;
  }
};

// Reads the granularity of `param` (a scale's shape) over a tensor of shape `x`: a scalar or
// a one-element 1-D tensor is per tensor; with block_size 0, a 1-D tensor of x[axis] values is
// per axis (opset 13 and later); with block_size > 0 (opset 21), the parameter has x's rank
// and x's dims but ceil(x[axis] / block_size) along the axis. InvalidModel naming the node
// otherwise.
StatusOr<QuantGranularity> ReadQuantGranularity(const Node& node, int64_t opset, const Shape& x,
                                                const Shape& param, int64_t axis,
                                                int64_t block_size);

// Input `i` must be a float32 scale: Unsupported for float16 and bfloat16 scales (collage
// does not compute in them), InvalidModel for any other dtype.
Status RequireFloatScale(const InferContext& ctx, size_t i);

// Input `zero_point`, when present, must have the shape of input `scale` (a scalar and a
// one-element 1-D tensor count as the same); and when `dtype`
// is not kUndefined, that dtype. InvalidModel naming the node otherwise.
Status CheckZeroPoint(const InferContext& ctx, size_t zero_point, size_t scale, DType dtype);

// The values of a zero-point tensor as floats (exact: 16-bit and smaller integers), or
// `count` zeros when it is absent (null or empty).
std::vector<float> ZeroPointValues(const Tensor* zero_point, int64_t count);

// The values of a scale tensor.
std::vector<float> ScaleValues(const Tensor& scale);

// q - zero_point in int32, with the zero point's values read in `zp_shape` and broadcast over
// q's shape as numpy does (an absent zero point is 0). The integer ops compute on these.
StatusOr<Tensor> CenteredInt32(const Node& node, const Tensor& q, const Tensor* zero_point,
                               const Shape& zp_shape);

}  // namespace collage
