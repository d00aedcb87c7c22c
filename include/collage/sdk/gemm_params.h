// An ONNX Gemm node read for a library GEMM: Y[m, n] = alpha * op(A) * op(B) + beta * C, op
// transposing when transA / transB is set, the optional C broadcast to [m, n]. What any
// library needs to know, checked once; the libraries differ only in how they compute it.
#pragma once

#include <cstdint>

#include "collage/sdk/operand.h"
#include "collage/status.h"
#include "collage/sdk/graph.h"

namespace collage {

struct GemmParams {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  bool has_c = false;
  // C's shape left-padded to 2-D; each dim is 1 (broadcast) or the output's (m, n).
  int64_t c_rows = 1, c_cols = 1;
};

// Errors when A or B is not 2-D, their inner dims differ, or C has rank above 2 or does not
// broadcast to [m, n] (unidirectional broadcasting, as ONNX Gemm from opset 7).
StatusOr<GemmParams> ReadGemmParams(const Graph& graph, const Node& gemm);

// The group's Gemm node read for a kernel: its parameters and its float32 operands (C
// unset when absent).
struct GemmOperands {
  GemmParams params;
  Operand a, b, c;
};
StatusOr<GemmOperands> ResolveGemm(const CompileRequest& request);

}  // namespace collage
