// Ops that write or read data at positions given by index tensors: ScatterElements (opsets
// 11–18) and its deprecated alias Scatter (opsets 9–10, no reduction), ScatterND (11–18) and
// GatherND (11–13, batch_dims from 12).
//
// A scatter copies `data` to the output, then applies the updates in the row-major order of
// `indices`. The spec leaves duplicate indices undefined for reduction "none"; applying them
// in order makes the last one win, as ONNX Runtime and the numpy reference implementation do.
// With a reduction, duplicates combine in that same order, so float results are reproducible.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/data_movement.h"
#include "ops/elementwise.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

// ---- Shared by the scatters ----

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

struct ReductionInfo {
  const char* name;
  Reduction reduction;
  int64_t since_opset;  // the opset whose ScatterElements / ScatterND introduced it
};

constexpr ReductionInfo kReductions[] = {{"none", Reduction::kNone, 0},
                                         {"add", Reduction::kAdd, 16},
                                         {"mul", Reduction::kMul, 16},
                                         {"max", Reduction::kMax, 18},
                                         {"min", Reduction::kMin, 18}};

const char* ReductionName(Reduction reduction) {
  for (const ReductionInfo& r : kReductions) {
    if (r.reduction == reduction) return r.name;
  }
  return "?";
}

// The `reduction` attribute, checked against the opset that defines each value. A value the
// model's opset does not define makes a malformed model rather than one to run without it:
// its author expected the reduction to change the result.
StatusOr<Reduction> ReadReduction(const Node& node, int64_t opset) {
  const std::string name = node.attributes.GetString("reduction", "none");
  for (const ReductionInfo& r : kReductions) {
    if (name != r.name) continue;
    if (r.reduction != Reduction::kNone && node.op_type == "Scatter") {
      return OpError(node, StatusCode::kInvalidModel,
                     "reduction '{}' is not defined for Scatter (ScatterElements has it from "
                     "opset 16)",
                     name);
    }
    if (opset < r.since_opset) {
      return OpError(node, StatusCode::kInvalidModel,
                     "reduction '{}' needs opset {} (the model has opset {})", name, r.since_opset,
                     opset);
    }
    return r.reduction;
  }
  return OpError(node, StatusCode::kInvalidModel,
                 "reduction '{}' is not valid (none, add, mul, max, min are)", name);
}

// Without a reduction a scatter only moves elements, so any fixed-size dtype works. A
// reduction computes, which needs one of the numeric dtypes kernels are written for
// (float16 and bfloat16 have no arithmetic here).
Status CheckScatterDTypes(const InferContext& ctx, Reduction reduction) {
  COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, 2));
  const DType dtype = ctx.input_type(0).dtype;
  if (reduction == Reduction::kNone) return RequireFixedSizeDType(ctx.node, dtype, 0);
  if (DispatchNumeric(ctx.node, dtype, [](auto) {}).ok()) return Status::Ok();
  return OpError(ctx.node, StatusCode::kUnsupported, "reduction '{}' on dtype {} is not supported",
                 ReductionName(reduction), DTypeName(dtype));
}



// max and min propagate NaN, like numpy.maximum / numpy.minimum in the ONNX reference
// implementation of ScatterND. The spec says nothing about NaN; std::max (and Python's max in
// the ScatterElements reference) would keep or drop a NaN depending on the operand order.
template <typename T>
bool IsNaN(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

template <typename T>
T Max(T a, T b) {
  return (a > b || IsNaN(a)) ? a : b;
}

template <typename T>
T Min(T a, T b) {
  return (a < b || IsNaN(a)) ? a : b;
}

// out[offsets[n] + j] = combine(out[offsets[n] + j], updates[n * slice + j]) for every update
// slice n, in order.
template <typename T, typename Combine>
void ApplySlices(T* out, const T* updates, const std::vector<int64_t>& offsets, int64_t slice,
                 Combine combine) {
  for (size_t n = 0; n < offsets.size(); ++n) {
    T* dst = out + offsets[n];
    const T* src = updates + static_cast<int64_t>(n) * slice;
    for (int64_t j = 0; j < slice; ++j) dst[j] = combine(dst[j], src[j]);
  }
}

// output = data, then update slice n (`slice` elements of `updates`) lands at element offset
// offsets[n] of the output, combined by `reduction`.
Status ScatterSlices(const Node& node, Reduction reduction, const Tensor& data,
                     const Tensor& updates, const std::vector<int64_t>& offsets, int64_t slice,
                     Tensor& out) {
  if (data.nbytes() > 0) std::memcpy(out.data(), data.data(), data.nbytes());
  if (reduction == Reduction::kNone) {
    return DispatchBySize(node, data.dtype(), [&](auto zero) {
      using U = decltype(zero);
      ApplySlices(out.data_as<U>(), updates.data_as<U>(), offsets, slice, [](U, U u) { return u; });
    });
  }
  return DispatchNumeric(node, data.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* o = out.data_as<T>();
    const T* u = updates.data_as<T>();
    switch (reduction) {
      case Reduction::kAdd: ApplySlices(o, u, offsets, slice, WrapAdd<T>); break;
      case Reduction::kMul: ApplySlices(o, u, offsets, slice, WrapMul<T>); break;
      case Reduction::kMax: ApplySlices(o, u, offsets, slice, Max<T>); break;
      case Reduction::kMin: ApplySlices(o, u, offsets, slice, Min<T>); break;
      case Reduction::kNone: break;  // handled above
    }
  });
}

// ---- ScatterElements, Scatter ----

// What ScatterElements requires of the shapes of (data, indices, updates); returns the axis.
StatusOr<int64_t> ScatterElementsAxis(const Node& node, const Shape& data, const Shape& indices,
                                      const Shape& updates) {
  const int64_t rank = static_cast<int64_t>(data.size());
  if (rank == 0) return OpError(node, StatusCode::kInvalidModel, "data must not be a scalar");
  COLLAGE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(node, node.attributes.GetInt("axis", 0), rank));
  if (indices != updates) {
    return OpError(node, StatusCode::kInvalidModel,
                   "indices of shape {} and updates of shape {} differ", ShapeToString(indices),
                   ShapeToString(updates));
  }
  bool ok = static_cast<int64_t>(indices.size()) == rank;
  // Off the axis, an index position is also the output position: it must exist in data.
  for (int64_t d = 0; ok && d < rank; ++d) {
    ok = d == axis || indices[static_cast<size_t>(d)] <= data[static_cast<size_t>(d)];
  }
  if (!ok) {
    return OpError(node, StatusCode::kInvalidModel,
                   "indices of shape {} do not fit data of shape {} (axis {})",
                   ShapeToString(indices), ShapeToString(data), axis);
  }
  return axis;
}

Status InferScatterElements(InferContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  COLLAGE_ASSIGN_OR_RETURN(Reduction reduction, ReadReduction(ctx.node, ctx.opset));
  COLLAGE_RETURN_IF_ERROR(CheckScatterDTypes(ctx, reduction));
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 1, {DType::kInt64, DType::kInt32}));
  COLLAGE_RETURN_IF_ERROR(
      ScatterElementsAxis(ctx.node, data.shape, ctx.input_type(1).shape, ctx.input_type(2).shape)
          .status());
  ctx.output_types[0] = data;
  return Status::Ok();
}

// The output element each entry of `indices` addresses: the entry's own position with the
// axis coordinate replaced by its value.
StatusOr<std::vector<int64_t>> ElementOffsets(const Node& node, const Shape& data_shape,
                                              const Tensor& indices_tensor, int64_t axis) {
  const std::vector<int64_t> indices = indices_tensor.ToVector<int64_t>();
  const Shape& ishape = indices_tensor.shape();
  const std::vector<int64_t> strides = StridesOf(data_shape);
  const size_t a = static_cast<size_t>(axis);
  std::vector<int64_t> offsets;
  offsets.reserve(indices.size());
  std::vector<int64_t> pos(ishape.size(), 0);
  int64_t base = 0;  // data offset of pos with the axis coordinate left out
  for (int64_t index : indices) {
    COLLAGE_ASSIGN_OR_RETURN(int64_t i, NormalizeIndex(node, index, data_shape[a], axis));
    offsets.push_back(base + i * strides[a]);
    for (size_t d = ishape.size(); d-- > 0;) {
      const int64_t step = d == a ? 0 : strides[d];
      base += step;
      if (++pos[d] < ishape[d]) break;
      base -= step * ishape[d];
      pos[d] = 0;
    }
  }
  return offsets;
}

Status RunScatterElements(KernelContext& ctx) {
  const Tensor& data = ctx.inputs[0];
  const Tensor& indices = ctx.inputs[1];
  const Tensor& updates = ctx.inputs[2];
  COLLAGE_ASSIGN_OR_RETURN(Reduction reduction, ReadReduction(ctx.node, ctx.opset));
  COLLAGE_ASSIGN_OR_RETURN(
      int64_t axis, ScatterElementsAxis(ctx.node, data.shape(), indices.shape(), updates.shape()));
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> offsets,
                           ElementOffsets(ctx.node, data.shape(), indices, axis));
  return ScatterSlices(ctx.node, reduction, data, updates, offsets, 1, ctx.outputs[0]);
}

// ---- Index tuples: ScatterND, GatherND ----

// `indices` holds tuples of k = indices.shape[-1] values that index data dims
// [batch_dims, batch_dims + k). Returns the data element offset each tuple's slice starts at;
// the tuples of batch b (the first batch_dims dims of indices) address data's batch b.
StatusOr<std::vector<int64_t>> TupleOffsets(const Node& node, const Shape& data_shape,
                                            const Tensor& indices_tensor, int64_t batch_dims) {
  const Shape& ishape = indices_tensor.shape();
  const int64_t q = static_cast<int64_t>(ishape.size());
  const int64_t k = ishape.back();
  const std::vector<int64_t> indices = indices_tensor.ToVector<int64_t>();
  const std::vector<int64_t> strides = StridesOf(data_shape);
  const int64_t num_tuples = DimProduct(ishape, 0, q - 1);
  const int64_t batches = DimProduct(ishape, 0, batch_dims);
  const int64_t tuples_per_batch = batches == 0 ? 0 : num_tuples / batches;
  const int64_t batch_stride =
      DimProduct(data_shape, batch_dims, static_cast<int64_t>(data_shape.size()));
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(num_tuples));
  for (int64_t t = 0; t < num_tuples; ++t) {
    int64_t offset = t / tuples_per_batch * batch_stride;  // num_tuples > 0: no division by 0
    for (int64_t j = 0; j < k; ++j) {
      const int64_t axis = batch_dims + j;
      const size_t a = static_cast<size_t>(axis);
      COLLAGE_ASSIGN_OR_RETURN(
          int64_t i,
          NormalizeIndex(node, indices[static_cast<size_t>(t * k + j)], data_shape[a], axis));
      offset += i * strides[a];
    }
    offsets.push_back(offset);
  }
  return offsets;
}

// What ScatterND requires of the shapes of (data, indices, updates); returns k.
StatusOr<int64_t> ScatterNDTupleSize(const Node& node, const Shape& data, const Shape& indices,
                                     const Shape& updates) {
  const int64_t r = static_cast<int64_t>(data.size());
  if (r == 0 || indices.empty()) {
    return OpError(node, StatusCode::kInvalidModel,
                   "data and indices must have rank >= 1, have shapes {} and {}",
                   ShapeToString(data), ShapeToString(indices));
  }
  const int64_t k = indices.back();
  if (k > r) {
    return OpError(node, StatusCode::kInvalidModel,
                   "indices of shape {} hold tuples of {} values, more than the rank {} of data",
                   ShapeToString(indices), k, r);
  }
  // updates = one slice data.shape[k:] per tuple.
  Shape expected(indices.begin(), indices.end() - 1);
  expected.insert(expected.end(), data.begin() + k, data.end());
  if (updates != expected) {
    return OpError(node, StatusCode::kInvalidModel,
                   "updates have shape {}, expected {} for indices of shape {} and data of "
                   "shape {}",
                   ShapeToString(updates), ShapeToString(expected), ShapeToString(indices),
                   ShapeToString(data));
  }
  return k;
}

Status InferScatterND(InferContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  COLLAGE_ASSIGN_OR_RETURN(Reduction reduction, ReadReduction(ctx.node, ctx.opset));
  COLLAGE_RETURN_IF_ERROR(CheckScatterDTypes(ctx, reduction));
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 1, {DType::kInt64}));
  COLLAGE_RETURN_IF_ERROR(
      ScatterNDTupleSize(ctx.node, data.shape, ctx.input_type(1).shape, ctx.input_type(2).shape)
          .status());
  ctx.output_types[0] = data;
  return Status::Ok();
}

Status RunScatterND(KernelContext& ctx) {
  const Tensor& data = ctx.inputs[0];
  const Tensor& indices = ctx.inputs[1];
  const Tensor& updates = ctx.inputs[2];
  COLLAGE_ASSIGN_OR_RETURN(Reduction reduction, ReadReduction(ctx.node, ctx.opset));
  COLLAGE_ASSIGN_OR_RETURN(
      int64_t k, ScatterNDTupleSize(ctx.node, data.shape(), indices.shape(), updates.shape()));
  // Empty tuples (k = 0) each update all of data. With empty data nothing is written, and
  // their count is bounded by no buffer (indices and updates are empty too): skip the walk.
  if (k == 0 && data.num_elements() == 0) return Status::Ok();
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> offsets,
                           TupleOffsets(ctx.node, data.shape(), indices, 0));
  const int64_t slice = DimProduct(data.shape(), k, data.rank());
  return ScatterSlices(ctx.node, reduction, data, updates, offsets, slice, ctx.outputs[0]);
}

// batch_dims and k of a GatherND node, checked against the shapes of data and indices.
struct GatherNDParams {
  int64_t batch_dims;
  int64_t k;
};

StatusOr<GatherNDParams> ReadGatherNDParams(const Node& node, int64_t opset, const Shape& data,
                                            const Shape& indices) {
  const int64_t r = static_cast<int64_t>(data.size());
  const int64_t q = static_cast<int64_t>(indices.size());
  if (r == 0 || q == 0) {
    return OpError(node, StatusCode::kInvalidModel,
                   "data and indices must have rank >= 1, have shapes {} and {}",
                   ShapeToString(data), ShapeToString(indices));
  }
  const int64_t b = node.attributes.GetInt("batch_dims", 0);
  if (b != 0 && opset < 12) {
    return OpError(node, StatusCode::kInvalidModel, "batch_dims needs opset 12 (the model has {})",
                   opset);
  }
  if (b < 0 || b >= std::min(q, r)) {
    return OpError(node, StatusCode::kInvalidModel,
                   "batch_dims {} must be in [0, {}) for data of shape {} and indices of shape {}",
                   b, std::min(q, r), ShapeToString(data), ShapeToString(indices));
  }
  if (!std::equal(data.begin(), data.begin() + b, indices.begin())) {
    return OpError(node, StatusCode::kInvalidModel,
                   "the first {} (batch) dims of data of shape {} and indices of shape {} differ",
                   b, ShapeToString(data), ShapeToString(indices));
  }
  const int64_t k = indices.back();
  if (k < 1 || k > r - b) {
    return OpError(node, StatusCode::kInvalidModel,
                   "indices of shape {} hold tuples of {} values, must be 1 to {} (data of shape "
                   "{}, batch_dims {})",
                   ShapeToString(indices), k, r - b, ShapeToString(data), b);
  }
  return GatherNDParams{b, k};
}

Status InferGatherND(InferContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const Shape& indices = ctx.input_type(1).shape;
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, data.dtype, 0));
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 1, {DType::kInt64}));
  COLLAGE_ASSIGN_OR_RETURN(GatherNDParams p,
                           ReadGatherNDParams(ctx.node, ctx.opset, data.shape, indices));
  // indices.shape[:-1] (batch dims included) + the slice shape data.shape[b + k:]
  Shape out(indices.begin(), indices.end() - 1);
  out.insert(out.end(), data.shape.begin() + p.batch_dims + p.k, data.shape.end());
  ctx.output_types[0] = {data.dtype, std::move(out)};
  return Status::Ok();
}

Status RunGatherND(KernelContext& ctx) {
  const Tensor& data = ctx.inputs[0];
  const Tensor& indices = ctx.inputs[1];
  COLLAGE_ASSIGN_OR_RETURN(GatherNDParams p,
                           ReadGatherNDParams(ctx.node, ctx.opset, data.shape(), indices.shape()));
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> offsets,
                           TupleOffsets(ctx.node, data.shape(), indices, p.batch_dims));
  const size_t elem = DTypeSize(data.dtype());
  const size_t slice_bytes =
      static_cast<size_t>(DimProduct(data.shape(), p.batch_dims + p.k, data.rank())) * elem;
  if (slice_bytes == 0) return Status::Ok();
  const auto* src = static_cast<const uint8_t*>(data.data());
  auto* dst = static_cast<uint8_t*>(ctx.outputs[0].data());
  for (int64_t offset : offsets) {
    std::memcpy(dst, src + static_cast<size_t>(offset) * elem, slice_bytes);
    dst += slice_bytes;
  }
  return Status::Ok();
}

}  // namespace

void RegisterScatterOps(OpRegistry& registry) {
  // An output element of a scatter may combine several inputs, chosen by data: opaque.
  registry.Register(MakeOpDef("ScatterElements", OpKind::kOpaque, 3, 3, InferScatterElements,
                              RunScatterElements));
  // Scatter-9 is ScatterElements without reduction (ReadReduction refuses one); the
  // deprecated Scatter-11 kept the same meaning, so it runs at any opset.
  registry.Register(
      MakeOpDef("Scatter", OpKind::kOpaque, 3, 3, InferScatterElements, RunScatterElements));
  registry.Register(MakeOpDef("ScatterND", OpKind::kOpaque, 3, 3, InferScatterND, RunScatterND));
  // Each output element is one data element: injective, like Gather.
  registry.Register(MakeOpDef("GatherND", OpKind::kInjective, 2, 2, InferGatherND, RunGatherND));
}

}  // namespace collage
