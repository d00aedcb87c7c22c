#include "openblas_rules.h"

#include "collage/sdk/float32_rule_checks.h"
#include "conv_kernel.h"
#include "gemm_kernels.h"

namespace collage::openblas {
namespace {

// The Conv's captures start at `first`: X, W, optional B.
MatchConstraint ConvSupported(size_t first) {
  return [first](const Match& m) {
    return AllStaticFloat32(m) && m.capture_type(first).shape.size() == 4 &&
           m.capture_type(first + 1).shape.size() == 4;
  };
}

}  // namespace

RuleSet BuildRules() {
  RuleSet rules;
  // Every rule meets the NaN/Inf contract (measured by backend_ops --nan-contract, seeds 1
  // and 2): BLAS arithmetic propagates NaN and the Relu epilogue keeps it.
  // MatMul of any float32 operands (constants are packed, others are kernel inputs).
  rules.Add(Rule("matmul", Op("MatMul")(Any(), Any()))
                .Where(AllStaticFloat32)
                .PropagatesNonFinite()
                .Compiles(CompileMatMul));
  // MatMul by a constant weight, then Add of a constant bias row (a Linear layer).
  rules.Add(Rule("matmul_bias", Op("Add")(Op("MatMul")(Any(), Const()), Const()))
                .Where(AllStaticFloat32)
                .Where(BroadcastsAsOpset7)
                .Where([](const Match& m) {
                  // A 1-D weight is a column whose dim the product drops: no bias row then.
                  if (m.capture_type(1).shape.size() < 2) return false;
                  const TensorType& mm = m.graph->value(m.node(1).outputs[0]).type;
                  return mm.shape == m.output_type().shape && IsRowBias(m.capture_type(2), mm.shape);
                })
                .PropagatesNonFinite()
                .Compiles(CompileMatMul));
  rules.Add(Rule("gemm", Op("Gemm")(Any(), Any(), Optional(Any())))
                .Where(AllStaticFloat32)
                .Where(BroadcastsAsOpset7)
                .PropagatesNonFinite()
                .Compiles(CompileGemm));
  rules.Add(Rule("conv", Op("Conv")(Any(), Const(), Optional(Const())))
                .Where(ConvSupported(0))
                .PropagatesNonFinite()
                .Compiles(CompileConv));
  rules.Add(Rule("conv_relu", Op("Relu")(Op("Conv")(Any(), Const(), Optional(Const()))))
                .Where(ConvSupported(0))
                .PropagatesNonFinite()
                .Compiles(CompileConv));
  return rules;
}

}  // namespace collage::openblas
