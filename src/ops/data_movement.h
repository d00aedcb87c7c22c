// Helpers shared by the data-movement ops (shape_ops.cc, slice_ops.cc, gather_ops.cc,
// layout_ops.cc). These ops never look at element values, so their kernels work per element
// size: four instantiations cover every fixed-size dtype (numeric, bool, float16, bfloat16).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collage/sdk/op_registry.h"

namespace collage {

// Unsupported unless `dtype` has a fixed element size (every dtype but string/undefined).
Status RequireFixedSizeDType(const Node& node, DType dtype, size_t input);

// Calls f(U{}) with U the unsigned integer type as wide as one element of `dtype`.
template <typename F>
Status DispatchBySize(const Node& node, DType dtype, F&& f) {
  switch (DTypeSize(dtype)) {
    case 1: f(uint8_t{}); return Status::Ok();
    case 2: f(uint16_t{}); return Status::Ok();
    case 4: f(uint32_t{}); return Status::Ok();
    case 8: f(uint64_t{}); return Status::Ok();
    default:
      return OpError(node, StatusCode::kUnsupported, "dtype {} is not supported", DTypeName(dtype));
  }
}

// out[i] = in[offset + sum_d index_d(i) * strides[d]] for every row-major index of
// out_shape. Strides count elements and may be zero (broadcast) or negative (reversed
// slices). Covers Transpose, Slice and Expand.
void StridedCopy(size_t elem_size, const Shape& out_shape, const void* in, int64_t offset,
                 const std::vector<int64_t>& strides, void* out);

// Maps index `i` of a gather or scatter (negative counts from the end) into [0, dim);
// InvalidArgument otherwise: indices are data, so a bad one is a bad input, not a bad model.
StatusOr<int64_t> NormalizeIndex(const Node& node, int64_t i, int64_t dim, int64_t axis);

// Product of dims [begin, end) of shape (1 when empty).
int64_t DimProduct(const Shape& shape, int64_t begin, int64_t end);

// The integer-valued inputs (shapes, axes, pads, repeats...) of one node, read the same way
// by type inference (where only constant inputs have values) and by kernels (where every
// input has). Keeps the parameter computation of each op in one function used by both.
class IntInputs {
 public:
  explicit IntInputs(const InferContext& ctx);
  explicit IntInputs(const KernelContext& ctx);

  bool has(size_t i) const { return i < present_.size() && present_[i]; }
  // The values of input i, `what` naming it in errors ("shape", "axes"). Unsupported when
  // the input exists but is not a constant during type inference: its values decide the
  // output shape, and collage only runs static shapes.
  StatusOr<std::vector<int64_t>> Get(size_t i, const char* what) const;
  // Like Get, but nullopt for an absent optional input.
  StatusOr<std::optional<std::vector<int64_t>>> GetOptional(size_t i, const char* what) const;

 private:
  const Node& node_;
  std::vector<bool> present_;
  std::vector<const Tensor*> values_;  // nullptr: present but unknown (not constant)
};

// Checks `axes` are in [-rank, rank) and distinct; returns them made non-negative. InvalidModel
// naming the node otherwise.
StatusOr<std::vector<int64_t>> NormalizeAxes(const Node& node, const std::vector<int64_t>& axes,
                                             int64_t rank, const char* what);

// An OpDef of the default domain with one output (designated initializers would trip
// -Wmissing-field-initializers).
OpDef MakeOpDef(std::string op_type, OpKind kind, int min_inputs, int max_inputs, InferFn infer,
                KernelFn run);

}  // namespace collage
