#include "bf16_gemm_kernels.h"

#include <mkl_cblas.h>

#include <vector>

#include "backend/shared/find_node.h"
#include "backend/shared/gemm_params.h"
#include "backend/shared/operand.h"
#include "bfloat16_values.h"
#include "collage/sdk/errors.h"
#include "gemm_common.h"
#include "mkl_threads.h"
#include "packed_matrix.h"

namespace collage::mkl {
namespace {

constexpr size_t kAlignment = 64;  // the workspace's, kept for each operand's share

// One operand of the products in bfloat16: a constant converted at compile time, or a
// kernel input converted at each run into its share of the workspace.
class Bf16Operand {
 public:
  Bf16Operand() = default;
  // `values` as resolved for float32; `count` its element count; `workspace` the bytes
  // taken so far, grown by an input's share.
  Bf16Operand(Operand values, size_t count, size_t& workspace)
      : count_(count), from_input_(!values.is_constant()) {
    if (!from_input_) {
      constant_.resize(count);
      ConvertToBfloat16(values.constant().data(), count, constant_.data());
    } else {
      input_ = std::move(values);
      offset_ = workspace;
      workspace += (count * sizeof(uint16_t) + kAlignment - 1) / kAlignment * kAlignment;
    }
  }
  // The operand in bfloat16 for this run (an input is converted on each call).
  const MKL_BF16* Prepare(const KernelBuffers& buffers) const {
    if (!from_input_) return constant_.data();
    auto* converted = reinterpret_cast<uint16_t*>(static_cast<char*>(buffers.workspace) + offset_);
    ConvertToBfloat16(input_.Data(buffers), count_, converted);
    return converted;
  }

 private:
  size_t count_ = 0;
  bool from_input_ = false;
  std::vector<uint16_t> constant_;
  Operand input_;
  size_t offset_ = 0;
};

size_t ElementsOf(const CompileRequest& request, ValueId value) {
  return static_cast<size_t>(NumElements(request.graph->value(value).type.shape));
}

class MatMulBf16Kernel final : public Kernel {
 public:
  MatMulBf16Kernel(MatMulPlan plan, Bf16Operand a, Bf16Operand b, std::vector<float> bias,
                   int num_threads, size_t num_inputs, size_t workspace)
      : plan_(std::move(plan)),
        a_(std::move(a)),
        b_(std::move(b)),
        bias_(std::move(bias)),
        num_threads_(num_threads) {
    input_layouts_.assign(num_inputs, Layout::Plain());
    output_layouts_.assign(1, Layout::Plain());
    workspace_bytes_ = workspace;
  }

  Status Run(const KernelBuffers& buffers) const override {
    float* y = static_cast<float*>(buffers.outputs[0]);
    const int64_t count = static_cast<int64_t>(plan_.a_offsets.size());
    const int64_t block = plan_.m * plan_.n;
    if (block == 0) return Status::Ok();
    const float beta = StartMatMulOutput(plan_, bias_, y);
    if (plan_.k == 0) return Status::Ok();  // an empty sum: MKL would reject lda = 0
    const MKL_BF16* a = a_.Prepare(buffers);
    const MKL_BF16* b = b_.Prepare(buffers);
    const auto m = static_cast<MKL_INT>(plan_.m);
    const auto n = static_cast<MKL_INT>(plan_.n);
    const auto k = static_cast<MKL_INT>(plan_.k);
    MklThreadScope threads(num_threads_);
    for (int64_t i = 0; i < count; ++i) {
      cblas_gemm_bf16bf16f32(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                             a + plan_.a_offsets[static_cast<size_t>(i)], k,
                             b + plan_.b_offsets[static_cast<size_t>(i)], n, beta, y + i * block,
                             n);
    }
    return Status::Ok();
  }

 private:
  MatMulPlan plan_;
  Bf16Operand a_, b_;
  std::vector<float> bias_;  // empty, one value or n values
  int num_threads_;
};

class GemmBf16Kernel final : public Kernel {
 public:
  GemmBf16Kernel(GemmParams params, Bf16Operand a, Bf16Operand b, Operand c, int num_threads,
                 size_t num_inputs, size_t workspace)
      : p_(params), a_(std::move(a)), b_(std::move(b)), c_(std::move(c)), num_threads_(num_threads) {
    input_layouts_.assign(num_inputs, Layout::Plain());
    output_layouts_.assign(1, Layout::Plain());
    workspace_bytes_ = workspace;
  }

  Status Run(const KernelBuffers& buffers) const override {
    float* y = static_cast<float*>(buffers.outputs[0]);
    if (p_.m == 0 || p_.n == 0) return Status::Ok();
    const float beta = StartGemmOutput(p_, c_.Data(buffers), y);
    if (p_.k == 0) return Status::Ok();
    const auto m = static_cast<MKL_INT>(p_.m);
    const auto n = static_cast<MKL_INT>(p_.n);
    const auto k = static_cast<MKL_INT>(p_.k);
    const auto lda = static_cast<MKL_INT>(p_.trans_a ? p_.m : p_.k);
    const auto ldb = static_cast<MKL_INT>(p_.trans_b ? p_.k : p_.n);
    const MKL_BF16* a = a_.Prepare(buffers);
    const MKL_BF16* b = b_.Prepare(buffers);
    MklThreadScope threads(num_threads_);
    cblas_gemm_bf16bf16f32(CblasRowMajor, p_.trans_a ? CblasTrans : CblasNoTrans,
                           p_.trans_b ? CblasTrans : CblasNoTrans, m, n, k, p_.alpha, a, lda, b,
                           ldb, beta, y, n);
    return Status::Ok();
  }

 private:
  GemmParams p_;
  Bf16Operand a_, b_;
  Operand c_;
  int num_threads_;
};

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CompileMatMulBf16(const CompileRequest& request) {
  COLLAGE_ASSIGN_OR_RETURN(MatMulGroup group, ReadMatMulGroup(request));
  const Node* matmul = group.matmul;
  std::vector<float> bias;
  if (group.add != nullptr) {
    COLLAGE_ASSIGN_OR_RETURN(bias, BiasOfMatMul(request, group));
  }
  size_t workspace = 0;
  COLLAGE_ASSIGN_OR_RETURN(Operand a, Operand::Resolve(request, matmul->inputs[0]));
  COLLAGE_ASSIGN_OR_RETURN(Operand b, Operand::Resolve(request, matmul->inputs[1]));
  Bf16Operand a16(std::move(a), ElementsOf(request, matmul->inputs[0]), workspace);
  Bf16Operand b16(std::move(b), ElementsOf(request, matmul->inputs[1]), workspace);
  return std::unique_ptr<Kernel>(std::make_unique<MatMulBf16Kernel>(
      std::move(group.plan), std::move(a16), std::move(b16), std::move(bias), request.num_threads(),
      request.inputs.size(), workspace));
}

StatusOr<std::unique_ptr<Kernel>> CompileGemmBf16(const CompileRequest& request) {
  COLLAGE_ASSIGN_OR_RETURN(GemmOperands g, ReadGemmGroup(request));
  const GemmParams& p = g.params;
  const Node* gemm = FindNode(request, "Gemm");
  if (gemm == nullptr) return InvalidArgument("the group has no Gemm node");
  size_t workspace = 0;
  Bf16Operand a(std::move(g.a), ElementsOf(request, gemm->inputs[0]), workspace);
  Bf16Operand b(std::move(g.b), ElementsOf(request, gemm->inputs[1]), workspace);
  return std::unique_ptr<Kernel>(
      std::make_unique<GemmBf16Kernel>(p, std::move(a), std::move(b), std::move(g.c),
                                       request.num_threads(), request.inputs.size(), workspace));
}

}  // namespace collage::mkl
