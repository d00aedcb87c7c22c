// What the MKL backend offers to run: float32 GEMM-shaped ops, the set the OpenBLAS backend
// offers (backends/openblas/openblas_rules.h), so that measurement compares the two BLAS
// libraries group by group; and LSTM on its packed products (lstm_kernel.h).
#pragma once

#include "collage/sdk/rule.h"

namespace collage::mkl {

// "matmul", "matmul_bias", "gemm", "conv", "conv_relu", "lstm", "lstm_serial".
RuleSet BuildRules();

}  // namespace collage::mkl
