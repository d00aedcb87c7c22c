// MatMul (numpy matmul semantics) and Gemm. Both run on the shared GEMM kernel
// (ops/kernels/gemm_kernel.h): float32 on the fast packed Sgemm, float64 and 32/64-bit
// integers on plain loops.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "collage/sdk/op_params.h"
#include "collage/sdk/op_registry.h"
#include "ops/kernels/gemm_kernel.h"
#include "ops/matmul_kernel.h"
#include "ops/op_helpers.h"

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
// MatMul (the geometry and loops are in ops/matmul_kernel.h)

Status InferMatMul(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 0, kGemmDTypes));
  COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, 1));
  COLLAGE_ASSIGN_OR_RETURN(
      MatMulGeometry g, ResolveMatMul(ctx.node, ctx.input_type(0).shape, ctx.input_type(1).shape));
  ctx.output_types[0] = TensorType{ctx.input_type(0).dtype, g.out};
  return Status::Ok();
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
