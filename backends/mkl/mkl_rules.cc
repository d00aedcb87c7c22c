#include "mkl_rules.h"

#include "bf16_gemm_kernels.h"
#include "bfloat16_values.h"
#include "collage/sdk/float32_rule_checks.h"
#include "conv_kernel.h"
#include "conv_transpose_kernel.h"
#include "gemm_kernels.h"
#include "integer_matmul_kernel.h"
#include "lstm_kernel.h"

namespace collage::mkl {
namespace {

// 2-D convolution only: X [N, C, H, W], W [M, C/group, KH, KW] (im2col, src/backend/im2col.h).
bool Conv2dSupported(const Match& m) {
  return AllStaticFloat32(m) && m.capture_type(0).shape.size() == 4 &&
         m.capture_type(1).shape.size() == 4;
}

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
  // MatMul of any float32 operands: a constant one is packed, the others are kernel inputs.
  rules.Add(Rule("matmul", Op("MatMul")(Any(), Any()))
                .Where(AllStaticFloat32)
                .PropagatesNonFinite()
                .Precisions(products)
                .Compiles(InPrecision(CompileMatMul, CompileMatMulBf16)));
  // MatMul by a constant weight, then Add of a constant bias row (a Linear layer).
  rules.Add(Rule("matmul_bias", Op("Add")(Op("MatMul")(Any(), Const()), Const()))
                .Where(AllStaticFloat32)
                .Where(BroadcastsAsOpset7)
                .Where([](const Match& m) {
                  // A 1-D weight is a column whose dim the product drops: no bias row then.
                  if (m.capture_type(1).shape.size() < 2) return false;
                  const TensorType& mm = m.graph->value(m.node(1).outputs[0]).type;
                  return mm.shape == m.output_type().shape &&
                         IsRowBias(m.capture_type(2), mm.shape);
                })
                .PropagatesNonFinite()
                .Precisions(products)
                .Compiles(InPrecision(CompileMatMul, CompileMatMulBf16)));
  rules.Add(Rule("gemm", Op("Gemm")(Any(), Any(), Optional(Any())))
                .Where(AllStaticFloat32)
                .Where(BroadcastsAsOpset7)
                .PropagatesNonFinite()
                .Precisions(products)
                .Compiles(InPrecision(CompileGemm, CompileGemmBf16)));
  rules.Add(Rule("conv", Op("Conv")(Any(), Const(), Optional(Const())))
                .Where(Conv2dSupported)
                .PropagatesNonFinite()
                .Compiles(CompileConv));
  rules.Add(Rule("conv_relu", Op("Relu")(Op("Conv")(Any(), Const(), Optional(Const()))))
                .Where(Conv2dSupported)
                .PropagatesNonFinite()
                .Compiles(CompileConv));
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
