// Small helpers shared by the op families: axis handling, broadcasting, dtype checks and
// dtype dispatch.
#pragma once

#include <cmath>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

#include "collage/sdk/op_registry.h"
#include "util/checked_math.h"

namespace collage {

// The value of a shape, count or offset computation, or an InvalidModel error naming the node
// and saying what overflowed: CheckedValue(node, span, "axis {}: {} + pads {} + {}", d, in,
// pb, pe) gives "Pad node 'p': axis 0: 3 + pads 9223372036854775807 + 0 overflows int64".
// `what` should show the operands, so that the model's author can find the bad value.
template <typename... Args>
StatusOr<int64_t> CheckedValue(const Node& node, CheckedInt v, fmt::format_string<Args...> what,
                               Args&&... args) {
  if (const std::optional<int64_t> r = v.get()) return *r;
  return OpError(node, StatusCode::kInvalidModel, "{} overflows int64",
                 fmt::format(what, std::forward<Args>(args)...));
}

// Maps a possibly negative axis into [0, rank); error when out of range (always for rank 0).
StatusOr<int64_t> NormalizeAxis(const Node& node, int64_t axis, int64_t rank);

// Geometry attributes (kernel_shape, strides, dilations, pads, output_padding) are bounded
// so that the geometry arithmetic ((k - 1) * dilation + 1, in + pads, ...) cannot overflow.
inline constexpr int64_t kMaxGeometryValue = int64_t{1} << 31;

// An ints attribute of exactly n values in [min_value, kMaxGeometryValue], or n copies of
// `fill` when absent. Errors name the node and the attribute.
StatusOr<std::vector<int64_t>> SpatialInts(const Node& node, const char* name, size_t n,
                                           int64_t fill, int64_t min_value);

// Numpy-style broadcast of two or more shapes; error naming the node when incompatible.
StatusOr<Shape> BroadcastShapes(const Node& node, const std::vector<Shape>& shapes);

// Row-major strides of `shape` (elements).
std::vector<int64_t> StridesOf(const Shape& shape);
// Strides for reading `input` as if broadcast to `output` (0 on broadcast dims).
std::vector<int64_t> BroadcastStrides(const Shape& input, const Shape& output);

// Unsupported error unless input i has one of `allowed` dtypes.
Status RequireDType(const InferContext& ctx, size_t input, std::initializer_list<DType> allowed);
// InvalidModel error unless inputs a and b have the same dtype.
Status RequireSameDType(const InferContext& ctx, size_t a, size_t b);

// Reads an int64 (or int32) constant input as a vector; nullopt when the input is absent
// or not a constant.
std::optional<std::vector<int64_t>> ConstantInts(const InferContext& ctx, size_t input);

// The order TopK, Unique and the sorts of ops use: true when a ranks strictly below b —
// numbers by <, NaN above every number and equal to every NaN (as numpy sorts), so -0.0
// equals 0.0.
template <typename T>
bool RanksBelow(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// Calls f(T{}) with T the C++ type of `dtype`, for the numeric dtypes kernels support.
// Returns Unsupported for others.
template <typename F>
Status DispatchNumeric(const Node& node, DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32: f(float{}); return Status::Ok();
    case DType::kFloat64: f(double{}); return Status::Ok();
    case DType::kInt64: f(int64_t{}); return Status::Ok();
    case DType::kInt32: f(int32_t{}); return Status::Ok();
    case DType::kInt16: f(int16_t{}); return Status::Ok();
    case DType::kInt8: f(int8_t{}); return Status::Ok();
    case DType::kUInt8: f(uint8_t{}); return Status::Ok();
    case DType::kUInt16: f(uint16_t{}); return Status::Ok();
    case DType::kUInt32: f(uint32_t{}); return Status::Ok();
    case DType::kUInt64: f(uint64_t{}); return Status::Ok();
    default:
      return OpError(node, StatusCode::kUnsupported, "dtype {} is not supported", DTypeName(dtype));
  }
}

// Like DispatchNumeric, plus bool: for ops that only move data (Reshape, Concat, Gather...).
template <typename F>
Status DispatchAny(const Node& node, DType dtype, F&& f) {
  if (dtype == DType::kBool) {
    f(bool{});
    return Status::Ok();
  }
  return DispatchNumeric(node, dtype, std::forward<F>(f));
}

// The float dtypes math kernels support.
template <typename F>
Status DispatchFloat(const Node& node, DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32: f(float{}); return Status::Ok();
    case DType::kFloat64: f(double{}); return Status::Ok();
    default:
      return OpError(node, StatusCode::kUnsupported,
                     "dtype {} is not supported (float32, float64 are)", DTypeName(dtype));
  }
}

}  // namespace collage
