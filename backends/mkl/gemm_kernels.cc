#include "gemm_kernels.h"

#include <mkl_cblas.h>

#include <map>
#include <optional>

#include "backend/shared/gemm_params.h"
#include "backend/shared/operand.h"
#include "collage/sdk/errors.h"
#include "gemm_common.h"
#include "mkl_functions.h"
#include "mkl_threads.h"
#include "packed_matrix.h"

namespace collage::mkl {
namespace {

std::vector<Layout> PlainLayouts(size_t n) { return std::vector<Layout>(n, Layout::Plain()); }

// The common stride of offsets that advance evenly (0 for a broadcast operand); nullopt
// when they do not, or when the stride does not fit MKL_INT.
std::optional<int64_t> EvenStride(const std::vector<int64_t>& offsets) {
  const int64_t stride = offsets.size() < 2 ? 0 : offsets[1] - offsets[0];
  for (size_t i = 0; i < offsets.size(); ++i) {
    if (offsets[i] != static_cast<int64_t>(i) * stride) return std::nullopt;
  }
  if (!FitsMklInt(stride)) return std::nullopt;
  return stride;
}

// How a MatMul's GEMMs run.
enum class MatMulPath {
  kPackedA,  // A is a constant, packed per distinct block: cblas_sgemm_compute
  kPackedB,  // B is a constant (the usual weight), packed per distinct block
  kStrided,  // several GEMMs of inputs at even strides: one cblas_sgemm_batch_strided
  kLoop,     // one cblas_sgemm per GEMM (one GEMM, or broadcasts that do not stride evenly)
};

class MatMulKernel final : public Kernel {
 public:
  struct Parts {
    MatMulPlan plan;
    Operand a, b;
    std::vector<float> bias;  // empty, one value or n values
    MatMulPath path = MatMulPath::kLoop;
    std::vector<PackedMatrix> packed;    // kPackedA / kPackedB: the distinct blocks
    std::vector<size_t> packed_block;    // per GEMM: its entry of `packed`
    int64_t stride_a = 0, stride_b = 0;  // kStrided
    int num_threads = 1;
  };

  MatMulKernel(Parts parts, size_t num_inputs) : p_(std::move(parts)) {
    input_layouts_ = PlainLayouts(num_inputs);
    output_layouts_ = PlainLayouts(1);
  }

  Status Run(const KernelBuffers& buffers) const override {
    const MatMulPlan& plan = p_.plan;
    float* y = static_cast<float*>(buffers.outputs[0]);
    const int64_t count = static_cast<int64_t>(plan.a_offsets.size());
    const int64_t block = plan.m * plan.n;
    if (block == 0) return Status::Ok();
    const float beta = StartMatMulOutput(plan, p_.bias, y);
    if (plan.k == 0) return Status::Ok();  // an empty sum: MKL would reject lda = 0
    const float* a = p_.path == MatMulPath::kPackedA ? nullptr : p_.a.Data(buffers);
    const float* b = p_.path == MatMulPath::kPackedB ? nullptr : p_.b.Data(buffers);
    const MKL_INT m = static_cast<MKL_INT>(plan.m);
    const MKL_INT n = static_cast<MKL_INT>(plan.n);
    const MKL_INT k = static_cast<MKL_INT>(plan.k);
    MklThreadScope threads(p_.num_threads);
    switch (p_.path) {
      case MatMulPath::kPackedA:
      case MatMulPath::kPackedB: {
        const bool packed_a = p_.path == MatMulPath::kPackedA;
        // cblas_sgemm_compute takes either flag for each operand, as an MKL_INT.
        const MKL_INT op_a = packed_a ? MKL_INT{CblasPacked} : MKL_INT{CblasNoTrans};
        const MKL_INT op_b = packed_a ? MKL_INT{CblasNoTrans} : MKL_INT{CblasPacked};
        for (size_t i = 0; i < static_cast<size_t>(count); ++i) {
          const float* packed = p_.packed[p_.packed_block[i]].data();
          cblas_sgemm_compute(CblasRowMajor, op_a, op_b, m, n, k,
                              packed_a ? packed : a + plan.a_offsets[i], k,
                              packed_a ? b + plan.b_offsets[i] : packed, n, beta,
                              y + static_cast<int64_t>(i) * block, n);
        }
        break;
      }
      case MatMulPath::kStrided:
        MklSgemmBatchStrided()(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k,
                               static_cast<MKL_INT>(p_.stride_a), b, n,
                               static_cast<MKL_INT>(p_.stride_b), beta, y, n,
                               static_cast<MKL_INT>(block), static_cast<MKL_INT>(count));
        break;
      case MatMulPath::kLoop:
        for (size_t i = 0; i < static_cast<size_t>(count); ++i) {
          MklSgemm()(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                     a + plan.a_offsets[i], k, b + plan.b_offsets[i], n, beta,
                     y + static_cast<int64_t>(i) * block, n);
        }
        break;
    }
    return Status::Ok();
  }

 private:
  Parts p_;
};

// Packs each distinct block of the constant operand (A's blocks are m x k, B's k x n) and
// records which block every GEMM of the plan uses.
Status PackBlocks(CBLAS_IDENTIFIER which, const std::vector<float>& constant,
                  const std::vector<int64_t>& offsets, MatMulKernel::Parts& parts) {
  const MatMulPlan& plan = parts.plan;
  const GemmDims dims{plan.m, plan.n, plan.k};
  const int64_t ld = which == CblasAMatrix ? plan.k : plan.n;
  std::map<int64_t, size_t> block_of_offset;
  for (int64_t offset : offsets) {
    auto [it, inserted] = block_of_offset.try_emplace(offset, parts.packed.size());
    if (inserted) {
      COLLAGE_ASSIGN_OR_RETURN(PackedMatrix packed,
                               PackedMatrix::Pack(which, CblasNoTrans, dims, 1.0f,
                                                  constant.data() + offset, ld, parts.num_threads));
      parts.packed.push_back(std::move(packed));
    }
    parts.packed_block.push_back(it->second);
  }
  return Status::Ok();
}

class GemmKernel final : public Kernel {
 public:
  // `packed`: alpha * op(B) (or alpha * op(A) when packed_a), packed; unset when neither is
  // a constant.
  GemmKernel(GemmOperands g, std::optional<PackedMatrix> packed, bool packed_a, int num_threads,
             size_t num_inputs)
      : p_(g.params),
        a_(std::move(g.a)),
        b_(std::move(g.b)),
        c_(std::move(g.c)),
        packed_(std::move(packed)),
        packed_a_(packed_a),
        num_threads_(num_threads) {
    input_layouts_ = PlainLayouts(num_inputs);
    output_layouts_ = PlainLayouts(1);
  }

  Status Run(const KernelBuffers& buffers) const override {
    float* y = static_cast<float*>(buffers.outputs[0]);
    if (p_.m == 0 || p_.n == 0) return Status::Ok();
    const float beta = StartGemmOutput(p_, c_.Data(buffers), y);
    if (p_.k == 0) return Status::Ok();
    const MKL_INT m = static_cast<MKL_INT>(p_.m);
    const MKL_INT n = static_cast<MKL_INT>(p_.n);
    const MKL_INT k = static_cast<MKL_INT>(p_.k);
    const MKL_INT lda = static_cast<MKL_INT>(p_.trans_a ? p_.m : p_.k);
    const MKL_INT ldb = static_cast<MKL_INT>(p_.trans_b ? p_.k : p_.n);
    const CBLAS_TRANSPOSE trans_a = p_.trans_a ? CblasTrans : CblasNoTrans;
    const CBLAS_TRANSPOSE trans_b = p_.trans_b ? CblasTrans : CblasNoTrans;
    MklThreadScope threads(num_threads_);
    if (!packed_) {
      MklSgemm()(CblasRowMajor, trans_a, trans_b, m, n, k, p_.alpha, a_.Data(buffers), lda,
                 b_.Data(buffers), ldb, beta, y, n);
    } else if (packed_a_) {  // alpha is in the packed A
      cblas_sgemm_compute(CblasRowMajor, CblasPacked, trans_b, m, n, k, packed_->data(), lda,
                          b_.Data(buffers), ldb, beta, y, n);
    } else {
      cblas_sgemm_compute(CblasRowMajor, trans_a, CblasPacked, m, n, k, a_.Data(buffers), lda,
                          packed_->data(), ldb, beta, y, n);
    }
    return Status::Ok();
  }

 private:
  GemmParams p_;
  Operand a_;
  Operand b_;
  Operand c_;
  std::optional<PackedMatrix> packed_;
  bool packed_a_;
  int num_threads_;
};

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CompileMatMul(const CompileRequest& request) {
  COLLAGE_ASSIGN_OR_RETURN(MatMulGroup group, ReadMatMulGroup(request));
  const Node* matmul = group.matmul;
  MatMulKernel::Parts parts;
  parts.plan = std::move(group.plan);
  const MatMulPlan& plan = parts.plan;
  parts.num_threads = request.num_threads();
  COLLAGE_ASSIGN_OR_RETURN(parts.a, Operand::Resolve(request, matmul->inputs[0]));
  COLLAGE_ASSIGN_OR_RETURN(parts.b, Operand::Resolve(request, matmul->inputs[1]));
  if (group.add != nullptr) {
    COLLAGE_ASSIGN_OR_RETURN(parts.bias, BiasOfMatMul(request, group));
  }
  const bool empty = plan.m == 0 || plan.n == 0 || plan.k == 0;  // nothing to pack
  if (!empty && parts.b.is_constant()) {
    parts.path = MatMulPath::kPackedB;
    COLLAGE_RETURN_IF_ERROR(PackBlocks(CblasBMatrix, parts.b.constant(), plan.b_offsets, parts));
    parts.b = Operand();  // the packed copy is all the kernel reads
  } else if (!empty && parts.a.is_constant()) {
    parts.path = MatMulPath::kPackedA;
    COLLAGE_RETURN_IF_ERROR(PackBlocks(CblasAMatrix, parts.a.constant(), plan.a_offsets, parts));
    parts.a = Operand();
  } else if (plan.a_offsets.size() > 1 && FitsMklInt(plan.m * plan.n) &&
             FitsMklInt(static_cast<int64_t>(plan.a_offsets.size()))) {
    const std::optional<int64_t> stride_a = EvenStride(plan.a_offsets);
    const std::optional<int64_t> stride_b = EvenStride(plan.b_offsets);
    if (stride_a && stride_b) {
      parts.path = MatMulPath::kStrided;
      parts.stride_a = *stride_a;
      parts.stride_b = *stride_b;
    }
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<MatMulKernel>(std::move(parts), request.inputs.size()));
}

StatusOr<std::unique_ptr<Kernel>> CompileGemm(const CompileRequest& request) {
  COLLAGE_ASSIGN_OR_RETURN(GemmOperands g, ReadGemmGroup(request));
  const GemmParams& p = g.params;
  // A constant B (the weights of a fully connected layer) is packed with alpha folded in
  // (cblas_sgemm_compute has no alpha); a constant A when B is an input.
  std::optional<PackedMatrix> packed;
  bool packed_a = false;
  if (p.m > 0 && p.n > 0 && p.k > 0 && (g.b.is_constant() || g.a.is_constant())) {
    const GemmDims dims{p.m, p.n, p.k};
    packed_a = !g.b.is_constant();
    const Operand& constant = packed_a ? g.a : g.b;  // released once packed
    const bool trans = packed_a ? p.trans_a : p.trans_b;
    const int64_t ld = packed_a ? (p.trans_a ? p.m : p.k) : (p.trans_b ? p.k : p.n);
    COLLAGE_ASSIGN_OR_RETURN(
        packed, PackedMatrix::Pack(packed_a ? CblasAMatrix : CblasBMatrix,
                                   trans ? CblasTrans : CblasNoTrans, dims, p.alpha,
                                   constant.constant().data(), ld, request.num_threads()));
    (packed_a ? g.a : g.b) = Operand();  // the packed copy is all the kernel reads
  }
  return std::unique_ptr<Kernel>(std::make_unique<GemmKernel>(
      std::move(g), std::move(packed), packed_a, request.num_threads(), request.inputs.size()));
}

}  // namespace collage::mkl
