// An ONNX Gemm node read for a library GEMM: its parameters (ReadGemmParams,
// collage/sdk/op_params.h) and float32 operands, what any library needs to know, checked
// once; the libraries differ only in how they compute it.
#pragma once

#include <cstdint>

#include "backend/shared/operand.h"
#include "collage/sdk/graph.h"
#include "collage/sdk/op_params.h"
#include "collage/status.h"

namespace collage {

// The group's Gemm node read for a kernel: its parameters and its float32 operands (C
// unset when absent).
struct GemmOperands {
  GemmParams params;
  Operand a, b, c;
};
StatusOr<GemmOperands> ResolveGemm(const CompileRequest& request);

}  // namespace collage
