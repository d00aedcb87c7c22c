#include "mkl_rules.h"

#include "backend/shared/blas_rules.h"
#include "bf16_gemm_kernels.h"
#include "bfloat16_values.h"
#include "conv_kernel.h"
#include "conv_transpose_kernel.h"
#include "gemm_kernels.h"
#include "integer_matmul_kernel.h"
#include "lstm_kernel.h"

namespace collage::mkl {
namespace {

// The products "matmul", "matmul_bias" and "gemm" compile in float32 (gemm_kernels.h) or in
// bf16 (bf16_gemm_kernels.h), as the request asks.
RuleCompiler InPrecision(StatusOr<std::unique_ptr<Kernel>> (*float32)(const CompileRequest&),
                            StatusOr<std::unique_ptr<Kernel>> (*bfloat16)(const CompileRequest&)) {
  return [float32, bfloat16](const CompileRequest& request, const Match&) {
    return request.precision == Precision::kBfloat16 ? bfloat16(request) : float32(request);
  };
}

}  // namespace

RuleSet BuildRules() {
  // bf16 products where the CPU computes them natively, beside float32: the search measures
  // both (MKL would emulate them elsewhere, slower than its float32 ones).
  const std::vector<Precision> products =
      ComputesBfloat16() ? std::vector<Precision>{Precision::kFloat32, Precision::kBfloat16}
                         : std::vector<Precision>{Precision::kFloat32};
  RuleSet rules;
  // Every rule declares the NaN/Inf contract: MKL's sgemm propagates NaN and infinities
  // through its sums (beta = 0 never reads the output, as BLAS specifies), and the bias and
  // Relu epilogues are collage's own loops, which keep NaN (checked by collage_backend_ops
  // --nan-contract=enforce).
  AddBlasProductRules(rules, {InPrecision(CompileMatMul, CompileMatMulBf16),
                              InPrecision(CompileMatMul, CompileMatMulBf16),
                              InPrecision(CompileGemm, CompileGemmBf16), products});
  AddIm2colConvRules(rules, FromRequest(CompileConv));
  // ConvTranspose as packed products and col2im (conv_transpose_kernel.h): the scatter adds
  // in a fixed order and never reads anything but the product.
  rules.Add(Rule("conv_transpose", Op("ConvTranspose").If(ConvTranspose2dSupported))
                .PropagatesNonFinite()
                .Compiles([](const CompileRequest& request, const Match&) {
                  return CompileConvTranspose(request);
                }));
  // MatMulInteger of dynamically quantized activations by int8 weights, exact int32 sums
  // (integer_matmul_kernel.h): integers carry no NaN, so no contract to declare.
  rules.Add(Rule("matmul_integer",
                 Op("MatMulInteger")(Any(), Const(), Optional(Any()), Optional(Const())))
                .Where(IntegerMatMulSupported)
                .Compiles([](const CompileRequest& request, const Match&) {
                  return CompileIntegerMatMul(request);
                }));
  // LSTM on packed products and VML's tanh (lstm_kernel.h); "lstm_serial" runs the
  // recurrence on the calling thread. The gates' sigmoid as 0.5 * tanh(x / 2) + 0.5 maps
  // infinities to 0 and 1 and keeps NaN, as the reference's 1 / (1 + exp(-x)) does.
  const Pattern lstm = Op("LSTM").If(LstmSupported);
  rules.Add(Rule("lstm", lstm)
                .PropagatesNonFinite()
                .Compiles([](const CompileRequest& request, const Match&) {
                  return CompileLstm(request, false);
                }));
  rules.Add(Rule("lstm_serial", lstm)
                .PropagatesNonFinite()
                .Compiles([](const CompileRequest& request, const Match&) {
                  return CompileLstm(request, true);
                }));
  return rules;
}

}  // namespace collage::mkl
