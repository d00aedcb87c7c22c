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
  rules.Add(Rule("matmul", Op("MatMul")(Any(), Any())).Where(AllFloat32));
  // Gemm before opset 7 broadcasts C only with a `broadcast` attribute: not implemented.
  rules.Add(Rule("gemm", Op("Gemm")(Any(), Any(), Optional(Any())))
                .Where(AllFloat32)
                .Where([](const Match& m) { return m.graph->opset() >= 7; }));
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
