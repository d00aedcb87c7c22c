#include "gemm_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "backend/shared/find_node.h"
#include "backend/shared/gemm_params.h"
#include "backend/shared/matmul_plan.h"
#include "backend/shared/operand.h"
#include "blas_threads.h"
#include "collage/sdk/errors.h"

namespace collage::openblas {
namespace {

// cblas takes int dims and leading dims.
bool FitsBlasInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

std::vector<Layout> PlainLayouts(size_t n) { return std::vector<Layout>(n, Layout::Plain()); }

// y[rows x n] = row broadcast down the rows (a row of n values, or one value).
void FillRows(float* y, int64_t rows, int64_t n, const std::vector<float>& row) {
  if (row.size() == 1) {
    std::fill(y, y + rows * n, row[0]);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) std::memcpy(y + r * n, row.data(), sizeof(float) * n);
}

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(MatMulPlan plan, Operand a, Operand b, std::vector<float> bias, size_t num_inputs)
      : plan_(std::move(plan)), a_(std::move(a)), b_(std::move(b)), bias_(std::move(bias)) {
    input_layouts_ = PlainLayouts(num_inputs);
    output_layouts_ = PlainLayouts(1);
  }

  Status Run(const KernelBuffers& buffers) const override {
    const float* a = a_.Data(buffers);
    const float* b = b_.Data(buffers);
    float* y = static_cast<float*>(buffers.outputs[0]);
    const int64_t count = static_cast<int64_t>(plan_.a_offsets.size());
    const int64_t block = plan_.m * plan_.n;
    if (block == 0) return Status::Ok();
    // With a bias the output starts as the bias rows and the GEMM accumulates (beta = 1).
    float beta = 0.0f;
    if (!bias_.empty()) {
      FillRows(y, count * plan_.m, plan_.n, bias_);
      beta = 1.0f;
    }
    if (plan_.k == 0) {  // an empty sum: BLAS would reject lda = 0
      if (bias_.empty()) std::fill(y, y + count * block, 0.0f);
      return Status::Ok();
    }
    const int m = static_cast<int>(plan_.m);
    const int n = static_cast<int>(plan_.n);
    const int k = static_cast<int>(plan_.k);
    BlasThreadScope threads;
    for (int64_t i = 0; i < count; ++i) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                  a + plan_.a_offsets[static_cast<size_t>(i)], k,
                  b + plan_.b_offsets[static_cast<size_t>(i)], n, beta, y + i * block, n);
    }
    return Status::Ok();
  }

 private:
  MatMulPlan plan_;
  Operand a_;
  Operand b_;
  std::vector<float> bias_;  // empty, one value or n values
};

class GemmKernel final : public Kernel {
 public:
  GemmKernel(GemmOperands g, size_t num_inputs)
      : p_(g.params),
        c_row_stride_(g.params.c_rows == 1 ? 0 : g.params.c_cols),
        c_col_stride_(g.params.c_cols == 1 ? 0 : 1),
        a_(std::move(g.a)),
        b_(std::move(g.b)),
        c_(std::move(g.c)) {
    input_layouts_ = PlainLayouts(num_inputs);
    output_layouts_ = PlainLayouts(1);
  }

  Status Run(const KernelBuffers& buffers) const override {
    float* y = static_cast<float*>(buffers.outputs[0]);
    if (p_.m == 0 || p_.n == 0) return Status::Ok();
    // As in ONNX (and BLAS), beta == 0 ignores C entirely, NaNs included.
    float beta = 0.0f;
    if (p_.has_c && p_.beta != 0.0f) {
      const float* c = c_.Data(buffers);
      for (int64_t i = 0; i < p_.m; ++i) {
        const float* row = c + i * c_row_stride_;
        float* out = y + i * p_.n;
        if (c_col_stride_ == 1) {
          std::memcpy(out, row, sizeof(float) * p_.n);
        } else {
          std::fill(out, out + p_.n, row[0]);
        }
      }
      beta = p_.beta;
    }
    if (p_.k == 0) {
      for (int64_t i = 0; i < p_.m * p_.n; ++i) y[i] = beta == 0.0f ? 0.0f : beta * y[i];
      return Status::Ok();
    }
    const int lda = static_cast<int>(p_.trans_a ? p_.m : p_.k);
    const int ldb = static_cast<int>(p_.trans_b ? p_.k : p_.n);
    BlasThreadScope threads;
    cblas_sgemm(CblasRowMajor, p_.trans_a ? CblasTrans : CblasNoTrans,
                p_.trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(p_.m),
                static_cast<int>(p_.n), static_cast<int>(p_.k), p_.alpha, a_.Data(buffers), lda,
                b_.Data(buffers), ldb, beta, y, static_cast<int>(p_.n));
    return Status::Ok();
  }

 private:
  GemmParams p_;
  int64_t c_row_stride_, c_col_stride_;  // C read as broadcast to [m, n]
  Operand a_;
  Operand b_;
  Operand c_;
};

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CompileMatMul(const CompileRequest& request) {
  const Graph& graph = *request.graph;
  const Node* matmul = FindNode(request, "MatMul");
  if (matmul == nullptr) return InvalidArgument("the group has no MatMul node");
  const Shape& a_shape = graph.value(matmul->inputs[0]).type.shape;
  const Shape& b_shape = graph.value(matmul->inputs[1]).type.shape;
  COLLAGE_ASSIGN_OR_RETURN(MatMulPlan plan, PlanMatMul(a_shape, b_shape));
  if (!FitsBlasInt(plan.m) || !FitsBlasInt(plan.n) || !FitsBlasInt(plan.k)) {
    return Unsupported("MatMul {} x {} exceeds BLAS's int dims", ShapeToString(a_shape),
                       ShapeToString(b_shape));
  }
  COLLAGE_ASSIGN_OR_RETURN(Operand a, Operand::Resolve(request, matmul->inputs[0]));
  COLLAGE_ASSIGN_OR_RETURN(Operand b, Operand::Resolve(request, matmul->inputs[1]));
  std::vector<float> bias;
  if (const Node* add = FindNode(request, "Add")) {
    const ValueId mm_out = matmul->outputs[0];
    const ValueId bias_id = add->inputs[0] == mm_out ? add->inputs[1] : add->inputs[0];
    COLLAGE_ASSIGN_OR_RETURN(Operand bias_operand, Operand::Resolve(request, bias_id));
    if (!bias_operand.is_constant()) return InvalidArgument("the bias of MatMul is not a constant");
    bias = bias_operand.constant();
    if (bias.size() != 1 && static_cast<int64_t>(bias.size()) != plan.n) {
      return Unsupported("bias of {} values for a MatMul with {} columns", bias.size(), plan.n);
    }
  }
  return std::unique_ptr<Kernel>(std::make_unique<MatMulKernel>(
      std::move(plan), std::move(a), std::move(b), std::move(bias), request.inputs.size()));
}

StatusOr<std::unique_ptr<Kernel>> CompileGemm(const CompileRequest& request) {
  COLLAGE_ASSIGN_OR_RETURN(GemmOperands g, ResolveGemm(request));
  const GemmParams& p = g.params;
  if (!FitsBlasInt(p.m) || !FitsBlasInt(p.n) || !FitsBlasInt(p.k)) {
    return Unsupported("Gemm {}x{}x{} exceeds BLAS's int dims", p.m, p.n, p.k);
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<GemmKernel>(std::move(g), request.inputs.size()));
}

}  // namespace collage::openblas
