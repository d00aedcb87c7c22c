// Ops that rearrange or replicate elements: Transpose, Expand, Tile, Pad, Trilu.
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "ops/data_movement.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

// ---- Transpose ----

// perm, default reversed dims, checked to be a permutation.
StatusOr<std::vector<int64_t>> TransposePerm(const Node& node, int64_t rank) {
  std::vector<int64_t> perm;
  if (node.attributes.Has("perm")) {
    perm = node.attributes.GetInts("perm");
    if (static_cast<int64_t>(perm.size()) != rank) {
      return OpError(node, StatusCode::kInvalidModel, "perm [{}] has {} entries for rank {}",
                     fmt::join(perm, ","), perm.size(), rank);
    }
    return NormalizeAxes(node, perm, rank, "perm");
  }
  for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  return perm;
}

Status InferTranspose(InferContext& ctx) {
  const TensorType& in = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, in.dtype, 0));
  COLLAGE_ASSIGN_OR_RETURN(auto perm,
                           TransposePerm(ctx.node, static_cast<int64_t>(in.shape.size())));
  Shape out;
  for (int64_t p : perm) out.push_back(in.shape[static_cast<size_t>(p)]);
  ctx.output_types[0] = {in.dtype, std::move(out)};
  return Status::Ok();
}

Status RunTranspose(KernelContext& ctx) {
  const Tensor& in = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(auto perm, TransposePerm(ctx.node, in.rank()));
  const std::vector<int64_t> in_strides = StridesOf(in.shape());
  std::vector<int64_t> strides;
  for (int64_t p : perm) strides.push_back(in_strides[static_cast<size_t>(p)]);
  StridedCopy(DTypeSize(in.dtype()), ctx.outputs[0].shape(), in.data(), 0, strides,
              ctx.outputs[0].data());
  return Status::Ok();
}

// ---- Expand ----

StatusOr<Shape> ExpandShape(const Node& node, const Shape& in, const IntInputs& ints) {
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ints.Get(1, "shape"));
  for (int64_t d : shape) {
    if (d < 0) {
      return OpError(node, StatusCode::kInvalidModel, "shape [{}] has a negative dim",
                     fmt::join(shape, ","));
    }
  }
  // Bidirectional: a 1 in `shape` keeps the input dim, so the output can exceed `shape`.
  return BroadcastShapes(node, {in, Shape(shape)});
}

Status InferExpand(InferContext& ctx) {
  const TensorType& in = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, in.dtype, 0));
  COLLAGE_ASSIGN_OR_RETURN(Shape out, ExpandShape(ctx.node, in.shape, IntInputs(ctx)));
  ctx.output_types[0] = {in.dtype, std::move(out)};
  return Status::Ok();
}

Status RunExpand(KernelContext& ctx) {
  const Tensor& in = ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  StridedCopy(DTypeSize(in.dtype()), out.shape(), in.data(), 0,
              BroadcastStrides(in.shape(), out.shape()), out.data());
  return Status::Ok();
}

// ---- Tile ----

StatusOr<std::vector<int64_t>> TileRepeats(const Node& node, const Shape& in,
                                           const IntInputs& ints) {
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ints.Get(1, "repeats"));
  if (repeats.size() != in.size()) {
    return OpError(node, StatusCode::kInvalidModel, "repeats [{}] has {} entries for rank {}",
                   fmt::join(repeats, ","), repeats.size(), in.size());
  }
  for (int64_t r : repeats) {
    if (r < 0) {
      return OpError(node, StatusCode::kInvalidModel, "repeats [{}] has a negative entry",
                     fmt::join(repeats, ","));
    }
  }
  return repeats;
}

Status InferTile(InferContext& ctx) {
  const TensorType& in = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, in.dtype, 0));
  COLLAGE_ASSIGN_OR_RETURN(auto repeats, TileRepeats(ctx.node, in.shape, IntInputs(ctx)));
  Shape out = in.shape;
  for (size_t i = 0; i < out.size(); ++i) {
    COLLAGE_ASSIGN_OR_RETURN(
        out[i], CheckedValue(ctx.node, CheckedInt(out[i]) * repeats[i], "axis {}: {} * repeats {}",
                             i, in.shape[i], repeats[i]));
  }
  ctx.output_types[0] = {in.dtype, std::move(out)};
  return Status::Ok();
}

Status RunTile(KernelContext& ctx) {
  const Tensor& in = ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  const int64_t n = out.num_elements();
  if (n == 0) return Status::Ok();
  const size_t es = DTypeSize(in.dtype());
  const int64_t rank = in.rank();
  if (rank == 0) {
    std::memcpy(out.data(), in.data(), es);
    return Status::Ok();
  }
  // Row by row: an output row is the input row repeated; the outer dims wrap modulo the
  // input dims.
  const std::vector<int64_t> strides = StridesOf(in.shape());
  const size_t last = static_cast<size_t>(rank - 1);
  const int64_t in_row = in.dim(rank - 1);
  const int64_t out_row = out.dim(rank - 1);
  const auto* src = static_cast<const uint8_t*>(in.data());
  auto* dst = static_cast<uint8_t*>(out.data());
  std::vector<int64_t> pos(static_cast<size_t>(rank), 0);  // output position, outer dims
  for (int64_t done = 0; done < n; done += out_row) {
    int64_t base = 0;
    for (size_t d = 0; d < last; ++d) base += (pos[d] % in.shape()[d]) * strides[d];
    for (int64_t r = 0; r < out_row; r += in_row) {
      std::memcpy(dst, src + static_cast<size_t>(base) * es, static_cast<size_t>(in_row) * es);
      dst += static_cast<size_t>(in_row) * es;
    }
    for (size_t d = last; d-- > 0;) {
      if (++pos[d] < out.shape()[d]) break;
      pos[d] = 0;
    }
  }
  return Status::Ok();
}

// ---- Pad ----

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

struct PadPlan {
  PadMode mode = PadMode::kConstant;
  std::vector<int64_t> begin, end;  // per dim; negative crops
  std::vector<int64_t> crop;        // per dim: input elements cut from the front
  std::vector<int64_t> kept;        // per dim: input elements left after both crops
  Shape out;
};

StatusOr<PadPlan> ComputePad(const Node& node, int64_t opset, const Shape& in,
                             const IntInputs& ints) {
  PadPlan plan;
  const std::string mode = node.attributes.GetString("mode", "constant");
  if (mode == "constant")
    plan.mode = PadMode::kConstant;
  else if (mode == "reflect")
    plan.mode = PadMode::kReflect;
  else if (mode == "edge")
    plan.mode = PadMode::kEdge;
  else if (mode == "wrap")
    plan.mode = PadMode::kWrap;
  else {
    return OpError(node, StatusCode::kInvalidModel,
                   "mode '{}' is not one of constant, reflect, edge, wrap", mode);
  }
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> pads;
  std::vector<int64_t> axes;
  if (opset < 11) {
    // Pad-2 takes `pads` as an attribute (Pad-1 called it `paddings`).
    pads = node.attributes.GetInts(node.attributes.Has("pads") ? "pads" : "paddings");
  } else {
    COLLAGE_ASSIGN_OR_RETURN(pads, ints.Get(1, "pads"));
    COLLAGE_ASSIGN_OR_RETURN(auto given_axes, ints.GetOptional(3, "axes"));
    if (given_axes) {
      COLLAGE_ASSIGN_OR_RETURN(axes, NormalizeAxes(node, *given_axes, rank, "axes"));
    }
  }
  if (axes.empty() && !ints.has(3)) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  const size_t n = axes.size();
  if (pads.size() != 2 * n) {
    return OpError(node, StatusCode::kInvalidModel, "pads [{}] has {} entries, expected {}",
                   fmt::join(pads, ","), pads.size(), 2 * n);
  }
  plan.begin.assign(in.size(), 0);
  plan.end.assign(in.size(), 0);
  plan.crop.assign(in.size(), 0);
  plan.kept = in;
  plan.out = in;
  for (size_t i = 0; i < n; ++i) {
    const size_t d = static_cast<size_t>(axes[i]);
    plan.begin[d] = pads[i];
    plan.end[d] = pads[i + n];
    // pads are unbounded: in + INT64_MAX overflows, and so does the crop -INT64_MIN.
    COLLAGE_ASSIGN_OR_RETURN(
        plan.out[d], CheckedValue(node, CheckedInt(in[d]) + pads[i] + pads[i + n],
                                  "axis {}: {} + pads {} + {}", d, in[d], pads[i], pads[i + n]));
    if (plan.out[d] < 0) {
      return OpError(node, StatusCode::kInvalidModel, "pads [{}] crop axis {} of size {} below 0",
                     fmt::join(pads, ","), d, in[d]);
    }
    const CheckedInt crop_begin = pads[i] < 0 ? -CheckedInt(pads[i]) : CheckedInt(0);
    const CheckedInt crop_end = pads[i + n] < 0 ? -CheckedInt(pads[i + n]) : CheckedInt(0);
    COLLAGE_ASSIGN_OR_RETURN(plan.crop[d],
                             CheckedValue(node, crop_begin, "axis {}: crop -({})", d, pads[i]));
    COLLAGE_ASSIGN_OR_RETURN(
        plan.kept[d], CheckedValue(node, CheckedInt(in[d]) - crop_begin - crop_end,
                                   "axis {}: kept elements {} - crops -({}) - -({})", d, in[d],
                                   pads[i], pads[i + n]));
    const int64_t kept = plan.kept[d];
    const bool grows = pads[i] > 0 || pads[i + n] > 0;
    if (plan.mode != PadMode::kConstant && grows && kept <= 0) {
      return OpError(node, StatusCode::kInvalidModel,
                     "cannot pad axis {} in mode '{}': it is empty", d, mode);
    }
  }
  return plan;
}

Status InferPad(InferContext& ctx) {
  const TensorType& in = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, in.dtype, 0));
  if (ctx.opset >= 11 && ctx.has_input(2)) {
    COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, 2));
    if (ctx.input_type(2).num_elements() > 1) {
      return OpError(ctx.node, StatusCode::kInvalidModel,
                     "constant_value must be a scalar, has shape {}",
                     ShapeToString(ctx.input_type(2).shape));
    }
  }
  if (ctx.opset < 11 && ctx.attributes().GetFloat("value", 0.0f) != 0.0f) {
    // The float attribute has to be converted to the data dtype; the half types have no
    // conversion here.
    if (in.dtype == DType::kFloat16 || in.dtype == DType::kBFloat16) {
      return OpError(ctx.node, StatusCode::kUnsupported,
                     "a non-zero 'value' attribute with dtype {} is not supported",
                     DTypeName(in.dtype));
    }
  }
  COLLAGE_ASSIGN_OR_RETURN(PadPlan plan, ComputePad(ctx.node, ctx.opset, in.shape, IntInputs(ctx)));
  ctx.output_types[0] = {in.dtype, std::move(plan.out)};
  return Status::Ok();
}

// The input index that output index `o` of one axis reads, or -1 for the constant. `crop`
// input elements are cut from the front, `kept` remain, `pad` are added before them.
int64_t PadSource(PadMode mode, int64_t o, int64_t pad, int64_t crop, int64_t kept) {
  int64_t p = o - pad;  // position inside the kept range
  if (p < 0 || p >= kept) {
    switch (mode) {
      case PadMode::kConstant: return -1;
      case PadMode::kEdge: p = std::clamp<int64_t>(p, 0, kept - 1); break;
      case PadMode::kReflect: {
        // Mirror without repeating the edge; repeats periodically (like numpy) when the pad
        // is longer than the axis.
        if (kept == 1) {
          p = 0;
          break;
        }
        const int64_t period = 2 * (kept - 1);
        p = ((p % period) + period) % period;
        if (p >= kept) p = period - p;
        break;
      }
      case PadMode::kWrap: p = ((p % kept) + kept) % kept; break;
    }
  }
  return crop + p;
}

Status RunPad(KernelContext& ctx) {
  const Tensor& in = ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  COLLAGE_ASSIGN_OR_RETURN(PadPlan plan,
                           ComputePad(ctx.node, ctx.opset, in.shape(), IntInputs(ctx)));
  const int64_t rank = in.rank();
  const int64_t n = out.num_elements();
  if (n == 0) return Status::Ok();

  // The fill value as the data dtype's bytes.
  uint64_t fill_bits = 0;
  if (ctx.opset >= 11) {
    if (ctx.has_input(2) && ctx.inputs[2].num_elements() == 1) {
      std::memcpy(&fill_bits, ctx.inputs[2].data(), DTypeSize(in.dtype()));
    }
  } else {
    const float value = ctx.attributes().GetFloat("value", 0.0f);
    if (value != 0.0f) {
      COLLAGE_RETURN_IF_ERROR(DispatchAny(ctx.node, in.dtype(), [&](auto zero) {
        using T = decltype(zero);
        const T v = static_cast<T>(value);
        std::memcpy(&fill_bits, &v, sizeof(T));
      }));
    }
  }

  // Per axis, the input index each output index reads (-1: the fill value).
  std::vector<std::vector<int64_t>> source(static_cast<size_t>(rank));
  for (size_t d = 0; d < source.size(); ++d) {
    const int64_t pad = std::max<int64_t>(plan.begin[d], 0);
    for (int64_t o = 0; o < plan.out[d]; ++o) {
      source[d].push_back(PadSource(plan.mode, o, pad, plan.crop[d], plan.kept[d]));
    }
  }
  const std::vector<int64_t> strides = StridesOf(in.shape());
  return DispatchBySize(ctx.node, in.dtype(), [&](auto zero) {
    using U = decltype(zero);
    U fill;
    std::memcpy(&fill, &fill_bits, sizeof(U));
    const U* src = in.data_as<U>();
    U* dst = out.data_as<U>();
    if (rank == 0) {
      dst[0] = src[0];
      return;
    }
    const size_t last = static_cast<size_t>(rank - 1);
    const std::vector<int64_t>& inner = source[last];
    const int64_t row = plan.out[last];
    std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
    for (int64_t done = 0; done < n; done += row) {
      int64_t base = 0;
      bool inside = true;
      for (size_t d = 0; d < last && inside; ++d) {
        const int64_t s = source[d][static_cast<size_t>(pos[d])];
        inside = s >= 0;
        base += s * strides[d];
      }
      for (int64_t j = 0; j < row; ++j) {
        const int64_t s = inner[static_cast<size_t>(j)];
        dst[j] = inside && s >= 0 ? src[base + s] : fill;
      }
      dst += row;
      for (size_t d = last; d-- > 0;) {
        if (++pos[d] < plan.out[d]) break;
        pos[d] = 0;
      }
    }
  });
}

// ---- Trilu ----

Status InferTrilu(InferContext& ctx) {
  const TensorType& in = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, in.dtype, 0));
  if (in.shape.size() < 2) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "input must have rank >= 2, has shape {}",
                   ShapeToString(in.shape));
  }
  if (ctx.has_input(1)) {
    COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 1, {DType::kInt64}));
    if (ctx.input_type(1).num_elements() != 1) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "k must be a scalar, has shape {}",
                     ShapeToString(ctx.input_type(1).shape));
    }
  }
  ctx.output_types[0] = ctx.input_type(0);
  return Status::Ok();
}

Status RunTrilu(KernelContext& ctx) {
  const Tensor& in = ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  int64_t k = ctx.has_input(1) ? ctx.inputs[1].data_as<int64_t>()[0] : 0;
  const bool upper = ctx.attributes().GetInt("upper", 1) != 0;
  const int64_t rows = in.dim(in.rank() - 2);
  const int64_t cols = in.dim(in.rank() - 1);
  const size_t es = DTypeSize(in.dtype());
  if (out.data() != in.data() && in.nbytes() > 0) std::memcpy(out.data(), in.data(), in.nbytes());
  // Zero what is dropped: upper keeps j - i >= k, lower keeps j - i <= k. All-zero bytes
  // are zero in every dtype.
  // Beyond ±(rows + cols) every k means the same; clamping keeps i + k from overflowing.
  k = std::clamp<int64_t>(k, -(rows + cols + 1), rows + cols + 1);
  auto* dst = static_cast<uint8_t*>(out.data());
  const int64_t matrices = rows * cols == 0 ? 0 : in.num_elements() / (rows * cols);
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      uint8_t* row = dst + static_cast<size_t>((m * rows + i) * cols) * es;
      // Dropped columns: [0, i + k) for upper, [i + k + 1, cols) for lower.
      const int64_t a = upper ? 0 : std::clamp<int64_t>(i + k + 1, 0, cols);
      const int64_t b = upper ? std::clamp<int64_t>(i + k, 0, cols) : cols;
      if (b > a) std::memset(row + static_cast<size_t>(a) * es, 0, static_cast<size_t>(b - a) * es);
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterLayoutOps(OpRegistry& registry) {
  // Each output element is one input element (or a fill value): injective.
  registry.Register(MakeOpDef("Transpose", OpKind::kInjective, 1, 1, InferTranspose, RunTranspose));
  // Expand is numpy broadcasting of one input (op_kind.h files it under kBroadcast).
  registry.Register(MakeOpDef("Expand", OpKind::kBroadcast, 2, 2, InferExpand, RunExpand));
  registry.Register(MakeOpDef("Tile", OpKind::kInjective, 2, 2, InferTile, RunTile));
  registry.Register(MakeOpDef("Pad", OpKind::kInjective, 1, 4, InferPad, RunPad));
  registry.Register(MakeOpDef("Trilu", OpKind::kInjective, 1, 2, InferTrilu, RunTrilu));
}

}  // namespace collage
