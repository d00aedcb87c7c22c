// ONNX MatMul (numpy matmul) as a list of row-major GEMMs: A [..., m, k] x B [..., k, n] with
// the batch dims broadcast; a 1-D A is a row [1, k] and a 1-D B a column [k, 1] whose dim is
// dropped from the output (which changes the output shape, not the GEMMs).
#pragma once

#include <cstdint>
#include <vector>

#include "collage/status.h"
#include "collage/tensor.h"

namespace collage {

struct MatMulPlan {
  int64_t m = 0;  // rows of each GEMM (batch * m when the batch folds into one GEMM)
  int64_t n = 0;
  int64_t k = 0;
  // One GEMM per entry: element offsets of its A and B blocks; its output block is entry i
  // of the output, m * n elements each.
  std::vector<int64_t> a_offsets;
  std::vector<int64_t> b_offsets;
};

// Error when the shapes do not multiply. When B has no batch dims (or they are all 1) and A
// is not broadcast, A's batch rows are contiguous and the whole MatMul is one taller GEMM.
StatusOr<MatMulPlan> PlanMatMul(const Shape& a, const Shape& b);

}  // namespace collage
