#include "backend/shared/blas_rules.h"

#include "backend/shared/float32_rule_checks.h"

namespace collage {
namespace {

// MatMul's output takes the bias row by row: a 2-D or batched weight (a 1-D weight is a
// column whose dim the product drops: no bias row then), the Add's output the product's shape.
bool AddsARowBias(const Match& m) {
  if (m.capture_type(1).shape.size() < 2) return false;
  const TensorType& product = m.graph->value(m.node(1).outputs[0]).type;
  return product.shape == m.output_type().shape && IsRowBias(m.capture_type(2), product.shape);
}

// The Conv's X and W are 4-D float32 (2-D convolution), as im2col takes them.
bool Conv2dFloat32(const Match& m) {
  return AllStaticFloat32(m) && m.capture_type(0).shape.size() == 4 &&
         m.capture_type(1).shape.size() == 4;
}

}  // namespace

void AddBlasProductRules(RuleSet& rules, const BlasProductCompilers& compilers) {
  // Constants are packed; other operands are kernel inputs.
  rules.Add(Rule("matmul", Op("MatMul")(Any(), Any()))
                .Where(AllStaticFloat32)
                .PropagatesNonFinite()
                .Precisions(compilers.precisions)
                .Compiles(compilers.matmul));
  if (compilers.matmul_bias) {
    rules.Add(Rule("matmul_bias", Op("Add")(Op("MatMul")(Any(), Const()), Const()))
                  .Where(AllStaticFloat32)
                  .Where(BroadcastsAsOpset7)
                  .Where(AddsARowBias)
                  .PropagatesNonFinite()
                  .Precisions(compilers.precisions)
                  .Compiles(compilers.matmul_bias));
  }
  rules.Add(Rule("gemm", Op("Gemm")(Any(), Any(), Optional(Any())))
                .Where(AllStaticFloat32)
                .Where(BroadcastsAsOpset7)
                .PropagatesNonFinite()
                .Precisions(compilers.precisions)
                .Compiles(compilers.gemm));
}

void AddIm2colConvRules(RuleSet& rules, const RuleCompiler& conv) {
  rules.Add(Rule("conv", Op("Conv")(Any(), Const(), Optional(Const())))
                .Where(Conv2dFloat32)
                .PropagatesNonFinite()
                .Compiles(conv));
  rules.Add(Rule("conv_relu", Op("Relu")(Op("Conv")(Any(), Const(), Optional(Const()))))
                .Where(Conv2dFloat32)
                .PropagatesNonFinite()
                .Compiles(conv));
}

}  // namespace collage
