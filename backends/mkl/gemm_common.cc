#include "gemm_common.h"

#include <algorithm>
#include <cstring>

#include "backend/shared/find_node.h"
#include "backend/shared/operand.h"
#include "collage/sdk/errors.h"
#include "packed_matrix.h"

namespace collage::mkl {
namespace {

// y[m x n] = C broadcast ([m, n], a row, a column or one value).
void BroadcastC(const GemmParams& params, const float* c, float* y) {
  const int64_t row_stride = params.c_rows == 1 ? 0 : params.c_cols;
  const bool full_rows = params.c_cols != 1;
  for (int64_t i = 0; i < params.m; ++i) {
    const float* row = c + i * row_stride;
    float* out = y + i * params.n;
    if (full_rows) {
      std::memcpy(out, row, sizeof(float) * params.n);
    } else {
      std::fill(out, out + params.n, row[0]);
    }
  }
}

}  // namespace

StatusOr<MatMulGroup> ReadMatMulGroup(const CompileRequest& request) {
  MatMulGroup group;
  group.matmul = FindNode(request, "MatMul");
  if (group.matmul == nullptr) return InvalidArgument("the group has no MatMul node");
  group.add = FindNode(request, "Add");
  const Shape& a_shape = request.graph->value(group.matmul->inputs[0]).type.shape;
  const Shape& b_shape = request.graph->value(group.matmul->inputs[1]).type.shape;
  COLLAGE_ASSIGN_OR_RETURN(group.plan, PlanMatMul(a_shape, b_shape));
  if (!FitsMklInt(group.plan.m) || !FitsMklInt(group.plan.n) || !FitsMklInt(group.plan.k)) {
    return Unsupported("MatMul {} x {} exceeds MKL's int dims", ShapeToString(a_shape),
                       ShapeToString(b_shape));
  }
  return group;
}

StatusOr<GemmOperands> ReadGemmGroup(const CompileRequest& request) {
  COLLAGE_ASSIGN_OR_RETURN(GemmOperands g, ResolveGemm(request));
  const GemmParams& p = g.params;
  if (!FitsMklInt(p.m) || !FitsMklInt(p.n) || !FitsMklInt(p.k)) {
    return Unsupported("Gemm {}x{}x{} exceeds MKL's int dims", p.m, p.n, p.k);
  }
  return g;
}

StatusOr<std::vector<float>> BiasOfMatMul(const CompileRequest& request, const MatMulGroup& group) {
  const ValueId product = group.matmul->outputs[0];
  const ValueId bias_id = group.add->inputs[0] == product ? group.add->inputs[1] : group.add->inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(Operand bias, Operand::Resolve(request, bias_id));
  if (!bias.is_constant()) return InvalidArgument("the bias of MatMul is not a constant");
  const int64_t n = group.plan.n;
  if (bias.constant().size() != 1 && static_cast<int64_t>(bias.constant().size()) != n) {
    return Unsupported("bias of {} values for a MatMul with {} columns", bias.constant().size(), n);
  }
  return bias.constant();
}

float StartMatMulOutput(const MatMulPlan& plan, const std::vector<float>& bias, float* y) {
  const int64_t rows = static_cast<int64_t>(plan.a_offsets.size()) * plan.m;
  if (bias.empty()) {
    if (plan.k == 0) std::fill(y, y + rows * plan.n, 0.0f);
    return 0.0f;
  }
  if (bias.size() == 1) {
    std::fill(y, y + rows * plan.n, bias[0]);
  } else {
    for (int64_t r = 0; r < rows; ++r) std::memcpy(y + r * plan.n, bias.data(), sizeof(float) * plan.n);
  }
  return 1.0f;
}

float StartGemmOutput(const GemmParams& params, const float* c, float* y) {
  float beta = 0.0f;
  if (params.has_c && params.beta != 0.0f) {
    BroadcastC(params, c, y);
    beta = params.beta;
  }
  if (params.k == 0) {
    for (int64_t i = 0; i < params.m * params.n; ++i) y[i] = beta == 0.0f ? 0.0f : beta * y[i];
  }
  return beta;
}

}  // namespace collage::mkl
