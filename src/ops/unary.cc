// Unary elementwise ops: activations, math functions, Clip, Not. Each op is a small functor
// template (built from the node's attributes, applied to one element) registered through
// one generic OpDef, so every op gets the same dtype check and the same vectorisable loop.
// Cast/CastLike/Identity/Dropout live in cast.cc.
#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "collage/sdk/op_params.h"
#include "ops/elementwise.h"
#include "ops/gelu_math.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

// ---- Activations -------------------------------------------------------------------------

template <typename T>
struct Relu : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T x) const { return x < T(0) ? T(0) : x; }  // NaN stays NaN
};

template <typename T>
struct LeakyRelu {
  explicit LeakyRelu(const Attributes& a) : alpha(static_cast<T>(a.GetFloat("alpha", 0.01f))) {}
  T operator()(T x) const { return x < T(0) ? alpha * x : x; }
  T alpha;
};

template <typename T>
struct Elu {
  explicit Elu(const Attributes& a) : alpha(static_cast<T>(a.GetFloat("alpha", 1.0f))) {}
  T operator()(T x) const { return x < T(0) ? alpha * (std::exp(x) - T(1)) : x; }
  T alpha;
};

template <typename T>
struct Selu {
  explicit Selu(const Attributes& a)
      : alpha(static_cast<T>(a.GetFloat("alpha", 1.67326319217681884765625f))),
        gamma(static_cast<T>(a.GetFloat("gamma", 1.05070102214813232421875f))) {}
  T operator()(T x) const { return x > T(0) ? gamma * x : gamma * (alpha * std::exp(x) - alpha); }
  T alpha, gamma;
};

template <typename T>
struct Celu {
  explicit Celu(const Attributes& a) : alpha(static_cast<T>(a.GetFloat("alpha", 1.0f))) {}
  T operator()(T x) const {
    // NanMax / NanMin: NaN in, NaN out (std::max(0, NaN) would give 0).
    return NanMax(T(0), x) + NanMin(T(0), alpha * (std::exp(x / alpha) - T(1)));
  }
  T alpha;
};

template <typename T>
struct ThresholdedRelu {
  explicit ThresholdedRelu(const Attributes& a)
      : alpha(static_cast<T>(a.GetFloat("alpha", 1.0f))) {}
  // NaN stays NaN, as the spec's clip-based definition gives.
  T operator()(T x) const { return x > alpha || x != x ? x : T(0); }
  T alpha;
};

template <typename T>
struct Sigmoid : NoAttributes {
  using NoAttributes::NoAttributes;
  // Two branches so that exp never overflows.
  T operator()(T x) const {
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
  }
};

template <typename T>
struct HardSigmoid {
  explicit HardSigmoid(const Attributes& a)
      : alpha(static_cast<T>(a.GetFloat("alpha", 0.2f))),
        beta(static_cast<T>(a.GetFloat("beta", 0.5f))) {}
  T operator()(T x) const { return NanMax(T(0), NanMin(T(1), alpha * x + beta)); }
  T alpha, beta;
};

template <typename T>
struct HardSwish : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T x) const { return x * NanMax(T(0), NanMin(T(1), x / T(6) + T(0.5))); }
};

// log(1 + exp(x)) without overflow for large x.
template <typename T>
T StableSoftplus(T x) {
  return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

template <typename T>
struct Softplus : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T x) const { return StableSoftplus(x); }
};

template <typename T>
struct Softsign : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T x) const { return x / (T(1) + std::abs(x)); }
};

template <typename T>
struct Mish : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T x) const { return x * std::tanh(StableSoftplus(x)); }
};

template <typename T>
struct Gelu {
  explicit Gelu(const Attributes& a)
      : tanh_approximation(a.GetString("approximate", "none") == "tanh") {}
  T operator()(T x) const { return tanh_approximation ? GeluTanh(x) : GeluExact(x); }
  bool tanh_approximation;
};

template <typename T>
struct Shrink {
  explicit Shrink(const Attributes& a)
      : lambd(a.GetFloat("lambd", 0.5f)), bias(a.GetFloat("bias", 0.0f)) {}
  // In double, then back to T: the thresholds are floats even for integer inputs, and an
  // integer result out of T's range saturates (a plain cast would be undefined).
  T operator()(T x) const {
    const double v = static_cast<double>(x);
    if (v < -lambd) return SaturatingCast<T>(v + bias);
    if (v > lambd) return SaturatingCast<T>(v - bias);
    return T(0);
  }
  double lambd, bias;
};

// ---- Math --------------------------------------------------------------------------------

#define COLLAGE_FLOAT_MATH_OP(Name, expr)    \
  template <typename T>                      \
  struct Name : NoAttributes {               \
    using NoAttributes::NoAttributes;        \
    T operator()(T x) const { return expr; } \
  };

COLLAGE_FLOAT_MATH_OP(Tanh, std::tanh(x))
COLLAGE_FLOAT_MATH_OP(Erf, std::erf(x))
COLLAGE_FLOAT_MATH_OP(Sqrt, std::sqrt(x))
COLLAGE_FLOAT_MATH_OP(Exp, std::exp(x))
COLLAGE_FLOAT_MATH_OP(Log, std::log(x))
COLLAGE_FLOAT_MATH_OP(Reciprocal, T(1) / x)
COLLAGE_FLOAT_MATH_OP(Floor, std::floor(x))
COLLAGE_FLOAT_MATH_OP(Ceil, std::ceil(x))
// nearbyint rounds half to even in the default rounding mode, as ONNX Round requires.
COLLAGE_FLOAT_MATH_OP(Round, std::nearbyint(x))
COLLAGE_FLOAT_MATH_OP(Sin, std::sin(x))
COLLAGE_FLOAT_MATH_OP(Cos, std::cos(x))
COLLAGE_FLOAT_MATH_OP(Tan, std::tan(x))
COLLAGE_FLOAT_MATH_OP(Asin, std::asin(x))
COLLAGE_FLOAT_MATH_OP(Acos, std::acos(x))
COLLAGE_FLOAT_MATH_OP(Atan, std::atan(x))
COLLAGE_FLOAT_MATH_OP(Sinh, std::sinh(x))
COLLAGE_FLOAT_MATH_OP(Cosh, std::cosh(x))
COLLAGE_FLOAT_MATH_OP(Asinh, std::asinh(x))
COLLAGE_FLOAT_MATH_OP(Acosh, std::acosh(x))
COLLAGE_FLOAT_MATH_OP(Atanh, std::atanh(x))

#undef COLLAGE_FLOAT_MATH_OP

template <typename T>
struct Neg : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T x) const { return WrapNeg(x); }
};

template <typename T>
struct Abs : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>)
      return x;
    else
      return x < T(0) ? WrapNeg(x) : x;
  }
};

template <typename T>
struct Sign : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T x) const {
    if (x > T(0)) return T(1);
    if constexpr (std::is_signed_v<T>) {
      if (x < T(0)) return T(-1);
    }
    return x == T(0) ? T(0) : x;  // NaN stays NaN
  }
};

template <typename T>
struct IsNaN : NoAttributes {
  using NoAttributes::NoAttributes;
  bool operator()(T x) const { return std::isnan(x); }
};

template <typename T>
struct IsInf {
  explicit IsInf(const Attributes& a)
      : positive(a.GetInt("detect_positive", 1) != 0),
        negative(a.GetInt("detect_negative", 1) != 0) {}
  bool operator()(T x) const {
    return (positive && x == std::numeric_limits<T>::infinity()) ||
           (negative && x == -std::numeric_limits<T>::infinity());
  }
  bool positive, negative;
};

template <typename T>
struct Not : NoAttributes {
  using NoAttributes::NoAttributes;
  bool operator()(T x) const { return !x; }
};

template <typename T>
struct BitwiseNot : NoAttributes {  // opset 18, any integer type
  using NoAttributes::NoAttributes;
  T operator()(T x) const { return static_cast<T>(~x); }
};

// ---- Registration ------------------------------------------------------------------------

// An op y = Op(x) elementwise, for the dtypes in kSet; the output dtype is what the functor
// returns (bool for IsNaN/IsInf/Not). `cost` is the rough price of one element relative
// to an addition (it decides when to use threads).
template <template <typename> class Op, DTypeSet kSet>
void RegisterUnary(OpRegistry& registry, const char* name, int64_t cost,
                   InferCheckFn check = nullptr) {
  OpDef def;
  def.op_type = name;
  def.kind = OpKind::kElementwise;
  def.infer = [check](InferContext& ctx) -> Status {
    COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, kSet));
    if (check != nullptr) COLLAGE_RETURN_IF_ERROR(check(ctx));
    DType out_dtype = ctx.input_type(0).dtype;
    COLLAGE_RETURN_IF_ERROR(DispatchAny(ctx.node, out_dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (InDTypeSet<T>(kSet)) {
        out_dtype = DTypeOf<std::invoke_result_t<Op<T>, T>>();
      }
    }));
    ctx.output_types[0] = TensorType{out_dtype, ctx.input_type(0).shape};
    return Status::Ok();
  };
  def.run = [cost](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.inputs[0];
    Tensor& y = ctx.outputs[0];
    bool ran = false;
    COLLAGE_RETURN_IF_ERROR(DispatchAny(ctx.node, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (InDTypeSet<T>(kSet)) {
        using Out = std::invoke_result_t<Op<T>, T>;
        const Op<T> op(ctx.attributes());
        MapUnary(x.data_as<T>(), y.data_as<Out>(), x.num_elements(), cost, op);
        ran = true;
      }
    }));
    if (!ran) {
      return OpError(ctx.node, StatusCode::kUnsupported, "dtype {} is not supported",
                     DTypeName(x.dtype()));
    }
    return Status::Ok();
  };
  registry.Register(std::move(def));
}

Status CheckGelu(const InferContext& ctx) {
  const std::string approximate = ctx.attributes().GetString("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "approximate must be \"none\" or \"tanh\", not \"{}\"", approximate);
  }
  return Status::Ok();
}

Status CheckCelu(const InferContext& ctx) {
  if (ctx.attributes().GetFloat("alpha", 1.0f) == 0.0f) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "alpha must not be 0");
  }
  return Status::Ok();
}

// ---- Clip --------------------------------------------------------------------------------
// The bounds' semantics by opset are ReadClipBounds's (collage/sdk/op_params.h); inference
// checks their types, which it sees whether or not they are constants.

Status InferClip(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, DTypeSet::kNumeric));
  if (ctx.opset < 11) {
    if (ctx.num_inputs() > 1 && (ctx.has_input(1) || ctx.has_input(2))) {
      return OpError(ctx.node, StatusCode::kInvalidModel,
                     "min/max are attributes before opset 11, not inputs");
    }
    COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, DTypeSet::kFloat));
  }
  for (size_t i = 1; i <= 2; ++i) {
    if (!ctx.has_input(i)) continue;
    COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, i));
    if (ctx.input_type(i).num_elements() != 1) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "{} must be a scalar, got shape {}",
                     i == 1 ? "min" : "max", ShapeToString(ctx.input_type(i).shape));
    }
  }
  ctx.output_types[0] = ctx.input_type(0);
  return Status::Ok();
}

Status RunClip(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const Tensor* min = ctx.has_input(1) ? &ctx.inputs[1] : nullptr;
  const Tensor* max = ctx.has_input(2) ? &ctx.inputs[2] : nullptr;
  Status status;
  COLLAGE_RETURN_IF_ERROR(DispatchNumeric(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const StatusOr<ClipBounds<T>> bounds = ReadClipBounds<T>(ctx.node, ctx.opset, min, max);
    if (!bounds.ok()) {
      status = bounds.status();
      return;
    }
    const T lo = bounds->lo;
    const T hi = bounds->hi;
    MapUnary(x.data_as<T>(), ctx.outputs[0].data_as<T>(), x.num_elements(), 1,
             [lo, hi](T v) { return std::min(std::max(v, lo), hi); });
  }));
  return status;
}

void RegisterClip(OpRegistry& registry) {
  OpDef def;
  def.op_type = "Clip";
  def.kind = OpKind::kElementwise;
  def.max_inputs = 3;
  def.infer = InferClip;
  def.run = RunClip;
  registry.Register(std::move(def));
}

}  // namespace

void RegisterUnaryOps(OpRegistry& registry) {
  constexpr DTypeSet kFloat = DTypeSet::kFloat;
  // Activations.
  RegisterUnary<Relu, DTypeSet::kSignedOrFloat>(registry, "Relu", 1);
  RegisterUnary<LeakyRelu, kFloat>(registry, "LeakyRelu", 1);
  RegisterUnary<Elu, kFloat>(registry, "Elu", 8);
  RegisterUnary<Selu, kFloat>(registry, "Selu", 8);
  RegisterUnary<Celu, kFloat>(registry, "Celu", 8, CheckCelu);
  RegisterUnary<ThresholdedRelu, kFloat>(registry, "ThresholdedRelu", 1);
  RegisterUnary<Sigmoid, kFloat>(registry, "Sigmoid", 8);
  RegisterUnary<HardSigmoid, kFloat>(registry, "HardSigmoid", 1);
  RegisterUnary<HardSwish, kFloat>(registry, "HardSwish", 1);
  RegisterUnary<Softplus, kFloat>(registry, "Softplus", 16);
  RegisterUnary<Softsign, kFloat>(registry, "Softsign", 2);
  RegisterUnary<Mish, kFloat>(registry, "Mish", 24);
  RegisterUnary<Gelu, kFloat>(registry, "Gelu", 8, CheckGelu);
  RegisterUnary<Shrink, DTypeSet::kNumeric>(registry, "Shrink", 1);
  RegisterClip(registry);
  // Math.
  RegisterUnary<Tanh, kFloat>(registry, "Tanh", 8);
  RegisterUnary<Erf, kFloat>(registry, "Erf", 8);
  RegisterUnary<Sqrt, kFloat>(registry, "Sqrt", 2);
  RegisterUnary<Exp, kFloat>(registry, "Exp", 8);
  RegisterUnary<Log, kFloat>(registry, "Log", 8);
  RegisterUnary<Reciprocal, kFloat>(registry, "Reciprocal", 2);
  RegisterUnary<Floor, kFloat>(registry, "Floor", 1);
  RegisterUnary<Ceil, kFloat>(registry, "Ceil", 1);
  RegisterUnary<Round, kFloat>(registry, "Round", 1);
  RegisterUnary<Sin, kFloat>(registry, "Sin", 8);
  RegisterUnary<Cos, kFloat>(registry, "Cos", 8);
  RegisterUnary<Tan, kFloat>(registry, "Tan", 8);
  RegisterUnary<Asin, kFloat>(registry, "Asin", 8);
  RegisterUnary<Acos, kFloat>(registry, "Acos", 8);
  RegisterUnary<Atan, kFloat>(registry, "Atan", 8);
  RegisterUnary<Sinh, kFloat>(registry, "Sinh", 8);
  RegisterUnary<Cosh, kFloat>(registry, "Cosh", 8);
  RegisterUnary<Asinh, kFloat>(registry, "Asinh", 8);
  RegisterUnary<Acosh, kFloat>(registry, "Acosh", 8);
  RegisterUnary<Atanh, kFloat>(registry, "Atanh", 8);
  RegisterUnary<Neg, DTypeSet::kSignedOrFloat>(registry, "Neg", 1);
  RegisterUnary<Abs, DTypeSet::kNumeric>(registry, "Abs", 1);
  RegisterUnary<Sign, DTypeSet::kNumeric>(registry, "Sign", 1);
  RegisterUnary<IsNaN, kFloat>(registry, "IsNaN", 1);
  RegisterUnary<IsInf, kFloat>(registry, "IsInf", 1);
  RegisterUnary<Not, DTypeSet::kBool>(registry, "Not", 1);
  RegisterUnary<BitwiseNot, DTypeSet::kInteger>(registry, "BitwiseNot", 1);
  // Cast, CastLike, Identity, Dropout.
  RegisterCastOps(registry);
}

}  // namespace collage
