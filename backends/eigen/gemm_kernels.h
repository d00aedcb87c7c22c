// MatMul (batched, numpy broadcasting) and Gemm as Eigen matrix products over row-major maps
// of the buffers.
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage::eigen {

// Rule "matmul": one MatMul node.
StatusOr<std::unique_ptr<Kernel>> CompileMatMul(const CompileRequest& request);
// Rule "gemm": one Gemm node.
StatusOr<std::unique_ptr<Kernel>> CompileGemm(const CompileRequest& request);

}  // namespace collage::eigen
