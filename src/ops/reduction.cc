// Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp and
// ArgMax/ArgMin. Softmax, LogSoftmax and Hardmax (softmax.cc) register from here too.
//
// Axes: an attribute until opset 17 (ReduceSum: until 12), an optional input from opset 18
// (ReduceSum: 13). No axes means every axis, unless noop_with_empty_axes = 1, which makes the
// op the identity. The axes input must be a constant (the output shape depends on it),
// except that an empty one is known to be empty from its shape alone.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "ops/elementwise.h"
#include "ops/op_helpers.h"
#include "ops/reduce_plan.h"

namespace collage {
namespace {

enum class Reduce { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// The first opset whose version of the op takes axes as an input.
int64_t AxesInputOpset(const Node& node) { return node.op_type == "ReduceSum" ? 13 : 18; }

// Which dims are reduced, or nullopt-like `noop` for the identity.
struct ReduceAxes {
  std::vector<bool> reduced;  // per input dim
  bool noop = false;
  bool keepdims = true;
};

// axes_value: the axes input's data when known (nullptr otherwise); axes_count: its number
// of elements (-1 when there is no axes input).
StatusOr<ReduceAxes> ResolveAxes(const Node& node, int64_t opset, int64_t rank,
                                 const Tensor* axes_value, int64_t axes_count) {
  const Attributes& attrs = node.attributes;
  ReduceAxes result;
  result.keepdims = attrs.GetInt("keepdims", 1) != 0;
  std::vector<int64_t> axes;
  if (axes_count >= 0) {
    if (opset < AxesInputOpset(node)) {
      return OpError(node, StatusCode::kInvalidModel,
                     "axes is an attribute before opset {}, not an input", AxesInputOpset(node));
    }
    if (axes_count > 0) {
      if (axes_value == nullptr) {
        return OpError(node, StatusCode::kUnsupported,
                       "the axes input must be a constant (the output shape depends on it)");
      }
      if (axes_value->dtype() != DType::kInt64) {
        return OpError(node, StatusCode::kInvalidModel, "axes must be int64, not {}",
                       DTypeName(axes_value->dtype()));
      }
      axes = axes_value->ToVector<int64_t>();
    }
  } else {
    // The attribute (also accepted at newer opsets when no input is given: its meaning is
    // unambiguous).
    axes = attrs.GetInts("axes");
  }
  result.reduced.assign(static_cast<size_t>(rank), false);
  if (axes.empty()) {
    if (attrs.GetInt("noop_with_empty_axes", 0) != 0) {
      result.noop = true;
    } else {
      result.reduced.assign(static_cast<size_t>(rank), true);
    }
    return result;
  }
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      return OpError(node, StatusCode::kInvalidModel, "axis {} is out of range for rank {}", axis,
                     rank);
    }
    const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    if (result.reduced[a]) {
      return OpError(node, StatusCode::kInvalidModel, "axis {} is given twice", axis);
    }
    result.reduced[a] = true;
  }
  return result;
}

Shape ReducedShape(const Shape& shape, const ReduceAxes& axes) {
  if (axes.noop) return shape;
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!axes.reduced[d])
      out.push_back(shape[d]);
    else if (axes.keepdims)
      out.push_back(1);
  }
  return out;
}

Status InferReduce(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, DTypeSet::kNumeric));
  const int64_t axes_count = ctx.has_input(1) ? ctx.input_type(1).num_elements() : -1;
  COLLAGE_ASSIGN_OR_RETURN(
      ReduceAxes axes,
      ResolveAxes(ctx.node, ctx.opset, static_cast<int64_t>(ctx.input_type(0).shape.size()),
                  ctx.input_value(1), axes_count));
  ctx.output_types[0] =
      TensorType{ctx.input_type(0).dtype, ReducedShape(ctx.input_type(0).shape, axes)};
  return Status::Ok();
}

// The accumulator: double for floats (a float32 sum of a million terms loses digits),
// 64-bit integers (wrapping) for integers; double for the reductions that end in a
// transcendental function.
template <Reduce kOp, typename T>
using AccumulatorOf = std::conditional_t<
    kOp == Reduce::kMax || kOp == Reduce::kMin, T,
    std::conditional_t<std::is_floating_point_v<T> || kOp == Reduce::kL2 ||
                           kOp == Reduce::kLogSum || kOp == Reduce::kLogSumExp,
                       double, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>>;

template <Reduce kOp, typename A>
A InitialValue() {
  if constexpr (kOp == Reduce::kMax) {
    return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                : std::numeric_limits<A>::lowest();
  } else if constexpr (kOp == Reduce::kMin) {
    return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                : std::numeric_limits<A>::max();
  } else if constexpr (kOp == Reduce::kProd) {
    return A(1);
  } else {
    return A(0);
  }
}

// acc ⊕ x for one element (shift: the row maximum, for LogSumExp).
template <Reduce kOp, typename A, typename T>
A Step(A acc, T x, A shift) {
  const A v = static_cast<A>(x);
  if constexpr (kOp == Reduce::kMax)
    return NanMax(acc, v);
  else if constexpr (kOp == Reduce::kMin)
    return NanMin(acc, v);
  else if constexpr (kOp == Reduce::kProd)
    return WrapMul(acc, v);
  else if constexpr (kOp == Reduce::kL1) {
    if constexpr (std::is_unsigned_v<A>)
      return WrapAdd(acc, v);
    else
      return WrapAdd(acc, v < A(0) ? WrapNeg(v) : v);
  } else if constexpr (kOp == Reduce::kL2 || kOp == Reduce::kSumSquare) {
    return WrapAdd(acc, WrapMul(v, v));
  } else if constexpr (kOp == Reduce::kLogSumExp) {
    return acc + std::exp(v - shift);
  } else {
    return WrapAdd(acc, v);
  }
}

template <Reduce kOp, typename T, typename A>
T Finish(A acc, int64_t count, A shift) {
  if constexpr (kOp == Reduce::kMean) {
    if constexpr (std::is_integral_v<A>) {
      return count == 0 ? T(0) : static_cast<T>(acc / static_cast<A>(count));
    } else {
      return static_cast<T>(acc / static_cast<A>(count));
    }
  } else if constexpr (kOp == Reduce::kL2) {
    return SaturatingCast<T>(std::sqrt(acc));
  } else if constexpr (kOp == Reduce::kLogSum) {
    return SaturatingCast<T>(std::log(acc));
  } else if constexpr (kOp == Reduce::kLogSumExp) {
    // An all -inf (or +inf) row: the shift alone is the answer (and exp(inf - inf) is NaN).
    if (std::isinf(shift)) return SaturatingCast<T>(shift);
    return SaturatingCast<T>(std::log(acc) + shift);
  } else {
    return static_cast<T>(acc);
  }
}

// One pass: acc[out] = Step(acc[out], x) over every input element.
template <Reduce kOp, typename T, typename A>
void Accumulate(const ReducePlan& plan, const T* x, A* acc, const A* shift) {
  const int64_t cost = kOp == Reduce::kLogSumExp ? 8 : 1;
  plan.ForEachRun(cost, [&](int64_t in, int64_t out, int64_t len, bool inner_reduced) {
    const T* p = x + in;
    if (inner_reduced) {
      const A s = shift != nullptr ? shift[out] : A(0);
      A a = acc[out];
      for (int64_t i = 0; i < len; ++i) a = Step<kOp>(a, p[i], s);
      acc[out] = a;
    } else {
      A* q = acc + out;
      if (shift != nullptr) {
        for (int64_t i = 0; i < len; ++i) q[i] = Step<kOp>(q[i], p[i], shift[out + i]);
      } else {
        for (int64_t i = 0; i < len; ++i) q[i] = Step<kOp>(q[i], p[i], A(0));
      }
    }
  });
}

template <Reduce kOp, typename T>
void ReduceKernel(const ReducePlan& plan, const T* x, T* y) {
  using A = AccumulatorOf<kOp, T>;
  const int64_t n = plan.num_outputs();
  std::vector<A> acc(static_cast<size_t>(n), InitialValue<kOp, A>());
  std::vector<A> shift;
  if constexpr (kOp == Reduce::kLogSumExp) {
    // exp(x - max) cannot overflow: a first pass finds each output's maximum.
    shift.assign(static_cast<size_t>(n), InitialValue<Reduce::kMax, A>());
    Accumulate<Reduce::kMax, T, A>(plan, x, shift.data(), nullptr);
    Accumulate<kOp, T, A>(plan, x, acc.data(), shift.data());
  } else {
    Accumulate<kOp, T, A>(plan, x, acc.data(), nullptr);
  }
  const int64_t count = plan.reduce_count();
  for (int64_t o = 0; o < n; ++o) {
    y[o] = Finish<kOp, T, A>(acc[static_cast<size_t>(o)], count,
                             shift.empty() ? A(0) : shift[static_cast<size_t>(o)]);
  }
}

template <Reduce kOp>
Status RunReduce(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  Tensor& y = ctx.outputs[0];
  const bool has_axes = ctx.has_input(1);
  COLLAGE_ASSIGN_OR_RETURN(
      ReduceAxes axes,
      ResolveAxes(ctx.node, ctx.opset, x.rank(), has_axes ? &ctx.inputs[1] : nullptr,
                  has_axes ? ctx.inputs[1].num_elements() : -1));
  if (axes.noop) {
    if (x.nbytes() > 0 && x.data() != y.data()) std::memcpy(y.data(), x.data(), x.nbytes());
    return Status::Ok();
  }
  const ReducePlan plan(x.shape(), axes.reduced);
  return DispatchNumeric(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    ReduceKernel<kOp, T>(plan, x.data_as<T>(), y.data_as<T>());
  });
}

template <Reduce kOp>
void RegisterReduce(OpRegistry& registry, const char* name) {
  registry.Register(OpDef{name, "", OpKind::kReduction, 1, 2, 1, 1, InferReduce, RunReduce<kOp>});
}

// ---- ArgMax / ArgMin ---------------------------------------------------------------------

Status InferArg(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, DTypeSet::kNumeric));
  const Shape& shape = ctx.input_type(0).shape;
  const auto rank = static_cast<int64_t>(shape.size());
  if (rank == 0) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "input must have rank >= 1");
  }
  COLLAGE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx.node, ctx.attributes().GetInt("axis", 0), rank));
  if (shape[static_cast<size_t>(axis)] == 0) {
    return OpError(ctx.node, StatusCode::kInvalidArgument, "axis {} is empty", axis);
  }
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis)
      out.push_back(shape[static_cast<size_t>(d)]);
    else if (ctx.attributes().GetInt("keepdims", 1) != 0)
      out.push_back(1);
  }
  ctx.output_types[0] = TensorType{DType::kInt64, std::move(out)};
  return Status::Ok();
}

// Whether v replaces the current best. NaN beats every number (numpy's argmax and argmin
// both return the first NaN); with select_last_index, ties go to the later element.
template <bool kMax, bool kLast, typename T>
bool Better(T v, T best) {
  const bool v_nan = IsNaNValue(v);
  const bool best_nan = IsNaNValue(best);
  if constexpr (kLast) {
    if (v_nan) return true;
    if (best_nan) return false;
    return kMax ? v >= best : v <= best;
  } else {
    if (best_nan) return false;
    if (v_nan) return true;
    return kMax ? v > best : v < best;
  }
}

template <bool kMax, bool kLast, typename T>
void ArgKernel(const T* x, int64_t* y, const AxisSplit& s) {
  ParallelFor(s.outer, s.axis * s.inner, [&](int64_t begin, int64_t end) {
    std::vector<T> best(static_cast<size_t>(s.inner));
    for (int64_t o = begin; o < end; ++o) {
      const T* block = x + o * s.axis * s.inner;
      int64_t* index = y + o * s.inner;
      for (int64_t i = 0; i < s.inner; ++i) {
        best[static_cast<size_t>(i)] = block[i];
        index[i] = 0;
      }
      for (int64_t j = 1; j < s.axis; ++j) {
        const T* row = block + j * s.inner;
        for (int64_t i = 0; i < s.inner; ++i) {
          if (Better<kMax, kLast>(row[i], best[static_cast<size_t>(i)])) {
            best[static_cast<size_t>(i)] = row[i];
            index[i] = j;
          }
        }
      }
    }
  });
}

template <bool kMax>
Status RunArg(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx.node, ctx.attributes().GetInt("axis", 0), x.rank()));
  const AxisSplit split = SplitAtAxis(x.shape(), axis);
  const bool last = ctx.attributes().GetInt("select_last_index", 0) != 0;
  int64_t* y = ctx.outputs[0].data_as<int64_t>();
  return DispatchNumeric(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (last)
      ArgKernel<kMax, true>(x.data_as<T>(), y, split);
    else
      ArgKernel<kMax, false>(x.data_as<T>(), y, split);
  });
}

}  // namespace

void RegisterReductionOps(OpRegistry& registry) {
  RegisterReduce<Reduce::kSum>(registry, "ReduceSum");
  RegisterReduce<Reduce::kMean>(registry, "ReduceMean");
  RegisterReduce<Reduce::kMax>(registry, "ReduceMax");
  RegisterReduce<Reduce::kMin>(registry, "ReduceMin");
  RegisterReduce<Reduce::kProd>(registry, "ReduceProd");
  RegisterReduce<Reduce::kL1>(registry, "ReduceL1");
  RegisterReduce<Reduce::kL2>(registry, "ReduceL2");
  RegisterReduce<Reduce::kSumSquare>(registry, "ReduceSumSquare");
  RegisterReduce<Reduce::kLogSum>(registry, "ReduceLogSum");
  RegisterReduce<Reduce::kLogSumExp>(registry, "ReduceLogSumExp");
  registry.Register(OpDef{"ArgMax", "", OpKind::kReduction, 1, 1, 1, 1, InferArg, RunArg<true>});
  registry.Register(OpDef{"ArgMin", "", OpKind::kReduction, 1, 1, 1, 1, InferArg, RunArg<false>});
  RegisterSoftmaxOps(registry);
}

}  // namespace collage
