#include "eigen_rules.h"

#include "backend/shared/blas_rules.h"
#include "elementwise_chain.h"
#include "elementwise_ops.h"
#include "gemm_kernels.h"

namespace collage::eigen {

RuleSet BuildRules() {
  RuleSet rules;
  // matmul and gemm meet the NaN/Inf contract (measured by backend_ops --nan-contract, seeds
  // 1 and 2); elementwise_chain does not (its GELU chain, Erf+Add+Mul, gives -inf for -inf
  // where the reference's -inf * 0 gives NaN).
  AddBlasProductRules(rules, {FromRequest(CompileMatMul), nullptr, FromRequest(CompileGemm)});
  // Unary ops are kElementwise, Add/Sub/Mul/Div kBroadcast; ChainSupportsNode narrows both to
  // what the chain kernel evaluates, with the operand forms it accepts.
  rules.Add(Fusion("elementwise_chain")
                .Seed({OpKind::kElementwise, OpKind::kBroadcast})
                .Grow({OpKind::kElementwise, OpKind::kBroadcast})
                .MaxOps(kMaxChainOps)
                .Where(ChainSupportsNode)
                .Compiles(CompileElementwiseChain));
  return rules;
}

}  // namespace collage::eigen
