#include "mkl_rules.h"

#include <algorithm>

namespace collage::mkl {
namespace {

bool IsFloat32(const TensorType& type) { return type.dtype == DType::kFloat32 && type.is_static(); }

bool AllFloat32(const Match& m) {
  for (size_t i = 0; i < m.captures.size(); ++i) {
    if (m.has_capture(i) && !IsFloat32(m.capture_type(i))) return false;
  }
  return IsFloat32(m.output_type());
}

// Before opset 7, Add and Gemm broadcast only with a `broadcast` attribute; those semantics
// are not implemented.
bool ModernOpset(const Match& m) { return m.graph->opset() >= 7; }

// A bias the MatMul kernel writes into every output row before the GEMM accumulates onto it:
// one value, or n values along the last dim only ([n], [1, n], [1, 1, n], ...), not
// extending the MatMul's output.
bool IsRowBias(const TensorType& bias, const Shape& out) {
  if (bias.shape.size() > out.size()) return false;
  const int64_t n = out.empty() ? 1 : out.back();
  const int64_t count = bias.num_elements();
  if (count == 1) return true;
  if (count != n || bias.shape.empty() || bias.shape.back() != n) return false;
  return std::all_of(bias.shape.begin(), bias.shape.end() - 1, [](int64_t d) { return d == 1; });
}

// 2-D convolution only: X [N, C, H, W], W [M, C/group, KH, KW] (im2col, src/backend/im2col.h).
bool Conv2dSupported(const Match& m) {
  return AllFloat32(m) && m.capture_type(0).shape.size() == 4 &&
         m.capture_type(1).shape.size() == 4;
}

}  // namespace

RuleSet BuildRules() {
  RuleSet rules;
  // Every rule declares the NaN/Inf contract: MKL's sgemm propagates NaN and infinities
  // through its sums (beta = 0 never reads the output, as BLAS specifies), and the bias and
  // Relu epilogues are collage's own loops, which keep NaN (checked by collage_backend_ops
  // --nan-contract=enforce).
  // MatMul of any float32 operands: a constant one is packed, the others are kernel inputs.
  rules.Add(Rule("matmul", Op("MatMul")(Any(), Any())).Where(AllFloat32).PropagatesNonFinite());
  // MatMul by a constant weight, then Add of a constant bias row (a Linear layer).
  rules.Add(Rule("matmul_bias", Op("Add")(Op("MatMul")(Any(), Const()), Const()))
                .Where(AllFloat32)
                .Where(ModernOpset)
                .Where([](const Match& m) {
                  // A 1-D weight is a column whose dim the product drops: no bias row then.
                  if (m.capture_type(1).shape.size() < 2) return false;
                  const TensorType& mm = m.graph->value(m.node(1).outputs[0]).type;
                  return mm.shape == m.output_type().shape &&
                         IsRowBias(m.capture_type(2), mm.shape);
                })
                .PropagatesNonFinite());
  rules.Add(Rule("gemm", Op("Gemm")(Any(), Any(), Optional(Any())))
                .Where(AllFloat32)
                .Where(ModernOpset)
                .PropagatesNonFinite());
  rules.Add(Rule("conv", Op("Conv")(Any(), Const(), Optional(Const())))
                .Where(Conv2dSupported)
                .PropagatesNonFinite());
  rules.Add(Rule("conv_relu", Op("Relu")(Op("Conv")(Any(), Const(), Optional(Const()))))
                .Where(Conv2dSupported)
                .PropagatesNonFinite());
  return rules;
}

}  // namespace collage::mkl
