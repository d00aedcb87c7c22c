// CumSum (opsets 11, 14): the running sum of x along one axis, inclusive or exclusive
// (attribute exclusive: each output leaves its own element out) and forwards or backwards
// (attribute reverse). The axis is input 1, a scalar (or one-element tensor) of int32/int64.
//
// The sum runs element after element along the axis in x's own type, as numpy.cumsum (the
// spec's reference) and ONNX Runtime do, so float results match theirs bit for bit.
#include <type_traits>

#include "ops/data_movement.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

// The axis input, normalized into [0, rank). Its dtype is checked by type inference.
StatusOr<int64_t> ReadAxis(const Node& node, const Tensor& axis, int64_t rank) {
  if (axis.num_elements() != 1) {
    return OpError(node, StatusCode::kInvalidModel, "axis must have one element, has shape {}",
                   ShapeToString(axis.shape()));
  }
  return NormalizeAxis(node, axis.ToVector<int64_t>()[0], rank);
}

Status InferCumSum(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(DispatchNumeric(ctx.node, x.dtype, [](auto) {}));
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 1, {DType::kInt64, DType::kInt32}));
  // The axis changes no shape, so a non-constant one is fine; a constant one is checked now
  // rather than when the model first runs.
  if (const Tensor* axis = ctx.input_value(1)) {
    COLLAGE_RETURN_IF_ERROR(
        ReadAxis(ctx.node, *axis, static_cast<int64_t>(x.shape.size())).status());
  }
  ctx.output_types[0] = x;
  return Status::Ok();
}

// Integer sums wrap around (two's complement), as in numpy and ONNX Runtime. Signed overflow
// is undefined behaviour in C++, so integers add in an unsigned type at least as wide as int.
template <typename T>
T Add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
  } else {
    return a + b;
  }
}

// x viewed as [outer, dim, inner] with the axis in the middle. Each step along the axis
// updates a whole inner row from the previous output row, which keeps memory access linear.
template <typename T>
void CumSumTyped(const T* x, T* y, int64_t outer, int64_t dim, int64_t inner, bool exclusive,
                 bool reverse) {
  for (int64_t o = 0; o < outer; ++o) {
    const T* xo = x + o * dim * inner;
    T* yo = y + o * dim * inner;
    for (int64_t s = 0; s < dim; ++s) {
      const int64_t j = reverse ? dim - 1 - s : s;   // the position written
      const int64_t prev = reverse ? j + 1 : j - 1;  // the one written just before
      T* row = yo + j * inner;
      for (int64_t i = 0; i < inner; ++i) {
        if (s == 0) {
          row[i] = exclusive ? T{0} : xo[j * inner + i];
        } else {
          // Exclusive: y[j] = y[prev] + x[prev]; inclusive: y[j] = y[prev] + x[j].
          const T addend = xo[(exclusive ? prev : j) * inner + i];
          row[i] = Add(yo[prev * inner + i], addend);
        }
      }
    }
  }
}

Status RunCumSum(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(int64_t axis, ReadAxis(ctx.node, ctx.inputs[1], x.rank()));
  const bool exclusive = ctx.attributes().GetInt("exclusive", 0) != 0;
  const bool reverse = ctx.attributes().GetInt("reverse", 0) != 0;
  const int64_t outer = DimProduct(x.shape(), 0, axis);
  const int64_t inner = DimProduct(x.shape(), axis + 1, x.rank());
  return DispatchNumeric(ctx.node, x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    CumSumTyped(x.data_as<T>(), ctx.outputs[0].data_as<T>(), outer, x.dim(axis), inner, exclusive,
                reverse);
  });
}

}  // namespace

void RegisterCumSumOps(OpRegistry& registry) {
  // An output element sums a run of input elements: neither elementwise nor a reduction
  // (the shape is kept), so opaque.
  registry.Register(MakeOpDef("CumSum", OpKind::kOpaque, 2, 2, InferCumSum, RunCumSum));
}

}  // namespace collage
