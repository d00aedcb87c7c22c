// MatMul (numpy matmul semantics) and Gemm. Both run on the shared GEMM kernel
// (ops/kernels/gemm_kernel.h): float32 on the fast packed Sgemm, float64 and 32/64-bit
// integers on plain loops.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "collage/sdk/op_params.h"
#include "ops/kernels/gemm_kernel.h"
#include "ops/op_helpers.h"
#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

constexpr std::initializer_list<DType> kGemmDTypes = {
    DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt32, DType::kUInt64};

// Calls f(T{}) for the dtypes GemmSimple is instantiated for.
template <typename F>
Status DispatchGemm(const Node& node, DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32: f(float{}); return Status::Ok();
    case DType::kFloat64: f(double{}); return Status::Ok();
    case DType::kInt32: f(int32_t{}); return Status::Ok();
    case DType::kInt64: f(int64_t{}); return Status::Ok();
    case DType::kUInt32: f(uint32_t{}); return Status::Ok();
    case DType::kUInt64: f(uint64_t{}); return Status::Ok();
    default:
      return OpError(node, StatusCode::kUnsupported, "dtype {} is not supported", DTypeName(dtype));
  }
}

// ---------------------------------------------------------------------------------------------
// MatMul

// A [..., m, k] x B [..., k, n] -> Y [batch..., m, n]. A 1-D A is a row vector [1, k] whose m
// dim is dropped from Y; a 1-D B is a column vector [k, 1] whose n dim is dropped.
struct MatMulGeometry {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  Shape batch;    // broadcast batch dims of Y
  Shape a_batch;  // A's batch dims, left-padded with 1s to batch's rank
  Shape b_batch;
  Shape out;
};

StatusOr<MatMulGeometry> ResolveMatMul(const Node& node, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) {
    return OpError(node, StatusCode::kInvalidModel, "inputs must have rank >= 1, got {} and {}",
                   ShapeToString(a), ShapeToString(b));
  }
  MatMulGeometry g;
  const bool a_vector = a.size() == 1;
  const bool b_vector = b.size() == 1;
  g.m = a_vector ? 1 : a[a.size() - 2];
  g.k = a.back();
  const int64_t kb = b_vector ? b[0] : b[b.size() - 2];
  g.n = b_vector ? 1 : b.back();
  if (g.k != kb) {
    return OpError(node, StatusCode::kInvalidModel, "inner dimensions differ: A is {}, B is {}",
                   ShapeToString(a), ShapeToString(b));
  }
  Shape a_batch(a.begin(), a.end() - (a_vector ? 1 : 2));
  Shape b_batch(b.begin(), b.end() - (b_vector ? 1 : 2));
  COLLAGE_ASSIGN_OR_RETURN(g.batch, BroadcastShapes(node, {a_batch, b_batch}));
  g.a_batch = Shape(g.batch.size() - a_batch.size(), 1);
  g.a_batch.insert(g.a_batch.end(), a_batch.begin(), a_batch.end());
  g.b_batch = Shape(g.batch.size() - b_batch.size(), 1);
  g.b_batch.insert(g.b_batch.end(), b_batch.begin(), b_batch.end());
  g.out = g.batch;
  if (!a_vector) g.out.push_back(g.m);
  if (!b_vector) g.out.push_back(g.n);
  return g;
}

Status InferMatMul(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 0, kGemmDTypes));
  COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, 1));
  COLLAGE_ASSIGN_OR_RETURN(
      MatMulGeometry g, ResolveMatMul(ctx.node, ctx.input_type(0).shape, ctx.input_type(1).shape));
  ctx.output_types[0] = TensorType{ctx.input_type(0).dtype, g.out};
  return Status::Ok();
}

template <typename T>
void MatMulTyped(const MatMulGeometry& g, const T* a, const T* b, T* y) {
  const int64_t batch = NumElements(g.batch);
  const int64_t a_size = g.m * g.k;
  const int64_t b_size = g.k * g.n;
  const int64_t y_size = g.m * g.n;
  if (batch == 0 || y_size == 0) return;
  // B shared by every batch entry and A not broadcast (a Linear layer on [batch, seq, d]):
  // A's batch rows are contiguous, so the whole thing is one taller GEMM.
  if (NumElements(g.b_batch) == 1 && g.a_batch == g.batch) {
    Gemm<T>(false, false, batch * g.m, g.n, g.k, T{1}, a, g.k, b, g.n, T{0}, y, g.n);
    return;
  }
  const std::vector<int64_t> a_strides = BroadcastStrides(g.a_batch, g.batch);
  const std::vector<int64_t> b_strides = BroadcastStrides(g.b_batch, g.batch);
  std::vector<int64_t> index(g.batch.size(), 0);
  for (int64_t bi = 0; bi < batch; ++bi) {
    int64_t a_off = 0;
    int64_t b_off = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      a_off += index[d] * a_strides[d];
      b_off += index[d] * b_strides[d];
    }
    Gemm<T>(false, false, g.m, g.n, g.k, T{1}, a + a_off * a_size, g.k, b + b_off * b_size, g.n,
            T{0}, y + bi * y_size, g.n);
    for (size_t d = index.size(); d-- > 0;) {  // odometer over the batch dims
      if (++index[d] < g.batch[d]) break;
      index[d] = 0;
    }
  }
}

Status RunMatMul(KernelContext& ctx) {
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[1];
  COLLAGE_ASSIGN_OR_RETURN(MatMulGeometry g, ResolveMatMul(ctx.node, a.shape(), b.shape()));
  Tensor& y = ctx.outputs[0];
  return DispatchGemm(ctx.node, a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    MatMulTyped<T>(g, a.data_as<T>(), b.data_as<T>(), y.data_as<T>());
  });
}

// ---------------------------------------------------------------------------------------------
// Gemm: Y = alpha * op(A) * op(B) + beta * C, C unidirectionally broadcast to [M, N].

Status InferGemm(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 0, kGemmDTypes));
  COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, 1));
  const bool has_c = ctx.has_input(2);
  if (has_c) COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, 2));
  COLLAGE_ASSIGN_OR_RETURN(
      GemmParams g, ReadGemmParams(ctx.node, ctx.opset, ctx.input_type(0).shape,
                                   ctx.input_type(1).shape, has_c ? &ctx.input_type(2).shape : nullptr));
  ctx.output_types[0] = TensorType{ctx.input_type(0).dtype, {g.m, g.n}};
  return Status::Ok();
}

template <typename T>
void GemmTyped(const GemmParams& g, T alpha, T beta, const Tensor& a, const Tensor& b,
               const Tensor* c, Tensor& y) {
  T* out = y.data_as<T>();
  const bool use_c = c != nullptr && beta != T{0};
  if (use_c) {  // Y = broadcast C, then the GEMM accumulates onto it with beta
    const Shape out_shape = {g.m, g.n};
    const std::vector<int64_t> strides = BroadcastStrides(c->shape(), out_shape);
    const T* src = c->data_as<T>();
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) out[i * g.n + j] = src[i * strides[0] + j * strides[1]];
    }
  }
  Gemm<T>(g.trans_a, g.trans_b, g.m, g.n, g.k, alpha, a.data_as<T>(), a.dim(1), b.data_as<T>(),
          b.dim(1), use_c ? beta : T{0}, out, g.n);
}

Status RunGemm(KernelContext& ctx) {
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[1];
  const Tensor* c = ctx.has_input(2) ? &ctx.inputs[2] : nullptr;
  COLLAGE_ASSIGN_OR_RETURN(GemmParams g, ReadGemmParams(ctx.node, ctx.opset, a.shape(), b.shape(),
                                                        c != nullptr ? &c->shape() : nullptr));
  const float alpha = g.alpha;
  const float beta = g.beta;
  const bool integer = a.dtype() != DType::kFloat32 && a.dtype() != DType::kFloat64;
  // std::trunc instead of a cast to int64: a cast of NaN or 1e30 is undefined behaviour.
  if (integer && (alpha != std::trunc(alpha) || beta != std::trunc(beta) ||
                  std::fabs(alpha) > 0x1p31f || std::fabs(beta) > 0x1p31f)) {
    return OpError(ctx.node, StatusCode::kUnsupported,
                   "non-integer alpha {} / beta {} with integer dtype {}", alpha, beta,
                   DTypeName(a.dtype()));
  }
  return DispatchGemm(ctx.node, a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    // Integers go through int64 so that a negative alpha survives the unsigned dtypes.
    auto cast = [](float v) {
      if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(static_cast<int64_t>(v));
      } else {
        return static_cast<T>(v);
      }
    };
    GemmTyped<T>(g, cast(alpha), cast(beta), a, b, c, ctx.outputs[0]);
  });
}

}  // namespace

void RegisterGemmOps(OpRegistry& registry) {
  registry.Register(OpDef{.op_type = "MatMul",
                          .domain = "",
                          .kind = OpKind::kOutEWiseFusable,
                          .min_inputs = 2,
                          .max_inputs = 2,
                          .min_outputs = 1,
                          .max_outputs = 1,
                          .infer = InferMatMul,
                          .run = RunMatMul});
  registry.Register(OpDef{.op_type = "Gemm",
                          .domain = "",
                          .kind = OpKind::kOutEWiseFusable,
                          .min_inputs = 2,
                          .max_inputs = 3,
                          .min_outputs = 1,
                          .max_outputs = 1,
                          .infer = InferGemm,
                          .run = RunGemm});
}

}  // namespace collage
