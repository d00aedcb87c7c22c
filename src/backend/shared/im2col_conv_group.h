// A Conv (or Conv → Relu) group read for an im2col convolution on a 32-bit-int BLAS: its
// geometry, constant weights and bias, checked once for every BLAS backend (openblas, mkl).
#pragma once

#include <vector>

#include "backend/shared/im2col.h"
#include "collage/sdk/backend.h"

namespace collage {

struct Im2colConvGroup {
  Conv2dGeometry geometry;
  std::vector<float> weights;  // ONNX's [M][C/group * KH * KW]: each group's GEMM A, row-major
  std::vector<float> bias;     // empty or M values
  bool relu = false;
};

// Errors when the group has no Conv, reads another non-constant value than X, has non-constant
// weights or bias, is not 2-D (ReadConv2dGeometry), or has a GEMM dim beyond 32-bit int.
StatusOr<Im2colConvGroup> ReadIm2colConvGroup(const CompileRequest& request);

}  // namespace collage
