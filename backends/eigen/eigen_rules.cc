#include "eigen_rules.h"

#include "elementwise_chain.h"
#include "elementwise_ops.h"

namespace collage::eigen {
namespace {

bool IsFloat32(const TensorType& type) { return type.dtype == DType::kFloat32 && type.is_static(); }

bool AllFloat32(const Match& m) {
  for (size_t i = 0; i < m.captures.size(); ++i) {
    if (m.has_capture(i) && !IsFloat32(m.capture_type(i))) return false;
  }
  return IsFloat32(m.output_type());
}

}  // namespace

RuleSet BuildRules() {
  RuleSet rules;
  // matmul and gemm meet the NaN/Inf contract (measured by backend_ops --nan-contract, seeds
  // 1 and 2); elementwise_chain does not (its GELU chain, Erf+Add+Mul, gives -inf for -inf
  // where the reference's -inf * 0 gives NaN).
  rules.Add(Rule("matmul", Op("MatMul")(Any(), Any())).Where(AllFloat32).PropagatesNonFinite());
  // Gemm before opset 7 broadcasts C only with a `broadcast` attribute: not implemented.
  rules.Add(Rule("gemm", Op("Gemm")(Any(), Any(), Optional(Any())))
                .Where(AllFloat32)
                .Where([](const Match& m) { return m.graph->opset() >= 7; })
                .PropagatesNonFinite());
  // Unary ops are kElementwise, Add/Sub/Mul/Div kBroadcast; ChainSupportsNode narrows both to
  // what the chain kernel evaluates, with the operand forms it accepts.
  rules.Add(Fusion("elementwise_chain")
                .Seed({OpKind::kElementwise, OpKind::kBroadcast})
                .Grow({OpKind::kElementwise, OpKind::kBroadcast})
                .MaxOps(kMaxChainOps)
                .Where(ChainSupportsNode));
  return rules;
}

}  // namespace collage::eigen
