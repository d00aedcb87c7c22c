// Ops that pick elements by index: Gather, GatherElements, OneHot.
#include <cstring>

#include "ops/data_movement.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

Status RequireIndexDType(const InferContext& ctx, size_t input) {
  return RequireDType(ctx, input, {DType::kInt64, DType::kInt32});
}

// ---- Gather ----

// What Gather and GatherElements both require of (data, indices); returns the data axis.
StatusOr<int64_t> CheckGatherInputs(const InferContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, data.dtype, 0));
  COLLAGE_RETURN_IF_ERROR(RequireIndexDType(ctx, 1));
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) return OpError(ctx.node, StatusCode::kInvalidModel, "data must not be a scalar");
  return NormalizeAxis(ctx.node, ctx.attributes().GetInt("axis", 0), rank);
}

Status InferGather(InferContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  COLLAGE_ASSIGN_OR_RETURN(int64_t axis, CheckGatherInputs(ctx));
  // data.shape[:axis] + indices.shape + data.shape[axis+1:]
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  ctx.output_types[0] = {data.dtype, std::move(out)};
  return Status::Ok();
}

Status RunGather(KernelContext& ctx) {
  const Tensor& data = ctx.inputs[0];
  const int64_t rank = data.rank();
  COLLAGE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx.node, ctx.attributes().GetInt("axis", 0), rank));
  const std::vector<int64_t> indices = ctx.inputs[1].ToVector<int64_t>();
  const int64_t dim = data.dim(axis);
  const int64_t outer = DimProduct(data.shape(), 0, axis);
  const size_t inner_bytes =
      static_cast<size_t>(DimProduct(data.shape(), axis + 1, rank)) * DTypeSize(data.dtype());
  std::vector<int64_t> rows;  // normalized indices, checked once
  rows.reserve(indices.size());
  for (int64_t i : indices) {
    COLLAGE_ASSIGN_OR_RETURN(int64_t r, NormalizeIndex(ctx.node, i, dim, axis));
    rows.push_back(r);
  }
  if (inner_bytes == 0) return Status::Ok();
  const auto* src = static_cast<const uint8_t*>(data.data());
  auto* dst = static_cast<uint8_t*>(ctx.outputs[0].data());
  for (int64_t o = 0; o < outer; ++o) {
    const uint8_t* block = src + static_cast<size_t>(o * dim) * inner_bytes;
    for (int64_t r : rows) {
      std::memcpy(dst, block + static_cast<size_t>(r) * inner_bytes, inner_bytes);
      dst += inner_bytes;
    }
  }
  return Status::Ok();
}

// ---- GatherElements ----

Status InferGatherElements(InferContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  COLLAGE_ASSIGN_OR_RETURN(int64_t axis, CheckGatherInputs(ctx));
  bool ok = static_cast<int64_t>(indices.shape.size()) == rank;
  // Off the axis, an index position must exist in data too (the kernel reads there).
  for (int64_t d = 0; ok && d < rank; ++d) {
    ok = d == axis || indices.shape[static_cast<size_t>(d)] <= data.shape[static_cast<size_t>(d)];
  }
  if (!ok) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "indices of shape {} do not fit data of shape {} (axis {})",
                   ShapeToString(indices.shape), ShapeToString(data.shape), axis);
  }
  ctx.output_types[0] = {data.dtype, indices.shape};
  return Status::Ok();
}

Status RunGatherElements(KernelContext& ctx) {
  const Tensor& data = ctx.inputs[0];
  const Tensor& indices_tensor = ctx.inputs[1];
  const int64_t rank = data.rank();
  COLLAGE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx.node, ctx.attributes().GetInt("axis", 0), rank));
  const std::vector<int64_t> indices = indices_tensor.ToVector<int64_t>();
  const Shape& ishape = indices_tensor.shape();
  const std::vector<int64_t> strides = StridesOf(data.shape());
  const int64_t dim = data.dim(axis);
  Status status;
  Status dispatched = DispatchBySize(ctx.node, data.dtype(), [&](auto zero) {
    using U = decltype(zero);
    const U* src = data.data_as<U>();
    U* dst = ctx.outputs[0].data_as<U>();
    std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
    int64_t base = 0;  // data offset of pos with the axis coordinate left out
    for (size_t n = 0; n < indices.size(); ++n) {
      auto r = NormalizeIndex(ctx.node, indices[n], dim, axis);
      if (!r.ok()) {
        status = r.status();
        return;
      }
      dst[n] = src[base + *r * strides[static_cast<size_t>(axis)]];
      for (int64_t d = rank - 1; d >= 0; --d) {
        const size_t k = static_cast<size_t>(d);
        const int64_t step = d == axis ? 0 : strides[k];
        base += step;
        if (++pos[k] < ishape[k]) break;
        base -= step * ishape[k];
        pos[k] = 0;
      }
    }
  });
  COLLAGE_RETURN_IF_ERROR(dispatched);
  return status;
}

// ---- OneHot ----

// Depth must be constant (it is an output dim); any numeric dtype, cast to int64.
StatusOr<int64_t> OneHotDepth(const Node& node, const Tensor* depth) {
  if (depth == nullptr) {
    return OpError(node, StatusCode::kUnsupported,
                   "input 1 (depth) is not constant; collage needs its value to know the output "
                   "shape");
  }
  if (depth->num_elements() != 1) {
    return OpError(node, StatusCode::kInvalidModel, "depth must have one element, has shape {}",
                   ShapeToString(depth->shape()));
  }
  std::vector<double> v = depth->ToVector<double>();
  if (v.empty()) {
    return OpError(node, StatusCode::kUnsupported, "depth of dtype {} is not supported",
                   DTypeName(depth->dtype()));
  }
  if (!(v[0] >= 1 && v[0] <= 0x1p62)) {  // also refuses NaN before the cast
    return OpError(node, StatusCode::kInvalidModel, "depth is {}, must be in [1, 2^62]", v[0]);
  }
  const int64_t d = static_cast<int64_t>(v[0]);
  if (d < 1) return OpError(node, StatusCode::kInvalidModel, "depth is {}, must be >= 1", d);
  return d;
}

Status InferOneHot(InferContext& ctx) {
  const TensorType& indices = ctx.input_type(0);
  const TensorType& values = ctx.input_type(2);
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, values.dtype, 2));
  // Indices of any numeric dtype are cast to int64 (float16/bfloat16 have no conversion here).
  COLLAGE_RETURN_IF_ERROR(RequireDType(
      ctx, 0,
      {DType::kInt64, DType::kInt32, DType::kInt16, DType::kInt8, DType::kUInt64, DType::kUInt32,
       DType::kUInt16, DType::kUInt8, DType::kFloat32, DType::kFloat64}));
  if (values.num_elements() != 2) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "values must have two elements (off, on), has shape {}",
                   ShapeToString(values.shape));
  }
  COLLAGE_ASSIGN_OR_RETURN(int64_t depth, OneHotDepth(ctx.node, ctx.input_value(1)));
  const int64_t out_rank = static_cast<int64_t>(indices.shape.size()) + 1;
  COLLAGE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx.node, ctx.attributes().GetInt("axis", -1), out_rank));
  Shape out = indices.shape;
  out.insert(out.begin() + axis, depth);
  ctx.output_types[0] = {values.dtype, std::move(out)};
  return Status::Ok();
}

Status RunOneHot(KernelContext& ctx) {
  const Tensor& indices_tensor = ctx.inputs[0];
  const Tensor& values = ctx.inputs[2];
  Tensor& out = ctx.outputs[0];
  COLLAGE_ASSIGN_OR_RETURN(int64_t depth, OneHotDepth(ctx.node, &ctx.inputs[1]));
  COLLAGE_ASSIGN_OR_RETURN(
      int64_t axis, NormalizeAxis(ctx.node, ctx.attributes().GetInt("axis", -1), out.rank()));
  // Non-integer indices are cast to int64 (truncation), as the spec says.
  const std::vector<int64_t> indices = indices_tensor.ToVector<int64_t>();
  const int64_t outer = DimProduct(indices_tensor.shape(), 0, axis);
  const int64_t inner = DimProduct(indices_tensor.shape(), axis, indices_tensor.rank());
  // Negative indices count from the end since opset 11; before, they select nothing.
  const bool wrap_negative = ctx.opset >= 11;
  return DispatchBySize(ctx.node, out.dtype(), [&](auto zero) {
    using U = decltype(zero);
    const U off = values.data_as<U>()[0];
    const U on = values.data_as<U>()[1];
    U* o = out.data_as<U>();
    for (int64_t i = 0; i < out.num_elements(); ++i) o[i] = off;
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t b = 0; b < inner; ++b) {
        int64_t k = indices[static_cast<size_t>(a * inner + b)];
        if (k < 0 && wrap_negative) k += depth;
        if (k < 0 || k >= depth) continue;  // out of range: all off
        o[(a * depth + k) * inner + b] = on;
      }
    }
  });
}

}  // namespace

void RegisterGatherOps(OpRegistry& registry) {
  // Each output element is one data element: injective.
  registry.Register(MakeOpDef("Gather", OpKind::kInjective, 2, 2, InferGather, RunGather));
  registry.Register(MakeOpDef("GatherElements", OpKind::kInjective, 2, 2, InferGatherElements,
                              RunGatherElements));
  // OneHot writes values chosen by comparing indices: not a plain element move.
  registry.Register(MakeOpDef("OneHot", OpKind::kOpaque, 3, 3, InferOneHot, RunOneHot));
}

}  // namespace collage
