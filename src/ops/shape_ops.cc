// Ops that change only the shape of their input (Reshape, Flatten, Squeeze, Unsqueeze) and
// ops that make tensors out of shapes, attributes or scalars (Shape, Size, Constant,
// ConstantOfShape, Range). Slicing, gathering and layout ops live in slice_ops.cc,
// gather_ops.cc and layout_ops.cc.
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

#include "ops/data_movement.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

// Reshape-like kernels: the row-major element order does not change, so the output is the
// input's bytes (skipped when the runtime hands the same buffer as input and output).
Status CopyAllBytes(KernelContext& ctx) {
  const Tensor& in = ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  if (in.nbytes() != out.nbytes()) {
    return OpError(ctx.node, StatusCode::kInternal, "input has {} bytes, output {}", in.nbytes(),
                   out.nbytes());
  }
  if (out.data() != in.data() && in.nbytes() > 0) std::memcpy(out.data(), in.data(), in.nbytes());
  return Status::Ok();
}

// ---- Reshape ----

StatusOr<Shape> ReshapeOutputShape(const Node& node, int64_t opset, const Shape& in,
                                   const IntInputs& ints) {
  std::vector<int64_t> target;
  if (opset < 5) {
    target = node.attributes.GetInts("shape");  // Reshape-1 had the shape as an attribute
  } else {
    COLLAGE_ASSIGN_OR_RETURN(target, ints.Get(1, "shape"));
  }
  const bool allowzero = node.attributes.GetInt("allowzero", 0) != 0;
  Shape out(target.size());
  int64_t inferred = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == -1) {
      if (inferred >= 0) {
        return OpError(node, StatusCode::kInvalidModel, "shape {} has more than one -1",
                       ShapeToString(target));
      }
      inferred = static_cast<int64_t>(i);
      continue;
    }
    if (d == 0 && !allowzero) {
      // 0 copies the input dim at the same position (unless allowzero).
      if (i >= in.size()) {
        return OpError(node, StatusCode::kInvalidModel,
                       "shape[{}] is 0 (copy the input dim) but the input {} has rank {}", i,
                       ShapeToString(in), in.size());
      }
      d = in[i];
    }
    if (d < 0) {
      return OpError(node, StatusCode::kInvalidModel, "shape[{}] is {}, which is invalid", i,
                     target[i]);
    }
    out[i] = d;
  }
  // The product of the given dims (the -1 counts as 1), which hostile shapes can push past
  // int64: [2^32, 2^32, 0] is fine (0 elements), [2^32, 2^32, -1] is not.
  if (inferred >= 0) out[static_cast<size_t>(inferred)] = 1;
  const std::optional<int64_t> product = CheckedProduct(out);
  if (!product) {
    return OpError(node, StatusCode::kInvalidModel,
                   "shape [{}]: the product of its dims overflows int64", fmt::join(target, ","));
  }
  const int64_t known = *product;
  const int64_t count = NumElements(in);
  if (inferred >= 0) {
    if (known == 0 || count % known != 0) {
      return OpError(node, StatusCode::kInvalidModel,
                     "cannot infer the -1 dim of shape [{}] for an input of shape {}",
                     fmt::join(target, ","), ShapeToString(in));
    }
    out[static_cast<size_t>(inferred)] = count / known;
  }
  if (NumElements(out) != count) {
    return OpError(node, StatusCode::kInvalidModel,
                   "cannot reshape {} ({} elements) to shape [{}] ({} elements)", ShapeToString(in),
                   count, fmt::join(target, ","), NumElements(out));
  }
  return out;
}

Status InferReshape(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, ctx.input_type(0).dtype, 0));
  COLLAGE_ASSIGN_OR_RETURN(
      Shape out, ReshapeOutputShape(ctx.node, ctx.opset, ctx.input_type(0).shape, IntInputs(ctx)));
  ctx.output_types[0] = {ctx.input_type(0).dtype, std::move(out)};
  return Status::Ok();
}

// ---- Flatten ----

Status InferFlatten(InferContext& ctx) {
  const TensorType& in = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, in.dtype, 0));
  const int64_t rank = static_cast<int64_t>(in.shape.size());
  const int64_t attr = ctx.attributes().GetInt("axis", 1);
  // Unlike most axes, Flatten's may equal the rank (everything goes to the first dim).
  const int64_t axis = attr < 0 ? attr + rank : attr;
  if (axis < 0 || axis > rank) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "axis {} is out of range for rank {}", attr,
                   rank);
  }
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= in.shape[static_cast<size_t>(i)];
  ctx.output_types[0] = {in.dtype, {outer, inner}};
  return Status::Ok();
}

// ---- Squeeze / Unsqueeze ----

// Axes of Squeeze/Unsqueeze: an attribute before opset 13, an input from 13 on.
StatusOr<std::optional<std::vector<int64_t>>> SqueezeAxes(const Node& node, int64_t opset,
                                                          const IntInputs& ints) {
  if (opset < 13) {
    if (!node.attributes.Has("axes")) return std::optional<std::vector<int64_t>>();
    return std::optional<std::vector<int64_t>>(node.attributes.GetInts("axes"));
  }
  return ints.GetOptional(1, "axes");
}

StatusOr<Shape> SqueezeOutputShape(const Node& node, int64_t opset, const Shape& in,
                                   const IntInputs& ints) {
  COLLAGE_ASSIGN_OR_RETURN(auto axes, SqueezeAxes(node, opset, ints));
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  if (!axes) {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;  // no axes: every 1-dim
  } else {
    COLLAGE_ASSIGN_OR_RETURN(auto normalized, NormalizeAxes(node, *axes, rank, "axes"));
    for (int64_t a : normalized) {
      if (in[static_cast<size_t>(a)] != 1) {
        return OpError(node, StatusCode::kInvalidModel,
                       "cannot squeeze axis {}: its dim is {}, not 1 (input {})", a,
                       in[static_cast<size_t>(a)], ShapeToString(in));
      }
      drop[static_cast<size_t>(a)] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!drop[i]) out.push_back(in[i]);
  }
  return out;
}

StatusOr<Shape> UnsqueezeOutputShape(const Node& node, int64_t opset, const Shape& in,
                                     const IntInputs& ints) {
  COLLAGE_ASSIGN_OR_RETURN(auto axes, SqueezeAxes(node, opset, ints));
  if (!axes) {
    return OpError(node, StatusCode::kInvalidModel, "has no axes ({})",
                   opset < 13 ? "attribute" : "input 1");
  }
  // Axes index the output, whose rank counts the new dims.
  const int64_t out_rank = static_cast<int64_t>(in.size() + axes->size());
  COLLAGE_ASSIGN_OR_RETURN(auto normalized, NormalizeAxes(node, *axes, out_rank, "axes"));
  std::vector<bool> is_new(static_cast<size_t>(out_rank), false);
  for (int64_t a : normalized) is_new[static_cast<size_t>(a)] = true;
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    out.push_back(is_new[static_cast<size_t>(i)] ? 1 : in[next++]);
  }
  return out;
}

template <StatusOr<Shape> (*OutputShape)(const Node&, int64_t, const Shape&, const IntInputs&)>
Status InferSqueezeLike(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, ctx.input_type(0).dtype, 0));
  COLLAGE_ASSIGN_OR_RETURN(
      Shape out, OutputShape(ctx.node, ctx.opset, ctx.input_type(0).shape, IntInputs(ctx)));
  ctx.output_types[0] = {ctx.input_type(0).dtype, std::move(out)};
  return Status::Ok();
}

// ---- Shape / Size ----

// Shape-15 returns dims [start, end) of the input shape, both clamped into [0, rank].
std::pair<int64_t, int64_t> ShapeRange(const Node& node, int64_t rank) {
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clamp(node.attributes.GetInt("start", 0));
  int64_t end = clamp(node.attributes.GetInt("end", rank));
  return {start, std::max(start, end)};
}

Status InferShape(InferContext& ctx) {
  auto [start, end] = ShapeRange(ctx.node, static_cast<int64_t>(ctx.input_type(0).shape.size()));
  ctx.output_types[0] = {DType::kInt64, {end - start}};
  return Status::Ok();
}

Status RunShape(KernelContext& ctx) {
  const Shape& shape = ctx.inputs[0].shape();
  auto [start, end] = ShapeRange(ctx.node, static_cast<int64_t>(shape.size()));
  int64_t* out = ctx.outputs[0].data_as<int64_t>();
  for (int64_t i = start; i < end; ++i) out[i - start] = shape[static_cast<size_t>(i)];
  return Status::Ok();
}

Status InferSize(InferContext& ctx) {
  ctx.output_types[0] = {DType::kInt64, {}};
  return Status::Ok();
}

Status RunSize(KernelContext& ctx) {
  ctx.outputs[0].data_as<int64_t>()[0] = ctx.inputs[0].num_elements();
  return Status::Ok();
}

// ---- Constant ----

// The tensor a Constant node produces, from whichever value attribute it carries.
StatusOr<Tensor> ConstantValue(const Node& node) {
  const Attributes& attrs = node.attributes;
  for (const char* refused : {"sparse_value", "value_string", "value_strings"}) {
    if (attrs.Has(refused)) {
      return OpError(node, StatusCode::kUnsupported, "attribute '{}' is not supported", refused);
    }
  }
  int count = 0;
  Tensor value;
  if (attrs.Has("value")) {
    ++count;
    value = attrs.GetTensor("value");
    if (value.empty()) {
      return OpError(node, StatusCode::kInvalidModel, "attribute 'value' is not a tensor");
    }
  }
  if (attrs.Has("value_float")) {
    ++count;
    value = Tensor::Scalar<float>(attrs.GetFloat("value_float", 0.0f));
  }
  if (attrs.Has("value_floats")) {
    ++count;
    std::vector<float> v = attrs.GetFloats("value_floats");
    value = Tensor::FromVector<float>({static_cast<int64_t>(v.size())}, v);
  }
  if (attrs.Has("value_int")) {
    ++count;
    value = Tensor::Scalar<int64_t>(attrs.GetInt("value_int", 0));
  }
  if (attrs.Has("value_ints")) {
    ++count;
    std::vector<int64_t> v = attrs.GetInts("value_ints");
    value = Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
  }
  if (count != 1) {
    return OpError(node, StatusCode::kInvalidModel,
                   "needs exactly one value attribute (value, value_float(s), value_int(s)), "
                   "has {}",
                   count);
  }
  if (DTypeSize(value.dtype()) == 0) {
    return OpError(node, StatusCode::kUnsupported, "value of dtype {} is not supported",
                   DTypeName(value.dtype()));
  }
  return value;
}

Status InferConstant(InferContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(Tensor value, ConstantValue(ctx.node));
  ctx.output_types[0] = {value.dtype(), value.shape()};
  return Status::Ok();
}

Status RunConstant(KernelContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(Tensor value, ConstantValue(ctx.node));
  if (value.nbytes() > 0) std::memcpy(ctx.outputs[0].data(), value.data(), value.nbytes());
  return Status::Ok();
}

// ---- ConstantOfShape ----

// The fill value: a one-element tensor attribute, float32 0 when absent.
StatusOr<Tensor> FillValue(const Node& node) {
  if (!node.attributes.Has("value")) return Tensor::Scalar<float>(0.0f);
  Tensor value = node.attributes.GetTensor("value");
  if (value.empty() || value.num_elements() != 1) {
    return OpError(node, StatusCode::kInvalidModel,
                   "attribute 'value' must be a one-element tensor");
  }
  if (DTypeSize(value.dtype()) == 0) {
    return OpError(node, StatusCode::kUnsupported, "value of dtype {} is not supported",
                   DTypeName(value.dtype()));
  }
  return value;
}

Status InferConstantOfShape(InferContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(Tensor value, FillValue(ctx.node));
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> shape, IntInputs(ctx).Get(0, "shape"));
  for (int64_t d : shape) {
    if (d < 0) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "shape [{}] has a negative dim",
                     fmt::join(shape, ","));
    }
  }
  ctx.output_types[0] = {value.dtype(), Shape(shape)};
  return Status::Ok();
}

Status RunConstantOfShape(KernelContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(Tensor value, FillValue(ctx.node));
  Tensor& out = ctx.outputs[0];
  return DispatchBySize(ctx.node, out.dtype(), [&](auto zero) {
    using U = decltype(zero);
    const U v = value.data_as<U>()[0];
    U* o = out.data_as<U>();
    for (int64_t i = 0; i < out.num_elements(); ++i) o[i] = v;
  });
}

// ---- Range ----

// The scalar value of Range input i (start, limit or delta) as T.
template <typename T>
T RangeScalar(const Tensor& t) {
  return t.data_as<T>()[0];
}

// max(ceil((limit - start) / delta), 0) for integers, exactly, for any int64 start, limit
// and delta != 0 (int16/int32 inputs widen losslessly). |limit - start| can reach 2^64 - 1,
// which only uint64 holds, so distance and step are taken there; the count then fits in
// uint64 too, and the caller refuses one beyond int64.
uint64_t IntRangeCount(int64_t start, int64_t limit, int64_t delta) {
  if (delta > 0 ? limit <= start : limit >= start) return 0;
  const uint64_t distance = delta > 0 ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                      : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
  // 0 - x in uint64 is |x| for a negative int64 x, INT64_MIN included.
  const uint64_t step = delta > 0 ? static_cast<uint64_t>(delta) : 0 - static_cast<uint64_t>(delta);
  return distance / step + (distance % step != 0 ? 1 : 0);
}

// Number of elements: max(ceil((limit - start) / delta), 0), exact for integer types. Refused
// (never clamped or wrapped) when delta is 0, the count is NaN or does not fit in int64.
StatusOr<int64_t> RangeCount(const Node& node, const Tensor& start, const Tensor& limit,
                             const Tensor& delta) {
  std::optional<int64_t> count;
  std::string bad;  // why there is no count, with the values
  Status s = DispatchNumeric(node, start.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T s0 = RangeScalar<T>(start), l = RangeScalar<T>(limit), d = RangeScalar<T>(delta);
    if (d == T(0)) {
      bad = fmt::format("delta is 0 (start {}, limit {})", s0, l);
      return;
    }
    if constexpr (std::is_floating_point_v<T>) {
      // In double like numpy's arange (the ONNX reference). limit - start can overflow to
      // inf for doubles; that and an inf bound give an inf count, NaN anywhere a NaN one.
      const double n =
          std::ceil((static_cast<double>(l) - static_cast<double>(s0)) / static_cast<double>(d));
      if (std::isnan(n)) {
        bad = fmt::format("start {}, limit {}, delta {} give no element count (NaN)", s0, l, d);
        return;
      }
      if (n <= 0) {
        count = 0;
        return;
      }
      count = CheckedToInt64(n);
      if (!count) {
        bad = fmt::format("ceil((limit {} - start {}) / delta {}) = {} elements overflows int64", l,
                          s0, d, n);
      }
    } else {
      const uint64_t n =
          IntRangeCount(static_cast<int64_t>(s0), static_cast<int64_t>(l), static_cast<int64_t>(d));
      if (n > static_cast<uint64_t>(INT64_MAX)) {
        bad = fmt::format("ceil((limit {} - start {}) / delta {}) = {} elements overflows int64", l,
                          s0, d, n);
        return;
      }
      count = static_cast<int64_t>(n);
    }
  });
  COLLAGE_RETURN_IF_ERROR(s);
  if (!count) return OpError(node, StatusCode::kInvalidModel, "{}", bad);
  return *count;
}

Status InferRange(InferContext& ctx) {
  static const char* kNames[] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; ++i) {
    COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, i));
    if (ctx.input_type(i).num_elements() != 1) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "input {} ({}) must be a scalar, is {}",
                     i, kNames[i], ShapeToString(ctx.input_type(i).shape));
    }
  }
  COLLAGE_RETURN_IF_ERROR(RequireDType(
      ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kInt16, DType::kInt32, DType::kInt64}));
  for (size_t i = 0; i < 3; ++i) {
    if (ctx.input_value(i) == nullptr) {
      return OpError(ctx.node, StatusCode::kUnsupported,
                     "input {} ({}) is not constant; collage needs its value to know the output "
                     "shape",
                     i, kNames[i]);
    }
  }
  COLLAGE_ASSIGN_OR_RETURN(int64_t count, RangeCount(ctx.node, *ctx.input_value(0),
                                                     *ctx.input_value(1), *ctx.input_value(2)));
  ctx.output_types[0] = {ctx.input_type(0).dtype, {count}};
  return Status::Ok();
}

Status RunRange(KernelContext& ctx) {
  Tensor& out = ctx.outputs[0];
  return DispatchNumeric(ctx.node, out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T start = RangeScalar<T>(ctx.inputs[0]);
    const T delta = RangeScalar<T>(ctx.inputs[2]);
    T* o = out.data_as<T>();
    // start + i * delta (the spec's formula), not repeated addition, so float error does
    // not accumulate.
    if constexpr (std::is_floating_point_v<T>) {
      for (int64_t i = 0; i < out.num_elements(); ++i)
        o[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    } else {
      // Every element lies between start and limit, so it fits in T, but i * delta alone
      // need not: the fourth element of Range(INT64_MIN + 1, INT64_MAX, 2^62) is 2^62 + 1,
      // with 3 * 2^62 > INT64_MAX on the way. Unsigned arithmetic wraps by definition and the
      // true result is in range, so converting back gives it exactly.
      const uint64_t s0 = static_cast<uint64_t>(static_cast<int64_t>(start));
      const uint64_t d = static_cast<uint64_t>(static_cast<int64_t>(delta));
      for (int64_t i = 0; i < out.num_elements(); ++i)
        o[i] = static_cast<T>(static_cast<int64_t>(s0 + static_cast<uint64_t>(i) * d));
    }
  });
}

}  // namespace

void RegisterShapeOps(OpRegistry& registry) {
  // Reshape-like ops only relabel dims: each output element is one input element.
  registry.Register(MakeOpDef("Reshape", OpKind::kInjective, 1, 2, InferReshape, CopyAllBytes));
  registry.Register(MakeOpDef("Flatten", OpKind::kInjective, 1, 1, InferFlatten, CopyAllBytes));
  registry.Register(MakeOpDef("Squeeze", OpKind::kInjective, 1, 2,
                              InferSqueezeLike<SqueezeOutputShape>, CopyAllBytes));
  registry.Register(MakeOpDef("Unsqueeze", OpKind::kInjective, 1, 2,
                              InferSqueezeLike<UnsqueezeOutputShape>, CopyAllBytes));
  // The following ops are opaque: their outputs are computed from shapes, attributes or
  // scalars rather than read from input elements, so there is nothing for a fusion to
  // chain through, and the frontend folds them into constants anyway.
  registry.Register(MakeOpDef("Shape", OpKind::kOpaque, 1, 1, InferShape, RunShape));
  registry.Register(MakeOpDef("Size", OpKind::kOpaque, 1, 1, InferSize, RunSize));
  registry.Register(MakeOpDef("Constant", OpKind::kOpaque, 0, 0, InferConstant, RunConstant));
  registry.Register(MakeOpDef("ConstantOfShape", OpKind::kOpaque, 1, 1, InferConstantOfShape,
                              RunConstantOfShape));
  registry.Register(MakeOpDef("Range", OpKind::kOpaque, 3, 3, InferRange, RunRange));
}

}  // namespace collage
