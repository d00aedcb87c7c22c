#include "ops/op_helpers.h"

#include <algorithm>
#include <string>

namespace collage {

StatusOr<int64_t> NormalizeAxis(const Node& node, int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  // The spec's range is [-rank, rank - 1]: a scalar has no axis at all.
  if (a < 0 || a >= rank) {
    return OpError(node, StatusCode::kInvalidModel, "axis {} is out of range for rank {}", axis,
                   rank);
  }
  return a;
}

StatusOr<std::vector<int64_t>> SpatialInts(const Node& node, const char* name, size_t n,
                                           int64_t fill, int64_t min_value) {
  if (!node.attributes.Has(name)) return std::vector<int64_t>(n, fill);
  std::vector<int64_t> v = node.attributes.GetInts(name);
  if (v.size() != n) {
    return OpError(node, StatusCode::kInvalidModel, "attribute {} has {} values, expected {}", name,
                   v.size(), n);
  }
  for (int64_t x : v) {
    if (x < min_value || x > kMaxGeometryValue) {
      return OpError(node, StatusCode::kInvalidModel,
                     "attribute {} has value {} (must be in [{}, 2^31])", name, x, min_value);
    }
  }
  return v;
}

StatusOr<Shape> BroadcastShapes(const Node& node, const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    size_t offset = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[offset + i];
      int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string all;
      for (const Shape& t : shapes) all += (all.empty() ? "" : ", ") + ShapeToString(t);
      return OpError(node, StatusCode::kInvalidModel, "shapes {} cannot be broadcast together",
                     all);
    }
  }
  return out;
}

std::vector<int64_t> StridesOf(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

std::vector<int64_t> BroadcastStrides(const Shape& input, const Shape& output) {
  std::vector<int64_t> in_strides = StridesOf(input);
  std::vector<int64_t> strides(output.size(), 0);
  size_t offset = output.size() - input.size();
  for (size_t i = 0; i < input.size(); ++i) {
    strides[offset + i] = input[i] == 1 ? 0 : in_strides[i];
  }
  return strides;
}

Status RequireDType(const InferContext& ctx, size_t input, std::initializer_list<DType> allowed) {
  DType d = ctx.input_type(input).dtype;
  if (std::find(allowed.begin(), allowed.end(), d) != allowed.end()) return Status::Ok();
  std::string names;
  for (DType a : allowed) names += (names.empty() ? "" : ", ") + std::string(DTypeName(a));
  return OpError(ctx.node, StatusCode::kUnsupported,
                 "input {} has dtype {}, which is not supported (supported: {})", input,
                 DTypeName(d), names);
}

Status RequireSameDType(const InferContext& ctx, size_t a, size_t b) {
  if (ctx.input_type(a).dtype == ctx.input_type(b).dtype) return Status::Ok();
  return OpError(ctx.node, StatusCode::kInvalidModel, "inputs {} and {} differ in dtype ({} vs {})",
                 a, b, DTypeName(ctx.input_type(a).dtype), DTypeName(ctx.input_type(b).dtype));
}

std::optional<std::vector<int64_t>> ConstantInts(const InferContext& ctx, size_t input) {
  const Tensor* t = ctx.input_value(input);
  if (!ctx.has_input(input) || t == nullptr) return std::nullopt;
  if (t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32) return std::nullopt;
  return t->ToVector<int64_t>();
}

}  // namespace collage
