// MatMul (optionally followed by the Add of a bias row) and Gemm in bfloat16 on MKL's
// cblas_gemm_bf16bf16f32: operands rounded to bfloat16, products summed in float32, float32
// output (the bias and Gemm's C added in float32). A constant operand is converted once at
// compile time, an input at each run into the kernel's workspace.
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage::mkl {

// The bf16 forms of the rules of gemm_kernels.h: "matmul", "matmul_bias", "gemm".
StatusOr<std::unique_ptr<Kernel>> CompileMatMulBf16(const CompileRequest& request);
StatusOr<std::unique_ptr<Kernel>> CompileGemmBf16(const CompileRequest& request);

}  // namespace collage::mkl
