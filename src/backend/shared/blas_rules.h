// The rule table the BLAS backends (MKL, OpenBLAS, Eigen) share: the same patterns and
// constraints, each backend's own compile functions. Every rule added here declares the
// NaN/Inf contract (BLAS sums propagate NaN and infinities, and the bias and Relu epilogues
// keep NaN); `collage_backend_ops --nan-contract=enforce` holds each backend's kernels to it.
#pragma once

#include <memory>
#include <vector>

#include "collage/precision.h"
#include "collage/sdk/kernel.h"
#include "collage/sdk/rule.h"

namespace collage {

struct BlasProductCompilers {
  RuleCompiler matmul;       // "matmul": MatMul of static float32 operands
  RuleCompiler matmul_bias;  // "matmul_bias": by a constant weight, then a constant bias row
                             // (a Linear layer); none: the backend offers no such rule
  RuleCompiler gemm;         // "gemm": Gemm with opset-7 broadcasting
  // The precisions the three are offered in (Rule::Precisions), float32 first.
  std::vector<Precision> precisions = {Precision::kFloat32};
};

// A compile function that needs no match, as a RuleCompiler.
inline RuleCompiler FromRequest(
    StatusOr<std::unique_ptr<Kernel>> (*compile)(const CompileRequest&)) {
  return [compile](const CompileRequest& request, const Match&) { return compile(request); };
}

// Adds "matmul", "matmul_bias" (when its compiler is set) and "gemm".
void AddBlasProductRules(RuleSet& rules, const BlasProductCompilers& compilers);

// Adds "conv" and "conv_relu": a 2-D float32 Conv (X [N, C, H, W], constant W [M, C/group, KH,
// KW] and bias) alone, and with the Relu after it, as one GEMM over im2col columns
// (backend/shared/im2col.h).
void AddIm2colConvRules(RuleSet& rules, const RuleCompiler& conv);

}  // namespace collage
