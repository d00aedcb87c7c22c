// Ops that cut tensors into pieces or join pieces: Slice, Split, Concat.
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "ops/data_movement.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

// ---- Slice ----

// A slice is a strided view of the input: out[i] = in[offset + sum_d i_d * strides[d]].
struct SliceView {
  Shape shape;
  int64_t offset = 0;
  std::vector<int64_t> strides;
};

StatusOr<SliceView> ComputeSlice(const Node& node, int64_t opset, const Shape& in,
                                 const IntInputs& ints) {
  std::vector<int64_t> starts, ends, steps;
  std::optional<std::vector<int64_t>> axes;
  if (opset < 10) {
    // Slice-1: starts/ends/axes attributes, no steps.
    starts = node.attributes.GetInts("starts");
    ends = node.attributes.GetInts("ends");
    if (node.attributes.Has("axes")) axes = node.attributes.GetInts("axes");
  } else {
    COLLAGE_ASSIGN_OR_RETURN(starts, ints.Get(1, "starts"));
    COLLAGE_ASSIGN_OR_RETURN(ends, ints.Get(2, "ends"));
    COLLAGE_ASSIGN_OR_RETURN(axes, ints.GetOptional(3, "axes"));
    COLLAGE_ASSIGN_OR_RETURN(auto s, ints.GetOptional(4, "steps"));
    if (s) steps = std::move(*s);
  }
  const size_t n = starts.size();
  if (!axes) {
    axes.emplace(n);
    for (size_t i = 0; i < n; ++i) (*axes)[i] = static_cast<int64_t>(i);
  }
  if (steps.empty()) steps.assign(n, 1);
  if (ends.size() != n || axes->size() != n || steps.size() != n) {
    return OpError(node, StatusCode::kInvalidModel,
                   "starts, ends, axes and steps differ in length ({}, {}, {}, {})", n, ends.size(),
                   axes->size(), steps.size());
  }
  const int64_t rank = static_cast<int64_t>(in.size());
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> dims, NormalizeAxes(node, *axes, rank, "axes"));

  const std::vector<int64_t> in_strides = StridesOf(in);
  SliceView view{in, 0, in_strides};
  for (size_t i = 0; i < n; ++i) {
    const size_t d = static_cast<size_t>(dims[i]);
    const int64_t dim = in[d];
    const int64_t step = steps[i];
    if (step == 0) {
      return OpError(node, StatusCode::kInvalidModel, "step for axis {} is 0", dims[i]);
    }
    // Negative indices count from the end; then both ends are clamped into the range that
    // makes sense for the direction (INT64_MAX / INT64_MIN ends mean "to the end").
    // A negative index plus a dim >= 0 cannot overflow.
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    int64_t len = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      len = end > start ? (end - start - 1) / step + 1 : 0;
    } else if (dim > 0) {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      // (start - end - 1) / -step + 1 without negating step, which overflows for INT64_MIN:
      // the dividend is >= 0, and C++ division truncates, so a / step == -(a / -step).
      len = start > end ? 1 - (start - end - 1) / step : 0;
    }
    view.shape[d] = len;
    if (len > 0) view.offset += start * in_strides[d];
    // Stepping matters only between two elements: with one (or none), a huge step times the
    // stride could overflow and is never used. With two or more, |step| < dim, so the product
    // is within the input.
    view.strides[d] = len > 1 ? step * in_strides[d] : 0;
  }
  return view;
}

Status InferSlice(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, ctx.input_type(0).dtype, 0));
  COLLAGE_ASSIGN_OR_RETURN(
      SliceView view, ComputeSlice(ctx.node, ctx.opset, ctx.input_type(0).shape, IntInputs(ctx)));
  ctx.output_types[0] = {ctx.input_type(0).dtype, view.shape};
  return Status::Ok();
}

Status RunSlice(KernelContext& ctx) {
  const Tensor& in = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(SliceView view,
                           ComputeSlice(ctx.node, ctx.opset, in.shape(), IntInputs(ctx)));
  if (NumElements(view.shape) == 0) return Status::Ok();
  StridedCopy(DTypeSize(in.dtype()), view.shape, in.data(), view.offset, view.strides,
              ctx.outputs[0].data());
  return Status::Ok();
}

// ---- Split ----

struct SplitPlan {
  int64_t axis = 0;
  std::vector<int64_t> sizes;  // along axis, one per output
};

StatusOr<SplitPlan> ComputeSplit(const Node& node, int64_t opset, const Shape& in,
                                 const IntInputs& ints) {
  SplitPlan plan;
  const int64_t rank = static_cast<int64_t>(in.size());
  COLLAGE_ASSIGN_OR_RETURN(plan.axis, NormalizeAxis(node, node.attributes.GetInt("axis", 0), rank));
  const int64_t dim = in[static_cast<size_t>(plan.axis)];
  const int64_t outputs = static_cast<int64_t>(node.outputs.size());

  // Sizes come from the `split` attribute (before opset 13) or input (from 13), else from
  // num_outputs (opset 18: ceil-sized chunks, the last one smaller), else equal parts.
  std::optional<std::vector<int64_t>> split;
  if (opset < 13) {
    if (node.attributes.Has("split")) split = node.attributes.GetInts("split");
  } else {
    COLLAGE_ASSIGN_OR_RETURN(split, ints.GetOptional(1, "split"));
  }
  if (split) {
    if (static_cast<int64_t>(split->size()) != outputs) {
      return OpError(node, StatusCode::kInvalidModel, "split has {} sizes for {} outputs",
                     split->size(), outputs);
    }
    int64_t sum = 0;
    for (int64_t s : *split) {
      if (s < 0) {
        return OpError(node, StatusCode::kInvalidModel, "split [{}] has a negative size",
                       fmt::join(*split, ","));
      }
      const std::optional<int64_t> next = CheckedAdd(sum, s);
      if (s > dim || !next) {
        return OpError(node, StatusCode::kInvalidModel,
                       "split [{}] does not fit axis {} of size {}", fmt::join(*split, ","),
                       plan.axis, dim);
      }
      sum = *next;
    }
    if (sum != dim) {
      return OpError(node, StatusCode::kInvalidModel,
                     "split [{}] sums to {}, but axis {} has size {}", fmt::join(*split, ","), sum,
                     plan.axis, dim);
    }
    plan.sizes = std::move(*split);
    return plan;
  }
  if (opset >= 18 && node.attributes.Has("num_outputs")) {
    const int64_t parts = node.attributes.GetInt("num_outputs", 0);
    if (parts != outputs) {
      return OpError(node, StatusCode::kInvalidModel,
                     "num_outputs is {} but the node has {} outputs", parts, outputs);
    }
    const int64_t chunk = (dim + parts - 1) / parts;
    const int64_t last = dim - chunk * (parts - 1);
    if (last < 0) {
      return OpError(node, StatusCode::kInvalidModel,
                     "axis {} of size {} cannot be split into {} chunks of {}", plan.axis, dim,
                     parts, chunk);
    }
    plan.sizes.assign(static_cast<size_t>(parts), chunk);
    plan.sizes.back() = last;
    return plan;
  }
  // Opset 18 made the sizes explicit: one of the two must be given.
  if (opset >= 18) {
    return OpError(node, StatusCode::kInvalidModel,
                   "from opset 18, Split needs the 'split' input or the 'num_outputs' attribute");
  }
  if (dim % outputs != 0) {
    return OpError(node, StatusCode::kInvalidModel,
                   "axis {} of size {} cannot be split into {} equal parts", plan.axis, dim,
                   outputs);
  }
  plan.sizes.assign(static_cast<size_t>(outputs), dim / outputs);
  return plan;
}

Status InferSplit(InferContext& ctx) {
  const TensorType& in = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, in.dtype, 0));
  COLLAGE_ASSIGN_OR_RETURN(SplitPlan plan,
                           ComputeSplit(ctx.node, ctx.opset, in.shape, IntInputs(ctx)));
  for (size_t i = 0; i < plan.sizes.size(); ++i) {
    Shape shape = in.shape;
    shape[static_cast<size_t>(plan.axis)] = plan.sizes[i];
    ctx.output_types[i] = {in.dtype, std::move(shape)};
  }
  return Status::Ok();
}

Status RunSplit(KernelContext& ctx) {
  const Tensor& in = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(SplitPlan plan,
                           ComputeSplit(ctx.node, ctx.opset, in.shape(), IntInputs(ctx)));
  const int64_t rank = in.rank();
  const int64_t outer = DimProduct(in.shape(), 0, plan.axis);
  const size_t inner_bytes =
      static_cast<size_t>(DimProduct(in.shape(), plan.axis + 1, rank)) * DTypeSize(in.dtype());
  const size_t in_row = static_cast<size_t>(in.dim(plan.axis)) * inner_bytes;
  const auto* src = static_cast<const uint8_t*>(in.data());
  size_t begin = 0;  // byte offset of this output's chunk inside an input row
  for (size_t i = 0; i < plan.sizes.size(); ++i) {
    const size_t chunk = static_cast<size_t>(plan.sizes[i]) * inner_bytes;
    if (i < ctx.outputs.size() && !ctx.outputs[i].empty() && chunk > 0) {
      auto* dst = static_cast<uint8_t*>(ctx.outputs[i].data());
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(dst + static_cast<size_t>(o) * chunk,
                    src + static_cast<size_t>(o) * in_row + begin, chunk);
      }
    }
    begin += chunk;
  }
  return Status::Ok();
}

// ---- Concat ----

Status InferConcat(InferContext& ctx) {
  const TensorType& first = ctx.input_type(0);
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  if (!ctx.attributes().Has("axis")) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "has no axis attribute");
  }
  if (rank == 0) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "cannot concatenate scalars");
  }
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, first.dtype, 0));
  COLLAGE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx.node, ctx.attributes().GetInt("axis", 0), rank));
  Shape out = first.shape;
  out[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "input {} is missing", i);
    }
    COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, i));
    const Shape& s = ctx.input_type(i).shape;
    bool compatible = static_cast<int64_t>(s.size()) == rank;
    for (int64_t d = 0; compatible && d < rank; ++d) {
      compatible = d == axis || s[static_cast<size_t>(d)] == first.shape[static_cast<size_t>(d)];
    }
    if (!compatible) {
      return OpError(ctx.node, StatusCode::kInvalidModel,
                     "input {} has shape {}, which does not match input 0 ({}) outside axis {}", i,
                     ShapeToString(s), ShapeToString(first.shape), axis);
    }
    // Up to 2^20 inputs of up to 2^56 elements each: the sum can pass int64.
    const size_t a = static_cast<size_t>(axis);
    COLLAGE_ASSIGN_OR_RETURN(
        out[a], CheckedValue(ctx.node, CheckedInt(out[a]) + s[a],
                             "axis {} length after input {}: {} + {}", axis, i, out[a], s[a]));
  }
  ctx.output_types[0] = {first.dtype, std::move(out)};
  return Status::Ok();
}

Status RunConcat(KernelContext& ctx) {
  Tensor& out = ctx.outputs[0];
  const int64_t rank = out.rank();
  COLLAGE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx.node, ctx.attributes().GetInt("axis", 0), rank));
  const int64_t outer = DimProduct(out.shape(), 0, axis);
  const size_t inner_bytes =
      static_cast<size_t>(DimProduct(out.shape(), axis + 1, rank)) * DTypeSize(out.dtype());
  const size_t out_row = static_cast<size_t>(out.dim(axis)) * inner_bytes;
  auto* dst = static_cast<uint8_t*>(out.data());
  size_t begin = 0;  // byte offset of this input's chunk inside an output row
  for (const Tensor& in : ctx.inputs) {
    const size_t chunk = static_cast<size_t>(in.dim(axis)) * inner_bytes;
    const auto* src = static_cast<const uint8_t*>(in.data());
    if (chunk > 0) {
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(dst + static_cast<size_t>(o) * out_row + begin,
                    src + static_cast<size_t>(o) * chunk, chunk);
      }
    }
    begin += chunk;
  }
  return Status::Ok();
}

}  // namespace

void RegisterSliceOps(OpRegistry& registry) {
  // Each output element is one input element: injective.
  registry.Register(MakeOpDef("Slice", OpKind::kInjective, 1, 5, InferSlice, RunSlice));
  {
    OpDef def = MakeOpDef("Split", OpKind::kInjective, 1, 2, InferSplit, RunSplit);
    def.min_outputs = 1;
    def.max_outputs = 1 << 20;
    registry.Register(std::move(def));
  }
  registry.Register(MakeOpDef("Concat", OpKind::kInjective, 1, 1 << 20, InferConcat, RunConcat));
}

}  // namespace collage
