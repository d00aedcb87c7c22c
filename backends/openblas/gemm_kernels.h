// MatMul (optionally followed by the Add of a bias row) and Gemm on cblas_sgemm.
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage::openblas {

// Rules "matmul" (one MatMul node) and "matmul_bias" (MatMul, then Add of a constant that
// broadcasts along the last dim only).
StatusOr<std::unique_ptr<Kernel>> CompileMatMul(const CompileRequest& request);
// Rule "gemm": one Gemm node.
StatusOr<std::unique_ptr<Kernel>> CompileGemm(const CompileRequest& request);

}  // namespace collage::openblas
