#include "gemm_kernels.h"

#include <Eigen/Core>

#include <algorithm>

#include "backend/matmul_plan.h"
#include "backend/operand.h"
#include "util/errors.h"

namespace collage::eigen {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using MatrixMap = Eigen::Map<RowMatrix>;
using Eigen::Index;

const Node* FindNode(const CompileRequest& request, const char* op_type) {
  for (NodeId id : request.node_ids()) {
    if (request.graph->node(id).op_type == op_type) return &request.graph->node(id);
  }
  return nullptr;
}

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
  struct Params {
    Index m = 0, n = 0, k = 0;
    bool trans_a = false, trans_b = false;
    float alpha = 1.0f, beta = 1.0f;
    bool has_c = false;
    Index c_rows = 1, c_cols = 1;  // C's shape, left-padded to 2-D; broadcast to [m, n]
  };
  GemmKernel(Params p, Operand a, Operand b, Operand c, size_t num_inputs)
      : p_(p), a_(std::move(a)), b_(std::move(b)), c_(std::move(c)) {
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

  Params p_;
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
  const Node* gemm = FindNode(request, "Gemm");
  if (gemm == nullptr) return InvalidArgument("the group has no Gemm node");
  const Shape& a_shape = request.type(gemm->inputs[0]).shape;
  const Shape& b_shape = request.type(gemm->inputs[1]).shape;
  if (a_shape.size() != 2 || b_shape.size() != 2) return InvalidArgument("Gemm needs 2-D A and B");
  GemmKernel::Params p;
  p.trans_a = gemm->attributes.GetInt("transA", 0) != 0;
  p.trans_b = gemm->attributes.GetInt("transB", 0) != 0;
  p.alpha = gemm->attributes.GetFloat("alpha", 1.0f);
  p.beta = gemm->attributes.GetFloat("beta", 1.0f);
  p.m = p.trans_a ? a_shape[1] : a_shape[0];
  p.k = p.trans_a ? a_shape[0] : a_shape[1];
  p.n = p.trans_b ? b_shape[0] : b_shape[1];
  if ((p.trans_b ? b_shape[1] : b_shape[0]) != p.k) return InvalidArgument("Gemm inner dims differ");
  COLLAGE_ASSIGN_OR_RETURN(Operand a, Operand::Resolve(request, gemm->inputs[0]));
  COLLAGE_ASSIGN_OR_RETURN(Operand b, Operand::Resolve(request, gemm->inputs[1]));
  Operand c;
  if (gemm->inputs.size() > 2 && gemm->inputs[2] != kNoValue) {
    const Shape& c_shape = request.type(gemm->inputs[2]).shape;
    if (c_shape.size() > 2) return InvalidArgument("Gemm C has rank {}", c_shape.size());
    Shape c2(2 - c_shape.size(), 1);
    c2.insert(c2.end(), c_shape.begin(), c_shape.end());
    if ((c2[0] != 1 && c2[0] != p.m) || (c2[1] != 1 && c2[1] != p.n)) {
      return InvalidArgument("Gemm C {} does not broadcast to [{}, {}]", ShapeToString(c_shape),
                             p.m, p.n);
    }
    COLLAGE_ASSIGN_OR_RETURN(c, Operand::Resolve(request, gemm->inputs[2]));
    p.has_c = true;
    p.c_rows = c2[0];
    p.c_cols = c2[1];
  }
  return std::unique_ptr<Kernel>(std::make_unique<GemmKernel>(p, std::move(a), std::move(b),
                                                              std::move(c), request.inputs.size()));
}

}  // namespace collage::eigen
