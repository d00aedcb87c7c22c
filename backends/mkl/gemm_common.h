// What the float32 and bf16 GEMM kernels share around MKL's product: reading the group's
// MatMul, and the output filled with the bias or Gemm's C before the product accumulates.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/shared/gemm_params.h"
#include "backend/shared/matmul_plan.h"
#include "collage/sdk/backend.h"
#include "collage/sdk/op_params.h"

namespace collage::mkl {

// The group's MatMul (and the Add of its bias row, when the group has one) as GEMMs whose
// dims fit MKL_INT.
struct MatMulGroup {
  const Node* matmul = nullptr;
  const Node* add = nullptr;
  MatMulPlan plan;
};
StatusOr<MatMulGroup> ReadMatMulGroup(const CompileRequest& request);

// The group's Gemm node read (ResolveGemm), its dims fitting MKL_INT.
StatusOr<GemmOperands> ReadGemmGroup(const CompileRequest& request);

// The constant bias row the group's Add adds to its MatMul's output of n columns: one value
// or n values.
StatusOr<std::vector<float>> BiasOfMatMul(const CompileRequest& request, const MatMulGroup& group);

// A MatMul's output before its products accumulate into it: the bias rows (`bias` empty,
// one value or n values). Returns the beta the products take. With k == 0 there is no
// product and y is left finished: the bias rows, or zeros.
float StartMatMulOutput(const MatMulPlan& plan, const std::vector<float>& bias, float* y);

// Gemm's output before the product accumulates into it: C ([m, n], a row, a column or one
// value) broadcast where it counts (as in ONNX and BLAS, beta == 0 ignores C entirely, NaNs
// included). Returns the beta the product takes. With k == 0 there is no product and y is
// left finished: beta * C, or zeros.
float StartGemmOutput(const GemmParams& params, const float* c, float* y);

}  // namespace collage::mkl
