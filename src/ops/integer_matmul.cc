// MatMulInteger (int32 out) and QLinearMatMul (quantized out): matrix products of 8-bit
// integer tensors with zero points, per tensor or per row of A / per column of B. Both remove
// the zero points into int32 and run the reference MatMul loop on int32, which is exact;
// QLinearMatMul then requantizes each int32 sum with a_scale * b_scale / y_scale, computed in
// float as ONNX Runtime does.
#include <cstring>

#include "ops/matmul_kernel.h"
#include "ops/quantize_math.h"

namespace collage {
namespace {

// The shape in which a zero point or scale of A (rows) or B (columns) is broadcast over the
// matrix: a scalar; a 1-D tensor with one value per row of A ([M] read as [M, 1]) or per
// column of B ([N]); or a tensor of the matrix's rank with 1 along the reduced dim and the
// matrix's dims (or 1) elsewhere. InvalidModel naming the node and `what` otherwise.
StatusOr<Shape> MatrixParamShape(const Node& node, const Shape& matrix, const Shape& param,
                                 bool rows, const char* what) {
  if (param.size() <= 1 && NumElements(param) == 1) return Shape{};
  const size_t rank = matrix.size();
  auto refuse = [&]() {
    return OpError(node, StatusCode::kInvalidModel,
                   "{} has shape {}; over {} it must be a scalar or have one value per {}", what,
                   ShapeToString(param), ShapeToString(matrix), rows ? "row" : "column");
  };
  if (rank < 2) return refuse();
  const int64_t per = rows ? matrix[rank - 2] : matrix[rank - 1];
  if (param.size() == 1) {
    if (param[0] != per) return refuse();
    return rows ? Shape{per, 1} : Shape{per};
  }
  if (param.size() != rank || param[rows ? rank - 1 : rank - 2] != 1) return refuse();
  for (size_t d = 0; d < rank; ++d) {
    if (param[d] != 1 && param[d] != matrix[d]) return refuse();
  }
  return param;
}

// A zero point of the quantized input `q`, when present: q's dtype.
Status RequireZeroPointDType(const InferContext& ctx, size_t zero_point, size_t q) {
  if (!ctx.has_input(zero_point) || ctx.input_type(zero_point).dtype == ctx.input_type(q).dtype) {
    return Status::Ok();
  }
  return OpError(ctx.node, StatusCode::kInvalidModel, "zero point (input {}) is {}, input {} is {}",
                 zero_point, DTypeName(ctx.input_type(zero_point).dtype), q,
                 DTypeName(ctx.input_type(q).dtype));
}

// ---- MatMulInteger: A, B, a_zero_point?, b_zero_point? -> int32 ------------------------------

Status InferMatMulInteger(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, 0));
  COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, 1));
  COLLAGE_RETURN_IF_ERROR(RequireZeroPointDType(ctx, 2, 0));
  COLLAGE_RETURN_IF_ERROR(RequireZeroPointDType(ctx, 3, 1));
  const Shape& a = ctx.input_type(0).shape;
  const Shape& b = ctx.input_type(1).shape;
  COLLAGE_ASSIGN_OR_RETURN(const MatMulGeometry g, ResolveMatMul(ctx.node, a, b));
  if (ctx.has_input(2)) {
    COLLAGE_RETURN_IF_ERROR(
        MatrixParamShape(ctx.node, a, ctx.input_type(2).shape, true, "a_zero_point").status());
  }
  if (ctx.has_input(3)) {
    COLLAGE_RETURN_IF_ERROR(
        MatrixParamShape(ctx.node, b, ctx.input_type(3).shape, false, "b_zero_point").status());
  }
  ctx.output_types[0] = TensorType{DType::kInt32, g.out};
  return Status::Ok();
}

// The int32 product of (A - a_zp) and (B - b_zp), and its geometry.
struct IntegerProduct {
  MatMulGeometry geometry;
  Tensor sums;  // int32, geometry.out
};

StatusOr<IntegerProduct> MultiplyCentered(const Node& node, const Tensor& a, const Tensor* a_zp,
                                          const Tensor& b, const Tensor* b_zp) {
  IntegerProduct p;
  COLLAGE_ASSIGN_OR_RETURN(p.geometry, ResolveMatMul(node, a.shape(), b.shape()));
  Shape a_zp_shape;
  Shape b_zp_shape;
  if (a_zp != nullptr && !a_zp->empty()) {
    COLLAGE_ASSIGN_OR_RETURN(
        a_zp_shape, MatrixParamShape(node, a.shape(), a_zp->shape(), true, "a_zero_point"));
  }
  if (b_zp != nullptr && !b_zp->empty()) {
    COLLAGE_ASSIGN_OR_RETURN(
        b_zp_shape, MatrixParamShape(node, b.shape(), b_zp->shape(), false, "b_zero_point"));
  }
  COLLAGE_ASSIGN_OR_RETURN(const Tensor a32, CenteredInt32(node, a, a_zp, a_zp_shape));
  COLLAGE_ASSIGN_OR_RETURN(const Tensor b32, CenteredInt32(node, b, b_zp, b_zp_shape));
  p.sums = Tensor(DType::kInt32, p.geometry.out);
  MatMulTyped<int32_t>(p.geometry, a32.data_as<int32_t>(), b32.data_as<int32_t>(),
                       p.sums.data_as<int32_t>());
  return p;
}

Status RunMatMulInteger(KernelContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(
      const IntegerProduct p,
      MultiplyCentered(ctx.node, ctx.inputs[0], ctx.has_input(2) ? &ctx.inputs[2] : nullptr,
                       ctx.inputs[1], ctx.has_input(3) ? &ctx.inputs[3] : nullptr));
  Tensor& y = ctx.outputs[0];
  if (y.nbytes() > 0) std::memcpy(y.data(), p.sums.data(), y.nbytes());
  return Status::Ok();
}

// ---- QLinearMatMul: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp -> quantized ---------
// Scales and zero points: scalars, or 1-D with one value per row of a (a's and y's) or per
// column of b (b's).

// Scale i's 1-D values line up with rows of `matrix` (or columns): checked like a zero point.
Status CheckMatrixScale(const InferContext& ctx, size_t scale, const Shape& matrix, bool rows,
                        const char* what) {
  COLLAGE_RETURN_IF_ERROR(RequireFloatScale(ctx, scale));
  const Shape& s = ctx.input_type(scale).shape;
  if (s.size() > 1 && NumElements(s) != 1) {
    return OpError(ctx.node, StatusCode::kUnsupported,
                   "{} of shape {} is not supported (a scalar or one value per {} is)", what,
                   ShapeToString(s), rows ? "row" : "column");
  }
  return MatrixParamShape(ctx.node, matrix, s, rows, what).status();
}

Status InferQLinearMatMul(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, 0));
  COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, 3));
  COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, 7));
  const Shape& a = ctx.input_type(0).shape;
  const Shape& b = ctx.input_type(3).shape;
  COLLAGE_ASSIGN_OR_RETURN(const MatMulGeometry g, ResolveMatMul(ctx.node, a, b));
  COLLAGE_RETURN_IF_ERROR(CheckMatrixScale(ctx, 1, a, true, "a_scale"));
  COLLAGE_RETURN_IF_ERROR(CheckMatrixScale(ctx, 4, b, false, "b_scale"));
  COLLAGE_RETURN_IF_ERROR(CheckMatrixScale(ctx, 6, a, true, "y_scale"));
  COLLAGE_RETURN_IF_ERROR(CheckZeroPoint(ctx, 2, 1, ctx.input_type(0).dtype));
  COLLAGE_RETURN_IF_ERROR(CheckZeroPoint(ctx, 5, 4, ctx.input_type(3).dtype));
  COLLAGE_RETURN_IF_ERROR(CheckZeroPoint(ctx, 7, 6, DType::kUndefined));
  ctx.output_types[0] = TensorType{ctx.input_type(7).dtype, g.out};
  return Status::Ok();
}

Status RunQLinearMatMul(KernelContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(
      const IntegerProduct p,
      MultiplyCentered(ctx.node, ctx.inputs[0], &ctx.inputs[2], ctx.inputs[3], &ctx.inputs[5]));
  const std::vector<float> a_scale = ScaleValues(ctx.inputs[1]);
  const std::vector<float> b_scale = ScaleValues(ctx.inputs[4]);
  const std::vector<float> y_scale = ScaleValues(ctx.inputs[6]);
  const std::vector<float> y_zp = ZeroPointValues(&ctx.inputs[7], 1);
  const int64_t m = p.geometry.m;
  const int64_t n = p.geometry.n;
  const int64_t matrices = m * n == 0 ? 0 : p.sums.num_elements() / (m * n);
  auto pick = [](const std::vector<float>& v, int64_t i) {
    return v.size() == 1 ? v[0] : v[static_cast<size_t>(i)];
  };
  const int32_t* sums = p.sums.data_as<int32_t>();
  return DispatchQuantized(ctx.node, ctx.outputs[0].dtype(), [&](auto tag) {
    using Q = decltype(tag);
    Q* y = ctx.outputs[0].data_as<Q>();
    ParallelFor(matrices * m, n * 4, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t r = row % m;
        const float a_s = pick(a_scale, r);
        const float y_s = pick(y_scale, r);
        const float zp = pick(y_zp, r);
        for (int64_t c = 0; c < n; ++c) {
          const float multiplier = a_s * pick(b_scale, c) / y_s;
          y[row * n + c] = RequantizeValue<Q>(sums[row * n + c], multiplier, zp);
        }
      }
    });
  });
}

}  // namespace

void RegisterIntegerMatMulOps(OpRegistry& registry) {
  registry.Register(OpDef{"MatMulInteger", "", OpKind::kOutEWiseFusable, 2, 4, 1, 1,
                          InferMatMulInteger, RunMatMulInteger});
  registry.Register(OpDef{"QLinearMatMul", "", OpKind::kOpaque, 8, 8, 1, 1, InferQLinearMatMul,
                          RunQLinearMatMul});
}

}  // namespace collage
