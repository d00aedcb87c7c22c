// What the OpenBLAS backend offers to run: float32 GEMM-shaped ops.
#pragma once

#include "collage/sdk/rule.h"

namespace collage::openblas {

// "matmul", "matmul_bias", "gemm", "conv", "conv_relu".
RuleSet BuildRules();

}  // namespace collage::openblas
