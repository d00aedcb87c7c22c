// MatMul (optionally followed by the Add of a bias row) and Gemm on MKL: a constant operand
// is packed once at compile time and multiplied with cblas_sgemm_compute; products of two
// kernel inputs run on cblas_sgemm, batches of equally strided ones (attention's Q·Kᵀ and
// its product with V) on one cblas_sgemm_batch_strided call.
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage::mkl {

// Rules "matmul" (one MatMul node) and "matmul_bias" (MatMul, then Add of a constant that
// broadcasts along the last dim only).
StatusOr<std::unique_ptr<Kernel>> CompileMatMul(const CompileRequest& request);
// Rule "gemm": one Gemm node.
StatusOr<std::unique_ptr<Kernel>> CompileGemm(const CompileRequest& request);

}  // namespace collage::mkl
