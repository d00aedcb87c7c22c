#include "session/tensor_slices.h"

#include <cstring>

#include "collage/sdk/errors.h"

namespace collage {
namespace {

// The number of elements before `axis` and the bytes of one step after it.
std::pair<int64_t, size_t> OuterAndInner(const Shape& shape, int64_t axis, DType dtype) {
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  size_t inner = DTypeSize(dtype);
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) {
    inner *= static_cast<size_t>(shape[d]);
  }
  return {outer, inner};
}

}  // namespace

Tensor SliceAlong(const Tensor& tensor, int64_t axis, int64_t index) {
  const Shape& shape = tensor.shape();
  Shape sliced = shape;
  sliced.erase(sliced.begin() + axis);
  Tensor out(tensor.dtype(), sliced);
  const auto [outer, inner] = OuterAndInner(shape, axis, tensor.dtype());
  const int64_t length = shape[static_cast<size_t>(axis)];
  const auto* src = static_cast<const char*>(tensor.data());
  auto* dst = static_cast<char*>(out.data());
  for (int64_t o = 0; o < outer && inner > 0; ++o) {
    std::memcpy(dst + static_cast<size_t>(o) * inner,
                src + static_cast<size_t>(o * length + index) * inner, inner);
  }
  return out;
}

StatusOr<Tensor> StackAlong(const std::vector<Tensor>& parts, int64_t axis, const char* what) {
  if (parts.empty()) return InvalidArgument("{}: nothing to stack", what);
  const Tensor& first = parts.front();
  for (size_t t = 1; t < parts.size(); ++t) {
    if (parts[t].dtype() != first.dtype() || parts[t].shape() != first.shape()) {
      return InvalidArgument(
          "{}: iteration {} gave {} {}, iteration 0 gave {} {}; the values stacked must agree",
          what, t, DTypeName(parts[t].dtype()), ShapeToString(parts[t].shape()),
          DTypeName(first.dtype()), ShapeToString(first.shape()));
    }
  }
  const int64_t count = static_cast<int64_t>(parts.size());
  Shape stacked = first.shape();
  stacked.insert(stacked.begin() + axis, count);
  Tensor out(first.dtype(), stacked);
  const auto [outer, inner] = OuterAndInner(stacked, axis, first.dtype());
  auto* dst = static_cast<char*>(out.data());
  for (int64_t t = 0; t < count; ++t) {
    const auto* src = static_cast<const char*>(parts[static_cast<size_t>(t)].data());
    for (int64_t o = 0; o < outer && inner > 0; ++o) {
      std::memcpy(dst + static_cast<size_t>(o * count + t) * inner,
                  src + static_cast<size_t>(o) * inner, inner);
    }
  }
  return out;
}

}  // namespace collage
