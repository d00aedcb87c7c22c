// What the MKL backend offers to run: float32 GEMM-shaped ops, the set the OpenBLAS backend
// offers (backends/openblas/openblas_rules.h), so that measurement compares the two BLAS
// libraries group by group, the products also in bf16 where the CPU computes it natively
// (bf16_gemm_kernels.h); MatMulInteger of dynamically quantized models
// (integer_matmul_kernel.h); ConvTranspose (conv_transpose_kernel.h) and LSTM
// (lstm_kernel.h) on its packed products.
#pragma once

#include "collage/sdk/rule.h"

namespace collage::mkl {

// "matmul", "matmul_bias", "gemm", "matmul_integer", "conv", "conv_relu", "conv_transpose",
// "lstm", "lstm_serial".
RuleSet BuildRules();

}  // namespace collage::mkl
