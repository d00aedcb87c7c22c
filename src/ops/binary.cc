// Binary and n-ary elementwise ops with numpy broadcasting: arithmetic, comparisons, logic,
// Pow (base and exponent of different dtypes), Mod, BitShift, PRelu, Where and the variadic
// Sum/Mean/Min/Max. All of them run on BroadcastPlan (elementwise.h), whose runs make equal
// shapes and scalar operands plain vectorisable loops. Kind: kBroadcast for all of them.
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "ops/elementwise.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

// ---- Functors: T op(T, T) -> T or bool ---------------------------------------------------

template <typename T>
struct AddOp : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T a, T b) const { return WrapAdd(a, b); }
};
template <typename T>
struct SubOp : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T a, T b) const { return WrapSub(a, b); }
};
template <typename T>
struct MulOp : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T a, T b) const { return WrapMul(a, b); }
};

// Integer division truncates toward zero (C++ semantics, and what numpy's x / y followed by
// astype gives in the ONNX test data). A zero divisor is refused before the loop runs.
template <typename T>
struct DivOp : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T a, T b) const {
    if constexpr (std::is_signed_v<T> && std::is_integral_v<T>) {
      if (b == T(-1)) return WrapNeg(a);  // INT_MIN / -1 overflows (a trap on x86): wrap
    }
    return a / b;
  }
};

// fmod = 0: the result takes the divisor's sign (Python's %, integers only);
// fmod = 1: the dividend's sign (C's fmod / %).
template <typename T>
struct ModOp {
  explicit ModOp(const Attributes& a) : c_style(a.GetInt("fmod", 0) != 0) {}
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(a, b);  // fmod = 0 is refused for floats in type inference
    } else if constexpr (std::is_unsigned_v<T>) {
      return a % b;
    } else {
      if (b == T(-1)) return T(0);  // INT_MIN % -1 overflows in C++
      T r = static_cast<T>(a % b);
      if (!c_style && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      return r;
    }
  }
  bool c_style;
};

template <typename T>
struct BitShiftOp {
  explicit BitShiftOp(const Attributes& a) : left(a.GetString("direction", "") == "LEFT") {}
  // Shifting by the width or more is undefined in C++; every bit is shifted out.
  T operator()(T a, T b) const {
    constexpr T kBits = static_cast<T>(sizeof(T) * 8);
    if (b >= kBits) return T(0);
    return static_cast<T>(left ? a << b : a >> b);
  }
  bool left;
};

template <typename T>
struct MinOp : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T a, T b) const { return NanMin(a, b); }
};
template <typename T>
struct MaxOp : NoAttributes {
  using NoAttributes::NoAttributes;
  T operator()(T a, T b) const { return NanMax(a, b); }
};

#define COLLAGE_COMPARE_OP(Name, expr)               \
  template <typename T>                              \
  struct Name : NoAttributes {                       \
    using NoAttributes::NoAttributes;                \
    bool operator()(T a, T b) const { return expr; } \
  };
COLLAGE_COMPARE_OP(EqualOp, a == b)
COLLAGE_COMPARE_OP(LessOp, a < b)
COLLAGE_COMPARE_OP(GreaterOp, a > b)
COLLAGE_COMPARE_OP(LessOrEqualOp, a <= b)
COLLAGE_COMPARE_OP(GreaterOrEqualOp, a >= b)
COLLAGE_COMPARE_OP(AndOp, a&& b)
COLLAGE_COMPARE_OP(OrOp, a || b)
COLLAGE_COMPARE_OP(XorOp, a != b)
#undef COLLAGE_COMPARE_OP

// Opset 18's bitwise ops, on the two's complement bits of any integer type.
#define COLLAGE_BITWISE_OP(Name, expr)                            \
  template <typename T>                                           \
  struct Name : NoAttributes {                                    \
    using NoAttributes::NoAttributes;                             \
    T operator()(T a, T b) const { return static_cast<T>(expr); } \
  };
COLLAGE_BITWISE_OP(BitwiseAndOp, a& b)
COLLAGE_BITWISE_OP(BitwiseOrOp, a | b)
COLLAGE_BITWISE_OP(BitwiseXorOp, a ^ b)
#undef COLLAGE_BITWISE_OP

// Refuses integer division by zero (undefined in C++, a crash on x86).
template <typename T>
Status RequireNonZeroDivisor(const Node& node, const Tensor& divisor) {
  if constexpr (std::is_integral_v<T>) {
    const T* d = divisor.data_as<T>();
    for (int64_t i = 0; i < divisor.num_elements(); ++i) {
      if (d[i] == T(0)) {
        return OpError(node, StatusCode::kInvalidArgument, "integer division by zero");
      }
    }
  }
  (void)node;
  (void)divisor;
  return Status::Ok();
}

// ---- Generic binary registration ----------------------------------------------------------

// The broadcast output shape of inputs [0, n), which must all share a dtype.
StatusOr<Shape> InferBroadcastSameDType(const InferContext& ctx, size_t n) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, i));
    shapes.push_back(ctx.input_type(i).shape);
  }
  return BroadcastShapes(ctx.node, shapes);
}

enum class Divides { kNo, kYes };  // whether to refuse a zero integer divisor (input 1)

template <template <typename> class Op, DTypeSet kSet>
void RegisterBinary(OpRegistry& registry, const char* name, int64_t cost,
                    InferCheckFn check = nullptr, Divides divides = Divides::kNo) {
  OpDef def;
  def.op_type = name;
  def.kind = OpKind::kBroadcast;
  def.min_inputs = 2;
  def.max_inputs = 2;
  def.infer = [check](InferContext& ctx) -> Status {
    COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, kSet));
    COLLAGE_ASSIGN_OR_RETURN(Shape shape, InferBroadcastSameDType(ctx, 2));
    if (check != nullptr) COLLAGE_RETURN_IF_ERROR(check(ctx));
    DType out_dtype = ctx.input_type(0).dtype;
    COLLAGE_RETURN_IF_ERROR(DispatchAny(ctx.node, out_dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (InDTypeSet<T>(kSet)) out_dtype = DTypeOf<std::invoke_result_t<Op<T>, T, T>>();
    }));
    ctx.output_types[0] = TensorType{out_dtype, std::move(shape)};
    return Status::Ok();
  };
  def.run = [cost, divides](KernelContext& ctx) -> Status {
    const Tensor& a = ctx.inputs[0];
    const Tensor& b = ctx.inputs[1];
    // The unsupported-dtype error is formatted only when it is returned: this runs once per
    // step, and formatting it on every call cost more than adding two small tensors.
    bool supported = false;
    Status status;
    COLLAGE_RETURN_IF_ERROR(DispatchAny(ctx.node, a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (InDTypeSet<T>(kSet)) {
        supported = true;
        if (divides == Divides::kYes) {
          status = RequireNonZeroDivisor<T>(ctx.node, b);
          if (!status.ok()) return;
        }
        using Out = std::invoke_result_t<Op<T>, T, T>;
        BroadcastBinary<T, T, Out>(a, b, ctx.outputs[0], cost, Op<T>(ctx.attributes()));
      }
    }));
    if (!supported) {
      return OpError(ctx.node, StatusCode::kUnsupported, "dtype {} is not supported",
                     DTypeName(a.dtype()));
    }
    return status;
  };
  registry.Register(std::move(def));
}

Status CheckMod(const InferContext& ctx) {
  const DType dtype = ctx.input_type(0).dtype;
  const bool is_float = dtype == DType::kFloat32 || dtype == DType::kFloat64;
  if (is_float && ctx.attributes().GetInt("fmod", 0) == 0) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "fmod must be 1 for floating-point inputs (dtype {})", DTypeName(dtype));
  }
  return Status::Ok();
}

Status CheckBitShift(const InferContext& ctx) {
  const std::string direction = ctx.attributes().GetString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "direction must be \"LEFT\" or \"RIGHT\", not \"{}\"", direction);
  }
  return Status::Ok();
}

// ---- Pow: base T, exponent T1 of any numeric dtype, output T ------------------------------

template <typename T, typename E>
T PowValue(T x, E y) {
  if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
    // Exact integer power by squaring (double would lose bits of large int64 results).
    if constexpr (std::is_signed_v<E>) {
      if (y < 0) {  // 1 / x^|y| truncated toward zero
        if (x == T(1)) return T(1);
        if (x == T(-1)) return (y % 2 == 0) ? T(1) : T(-1);
        return T(0);
      }
    }
    T result = 1;
    T base = x;
    for (auto e = static_cast<uint64_t>(y); e != 0; e >>= 1) {
      if (e & 1) result = WrapMul(result, base);
      base = WrapMul(base, base);
    }
    return result;
  } else if constexpr (std::is_same_v<T, E>) {
    return std::pow(x, y);
  } else {
    // Mixed dtypes compute in double then convert, as numpy's type promotion does.
    return SaturatingCast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  }
}

Status InferPow(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(
      RequireDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}));
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 1, DTypeSet::kNumeric));
  COLLAGE_ASSIGN_OR_RETURN(
      Shape shape, BroadcastShapes(ctx.node, {ctx.input_type(0).shape, ctx.input_type(1).shape}));
  ctx.output_types[0] = TensorType{ctx.input_type(0).dtype, std::move(shape)};
  return Status::Ok();
}

// A float32 base raised to one exponent of 2 or 3 (a variance's square, GELU's cube): by
// multiplying, a tenth of std::pow's cost. The graph keeps the Pow as the exporter wrote it, so
// that the engines' optimizers still find the patterns they fuse (ONNX Runtime's FastGelu and
// LayerNormalization fusions look for Pow). 0 when the exponent is something else.
int SmallIntegerExponent(const Tensor& base, const Tensor& exponent) {
  if (base.dtype() != DType::kFloat32 || exponent.num_elements() != 1) return 0;
  double e = 0;
  switch (exponent.dtype()) {
    case DType::kFloat32: e = exponent.data_as<float>()[0]; break;
    case DType::kFloat64: e = exponent.data_as<double>()[0]; break;
    case DType::kInt32: e = exponent.data_as<int32_t>()[0]; break;
    case DType::kInt64: e = static_cast<double>(exponent.data_as<int64_t>()[0]); break;
    default: return 0;
  }
  return e == 2.0 ? 2 : e == 3.0 ? 3 : 0;
}

Status RunPow(KernelContext& ctx) {
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[1];
  if (const int exponent = SmallIntegerExponent(a, b);
      exponent != 0 && ctx.outputs[0].shape() == a.shape()) {
    const float* x = a.data_as<float>();
    float* y = ctx.outputs[0].data_as<float>();
    const int64_t n = a.num_elements();
    if (exponent == 2) {
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i];
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i] * x[i];
    }
    return Status::Ok();
  }
  Status inner;
  COLLAGE_RETURN_IF_ERROR(DispatchNumeric(ctx.node, a.dtype(), [&](auto base_tag) {
    using T = decltype(base_tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      inner = DispatchNumeric(ctx.node, b.dtype(), [&](auto exp_tag) {
        using E = decltype(exp_tag);
        BroadcastBinary<T, E, T>(a, b, ctx.outputs[0], 16,
                                 [](T x, E y) { return PowValue<T, E>(x, y); });
      });
    } else {
      inner = OpError(ctx.node, StatusCode::kUnsupported, "base dtype {} is not supported",
                      DTypeName(a.dtype()));
    }
  }));
  return inner;
}

// ---- PRelu: slope broadcast to X (unidirectionally) ---------------------------------------

Status InferPRelu(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, DTypeSet::kNumeric));
  COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, 1));
  const Shape& x = ctx.input_type(0).shape;
  COLLAGE_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(ctx.node, {x, ctx.input_type(1).shape}));
  if (shape != x) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "slope of shape {} is not unidirectionally broadcastable to X of shape {}",
                   ShapeToString(ctx.input_type(1).shape), ShapeToString(x));
  }
  ctx.output_types[0] = ctx.input_type(0);
  return Status::Ok();
}

Status RunPRelu(KernelContext& ctx) {
  return DispatchNumeric(ctx.node, ctx.inputs[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    BroadcastBinary<T, T, T>(ctx.inputs[0], ctx.inputs[1], ctx.outputs[0], 1, [](T x, T slope) {
      if constexpr (std::is_unsigned_v<T>) {
        (void)slope;
        return x;
      } else {
        return x < T(0) ? WrapMul(slope, x) : x;
      }
    });
  });
}

// ---- Where: condition ? X : Y with three-way broadcasting ---------------------------------

Status InferWhere(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 0, {DType::kBool}));
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 1, DTypeSet::kAny));
  COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 1, 2));
  COLLAGE_ASSIGN_OR_RETURN(
      Shape shape, BroadcastShapes(ctx.node, {ctx.input_type(0).shape, ctx.input_type(1).shape,
                                              ctx.input_type(2).shape}));
  ctx.output_types[0] = TensorType{ctx.input_type(1).dtype, std::move(shape)};
  return Status::Ok();
}

Status RunWhere(KernelContext& ctx) {
  const Tensor& cond = ctx.inputs[0];
  const Tensor& x = ctx.inputs[1];
  const Tensor& y = ctx.inputs[2];
  Tensor& out = ctx.outputs[0];
  return DispatchAny(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const BroadcastPlan<3> plan({&cond.shape(), &x.shape(), &y.shape()}, out.shape());
    const bool* pc = cond.data_as<bool>();
    const T* px = x.data_as<T>();
    const T* py = y.data_as<T>();
    T* po = out.data_as<T>();
    // Stride 1 or 0 per input along a run.
    const int64_t sc = plan.contiguous(0), sx = plan.contiguous(1), sy = plan.contiguous(2);
    ParallelFor(out.num_elements(), 1, [&](int64_t begin, int64_t end) {
      plan.ForRange(begin, end, [&](int64_t o, const std::array<int64_t, 3>& off, int64_t len) {
        const bool* c = pc + off[0];
        const T* a = px + off[1];
        const T* b = py + off[2];
        T* z = po + o;
        if (sc && sx && sy) {
          for (int64_t i = 0; i < len; ++i) z[i] = c[i] ? a[i] : b[i];
        } else {
          for (int64_t i = 0; i < len; ++i) z[i] = c[i * sc] ? a[i * sx] : b[i * sy];
        }
      });
    });
  });
}

// ---- Variadic: Sum, Mean, Min, Max (1..N inputs, all broadcast together) ------------------

enum class Variadic { kSum, kMean, kMin, kMax };

template <Variadic kOp>
Status InferVariadic(InferContext& ctx) {
  const DTypeSet set = kOp == Variadic::kMean ? DTypeSet::kFloat : DTypeSet::kNumeric;
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, set));
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "input {} is missing", i);
    }
  }
  COLLAGE_ASSIGN_OR_RETURN(Shape shape, InferBroadcastSameDType(ctx, ctx.num_inputs()));
  ctx.output_types[0] = TensorType{ctx.input_type(0).dtype, std::move(shape)};
  return Status::Ok();
}

template <Variadic kOp, typename T>
T CombineVariadic(T a, T b) {
  if constexpr (kOp == Variadic::kMin)
    return NanMin(a, b);
  else if constexpr (kOp == Variadic::kMax)
    return NanMax(a, b);
  else
    return WrapAdd(a, b);
}

template <Variadic kOp>
Status RunVariadic(KernelContext& ctx) {
  Tensor& out = ctx.outputs[0];
  return DispatchNumeric(ctx.node, out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto combine = [](T a, T b) { return CombineVariadic<kOp, T>(a, b); };
    const size_t n = ctx.inputs.size();
    if (n == 1) {
      // Broadcasting one input to its own shape is a copy.
      if (out.nbytes() > 0) std::memcpy(out.data(), ctx.inputs[0].data(), out.nbytes());
    } else {
      // out = in0 op in1, then out = out op in_k: out has the full shape, so it can be read
      // in place as the first operand.
      BroadcastBinary<T, T, T>(ctx.inputs[0], ctx.inputs[1], out, 1, combine);
      for (size_t k = 2; k < n; ++k) BroadcastBinary<T, T, T>(out, ctx.inputs[k], out, 1, combine);
    }
    if constexpr (kOp == Variadic::kMean && std::is_floating_point_v<T>) {
      const T scale = T(1) / static_cast<T>(n);
      MapUnary(out.data_as<T>(), out.data_as<T>(), out.num_elements(), 1,
               [scale](T v) { return v * scale; });
    }
  });
}

template <Variadic kOp>
void RegisterVariadic(OpRegistry& registry, const char* name) {
  registry.Register(
      OpDef{name, "", OpKind::kBroadcast, 1, 1 << 20, 1, 1, InferVariadic<kOp>, RunVariadic<kOp>});
}

}  // namespace

void RegisterBinaryOps(OpRegistry& registry) {
  constexpr DTypeSet kNumeric = DTypeSet::kNumeric;
  RegisterBinary<AddOp, kNumeric>(registry, "Add", 1);
  RegisterBinary<SubOp, kNumeric>(registry, "Sub", 1);
  RegisterBinary<MulOp, kNumeric>(registry, "Mul", 1);
  RegisterBinary<DivOp, kNumeric>(registry, "Div", 2, nullptr, Divides::kYes);
  RegisterBinary<ModOp, kNumeric>(registry, "Mod", 4, CheckMod, Divides::kYes);
  RegisterBinary<BitShiftOp, DTypeSet::kUnsigned>(registry, "BitShift", 1, CheckBitShift);
  RegisterBinary<EqualOp, DTypeSet::kAny>(registry, "Equal", 1);
  RegisterBinary<LessOp, kNumeric>(registry, "Less", 1);
  RegisterBinary<GreaterOp, kNumeric>(registry, "Greater", 1);
  RegisterBinary<LessOrEqualOp, kNumeric>(registry, "LessOrEqual", 1);
  RegisterBinary<GreaterOrEqualOp, kNumeric>(registry, "GreaterOrEqual", 1);
  RegisterBinary<AndOp, DTypeSet::kBool>(registry, "And", 1);
  RegisterBinary<OrOp, DTypeSet::kBool>(registry, "Or", 1);
  RegisterBinary<XorOp, DTypeSet::kBool>(registry, "Xor", 1);
  RegisterBinary<BitwiseAndOp, DTypeSet::kInteger>(registry, "BitwiseAnd", 1);
  RegisterBinary<BitwiseOrOp, DTypeSet::kInteger>(registry, "BitwiseOr", 1);
  RegisterBinary<BitwiseXorOp, DTypeSet::kInteger>(registry, "BitwiseXor", 1);
  registry.Register(OpDef{"Pow", "", OpKind::kBroadcast, 2, 2, 1, 1, InferPow, RunPow});
  registry.Register(OpDef{"PRelu", "", OpKind::kBroadcast, 2, 2, 1, 1, InferPRelu, RunPRelu});
  registry.Register(OpDef{"Where", "", OpKind::kBroadcast, 3, 3, 1, 1, InferWhere, RunWhere});
  RegisterVariadic<Variadic::kSum>(registry, "Sum");
  RegisterVariadic<Variadic::kMean>(registry, "Mean");
  RegisterVariadic<Variadic::kMin>(registry, "Min");
  RegisterVariadic<Variadic::kMax>(registry, "Max");
}

}  // namespace collage
