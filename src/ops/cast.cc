// Ops that convert or pass data through unchanged: Cast, CastLike, Identity, and Dropout
// (which is the identity at inference). Part of the unary family (RegisterUnaryOps).
#include <algorithm>
#include <cstring>
#include <vector>

#include "ops/elementwise.h"
#include "ops/half_float.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

bool IsCastable(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kBool: return true;
    default: return false;
  }
}

Status RequireCastable(const Node& node, DType dtype, const char* what) {
  if (IsCastable(dtype)) return Status::Ok();
  return OpError(node, StatusCode::kUnsupported,
                 "{} dtype {} is not supported (numeric types, float16, bfloat16 and bool are; "
                 "strings, float8 and complex are not)",
                 what, DTypeName(dtype));
}

bool IsHalf(DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; }

// Casts from or to float16 / bfloat16 go through float, which holds every 16-bit value exactly;
// rounding into 16 bits is half to even. (A double is rounded to float first: the two
// roundings can differ from one only for values within 2^-29 of a tie.)
Status ConvertThroughFloat(const Node& node, const Tensor& in, Tensor& out) {
  const int64_t n = in.num_elements();
  std::vector<float> values(static_cast<size_t>(n));
  if (IsHalf(in.dtype())) {
    const auto* bits = in.data_as<uint16_t>();
    const bool half = in.dtype() == DType::kFloat16;
    for (int64_t i = 0; i < n; ++i)
      values[i] = half ? HalfToFloat(bits[i]) : BFloat16ToFloat(bits[i]);
  } else {
    COLLAGE_RETURN_IF_ERROR(DispatchAny(node, in.dtype(), [&](auto tag) {
      using From = decltype(tag);
      MapUnary(in.data_as<From>(), values.data(), n, 1,
               [](From v) { return static_cast<float>(v); });
    }));
  }
  if (IsHalf(out.dtype())) {
    auto* bits = out.data_as<uint16_t>();
    const bool half = out.dtype() == DType::kFloat16;
    for (int64_t i = 0; i < n; ++i)
      bits[i] = half ? FloatToHalf(values[i]) : FloatToBFloat16(values[i]);
    return Status::Ok();
  }
  return DispatchAny(node, out.dtype(), [&](auto tag) {
    using To = decltype(tag);
    MapUnary(values.data(), out.data_as<To>(), n, 1, [](float v) { return SaturatingCast<To>(v); });
  });
}

Status ConvertTensor(const Node& node, const Tensor& in, Tensor& out) {
  if (in.dtype() == out.dtype()) {
    if (in.data() != out.data() && in.nbytes() > 0) std::memcpy(out.data(), in.data(), in.nbytes());
    return Status::Ok();
  }
  if (IsHalf(in.dtype()) || IsHalf(out.dtype())) return ConvertThroughFloat(node, in, out);
  Status inner_status;
  Status status = DispatchAny(node, in.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    inner_status = DispatchAny(node, out.dtype(), [&](auto to_tag) {
      using To = decltype(to_tag);
      MapUnary(in.data_as<From>(), out.data_as<To>(), in.num_elements(), 1,
               [](From v) { return SaturatingCast<To>(v); });
    });
  });
  COLLAGE_RETURN_IF_ERROR(status);
  return inner_status;
}

Status InferCast(InferContext& ctx) {
  if (!ctx.attributes().Has("to")) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "the 'to' attribute is missing");
  }
  const auto to = static_cast<DType>(ctx.attributes().GetInt("to", 0));
  COLLAGE_RETURN_IF_ERROR(RequireCastable(ctx.node, ctx.input_type(0).dtype, "input"));
  COLLAGE_RETURN_IF_ERROR(RequireCastable(ctx.node, to, "target"));
  // opset 19's `saturate` only concerns float8 targets, which are refused above.
  ctx.output_types[0] = TensorType{to, ctx.input_type(0).shape};
  return Status::Ok();
}

Status InferCastLike(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireCastable(ctx.node, ctx.input_type(0).dtype, "input"));
  COLLAGE_RETURN_IF_ERROR(RequireCastable(ctx.node, ctx.input_type(1).dtype, "target"));
  ctx.output_types[0] = TensorType{ctx.input_type(1).dtype, ctx.input_type(0).shape};
  return Status::Ok();
}

Status RunCast(KernelContext& ctx) {
  return ConvertTensor(ctx.node, ctx.inputs[0], ctx.outputs[0]);
}

// Identity and Dropout only move bytes, so any dtype with a fixed size works (float16 too).
Status RequireFixedSize(const InferContext& ctx) {
  const DType dtype = ctx.input_type(0).dtype;
  if (DTypeSize(dtype) > 0) return Status::Ok();
  return OpError(ctx.node, StatusCode::kUnsupported, "dtype {} is not supported", DTypeName(dtype));
}

void CopyTensor(const Tensor& in, Tensor& out) {
  if (in.data() != out.data() && in.nbytes() > 0) std::memcpy(out.data(), in.data(), in.nbytes());
}

Status InferIdentity(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireFixedSize(ctx));
  ctx.output_types[0] = ctx.input_type(0);
  return Status::Ok();
}

Status RunIdentity(KernelContext& ctx) {
  CopyTensor(ctx.inputs[0], ctx.outputs[0]);
  return Status::Ok();
}

// ---- Dropout -------------------------------------------------------------------------------
// Before opset 12 Dropout has no training switch: an inference runtime treats it as the
// identity (the ratio attribute and opset 6's is_test are ignored, as ONNX Runtime does).
// From opset 12, input 2 (training_mode, default false) turns on random dropping, which a
// deterministic reference cannot do; with ratio 0 it is the identity even then. Type
// inference refuses a training_mode that is not a constant; the kernel checks the values
// again (its inputs may reach it without inference having seen them as constants).

constexpr float kDefaultDropoutRatio = 0.5f;

// Refuses training mode with a ratio other than 0, given the values known so far (nullptr
// where a value is not known yet; the kernel checks again with the real data).
Status CheckDropoutMode(const Node& node, int64_t opset, const Tensor* ratio,
                        const Tensor* training_mode, bool has_ratio) {
  if (opset < 12 || training_mode == nullptr) return Status::Ok();
  if (training_mode->num_elements() != 1) {
    return OpError(node, StatusCode::kInvalidModel, "training_mode must be a scalar");
  }
  if (training_mode->ToVector<int64_t>()[0] == 0) return Status::Ok();
  if (has_ratio && ratio == nullptr) return Status::Ok();  // not known until run time
  const float r = has_ratio ? ratio->ToVector<float>()[0] : kDefaultDropoutRatio;
  if (r == 0.0f) return Status::Ok();
  return OpError(node, StatusCode::kUnsupported,
                 "training mode with ratio {} drops random elements; only inference (or "
                 "ratio 0) is supported",
                 r);
}

Status InferDropout(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireFixedSize(ctx));
  if (ctx.opset < 12 && ctx.num_inputs() > 1 && (ctx.has_input(1) || ctx.has_input(2))) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "ratio/training_mode are inputs only from opset 12");
  }
  for (size_t i = 1; i <= 2; ++i) {
    if (ctx.has_input(i) && ctx.input_type(i).num_elements() != 1) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "input {} must be a scalar", i);
    }
  }
  if (ctx.has_input(2) && ctx.input_type(2).dtype != DType::kBool) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "training_mode must be bool, not {}",
                   DTypeName(ctx.input_type(2).dtype));
  }
  if (ctx.has_input(1)) COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 1, DTypeSet::kFloat));
  // A training_mode fed at run time could switch random dropping on: refuse it now, when the
  // model loads, rather than fail some runs later.
  if (ctx.opset >= 12 && ctx.has_input(2) && ctx.input_value(2) == nullptr) {
    return OpError(ctx.node, StatusCode::kUnsupported,
                   "training_mode is not a constant, so training (random dropping) cannot be "
                   "ruled out; only inference is supported");
  }
  COLLAGE_RETURN_IF_ERROR(CheckDropoutMode(ctx.node, ctx.opset, ctx.input_value(1),
                                           ctx.has_input(2) ? ctx.input_value(2) : nullptr,
                                           ctx.has_input(1)));
  ctx.output_types[0] = ctx.input_type(0);
  if (ctx.output_types.size() > 1) {
    // The mask is bool from opset 10; before, it had the input's type.
    const DType mask = ctx.opset >= 10 ? DType::kBool : ctx.input_type(0).dtype;
    ctx.output_types[1] = TensorType{mask, ctx.input_type(0).shape};
  }
  return Status::Ok();
}

Status RunDropout(KernelContext& ctx) {
  if (ctx.has_input(2)) {
    COLLAGE_RETURN_IF_ERROR(CheckDropoutMode(ctx.node, ctx.opset,
                                             ctx.has_input(1) ? &ctx.inputs[1] : nullptr,
                                             &ctx.inputs[2], ctx.has_input(1)));
  }
  CopyTensor(ctx.inputs[0], ctx.outputs[0]);
  if (ctx.outputs.size() > 1 && !ctx.outputs[1].empty()) {
    Tensor& mask = ctx.outputs[1];
    // Nothing is dropped: the mask keeps every element.
    return DispatchAny(ctx.node, mask.dtype(), [&](auto tag) {
      using T = decltype(tag);
      std::fill_n(mask.data_as<T>(), mask.num_elements(), T(1));
    });
  }
  return Status::Ok();
}

}  // namespace

void RegisterCastOps(OpRegistry& registry) {
  registry.Register(OpDef{"Cast", "", OpKind::kElementwise, 1, 1, 1, 1, InferCast, RunCast});
  registry.Register(
      OpDef{"CastLike", "", OpKind::kElementwise, 2, 2, 1, 1, InferCastLike, RunCast});
  registry.Register(
      OpDef{"Identity", "", OpKind::kElementwise, 1, 1, 1, 1, InferIdentity, RunIdentity});
  registry.Register(
      OpDef{"Dropout", "", OpKind::kElementwise, 1, 3, 1, 2, InferDropout, RunDropout});
}

}  // namespace collage
