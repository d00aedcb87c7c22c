#include "gemm_kernels.h"

#include <Eigen/Core>
#include <algorithm>

#include "backend/shared/find_node.h"
#include "backend/shared/gemm_params.h"
#include "backend/shared/matmul_plan.h"
#include "backend/shared/operand.h"
#include "collage/sdk/errors.h"

namespace collage::eigen {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using MatrixMap = Eigen::Map<RowMatrix>;
using Eigen::Index;

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(MatMulPlan plan, Operand a, Operand b, size_t num_inputs)
      : plan_(std::move(plan)), a_(std::move(a)), b_(std::move(b)) {
    input_layouts_.assign(num_inputs, Layout::Plain());
    output_layouts_ = {Layout::Plain()};
  }

  Status Run(const KernelBuffers& buffers) const override {
    const float* a = a_.Data(buffers);
    const float* b = b_.Data(buffers);
    float* y = static_cast<float*>(buffers.outputs[0]);
    const Index m = plan_.m, n = plan_.n, k = plan_.k;
    for (size_t i = 0; i < plan_.a_offsets.size(); ++i) {
      MatrixMap out(y + static_cast<Index>(i) * m * n, m, n);
      // noalias: the output never overlaps the operands, so Eigen needs no temporary.
      out.noalias() = ConstMatrixMap(a + plan_.a_offsets[i], m, k) *
                      ConstMatrixMap(b + plan_.b_offsets[i], k, n);
    }
    return Status::Ok();
  }

 private:
  MatMulPlan plan_;
  Operand a_;
  Operand b_;
};

class GemmKernel final : public Kernel {
 public:
  GemmKernel(GemmOperands g, size_t num_inputs)
      : p_(g.params), a_(std::move(g.a)), b_(std::move(g.b)), c_(std::move(g.c)) {
    input_layouts_.assign(num_inputs, Layout::Plain());
    output_layouts_ = {Layout::Plain()};
  }

  Status Run(const KernelBuffers& buffers) const override {
    MatrixMap y(static_cast<float*>(buffers.outputs[0]), p_.m, p_.n);
    if (p_.m == 0 || p_.n == 0) return Status::Ok();
    // As in ONNX, beta == 0 ignores C entirely (NaNs included).
    const bool use_c = p_.has_c && p_.beta != 0.0f;
    if (use_c) {  // C's dims are 1 or the output's (checked at Compile)
      ConstMatrixMap c(c_.Data(buffers), p_.c_rows, p_.c_cols);
      y = p_.beta * c.replicate(p_.m / p_.c_rows, p_.n / p_.c_cols);
    }
    const float* a = a_.Data(buffers);
    const float* b = b_.Data(buffers);
    if (p_.trans_a) {
      Multiply(ConstMatrixMap(a, p_.k, p_.m).transpose(), b, use_c, y);
    } else {
      Multiply(ConstMatrixMap(a, p_.m, p_.k), b, use_c, y);
    }
    return Status::Ok();
  }

 private:
  template <typename A>
  void Multiply(const A& a, const float* b, bool accumulate, MatrixMap& y) const {
    if (p_.trans_b) {
      Product(a, ConstMatrixMap(b, p_.n, p_.k).transpose(), accumulate, y);
    } else {
      Product(a, ConstMatrixMap(b, p_.k, p_.n), accumulate, y);
    }
  }
  template <typename A, typename B>
  void Product(const A& a, const B& b, bool accumulate, MatrixMap& y) const {
    if (accumulate) {
      y.noalias() += p_.alpha * (a * b);
    } else {
      y.noalias() = p_.alpha * (a * b);
    }
  }

  GemmParams p_;
  Operand a_;
  Operand b_;
  Operand c_;
};

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CompileMatMul(const CompileRequest& request) {
  const Node* matmul = FindNode(request, "MatMul");
  if (matmul == nullptr) return InvalidArgument("the group has no MatMul node");
  COLLAGE_ASSIGN_OR_RETURN(MatMulPlan plan,
                           PlanMatMul(request.type(matmul->inputs[0]).shape,
                                      request.type(matmul->inputs[1]).shape));
  COLLAGE_ASSIGN_OR_RETURN(Operand a, Operand::Resolve(request, matmul->inputs[0]));
  COLLAGE_ASSIGN_OR_RETURN(Operand b, Operand::Resolve(request, matmul->inputs[1]));
  return std::unique_ptr<Kernel>(std::make_unique<MatMulKernel>(
      std::move(plan), std::move(a), std::move(b), request.inputs.size()));
}

StatusOr<std::unique_ptr<Kernel>> CompileGemm(const CompileRequest& request) {
  COLLAGE_ASSIGN_OR_RETURN(GemmOperands g, ResolveGemm(request));
  return std::unique_ptr<Kernel>(
      std::make_unique<GemmKernel>(std::move(g), request.inputs.size()));
}

}  // namespace collage::eigen
