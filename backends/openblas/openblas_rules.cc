#include "openblas_rules.h"

#include "backend/shared/blas_rules.h"
#include "conv_kernel.h"
#include "gemm_kernels.h"

namespace collage::openblas {

RuleSet BuildRules() {
  RuleSet rules;
  // Every rule meets the NaN/Inf contract (measured by backend_ops --nan-contract, seeds 1
  // and 2): BLAS arithmetic propagates NaN and the Relu epilogue keeps it.
  AddBlasProductRules(
      rules, {FromRequest(CompileMatMul), FromRequest(CompileMatMul), FromRequest(CompileGemm)});
  AddIm2colConvRules(rules, FromRequest(CompileConv));
  return rules;
}

}  // namespace collage::openblas
