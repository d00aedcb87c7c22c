// What the Eigen backend offers to run: float32 MatMul / Gemm, and chains of elementwise ops.
#pragma once

#include "collage/sdk/rule.h"

namespace collage::eigen {

// "matmul", "gemm", and the fusion "elementwise_chain".
RuleSet BuildRules();

}  // namespace collage::eigen
